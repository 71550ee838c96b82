/* compare.h: reports side by side: `devtrace diff A B` (every table: per kernel, copy/set,
 * runtime call, op and annotation name, the counts and times in each, the delta and the ratio,
 * added and removed names marked, largest change first, and the top changes over all tables),
 * and the many-rank views of `devtrace report DIR` (per kernel and op name the min, median and
 * max total over the ranks; per rank its compute and collective time per step and the
 * straggler). Ops are compared by device_total (what everything under the op cost on the
 * device), which is what compares across vendors: op names (aten::mm) are the same on every
 * chip, kernel names are not. */
#ifndef DT_COMPARE_H
#define DT_COMPARE_H

#include "report/report.h"
#include "report/table.h"

/* The tables a diff compares (also the order they are printed in). */
typedef enum dt_compare_by {
    DT_BY_OP,
    DT_BY_KERNEL,
    DT_BY_MEMORY,
    DT_BY_API,
    DT_BY_ANNOTATION,
    DT_BY_COUNT
} dt_compare_by;

typedef struct dt_diff_options {
    int per_step; /* each side's figures divided by its nsteps (a and b read with dt_report_read_steps) */
} dt_diff_options;

/* The diff of a and b for one table (initialised here). */
int dt_diff_table(const dt_report *a, const dt_report *b, dt_compare_by by, const dt_diff_options *o, dt_table *t);
/* The rows of every table in `only` (a bit per dt_compare_by), ordered by the absolute change
 * of their table's main figure: table, name, change, figure_a_us, figure_b_us, delta_us. */
int dt_diff_top_table(const dt_report *a, const dt_report *b, unsigned only, const dt_diff_options *o, dt_table *t);
/* Across n reports (n >= 1), each rank's label its report's rank (distributedInfo) or, without
 * one, its place in the list; by is DT_BY_KERNEL or DT_BY_OP. */
int dt_ranks_table(const dt_report *const *reports, size_t n, dt_compare_by by, dt_table *t);
/* Per rank: steps, compute and collective kernel time per step, how often its last long
 * collective started last (HTA's late-start rule), and the straggler (docs/report.md). */
int dt_stragglers_table(const dt_report *const *reports, size_t n, dt_table *t);
int64_t dt_report_rank_label(const dt_report *r, size_t place);

#endif
