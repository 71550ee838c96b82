/* perfetto_tracks.c: the Perfetto trace's tracks: a track per device ("GPU 0") with a
 * child per stream, a process track per host process with a thread track per thread and a
 * counter track per device whose memory it allocates, a lane's overlapping tracks below
 * it, and the "devtrace" track; in a trace of several processes the tracks are named as
 * the JSON names its lanes. Named lanes get fixed
 * uuids and their descriptors in the first piece; a lane past the named ones gets a
 * hashed uuid and its descriptors in each piece that uses it. */
#include <stdio.h>

#include "perfetto_trace.h"
#include "sinks.h"

static uint64_t hashed_uuid(uint64_t key, uint64_t tag)
{
    uint64_t x = key ^ tag; /* splitmix64's finaliser: a bijection */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (x ^ (x >> 31)) | HASHED_UUID_BIT;
}

/* A device's track ("GPU 0", its streams below it in order; "GPU 0 (pid P)" in a trace of
 * several processes) or a host process's (named after its program there, as the JSON does). */
static char *put_group_descriptor(char *p, const dt_session *s, uint64_t uuid, int host, uint32_t id)
{
    char *packet, *track, *process;
    p = packet_open(p, &packet);
    p = dt_pb_open(p, PACKET_TRACK_DESCRIPTOR, &track);
    p = dt_pb_uint(p, TRACK_UUID, uuid);
    if (host) {
        const dt_traced_process *traced = s->nprocesses > 1 ? dt_traced_process_of(s, id) : NULL;
        p = dt_pb_open(p, TRACK_PROCESS, &process);
        p = dt_pb_int(p, PROCESS_PID, (int32_t)id);
        if (traced) {
            char name[48], label[32];
            dt_program_name(traced->command, name, sizeof name);
            p = put_string(p, PROCESS_NAME, name);
            if (s->ranks_differ)
                snprintf(label, sizeof label, "pid %u, rank %d", traced->pid, (int)traced->rank);
            else
                snprintf(label, sizeof label, "pid %u", traced->pid);
            p = put_string(p, PROCESS_LABELS, label);
        }
        p = dt_pb_close(process, p);
    } else {
        char name[48];
        dt_device_lane_name(s, id, name, sizeof name);
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

/* The uuid of a device's or process's track: its first named lane's place, or a hashed
 * one, whose descriptor is then written at *pp. */
static uint64_t group_of(writer *wr, char **pp, int host, uint32_t id)
{
    const dt_session *s = wr->s;
    size_t lo = host ? s->ndevice_lanes : 0, hi = host ? s->nlanes : s->ndevice_lanes;
    size_t first = lane_lower_bound(s, lo, hi, (uint64_t)id << 32);
    if (first < hi && (uint32_t)(s->lanes[first] >> 32) == id)
        return GROUP_UUID_BASE + first;
    uint64_t group = hashed_uuid(id, host ? 3 : 2);
    *pp = put_group_descriptor(*pp, s, group, host, id);
    return group;
}

/* The descriptors of a lane past the named ones (and of its device or process when that
 * has no named lane) at *pp. */
static void describe_unnamed_lane(writer *wr, char **pp, uint64_t key, int host, uint64_t uuid)
{
    uint64_t group = group_of(wr, pp, host, (uint32_t)(key >> 32));
    *pp = put_lane_descriptor(*pp, uuid, group, host, key, (int32_t)(uint32_t)key, 0);
}

uint64_t dt_pf_memory_track_of(writer *wr, char **pp, const devtrace_event *ev)
{
    uint64_t key = (uint64_t)ev->device << 32 | ev->u.memory.device_id;
    uint64_t uuid = hashed_uuid(key, 4);
    lane_memo *m = &wr->counters[(key * 0x9E3779B97F4A7C15ull) >> 58];
    if (m->used && m->key == key && m->piece == wr->piece)
        return uuid;
    *m = (lane_memo){key, 0, wr->piece, 1, 1};
    uint64_t group = group_of(wr, pp, 1, ev->device);
    char *packet, *track, *counter, name[48];
    char *p = packet_open(*pp, &packet);
    p = dt_pb_open(p, PACKET_TRACK_DESCRIPTOR, &track);
    p = dt_pb_uint(p, TRACK_UUID, uuid);
    p = dt_pb_uint(p, TRACK_PARENT_UUID, group);
    snprintf(name, sizeof name, "GPU %u memory allocated", ev->u.memory.device_id);
    p = put_string(p, TRACK_NAME, name);
    p = dt_pb_open(p, TRACK_COUNTER, &counter);
    p = dt_pb_uint(p, COUNTER_UNIT, COUNTER_UNIT_SIZE_BYTES);
    p = dt_pb_close(counter, p);
    p = dt_pb_close(track, p);
    *pp = packet_close(packet, p, 0);
    return uuid;
}

uint64_t dt_pf_track_of(writer *wr, char **pp, const devtrace_event *ev, size_t index)
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

/* The track descriptors: the devtrace track, then each named lane after its device's or
 * process's track (s->lanes is by device and stream, then by process and thread). */
void dt_pf_write_descriptors(writer *wr)
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
            p = put_group_descriptor(p, s, GROUP_UUID_BASE + i, host, id);
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
