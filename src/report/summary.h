/* summary.h: the short summary devtrace record, replay and convert print at exit (summary.c):
 * counts per kind, every loss counter that is not zero, and the top kernels by total device
 * time, made by the report's own kernels table. */
#ifndef DT_REPORT_SUMMARY_H
#define DT_REPORT_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "core/session.h"

/* The exit summary: counts per kind, losses, top kernels by total device time. */
void dt_summary_print(dt_session *s, FILE *out, size_t top);

#endif
