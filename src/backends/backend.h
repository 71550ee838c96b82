/* backend.h: the backends' side of the backend interface. The interface itself (dt_backend,
 * the capabilities, the table the core is handed) is the core's: core/backend.h. Here: the
 * registry (registry.c), the one list of compiled-in backends. A backend file never includes
 * another backend; the core never includes this header. */
#ifndef DT_BACKEND_H
#define DT_BACKEND_H

#include "core/backend.h"
#include "core/raw.h"

/* The registry (registry.c). */
extern const dt_backend dt_backend_none;
const dt_backend_table *dt_backend_registry(void); /* the table the core is handed */
const dt_backend *const *dt_backends(void);        /* NULL-terminated, in auto order */
const dt_backend *dt_backend_find(const char *name);
/* Writes "opencl, cupti, ..., none" into buf. */
void dt_backend_names(char *buf, size_t len);
/* Writes the names of the backends that have every capability in caps ("cupti, mcpti") into buf. */
void dt_backend_names_with(unsigned caps, char *buf, size_t len);

/* Replay of a raw capture (core/raw.h: dt_replay_capture_with, dt_replay_file_with) with the
 * compiled-in backends' decoders. */
int dt_replay_capture(const uint8_t *data, size_t len, const dt_replay_options *opt, dt_session **out,
                      dt_raw_info *info, devtrace_error *err);
int dt_replay_file(const char *path, const dt_replay_options *opt, dt_session **out, dt_raw_info *info,
                   devtrace_error *err);

#endif
