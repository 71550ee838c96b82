/* collector.h: the in-program half of devtrace record. Started by a backend's
 * in-process entry point (the OpenCL layer's clInitLayer, CUPTI's InitializeInjection)
 * or, for vendors without one, by the preload constructor; ships captured events to
 * the recorder as chunks fill and everything else when the session stops (atexit,
 * SIGINT/SIGTERM). */
#ifndef DT_COLLECTOR_H
#define DT_COLLECTOR_H

/* Starts the process's default session with this backend when the recorder asked for
 * it ($DEVTRACE_COLLECT_FD in this very process, $DEVTRACE_BACKEND naming this backend
 * or "auto"); otherwise does nothing. Idempotent and thread-safe. NULL: the backend
 * from $DEVTRACE_BACKEND. */
void dt_collector_autostart(const char *backend_name);

/* Starts the session now if the recorder asked for one, it has not started, and this
 * library is the file the recorder injected ($DEVTRACE_COLLECT_LIBRARY): for a program that
 * annotates (or imports torch under devtrace record --torch) before its first call through
 * the traced runtime. Called by devtrace_default_session and annotations. */
void dt_collector_start_early(void);

/* Puts devtrace's crash handlers back on top of any a library installed over them since
 * (the displaced one runs after devtrace's): called after the calls that can install
 * handlers (an OpenCL platform's start, a program build), so that a crash right after one
 * still ships what was captured; the shipper also does it every DT_SHIP_AGE_MS. */
void dt_collector_keep_handlers(void);

/* Stops the default session and ships what is left (also run at exit, and at _exit through
 * dt_exit_hook_install's hook). Does nothing in any other process than the session's. */
void dt_collector_finish(void);

/* Points the calls to _exit and _Exit of every object loaded now at a hook that runs
 * dt_collector_finish first (inject/exit_hook.c). */
void dt_exit_hook_install(void);

#endif
