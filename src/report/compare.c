/* compare.c: diff and the many-rank views (compare.h): the names of every report's table are
 * gathered into one table of per-report values, then each view makes its rows from it. */
#include "compare.h"

#include <stdlib.h>
#include <string.h>

/* Per name (of the union), per report: count, the table's main figure (kernel, copy, call or
 * annotation time; an op's device_total), two more (an op's device_self and cpu time), bytes. */
typedef struct side_values {
    uint64_t count;
    int64_t main_ns, extra_ns[2];
    uint64_t bytes;
    int has_bytes, present;
} side_values;

typedef struct gathered {
    dt_intern names; /* annotations: the category's letter ('u' or 'g') before the name */
    size_t nsides;
    side_values *values; /* owned: [name id * nsides + side] */
    size_t cap;          /* name ids with room */
} gathered;

static int gather_one(gathered *g, size_t side, const char *name, char prefix, const side_values *add)
{
    char buf[4096];
    if (prefix) {
        snprintf(buf, sizeof buf, "%c%s", prefix, name);
        name = buf;
    }
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
    v->count += add->count;
    v->main_ns = dt_add_saturating(v->main_ns, add->main_ns);
    for (int k = 0; k < 2; k++)
        v->extra_ns[k] = dt_add_saturating(v->extra_ns[k], add->extra_ns[k]);
    v->bytes += add->bytes;
    v->has_bytes |= add->has_bytes;
    v->present = 1;
    return 0;
}

static int gather_report(gathered *g, size_t s, const dt_report *r, dt_compare_by by)
{
    side_values v;
    switch (by) {
    case DT_BY_KERNEL:
        for (size_t i = 0; i < r->nkernels; i++) {
            v = (side_values){.count = r->kernels[i].count, .main_ns = r->kernels[i].total_ns};
            if (gather_one(g, s, dt_report_name(r, r->kernels[i].name), 0, &v) != 0)
                return -1;
        }
        break;
    case DT_BY_MEMORY:
        for (size_t i = 0; i < r->nmemory; i++) {
            const dt_memory_row *m = &r->memory[i];
            v = (side_values){
                .count = m->count, .main_ns = m->total_ns, .bytes = m->bytes, .has_bytes = m->with_bytes > 0};
            if (gather_one(g, s, dt_report_name(r, m->name), 0, &v) != 0)
                return -1;
        }
        break;
    case DT_BY_API:
        for (size_t i = 0; i < r->napi; i++) {
            v = (side_values){.count = r->api[i].count, .main_ns = r->api[i].total_ns};
            if (gather_one(g, s, dt_report_name(r, r->api[i].name), 0, &v) != 0)
                return -1;
        }
        break;
    case DT_BY_OP:
        for (size_t i = 0; i < r->nops; i++) {
            const dt_op_row *o = &r->ops[i];
            v = (side_values){
                .count = o->count, .main_ns = o->device_total_ns, .extra_ns = {o->device_self_ns, o->cpu_ns}};
            if (gather_one(g, s, dt_report_name(r, o->name), 0, &v) != 0)
                return -1;
        }
        break;
    case DT_BY_ANNOTATION:
        for (size_t i = 0; i < r->nannotations; i++) {
            const dt_annotation_row *n = &r->annotations[i];
            v = (side_values){.count = n->count, .main_ns = n->total_ns};
            if (gather_one(g, s, dt_report_name(r, n->name), n->on_device ? 'g' : 'u', &v) != 0)
                return -1;
        }
        break;
    default:
        break;
    }
    return 0;
}

static int gather(gathered *g, const dt_report *const *reports, size_t n, dt_compare_by by)
{
    memset(g, 0, sizeof *g);
    g->nsides = n;
    if (dt_intern_init(&g->names) != 0)
        return -1;
    for (size_t s = 0; s < n; s++)
        if (gather_report(g, s, reports[s], by) != 0)
            return -1;
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
    int64_t main_a, main_b; /* per step when asked */
} diff_row;

static int64_t magnitude(int64_t v)
{
    return v < 0 ? -v : v;
}

/* v / steps in ns, rounded to the nearest (steps 1: v). */
static int64_t per_step(int64_t v, uint64_t steps)
{
    if (steps <= 1)
        return v;
    return (int64_t)(((__int128)v * 2 + (v < 0 ? -(__int128)steps : (__int128)steps)) / ((__int128)steps * 2));
}

typedef struct diff_ctx {
    const gathered *g;
    dt_compare_by by;
} diff_ctx;

