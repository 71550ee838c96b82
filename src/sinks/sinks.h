/* sinks.h: the sinks' entry points beyond the public devtrace_write_chrome. */
#ifndef DT_SINKS_H
#define DT_SINKS_H

#include <stdio.h>

#include "core/session.h"

/* The whole Chrome trace into a malloc'd buffer (for tests and benchmarks). */
int dt_chrome_write_buffer(dt_session *s, const char *trace_name, char **out, size_t *outlen);
/* The exit summary: counts per kind, losses, top kernels by total device time. */
void dt_summary_print(dt_session *s, FILE *out, size_t top);

#endif
