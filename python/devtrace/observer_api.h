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

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DEVTRACE_SEQUENCE_FROM_CHILD (devtrace.h): the op takes its first child's sequence number. */
#define DEVTRACE_OBSERVER_SEQUENCE_FROM_CHILD (-2)

typedef int (*devtrace_op_enter_fn)(const char *name, uint64_t id, int64_t sequence_nr, uint64_t fwd_thread_id);
typedef int (*devtrace_op_exit_fn)(uint64_t id);

/* Flags of devtrace_torch_observer_install. */
#define DEVTRACE_OBSERVER_SHAPES 1 /* keep each recorded op's input shapes and types */
/* The benchmark's floor: callbacks that return at once, asking torch for nothing (no ids,
 * no inputs), and call neither function: what any RecordFunction observer costs before it
 * does anything. */
#define DEVTRACE_OBSERVER_EMPTY 2

/* Exported by the observer: installs the global RecordFunction callback (a second call with
 * the same flags only replaces the pointers; with other flags the callback is registered
 * anew). 0 on success, -1 when torch refused the callback. */
int devtrace_torch_observer_install(devtrace_op_enter_fn enter, devtrace_op_exit_fn exit_, int flags);
/* Removes the callback; ops in flight finish through the old pointers. */
void devtrace_torch_observer_remove(void);
/* Gives every kept (op id, "Input Dims" JSON, "Input type" JSON) to fn, and forgets them.
 * Returns how many. */
typedef void (*devtrace_shape_fn)(uint64_t id, const char *dims, const char *types, void *user);
size_t devtrace_torch_observer_take_shapes(devtrace_shape_fn fn, void *user);
/* An enter and an exit that do nothing (return 1): what the callback costs without devtrace. */
int devtrace_torch_observer_null_enter(const char *name, uint64_t id, int64_t sequence_nr, uint64_t fwd_thread_id);
int devtrace_torch_observer_null_exit(uint64_t id);
/* 1 while the observer's callback is installed, else 0. */
int devtrace_torch_observer_installed(void);
/* What torch itself says: 1 when any global RecordFunction callback is registered
 * (at::hasGlobalCallbacks), the observer's or another's; 0 when none is. */
int devtrace_torch_global_callbacks(void);
/* The torch version the observer was built against (TORCH_VERSION). */
const char *devtrace_torch_observer_built_for(void);

#ifdef __cplusplus
}
#endif
#endif
