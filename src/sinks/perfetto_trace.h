/* perfetto_trace.h: what the Perfetto sink's files share: Perfetto's field numbers, the
 * iids and track uuids devtrace gives, the facts every writer of one trace reads (the
 * names' iids, each event's nesting level, the flow pairs) and one writer's state; and the
 * small helpers every packet uses. perfetto.c writes the events and the files,
 * perfetto_facts.c makes the facts in one pass over the events, perfetto_tracks.c the
 * track descriptors and uuids, perfetto_capture.c the first packets (interned names, the
 * capture's facts) and the tail. docs/trace-format.md, "Perfetto", describes the output. */
#ifndef DT_PERFETTO_TRACE_H
#define DT_PERFETTO_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/session.h"
#include "jsonw.h"
#include "occupancy_memo.h"
#include "protow.h"

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
#define EVENT_COUNTER_VALUE 30
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
#define TYPE_COUNTER 4
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
#define TRACK_COUNTER 8
#define TRACK_CHILD_ORDERING 11
#define TRACK_SIBLING_ORDER_RANK 12
#define CHILD_ORDERING_EXPLICIT 3
/* CounterDescriptor */
#define COUNTER_UNIT 3
#define COUNTER_UNIT_SIZE_BYTES 3
#define PROCESS_PID 1
#define PROCESS_NAME 6
#define PROCESS_LABELS 8
#define THREAD_PID 1
#define THREAD_TID 2
#define THREAD_NAME 5

#define SEQUENCE_ID 1

/* Interned categories (iids from 1), in the order of category_names. */
enum { CAT_KERNEL = 1, CAT_MEMCPY, CAT_MEMSET, CAT_RUNTIME, CAT_CPU_OP, CAT_USER_ANNOTATION, CAT_GPU_USER_ANNOTATION };

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
    ARG_MARKER_ID,
    ARG_DOMAIN,
    ARG_MARK,
    ARG_USER_EXTERNAL,
    ARG_END
};
/* Interned event names: the copies by direction (iid 1 + direction, as devtrace_memcpy_name
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
    flow_slot *slots; /* in slots_mem */
    dt_bigmem slots_mem;
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
    uint32_t ninterned; /* the session's names: an id past them stands for id 0 */
    uint8_t *levels;    /* in levels_mem: by place in s->sorted, the event's nesting level (below) */
    dt_bigmem levels_mem;
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
    lane_memo counters[LANE_MEMO_SLOTS]; /* the memory counter tracks described in the piece */
    dt_occ_memo occ[DT_OCC_MEMO_SLOTS];
} writer;

/* Nesting. Perfetto pairs each END with the innermost slice open on its track, so slices
 * that overlap without nesting (a CPU op that starts inside a runtime call and outlasts
 * it, as two clocks may have it) would swap their ends. Each event of a named lane goes
 * on the first of its lane's levels where it nests: level 0 is the lane's own track,
 * level L its L-th "overlapping" track below it. */
#define NEST_LEVELS 8

#define PREFETCH_AHEAD 8 /* events read ahead of the one at hand */

#define DESCRIPTOR_MAX 192 /* bytes a group or lane descriptor takes at most */

static inline int is_device_kind(int kind)
{
    return kind == DEVTRACE_KIND_KERNEL || kind == DEVTRACE_KIND_MEMCPY || kind == DEVTRACE_KIND_MEMSET;
}

/* ---- flows: the device halves of the flow pairs, by correlation (perfetto_facts.c) ---- */

static inline size_t flow_slot_of(const flow_map *m, uint64_t correlation)
{
    /* Correlations run in sequence: runs of 64 share a window of slots (drain.c does the same). */
    uint64_t run = (correlation >> 6) * 0x9E3779B97F4A7C15ull;
    return (size_t)(((run >> 20) << 6) | (correlation & 63)) & m->mask;
}

static inline flow_slot *flow_find(const flow_map *m, uint64_t correlation)
{
    for (size_t i = flow_slot_of(m, correlation);; i = (i + 1) & m->mask) {
        if (m->slots[i].correlation == correlation)
            return &m->slots[i];
        if (m->slots[i].correlation == 0)
            return NULL;
    }
}

/* Fills the names' iids, each event's nesting level and the flow pairs from s's sorted
 * events: 0, or -1 out of memory (t then holds nothing). */
int dt_pf_facts_init(trace_facts *t, dt_session *s);
void dt_pf_facts_free(trace_facts *t);

/* ---- lanes ---- */

/* The first place in s->lanes[lo, hi) whose key is >= key. */
static inline size_t lane_lower_bound(const dt_session *s, size_t lo, size_t hi, uint64_t key)
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
static inline size_t lane_index(lane_memo *memo, const dt_session *s, const devtrace_event *ev, lane_memo **m)
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

/* ---- packets ---- */

static inline char *put_string(char *p, uint32_t field, const char *text)
{
    return dt_pb_bytes(p, field, text, strlen(text));
}

/* text as valid UTF-8 (each byte that starts no valid sequence becomes U+FFFD, as the
 * Chrome trace writes it); room: 3 * n. */
static inline char *put_utf8(char *p, const char *text, size_t n)
{
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        size_t len = dt_utf8_sequence(u + i, n - i);
        if (len) {
            memcpy(p, u + i, len);
            p += len, i += len;
        } else {
            p = DT_JSONW_PUT_LIT(p, "\xEF\xBF\xBD");
            i++;
        }
    }
    return p;
}

/* A packet's key and the sequence it is on; *len_at for closing it. */
static inline char *packet_open(char *p, char **len_at)
{
    return dt_pb_open(p, TRACE_PACKET, len_at);
}

static inline char *packet_close(char *len_at, char *p, uint32_t sequence_flags)
{
    p = dt_pb_uint(p, PACKET_SEQUENCE_ID, SEQUENCE_ID);
    if (sequence_flags)
        p = dt_pb_uint(p, PACKET_SEQUENCE_FLAGS, sequence_flags);
    return dt_pb_close(len_at, p);
}

/* ---- tracks (perfetto_tracks.c) ---- */

/* The uuid of the track of the sorted event at index, writing at *pp the descriptors a
 * lane past the named ones needs the first time this piece meets it. Room: 2 * DESCRIPTOR_MAX. */
uint64_t dt_pf_track_of(writer *wr, char **pp, const devtrace_event *ev, size_t index);
/* The track descriptors: the devtrace track, then each named lane after its device's or
 * process's track, and the lane's overlapping tracks. */
void dt_pf_write_descriptors(writer *wr);
/* The uuid of the counter track of a memory event's process and device (the running total
 * of its allocations there, in bytes, below the process's track), writing at *pp its
 * descriptors the first time this piece meets it. Room: 2 * DESCRIPTOR_MAX. */
uint64_t dt_pf_memory_track_of(writer *wr, char **pp, const devtrace_event *ev);

/* ---- the first packets and the tail (perfetto_capture.c) ---- */

/* Every name the events use, the categories and the args' names, interned; the first
 * packet clears the sequence's state. */
void dt_pf_write_interned(writer *wr);
/* The capture's facts (the Chrome trace's top-level keys) as an instant "devtrace". */
void dt_pf_write_capture_facts(writer *wr);
/* The instant "Record Window End". */
void dt_pf_write_tail(writer *wr);

#endif /* DT_PERFETTO_TRACE_H */
