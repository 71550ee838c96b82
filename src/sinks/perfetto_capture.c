/* perfetto_capture.c: the Perfetto trace's first packets and its tail: the interned
 * names (categories, the args' names, the copy and fill names, then every name the events
 * use, NAMES_PER_PACKET a packet), the capture's facts (what the Chrome trace's top-level
 * keys say: devtrace, deviceProperties, distributedInfo) as the args of an instant on the
 * devtrace track, and the "Record Window End" instant. Text is written as valid UTF-8, as
 * the Chrome trace writes it. */
#include "perfetto_trace.h"
#include "sinks.h"

static const char *const arg_names[ARG_END] = {
    NULL,
    "External id",
    "queued",
    "device",
    "context",
    "stream",
    "correlation",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "grid",
    "block",
    "est. achieved occupancy %",
    "bytes",
    "memory bandwidth (GB/s)",
    "cbid",
    "Sequence number",
    "Fwd thread id",
    "marker id",
    "domain",
    "mark",
    "User external id",
};

/* ------------------------------------------------------------------ the first packets */

/* One interned entry (EventName, EventCategory, DebugAnnotationName: iid 1, name 2). */
static void put_interned(dt_jsonw *w, uint32_t field, uint64_t iid, const char *name)
{
    size_t n = strlen(name), need = 3 * n + 32;
    if (w->cap - w->len < need && dt_jsonw_reserve(w, need) != 0)
        return;
    char *p = w->buf + w->len, *entry, *text;
    p = dt_pb_open(p, field, &entry);
    p = dt_pb_uint(p, INTERNED_IID, iid);
    p = dt_pb_open(p, INTERNED_NAME, &text);
    p = put_utf8(p, name, n);
    p = dt_pb_close(text, p);
    p = dt_pb_close(entry, p);
    w->len = (size_t)(p - w->buf);
}

/* Opens a packet of interned data at the end of w: the packet's and the data's length
 * places are kept as offsets (the buffer may move as entries are added). */
static int interned_open(dt_jsonw *w, size_t *packet, size_t *data)
{
    if (w->cap - w->len < 16 && dt_jsonw_reserve(w, 16) != 0)
        return -1;
    char *p = w->buf + w->len, *packet_at, *data_at;
    p = packet_open(p, &packet_at);
    p = dt_pb_open(p, PACKET_INTERNED_DATA, &data_at);
    *packet = (size_t)(packet_at - w->buf);
    *data = (size_t)(data_at - w->buf);
    w->len = (size_t)(p - w->buf);
    return 0;
}

static void interned_close(dt_jsonw *w, size_t packet, size_t data, uint32_t flags)
{
    if (w->failed || (w->cap - w->len < 32 && dt_jsonw_reserve(w, 32) != 0))
        return;
    char *p = dt_pb_close(w->buf + data, w->buf + w->len);
    p = packet_close(w->buf + packet, p, flags);
    w->len = (size_t)(p - w->buf);
}

/* Every name the events use, NAMES_PER_PACKET a packet, the first clearing the sequence's
 * state and holding the categories and the args' names too. */
void dt_pf_write_interned(writer *wr)
{
    static const char *const category_names[] = {NULL, "kernel", "gpu_memcpy",      "gpu_memset",
                                                 NULL, "cpu_op", "user_annotation", "gpu_user_annotation"};
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    size_t packet, data;
    if (interned_open(w, &packet, &data) != 0)
        return;
    for (uint32_t c = CAT_KERNEL; c <= CAT_GPU_USER_ANNOTATION; c++)
        put_interned(w, INTERNED_CATEGORIES, c, c == CAT_RUNTIME ? s->runtime_category : category_names[c]);
    for (uint32_t a = ARG_EXTERNAL; a < ARG_END; a++)
        put_interned(w, INTERNED_ANNOTATION_NAMES, a, arg_names[a]);
    for (uint32_t d = 0; d < COPY_DIRECTIONS; d++)
        put_interned(w, INTERNED_EVENT_NAMES, 1 + d, devtrace_memcpy_name(d));
    put_interned(w, INTERNED_EVENT_NAMES, MEMSET_NAME_IID, "Memset (Device)");
    const trace_facts *t = wr->t;
    uint32_t flags = SEQ_INCREMENTAL_STATE_CLEARED;
    for (uint32_t i = 0; i < t->nnames; i++) {
        if (i && i % NAMES_PER_PACKET == 0) {
            interned_close(w, packet, data, flags);
            flags = SEQ_NEEDS_INCREMENTAL_STATE;
            if (interned_open(w, &packet, &data) != 0)
                return;
        }
        put_interned(w, INTERNED_EVENT_NAMES, NAME_IID_BASE + i, dt_intern_get(&s->names, t->names[i]));
    }
    interned_close(w, packet, data, flags);
}

/* Annotations with their names written out (the capture's facts: written once). */
static char *put_named_open(char *p, uint32_t field, const char *name, char **len_at)
{
    p = dt_pb_open(p, field, len_at);
    return put_string(p, ANN_NAME, name);
}

