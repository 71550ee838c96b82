/* compare.c: diff and the many-rank view (compare.h): the names of every report are gathered
 * into one table of per-report totals, then each view makes its rows from it. */
#include "compare.h"

#include <stdlib.h>
#include <string.h>

/* Per name (of the union), per report: count, total (kernel time or op device time), cpu time. */
typedef struct side_values {
    uint64_t count;
    int64_t total_ns, cpu_ns;
    int present;
} side_values;

typedef struct gathered {
    dt_intern names;
    size_t nsides;
    side_values *values; /* owned: [name id * nsides + side] */
    size_t cap;          /* name ids with room */
} gathered;

static int gather_one(gathered *g, size_t side, const char *name, uint64_t count, int64_t total, int64_t cpu)
{
    uint32_t id = dt_intern_str(&g->names, name);
    if (!id)
        return -1;
    if (id >= g->cap) {
        size_t cap = g->cap ? g->cap : 64;
        while (cap <= id)
            cap *= 2;
        side_values *v = realloc(g->values, cap * g->nsides * sizeof *v);
        if (!v)
            return -1;
        memset(v + g->cap * g->nsides, 0, (cap - g->cap) * g->nsides * sizeof *v);
        g->values = v;
        g->cap = cap;
    }
    side_values *v = &g->values[id * g->nsides + side];
    v->count += count;
    v->total_ns = dt_add_saturating(v->total_ns, total);
    v->cpu_ns = dt_add_saturating(v->cpu_ns, cpu);
    v->present = 1;
    return 0;
}

static int gather(gathered *g, const dt_report *const *reports, size_t n, dt_compare_by by)
{
    memset(g, 0, sizeof *g);
    g->nsides = n;
    if (dt_intern_init(&g->names) != 0)
        return -1;
    for (size_t s = 0; s < n; s++) {
        const dt_report *r = reports[s];
        if (by == DT_BY_KERNEL) {
            for (size_t i = 0; i < r->nkernels; i++)
                if (gather_one(g, s, dt_report_name(r, r->kernels[i].name), r->kernels[i].count, r->kernels[i].total_ns,
                               0) != 0)
                    return -1;
        } else {
            for (size_t i = 0; i < r->nops; i++)
                if (gather_one(g, s, dt_report_name(r, r->ops[i].name), r->ops[i].count, r->ops[i].device_total_ns,
                               r->ops[i].cpu_ns) != 0)
                    return -1;
        }
    }
    return 0;
}

static void gathered_free(gathered *g)
{
    dt_intern_destroy(&g->names);
    free(g->values);
}

static size_t gathered_count(gathered *g)
{
    uint32_t n = dt_intern_count(&g->names);
    return n < g->cap ? n : g->cap;
}

/* ---- diff ---- */

typedef struct diff_row {
    uint32_t name;
    side_values a, b;
} diff_row;

static int64_t magnitude(int64_t v)
{
    return v < 0 ? -v : v;
}

static int cmp_diff(const void *x, const void *y, void *names)
{
    const diff_row *p = x, *q = y;
    int64_t dp = magnitude(p->b.total_ns - p->a.total_ns), dq = magnitude(q->b.total_ns - q->a.total_ns);
    if (dp != dq)
        return dp > dq ? -1 : 1;
    return strcmp(dt_intern_get(names, p->name), dt_intern_get(names, q->name));
}

static const dt_column kernel_diff_columns[] = {{"name", 'w'},    {"count_a", 'n'},    {"total_us_a", 'n'},
                                                {"count_b", 'n'}, {"total_us_b", 'n'}, {"delta_us", 'n'},
                                                {"ratio", 'n'}};
static const dt_column op_diff_columns[] = {{"name", 'w'},    {"count_a", 'n'},     {"device_us_a", 'n'},
                                            {"count_b", 'n'}, {"device_us_b", 'n'}, {"delta_us", 'n'},
                                            {"ratio", 'n'},   {"cpu_us_a", 'n'},    {"cpu_us_b", 'n'}};
#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

