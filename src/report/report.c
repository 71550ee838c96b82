/* report.c: one trace's report (report.h): the reader's callback aggregates per name and per
 * stream and keeps the ops, the runtime calls and the device events' links; the end of the read
 * sorts, links device work to ops (as Holistic Trace Analysis does: device event -> correlation
 * -> runtime call -> the innermost cpu_op around it on its thread) and finds the streams' busy
 * time and gaps; the tables are made from the rows. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/grow.h"
#include "report/keymap.h"

typedef struct durations {
    int64_t *ns; /* owned */
    size_t n, cap;
} durations;

typedef struct interval {
    int64_t start, end;
} interval;

typedef struct lane_acc {
    int64_t device, stream;
    interval *spans; /* owned */
    size_t n, cap;
} lane_acc;

/* A cpu_op, or a runtime call with a correlation, kept to the end of the read: the ops' nesting
 * and the op around each launch are found once all are known (a file is not in time order). */
typedef struct host_item {
    int64_t start, end;
    int64_t key;     /* a cpu_op's External id, a runtime call's correlation */
    uint32_t thread; /* its (pid, tid) */
    uint32_t name;   /* a cpu_op's name id; 0 for a runtime call */
    uint32_t seq;    /* the order in the file: among equal spans the earlier is the outer */
    uint8_t is_runtime, has_key;
} host_item;

/* A kernel, copy or set: what links it to an op. */
typedef struct device_item {
    int64_t correlation, external_id, dur;
    uint8_t has_correlation, has_external_id;
} device_item;

/* The memory docs/report.md and report.h give per op, runtime call and device event. */
_Static_assert(sizeof(host_item) == 40, "40 bytes per cpu_op and runtime call");
_Static_assert(sizeof(device_item) == 32, "32 bytes per kernel, copy and set");

#define NO_ITEM UINT32_MAX

/* The names met last, by a hash of a few of their bytes: a kernel name (often 200 bytes of
 * template arguments) is then compared once, not hashed byte by byte, per event. */
#define NAME_CACHE_SLOTS 1024
typedef struct name_slot {
    uint32_t id, len;
} name_slot;

/* Per kind, per name id: the rows being summed, and the kernels' durations. */
struct dt_report_acc {
    name_slot name_cache[NAME_CACHE_SLOTS];
    dt_kernel_row *kernels;
    durations *kernel_durations;
    dt_memory_row *memory;
    dt_api_row *api;
    dt_annotation_row *annotations[2]; /* host, device */
    uint8_t *step_seen;                /* per name id: a ProfilerStep#N name already counted */
    uint8_t *collective;               /* per name id: 0 not yet known, 1 not a collective, 2 one */
    size_t step_spans_cap, collectives_cap;
    dt_op_row *ops;
    size_t nnames_cap;
    lane_acc *lanes;
    size_t nlanes, lanes_cap;
    dt_keymap lane_map;
    host_item *host;
    size_t nhost, host_cap;
    device_item *device;
    size_t ndevice, device_cap;
    dt_keymap thread_map;
    uint32_t nthreads;
    dt_intern lane_names; /* pid / tid strings that are not numbers */
    int lane_names_ready;
    int runtime_correlations;   /* some runtime call carries a correlation */
    int64_t last_pid, last_tid; /* the thread met last (events come in runs of one thread) */
    int64_t last_thread;        /* its index, or -1 */
    char *short_buf;            /* owned: for DT_NAMES_SHORT */
    size_t short_cap;
    int failed; /* out of memory */
};

static const char *const skip_texts[] = {
#define DT_SKIP_TEXT(name, text) text,
    DT_SKIP_CAUSES(DT_SKIP_TEXT)
#undef DT_SKIP_TEXT
};
static const char *const skip_keys[] = {
#define DT_SKIP_KEY(name, text) #name,
    DT_SKIP_CAUSES(DT_SKIP_KEY)
#undef DT_SKIP_KEY
};

const char *dt_skip_cause_text(dt_skip_cause cause)
{
    return (unsigned)cause < DT_SKIP_COUNT ? skip_texts[cause] : "?";
}

const char *dt_skip_cause_key(dt_skip_cause cause)
{
    return (unsigned)cause < DT_SKIP_COUNT ? skip_keys[cause] : "?";
}

void dt_report_skipped_text(const dt_report *r, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    if (!r->nskipped)
        return;
    size_t o = (size_t)snprintf(buf, len, "skipped %llu event%s:", (unsigned long long)r->nskipped,
                                r->nskipped == 1 ? "" : "s");
    const char *sep = " ";
    for (int c = 0; c < DT_SKIP_COUNT && o < len; c++) {
        if (!r->skipped[c])
            continue;
        o += (size_t)snprintf(buf + o, len - o, "%s%llu %s (first at byte %llu)", sep,
                              (unsigned long long)r->skipped[c], skip_texts[c], (unsigned long long)r->skipped_at[c]);
        sep = ", ";
    }
}

static const char *const unlinked_texts[] = {
#define DT_CAUSE_TEXT(name, text) text,
    DT_UNLINKED_CAUSES(DT_CAUSE_TEXT)
#undef DT_CAUSE_TEXT
};

const char *dt_unlinked_cause_text(dt_unlinked_cause cause)
{
    return (unsigned)cause < DT_UNLINKED_COUNT ? unlinked_texts[cause] : "?";
}

const char *dt_report_name(const dt_report *r, uint32_t id)
{
    return dt_intern_get(&r->names, id);
}

size_t dt_short_name(const char *name, size_t len, char *out, size_t outlen)
{
    size_t o = 0;
    int depth = 0;
    for (size_t i = 0; i < len && o + 1 < outlen; i++) {
        char c = name[i];
        if (c == '<' && !(i >= 8 && !memcmp(name + i - 8, "operator", 8)) &&
            !(i >= 9 && !memcmp(name + i - 9, "operator<", 9))) {
            if (depth++ == 0) {
                const char *mark = "<...>";
                for (const char *m = mark; *m && o + 1 < outlen; m++)
                    out[o++] = *m;
            }
            continue;
        }
        if (c == '>' && depth > 0 && !(i > 0 && name[i - 1] == '-')) {
            depth--;
            continue;
        }
        if (depth == 0)
            out[o++] = c;
    }
    out[o] = 0;
    return o;
}

static int grow_names(struct dt_report_acc *a, uint32_t id)
{
    if (id < a->nnames_cap)
        return 0;
    size_t cap = a->nnames_cap ? a->nnames_cap : 256;
    while (cap <= id)
        cap *= 2;
#define GROW(field)                                                                    \
    do {                                                                               \
        void *p = realloc(a->field, cap * sizeof *a->field);                           \
        if (!p)                                                                        \
            return -1;                                                                 \
        a->field = p;                                                                  \
        memset(a->field + a->nnames_cap, 0, (cap - a->nnames_cap) * sizeof *a->field); \
    } while (0)
    GROW(kernels);
    GROW(kernel_durations);
    GROW(memory);
    GROW(api);
    GROW(ops);
    GROW(annotations[0]);
    GROW(annotations[1]);
    GROW(step_seen);
    GROW(collective);
#undef GROW
    a->nnames_cap = cap;
    return 0;
}