static const char *row_name(const gathered *g, dt_compare_by by, uint32_t id)
{
    const char *n = dt_intern_get(&g->names, id);
    return by == DT_BY_ANNOTATION ? n + 1 : n;
}

/* The largest change of the main figure first; ops then by their cpu time's change; by name. */
static int cmp_diff(const void *x, const void *y, void *ctx)
{
    const diff_ctx *c = ctx;
    const diff_row *p = x, *q = y;
    int64_t dp = magnitude(p->main_b - p->main_a), dq = magnitude(q->main_b - q->main_a);
    if (dp != dq)
        return dp > dq ? -1 : 1;
    if (c->by == DT_BY_OP) {
        dp = magnitude(p->b.extra_ns[1] - p->a.extra_ns[1]);
        dq = magnitude(q->b.extra_ns[1] - q->a.extra_ns[1]);
        if (dp != dq)
            return dp > dq ? -1 : 1;
    }
    int k = strcmp(row_name(c->g, c->by, p->name), row_name(c->g, c->by, q->name));
    return k ? k : strcmp(dt_intern_get(&c->g->names, p->name), dt_intern_get(&c->g->names, q->name));
}

/* The rows of one table's diff, sorted; 0 or -1 (out of memory). */
static int diff_rows(const dt_report *a, const dt_report *b, dt_compare_by by, const dt_diff_options *o, gathered *g,
                     diff_row **out, size_t *nout)
{
    const dt_report *both[2] = {a, b};
    *out = NULL;
    *nout = 0;
    if (gather(g, both, 2, by) != 0)
        return -1;
    size_t n = gathered_count(g), nrows = 0;
    diff_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return -1;
    uint64_t sa = o && o->per_step ? a->nsteps : 1, sb = o && o->per_step ? b->nsteps : 1;
    for (uint32_t id = 1; id < n; id++) {
        const side_values *va = &g->values[id * 2], *vb = &g->values[id * 2 + 1];
        if (!va->present && !vb->present)
            continue;
        rows[nrows++] = (diff_row){id, *va, *vb, per_step(va->main_ns, sa), per_step(vb->main_ns, sb)};
    }
    diff_ctx c = {g, by};
    qsort_r(rows, nrows, sizeof *rows, cmp_diff, &c);
    *out = rows;
    *nout = nrows;
    return 0;
}

static const char *change_of(const diff_row *d)
{
    return d->a.present && !d->b.present ? "removed" : !d->a.present && d->b.present ? "added" : "";
}

#define COL(name, kind) \
    {                   \
        name, kind      \
    }
static const dt_column time_diff_columns[] = {COL("name", 'w'),     COL("change", 's'),     COL("count_a", 'n'),
                                              COL("count_b", 'n'),  COL("total_us_a", 'n'), COL("total_us_b", 'n'),
                                              COL("delta_us", 'n'), COL("ratio", 'n')};
static const dt_column memory_diff_columns[] = {
    COL("name", 'w'),    COL("change", 's'),     COL("count_a", 'n'),    COL("count_b", 'n'),  COL("bytes_a", 'n'),
    COL("bytes_b", 'n'), COL("total_us_a", 'n'), COL("total_us_b", 'n'), COL("delta_us", 'n'), COL("ratio", 'n')};
static const dt_column op_diff_columns[] = {COL("name", 'w'),
                                            COL("change", 's'),
                                            COL("count_a", 'n'),
                                            COL("count_b", 'n'),
                                            COL("device_total_us_a", 'n'),
                                            COL("device_total_us_b", 'n'),
                                            COL("delta_us", 'n'),
                                            COL("ratio", 'n'),
                                            COL("device_self_us_a", 'n'),
                                            COL("device_self_us_b", 'n'),
                                            COL("cpu_total_us_a", 'n'),
                                            COL("cpu_total_us_b", 'n')};
static const dt_column annotation_diff_columns[] = {
    COL("name", 'w'),       COL("category", 's'),   COL("change", 's'),   COL("count_a", 'n'), COL("count_b", 'n'),
    COL("total_us_a", 'n'), COL("total_us_b", 'n'), COL("delta_us", 'n'), COL("ratio", 'n')};
static const dt_column top_columns[] = {COL("table", 's'),   COL("name", 'w'),        COL("change", 's'),
                                        COL("figure", 's'),  COL("figure_a_us", 'n'), COL("figure_b_us", 'n'),
                                        COL("delta_us", 'n')};
#undef COL
#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static const char *const diff_titles[DT_BY_COUNT] = {"op_diff", "kernel_diff", "memory_diff", "api_diff",
                                                     "annotation_diff"};

