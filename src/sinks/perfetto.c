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
 * (name, category, args as debug annotations, flows) and an END packet at its end; markers
 * as user_annotation slices on their thread or gpu_user_annotation slices on their stream,
 * memory events as values of a counter track per process and device (bytes allocated). The
 * events are made in pieces of 1024 by the same pipeline as the Chrome trace, in parallel;
 * a piece refers only to what the first packets defined, so the bytes are the same for any
 * count of threads. Flows: each runtime call and device event of a flow pair carry the
 * pair's id in flow_ids (the device event's place in the trace, plus one; a call with
 * several device events carries one id for each). A name ending in ".gz" gives one gzip
 * stream of the same bytes (the pipeline's, as for the Chrome trace).
 *
 * This file writes the events and the files; perfetto_trace.h names the others. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/errors.h"
#include "core/session.h"
#include "jsonw.h"
#include "perfetto_trace.h"
#include "pipeline.h"
#include "sinks.h"

/* ------------------------------------------------------------------ events */

#define SLICE_MAX 1024 /* bytes an event's two packets take at most, beyond its flows (and a domain) */
#define FLOW_BYTES 11  /* one flow id */

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

/* The op link, and the user correlation beside it (the Chrome trace's keys). */
static char *put_external(char *p, const devtrace_event *ev)
{
    if (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL)
        p = put_arg_uint(p, ARG_EXTERNAL, ev->external_id);
    if (ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL)
        p = put_arg_uint(p, ARG_USER_EXTERNAL, ev->user_external_id);
    return p;
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

/* A marker's args, as the Chrome trace has them: its id, its domain (when not the default),
 * "mark": 1 for a mark (an instant). Room: SLICE_MAX + 3 * the domain's length. */
static char *put_marker_args(const writer *wr, char *p, const devtrace_event *ev)
{
    p = put_arg_uint(p, ARG_MARKER_ID, ev->u.marker.id);
    if (ev->u.marker.domain_id) {
        const char *domain = dt_intern_get(&wr->s->names, ev->u.marker.domain_id);
        char *ann, *text;
        p = dt_pb_open(p, EVENT_DEBUG_ANNOTATIONS, &ann);
        p = dt_pb_uint(p, ANN_NAME_IID, ARG_DOMAIN);
        p = dt_pb_open(p, ANN_STRING, &text);
        p = put_utf8(p, domain, strlen(domain));
        p = dt_pb_close(text, p);
        p = dt_pb_close(ann, p);
    }
    if (ev->u.marker.phase == DEVTRACE_MARKER_INSTANT)
        p = put_arg_uint(p, ARG_MARK, 1);
    return p;
}

/* A memory event as a value of its process's counter track for the device: the running
 * total allocated there after it (the Chrome trace's "Total Allocated"). */
static void write_memory_counter(writer *wr, const devtrace_event *ev)
{
    dt_jsonw *w = &wr->w;
    size_t need = SLICE_MAX + 2 * DESCRIPTOR_MAX;
    if (w->cap - w->len < need && dt_jsonw_reserve(w, need) != 0)
        return;
    char *p = w->buf + w->len, *packet, *event;
    uint64_t track = dt_pf_memory_track_of(wr, &p, ev);
    p = packet_open(p, &packet);
    p = dt_pb_uint(p, PACKET_TIMESTAMP, ev->start_ns);
    p = dt_pb_open(p, PACKET_TRACK_EVENT, &event);
    p = dt_pb_uint(p, EVENT_TYPE, TYPE_COUNTER);
    p = dt_pb_uint(p, EVENT_TRACK_UUID, track);
    p = dt_pb_int(p, EVENT_COUNTER_VALUE, ev->u.memory.total);
    p = dt_pb_close(event, p);
    p = packet_close(packet, p, 0);
    w->len = (size_t)(p - w->buf);
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

/* The interned name of ev's slice, and its category in *category. */
static uint32_t event_name_iid(const writer *wr, const devtrace_event *ev, uint32_t *category)
{
    switch (ev->kind) {
    case DEVTRACE_KIND_KERNEL:
        *category = CAT_KERNEL;
        return name_iid(wr, ev);
    case DEVTRACE_KIND_MEMCPY:
        *category = CAT_MEMCPY;
        return 1 + (ev->u.memcpy.direction < COPY_DIRECTIONS ? ev->u.memcpy.direction : DEVTRACE_COPY_UNKNOWN);
    case DEVTRACE_KIND_MEMSET:
        *category = CAT_MEMSET;
        return MEMSET_NAME_IID;
    case DEVTRACE_KIND_MARKER:
        *category = ev->u.marker.device ? CAT_GPU_USER_ANNOTATION : CAT_USER_ANNOTATION;
        return name_iid(wr, ev);
    default:
        *category = ev->kind == DEVTRACE_KIND_RUNTIME ? CAT_RUNTIME : CAT_CPU_OP;
        return name_iid(wr, ev);
    }
}

/* The sorted event at index as a BEGIN and an END packet. */
static void write_event(writer *wr, size_t index)
{
    const devtrace_event *ev = wr->s->sorted[index];
    if (ev->kind == DEVTRACE_KIND_MEMORY) {
        write_memory_counter(wr, ev);
        return;
    }
    size_t nflows;
    const flow_slot *partners = flow_partners(wr, ev, &nflows);
    dt_jsonw *w = &wr->w;
    size_t need = SLICE_MAX + 2 * DESCRIPTOR_MAX + nflows * FLOW_BYTES;
    if (ev->kind == DEVTRACE_KIND_MARKER && ev->u.marker.domain_id)
        need += 3 * strlen(dt_intern_get(&wr->s->names, ev->u.marker.domain_id));
    if (w->cap - w->len < need && dt_jsonw_reserve(w, need) != 0)
        return;
    char *p = w->buf + w->len;
    uint64_t track = dt_pf_track_of(wr, &p, ev, index);
    uint32_t category;
    uint32_t name = event_name_iid(wr, ev, &category);
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
    else if (ev->kind == DEVTRACE_KIND_MARKER)
        p = put_marker_args(wr, p, ev);
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
        dt_pf_write_interned(wr);
        dt_pf_write_descriptors(wr);
        dt_pf_write_capture_facts(wr);
    } else if (index + 1 == trace_pieces(wr->s)) {
        dt_pf_write_tail(wr);
    } else {
        size_t first = (index - 1) * PIECE_EVENTS,
               end = nsorted - first < PIECE_EVENTS ? nsorted : first + PIECE_EVENTS;
        for (size_t i = first; i < end && !wr->w.failed; i++) {
            dt_filemem_every(i); /* the recorder's events are in file memory */
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

static void worker_init(void *worker, const void *arg)
{
    writer_init(worker, arg);
}

/* The pieces by the pipeline with `workers` threads: 0, an errno value, or -1 when no
 * thread could be started (nothing written). */
static int write_pieces(const trace_facts *t, FILE *f, int gzip_level, unsigned workers)
{
    return dt_pipeline_write_with_workers(fileno(f), gzip_level, trace_pieces(t->s), make_piece, workers,
                                          sizeof(writer), worker_init, t);
}

/* The Perfetto trace into f (dt_trace_body_fn). */
static int write_perfetto_body(dt_session *s, FILE *f, const char *path, const char *tmp, unsigned workers,
                               devtrace_error *err)
{
    int level = dt_trace_gzip_level(s, path);
    trace_facts t;
    if (dt_pf_facts_init(&t, s) != 0)
        return dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
    int failed = workers ? write_pieces(&t, f, level, workers) : -1;
    if (failed == -1) { /* serial, asked for or for want of a thread */
        dt_jsonw w;
        gzFile gz = level >= 0 ? dt_gzip_open(f, level) : NULL;
        if (level >= 0 && !gz) {
            dt_pf_facts_free(&t);
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
    dt_pf_facts_free(&t);
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
    int frc = dt_session_finalize(s);
    if (frc != 0)
        return frc; /* DEVTRACE_ESTATE (never started) or DEVTRACE_ENOMEM */
    trace_facts t;
    dt_jsonw w;
    if (dt_pf_facts_init(&t, s) != 0)
        return DEVTRACE_ENOMEM;
    int rc = dt_jsonw_init(&w, 1 << 16) != 0 || write_serial(&t, &w) != 0 ? DEVTRACE_ENOMEM : 0;
    dt_pf_facts_free(&t);
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