int dt_diff_table(const dt_report *a, const dt_report *b, dt_compare_by by, dt_table *t)
{
    if (by == DT_BY_KERNEL)
        dt_table_init(t, "kernel_diff", kernel_diff_columns, NCOLS(kernel_diff_columns));
    else
        dt_table_init(t, "op_diff", op_diff_columns, NCOLS(op_diff_columns));
    const dt_report *both[2] = {a, b};
    gathered g;
    int rc = -1;
    diff_row *rows = NULL;
    if (gather(&g, both, 2, by) != 0)
        goto end;
    size_t n = gathered_count(&g), nrows = 0;
    rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        goto end;
    for (uint32_t id = 1; id < n; id++) {
        if (!g.values[id * 2].present && !g.values[id * 2 + 1].present)
            continue;
        rows[nrows++] = (diff_row){id, g.values[id * 2], g.values[id * 2 + 1]};
    }
    qsort_r(rows, nrows, sizeof *rows, cmp_diff, &g.names);
    for (size_t i = 0; i < nrows; i++) {
        const diff_row *d = &rows[i];
        dt_table_str(t, dt_intern_get(&g.names, d->name));
        dt_table_u64(t, d->a.count);
        dt_table_us(t, d->a.total_ns);
        dt_table_u64(t, d->b.count);
        dt_table_us(t, d->b.total_ns);
        dt_table_us(t, d->b.total_ns - d->a.total_ns);
        dt_table_ratio(t, d->b.total_ns, d->a.total_ns, 1, 3);
        if (by == DT_BY_OP) {
            dt_table_us(t, d->a.cpu_ns);
            dt_table_us(t, d->b.cpu_ns);
        }
    }
    rc = t->failed ? -1 : 0;
end:
    free(rows);
    gathered_free(&g);
    return rc;
}

/* ---- ranks ---- */

int64_t dt_report_rank_label(const dt_report *r, size_t place)
{
    return r->rank >= 0 ? r->rank : (int64_t)place;
}

typedef struct rank_row {
    uint32_t name;
    size_t ranks;
    int64_t min_ns, median_ns, max_ns, slowest_rank;
} rank_row;

static int cmp_rank_row(const void *x, const void *y, void *names)
{
    const rank_row *p = x, *q = y;
    if (p->max_ns != q->max_ns)
        return p->max_ns > q->max_ns ? -1 : 1;
    return strcmp(dt_intern_get(names, p->name), dt_intern_get(names, q->name));
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static const dt_column rank_columns[] = {{"name", 'w'},         {"ranks", 'n'},
                                         {"min_total_us", 'n'}, {"median_total_us", 'n'},
                                         {"max_total_us", 'n'}, {"slowest_rank", 'n'}};

int dt_ranks_table(const dt_report *const *reports, size_t n, dt_compare_by by, dt_table *t)
{
    dt_table_init(t, by == DT_BY_KERNEL ? "kernels_across_ranks" : "ops_across_ranks", rank_columns,
                  NCOLS(rank_columns));
    gathered g;
    int rc = -1;
    rank_row *rows = NULL;
    int64_t *totals = NULL;
    if (gather(&g, reports, n, by) != 0 || !(totals = malloc((n ? n : 1) * sizeof *totals)))
        goto end;
    size_t names = gathered_count(&g), nrows = 0;
    rows = calloc(names ? names : 1, sizeof *rows);
    if (!rows)
        goto end;
    for (uint32_t id = 1; id < names; id++) {
        rank_row *row = &rows[nrows];
        memset(row, 0, sizeof *row);
        row->name = id;
        row->slowest_rank = -1;
        for (size_t s = 0; s < n; s++) {
            const side_values *v = &g.values[id * n + s];
            totals[s] = v->total_ns; /* a rank without the name counts as 0 */
            row->ranks += v->present != 0;
            if (v->present && (row->slowest_rank < 0 || v->total_ns > row->max_ns)) {
                row->max_ns = v->total_ns;
                row->slowest_rank = dt_report_rank_label(reports[s], s);
            }
        }
        if (!row->ranks)
            continue;
        qsort(totals, n, sizeof *totals, cmp_i64);
        row->min_ns = totals[0];
        row->max_ns = totals[n - 1];
        row->median_ns = n % 2 ? totals[n / 2] : dt_midpoint(totals[n / 2 - 1], totals[n / 2]);
        nrows++;
    }
    qsort_r(rows, nrows, sizeof *rows, cmp_rank_row, &g.names);
    for (size_t i = 0; i < nrows; i++) {
        dt_table_str(t, dt_intern_get(&g.names, rows[i].name));
        dt_table_u64(t, rows[i].ranks);
        dt_table_us(t, rows[i].min_ns);
        dt_table_us(t, rows[i].median_ns);
        dt_table_us(t, rows[i].max_ns);
        dt_table_cell(t, "%lld", (long long)rows[i].slowest_rank);
    }
    rc = t->failed ? -1 : 0;
end:
    gathered_free(&g);
    free(rows);
    free(totals);
    return rc;
}
