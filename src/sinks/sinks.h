/* sinks.h: the sinks' entry points beyond the public devtrace_write_chrome,
 * devtrace_write_perfetto and devtrace_write_trace, and what the sinks share. */
#ifndef DT_SINKS_H
#define DT_SINKS_H

#include <stdio.h>

#include "core/session.h"

/* The whole Chrome trace into a malloc'd buffer (for tests and benchmarks). */
int dt_chrome_write_buffer(dt_session *s, const char *trace_name, char **out, size_t *outlen);
/* The whole Chrome trace written to path (through path.tmp, renamed) by `workers` threads
 * that format (and compress) pieces of it while this thread writes them in order; 0: by
 * this thread alone; DT_WRITE_THREADS_AUTO: dt_chrome_write_threads's count (what
 * devtrace_write_chrome does). The same bytes either way (compressed: the same text). */
#define DT_WRITE_THREADS_AUTO (~0u)
int dt_chrome_write_file(dt_session *s, const char *path, unsigned workers, devtrace_error *err);
/* Threads for writing a trace: $DEVTRACE_WRITE_THREADS (1 to DT_WRITE_THREADS_MAX; 1: this
 * thread alone), else one per online CPU, at most DT_WRITE_THREADS_DEFAULT_MAX. A bad value
 * is noted in the session (and so in its trace) and the default used. */
#define DT_WRITE_THREADS_MAX 64
#define DT_WRITE_THREADS_DEFAULT_MAX 8
unsigned dt_chrome_write_threads(dt_session *s);
/* Does a trace written to path get gzip? It does when the name ends in ".gz", in any case
 * (".GZ", ".Gz" too). */
int dt_trace_path_is_gzip(const char *path);
/* The trace's format by its file name: Perfetto's protobuf for a name ending in ".pftrace"
 * or ".perfetto-trace" (in any case, and either followed by ".gz"), else Chrome JSON. */
typedef enum dt_trace_format { DT_FORMAT_CHROME_JSON, DT_FORMAT_PERFETTO } dt_trace_format;
dt_trace_format dt_trace_format_of(const char *path);
/* The gzip level for a trace written to path: -1 (plain) unless the name ends in ".gz",
 * else $DEVTRACE_GZIP_LEVEL (one digit; anything else is noted in s and 1 used), default 1. */
int dt_trace_gzip_level(dt_session *s, const char *path);
/* A gzip stream at level on a duplicate of f's descriptor (gzclose it); NULL when it cannot start. */
void *dt_gzip_open(FILE *f, int level);
/* A sink's whole trace into f (the file tmp_path, to be renamed to path), made by `workers`
 * threads (0: by this thread alone): 0, or an error code with err set. */
typedef int (*dt_trace_body_fn)(dt_session *s, FILE *f, const char *path, const char *tmp_path, unsigned workers,
                                devtrace_error *err);
/* Finalises s (stopping it first when it runs), then writes path through path.tmp with
 * body, and renames it; on failure nothing is left under either name. workers may be
 * DT_WRITE_THREADS_AUTO. */
int dt_trace_file_write(dt_session *s, const char *path, unsigned workers, dt_trace_body_fn body, devtrace_error *err);
/* A device's integer properties as the trace names them (deviceProperties, after id, name
 * and totalGlobalMem), in the trace's order. */
typedef struct dt_device_field {
    const char *key;
    int64_t value;
} dt_device_field;
#define DT_DEVICE_FIELDS 10
void dt_device_fields(const dt_device_props *d, dt_device_field out[DT_DEVICE_FIELDS]);
/* A trace of several processes (devtrace record): the traced process whose device lanes hold
 * device (the highest base at or below it), the one of pid, or NULL. */
const dt_traced_process *dt_device_owner(const dt_session *s, uint32_t device);
const dt_traced_process *dt_traced_process_of(const dt_session *s, uint32_t pid);
/* A device lane's name: "GPU 0", or in a trace of several processes "GPU 0 (pid P)". */
void dt_device_lane_name(const dt_session *s, uint32_t device, char *out, size_t cap);
/* A program's name: its command's first word after its last '/'. */
void dt_program_name(const char *command, char *out, size_t cap);

/* The whole Perfetto trace into a malloc'd buffer (for tests and benchmarks). */
int dt_perfetto_write_buffer(dt_session *s, char **out, size_t *outlen);
/* The whole Perfetto trace written to path as dt_chrome_write_file writes the Chrome one:
 * the same bytes for every count of workers. */
int dt_perfetto_write_file(dt_session *s, const char *path, unsigned workers, devtrace_error *err);

#endif
