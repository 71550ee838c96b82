/* sinks.h: the sinks' entry points beyond the public devtrace_write_chrome. */
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
/* The exit summary: counts per kind, losses, top kernels by total device time. */
void dt_summary_print(dt_session *s, FILE *out, size_t top);

#endif