static uint32_t intern_name(dt_report *r, const dt_tr_str *name)
{
    struct dt_report_acc *a = r->acc;
    const char *s = name->s;
    size_t len = name->len;
    if (!len)
        return dt_intern_n(&r->names, "(no name)", 9);
    if (r->names_mode == DT_NAMES_SHORT) {
        if (a->short_cap < len + 8) {
            char *b = realloc(a->short_buf, len + 8);
            if (!b)
                return 0;
            a->short_buf = b;
            a->short_cap = len + 8;
        }
        len = dt_short_name(s, len, a->short_buf, a->short_cap);
        s = a->short_buf;
    }
    uint64_t head = 0, tail = 0, middle = 0;
    memcpy(&head, s, len < 8 ? len : 8);
    if (len > 8)
        memcpy(&tail, s + len - 8, 8);
    if (len > 16)
        memcpy(&middle, s + len / 2 - 4, 8);
    uint64_t h = head * 0x9E3779B97F4A7C15ull ^ tail * 0xC2B2AE3D27D4EB4Full ^ middle * 0x165667B19E3779F9ull ^ len;
    name_slot *slot = &a->name_cache[(h >> 32) % NAME_CACHE_SLOTS];
    if (slot->id && slot->len == len && !memcmp(dt_intern_get(&r->names, slot->id), s, len))
        return slot->id;
    uint32_t id = dt_intern_n(&r->names, s, len);
    slot->id = id;
    slot->len = (uint32_t)len;
    return id;
}

static int push_duration(durations *d, int64_t ns)
{
    int64_t *p = dt_room_for_one(d->ns, d->n, &d->cap, sizeof *p, 8);
    if (!p)
        return -1;
    d->ns = p;
    d->ns[d->n++] = ns;
    return 0;
}

static lane_acc *lane_of(struct dt_report_acc *a, int64_t device, int64_t stream)
{
    int64_t i = dt_keymap_get(&a->lane_map, device, stream);
    if (i >= 0)
        return &a->lanes[i];
    lane_acc *p = dt_room_for_one(a->lanes, a->nlanes, &a->lanes_cap, sizeof *p, 16);
    if (!p)
        return NULL;
    a->lanes = p;
    if (dt_keymap_put(&a->lane_map, device, stream, (uint32_t)a->nlanes) < 0)
        return NULL;
    lane_acc *l = &a->lanes[a->nlanes++];
    memset(l, 0, sizeof *l);
    l->device = device;
    l->stream = stream;
    return l;
}

static int push_span(lane_acc *l, int64_t start, int64_t end)
{
    interval *p = dt_room_for_one(l->spans, l->n, &l->cap, sizeof *p, 64);
    if (!p)
        return -1;
    l->spans = p;
    l->spans[l->n++] = (interval){start, end};
    return 0;
}

/* A pid or tid as a key: its number when it is one, else its text's id (below every number). */
static int lane_value(struct dt_report_acc *a, const dt_tr_str *text, int64_t num, int has_num, int has_text,
                      int64_t *out)
{
    if (has_num && text->len && (text->s[0] == '-' || (text->s[0] >= '0' && text->s[0] <= '9'))) {
        *out = num;
        return 0;
    }
    if (!has_text) {
        *out = INT64_MIN;
        return 0;
    }
    if (!a->lane_names_ready) {
        if (dt_intern_init(&a->lane_names) != 0)
            return -1;
        a->lane_names_ready = 1;
    }
    uint32_t id = dt_intern_n(&a->lane_names, text->s, text->len);
    if (!id)
        return -1;
    *out = INT64_MIN + 1 + (int64_t)id;
    return 0;
}

/* The host thread of an event, as an index: -1 when out of memory. */
static int64_t thread_of(struct dt_report_acc *a, const dt_tr_event *ev)
{
    int64_t pid, tid;
    if (lane_value(a, &ev->pid, ev->pid_num, !!(ev->has & DT_TR_HAS_PID_NUM), !!(ev->has & DT_TR_HAS_PID), &pid) ||
        lane_value(a, &ev->tid, ev->tid_num, !!(ev->has & DT_TR_HAS_TID_NUM), !!(ev->has & DT_TR_HAS_TID), &tid))
        return -1;
    if (a->last_thread >= 0 && pid == a->last_pid && tid == a->last_tid)
        return a->last_thread;
    int64_t i = dt_keymap_put(&a->thread_map, pid, tid, a->nthreads);
    if (i == (int64_t)a->nthreads)
        a->nthreads++;
    a->last_pid = pid;
    a->last_tid = tid;
    a->last_thread = i;
    return i;
}

static int push_host(struct dt_report_acc *a, const dt_tr_event *ev, int64_t dur, uint32_t name, int is_runtime)
{
    int64_t thread = thread_of(a, ev);
    if (thread < 0)
        return -1;
    host_item *p = dt_room_for_one(a->host, a->nhost, &a->host_cap, sizeof *p, 256);
    if (!p)
        return -1;
    a->host = p;
    host_item *h = &a->host[a->nhost];
    h->start = ev->ts_ns;
    h->end = ev->ts_ns + dur;
    h->thread = (uint32_t)thread;
    h->name = name;
    h->seq = (uint32_t)a->nhost;
    h->is_runtime = (uint8_t)is_runtime;
    if (is_runtime) {
        h->key = ev->correlation;
        h->has_key = 1;
    } else {
        h->key = ev->has & DT_TR_HAS_EXTERNAL_ID ? ev->external_id : 0;
        h->has_key = !!(ev->has & DT_TR_HAS_EXTERNAL_ID);
    }
    a->nhost++;
    return 0;
}

static int push_device(struct dt_report_acc *a, const dt_tr_event *ev, int64_t dur)
{
    device_item *p = dt_room_for_one(a->device, a->ndevice, &a->device_cap, sizeof *p, 256);
    if (!p)
        return -1;
    a->device = p;
    device_item *d = &a->device[a->ndevice++];
    d->correlation = ev->correlation;
    d->external_id = ev->external_id;
    d->dur = dur;
    d->has_correlation = !!(ev->has & DT_TR_HAS_CORRELATION);
    d->has_external_id = !!(ev->has & DT_TR_HAS_EXTERNAL_ID);
    return 0;
}

/* The device stream of a device event: args.device/stream when given (devtrace, Kineto), else
 * pid/tid (older exports put the device in pid and "stream N" in tid). */
static void device_lane(const dt_tr_event *ev, int64_t *device, int64_t *stream)
{
    *device = ev->has & DT_TR_HAS_DEVICE ? ev->device : ev->has & DT_TR_HAS_PID_NUM ? ev->pid_num : -1;
    *stream = ev->has & DT_TR_HAS_STREAM ? ev->stream : ev->has & DT_TR_HAS_TID_NUM ? ev->tid_num : -1;
}

