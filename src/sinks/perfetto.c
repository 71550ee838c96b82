/* perfetto.c: the Perfetto sink: the trace in Perfetto's own protobuf format, a Trace of
 * TracePackets carrying TrackEvents (docs/trace-format.md, "Perfetto"). Field numbers are
 * those of Perfetto's published protos (protos/perfetto/trace/trace_packet.proto,
 * track_event/track_event.proto, track_descriptor.proto, process_descriptor.proto,
 * thread_descriptor.proto, debug_annotation.proto, interned_data/interned_data.proto).
 *
 * Every packet is on one sequence (trusted_packet_sequence_id 1). The first packets
 * clear its incremental state and intern every name (event names, categories, the args'
 * names, in the order the events first use them, so that the bytes do not depend on the
 * order in which the session interned them: a replay of a capture gives the live trace's
 * bytes), then come the track descriptors (a track per device, "GPU 0", with a child per
 * stream; a process track per host process with a thread track per thread; a "devtrace"
 * track for the capture's facts), then each event as a slice: a BEGIN packet at its start
 * (name, category, args as debug annotations, flows) and an END packet at its end. The
 * events are made in pieces of 1024 by the same pipeline as the Chrome trace, in parallel;
 * a piece refers only to what the first packets defined, so the bytes are the same for any
 * count of threads. Flows: each runtime call and device event of a flow pair carry the
 * pair's id in flow_ids (the device event's place in the trace, plus one; a call with
 * several device events carries one id for each). A name ending in ".gz" gives one gzip
 * stream of the same bytes (the pipeline's, as for the Chrome trace). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/errors.h"
#include "core/session.h"
#include "jsonw.h"
#include "occupancy_memo.h"
#include "pipeline.h"
#include "protow.h"
#include "sinks.h"

/* Field numbers. Trace */
#define TRACE_PACKET 1
/* TracePacket */
#define PACKET_TIMESTAMP 8
#define PACKET_SEQUENCE_ID 10 /* trusted_packet_sequence_id */
#define PACKET_TRACK_EVENT 11
#define PACKET_INTERNED_DATA 12
#define PACKET_SEQUENCE_FLAGS 13
#define PACKET_TRACK_DESCRIPTOR 60
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
/* TrackEvent */
#define EVENT_CATEGORY_IIDS 3
#define EVENT_DEBUG_ANNOTATIONS 4
#define EVENT_TYPE 9
#define EVENT_NAME_IID 10
#define EVENT_TRACK_UUID 11
#define EVENT_NAME 23
#define EVENT_FLOW_IDS 47 /* fixed64 */
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
/* DebugAnnotation */
#define ANN_NAME_IID 1
#define ANN_UINT 3
#define ANN_INT 4
#define ANN_DOUBLE 5
#define ANN_STRING 6
#define ANN_NAME 10
#define ANN_DICT_ENTRIES 11
#define ANN_ARRAY_VALUES 12
/* InternedData, and its EventCategory, EventName, DebugAnnotationName */
#define INTERNED_CATEGORIES 1
#define INTERNED_EVENT_NAMES 2
#define INTERNED_ANNOTATION_NAMES 3
#define INTERNED_IID 1
#define INTERNED_NAME 2
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define TRACK_UUID 1
#define TRACK_NAME 2
#define TRACK_PROCESS 3
#define TRACK_THREAD 4
#define TRACK_PARENT_UUID 5
#define TRACK_CHILD_ORDERING 11
#define TRACK_SIBLING_ORDER_RANK 12
#define CHILD_ORDERING_EXPLICIT 3
#define PROCESS_PID 1
#define THREAD_PID 1
#define THREAD_TID 2
#define THREAD_NAME 5

#define SEQUENCE_ID 1

/* Interned categories (iids from 1), in the order of category_names. */
enum { CAT_KERNEL = 1, CAT_MEMCPY, CAT_MEMSET, CAT_RUNTIME, CAT_CPU_OP };

/* Interned arg names (iids from 1), in the order of arg_names: the Chrome trace's keys. */
enum {
    ARG_EXTERNAL = 1,
    ARG_QUEUED,
    ARG_DEVICE,
    ARG_CONTEXT,
    ARG_STREAM,
    ARG_CORRELATION,
    ARG_REGISTERS,
    ARG_SHARED_MEMORY,
    ARG_BLOCKS_PER_SM,
    ARG_WARPS_PER_SM,
    ARG_GRID,
    ARG_BLOCK,
    ARG_OCCUPANCY,
    ARG_BYTES,
    ARG_BANDWIDTH,
    ARG_CBID,
    ARG_SEQUENCE,
    ARG_FWD_THREAD,
    ARG_END
};
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
};

/* Interned event names: the copies by direction (iid 1 + direction, as dt_memcpy_name
 * names them), the memset, then the names the events use (from NAME_IID_BASE). */
#define COPY_DIRECTIONS 5 /* DEVTRACE_COPY_UNKNOWN .. DEVTRACE_COPY_HTOH */
#define MEMSET_NAME_IID (1 + COPY_DIRECTIONS)
#define NAME_IID_BASE (MEMSET_NAME_IID + 1)
#define NAMES_PER_PACKET 1024

/* Track uuids: the devtrace track; each lane finalise named, by its place in s->lanes;
 * each device and process, by the place of its first lane. Lanes past those (and their
 * devices or processes when no named lane has them) get a hashed uuid with the top bit
 * set, and their descriptors are written in each piece that uses them. */
