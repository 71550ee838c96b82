/* drain.c: finalising a session: clock alignment, capture-window filter, external
 * correlation, flow pairing, kernel-name demangling and the time sort. Runs once,
 * after stop; every event it drops is counted by cause. */
#include <stdlib.h>
#include <string.h>

#include "session.h"

/* Open-addressing map from a correlation id to its external id and flow state. */
enum { HAS_RUNTIME = 1, RUNTIME_IN = 2, HAS_DEVICE = 4, DEVICE_IN = 8, HAS_EXT = 16 };

typedef struct corr_entry {
    uint64_t key; /* correlation id; 0 = empty slot (0 is never a correlation) */
    uint64_t external;
    uint32_t bits;
} corr_entry;

typedef struct corr_map {
    corr_entry *slots;
    size_t mask;
} corr_map;

static int corr_map_init(corr_map *m, size_t expected)
{
    size_t n = 64;
    while (n < expected * 2)
        n <<= 1;
    m->slots = calloc(n, sizeof *m->slots);
    m->mask = n - 1;
    return m->slots ? 0 : -1;
}

/* Correlation ids run in sequence and events come roughly in that order: runs of 64
 * consecutive ids share a window of 64 slots (a few cache lines), and the runs are
 * scattered by a multiplicative hash, so most lookups find their line in cache (a hash
 * of the whole id sent every lookup to memory: half of the finalise time at 1 M events). */
static size_t corr_slot(const corr_map *m, uint64_t key)
{
    uint64_t run = (key >> 6) * 0x9E3779B97F4A7C15ull;
    return (size_t)(((run >> 20) << 6) | (key & 63)) & m->mask;
}

static corr_entry *corr_map_get(corr_map *m, uint64_t key, int create)
{
    size_t i = corr_slot(m, key);
    for (;; i = (i + 1) & m->mask) {
        if (m->slots[i].key == key)
            return &m->slots[i];
        if (m->slots[i].key == 0) {
            if (!create)
                return NULL;
            m->slots[i].key = key;
            return &m->slots[i];
        }
    }
}

static int is_device_kind(int kind)
{
    return kind == DEVTRACE_KIND_KERNEL || kind == DEVTRACE_KIND_MEMCPY || kind == DEVTRACE_KIND_MEMSET;
}

typedef struct collect_ctx {
    devtrace_event **all;
    size_t n;
} collect_ctx;

static void collect(void *user, devtrace_event *ev)
{
    collect_ctx *c = user;
    c->all[c->n++] = ev;
}

static int by_time(const void *a, const void *b)
{
    const devtrace_event *x = *(devtrace_event *const *)a, *y = *(devtrace_event *const *)b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->kind != y->kind) /* CPU ops enclose the runtime calls they start */
        return x->kind == DEVTRACE_KIND_CPU_OP ? -1 : y->kind == DEVTRACE_KIND_CPU_OP ? 1 : x->kind - y->kind;
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return x->correlation < y->correlation ? -1 : x->correlation > y->correlation;
}

/* Sorting by time: a stable merge sort of (start, event) pairs. The start is read from
 * each event once, so that comparisons run over a sequential array instead of loading
 * two scattered events each (qsort of the pointers spent most of its time waiting for
 * memory); events are touched only to break ties. Stable like glibc's qsort (a merge
 * sort), so events equal for by_time keep their collection order as before. */
typedef struct sort_item {
    uint64_t start;
    devtrace_event *ev;
} sort_item;

#define SORT_RUN 32 /* items insertion-sorted before merging */

static int item_cmp(const sort_item *x, const sort_item *y)
{
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return by_time(&x->ev, &y->ev);
}

/* Merges the sorted runs src[lo, mid) and src[mid, hi) into dst[lo, hi). */
static void merge_runs(const sort_item *src, sort_item *dst, size_t lo, size_t mid, size_t hi)
{
    if (mid >= hi || item_cmp(&src[mid - 1], &src[mid]) <= 0) { /* already in order (the usual case) */
        memcpy(dst + lo, src + lo, (hi - lo) * sizeof *src);
        return;
    }
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi)
        dst[o++] = item_cmp(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
    while (i < mid)
        dst[o++] = src[i++];
    while (j < hi)
        dst[o++] = src[j++];
}

/* Sorts a[0, n) (b: as much scratch); returns the array that holds the result. */
static sort_item *sort_items(sort_item *a, sort_item *b, size_t n)
{
    for (size_t lo = 0; lo < n; lo += SORT_RUN) {
        size_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            sort_item x = a[i];
            size_t j = i;
            for (; j > lo && item_cmp(&x, &a[j - 1]) < 0; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    }
    for (size_t width = SORT_RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            merge_runs(a, b, lo, mid, hi);
        }
        sort_item *t = a;
        a = b;
        b = t;
    }
    return a;
}

