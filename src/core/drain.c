/* drain.c: finalising a session: clock alignment, capture-window filter, external
 * correlation, flow pairing, kernel-name demangling and the time sort. Runs once,
 * after stop; every event it drops is counted by cause. */
#include <stdlib.h>
#include <string.h>

#include "filemem.h"
#include "session.h"

/* Open-addressing map from a correlation id to its external id and flow state. */
enum { HAS_RUNTIME = 1, RUNTIME_IN = 2, HAS_DEVICE = 4, DEVICE_IN = 8, HAS_EXT = 16 };

typedef struct corr_entry {
    uint64_t key; /* correlation id; 0 = empty slot (0 is never a correlation) */
    uint64_t external;
    uint32_t bits;
    uint8_t launch_rank; /* launch_rank() of the runtime event chosen as the launch; 0: none in the window */
} corr_entry;
_Static_assert(sizeof(corr_entry) <= 24, "the launch's rank fits in the entry's padding");

/* The rank of a runtime event among those of its correlation id: the deeper its API level
 * (MSPTI's ACL, node and runtime records of one launch share an id), the higher; the flow
 * starts at the highest, the first met of equal ones. 1 for an event without a level. */
static uint8_t launch_rank(const devtrace_event *ev)
{
    uint32_t depth = (ev->flags & DEVTRACE_EVENT_HAS_LEVEL) ? ev->u.runtime.depth : 0;
    return (uint8_t)(1 + (depth < 254 ? depth : 254));
}

/* Between pass 2 and mark_flows, the flow bit of a runtime event says it is a launch
 * candidate (no flow is marked before mark_flows, which sets the bit anew). */
#define LAUNCH_CANDIDATE DT_EVENT_FLOW

/* In pass 2, for a runtime event in the window: it becomes its correlation's launch
 * candidate when it ranks above every one met before. A candidate overtaken later keeps the
 * bit, but its rank no longer matches the entry's. */
static void choose_launch(corr_entry *e, devtrace_event *ev)
{
    uint8_t rank = launch_rank(ev);
    if (rank > e->launch_rank) {
        e->launch_rank = rank;
        ev->flags |= LAUNCH_CANDIDATE;
    }
}

typedef struct corr_map {
    corr_entry *slots; /* in mem */
    size_t mask;
    dt_bigmem mem;
    int runtime_recorded; /* 0: the session does not record runtime calls, so no device half has a partner */
    size_t expected;
    /* Correlation -> user correlation id (in external, with HAS_EXT): a map of its own, made
     * at the first user id, so that sessions without one pay nothing for it (owned). */
    struct corr_map *user;
} corr_map;

static int corr_map_init(corr_map *m, size_t expected)
{
    m->expected = expected;
    size_t n = 64;
    while (n < expected * 2)
        n <<= 1;
    m->slots = dt_bigmem_alloc(&m->mem, n * sizeof *m->slots);
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

/* The entry of key, or NULL: a lookup that writes nothing (threads may share it). */
static const corr_entry *corr_map_find(const corr_map *m, uint64_t key)
{
    for (size_t i = corr_slot(m, key);; i = (i + 1) & m->mask) {
        if (m->slots[i].key == key)
            return &m->slots[i];
        if (m->slots[i].key == 0)
            return NULL;
    }
}

static void corr_map_release(corr_map *m)
{
    dt_bigmem_free(&m->mem);
    if (m->user) {
        dt_bigmem_free(&m->user->mem);
        free(m->user);
        m->user = NULL;
    }
}

static void corr_user_set(corr_map *m, uint64_t correlation, uint64_t id)
{
    if (!m->user) {
        m->user = calloc(1, sizeof *m->user);
        if (!m->user || corr_map_init(m->user, m->expected) != 0) {
            free(m->user);
            m->user = NULL;
            return;
        }
    }
    corr_entry *e = corr_map_get(m->user, correlation, 1);
    if (!(e->bits & HAS_EXT)) {
        e->bits |= HAS_EXT;
        e->external = id;
    }
}

/* The user correlation id of a correlation: 1 and *id, or 0. */
static int corr_user_find(const corr_map *m, uint64_t correlation, uint64_t *id)
{
    const corr_entry *e = m->user && correlation ? corr_map_find(m->user, correlation) : NULL;
    if (!e)
        return 0;
    *id = e->external;
    return 1;
}

/* Gives ev the user correlation id of its correlation, when it has none. */
static void attach_user(const corr_map *m, devtrace_event *ev)
{
    uint64_t id;
    if (ev->kind != DEVTRACE_KIND_CPU_OP && !(ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL) &&
        corr_user_find(m, ev->correlation, &id)) {
        ev->user_external_id = id;
        ev->flags |= DEVTRACE_EVENT_HAS_USER_EXTERNAL;
    }
}

static int is_device_kind(int kind)
{
    return kind == DEVTRACE_KIND_KERNEL || kind == DEVTRACE_KIND_MEMCPY || kind == DEVTRACE_KIND_MEMSET;
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
        for (size_t at = lo; at < hi; at += DT_FILEMEM_EVERY) {
            size_t end = hi - at < DT_FILEMEM_EVERY ? hi : at + DT_FILEMEM_EVERY;
            memcpy(dst + at, src + at, (end - at) * sizeof *src);
            dt_filemem_check();
        }
        return;
    }
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi) {
        dst[o++] = item_cmp(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
        dt_filemem_every(o);
    }
    while (i < mid)
        dst[o++] = src[i++];
    while (j < hi)
        dst[o++] = src[j++];
}