#define DEVTRACE_TRACK_UUID 1
#define LANE_UUID_BASE 16
#define GROUP_UUID_BASE (LANE_UUID_BASE + DT_MAX_LANES)
#define OVERLAP_UUID_BASE (GROUP_UUID_BASE + DT_MAX_LANES) /* + lane * NEST_LEVELS + level */
#define HASHED_UUID_BIT (1ull << 63)

/* Flow pairs: each device event of a pair by correlation, so that its runtime call can
 * name every one (a correlation may have several device events). */
typedef struct flow_slot {
    uint64_t correlation; /* 0: empty (0 is never a correlation) */
    size_t first;         /* the first device event's place in s->sorted */
    uint32_t more;        /* further ones: an index into flow_map.more, 0: none */
} flow_slot;

typedef struct flow_more {
    size_t index;
    uint32_t next;
} flow_more;

typedef struct flow_map {
    flow_slot *slots; /* owned */
    size_t mask, used;
    flow_more *more; /* owned; [0] unused */
    size_t nmore, more_cap;
} flow_map;

/* What every writer of one trace shares, read-only once made. */
typedef struct trace_facts {
    dt_session *s;
    flow_map flows;
    uint32_t *name_iids; /* owned: by name id, the name's iid (0: no event uses it) */
    uint32_t *names;     /* owned: the name ids the events use, in the order of first use */
    uint32_t nnames;
    uint32_t ninterned;   /* the session's names: an id past them stands for id 0 */
    uint8_t *levels;      /* owned: by place in s->sorted, the event's nesting level (below) */
    uint8_t *lane_levels; /* owned: by named lane, the deepest level its events use */
    uint64_t over_nested; /* events past the last level (left on it, nested wrongly) */
} trace_facts;

/* A lane's place in s->lanes, cached: the lane, whether host, the place (NOT_NAMED for a
 * lane past the named ones) and the piece whose descriptors it was last written in. */
typedef struct lane_memo {
    uint64_t key;
    size_t index;
    size_t piece;
    int host, used;
} lane_memo;

#define LANE_MEMO_SLOTS 64
#define NOT_NAMED SIZE_MAX

/* One writer's state: each thread formatting pieces has its own. */
typedef struct writer {
    const trace_facts *t; /* borrowed */
    dt_session *s;
    dt_jsonw w;
    size_t piece; /* the piece being made */
    lane_memo lanes[LANE_MEMO_SLOTS];
    dt_occ_memo occ[DT_OCC_MEMO_SLOTS];
} writer;

static int is_device_kind(int kind)
{
    return kind == DEVTRACE_KIND_KERNEL || kind == DEVTRACE_KIND_MEMCPY || kind == DEVTRACE_KIND_MEMSET;
}

/* ------------------------------------------------------------------ flows */

static size_t flow_slot_of(const flow_map *m, uint64_t correlation)
{
    /* Correlations run in sequence: runs of 64 share a window of slots (drain.c does the same). */
    uint64_t run = (correlation >> 6) * 0x9E3779B97F4A7C15ull;
    return (size_t)(((run >> 20) << 6) | (correlation & 63)) & m->mask;
}

static flow_slot *flow_find(const flow_map *m, uint64_t correlation)
{
    for (size_t i = flow_slot_of(m, correlation);; i = (i + 1) & m->mask) {
        if (m->slots[i].correlation == correlation)
            return &m->slots[i];
        if (m->slots[i].correlation == 0)
            return NULL;
    }
}

/* Makes the map twice as big, or at first big enough for `expected` entries. */
static int flow_grow(flow_map *m, size_t expected)
{
    size_t n = m->slots ? 2 * (m->mask + 1) : 1024;
    while (!m->slots && n < expected + expected / 2)
        n <<= 1;
    flow_slot *old = m->slots;
    size_t old_n = old ? m->mask + 1 : 0;
    m->slots = calloc(n, sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return -1;
    }
    m->mask = n - 1;
    for (size_t i = 0; i < old_n; i++) {
        if (!old[i].correlation)
            continue;
        size_t j = flow_slot_of(m, old[i].correlation);
        while (m->slots[j].correlation)
            j = (j + 1) & m->mask;
        m->slots[j] = old[i];
    }
    free(old);
    return 0;
}

static int flow_add(flow_map *m, uint64_t correlation, size_t index)
{
    if (3 * (m->used + 1) > 2 * (m->mask + 1) && flow_grow(m, 0) != 0) /* at most 2/3 full */
        return -1;
    size_t i = flow_slot_of(m, correlation);
    while (m->slots[i].correlation && m->slots[i].correlation != correlation)
        i = (i + 1) & m->mask;
    flow_slot *slot = &m->slots[i];
    if (!slot->correlation) {
        *slot = (flow_slot){correlation, index, 0};
        m->used++;
        return 0;
    }
    if (m->nmore + 1 >= m->more_cap) {
        size_t cap = m->more_cap ? 2 * m->more_cap : 64;
        flow_more *grown = realloc(m->more, cap * sizeof *grown);
        if (!grown)
            return -1;
        m->more = grown;
        m->more_cap = cap;
    }
    if (!m->nmore)
        m->nmore = 1; /* 0 means none */
    m->more[m->nmore] = (flow_more){index, slot->more};
    slot->more = (uint32_t)m->nmore++;
    return 0;
}

static void flow_map_free(flow_map *m)
{
    free(m->slots);
    free(m->more);
    memset(m, 0, sizeof *m);
}