typedef struct sort_half {
    sort_item *a, *b, *result;
    size_t n;
} sort_half;

static void *sort_half_thread(void *arg)
{
    sort_half *h = arg;
    h->result = sort_items(h->a, h->b, h->n);
    return NULL;
}

#define SORT_PARALLEL_MIN 65536 /* fewer items: a thread costs more than it saves */

static void sort_by_time(devtrace_event **ev, size_t n)
{
    sort_item *a = n > 1 ? malloc(n * sizeof *a) : NULL, *b = n > 1 ? malloc(n * sizeof *b) : NULL;
    if (!a || !b) {
        free(a);
        free(b);
        qsort(ev, n, sizeof *ev, by_time);
        return;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (sort_item){ev[i]->start_ns, ev[i]};
    /* With a second core, the first half is sorted on a helper thread, then the halves
     * are merged, the first half winning ties: the same order as the sort alone (a stable
     * sort's result is unique), in about half the time. */
    pthread_t helper;
    sort_half first = {a, b, NULL, n / 2};
    int threaded = n >= SORT_PARALLEL_MIN && dt_online_cpus() > 1 &&
                   pthread_create(&helper, NULL, sort_half_thread, &first) == 0;
    if (!threaded) {
        sort_item *r = sort_items(a, b, n);
        for (size_t i = 0; i < n; i++)
            ev[i] = r[i].ev;
    } else {
        size_t h = first.n;
        sort_item *r2 = sort_items(a + h, b + h, n - h);
        pthread_join(helper, NULL);
        const sort_item *r1 = first.result;
        size_t i = 0, j = 0, o = 0;
        while (i < h && j < n - h)
            ev[o++] = item_cmp(&r2[j], &r1[i]) < 0 ? r2[j++].ev : r1[i++].ev;
        while (i < h)
            ev[o++] = r1[i++].ev;
        while (j < n - h)
            ev[o++] = r2[j++].ev;
    }
    free(a);
    free(b);
}

static void align_clock(dt_session *s, devtrace_event *ev)
{
    if (ev->flags & DEVTRACE_EVENT_HOST_CLOCK)
        return;
    int queued = ev->kind == DEVTRACE_KIND_KERNEL && (ev->flags & DEVTRACE_EVENT_HAS_QUEUED);
    dt_clock_map_span(&s->clock, &ev->start_ns, &ev->end_ns, queued ? &ev->u.kernel.queued_ns : NULL);
    ev->flags |= DEVTRACE_EVENT_HOST_CLOCK;
}

static int in_window(const dt_session *s, const devtrace_event *ev)
{
    uint64_t lo = s->window_start, hi = s->window_stop ? s->window_stop : UINT64_MAX;
    return ev->end_ns >= lo && ev->start_ns <= hi; /* overlap */
}

/* Replaces each distinct kernel name by its demangled form (one call per name). */
static void demangle_kernel_names(dt_session *s, devtrace_event **ev, size_t n)
{
    uint32_t count = dt_intern_count(&s->names);
    uint32_t *map = calloc(count, sizeof *map); /* 0 = not yet looked at */
    if (!map)
        return;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ev[i]->name_id;
        if (ev[i]->kind != DEVTRACE_KIND_KERNEL || id == 0 || id >= count)
            continue;
        if (!map[id]) {
            char *d = dt_demangle(dt_intern_get(&s->names, id));
            map[id] = d ? dt_intern_str(&s->names, d) : id;
            if (!map[id])
                map[id] = id;
            free(d);
        }
        ev[i]->name_id = map[id];
    }
    free(map);
}

static void mark_flows(dt_session *s, corr_map *m, devtrace_event **ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!ev[i]->correlation || ev[i]->kind == DEVTRACE_KIND_CPU_OP)
            continue;
        corr_entry *e = corr_map_get(m, ev[i]->correlation, 0);
        if (!e)
            continue;
        int device = is_device_kind(ev[i]->kind);
        uint32_t partner_in = device ? RUNTIME_IN : DEVICE_IN;
        uint32_t partner_any = device ? HAS_RUNTIME : HAS_DEVICE;
        if (e->bits & partner_in)
            ev[i]->flags |= DT_EVENT_FLOW;
        else if ((e->bits & partner_any) || device)
            DT_COUNT(s, unpaired_flows, 1); /* partner outside the window, or never recorded */
    }
}