static char *put_named_uint(char *p, uint32_t field, const char *name, uint64_t v)
{
    char *len_at;
    p = put_named_open(p, field, name, &len_at);
    p = dt_pb_uint(p, ANN_UINT, v);
    return dt_pb_close(len_at, p);
}

static char *put_named_int(char *p, uint32_t field, const char *name, int64_t v)
{
    char *len_at;
    p = put_named_open(p, field, name, &len_at);
    p = dt_pb_int(p, ANN_INT, v);
    return dt_pb_close(len_at, p);
}

/* A string value: room 3 * strlen(text) + 32. */
static char *put_named_string(char *p, uint32_t field, const char *name, const char *text)
{
    char *len_at, *value;
    p = put_named_open(p, field, name, &len_at);
    p = dt_pb_open(p, ANN_STRING, &value);
    p = put_utf8(p, text, strlen(text));
    p = dt_pb_close(value, p);
    return dt_pb_close(len_at, p);
}

static char *put_kind_counts(char *p, const char *name, const uint64_t *counts)
{
    static const int kinds[] = {DEVTRACE_KIND_KERNEL, DEVTRACE_KIND_MEMCPY, DEVTRACE_KIND_MEMSET, DEVTRACE_KIND_RUNTIME,
                                DEVTRACE_KIND_CPU_OP};
    char *dict;
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, name, &dict);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        p = put_named_uint(p, ANN_DICT_ENTRIES, devtrace_kind_name(kinds[i]), counts[kinds[i]]);
    static const int more[] = {DEVTRACE_KIND_MARKER, DEVTRACE_KIND_MEMORY}; /* only where there are some */
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        if (counts[more[i]])
            p = put_named_uint(p, ANN_DICT_ENTRIES, devtrace_kind_name(more[i]), counts[more[i]]);
    return dt_pb_close(dict, p);
}

static char *put_device_properties(char *p, const dt_session *s)
{
    char *list, *entry;
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "deviceProperties", &list);
    for (int i = 0; i < s->ndevices; i++) {
        const dt_device_props *d = &s->devices[i];
        p = dt_pb_open(p, ANN_ARRAY_VALUES, &entry);
        p = put_named_int(p, ANN_DICT_ENTRIES, "id", d->id);
        p = put_named_string(p, ANN_DICT_ENTRIES, "name", d->name);
        p = put_named_uint(p, ANN_DICT_ENTRIES, "totalGlobalMem", d->total_global_mem);
        dt_device_field fields[DT_DEVICE_FIELDS];
        dt_device_fields(d, fields);
        for (size_t f = 0; f < DT_DEVICE_FIELDS; f++)
            p = put_named_int(p, ANN_DICT_ENTRIES, fields[f].key, fields[f].value);
        p = dt_pb_close(entry, p);
    }
    return dt_pb_close(list, p);
}

/* An instant on the devtrace track at ts with a name written out; *event for its args. */
static char *instant_open(char *p, uint64_t ts, const char *name, char **packet, char **event)
{
    p = packet_open(p, packet);
    p = dt_pb_uint(p, PACKET_TIMESTAMP, ts);
    p = dt_pb_open(p, PACKET_TRACK_EVENT, event);
    p = dt_pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
    p = dt_pb_uint(p, EVENT_TRACK_UUID, DEVTRACE_TRACK_UUID);
    return put_string(p, EVENT_NAME, name);
}

/* The loss counters, by cause, as the Chrome trace's devtrace section has them. */
static char *put_loss_counts(char *p, const dt_session *s)
{
    /* DEVTRACE_STATS_COUNTERS in its order, grouped and with out_of_window where the Chrome
     * trace has them (chrome_json.c, write_stats_counters). */
    const devtrace_stats *st = &s->stats;
    char *dict = NULL;
    const char *open_group = "";
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++) {
        const dt_stats_counter *c = &dt_stats_counters[i];
        if (strcmp(c->group, open_group) != 0 && open_group[0]) {
            p = dt_pb_close(dict, p);
            open_group = "";
        }
        if (i == DT_STATS_INDEX_zero_timestamp)
            p = put_kind_counts(p, "out_of_window", st->out_of_window);
        if (c->group[0] && !open_group[0]) {
            p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, c->group, &dict);
            open_group = c->group;
        }
        p = put_named_uint(p, open_group[0] ? ANN_DICT_ENTRIES : EVENT_DEBUG_ANNOTATIONS, c->key,
                           dt_stats_counter_value(st, i));
    }
    if (open_group[0])
        p = dt_pb_close(dict, p);
    return p;
}