/* The first place in s->lanes[lo, hi) whose key is >= key. */
static size_t lane_lower_bound(const dt_session *s, size_t lo, size_t hi, uint64_t key)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->lanes[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ev's lane's place in s->lanes, or NOT_NAMED (memo: LANE_MEMO_SLOTS slots); *m is the
 * memo's slot for it. */
static size_t lane_index(lane_memo *memo, const dt_session *s, const devtrace_event *ev, lane_memo **m)
{
    uint64_t key = dt_lane_key(ev);
    int host = dt_lane_is_host(ev);
    *m = &memo[(key * 0x9E3779B97F4A7C15ull + (uint64_t)host) >> 58];
    if ((*m)->used && (*m)->key == key && (*m)->host == host)
        return (*m)->index;
    size_t lo = host ? s->ndevice_lanes : 0, hi = host ? s->nlanes : s->ndevice_lanes;
    size_t at = lane_lower_bound(s, lo, hi, key);
    **m = (lane_memo){key, at < hi && s->lanes[at] == key ? at : NOT_NAMED, SIZE_MAX, host, 1};
    return (*m)->index;
}

/* Nesting. Perfetto pairs each END with the innermost slice open on its track, so slices
 * that overlap without nesting (a CPU op that starts inside a runtime call and outlasts
 * it, as two clocks may have it) would swap their ends. Each event of a named lane goes
 * on the first of its lane's levels where it nests: level 0 is the lane's own track,
 * level L its L-th "overlapping" track below it. */
#define NEST_LEVELS 8

#define PREFETCH_AHEAD 8 /* events read ahead of the one at hand */

typedef struct nest_stack {
    uint64_t *ends; /* owned: the ends of the slices open on the level, innermost last */
    uint32_t depth, cap;
} nest_stack;

/* The first level of stacks[0, NEST_LEVELS) where [start, end] nests, with it pushed;
 * NEST_LEVELS - 1 with *misnested set (pushed there, nested wrongly) when none; -1 when
 * out of memory. */
static int nest_level(nest_stack *stacks, uint64_t start, uint64_t end, int *misnested)
{
    for (int level = 0; level < NEST_LEVELS; level++) {
        nest_stack *st = &stacks[level];
        while (st->depth && st->ends[st->depth - 1] <= start)
            st->depth--;
        int nests = !st->depth || end <= st->ends[st->depth - 1];
        if (!nests && level + 1 < NEST_LEVELS)
            continue;
        *misnested = !nests;
        if (st->depth == st->cap) {
            uint32_t cap = st->cap ? 2 * st->cap : 8;
            uint64_t *grown = realloc(st->ends, cap * sizeof *grown);
            if (!grown)
                return -1;
            st->ends = grown;
            st->cap = cap;
        }
        st->ends[st->depth++] = end;
        return level;
    }
    return -1; /* not reached */
}

static void trace_facts_free(trace_facts *t)
{
    flow_map_free(&t->flows);
    free(t->name_iids);
    free(t->names);
    free(t->levels);
    free(t->lane_levels);
    memset(t, 0, sizeof *t);
}

/* The names' iids, each event's nesting level, and the device halves of the flow pairs,
 * by correlation: one pass over the events. */
static int trace_facts_init(trace_facts *t, dt_session *s)
{
    memset(t, 0, sizeof *t);
    t->s = s;
    uint32_t n = t->ninterned = dt_intern_count(&s->names);
    t->name_iids = calloc(n ? n : 1, sizeof *t->name_iids);
    t->names = malloc((n ? n : 1) * sizeof *t->names);
    t->levels = calloc(s->nsorted ? s->nsorted : 1, 1);
    t->lane_levels = calloc(s->nlanes ? s->nlanes : 1, 1);
    nest_stack *stacks = calloc((s->nlanes ? s->nlanes : 1) * NEST_LEVELS, sizeof *stacks);
    lane_memo *memo = calloc(LANE_MEMO_SLOTS, sizeof *memo);
    int rc = -1;
    const uint64_t *kinds = s->stats.events; /* the device events: each may be a flow's half */
    size_t device_events =
        (size_t)(kinds[DEVTRACE_KIND_KERNEL] + kinds[DEVTRACE_KIND_MEMCPY] + kinds[DEVTRACE_KIND_MEMSET]);
    if (!t->name_iids || !t->names || !t->levels || !t->lane_levels || !stacks || !memo ||
        flow_grow(&t->flows, device_events) != 0)
        goto end;
    for (size_t i = 0; i < s->nsorted; i++) {
        const devtrace_event *ev = s->sorted[i];
        if (i + PREFETCH_AHEAD < s->nsorted) /* the events lie scattered in the store's chunks */
            __builtin_prefetch(s->sorted[i + PREFETCH_AHEAD]);
        uint32_t id = ev->name_id < n ? ev->name_id : 0;
        if (ev->kind != DEVTRACE_KIND_MEMCPY && ev->kind != DEVTRACE_KIND_MEMSET && !t->name_iids[id]) {
            t->name_iids[id] = NAME_IID_BASE + t->nnames;
            t->names[t->nnames++] = id;
        }
        if ((ev->flags & DT_EVENT_FLOW) && is_device_kind(ev->kind) && flow_add(&t->flows, ev->correlation, i) != 0)
            goto end;
        lane_memo *m;
        size_t lane = lane_index(memo, s, ev, &m);
        if (lane == NOT_NAMED)
            continue;
        int misnested;
        int level = nest_level(&stacks[lane * NEST_LEVELS], ev->start_ns, ev->end_ns, &misnested);
        if (level < 0)
            goto end;
        t->over_nested += (uint64_t)misnested;
        t->levels[i] = (uint8_t)level;
        if (level > t->lane_levels[lane])
            t->lane_levels[lane] = (uint8_t)level;
    }
    rc = 0;
    if (t->over_nested)
        dt_add_note(s,
                    "the Perfetto trace: %llu events overlap more than %d others on their lane without nesting; "
                    "they are on its last overlapping track, where Perfetto ends them wrongly",
                    (unsigned long long)t->over_nested, NEST_LEVELS - 1);
end:
    for (size_t i = 0; stacks && i < s->nlanes * NEST_LEVELS; i++)
        free(stacks[i].ends);
    free(stacks);
    free(memo);
    if (rc)
        trace_facts_free(t);
    return rc;
}

/* ------------------------------------------------------------------ tracks */

static uint64_t hashed_uuid(uint64_t key, uint64_t tag)
{
    uint64_t x = key ^ tag; /* splitmix64's finaliser: a bijection */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (x ^ (x >> 31)) | HASHED_UUID_BIT;
}

static char *put_string(char *p, uint32_t field, const char *text)
{
    return dt_pb_bytes(p, field, text, strlen(text));
}

/* A packet's key and the sequence it is on; *len_at for closing it. */
static char *packet_open(char *p, char **len_at)
{
    return dt_pb_open(p, TRACE_PACKET, len_at);
}

static char *packet_close(char *len_at, char *p, uint32_t sequence_flags)
{
    p = dt_pb_uint(p, PACKET_SEQUENCE_ID, SEQUENCE_ID);
    if (sequence_flags)
        p = dt_pb_uint(p, PACKET_SEQUENCE_FLAGS, sequence_flags);
    return dt_pb_close(len_at, p);
}

/* A device's track ("GPU 0", its streams below it in order) or a host process's. */
static char *put_group_descriptor(char *p, uint64_t uuid, int host, uint32_t id)
{
    char *packet, *track, *process;
    p = packet_open(p, &packet);
    p = dt_pb_open(p, PACKET_TRACK_DESCRIPTOR, &track);
    p = dt_pb_uint(p, TRACK_UUID, uuid);
    if (host) {
        p = dt_pb_open(p, TRACK_PROCESS, &process);
        p = dt_pb_int(p, PROCESS_PID, (int32_t)id);
        p = dt_pb_close(process, p);
    } else {
        char name[32];
        snprintf(name, sizeof name, "GPU %u", id);
        p = put_string(p, TRACK_NAME, name);
        p = dt_pb_uint(p, TRACK_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
    }
    p = dt_pb_close(track, p);
    return packet_close(packet, p, 0);
}

/* A stream's track ("stream 7", rank: its place among the device's streams) or a host
 * thread's ("thread 200", with its pid and tid); for a level past 0, the lane's
 * overlapping track of that level, below the lane's own (parent). */
static char *put_lane_descriptor(char *p, uint64_t uuid, uint64_t parent, int host, uint64_t key, int32_t rank,
                                 int level)
{
    uint32_t id = (uint32_t)(key >> 32), sub = (uint32_t)key;
    char *packet, *track, *thread, name[64];
    p = packet_open(p, &packet);
    p = dt_pb_open(p, PACKET_TRACK_DESCRIPTOR, &track);
    p = dt_pb_uint(p, TRACK_UUID, uuid);
    p = dt_pb_uint(p, TRACK_PARENT_UUID, parent);
    if (level) {
        snprintf(name, sizeof name, "%s %u (overlapping %d)", host ? "thread" : "stream", sub, level);
        p = put_string(p, TRACK_NAME, name);
        p = dt_pb_int(p, TRACK_SIBLING_ORDER_RANK, level);
    } else if (host) {
        snprintf(name, sizeof name, "thread %u", sub);
        p = dt_pb_open(p, TRACK_THREAD, &thread);
        p = dt_pb_int(p, THREAD_PID, (int32_t)id);
        p = dt_pb_int(p, THREAD_TID, (int64_t)sub);
        p = put_string(p, THREAD_NAME, name);
        p = dt_pb_close(thread, p);
    } else {
        snprintf(name, sizeof name, "stream %u", sub);
        p = put_string(p, TRACK_NAME, name);
        p = dt_pb_int(p, TRACK_SIBLING_ORDER_RANK, rank);
    }
    p = dt_pb_close(track, p);
    return packet_close(packet, p, 0);
}

#define DESCRIPTOR_MAX 128 /* bytes a group or lane descriptor takes at most */

/* The descriptors of a lane past the named ones (and of its device or process when that
 * has no named lane) at *pp. */
static void describe_unnamed_lane(writer *wr, char **pp, uint64_t key, int host, uint64_t uuid)
{
    const dt_session *s = wr->s;
    size_t lo = host ? s->ndevice_lanes : 0, hi = host ? s->nlanes : s->ndevice_lanes;
    uint32_t id = (uint32_t)(key >> 32);
    size_t first = lane_lower_bound(s, lo, hi, (uint64_t)id << 32);
    uint64_t group;
    if (first < hi && (uint32_t)(s->lanes[first] >> 32) == id) {
        group = GROUP_UUID_BASE + first;
    } else {
        group = hashed_uuid(id, host ? 3 : 2);
        *pp = put_group_descriptor(*pp, group, host, id);
    }
    *pp = put_lane_descriptor(*pp, uuid, group, host, key, (int32_t)(uint32_t)key, 0);
}

/* The uuid of the track of the sorted event at index, writing at *pp the descriptors a
 * lane past the named ones needs the first time this piece meets it. Room: 2 * DESCRIPTOR_MAX. */
static uint64_t track_of(writer *wr, char **pp, const devtrace_event *ev, size_t index)
{
    lane_memo *m;
    size_t lane = lane_index(wr->lanes, wr->s, ev, &m);
    if (lane != NOT_NAMED) {
        uint8_t level = wr->t->levels[index];
        return level ? OVERLAP_UUID_BASE + lane * NEST_LEVELS + level : LANE_UUID_BASE + lane;
    }
    uint64_t uuid = hashed_uuid(m->key, m->host ? 1 : 0);
    if (m->piece != wr->piece) {
        describe_unnamed_lane(wr, pp, m->key, m->host, uuid);
        m->piece = wr->piece;
    }
    return uuid;
}

/* ------------------------------------------------------------------ events */

/* A debug annotation with an interned name and an unsigned value (all under 128 bytes). */
static char *put_arg_uint(char *p, uint32_t name_iid, uint64_t v)
{
    *p++ = (char)(EVENT_DEBUG_ANNOTATIONS << 3 | DT_PB_LEN);
    char *len_at = p++;
    p = dt_pb_uint(p, ANN_NAME_IID, name_iid);
    p = dt_pb_uint(p, ANN_UINT, v);
    *len_at = (char)(p - len_at - 1);
    return p;
}

/* A debug annotation with an interned name and a signed value. */
static char *put_arg_int(char *p, uint32_t name_iid, int64_t v)
{
    *p++ = (char)(EVENT_DEBUG_ANNOTATIONS << 3 | DT_PB_LEN);
    char *len_at = p++;
    p = dt_pb_uint(p, ANN_NAME_IID, name_iid);
    p = dt_pb_int(p, ANN_INT, v);
    *len_at = (char)(p - len_at - 1);
    return p;
}

static char *put_arg_double(char *p, uint32_t name_iid, double v)
{
    *p++ = (char)(EVENT_DEBUG_ANNOTATIONS << 3 | DT_PB_LEN);
    char *len_at = p++;
    p = dt_pb_uint(p, ANN_NAME_IID, name_iid);
    p = dt_pb_double(p, ANN_DOUBLE, v);
    *len_at = (char)(p - len_at - 1);
    return p;
}

/* [x, y, z] as an array of ints, as the Chrome trace has it. */
static char *put_arg_dim3(char *p, uint32_t name_iid, const int32_t *d)
{
    *p++ = (char)(EVENT_DEBUG_ANNOTATIONS << 3 | DT_PB_LEN);
    char *len_at = p++;
    p = dt_pb_uint(p, ANN_NAME_IID, name_iid);
    for (int i = 0; i < 3; i++) {
        *p++ = (char)(ANN_ARRAY_VALUES << 3 | DT_PB_LEN);
        char *value = p++;
        p = dt_pb_int(p, ANN_INT, d[i]);
        *value = (char)(p - value - 1);
    }
    *len_at = (char)(p - len_at - 1);
    return p;
}

static char *put_external(char *p, const devtrace_event *ev)
{
    return ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL ? put_arg_uint(p, ARG_EXTERNAL, ev->external_id) : p;
}

static char *put_device_ids(char *p, const devtrace_event *ev)
{
    p = put_arg_uint(p, ARG_DEVICE, ev->device);
    p = put_arg_uint(p, ARG_CONTEXT, ev->context);
    p = put_arg_uint(p, ARG_STREAM, ev->stream);
    return put_arg_uint(p, ARG_CORRELATION, ev->correlation);
}

/* The kernel's args, in the Chrome trace's order. */
static char *put_kernel_args(writer *wr, char *p, const devtrace_event *ev)
{
    int filled;
    const dt_occ_memo *occ = dt_occ_memo_find(wr->occ, wr->s, ev, &filled);
    if (occ && !occ->has_occupancy)
        occ = NULL;
    p = put_external(p, ev);
    uint64_t q = (ev->flags & DEVTRACE_EVENT_HAS_QUEUED) && ev->u.kernel.queued_ns <= ev->start_ns
                     ? ev->start_ns - ev->u.kernel.queued_ns
                     : 0;
    p = put_arg_uint(p, ARG_QUEUED, q);
    p = put_device_ids(p, ev);
    if (ev->flags & DEVTRACE_EVENT_HAS_REGS)
        p = put_arg_uint(p, ARG_REGISTERS, ev->u.kernel.registers_per_thread);
    if (ev->flags & (DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED))
        p = put_arg_uint(p, ARG_SHARED_MEMORY, (uint64_t)ev->u.kernel.static_shared + ev->u.kernel.dynamic_shared);
    if (occ) {
        p = put_arg_double(p, ARG_BLOCKS_PER_SM, occ->occ.blocks_per_sm);
        p = put_arg_double(p, ARG_WARPS_PER_SM, occ->occ.warps_per_sm);
    }
    if (ev->flags & DEVTRACE_EVENT_HAS_LAUNCH) {
        p = put_arg_dim3(p, ARG_GRID, ev->u.kernel.grid);
        p = put_arg_dim3(p, ARG_BLOCK, ev->u.kernel.block);
    }
    if (occ)
        p = put_arg_uint(p, ARG_OCCUPANCY, occ->est_pct);
    return p;
}

static char *put_copy_or_set_args(char *p, const devtrace_event *ev)
{
    p = put_external(p, ev);
    p = put_device_ids(p, ev);
    uint64_t bytes = ev->kind == DEVTRACE_KIND_MEMCPY ? ev->u.memcpy.bytes : ev->u.memset.bytes;
    p = put_arg_uint(p, ARG_BYTES, bytes);
    uint64_t dur = ev->end_ns - ev->start_ns;
    return put_arg_double(p, ARG_BANDWIDTH, dur ? (double)bytes / (double)dur : 0.0);
}

static char *put_host_args(char *p, const devtrace_event *ev)
{
    if (ev->kind != DEVTRACE_KIND_RUNTIME) {
        p = put_arg_uint(p, ARG_EXTERNAL, ev->external_id); /* a CPU op's own id */
        if (ev->flags & DEVTRACE_EVENT_HAS_SEQUENCE) {      /* Kineto's keys, for autograd ops */
            p = put_arg_int(p, ARG_SEQUENCE, ev->u.cpu_op.sequence_nr);
            p = put_arg_uint(p, ARG_FWD_THREAD, ev->u.cpu_op.fwd_thread_id);
        }
        return p;
    }
    p = put_external(p, ev);
    if (ev->flags & DEVTRACE_EVENT_HAS_CBID)
        p = put_arg_uint(p, ARG_CBID, ev->u.runtime.cbid);
    return put_arg_uint(p, ARG_CORRELATION, ev->correlation);
}

/* The flow ids ev carries: its own for a device event, its device events' for a call. */
static const flow_slot *flow_partners(const writer *wr, const devtrace_event *ev, size_t *count)
{
    *count = 0;
    if (!(ev->flags & DT_EVENT_FLOW))
        return NULL;
    if (is_device_kind(ev->kind)) {
        *count = 1;
        return NULL;
    }
    const flow_map *m = &wr->t->flows;
    const flow_slot *slot = flow_find(m, ev->correlation);
    if (slot) {
        *count = 1;
        for (uint32_t i = slot->more; i; i = m->more[i].next)
            ++*count;
    }
    return slot;
}

static char *put_flows(const writer *wr, char *p, const flow_slot *partners, size_t own_index)
{
    if (!partners)
        return dt_pb_fixed64(p, EVENT_FLOW_IDS, (uint64_t)own_index + 1);
    const flow_map *m = &wr->t->flows;
    p = dt_pb_fixed64(p, EVENT_FLOW_IDS, (uint64_t)partners->first + 1);
    for (uint32_t i = partners->more; i; i = m->more[i].next)
        p = dt_pb_fixed64(p, EVENT_FLOW_IDS, (uint64_t)m->more[i].index + 1);
    return p;
}

static uint32_t name_iid(const writer *wr, const devtrace_event *ev)
{
    const trace_facts *t = wr->t;
    return t->name_iids[ev->name_id < t->ninterned ? ev->name_id : 0];
}

#define SLICE_MAX 1024 /* bytes an event's two packets take at most, beyond its flows */
#define FLOW_BYTES 11  /* one flow id */

/* The sorted event at index as a BEGIN and an END packet. */
static void write_event(writer *wr, size_t index)
{
    const devtrace_event *ev = wr->s->sorted[index];
    size_t nflows;
    const flow_slot *partners = flow_partners(wr, ev, &nflows);
    dt_jsonw *w = &wr->w;
    size_t need = SLICE_MAX + 2 * DESCRIPTOR_MAX + nflows * FLOW_BYTES;
    if (w->cap - w->len < need && dt_jsonw_reserve(w, need) != 0)
        return;
    char *p = w->buf + w->len;
    uint64_t track = track_of(wr, &p, ev, index);
    uint32_t category, name;
    switch (ev->kind) {
    case DEVTRACE_KIND_KERNEL:
        category = CAT_KERNEL, name = name_iid(wr, ev);
        break;
    case DEVTRACE_KIND_MEMCPY:
        category = CAT_MEMCPY;
        name = 1 + (ev->u.memcpy.direction < COPY_DIRECTIONS ? ev->u.memcpy.direction : DEVTRACE_COPY_UNKNOWN);
        break;
    case DEVTRACE_KIND_MEMSET:
        category = CAT_MEMSET, name = MEMSET_NAME_IID;
        break;
    default:
        category = ev->kind == DEVTRACE_KIND_RUNTIME ? CAT_RUNTIME : CAT_CPU_OP;
        name = name_iid(wr, ev);
        break;
    }
    char *packet, *event;
    p = packet_open(p, &packet);
    p = dt_pb_uint(p, PACKET_TIMESTAMP, ev->start_ns);
    p = dt_pb_open(p, PACKET_TRACK_EVENT, &event);
    p = dt_pb_uint(p, EVENT_TYPE, TYPE_SLICE_BEGIN);
    p = dt_pb_uint(p, EVENT_TRACK_UUID, track);
    p = dt_pb_uint(p, EVENT_CATEGORY_IIDS, category);
    p = dt_pb_uint(p, EVENT_NAME_IID, name);
    if (nflows)
        p = put_flows(wr, p, partners, index);
    if (ev->kind == DEVTRACE_KIND_KERNEL)
        p = put_kernel_args(wr, p, ev);
    else if (is_device_kind(ev->kind))
        p = put_copy_or_set_args(p, ev);
    else
        p = put_host_args(p, ev);
    p = dt_pb_close(event, p);
    p = packet_close(packet, p, SEQ_NEEDS_INCREMENTAL_STATE);

    p = packet_open(p, &packet);
    p = dt_pb_uint(p, PACKET_TIMESTAMP, ev->end_ns);
    p = dt_pb_open(p, PACKET_TRACK_EVENT, &event);
    p = dt_pb_uint(p, EVENT_TYPE, TYPE_SLICE_END);
    p = dt_pb_uint(p, EVENT_TRACK_UUID, track);
    p = dt_pb_close(event, p);
    p = packet_close(packet, p, 0);
    w->len = (size_t)(p - w->buf);
}

/* ------------------------------------------------------------------ the first packets */

/* text as valid UTF-8 (each byte that starts no valid sequence becomes U+FFFD, as the
 * Chrome trace writes it); room: 3 * n. */
static char *put_utf8(char *p, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        size_t len = dt_utf8_sequence(s + i, n - i);
        if (len) {
            memcpy(p, s + i, len);
            p += len, i += len;
        } else {
            p = DT_JSONW_PUT_LIT(p, "\xEF\xBF\xBD");
            i++;
        }
    }
    return p;
}

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
static void write_interned(writer *wr)
{
    static const char *const category_names[] = {NULL, "kernel", "gpu_memcpy", "gpu_memset", NULL, "cpu_op"};
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    size_t packet, data;
    if (interned_open(w, &packet, &data) != 0)
        return;
    for (uint32_t c = CAT_KERNEL; c <= CAT_CPU_OP; c++)
        put_interned(w, INTERNED_CATEGORIES, c, c == CAT_RUNTIME ? s->runtime_category : category_names[c]);
    for (uint32_t a = ARG_EXTERNAL; a < ARG_END; a++)
        put_interned(w, INTERNED_ANNOTATION_NAMES, a, arg_names[a]);
    for (uint32_t d = 0; d < COPY_DIRECTIONS; d++)
        put_interned(w, INTERNED_EVENT_NAMES, 1 + d, dt_memcpy_name(d));
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

/* The track descriptors: the devtrace track, then each named lane after its device's or
 * process's track (s->lanes is by device and stream, then by process and thread). */
static void write_descriptors(writer *wr)
{
    dt_jsonw *w = &wr->w;
    const dt_session *s = wr->s;
    if (dt_jsonw_reserve(w, DESCRIPTOR_MAX) != 0)
        return;
    char *p = w->buf + w->len, *packet, *track;
    p = packet_open(p, &packet);
    p = dt_pb_open(p, PACKET_TRACK_DESCRIPTOR, &track);
    p = dt_pb_uint(p, TRACK_UUID, DEVTRACE_TRACK_UUID);
    p = put_string(p, TRACK_NAME, "devtrace");
    p = dt_pb_close(track, p);
    w->len = (size_t)(packet_close(packet, p, 0) - w->buf);
    size_t group_first = 0;
    for (size_t i = 0; i < s->nlanes; i++) {
        if (w->cap - w->len < 2 * DESCRIPTOR_MAX && dt_jsonw_reserve(w, 2 * DESCRIPTOR_MAX) != 0)
            return;
        p = w->buf + w->len;
        int host = i >= s->ndevice_lanes;
        uint32_t id = (uint32_t)(s->lanes[i] >> 32);
        if (i == 0 || i == s->ndevice_lanes || id != (uint32_t)(s->lanes[i - 1] >> 32)) {
            group_first = i;
            p = put_group_descriptor(p, GROUP_UUID_BASE + i, host, id);
        }
        p = put_lane_descriptor(p, LANE_UUID_BASE + i, GROUP_UUID_BASE + group_first, host, s->lanes[i],
                                (int32_t)(i - group_first), 0);
        for (int level = 1; level <= wr->t->lane_levels[i]; level++) {
            if (w->cap - (size_t)(p - w->buf) < 2 * DESCRIPTOR_MAX) {
                w->len = (size_t)(p - w->buf);
                if (dt_jsonw_reserve(w, 2 * DESCRIPTOR_MAX) != 0)
                    return;
                p = w->buf + w->len;
            }
            p = put_lane_descriptor(p, OVERLAP_UUID_BASE + i * NEST_LEVELS + (size_t)level, LANE_UUID_BASE + i, host,
                                    s->lanes[i], 0, level);
        }
        w->len = (size_t)(p - w->buf);
    }
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

/* What the Chrome trace's top-level keys say (devtrace, deviceProperties, distributedInfo)
 * as the args of an instant "devtrace" at the start of the capture window. */
static void write_capture_facts(writer *wr)
{
    dt_jsonw *w = &wr->w;
    const dt_session *s = wr->s;
    const devtrace_stats *st = &s->stats;
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
    p = put_kind_counts(p, "counts", st->events);
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "dropped", &dict);
    p = put_named_uint(p, ANN_DICT_ENTRIES, "store_full", st->dropped_store_full);
    p = put_named_uint(p, ANN_DICT_ENTRIES, "pool_full", st->dropped_pool_full);
    p = put_named_uint(p, ANN_DICT_ENTRIES, "vendor", st->dropped_vendor);
    p = dt_pb_close(dict, p);
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "malformed", &dict);
    p = put_named_uint(p, ANN_DICT_ENTRIES, "records", st->malformed_records);
    p = put_named_uint(p, ANN_DICT_ENTRIES, "bytes", st->malformed_bytes);
    p = dt_pb_close(dict, p);
    p = put_kind_counts(p, "out_of_window", st->out_of_window);
    p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "zero_timestamp", st->zero_timestamp);
    p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "refused_buffers", st->refused_buffers);
    p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "unpaired_flows", st->unpaired_flows);
    p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "unresolved_names", st->unresolved_names);
    p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "bad_timestamps", st->bad_timestamps);
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "lost", &dict);
    p = put_named_uint(p, ANN_DICT_ENTRIES, "device_pending", s->lost_device_pending);
    p = dt_pb_close(dict, p);
    p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "events_missing", s->events_missing != 0);
    char *value;
    int list_processes = dt_trace_lists_processes(s->nprocesses, s->forked_untraced);
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
        p = dt_pb_close(entry, p);
    }
    if (list_processes) {
        p = dt_pb_close(dict, p);
        p = put_named_uint(p, EVENT_DEBUG_ANNOTATIONS, "forked_untraced", s->forked_untraced);
    }
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
    p = put_device_properties(p, s);
    p = put_named_open(p, EVENT_DEBUG_ANNOTATIONS, "distributedInfo", &dict);
    p = put_named_int(p, ANN_DICT_ENTRIES, "rank", s->rank);
    p = put_named_int(p, ANN_DICT_ENTRIES, "world_size", s->world_size);
    p = dt_pb_close(dict, p);
    p = dt_pb_close(event, p);
    w->len = (size_t)(packet_close(packet, p, 0) - w->buf);
}