int dt_session_finalize(dt_session *s)
{
    if (s->state == DT_FINAL)
        return 0;
    if (s->state != DT_STOPPED)
        return DEVTRACE_ESTATE;
    dt_ticks_convert(s); /* runtime calls stamped with the TSC, onto their backend's clock */
    s->stats.dropped_store_full += dt_store_dropped(&s->store);
    size_t total = (size_t)dt_store_count(&s->store);
    collect_ctx c = {calloc(total ? total : 1, sizeof(devtrace_event *)), 0};
    corr_map m = {0};
    if (!c.all || corr_map_init(&m, total) != 0) {
        free(c.all);
        free(m.slots);
        return DEVTRACE_ENOMEM;
    }
    dt_store_visit(&s->store, collect, &c);
    pthread_mutex_lock(&s->lock);
    dt_clock_map_build(&s->clock, s->samples, s->nsamples);
    size_t nsamples = s->nsamples;
    pthread_mutex_unlock(&s->lock);

    /* Pass 1: align clocks, learn external ids, drop malformed times. */
    size_t kept = 0, mapped = 0;
    for (size_t i = 0; i < c.n; i++) {
        devtrace_event *ev = c.all[i];
        if (ev->kind == DEVTRACE_KIND_EXTCORR || ev->kind == DEVTRACE_KIND_RUNTIME) {
            if (ev->correlation && (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL)) {
                corr_entry *e = corr_map_get(&m, ev->correlation, 1);
                if (!(e->bits & HAS_EXT)) {
                    e->bits |= HAS_EXT;
                    e->external = ev->external_id;
                }
            }
            if (ev->kind == DEVTRACE_KIND_EXTCORR)
                continue;
        }
        if (ev->kind == DEVTRACE_KIND_NONE || ev->kind >= DEVTRACE_KIND_COUNT) {
            DT_COUNT(s, malformed_records, 1); /* nothing dropped silently */
            continue;
        }
        mapped += !(ev->flags & DEVTRACE_EVENT_HOST_CLOCK);
        align_clock(s, ev);
        if (ev->end_ns < ev->start_ns) {
            DT_COUNT(s, bad_timestamps, 1);
            continue;
        }
        c.all[kept++] = ev;
    }
    if (mapped && nsamples >= 2 && s->clock.mode == DT_CLOCK_OFFSET)
        dt_add_note(s, "the vendor clock did not advance with the host clock between its %zu samples (it went "
                       "backwards or stood still): vendor times are mapped by the first sample's offset alone; events "
                       "that fall outside the capture window are counted in out_of_window",
                    nsamples);
    /* Pass 2: attach external ids, filter the window, record flow halves. */
    size_t out = 0;
    memset(s->stats.events, 0, sizeof s->stats.events); /* counted here: nothing after this drops events */
    for (size_t i = 0; i < kept; i++) {
        devtrace_event *ev = c.all[i];
        int device = is_device_kind(ev->kind);
        corr_entry *e = ev->correlation ? corr_map_get(&m, ev->correlation, device || ev->kind == DEVTRACE_KIND_RUNTIME) : NULL;
        if (e && (e->bits & HAS_EXT) && !(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL) && ev->kind != DEVTRACE_KIND_CPU_OP) {
            ev->external_id = e->external;
            ev->flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        }
        int inside = in_window(s, ev);
        if (e)
            e->bits |= device ? (HAS_DEVICE | (inside ? DEVICE_IN : 0)) : (HAS_RUNTIME | (inside ? RUNTIME_IN : 0));
        if (!inside) {
            s->stats.out_of_window[ev->kind]++;
            continue;
        }
        s->stats.events[ev->kind]++;
        c.all[out++] = ev;
    }
    mark_flows(s, &m, c.all, out);
    free(m.slots);
    demangle_kernel_names(s, c.all, out);
    sort_by_time(c.all, out);
    s->sorted = c.all;
    s->nsorted = out;
    s->base_ns = s->window_start;
    if (out && (!s->base_ns || c.all[0]->start_ns < s->base_ns))
        s->base_ns = c.all[0]->start_ns;
    s->state = DT_FINAL;
    return 0;
}

size_t devtrace_drain(devtrace_session *s, devtrace_event_cb cb, void *user)
{
    if (!s)
        return 0;
    if (s->state == DT_RUNNING)
        devtrace_stop(s);
    if (dt_session_finalize(s) != 0)
        return 0;
    if (cb)
        for (size_t i = 0; i < s->nsorted; i++) {
            devtrace_event ev = *s->sorted[i];
            ev.flags &= (uint16_t)~DT_EVENT_FLOW;
            cb(&ev, dt_intern_get(&s->names, ev.name_id), user);
        }
    return s->nsorted;
}