static void cell_count(dt_table *t, uint64_t count, uint64_t steps)
{
    if (steps > 1)
        dt_table_ratio(t, (int64_t)count, (int64_t)steps, 1, 3);
    else
        dt_table_u64(t, count);
}

int dt_diff_table(const dt_report *a, const dt_report *b, dt_compare_by by, const dt_diff_options *o, dt_table *t)
{
    switch (by) {
    case DT_BY_MEMORY:
        dt_table_init(t, diff_titles[by], memory_diff_columns, NCOLS(memory_diff_columns));
        break;
    case DT_BY_OP:
        dt_table_init(t, diff_titles[by], op_diff_columns, NCOLS(op_diff_columns));
        break;
    case DT_BY_ANNOTATION:
        dt_table_init(t, diff_titles[by], annotation_diff_columns, NCOLS(annotation_diff_columns));
        break;
    default:
        dt_table_init(t, diff_titles[by == DT_BY_API ? DT_BY_API : DT_BY_KERNEL], time_diff_columns,
                      NCOLS(time_diff_columns));
        break;
    }
    gathered g;
    diff_row *rows = NULL;
    size_t nrows = 0;
    int rc = -1;
    if (diff_rows(a, b, by, o, &g, &rows, &nrows) != 0)
        goto end;
    uint64_t sa = o && o->per_step ? a->nsteps : 1, sb = o && o->per_step ? b->nsteps : 1;
    for (size_t i = 0; i < nrows; i++) {
        const diff_row *d = &rows[i];
        dt_table_str(t, row_name(&g, by, d->name));
        if (by == DT_BY_ANNOTATION)
            dt_table_str(t, dt_intern_get(&g.names, d->name)[0] == 'g' ? "gpu_user_annotation" : "user_annotation");
        dt_table_str(t, change_of(d));
        cell_count(t, d->a.count, sa);
        cell_count(t, d->b.count, sb);
        if (by == DT_BY_MEMORY)
            for (int s = 0; s < 2; s++) {
                const side_values *v = s ? &d->b : &d->a;
                if (!v->has_bytes)
                    dt_table_str(t, "");
                else
                    cell_count(t, v->bytes, s ? sb : sa);
            }
        dt_table_us(t, d->main_a);
        dt_table_us(t, d->main_b);
        dt_table_us(t, d->main_b - d->main_a);
        dt_table_ratio(t, d->main_b, d->main_a, 1, 3);
        if (by == DT_BY_OP)
            for (int k = 0; k < 2; k++) {
                dt_table_us(t, per_step(d->a.extra_ns[k], sa));
                dt_table_us(t, per_step(d->b.extra_ns[k], sb));
            }
    }
    rc = t->failed ? -1 : 0;
end:
    free(rows);
    gathered_free(&g);
    return rc;
}

typedef struct top_row {
    dt_compare_by by;
    char *name; /* owned */
    const char *change;
    int64_t a, b;
} top_row;

static int cmp_top(const void *x, const void *y)
{
    const top_row *p = x, *q = y;
    int64_t dp = magnitude(p->b - p->a), dq = magnitude(q->b - q->a);
    if (dp != dq)
        return dp > dq ? -1 : 1;
    if (p->by != q->by)
        return p->by < q->by ? -1 : 1;
    return strcmp(p->name, q->name);
}

static const char *const main_figures[DT_BY_COUNT] = {"device_total_us", "total_us", "total_us", "total_us",
                                                      "total_us"};