/* Why a complete event cannot be used (DT_SKIP_COUNT: it can). */
static dt_skip_cause unusable(const dt_tr_event *ev)
{
    if (!(ev->has & DT_TR_HAS_TS))
        return ev->has & DT_TR_TS_NOT_NUMBER     ? DT_SKIP_ts_not_number
               : ev->has & DT_TR_TS_OUT_OF_RANGE ? DT_SKIP_ts_out_of_range
                                                 : DT_SKIP_no_ts;
    if (!(ev->has & DT_TR_HAS_DUR))
        return ev->has & DT_TR_DUR_NOT_NUMBER     ? DT_SKIP_dur_not_number
               : ev->has & DT_TR_DUR_OUT_OF_RANGE ? DT_SKIP_dur_out_of_range
                                                  : DT_SKIP_no_dur;
    return ev->dur_ns < 0 ? DT_SKIP_negative_dur : DT_SKIP_COUNT;
}

static void skip(dt_report *r, dt_skip_cause cause, uint64_t offset)
{
    if (!r->skipped[cause]++)
        r->skipped_at[cause] = offset;
    r->nskipped++;
}

/* dt_report_read_steps: whether the event lies in the window (a device event by its launch). */
static int in_window(const dt_report *r, const dt_tr_event *ev)
{
    dt_tr_kind k = ev->kind;
    int device =
        k == DT_TR_KERNEL || k == DT_TR_MEMCPY || k == DT_TR_MEMSET || k == DT_TR_GPU_ANNOTATION || k == DT_TR_SYNC;
    if (device && ev->has & DT_TR_HAS_CORRELATION) {
        int64_t v = dt_keymap_get(r->window_correlations, ev->correlation, 0);
        if (v >= 0)
            return v == 1;
    }
    return ev->ts_ns >= r->window_from_ns && ev->ts_ns <= r->window_to_ns;
}

/* A collective's kernel: NCCL's and RCCL's names (ncclKernel_..., ncclDevKernel_...), MTIA's
 * hccl:: and XPU's xccl:: ones, and every name that starts with hccl (Holistic Trace
 * Analysis's rule: devtrace writes MSPTI's collectives as hccl:<name>, or as their own name
 * when it starts with hccl). */
static int is_collective_name(const char *name)
{
    return strstr(name, "nccl") || strstr(name, "rccl") || !strncmp(name, "hccl", 4) || !strncmp(name, "xccl::", 6);
}

static int push_span_to(struct dt_span **items, size_t *n, size_t *cap, int64_t start, int64_t end)
{
    struct dt_span *p = dt_room_for_one(*items, *n, cap, sizeof *p, 64);
    if (!p)
        return -1;
    *items = p;
    p[(*n)++] = (struct dt_span){start, end};
    return 0;
}

static int is_step_name(const dt_tr_str *name)
{
    return name->len > 13 && !memcmp(name->s, "ProfilerStep#", 13);
}

/* A ProfilerStep#N (counted once per name, the first event of each name its span) and the
 * steps' span. 0, or -1 when out of memory. */
static int note_step(dt_report *r, uint32_t id, int64_t start, int64_t end)
{
    struct dt_report_acc *a = r->acc;
    if (!a->step_seen[id] && push_span_to(&r->step_spans, &r->nstep_spans, &a->step_spans_cap, start, end) != 0)
        return -1;
    if (!r->nsteps || start < r->steps_from_ns)
        r->steps_from_ns = start;
    if (!r->nsteps || end > r->steps_to_ns)
        r->steps_to_ns = end;
    if (!a->step_seen[id]) {
        a->step_seen[id] = 1;
        r->nsteps++;
    }
    return 0;
}

