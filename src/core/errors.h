/* errors.h: building devtrace_error values with a cause chain ("outer: inner: root"). */
#ifndef DT_ERRORS_H
#define DT_ERRORS_H

#include "devtrace.h"

/* Sets err (may be NULL) to code and a formatted message; returns code. */
int dt_error_set(devtrace_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends a cause ("could not open backend X: ") to the existing message; returns err->code. */
int dt_error_wrap(devtrace_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