/* Sorts a[0, n) (b: as much scratch); returns the array that holds the result. */
static sort_item *sort_items(sort_item *a, sort_item *b, size_t n)
{
    for (size_t lo = 0; lo < n; lo += SORT_RUN) {
        dt_filemem_every(lo / SORT_RUN * 32 + 31); /* every 32 runs (1,024 items) */
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

/* Sets the flow bit of each of ev[0, n) whose partner is in the window, and returns how
 * many halves are unpaired (a device half without a partner in the window, or a runtime
 * half whose recorded partner is outside it). The runtime half of a correlation id is its
 * launch (choose_launch): the other runtime events of the id (the outer API levels of one
 * call) are no half at all. Reads the map only. With items, also fills
 * items[i] = (start, event) for the sort: one pass reads each event for both. */
static uint64_t mark_flows(const corr_map *m, devtrace_event **ev, size_t n, sort_item *items)
{
    uint64_t unpaired = 0;
    for (size_t i = 0; i < n; i++) {
        dt_filemem_every(i);
        devtrace_event *e = ev[i];
        dt_filemem_will_write(e);
        if (items)
            items[i] = (sort_item){e->start_ns, e};
        if (!e->correlation || e->kind == DEVTRACE_KIND_CPU_OP)
            continue;
        const corr_entry *c = corr_map_find(m, e->correlation);
        if (!c)
            continue;
        int device = is_device_kind(e->kind);
        if (!device) { /* the runtime half: only the call chosen as the launch */
            int launch =
                e->kind == DEVTRACE_KIND_RUNTIME && (e->flags & LAUNCH_CANDIDATE) && launch_rank(e) == c->launch_rank;
            e->flags &= (uint16_t)~LAUNCH_CANDIDATE;
            if (!launch)
                continue;
        }
        uint32_t partner_in = device ? RUNTIME_IN : DEVICE_IN;
        uint32_t partner_any = device ? HAS_RUNTIME : HAS_DEVICE;
        if (c->bits & partner_in)
            e->flags |= DT_EVENT_FLOW;
        else if ((c->bits & partner_any) || (device && m->runtime_recorded))
            unpaired++; /* partner outside the window, or never recorded */
    }
    return unpaired;
}

/* One thread's share of flows and sort: its events marked and their pairs made, then
 * sorted. The threads' events are disjoint; the sort reads no field the marking writes. */
typedef struct sort_half {
    const corr_map *m;   /* borrowed, read only */
    devtrace_event **ev; /* borrowed: this share's events */
    sort_item *a, *b, *result;
    size_t n;
    uint64_t unpaired;
} sort_half;

static void *sort_half_run(void *arg)
{
    sort_half *h = arg;
    h->unpaired = mark_flows(h->m, h->ev, h->n, h->a);
    h->result = sort_items(h->a, h->b, h->n);
    return NULL;
}

#define SORT_PARALLEL_MIN 65536 /* fewer items: a thread costs more than it saves */

/* Marks the flows of ev[0, n) and sorts them by time (counting unpaired halves in s). */
static void mark_flows_and_sort(dt_session *s, const corr_map *m, devtrace_event **ev, size_t n)
{
    dt_bigmem sa = {0}, sb = {0};
    sort_item *a = n > 1 ? dt_bigmem_alloc(&sa, n * sizeof *a) : NULL,
              *b = n > 1 ? dt_bigmem_alloc(&sb, n * sizeof *b) : NULL;
    if (!a || !b) {
        dt_bigmem_free(&sa);
        dt_bigmem_free(&sb);
        DT_COUNT(s, unpaired_flows, mark_flows(m, ev, n, NULL));
        qsort(ev, n, sizeof *ev, by_time);
        return;
    }
    /* With a second core, the first half is marked and sorted on a helper thread, then
     * the halves are merged, the first half winning ties: the same order as the sort
     * alone (a stable sort's result is unique), in about half the time. */
    size_t h = n / 2;
    sort_half first = {m, ev, a, b, NULL, h, 0}, second = {m, ev + h, a + h, b + h, NULL, n - h, 0};
    pthread_t helper;
    int threaded =
        n >= SORT_PARALLEL_MIN && dt_online_cpus() > 1 && pthread_create(&helper, NULL, sort_half_run, &first) == 0;
    if (!threaded) {
        sort_half all = {m, ev, a, b, NULL, n, 0};
        sort_half_run(&all);
        for (size_t i = 0; i < n; i++) {
            dt_filemem_every(i);
            ev[i] = all.result[i].ev;
        }
        DT_COUNT(s, unpaired_flows, all.unpaired);
    } else {
        sort_half_run(&second);
        pthread_join(helper, NULL);
        const sort_item *r1 = first.result, *r2 = second.result;
        size_t i = 0, j = 0, o = 0;
        while (i < h && j < n - h) {
            ev[o++] = item_cmp(&r2[j], &r1[i]) < 0 ? r2[j++].ev : r1[i++].ev;
            dt_filemem_every(o);
        }
        while (i < h)
            ev[o++] = r1[i++].ev;
        while (j < n - h)
            ev[o++] = r2[j++].ev;
        DT_COUNT(s, unpaired_flows, first.unpaired + second.unpaired);
    }
    dt_bigmem_free(&sa);
    dt_bigmem_free(&sb);
}

static void align_clock(dt_session *s, devtrace_event *ev)
{
    if (ev->flags & DEVTRACE_EVENT_HOST_CLOCK)
        return;
    int queued = ev->kind == DEVTRACE_KIND_KERNEL && (ev->flags & DEVTRACE_EVENT_HAS_QUEUED);
    dt_clock_map_span(&s->clock, &ev->start_ns, &ev->end_ns, queued ? &ev->u.kernel.queued_ns : NULL);
    ev->flags |= DEVTRACE_EVENT_HOST_CLOCK;
}

/* Kineto's rule (its outOfRange: timestamp < start || timestamp + duration > end drops the
 * activity): an event is kept only when it lies wholly inside [start, stop]; one that
 * merely overlaps an edge is counted in out_of_window like one wholly outside. */
static int in_window(const dt_session *s, const devtrace_event *ev)
{
    uint64_t lo = s->window_start, hi = s->window_stop ? s->window_stop : UINT64_MAX;
    if (s->process_windows) { /* one trace of several processes, each with its own window */
        const dt_traced_process *owner = NULL;
        for (size_t i = 0; i < s->nprocesses; i++) {
            const dt_traced_process *p = &s->processes[i];
            if (dt_lane_is_host(ev) ? p->pid == ev->device
                                    : p->device_base <= ev->device && (!owner || p->device_base > owner->device_base))
                owner = p;
        }
        if (owner) {
            lo = owner->window_start;
            hi = owner->window_stop ? owner->window_stop : UINT64_MAX;
        }
    }
    return ev->start_ns >= lo && ev->end_ns <= hi;
}

/* Kernel names demangled, one call per distinct name: by name id, 0 = not yet looked at
 * (ids >= count, interned while demangling, are left alone). */
typedef struct demangled_names {
    uint32_t *map; /* owned; NULL: out of memory, names left as they are */
    uint32_t count;
} demangled_names;

/* Replaces a kernel's name by its demangled form (one dt_demangle call per name). */
static void demangle_kernel_name(dt_session *s, demangled_names *d, devtrace_event *ev)
{
    uint32_t id = ev->name_id;
    if (ev->kind != DEVTRACE_KIND_KERNEL || !d->map || id == 0 || id >= d->count)
        return;
    if (!d->map[id]) {
        char *text = dt_demangle(dt_intern_get(&s->names, id));
        d->map[id] = text ? dt_intern_str(&s->names, text) : id;
        if (!d->map[id])
            d->map[id] = id;
        free(text);
    }
    ev->name_id = d->map[id];
}

/* Pass 1, run on each stored event as the store is walked (in its order): align clocks,
 * learn external ids, drop malformed times; the events kept are appended to kept. */
typedef struct pass1_ctx {
    dt_session *s;
    corr_map *m;
    devtrace_event **kept; /* borrowed: room for every stored event */
    size_t n;              /* events kept */
    size_t mapped;         /* events whose times were on the vendor's clock */
    size_t seen;           /* events visited */
} pass1_ctx;

static void pass1_event(void *user, devtrace_event *ev)
{
    pass1_ctx *c = user;
    dt_session *s = c->s;
    dt_filemem_every(c->seen++);
    dt_filemem_will_write(ev);
    if (ev->flags & DT_EVENT_RETIRED)
        return; /* an earlier capture window's */
    if (ev->kind == DEVTRACE_KIND_EXTCORR || ev->kind == DEVTRACE_KIND_RUNTIME) {
        if (ev->correlation && (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL)) {
            corr_entry *e = corr_map_get(c->m, ev->correlation, 1);
            if (!(e->bits & HAS_EXT)) {
                e->bits |= HAS_EXT;
                e->external = ev->external_id;
            }
        }
        if (ev->correlation && (ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL))
            corr_user_set(c->m, ev->correlation, ev->user_external_id);
        if (ev->kind == DEVTRACE_KIND_EXTCORR)
            return;
    }
    if (ev->kind == DEVTRACE_KIND_NONE || ev->kind >= DEVTRACE_KIND_COUNT) {
        DT_COUNT(s, malformed_records, 1); /* nothing dropped silently */
        return;
    }
    if (!dt_session_wants(s, ev->kind))
        return; /* a kind not asked for (devtrace_config.kinds), where the backend could not avoid it: not a loss */
    c->mapped += !(ev->flags & DEVTRACE_EVENT_HOST_CLOCK);
    align_clock(s, ev);
    if (ev->end_ns < ev->start_ns) {
        DT_COUNT(s, bad_timestamps, 1);
        return;
    }
    c->kept[c->n++] = ev;
}

/* The lanes of the events kept, gathered in pass 2 (which reads each event anyway, in
 * memory order) instead of by the trace writer, whose scan of the sorted events read them
 * in time order, scattered, before its first byte (12 to 21 ms per 1 M events). A lane met
 * lately is found in a small direct-mapped table; a new one is looked up in an
 * open-addressing set. Device and host lanes are kept apart (side 0 and 1). */
#define LANE_RECENT 64
#define LANE_BITS 14
#define LANE_SLOTS (1u << LANE_BITS) /* at most a quarter full */
_Static_assert(LANE_SLOTS >= 4 * DT_MAX_LANES, "the lane set has room");
typedef struct lane_set {
    uint64_t recent[2][LANE_RECENT];
    uint64_t slots[2][LANE_SLOTS];
    uint8_t recent_used[2][LANE_RECENT], used[2][LANE_SLOTS];
    size_t n;         /* both sides */
    uint64_t unnamed; /* events on lanes past DT_MAX_LANES */
} lane_set;

static inline unsigned lane_hash(uint64_t key, int bits)
{
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* 1 when the lane is in the set (now), 0 when it is past the bound (its event counted). */
static int lane_add_slow(lane_set *ls, int side, uint64_t key)
{
    unsigned i = lane_hash(key, LANE_BITS);
    for (; ls->used[side][i]; i = (i + 1) & (LANE_SLOTS - 1))
        if (ls->slots[side][i] == key)
            return 1;
    if (ls->n >= DT_MAX_LANES) {
        ls->unnamed++;
        return 0;
    }
    ls->used[side][i] = 1;
    ls->slots[side][i] = key;
    ls->n++;
    return 1;
}

static inline void lane_add(lane_set *ls, const devtrace_event *ev)
{
    int side = dt_lane_is_host(ev);
    uint64_t key = dt_lane_key(ev);
    unsigned r = lane_hash(key, 6);
    if (ls->recent_used[side][r] && ls->recent[side][r] == key)
        return;
    if (!lane_add_slow(ls, side, key))
        return;
    ls->recent[side][r] = key;
    ls->recent_used[side][r] = 1;
}

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The set's lanes into s->lanes (DT_MAX_LANES places): device lanes, then host lanes,
 * each ascending. */
static void lanes_take(dt_session *s, const lane_set *ls)
{
    size_t n = 0;
    for (int side = 0; side < 2; side++) {
        size_t first = n;
        for (size_t i = 0; i < LANE_SLOTS; i++)
            if (ls->used[side][i])
                s->lanes[n++] = ls->slots[side][i];
        qsort(s->lanes + first, n - first, sizeof *s->lanes, key_cmp);
        if (side == 0)
            s->ndevice_lanes = n;
    }
    s->nlanes = n;
    s->unnamed_lane_events = ls->unnamed;
    if (ls->unnamed)
        dt_add_note(s,
                    "the trace names the first %d streams and threads it meets; %llu events are on further ones, "
                    "which have no thread_name",
                    DT_MAX_LANES, (unsigned long long)ls->unnamed);
}

typedef struct marker_ref {
    devtrace_event *ev;
    size_t order; /* place in time order */
} marker_ref;

static int marker_cmp(const void *a, const void *b)
{
    const marker_ref *x = a, *y = b;
    if (x->ev->u.marker.id != y->ev->u.marker.id)
        return x->ev->u.marker.id < y->ev->u.marker.id ? -1 : 1;
    if (x->ev->u.marker.device != y->ev->u.marker.device)
        return x->ev->u.marker.device < y->ev->u.marker.device ? -1 : 1;
    if (x->ev->device != y->ev->device) /* the process (host) or device: ids are theirs */
        return x->ev->device < y->ev->device ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Marker records are points: a range's start and its end (same id, same side, same process or
 * device: two processes of one trace number their ranges alike) become one
 * event from the start's time to the end's, which ends up in the start's place (the order
 * is by start time); marks stay as they are. A start or end without its partner is left
 * out, counted in a note. Then the running total of each process's memory on each device, in
 * time order. nmarkers and nmemory: how many of all[0, *n) are of each kind (0: a pass skipped). */
static void markers_and_memory(dt_session *s, devtrace_event **all, size_t *n, size_t nmarkers, size_t nmemory)
{
    uint64_t unpaired = 0;
    if (nmarkers) {
        marker_ref *refs = malloc(nmarkers * sizeof *refs);
        if (!refs) {
            dt_add_note(s, "out of memory pairing %zu marker records: left out", nmarkers);
            for (size_t i = 0; i < *n; i++)
                if (all[i]->kind == DEVTRACE_KIND_MARKER)
                    all[i]->kind = DEVTRACE_KIND_NONE;
            unpaired = nmarkers;
        } else {
            size_t k = 0;
            for (size_t i = 0; i < *n; i++)
                if (all[i]->kind == DEVTRACE_KIND_MARKER)
                    refs[k++] = (marker_ref){all[i], i};
            qsort(refs, k, sizeof *refs, marker_cmp);
            for (size_t i = 0; i < k; i++) {
                devtrace_event *ev = refs[i].ev;
                if (ev->u.marker.phase == DEVTRACE_MARKER_INSTANT)
                    continue;
                devtrace_event *next = i + 1 < k ? refs[i + 1].ev : NULL;
                if (ev->u.marker.phase == DEVTRACE_MARKER_START && next &&
                    next->u.marker.phase == DEVTRACE_MARKER_END && next->u.marker.id == ev->u.marker.id &&
                    next->u.marker.device == ev->u.marker.device && next->device == ev->device) {
                    ev->end_ns = next->start_ns;
                    ev->u.marker.phase = DEVTRACE_MARKER_RANGE;
                    next->kind = DEVTRACE_KIND_NONE;
                    i++;
                    continue;
                }
                ev->kind = DEVTRACE_KIND_NONE;
                unpaired++;
            }
            free(refs);
        }
        size_t out = 0;
        for (size_t i = 0; i < *n; i++) {
            dt_filemem_every(i);
            if (all[i]->kind == DEVTRACE_KIND_NONE) {
                s->stats.events[DEVTRACE_KIND_MARKER]--;
                continue;
            }
            all[out++] = all[i];
        }
        *n = out;
    }
    if (unpaired)
        dt_add_note(s, "%llu marker range starts or ends had no partner (same id) in the window: left out",
                    (unsigned long long)unpaired);
    if (!nmemory)
        return;
    /* Per process and device: two processes of one trace number their devices alike, and
     * each has its own allocations (ev->device is the process). */
    enum { MAX_DEVICES = 64 };
    uint64_t devices[MAX_DEVICES];
    int64_t totals[MAX_DEVICES];
    size_t ndevices = 0;
    for (size_t i = 0; i < *n; i++) {
        dt_filemem_every(i);
        devtrace_event *ev = all[i];
        if (ev->kind != DEVTRACE_KIND_MEMORY)
            continue;
        uint64_t key = (uint64_t)ev->device << 32 | ev->u.memory.device_id;
        size_t d = 0;
        while (d < ndevices && devices[d] != key)
            d++;
        if (d == ndevices && ndevices < MAX_DEVICES) {
            devices[ndevices] = key;
            totals[ndevices++] = 0;
        }
        if (d == MAX_DEVICES) {
            ev->u.memory.total = -1; /* past the devices followed: no total */
            continue;
        }
        int64_t b = (int64_t)(ev->u.memory.bytes & INT64_MAX);
        totals[d] += ev->u.memory.release ? -b : b;
        ev->u.memory.total = totals[d];
    }
}

int dt_session_finalize(dt_session *s)
{
    if (s->state == DT_FINAL)
        return 0;
    if (s->state != DT_STOPPED)
        return DEVTRACE_ESTATE;
    dt_ticks_convert(s); /* runtime calls stamped with the TSC, onto their backend's clock */
    s->stats.dropped_store_full += dt_store_dropped(&s->store) - s->store_dropped_base;
    size_t total = (size_t)dt_store_count(&s->store);
    dt_bigmem_free(&s->sorted_mem);
    s->sorted = NULL;
    devtrace_event **all = dt_bigmem_alloc(&s->sorted_mem, (total ? total : 1) * sizeof *all);
    lane_set *lanes = calloc(1, sizeof *lanes);
    free(s->lanes);
    s->lanes = malloc(DT_MAX_LANES * sizeof *s->lanes);
    corr_map m = {0};
    if (!all || !lanes || !s->lanes || corr_map_init(&m, total) != 0) {
        dt_bigmem_free(&s->sorted_mem);
        free(lanes);
        corr_map_release(&m);
        return DEVTRACE_ENOMEM;
    }
    m.runtime_recorded = dt_session_wants(s, DEVTRACE_KIND_RUNTIME);
    pthread_mutex_lock(&s->lock);
    dt_clock_map_free(&s->clock); /* a flush or an earlier window built one */
    dt_clock_map_build(&s->clock, s->samples, s->nsamples);
    size_t nsamples = s->nsamples;
    pthread_mutex_unlock(&s->lock);

    /* Pass 1 as the store is walked: each event is read once for collection and pass 1. */
    pass1_ctx p1 = {s, &m, all, 0, 0, 0};
    dt_store_visit(&s->store, pass1_event, &p1);
    size_t kept = p1.n;
    if (p1.mapped && nsamples >= 2 && s->clock.mode == DT_CLOCK_OFFSET)
        dt_add_note(s,
                    "the vendor clock did not advance with the host clock between its %zu samples (it went "
                    "backwards or stood still): vendor times are mapped by the first sample's offset alone; events "
                    "that fall outside the capture window are counted in out_of_window",
                    nsamples);
    /* Pass 2: attach external ids, filter the window, record flow halves, demangle the
     * kernel names of the events kept (in their order, as a pass of its own did). */
    size_t out = 0, nmarkers = 0, nmemory = 0; /* (markers and memory events of those given: pass 3's) */
    uint32_t nnames = dt_intern_count(&s->names);
    demangled_names dn = {calloc(nnames ? nnames : 1, sizeof *dn.map), nnames};
    memset(s->stats.events, 0, sizeof s->stats.events); /* counted here: nothing after this drops events */
    for (size_t i = 0; i < kept; i++) {
        dt_filemem_every(i);
        devtrace_event *ev = all[i];
        dt_filemem_will_write(ev);
        int device = is_device_kind(ev->kind);
        corr_entry *e =
            ev->correlation ? corr_map_get(&m, ev->correlation, device || ev->kind == DEVTRACE_KIND_RUNTIME) : NULL;
        if (e && (e->bits & HAS_EXT) && !(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL) &&
            ev->kind != DEVTRACE_KIND_CPU_OP) {
            ev->external_id = e->external;
            ev->flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        }
        attach_user(&m, ev);
        int inside = in_window(s, ev);
        ev->flags &= (uint16_t)~LAUNCH_CANDIDATE;
        if (e)
            e->bits |= device ? (HAS_DEVICE | (inside ? DEVICE_IN : 0)) : (HAS_RUNTIME | (inside ? RUNTIME_IN : 0));
        if (e && inside && ev->kind == DEVTRACE_KIND_RUNTIME && !(ev->flags & DT_EVENT_DELIVERED))
            choose_launch(e, ev);
        if (!inside) {
            s->stats.out_of_window[ev->kind]++;
            continue;
        }
        s->stats.events[ev->kind]++;
        lane_add(lanes, ev);
        if (ev->flags & DT_EVENT_DELIVERED)
            continue; /* a devtrace_flush gave it already: counted, on its stream, not given again */
        demangle_kernel_name(s, &dn, ev);
        nmarkers += ev->kind == DEVTRACE_KIND_MARKER;
        nmemory += ev->kind == DEVTRACE_KIND_MEMORY;
        all[out++] = ev;
    }
    free(dn.map);
    lanes_take(s, lanes);
    free(lanes);
    mark_flows_and_sort(s, &m, all, out);
    markers_and_memory(s, all, &out, nmarkers, nmemory);
    corr_map_release(&m);
    s->sorted = all;
    s->nsorted = out;
    s->base_ns = s->window_start;
    if (out && (!s->base_ns || all[0]->start_ns < s->base_ns))
        s->base_ns = all[0]->start_ns;
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
    return dt_session_deliver(s, cb, user);
}

size_t dt_session_deliver(dt_session *s, devtrace_event_cb cb, void *user)
{
    if (cb)
        for (size_t i = 0; i < s->nsorted; i++) {
            dt_filemem_every(i);
            devtrace_event ev = *s->sorted[i];
            ev.flags &= (uint16_t) ~(DT_EVENT_FLOW | DT_EVENT_DELIVERED);
            cb(&ev, dt_intern_get(&s->names, ev.name_id), user);
        }
    return s->nsorted;
}

/* ---- delivering while the session runs (devtrace_flush) ---- */

typedef struct flush_ctx {
    dt_session *s;
    corr_map m;
    devtrace_event **ev; /* every stored event of the window (owned) */
    size_t n, cap;
    dt_ticks_converter ticks; /* ticks -> the backend's clock, in the collecting pass */
} flush_ctx;

static void flush_collect(void *user, devtrace_event *ev)
{
    flush_ctx *c = user;
    dt_ticks_converter_apply(&c->ticks, ev); /* every event, as dt_ticks_convert would */
    if ((ev->flags & DT_EVENT_RETIRED) || c->n == c->cap)
        return;
    c->ev[c->n++] = ev;
    if ((ev->kind == DEVTRACE_KIND_EXTCORR || ev->kind == DEVTRACE_KIND_RUNTIME) && ev->correlation) {
        corr_entry *e = corr_map_get(&c->m, ev->correlation, 1);
        if (ev->kind == DEVTRACE_KIND_RUNTIME)
            e->bits |= HAS_RUNTIME;
        if ((ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL) && !(e->bits & HAS_EXT)) {
            e->bits |= HAS_EXT;
            e->external = ev->external_id;
        }
        if (ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL)
            corr_user_set(&c->m, ev->correlation, ev->user_external_id);
    }
}

/* Whether a stored event can be given now: of a kind asked for, well-formed, inside the
 * window so far, and for a device event with a correlation, its runtime half arrived (when
 * runtime calls are recorded): the external ids it takes from it are then known too. */
static int flush_ready(flush_ctx *c, devtrace_event *ev)
{
    dt_session *s = c->s;
    if ((ev->flags & DT_EVENT_DELIVERED) || ev->kind == DEVTRACE_KIND_NONE || ev->kind >= DEVTRACE_KIND_COUNT ||
        ev->kind == DEVTRACE_KIND_EXTCORR || !dt_session_wants(s, ev->kind))
        return 0;
    const corr_entry *e = ev->correlation ? corr_map_find(&c->m, ev->correlation) : NULL;
    if (is_device_kind(ev->kind) && ev->correlation && c->m.runtime_recorded && !(e && (e->bits & HAS_RUNTIME)))
        return 0; /* held back until its runtime half arrives (or stop: then it is unpaired) */
    align_clock(s, ev);
    if (ev->end_ns < ev->start_ns || !in_window(s, ev))
        return 0; /* the final drain counts it */
    if (e && ev->kind != DEVTRACE_KIND_CPU_OP && (e->bits & HAS_EXT) && !(ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL)) {
        ev->external_id = e->external;
        ev->flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    }
    attach_user(&c->m, ev);
    return 1;
}

long dt_session_flush_running(dt_session *s, devtrace_event_cb cb, void *user)
{
    dt_ticks_sample(s);
    flush_ctx c = {.s = s};
    dt_ticks_converter_begin(s, &c.ticks);                           /* applied in the collecting pass */
    c.cap = (size_t)dt_store_count(&s->store) + 2 * DT_CHUNK_EVENTS; /* room for what arrives meanwhile */
    c.ev = calloc(c.cap, sizeof *c.ev);
    if (!c.ev || corr_map_init(&c.m, c.cap) != 0) {
        free(c.ev);
        dt_ticks_converter_end(s, &c.ticks);
        return -1;
    }
    c.m.runtime_recorded = dt_session_wants(s, DEVTRACE_KIND_RUNTIME);
    pthread_mutex_lock(&s->lock);
    dt_clock_map_free(&s->clock); /* a flush or an earlier window built one */
    dt_clock_map_build(&s->clock, s->samples, s->nsamples);
    pthread_mutex_unlock(&s->lock);
    dt_store_visit(&s->store, flush_collect, &c);
    dt_ticks_converter_end(s, &c.ticks);
    uint32_t nnames = dt_intern_count(&s->names);
    demangled_names dn = {calloc(nnames ? nnames : 1, sizeof *dn.map), nnames};
    size_t out = 0;
    for (size_t i = 0; i < c.n; i++)
        if (flush_ready(&c, c.ev[i])) {
            demangle_kernel_name(s, &dn, c.ev[i]);
            c.ev[out++] = c.ev[i];
        }
    free(dn.map);
    corr_map_release(&c.m);
    qsort(c.ev, out, sizeof *c.ev, by_time);
    for (size_t i = 0; i < out; i++) {
        c.ev[i]->flags |= DT_EVENT_DELIVERED;
        if (cb) {
            devtrace_event ev = *c.ev[i];
            ev.flags &= (uint16_t) ~(DT_EVENT_FLOW | DT_EVENT_DELIVERED);
            cb(&ev, dt_intern_get(&s->names, ev.name_id), user);
        }
    }
    free(c.ev);
    return (long)out;
}

static void retire_event(void *user, devtrace_event *ev)
{
    (void)user;
    ev->flags |= DT_EVENT_RETIRED;
}

void dt_session_retire_window(dt_session *s)
{
    dt_store_visit(&s->store, retire_event, NULL);
    s->store_dropped_base = dt_store_dropped(&s->store);
    size_t size = s->stats.size;
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.size = size;
    dt_bigmem_free(&s->sorted_mem);
    s->sorted = NULL;
    s->nsorted = 0;
    s->nlanes = s->ndevice_lanes = 0;
    s->unnamed_lane_events = 0;
    s->flushed_final = 0;
    pthread_mutex_lock(&s->lock);
    s->window_start = s->window_stop = 0;
    pthread_mutex_unlock(&s->lock);
}