static int on_event(const dt_tr_event *ev, void *user)
{
    dt_report *r = user;
    struct dt_report_acc *a = r->acc;
    if (ev->ph != 'X') {
        if (!ev->ph)
            skip(r, DT_SKIP_no_ph, ev->offset);
        return 0;
    }
    dt_skip_cause cause = unusable(ev);
    if (cause != DT_SKIP_COUNT) {
        skip(r, cause, ev->offset);
        return 0;
    }
    int64_t dur = ev->dur_ns;
    if (r->windowed && !in_window(r, ev))
        return 0;
    if (ev->ts_ns < r->first_ts_ns)
        r->first_ts_ns = ev->ts_ns;
    if (ev->ts_ns + dur > r->last_end_ns)
        r->last_end_ns = ev->ts_ns + dur;
    r->counted[ev->kind]++;
    dt_tr_kind kind = ev->kind;
    if (kind == DT_TR_PYTHON || kind == DT_TR_SYNC || kind == DT_TR_OTHER)
        return 0;
    uint32_t id = intern_name(r, &ev->name);
    if (!id || grow_names(a, id) != 0)
        goto oom;
    if ((kind == DT_TR_CPU_OP || kind == DT_TR_ANNOTATION) && is_step_name(&ev->name) &&
        note_step(r, id, ev->ts_ns, ev->ts_ns + dur) != 0)
        goto oom;
    switch (kind) {
    case DT_TR_KERNEL: {
        dt_kernel_row *k = &a->kernels[id];
        if (!k->count || dur < k->min_ns)
            k->min_ns = dur;
        if (dur > k->max_ns)
            k->max_ns = dur;
        k->count++;
        k->total_ns = dt_add_saturating(k->total_ns, dur);
        if (push_duration(&a->kernel_durations[id], dur) != 0)
            goto oom;
        if (!a->collective[id])
            a->collective[id] = is_collective_name(dt_report_name(r, id)) ? 2 : 1;
        if (a->collective[id] == 2) {
            r->collective_ns = dt_add_saturating(r->collective_ns, dur);
            if (push_span_to(&r->collectives, &r->ncollectives, &a->collectives_cap, ev->ts_ns, ev->ts_ns + dur) != 0)
                goto oom;
        }
        break;
    }
    case DT_TR_MEMCPY:
    case DT_TR_MEMSET: {
        dt_memory_row *m = &a->memory[id];
        m->count++;
        m->total_ns = dt_add_saturating(m->total_ns, dur);
        if (ev->has & DT_TR_HAS_BYTES && ev->bytes >= 0) {
            m->bytes += (uint64_t)ev->bytes; /* unsigned: wraps, never undefined */
            m->with_bytes++;
            m->bytes_ns = dt_add_saturating(m->bytes_ns, dur);
        }
        break;
    }
    case DT_TR_ANNOTATION:
    case DT_TR_GPU_ANNOTATION: {
        dt_annotation_row *n = &a->annotations[kind == DT_TR_GPU_ANNOTATION][id];
        n->count++;
        n->total_ns = dt_add_saturating(n->total_ns, dur);
        if (dur > n->max_ns)
            n->max_ns = dur;
        return 0;
    }
    case DT_TR_RUNTIME: {
        dt_api_row *c = &a->api[id];
        c->count++;
        c->total_ns = dt_add_saturating(c->total_ns, dur);
        if (dur > c->max_ns)
            c->max_ns = dur;
        if (ev->has & DT_TR_HAS_CORRELATION) {
            a->runtime_correlations = 1;
            if (push_host(a, ev, dur, 0, 1) != 0)
                goto oom;
        }
        return 0;
    }
    case DT_TR_CPU_OP: {
        dt_op_row *o = &a->ops[id];
        o->count++;
        o->cpu_ns = dt_add_saturating(o->cpu_ns, dur);
        if (push_host(a, ev, dur, id, 0) != 0)
            goto oom;
        return 0;
    }
    default:
        return 0;
    }
    /* a device event: its stream and its op */
    int64_t device, stream;
    device_lane(ev, &device, &stream);
    lane_acc *l = lane_of(a, device, stream);
    if (!l || push_span(l, ev->ts_ns, ev->ts_ns + dur) != 0 || push_device(a, ev, dur) != 0)
        goto oom;
    return 0;
oom:
    a->failed = 1;
    return 1;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int cmp_interval(const void *x, const void *y)
{
    const interval *a = x, *b = y;
    if (a->start != b->start)
        return (a->start > b->start) - (a->start < b->start);
    return (a->end > b->end) - (a->end < b->end);
}

/* Longest first, then by name (qsort_r's argument is the report, whose names the ids are). */
static int by_time_then_name(int64_t a, int64_t b, uint32_t na, uint32_t nb, const dt_report *r)
{
    if (a != b)
        return a > b ? -1 : 1;
    return strcmp(dt_report_name(r, na), dt_report_name(r, nb));
}
static int cmp_kernel(const void *x, const void *y, void *r)
{
    const dt_kernel_row *a = x, *b = y;
    return by_time_then_name(a->total_ns, b->total_ns, a->name, b->name, r);
}
static int cmp_memory(const void *x, const void *y, void *r)
{
    const dt_memory_row *a = x, *b = y;
    return by_time_then_name(a->total_ns, b->total_ns, a->name, b->name, r);
}
static int cmp_api(const void *x, const void *y, void *r)
{
    const dt_api_row *a = x, *b = y;
    return by_time_then_name(a->total_ns, b->total_ns, a->name, b->name, r);
}
static int cmp_op(const void *x, const void *y, void *r)
{
    const dt_op_row *a = x, *b = y;
    if (a->device_total_ns != b->device_total_ns)
        return a->device_total_ns > b->device_total_ns ? -1 : 1;
    if (a->device_self_ns != b->device_self_ns)
        return a->device_self_ns > b->device_self_ns ? -1 : 1;
    return by_time_then_name(a->cpu_ns, b->cpu_ns, a->name, b->name, r);
}
static int cmp_annotation(const void *x, const void *y, void *r)
{
    const dt_annotation_row *a = x, *b = y;
    int c = by_time_then_name(a->total_ns, b->total_ns, a->name, b->name, r);
    return c ? c : a->on_device - b->on_device;
}
static int cmp_stream(const void *x, const void *y)
{
    const dt_stream_row *a = x, *b = y;
    if (a->busy_ns != b->busy_ns)
        return a->busy_ns > b->busy_ns ? -1 : 1;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->stream > b->stream) - (a->stream < b->stream);
}

/* Keeps the DT_REPORT_GAPS longest gaps, longest first (earliest first among equals). */
static void keep_gap(dt_stream_row *s, int64_t len, int64_t at)
{
    int i;
    if (s->ngaps < DT_REPORT_GAPS)
        i = s->ngaps++;
    else if (len > s->gap_ns[DT_REPORT_GAPS - 1])
        i = DT_REPORT_GAPS - 1;
    else
        return;
    s->gap_ns[i] = len;
    s->gap_at_ns[i] = at;
    for (; i > 0 && s->gap_ns[i] > s->gap_ns[i - 1]; i--) {
        int64_t l = s->gap_ns[i], t = s->gap_at_ns[i];
        s->gap_ns[i] = s->gap_ns[i - 1];
        s->gap_at_ns[i] = s->gap_at_ns[i - 1];
        s->gap_ns[i - 1] = l;
        s->gap_at_ns[i - 1] = t;
    }
}

static void finish_stream(const dt_report *r, lane_acc *l, dt_stream_row *s)
{
    memset(s, 0, sizeof *s);
    s->device = l->device;
    s->stream = l->stream;
    s->events = l->n;
    qsort(l->spans, l->n, sizeof *l->spans, cmp_interval);
    int64_t start = l->spans[0].start, end = l->spans[0].end, first = start, last = end;
    for (size_t i = 1; i <= l->n; i++) {
        if (i < l->n && l->spans[i].start <= end) { /* overlapping or touching: one busy stretch */
            if (l->spans[i].end > end)
                end = l->spans[i].end;
            continue;
        }
        s->busy_ns = dt_add_saturating(s->busy_ns, end - start);
        if (end > last)
            last = end;
        if (i < l->n) {
            int64_t gap = l->spans[i].start - end;
            keep_gap(s, gap, end - r->first_ts_ns);
            start = l->spans[i].start;
            end = l->spans[i].end;
        }
    }
    s->span_ns = last - first;
}

/* Host items by thread, then start, cpu_ops before runtime calls, longer first, file order. */
static int cmp_host(const void *x, const void *y)
{
    const host_item *p = x, *q = y;
    if (p->thread != q->thread)
        return p->thread < q->thread ? -1 : 1;
    if (p->start != q->start)
        return p->start < q->start ? -1 : 1;
    if (p->is_runtime != q->is_runtime)
        return p->is_runtime < q->is_runtime ? -1 : 1;
    if (p->end != q->end)
        return p->end > q->end ? -1 : 1;
    return (p->seq > q->seq) - (p->seq < q->seq);
}

/* The op around each host item: parent[i] is the innermost cpu_op on item i's thread that
 * contains it (starts no later, ends no earlier), or NO_ITEM. One sweep per thread with the
 * stack of the ops still open. */
static int nest_host_items(struct dt_report_acc *a, uint32_t *parent)
{
    uint32_t *stack = malloc((a->nhost ? a->nhost : 1) * sizeof *stack);
    if (!stack)
        return -1;
    size_t depth = 0;
    for (size_t i = 0; i < a->nhost; i++) {
        const host_item *h = &a->host[i];
        if (i && h->thread != a->host[i - 1].thread)
            depth = 0;
        while (depth && a->host[stack[depth - 1]].end < h->end)
            depth--;
        parent[i] = depth ? stack[depth - 1] : NO_ITEM;
        if (!h->is_runtime)
            stack[depth++] = (uint32_t)i;
    }
    free(stack);
    return 0;
}

