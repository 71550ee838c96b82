/* observer_api.h: what the PyTorch observer (observer.cpp) calls in libdevtrace, as
 * function pointers. The observer is built at first use against the importing torch's
 * headers, where devtrace's own headers may not exist: this header is all it needs. The
 * pointers come from the one libdevtrace instance in the process (the devtrace Python
 * package passes them at install), never from a symbol lookup, which could find a second
 * copy of the library, or nothing when the OpenCL loader loaded it RTLD_LOCAL.
 * The types match devtrace_op_enter / devtrace_op_exit in devtrace.h (checked by the C
 * build, tests/unit/test_external.c). */
#ifndef DEVTRACE_OBSERVER_API_H
#define DEVTRACE_OBSERVER_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*devtrace_op_enter_fn)(const char *name, uint64_t id, int64_t sequence_nr, uint64_t fwd_thread_id);
typedef int (*devtrace_op_exit_fn)(uint64_t id);

/* Exported by the observer: installs the global RecordFunction callback (once; a second call
 * only replaces the pointers). 0 on success, -1 when torch refused the callback. */
int devtrace_torch_observer_install(devtrace_op_enter_fn enter, devtrace_op_exit_fn exit_);
/* Removes the callback; ops in flight finish through the old pointers. */
void devtrace_torch_observer_remove(void);
/* The torch version the observer was built against (TORCH_VERSION). */
const char *devtrace_torch_observer_built_for(void);

#ifdef __cplusplus
}
#endif
#endif