/* The instant "Record Window End" at the end of the capture window, as the Chrome trace has. */
static void write_tail(writer *wr)
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

/* ------------------------------------------------------------------ pieces and files */

/* Pieces as the Chrome trace has them: the first packets, the events PIECE_EVENTS at a
 * time, the tail. */
#define PIECE_EVENTS 1024

static size_t trace_pieces(const dt_session *s)
{
    return 2 + (s->nsorted + PIECE_EVENTS - 1) / PIECE_EVENTS;
}

static void writer_init(writer *wr, const trace_facts *t)
{
    memset(wr, 0, sizeof *wr);
    wr->t = t;
    wr->s = t->s;
}

static void make_piece(void *worker, size_t index, dt_jsonw *out)
{
    writer *wr = worker;
    size_t nsorted = wr->s->nsorted;
    wr->w = *out; /* the piece's buffer, lent for the piece */
    wr->piece = index;
    if (index == 0) {
        write_interned(wr);
        write_descriptors(wr);
        write_capture_facts(wr);
    } else if (index + 1 == trace_pieces(wr->s)) {
        write_tail(wr);
    } else {
        size_t first = (index - 1) * PIECE_EVENTS,
               end = nsorted - first < PIECE_EVENTS ? nsorted : first + PIECE_EVENTS;
        for (size_t i = first; i < end && !wr->w.failed; i++) {
            if (i + PREFETCH_AHEAD < nsorted)
                __builtin_prefetch(wr->s->sorted[i + PREFETCH_AHEAD]);
            write_event(wr, i);
        }
    }
    *out = wr->w;
    memset(&wr->w, 0, sizeof wr->w);
}