/* The op (a host item) a device event is linked to, or NO_ITEM with the cause counted. */
static uint32_t op_of_device(dt_report *r, const device_item *d, const uint32_t *parent, const dt_keymap *by_key)
{
    struct dt_report_acc *a = r->acc;
    dt_link_stats *st = &r->link;
    int cause;
    if (st->by_external_id) {
        int64_t op = d->has_external_id ? dt_keymap_get(by_key, d->external_id, 0) : -1;
        if (op >= 0)
            return (uint32_t)op;
        cause = d->has_external_id ? DT_UNLINKED_unknown_external_id : DT_UNLINKED_no_external_id;
    } else {
        int64_t rt = d->has_correlation ? dt_keymap_get(by_key, d->correlation, 0) : -1;
        if (rt >= 0 && parent[rt] != NO_ITEM) {
            const host_item *op = &a->host[parent[rt]];
            if (d->has_external_id && op->has_key) {
                st->external_id_checked++;
                st->external_id_disagree += op->key != d->external_id;
            }
            return parent[rt];
        }
        cause = !d->has_correlation ? DT_UNLINKED_no_correlation
                : rt < 0            ? DT_UNLINKED_no_runtime
                                    : DT_UNLINKED_outside_op;
    }
    st->unlinked[cause]++;
    st->unlinked_ns[cause] = dt_add_saturating(st->unlinked_ns[cause], d->dur);
    r->unlinked_device_ns = dt_add_saturating(r->unlinked_device_ns, d->dur);
    return NO_ITEM;
}

/* Device time to ops: each device event's op gets it as its own (self), and every name on that
 * op's stack (the op and the ops around it) once in its total: stamp[name] is the last device
 * event (+1) counted in that name's total. */
static int link_device_work(dt_report *r)
{
    struct dt_report_acc *a = r->acc;
    dt_link_stats *st = &r->link;
    int rc = -1;
    dt_keymap by_key = {0};
    uint32_t *parent = malloc((a->nhost ? a->nhost : 1) * sizeof *parent);
    uint64_t *stamp = calloc(a->nnames_cap ? a->nnames_cap : 1, sizeof *stamp);
    if (!parent || !stamp)
        goto end;
    if (a->nhost)
        qsort(a->host, a->nhost, sizeof *a->host, cmp_host);
    if (nest_host_items(a, parent) != 0)
        goto end;
    for (size_t i = 0; r->nsteps && i < a->nhost; i++) {
        const host_item *h = &a->host[i];
        if (h->is_runtime && dt_keymap_put(&r->step_correlations, h->key, 0,
                                           h->start >= r->steps_from_ns && h->start <= r->steps_to_ns) < 0)
            goto end;
    }
    /* correlation -> the runtime call, or (no correlations) External id -> the op; the first wins */
    st->by_external_id = !a->runtime_correlations;
    for (size_t i = 0; i < a->nhost; i++) {
        const host_item *h = &a->host[i];
        if (h->has_key && h->is_runtime == !st->by_external_id && dt_keymap_put(&by_key, h->key, 0, (uint32_t)i) < 0)
            goto end;
    }
    for (size_t j = 0; j < a->ndevice; j++) {
        const device_item *d = &a->device[j];
        uint32_t op = op_of_device(r, d, parent, &by_key);
        if (op == NO_ITEM)
            continue;
        st->linked++;
        st->linked_ns = dt_add_saturating(st->linked_ns, d->dur);
        dt_op_row *o = &a->ops[a->host[op].name];
        o->device_self_ns = dt_add_saturating(o->device_self_ns, d->dur);
        for (uint32_t p = op; p != NO_ITEM; p = parent[p]) {
            uint32_t name = a->host[p].name;
            if (stamp[name] == j + 1)
                continue;
            stamp[name] = j + 1;
            a->ops[name].device_total_ns = dt_add_saturating(a->ops[name].device_total_ns, d->dur);
        }
    }
    rc = 0;
end:
    free(parent);
    free(stamp);
    dt_keymap_free(&by_key);
    return rc;
}

static int finish(dt_report *r)
{
    struct dt_report_acc *a = r->acc;
    uint32_t nnames = dt_intern_count(&r->names);
    size_t n = nnames < a->nnames_cap ? nnames : a->nnames_cap;
    if (link_device_work(r) != 0)
        return -1;
    r->kernels = calloc(n ? n : 1, sizeof *r->kernels);
    r->memory = calloc(n ? n : 1, sizeof *r->memory);
    r->api = calloc(n ? n : 1, sizeof *r->api);
    r->ops = calloc(n ? n : 1, sizeof *r->ops);
    r->streams = calloc(a->nlanes ? a->nlanes : 1, sizeof *r->streams);
    r->annotations = calloc(n ? 2 * n : 1, sizeof *r->annotations);
    if (!r->kernels || !r->memory || !r->api || !r->ops || !r->streams || !r->annotations)
        return -1;
    for (uint32_t id = 1; id < n; id++) {
        if (a->kernels[id].count) {
            dt_kernel_row k = a->kernels[id];
            durations *d = &a->kernel_durations[id];
            qsort(d->ns, d->n, sizeof *d->ns, cmp_i64);
            k.median_ns = d->n % 2 ? d->ns[d->n / 2] : dt_midpoint(d->ns[d->n / 2 - 1], d->ns[d->n / 2]);
            k.name = id;
            r->kernels[r->nkernels++] = k;
            r->kernel_ns = dt_add_saturating(r->kernel_ns, k.total_ns);
        }
        if (a->memory[id].count) {
            r->memory[r->nmemory] = a->memory[id];
            r->memory[r->nmemory++].name = id;
        }
        if (a->api[id].count) {
            r->api[r->napi] = a->api[id];
            r->api[r->napi++].name = id;
        }
        if (a->ops[id].count) {
            r->ops[r->nops] = a->ops[id];
            r->ops[r->nops++].name = id;
        }
        for (int dev = 0; dev < 2; dev++)
            if (a->annotations[dev][id].count) {
                dt_annotation_row *row = &r->annotations[r->nannotations++];
                *row = a->annotations[dev][id];
                row->name = id;
                row->on_device = dev;
            }
    }
    for (size_t i = 0; i < a->nlanes; i++)
        finish_stream(r, &a->lanes[i], &r->streams[r->nstreams++]);
    qsort_r(r->kernels, r->nkernels, sizeof *r->kernels, cmp_kernel, r);
    qsort_r(r->memory, r->nmemory, sizeof *r->memory, cmp_memory, r);
    qsort_r(r->api, r->napi, sizeof *r->api, cmp_api, r);
    qsort_r(r->ops, r->nops, sizeof *r->ops, cmp_op, r);
    qsort_r(r->annotations, r->nannotations, sizeof *r->annotations, cmp_annotation, r);
    qsort(r->streams, r->nstreams, sizeof *r->streams, cmp_stream);
    if (r->nstep_spans)
        qsort(r->step_spans, r->nstep_spans, sizeof *r->step_spans, cmp_interval);
    if (r->ncollectives)
        qsort(r->collectives, r->ncollectives, sizeof *r->collectives, cmp_interval);
    return 0;
}