/* The traced processes, when the trace lists them (dt_trace_lists_processes). */
static char *put_processes(char *p, const dt_session *s)
{
    char *dict = NULL;
    int list_processes = dt_trace_lists_processes(s->nprocesses, s->stats.forked_untraced);
    if (list_processes)
        p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "processes", &dict);
    for (size_t i = 0; list_processes && i < s->nprocesses; i++) {
        const dt_traced_process *proc = &s->processes[i];
        char *entry;
        p = dt_pb_open(p, ANN_ARRAY_VALUES, &entry);
        p = put_named_uint(p, ANN_DICT_ENTRIES, "pid", proc->pid);
        p = put_named_uint(p, ANN_DICT_ENTRIES, "ppid", proc->ppid);
        p = put_named_string(p, ANN_DICT_ENTRIES, "command", proc->command);
        p = put_named_uint(p, ANN_DICT_ENTRIES, "events", proc->events);
        p = put_named_uint(p, ANN_DICT_ENTRIES, "ended", proc->ended != 0);
        p = put_named_uint(p, ANN_DICT_ENTRIES, "crash_signal", (uint64_t)proc->crash_signal);
        p = put_named_int(p, ANN_DICT_ENTRIES, "rank", proc->rank);
        p = put_named_int(p, ANN_DICT_ENTRIES, "world_size", proc->world_size);
        p = dt_pb_close(entry, p);
    }
    if (list_processes)
        p = dt_pb_close(dict, p);
    return p;
}

/* The capture window [start, stop] and the session's notes. */
static char *put_window_and_notes(char *p, const dt_session *s)
{
    char *dict, *value;
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "window", &dict);
    p = dt_pb_open(p, ANN_ARRAY_VALUES, &value);
    p = dt_pb_close(value, dt_pb_uint(p, ANN_UINT, s->window_start));
    p = dt_pb_open(p, ANN_ARRAY_VALUES, &value);
    p = dt_pb_close(value, dt_pb_uint(p, ANN_UINT, s->window_stop));
    p = dt_pb_close(dict, p);
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "notes", &dict);
    for (int i = 0; i < s->nnotes; i++) {
        char *text;
        p = dt_pb_open(p, ANN_ARRAY_VALUES, &value);
        p = dt_pb_open(p, ANN_STRING, &text);
        p = put_utf8(p, s->notes[i], strlen(s->notes[i]));
        p = dt_pb_close(text, p);
        p = dt_pb_close(value, p);
    }
    p = dt_pb_close(dict, p);
    return p;
}

/* What the Chrome trace's top-level keys say (devtrace, deviceProperties, distributedInfo)
 * as the args of an instant "devtrace" at the start of the capture window. */
void dt_pf_write_capture_facts(writer *wr)
{
    dt_jsonw *w = &wr->w;
    const dt_session *s = wr->s;
    size_t need = 8192 + 3 * sizeof s->unavailable_reason + (size_t)s->ndevices * 1024 +
                  s->nprocesses * (3 * sizeof s->processes[0].command + 256);
    for (int i = 0; i < s->nnotes; i++)
        need += 3 * strlen(s->notes[i]) + 32;
    if (dt_jsonw_reserve(w, need) != 0)
        return;
    char *p = w->buf + w->len, *packet, *event, *dict;
    p = instant_open(p, s->window_start ? s->window_start : s->base_ns, "devtrace", &packet, &event);
    p = put_named_string(p, EVENT_DEBUG_ANNOTATIONS, "version", DEVTRACE_VERSION_STRING);
    p = put_named_string(p, EVENT_DEBUG_ANNOTATIONS, "backend", s->backend_name);
    p = put_named_string(p, EVENT_DEBUG_ANNOTATIONS, "validation", s->validation);
    if (s->unavailable_reason[0])
        p = put_named_string(p, EVENT_DEBUG_ANNOTATIONS, "unavailable", s->unavailable_reason);
    p = put_named_string(p, EVENT_DEBUG_ANNOTATIONS, "clock", dt_clock_mode_name(s->clock.mode));
    p = put_kind_counts(p, "counts", s->stats.events);
    p = put_loss_counts(p, s);
    p = put_processes(p, s);
    p = put_window_and_notes(p, s);
    p = put_device_properties(p, s);
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "distributedInfo", &dict);
    p = put_named_int(p, ANN_DICT_ENTRIES, "rank", s->rank);
    p = put_named_int(p, ANN_DICT_ENTRIES, "world_size", s->world_size);
    p = dt_pb_close(dict, p);
    p = dt_pb_close(event, p);
    w->len = (size_t)(packet_close(packet, p, 0) - w->buf);
}

/* The instant "Record Window End" at the end of the capture window, as the Chrome trace has. */
void dt_pf_write_tail(writer *wr)
{
    dt_jsonw *w = &wr->w;
    const dt_session *s = wr->s;
    if (dt_jsonw_reserve(w, 128) != 0)
        return;
    char *packet, *event;
    char *p = instant_open(w->buf + w->len, s->window_stop > s->base_ns ? s->window_stop : s->base_ns,
                           "Record Window End", &packet, &event);
    p = dt_pb_close(event, p);
    w->len = (size_t)(packet_close(packet, p, 0) - w->buf);
}