int dt_diff_top_table(const dt_report *a, const dt_report *b, unsigned only, const dt_diff_options *o, dt_table *t)
{
    dt_table_init(t, "top_changes", top_columns, NCOLS(top_columns));
    top_row *top = NULL;
    size_t ntop = 0, cap = 0;
    int rc = -1;
    for (int by = 0; by < DT_BY_COUNT; by++) {
        if (!(only & (1u << by)))
            continue;
        gathered g;
        diff_row *rows = NULL;
        size_t nrows = 0;
        int ok = diff_rows(a, b, (dt_compare_by)by, o, &g, &rows, &nrows) == 0;
        for (size_t i = 0; ok && i < nrows; i++) {
            if (ntop == cap) {
                size_t c = cap ? cap * 2 : 64;
                top_row *p = realloc(top, c * sizeof *p);
                if (!p) {
                    ok = 0;
                    break;
                }
                top = p;
                cap = c;
            }
            char *name = strdup(row_name(&g, (dt_compare_by)by, rows[i].name));
            if (!name) {
                ok = 0;
                break;
            }
            top[ntop++] = (top_row){(dt_compare_by)by, name, change_of(&rows[i]), rows[i].main_a, rows[i].main_b};
        }
        free(rows);
        gathered_free(&g);
        if (!ok)
            goto end;
    }
    if (ntop)
        qsort(top, ntop, sizeof *top, cmp_top);
    for (size_t i = 0; i < ntop; i++) {
        dt_table_str(t, diff_titles[top[i].by]);
        dt_table_str(t, top[i].name);
        dt_table_str(t, top[i].change);
        dt_table_str(t, main_figures[top[i].by]);
        dt_table_us(t, top[i].a);
        dt_table_us(t, top[i].b);
        dt_table_us(t, top[i].b - top[i].a);
    }
    rc = t->failed ? -1 : 0;
end:
    for (size_t i = 0; i < ntop; i++)
        free(top[i].name);
    free(top);
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
            totals[s] = v->main_ns; /* a rank without the name counts as 0 */
            row->ranks += v->present != 0;
            if (v->present && (row->slowest_rank < 0 || v->main_ns > row->max_ns)) {
                row->max_ns = v->main_ns;
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

/* ---- stragglers ---- */

static const dt_column straggler_columns[] = {{"rank", 'n'},
                                              {"steps", 'n'},
                                              {"compute_us_per_step", 'n'},
                                              {"collective_us_per_step", 'n'},
                                              {"late_start_steps", 'n'},
                                              {"straggler", 's'}};

/* Where, from the start of step k, the last long collective of that step starts (-1: none).
 * A step runs to the next step's start (the last to its own end); long: at least 1% of the
 * rank's mean step time. */
static int64_t last_long_collective(const dt_report *r, size_t k)
{
    const struct dt_span *st = &r->step_spans[k];
    int64_t end = k + 1 < r->nstep_spans ? r->step_spans[k + 1].start : st->end;
    int64_t mean = (r->step_spans[r->nstep_spans - 1].end - r->step_spans[0].start) / (int64_t)r->nstep_spans;
    size_t lo = 0, hi = r->ncollectives; /* the first collective starting at the step's start or later */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->collectives[mid].start < st->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t at = -1;
    for (size_t i = lo; i < r->ncollectives && r->collectives[i].start < end; i++) {
        const struct dt_span *c = &r->collectives[i];
        if ((c->end - c->start) * 100 >= mean)
            at = c->start - st->start;
    }
    return at;
}

int dt_stragglers_table(const dt_report *const *reports, size_t n, dt_table *t)
{
    dt_table_init(t, "stragglers", straggler_columns, NCOLS(straggler_columns));
    uint64_t *late = calloc(n ? n : 1, sizeof *late);
    int64_t *compute = calloc(n ? n : 1, sizeof *compute);
    if (!late || !compute) {
        free(late);
        free(compute);
        return -1;
    }
    /* HTA's late start: per step index every rank has, the ranks whose last long collective
     * starts latest from the step's start */
    size_t steps = SIZE_MAX;
    for (size_t s = 0; s < n; s++)
        if (reports[s]->nstep_spans < steps)
            steps = reports[s]->nstep_spans;
    for (size_t k = 0; n && k < steps; k++) {
        int64_t latest = -1;
        for (size_t s = 0; s < n; s++) {
            int64_t at = last_long_collective(reports[s], k);
            if (at > latest)
                latest = at;
        }
        for (size_t s = 0; latest >= 0 && s < n; s++)
            late[s] += last_long_collective(reports[s], k) == latest;
    }
    int64_t slowest = INT64_MIN;
    for (size_t s = 0; s < n; s++) {
        const dt_report *r = reports[s];
        uint64_t per = r->nsteps ? r->nsteps : 1;
        compute[s] = per_step(r->kernel_ns - r->collective_ns, per);
        if (compute[s] > slowest)
            slowest = compute[s];
    }
    for (size_t s = 0; s < n; s++) {
        const dt_report *r = reports[s];
        uint64_t per = r->nsteps ? r->nsteps : 1;
        dt_table_cell(t, "%lld", (long long)dt_report_rank_label(r, s));
        dt_table_u64(t, r->nsteps);
        dt_table_us(t, compute[s]);
        dt_table_us(t, per_step(r->collective_ns, per));
        dt_table_u64(t, late[s]);
        dt_table_str(t, compute[s] == slowest ? "yes" : "");
    }
    free(late);
    free(compute);
    return t->failed ? -1 : 0;
}