static void free_acc(struct dt_report_acc *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nnames_cap; i++)
        free(a->kernel_durations[i].ns);
    free(a->kernels);
    free(a->kernel_durations);
    free(a->memory);
    free(a->api);
    free(a->ops);
    free(a->annotations[0]);
    free(a->annotations[1]);
    free(a->step_seen);
    free(a->collective);
    for (size_t i = 0; i < a->nlanes; i++)
        free(a->lanes[i].spans);
    free(a->lanes);
    dt_keymap_free(&a->lane_map);
    free(a->host);
    free(a->device);
    dt_keymap_free(&a->thread_map);
    if (a->lane_names_ready)
        dt_intern_destroy(&a->lane_names);
    free(a->short_buf);
    free(a);
}

static int begin(dt_report *r, const char *path, dt_names_mode mode, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->names_mode = mode;
    r->first_ts_ns = INT64_MAX;
    r->last_end_ns = INT64_MIN;
    r->path = strdup(path);
    r->acc = calloc(1, sizeof *r->acc);
    if (!r->path || !r->acc || dt_intern_init(&r->names) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    r->acc->last_thread = -1;
    return 0;
}

static int end(dt_report *r, int rc, char *err, size_t errlen)
{
    if (rc != 0 && r->acc->failed)
        snprintf(err, errlen, "%s: out of memory while reading the trace", r->path);
    if (rc == 0 && finish(r) != 0) {
        snprintf(err, errlen, "%s: out of memory while sorting the report", r->path);
        rc = -1;
    }
    free_acc(r->acc);
    r->acc = NULL;
    if (r->first_ts_ns == INT64_MAX)
        r->first_ts_ns = r->last_end_ns = 0;
    r->rank = r->info.has_rank ? r->info.rank : -1;
    return rc ? -1 : 0;
}

int dt_report_begin(dt_report *r, const char *name, dt_names_mode mode, char *err, size_t errlen)
{
    return begin(r, name, mode, err, errlen);
}

int dt_report_add(dt_report *r, const dt_tr_event *ev)
{
    return on_event(ev, r) ? -1 : 0;
}

int dt_report_end(dt_report *r, char *err, size_t errlen)
{
    return end(r, r->acc->failed ? -1 : 0, err, errlen);
}

int dt_report_read(dt_report *r, const char *path, dt_names_mode mode, char *err, size_t errlen)
{
    if (begin(r, path, mode, err, errlen) != 0)
        return -1;
    int rc = dt_tr_read_file(path, on_event, r, &r->info, err, errlen);
    return end(r, rc, err, errlen);
}

int dt_report_read_buffer(dt_report *r, const char *name, const void *data, size_t len, dt_names_mode mode, char *err,
                          size_t errlen)
{
    if (begin(r, name, mode, err, errlen) != 0)
        return -1;
    int rc = dt_tr_read_buffer(name, data, len, on_event, r, &r->info, err, errlen);
    return end(r, rc, err, errlen);
}

/* dt_report_read_steps and _buffer: begin a report windowed on whole's steps. */
static int begin_steps(dt_report *r, const dt_report *whole, char *err, size_t errlen)
{
    if (begin(r, whole->path, whole->names_mode, err, errlen) != 0)
        return -1;
    r->windowed = 1;
    r->window_from_ns = whole->steps_from_ns;
    r->window_to_ns = whole->steps_to_ns;
    r->window_correlations = &whole->step_correlations;
    return 0;
}

int dt_report_read_steps(dt_report *r, const dt_report *whole, char *err, size_t errlen)
{
    if (begin_steps(r, whole, err, errlen) != 0)
        return -1;
    int rc = dt_tr_read_file(whole->path, on_event, r, &r->info, err, errlen);
    rc = end(r, rc, err, errlen);
    r->nsteps = whole->nsteps;
    return rc;
}

int dt_report_read_steps_buffer(dt_report *r, const dt_report *whole, const void *data, size_t len, char *err,
                                size_t errlen)
{
    if (begin_steps(r, whole, err, errlen) != 0)
        return -1;
    int rc = dt_tr_read_buffer(whole->path, data, len, on_event, r, &r->info, err, errlen);
    rc = end(r, rc, err, errlen);
    r->nsteps = whole->nsteps;
    return rc;
}

void dt_report_free(dt_report *r)
{
    if (!r)
        return;
    free_acc(r->acc);
    if (r->path)
        dt_intern_destroy(&r->names);
    dt_tr_info_free(&r->info);
    free(r->path);
    free(r->kernels);
    free(r->memory);
    free(r->api);
    free(r->ops);
    free(r->streams);
    free(r->annotations);
    dt_keymap_free(&r->step_correlations);
    free(r->step_spans);
    free(r->collectives);
    memset(r, 0, sizeof *r);
}

/* ---- tables ---- */

static const dt_column kernel_columns[] = {{"name", 'w'},   {"count", 'n'},  {"total_us", 'n'},  {"avg_us", 'n'},
                                           {"min_us", 'n'}, {"max_us", 'n'}, {"median_us", 'n'}, {"percent", 'n'}};
static const dt_column memory_columns[] = {
    {"name", 'w'}, {"count", 'n'}, {"bytes", 'n'}, {"total_us", 'n'}, {"avg_gbps", 'n'}};
static const dt_column api_columns[] = {
    {"name", 'w'}, {"count", 'n'}, {"total_us", 'n'}, {"avg_us", 'n'}, {"max_us", 'n'}};
static const dt_column op_columns[] = {
    {"name", 'w'}, {"count", 'n'}, {"cpu_total_us", 'n'}, {"device_self_us", 'n'}, {"device_total_us", 'n'}};
static const dt_column stream_columns[] = {{"device", 'n'},     {"stream", 'n'},       {"busy_us", 'n'},
                                           {"span_us", 'n'},    {"busy_percent", 'n'}, {"gap1_us", 'n'},
                                           {"gap1_at_us", 'n'}, {"gap2_us", 'n'},      {"gap2_at_us", 'n'},
                                           {"gap3_us", 'n'},    {"gap3_at_us", 'n'}};
static const dt_column annotation_columns[] = {{"name", 'w'},     {"category", 's'}, {"count", 'n'},
                                               {"total_us", 'n'}, {"avg_us", 'n'},   {"max_us", 'n'}};
#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

/* total / count in ns, rounded to the nearest ns */
static int64_t average(int64_t total, uint64_t count)
{
    return count ? (int64_t)(((__int128)total * 2 + (int64_t)count) / ((__int128)count * 2)) : 0;
}

void dt_report_kernels_table(const dt_report *r, dt_table *t)
{
    dt_table_init(t, "kernels", kernel_columns, NCOLS(kernel_columns));
    for (size_t i = 0; i < r->nkernels; i++) {
        const dt_kernel_row *k = &r->kernels[i];
        dt_table_str(t, dt_report_name(r, k->name));
        dt_table_u64(t, k->count);
        dt_table_us(t, k->total_ns);
        dt_table_us(t, average(k->total_ns, k->count));
        dt_table_us(t, k->min_ns);
        dt_table_us(t, k->max_ns);
        dt_table_us(t, k->median_ns);
        dt_table_ratio(t, k->total_ns, r->kernel_ns, 100, 2);
    }
}

void dt_report_memory_table(const dt_report *r, dt_table *t)
{
    dt_table_init(t, "memory", memory_columns, NCOLS(memory_columns));
    for (size_t i = 0; i < r->nmemory; i++) {
        const dt_memory_row *m = &r->memory[i];
        dt_table_str(t, dt_report_name(r, m->name));
        dt_table_u64(t, m->count);
        if (m->with_bytes)
            dt_table_u64(t, m->bytes);
        else
            dt_table_str(t, ""); /* no copy of this name says how many bytes */
        dt_table_us(t, m->total_ns);
        /* bytes per ns = GB/s, over the copies that have bytes; empty when none has */
        dt_table_ratio(t, m->with_bytes ? (int64_t)m->bytes : 0, m->with_bytes ? m->bytes_ns : 0, 1, 3);
    }
}

void dt_report_annotations_table(const dt_report *r, dt_table *t)
{
    dt_table_init(t, "annotations", annotation_columns, NCOLS(annotation_columns));
    for (size_t i = 0; i < r->nannotations; i++) {
        const dt_annotation_row *n = &r->annotations[i];
        dt_table_str(t, dt_report_name(r, n->name));
        dt_table_str(t, n->on_device ? "gpu_user_annotation" : "user_annotation");
        dt_table_u64(t, n->count);
        dt_table_us(t, n->total_ns);
        dt_table_us(t, average(n->total_ns, n->count));
        dt_table_us(t, n->max_ns);
    }
}

void dt_report_api_table(const dt_report *r, dt_table *t)
{
    dt_table_init(t, "api", api_columns, NCOLS(api_columns));
    for (size_t i = 0; i < r->napi; i++) {
        const dt_api_row *c = &r->api[i];
        dt_table_str(t, dt_report_name(r, c->name));
        dt_table_u64(t, c->count);
        dt_table_us(t, c->total_ns);
        dt_table_us(t, average(c->total_ns, c->count));
        dt_table_us(t, c->max_ns);
    }
}

void dt_report_ops_table(const dt_report *r, dt_table *t)
{
    dt_table_init(t, "ops", op_columns, NCOLS(op_columns));
    for (size_t i = 0; i < r->nops; i++) {
        const dt_op_row *o = &r->ops[i];
        dt_table_str(t, dt_report_name(r, o->name));
        dt_table_u64(t, o->count);
        dt_table_us(t, o->cpu_ns);
        dt_table_us(t, o->device_self_ns);
        dt_table_us(t, o->device_total_ns);
    }
}

void dt_report_streams_table(const dt_report *r, dt_table *t)
{
    dt_table_init(t, "streams", stream_columns, NCOLS(stream_columns));
    for (size_t i = 0; i < r->nstreams; i++) {
        const dt_stream_row *s = &r->streams[i];
        dt_table_cell(t, "%lld", (long long)s->device);
        dt_table_cell(t, "%lld", (long long)s->stream);
        dt_table_us(t, s->busy_ns);
        dt_table_us(t, s->span_ns);
        dt_table_ratio(t, s->busy_ns, s->span_ns, 100, 2);
        for (int g = 0; g < DT_REPORT_GAPS; g++) {
            if (g < s->ngaps) {
                dt_table_us(t, s->gap_ns[g]);
                dt_table_us(t, s->gap_at_ns[g]);
            } else {
                dt_table_str(t, "");
                dt_table_str(t, "");
            }
        }
    }
}

typedef void (*table_fn)(const dt_report *r, dt_table *t);
static const table_fn report_tables[] = {dt_report_kernels_table, dt_report_memory_table,  dt_report_api_table,
                                         dt_report_ops_table,     dt_report_streams_table, dt_report_annotations_table};
#define NTABLES (sizeof report_tables / sizeof report_tables[0])

static int is_loss(const char *path)
{
    return strncmp(path, "counts.", 7) != 0;
}

void dt_report_write_devtrace_text(const dt_report *r, FILE *out)
{
    const dt_tr_info *in = &r->info;
    if (!in->has_devtrace)
        return;
    fprintf(out, "devtrace: backend %s (%s)\n", in->backend ? in->backend : "?", in->validation ? in->validation : "?");
    int any = 0;
    for (int i = 0; i < in->ncounters; i++)
        if (is_loss(in->counters[i].path) && in->counters[i].value) {
            fprintf(out, "  loss: %s = %lld\n", in->counters[i].path, (long long)in->counters[i].value);
            any = 1;
        }
    if (!any)
        fprintf(out, "  nothing dropped, malformed or out of window\n");
    for (int i = 0; i < in->nnotes; i++)
        fprintf(out, "  note: %s\n", in->notes[i]);
}

/* How device work was linked to ops: the rule used, the events linked, each cause of the rest,
 * and the External id cross-check. */
static void write_link_text(const dt_report *r, FILE *out)
{
    const dt_link_stats *st = &r->link;
    char buf[32];
    dt_format_us(buf, st->linked_ns);
    fprintf(out, "  device events linked to ops %s: %llu (%s us)",
            st->by_external_id ? "by External id (no runtime call has a correlation)"
                               : "through their correlation's runtime call",
            (unsigned long long)st->linked, buf);
    if (!st->by_external_id)
        fprintf(out, "; External id disagrees on %llu of %llu", (unsigned long long)st->external_id_disagree,
                (unsigned long long)st->external_id_checked);
    fputc('\n', out);
    for (int c = 0; c < DT_UNLINKED_COUNT; c++)
        if (st->unlinked[c]) {
            dt_format_us(buf, st->unlinked_ns[c]);
            fprintf(out, "  not linked: %llu device events %s (%s us)\n", (unsigned long long)st->unlinked[c],
                    dt_unlinked_cause_text((dt_unlinked_cause)c), buf);
        }
}

static void write_header_text(const dt_report *r, FILE *out)
{
    char span[32], kernel[32], communication[32], unlinked[32];
    dt_format_us(span, r->last_end_ns - r->first_ts_ns);
    dt_format_us(kernel, r->kernel_ns);
    dt_format_us(communication, r->collective_ns);
    dt_format_us(unlinked, r->unlinked_device_ns);
    fprintf(out, "trace: %s\n", r->path);
    fprintf(out, "  %llu events (%llu bytes)", (unsigned long long)r->info.events, (unsigned long long)r->info.bytes);
    if (r->rank >= 0)
        fprintf(out, ", rank %lld", (long long)r->rank);
    fprintf(out, ", %s us from the first event to the end of the last\n", span);
    fputs("  complete events:", out);
    for (int k = 0; k < DT_TR_KIND_COUNT; k++)
        fprintf(out, " %s=%llu", dt_tr_kind_name((dt_tr_kind)k), (unsigned long long)r->counted[k]);
    fputc('\n', out);
    fprintf(out, "  kernel time %s us (communication %s us); device time not linked to an op %s us\n", kernel,
            communication, unlinked);
    write_link_text(r, out);
    if (r->nskipped) {
        char line[1024];
        dt_report_skipped_text(r, line, sizeof line);
        fprintf(out, "  %s\n", line);
    }
    dt_report_write_devtrace_text(r, out);
}

static void write_devtrace_json(const dt_report *r, FILE *out)
{
    const dt_tr_info *in = &r->info;
    char buf[32];
    fputs("{\"trace\": ", out);
    dt_json_write_string(out, r->path);
    fprintf(out, ", \"events\": %llu, \"bytes\": %llu, \"rank\": ", (unsigned long long)in->events,
            (unsigned long long)in->bytes);
    if (r->rank >= 0)
        fprintf(out, "%lld", (long long)r->rank);
    else
        fputs("null", out);
    fputs(", \"complete_events\": {", out);
    for (int k = 0; k < DT_TR_KIND_COUNT; k++)
        fprintf(out, "%s\"%s\": %llu", k ? ", " : "", dt_tr_kind_name((dt_tr_kind)k),
                (unsigned long long)r->counted[k]);
    fputc('}', out);
    dt_format_us(buf, r->kernel_ns);
    fprintf(out, ", \"kernel_us\": %s", buf);
    dt_format_us(buf, r->collective_ns);
    fprintf(out, ", \"communication_us\": %s", buf);
    dt_format_us(buf, r->unlinked_device_ns);
    fprintf(out, ", \"unlinked_device_us\": %s", buf);
    const dt_link_stats *st = &r->link;
    dt_format_us(buf, st->linked_ns);
    fprintf(out,
            ", \"link\": {\"rule\": \"%s\", \"linked\": %llu, \"linked_us\": %s, \"external_id_checked\": %llu, "
            "\"external_id_disagree\": %llu",
            st->by_external_id ? "external_id" : "correlation", (unsigned long long)st->linked, buf,
            (unsigned long long)st->external_id_checked, (unsigned long long)st->external_id_disagree);
    static const char *const cause_keys[] = {
#define DT_CAUSE_KEY(name, text) #name,
        DT_UNLINKED_CAUSES(DT_CAUSE_KEY)
#undef DT_CAUSE_KEY
    };
    for (int c = 0; c < DT_UNLINKED_COUNT; c++) {
        dt_format_us(buf, st->unlinked_ns[c]);
        fprintf(out, ", \"%s\": %llu, \"%s_us\": %s", cause_keys[c], (unsigned long long)st->unlinked[c], cause_keys[c],
                buf);
    }
    fputc('}', out);
    fprintf(out, ", \"skipped\": {\"events\": %llu", (unsigned long long)r->nskipped);
    for (int c = 0; c < DT_SKIP_COUNT; c++)
        fprintf(out, ", \"%s\": %llu", skip_keys[c], (unsigned long long)r->skipped[c]);
    fputc('}', out);
    if (in->has_devtrace) {
        fputs(", \"devtrace\": {\"backend\": ", out);
        dt_json_write_string(out, in->backend ? in->backend : "");
        fputs(", \"validation\": ", out);
        dt_json_write_string(out, in->validation ? in->validation : "");
        fputs(", \"losses\": {", out);
        int first = 1;
        for (int i = 0; i < in->ncounters; i++)
            if (is_loss(in->counters[i].path)) {
                fputs(first ? "" : ", ", out);
                dt_json_write_string(out, in->counters[i].path);
                fprintf(out, ": %lld", (long long)in->counters[i].value);
                first = 0;
            }
        fputs("}, \"notes\": [", out);
        for (int i = 0; i < in->nnotes; i++) {
            fputs(i ? ", " : "", out);
            dt_json_write_string(out, in->notes[i]);
        }
        fputs("]}", out);
    }
    fputs("}", out);
}

/* The tables in JSON: `"about": {...}, "kernels": [...], ...` without the outer braces. */
static void write_json_members(const dt_report *r, FILE *out, size_t top)
{
    fputs("\"about\": ", out);
    write_devtrace_json(r, out);
    for (size_t i = 0; i < NTABLES; i++) {
        dt_table t;
        report_tables[i](r, &t);
        fputs(",\n", out);
        dt_table_write_json(&t, out, top);
        dt_table_free(&t);
    }
}

void dt_report_write(const dt_report *r, dt_format format, FILE *out, size_t top)
{
    if (format == DT_FORMAT_JSON) {
        fputs("{", out);
        write_json_members(r, out, top);
        fputs("}\n", out);
        return;
    }
    if (format == DT_FORMAT_TABLE)
        write_header_text(r, out);
    for (size_t i = 0; i < NTABLES; i++) {
        dt_table t;
        report_tables[i](r, &t);
        if (format == DT_FORMAT_CSV)
            fprintf(out, "%s# %s\n", i ? "\n" : "", t.title);
        else
            fputc('\n', out);
        dt_table_write(&t, format, out, top);
        dt_table_free(&t);
    }
}

static int write_file(const char *dir, const char *name, char *err, size_t errlen, void (*fill)(FILE *, void *),
                      void *ctx)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        snprintf(err, errlen, "%s/%s: the path is too long", dir, name);
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    fill(f, ctx);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

typedef struct table_job {
    const dt_table *t;
    const dt_report *r;
    size_t top;
} table_job;

static void fill_csv(FILE *f, void *ctx)
{
    table_job *j = ctx;
    dt_table_write_csv(j->t, f, j->top);
}

static void fill_json(FILE *f, void *ctx)
{
    table_job *j = ctx;
    dt_report_write(j->r, DT_FORMAT_JSON, f, j->top);
}

int dt_report_make_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the output folder: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int dt_report_write_dir(const dt_report *r, dt_format format, const char *dir, size_t top, char *err, size_t errlen)
{
    if (dt_report_make_dir(dir, err, errlen) != 0)
        return -1;
    if (format == DT_FORMAT_JSON) {
        table_job j = {NULL, r, top};
        return write_file(dir, "report.json", err, errlen, fill_json, &j);
    }
    for (size_t i = 0; i < NTABLES; i++) {
        dt_table t;
        report_tables[i](r, &t);
        char name[64];
        snprintf(name, sizeof name, "%s.csv", t.title);
        table_job j = {&t, r, top};
        int rc = write_file(dir, name, err, errlen, fill_csv, &j);
        dt_table_free(&t);
        if (rc != 0)
            return -1;
    }
    return 0;
}