/* Every piece in order into w by this thread, each flushed to w's file or gzip stream
 * (when it has one) once made: 0 or an errno value. */
static int write_serial(const trace_facts *t, dt_jsonw *w)
{
    writer *wr = malloc(sizeof *wr);
    if (!wr)
        return ENOMEM;
    writer_init(wr, t);
    size_t n = trace_pieces(t->s);
    for (size_t i = 0; i < n && !w->failed; i++) {
        make_piece(wr, i, w);
        dt_jsonw_flush(w);
    }
    free(wr);
    return w->failed ? (w->err ? w->err : ENOMEM) : 0;
}

/* The pieces by the pipeline with `workers` threads: 0, an errno value, or -1 when no
 * thread could be started (nothing written). */
static int write_pieces(const trace_facts *t, FILE *f, int gzip_level, unsigned workers)
{
    writer *wrs = calloc(workers, sizeof *wrs);
    void **states = calloc(workers, sizeof *states);
    int rc = ENOMEM;
    if (wrs && states) {
        for (unsigned i = 0; i < workers; i++) {
            writer_init(&wrs[i], t);
            states[i] = &wrs[i];
        }
        dt_pipeline p = {
            .fd = fileno(f),
            .gzip_level = gzip_level,
            .npieces = trace_pieces(t->s),
            .make = make_piece,
            .workers = states,
            .nworkers = workers,
        };
        rc = dt_pipeline_write(&p);
    }
    free(states);
    free(wrs);
    return rc;
}

