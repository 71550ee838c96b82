/* backend.h: the interface every tracing backend implements, owned by the core.
 *
 * A backend is a const descriptor: name first, capabilities, the size of its private
 * state (the core allocates it, zeroed), then its functions. One file per backend
 * (src/backends/) exports one descriptor; backends/registry.c holds the one list and hands
 * it to the core as a dt_backend_table (devtrace_open, replay). The core names no backend. */
#ifndef DT_CORE_BACKEND_H
#define DT_CORE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "devtrace.h"

typedef struct devtrace_session dt_session;
struct dt_raw_decoder; /* core/raw.h */

/* What a trace can say about how far a backend has been checked. */
#define DT_VALIDATED_HARDWARE 0x1u /* run on the real device by this project */
#define DT_VALIDATED_HEADERS 0x2u  /* record mirrors checked against the vendor's real headers */
#define DT_VALIDATED_EMULATED 0x4u /* tested end to end against an emulator only */

/* Capabilities: the public bits (include/devtrace.h), which devtrace_backend_info carries. */
#define DT_CAP_KERNEL_LAUNCH DEVTRACE_CAP_KERNEL_LAUNCH
#define DT_CAP_OCCUPANCY DEVTRACE_CAP_OCCUPANCY
#define DT_CAP_EXTERNAL DEVTRACE_CAP_EXTERNAL
#define DT_CAP_RAW_CAPTURE DEVTRACE_CAP_RAW_CAPTURE

typedef struct dt_backend {
    const char *name;        /* selection name: "cupti", "opencl", ... */
    const char *description; /* "NVIDIA CUPTI", ... */
    unsigned caps;
    unsigned validated;           /* DT_VALIDATED_* */
    const char *validation_note;  /* one line: what exactly was validated, and where */
    const char *runtime_category; /* "cuda_runtime", "privateuse1_runtime", ... */
    /* How devtrace record gets the collector loaded into the program (devtrace_load_method,
     * include/devtrace.h): the vendor's injection variable or the loader's layer list
     * (load_variable), else LD_PRELOAD; and a vendor library that must be preloaded too,
     * ahead of the collector (preload_library, found by locate_library). */
    int load_method;
    const char *load_variable;
    const char *preload_library;
    size_t state_size;
    /* Is the backend usable here? 1 yes; 0 no, with why filled. Binds nothing. */
    int (*probe)(char *why, size_t whylen);
    /* Optional: where open would find the vendor library: 0 with path, or -1 with why (what
     * was tried). Binds nothing. */
    int (*locate_library)(char *path, size_t pathlen, char *why, size_t whylen);
    /* Binds the vendor library, registers callbacks (before any device context). */
    int (*open)(dt_session *s, void *state, devtrace_error *err);
    int (*start)(dt_session *s, void *state);       /* enables activity, opens the window */
    int (*stop)(dt_session *s, void *state);        /* disables, flushes (no lock of ours held) */
    int (*push_external)(void *state, uint64_t id); /* optional */
    int (*pop_external)(void *state, uint64_t *id); /* optional */
    /* Optional: the user correlation stack (devtrace_push_user_correlation) told to the vendor,
     * whose records then link a correlation to the user id (an EXTCORR event with
     * DEVTRACE_EVENT_HAS_USER_EXTERNAL). Backends without it stamp their runtime events from the
     * thread's stack (dt_current_user_external_in). */
    int (*push_user_external)(void *state, uint64_t id);
    int (*pop_user_external)(void *state, uint64_t *id);
    void (*close)(dt_session *s, void *state); /* accepts a half-opened state */
    /* Optional: hands every record the vendor holds to the session while it runs
     * (devtrace_flush), without stopping anything. */
    int (*flush)(dt_session *s, void *state);
    /* Raw capture and replay (core/raw.h): the decoder of this backend's captured buffers,
     * and the tables it decodes them with (an engine's per-vendor descriptor); NULL: the
     * backend's captures cannot be replayed. */
    const struct dt_raw_decoder *raw_decoder;
    const void *raw_tables;
    /* Optional: device events the backend holds that are not in the store yet (work whose
     * completion it has not read back): what a crash loses. Callable from any thread, at
     * any time; a reading, not a synchronisation point. */
    uint64_t (*pending_events)(void *state);
    /* Optional: adds to st what the backend has counted but not yet added to the session's
     * counters (it adds them at stop). Called when the program crashes, from the shipper
     * thread while the crashing thread waits: readings only, no vendor call. */
    void (*unfolded_counts)(void *state, devtrace_stats *st);
    /* Optional: where the backend looks for its vendor library (devtrace_backend_info's
     * library_api, library_variable, sdk_variables, library_files), from its descriptor. */
    void (*describe_library)(devtrace_backend_info *info);
} dt_backend;

/* The backends a session can be opened with, as the registry hands them to the core. */
typedef struct dt_backend_table {
    const dt_backend *const *list; /* NULL-terminated, in the order DEVTRACE_BACKEND=auto probes them */
    const dt_backend *unavailable; /* the explicit fallback ("none"): records nothing, says why */
} dt_backend_table;

/* The backend of that name in t (the fallback's name included), or NULL. */
const dt_backend *dt_backend_table_find(const dt_backend_table *t, const char *name);
/* Writes the names of t's listed backends that have every capability in caps, ", " between
 * them, then tail (NULL: nothing), into buf. */
void dt_backend_table_names(const dt_backend_table *t, unsigned caps, const char *tail, char *buf, size_t len);
/* Builds the validation text of a backend ("hardware: PoCL 3.1 CPU device", ...). */
void dt_backend_validation_text(const dt_backend *b, char *buf, size_t len);

/* devtrace_open's work (session.c), with the backends of t: what the registry's
 * devtrace_open calls with the compiled-in table. */
devtrace_session *dt_session_open(const devtrace_config *cfg, const dt_backend_table *t, devtrace_error *err);

#endif
