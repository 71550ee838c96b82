/* compare.h: reports side by side: `devtrace diff A B` (per kernel or op name: count and total
 * in each, the delta and the ratio, largest change first) and the many-rank view of
 * `devtrace report DIR` (per kernel and op name: the min, median and max total over the ranks
 * and the slowest rank). Kernels are compared by total kernel time; ops by the device time
 * attributed to them (their cpu time is shown beside it), which is what compares across
 * vendors: op names (aten::mm) are the same on every chip, kernel names are not. */
#ifndef DT_COMPARE_H
#define DT_COMPARE_H

#include "report/report.h"
#include "report/table.h"

typedef enum dt_compare_by { DT_BY_KERNEL, DT_BY_OP } dt_compare_by;

/* The diff of a and b (initialised here). */
int dt_diff_table(const dt_report *a, const dt_report *b, dt_compare_by by, dt_table *t);
/* Across n reports (n >= 1), each rank's label its report's rank (distributedInfo) or, without
 * one, its place in the list. */
int dt_ranks_table(const dt_report *const *reports, size_t n, dt_compare_by by, dt_table *t);
int64_t dt_report_rank_label(const dt_report *r, size_t place);

#endif