/* The Perfetto trace into f (dt_trace_body_fn). */
static int write_perfetto_body(dt_session *s, FILE *f, const char *path, const char *tmp, unsigned workers,
                               devtrace_error *err)
{
    int level = dt_trace_gzip_level(s, path);
    trace_facts t;
    if (trace_facts_init(&t, s) != 0)
        return dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
    int failed = workers ? write_pieces(&t, f, level, workers) : -1;
    if (failed == -1) { /* serial, asked for or for want of a thread */
        dt_jsonw w;
        gzFile gz = level >= 0 ? dt_gzip_open(f, level) : NULL;
        if (level >= 0 && !gz) {
            trace_facts_free(&t);
            return dt_error_set(err, DEVTRACE_ENOMEM, "cannot start gzip compression");
        }
        failed = dt_jsonw_init(&w, 1 << 20) != 0 ? ENOMEM : 0;
        if (!failed) {
            w.file = gz ? NULL : f;
            w.gz = gz;
            failed = write_serial(&t, &w);
        }
        if (gz && gzclose(gz) != Z_OK && !failed)
            failed = errno ? errno : EIO;
        dt_jsonw_free(&w);
    }
    trace_facts_free(&t);
    if (failed)
        return dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(failed));
    return 0;
}

int dt_perfetto_write_file(dt_session *s, const char *path, unsigned workers, devtrace_error *err)
{
    return dt_trace_file_write(s, path, workers, write_perfetto_body, err);
}

int dt_perfetto_write_buffer(dt_session *s, char **out, size_t *outlen)
{
    if (dt_session_finalize(s) != 0)
        return DEVTRACE_ESTATE;
    trace_facts t;
    dt_jsonw w;
    if (trace_facts_init(&t, s) != 0)
        return DEVTRACE_ENOMEM;
    int rc = dt_jsonw_init(&w, 1 << 16) != 0 || write_serial(&t, &w) != 0 ? DEVTRACE_ENOMEM : 0;
    trace_facts_free(&t);
    if (rc) {
        dt_jsonw_free(&w);
        return rc;
    }
    *out = w.buf;
    *outlen = w.len;
    return 0;
}

int devtrace_write_perfetto(devtrace_session *s, const char *path, devtrace_error *err)
{
    return dt_perfetto_write_file(s, path, DT_WRITE_THREADS_AUTO, err);
}
