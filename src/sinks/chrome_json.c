/* chrome_json.c: the Kineto-compatible Chrome trace sink (DESIGN.md, "The trace").
 * Written to <path>.tmp and renamed, gzip when the path ends in ".gz". Names are
 * escaped once per distinct name; numbers are formatted by hand. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "core/errors.h"
#include "core/session.h"
#include "jsonw.h"
#include "occupancy_memo.h"
#include "pipeline.h"
#include "sinks.h"

typedef struct escaped_name {
    char *text; /* owned, quoted and escaped */
    uint32_t len;
} escaped_name;

/* What every writer of one trace shares, read-only once made: every name escaped. */
typedef struct trace_names {
    escaped_name *names; /* owned: by name id */
    uint32_t nnames;
    char *text; /* owned: the escaped names, one after another */
} trace_names;

/* One writer's state: a thread formatting part of a trace has its own. */
typedef struct writer {
    dt_session *s;
    dt_occ_memo occ[DT_OCC_MEMO_SLOTS]; /* text: ", \"blocks per SM\": x, \"warps per SM\": y" */
    dt_jsonw w;
    const escaped_name *names; /* borrowed from the trace's trace_names */
    uint32_t nnames;
    char category[6 * sizeof((dt_session *)0)->runtime_category + 3]; /* the runtime category, escaped */
    size_t category_len;
} writer;

/* Escapes every name of the session once, before any writer starts (they share them):
 * their lengths first, then the text into one block. */
static int trace_names_init(trace_names *tn, dt_session *s)
{
    memset(tn, 0, sizeof *tn);
    uint32_t n = dt_intern_count(&s->names);
    tn->nnames = n ? n : 1;
    tn->names = calloc(tn->nnames, sizeof *tn->names);
    size_t total = 0, longest = 0;
    char *scratch = NULL;
    for (uint32_t id = 0; tn->names && id < tn->nnames; id++) {
        const char *name = dt_intern_get(&s->names, id);
        size_t nlen = strlen(name);
        if (6 * nlen + 3 > longest) {
            free(scratch);
            longest = 6 * nlen + 3;
            if (!(scratch = malloc(longest)))
                goto fail;
        }
        tn->names[id].len = (uint32_t)dt_json_escape(scratch, name, nlen);
        total += tn->names[id].len;
    }
    free(scratch);
    scratch = NULL; /* the failure path below frees it too */
    tn->text = malloc(total ? total : 1);
    if (!tn->names || !tn->text)
        goto fail;
    char *at = tn->text;
    for (uint32_t id = 0; id < tn->nnames; id++) {
        const char *name = dt_intern_get(&s->names, id);
        tn->names[id].text = at;
        at += dt_json_escape(at, name, strlen(name)); /* the length found above */
    }
    return 0;
fail:
    free(scratch);
    free(tn->names);
    free(tn->text);
    memset(tn, 0, sizeof *tn);
    return -1;
}

static void trace_names_free(trace_names *tn)
{
    free(tn->names);
    free(tn->text);
    memset(tn, 0, sizeof *tn);
}

static void writer_init(writer *wr, dt_session *s, const trace_names *tn)
{
    memset(wr, 0, sizeof *wr);
    wr->s = s;
    wr->names = tn->names;
    wr->nnames = tn->nnames;
    wr->category_len =
        dt_json_escape(wr->category, s->runtime_category, strnlen(s->runtime_category, sizeof s->runtime_category));
}

/* The escaped, quoted name of an id. */
static const escaped_name *escaped(const writer *wr, uint32_t id)
{
    return &wr->names[id < wr->nnames ? id : 0];
}

static void put_str(dt_jsonw *w, const char *s)
{
    dt_jsonw_str(w, s, strlen(s));
}

/* An event's line is written at a local position (see dt_jsonw_put): room for the
 * longest line but its name is made first. */
#define EVENT_MAX 1536

static char *event_begin(writer *wr, size_t name_len)
{
    dt_jsonw *w = &wr->w;
    size_t need = EVENT_MAX + name_len;
    if (w->cap - w->len < need && dt_jsonw_reserve(w, need) != 0)
        return NULL;
    return w->buf + w->len;
}

static void event_end(writer *wr, const char *p)
{
    wr->w.len = (size_t)(p - wr->w.buf);
}

static char *put_ts_dur(const writer *wr, char *p, const devtrace_event *ev)
{
    p = DT_JSONW_PUT_LIT(p, ", \"ts\": ");
    p = dt_jsonw_put_us3(p, ev->start_ns - wr->s->base_ns);
    p = DT_JSONW_PUT_LIT(p, ", \"dur\": ");
    return dt_jsonw_put_us3(p, ev->end_ns - ev->start_ns);
}

static char *put_pid_tid(char *p, uint32_t pid, uint32_t tid)
{
    p = DT_JSONW_PUT_LIT(p, ", \"pid\": ");
    p = dt_jsonw_put_u64(p, pid);
    p = DT_JSONW_PUT_LIT(p, ", \"tid\": ");
    return dt_jsonw_put_u64(p, tid);
}

static char *put_external(char *p, const devtrace_event *ev)
{
    if (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL) {
        p = DT_JSONW_PUT_LIT(p, "\"External id\": ");
        p = dt_jsonw_put_u64(p, ev->external_id);
        p = DT_JSONW_PUT_LIT(p, ", ");
    }
    /* Kineto's trace has no key of its own for a user correlation (its CUPTI path links such
     * work to GPU user annotations): devtrace names it beside the op's. */
    if (ev->flags & DEVTRACE_EVENT_HAS_USER_EXTERNAL) {
        p = DT_JSONW_PUT_LIT(p, "\"User external id\": ");
        p = dt_jsonw_put_u64(p, ev->user_external_id);
        p = DT_JSONW_PUT_LIT(p, ", ");
    }
    return p;
}

static char *put_device_ids(char *p, const devtrace_event *ev)
{
    p = DT_JSONW_PUT_LIT(p, "\"device\": ");
    p = dt_jsonw_put_u64(p, ev->device);
    p = DT_JSONW_PUT_LIT(p, ", \"context\": ");
    p = dt_jsonw_put_u64(p, ev->context);
    p = DT_JSONW_PUT_LIT(p, ", \"stream\": ");
    p = dt_jsonw_put_u64(p, ev->stream);
    p = DT_JSONW_PUT_LIT(p, ", \"correlation\": ");
    return dt_jsonw_put_u64(p, ev->correlation);
}

static char *put_dim3(char *p, const int32_t *d)
{
    p = DT_JSONW_PUT_LIT(p, "[");
    p = dt_jsonw_put_i64(p, d[0]);
    p = DT_JSONW_PUT_LIT(p, ", ");
    p = dt_jsonw_put_i64(p, d[1]);
    p = DT_JSONW_PUT_LIT(p, ", ");
    p = dt_jsonw_put_i64(p, d[2]);
    return DT_JSONW_PUT_LIT(p, "]");
}

/* The occupancy of a launch, its first two args formatted; NULL when it has none. */
static const dt_occ_memo *occupancy_of(writer *wr, const devtrace_event *ev)
{
    int filled;
    dt_occ_memo *m = dt_occ_memo_find(wr->occ, wr->s, ev, &filled);
    if (m && filled && m->has_occupancy) {
        char *p = DT_JSONW_PUT_LIT(m->text, ", \"blocks per SM\": ");
        p = dt_jsonw_put_fixed(p, m->occ.blocks_per_sm, 6);
        p = DT_JSONW_PUT_LIT(p, ", \"warps per SM\": ");
        p = dt_jsonw_put_fixed(p, m->occ.warps_per_sm, 6);
        m->len = (uint32_t)(p - m->text);
    }
    return m && m->has_occupancy ? m : NULL;
}

/* devtrace_dtype: names as PyTorch spells them, sizes in bytes (0: unknown). */
static const char *const dtype_names[DEVTRACE_DTYPE_COUNT] = {"unknown",  "Char",   "Short",  "Int",    "Long",
                                                              "Byte",     "UInt16", "UInt32", "UInt64", "Half",
                                                              "BFloat16", "Float",  "Double", "Int128", "Float8"};
static const uint8_t dtype_bytes[DEVTRACE_DTYPE_COUNT] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 16, 1};

/* Holistic Trace Analysis counts a kernel as communication when its name starts with nccl
 * or hccl (or contains ncclKernel): a collective whose vendor name does not is written
 * "hccl:<name>", its own name kept in args ("Collective name"). */
static int collective_name_classified(const escaped_name *name)
{
    return name->len > 5 && (!memcmp(name->text, "\"hccl", 5) || !memcmp(name->text, "\"nccl", 5));
}

static char *put_collective_args(const writer *wr, char *p, const devtrace_event *ev)
{
    const escaped_name *vendor = escaped(wr, ev->name_id);
    uint32_t t = ev->u.collective.data_type < DEVTRACE_DTYPE_COUNT ? ev->u.collective.data_type : 0;
    p = DT_JSONW_PUT_LIT(p, ", \"Collective name\": ");
    p = dt_jsonw_put(p, vendor->text, vendor->len);
    p = DT_JSONW_PUT_LIT(p, ", \"dtype\": \"");
    p = dt_jsonw_put(p, dtype_names[t], strlen(dtype_names[t]));
    p = DT_JSONW_PUT_LIT(p, "\"");
    if (ev->u.collective.count) {
        p = DT_JSONW_PUT_LIT(p, ", \"In msg nelems\": ");
        p = dt_jsonw_put_u64(p, ev->u.collective.count);
        p = DT_JSONW_PUT_LIT(p, ", \"Out msg nelems\": ");
        p = dt_jsonw_put_u64(p, ev->u.collective.count);
    }
    if (ev->u.collective.comm_name_id) {
        const escaped_name *comm = escaped(wr, ev->u.collective.comm_name_id);
        p = DT_JSONW_PUT_LIT(p, ", \"Process Group Name\": ");
        p = dt_jsonw_put(p, comm->text, comm->len);
    }
    if (ev->u.collective.algorithm_id) {
        const escaped_name *alg = escaped(wr, ev->u.collective.algorithm_id);
        p = DT_JSONW_PUT_LIT(p, ", \"algorithm\": ");
        p = dt_jsonw_put(p, alg->text, alg->len);
    }
    uint64_t bytes = ev->u.collective.count * dtype_bytes[t];
    if (bytes) {
        p = DT_JSONW_PUT_LIT(p, ", \"bytes\": ");
        p = dt_jsonw_put_u64(p, bytes);
    }
    /* The vendor's figure when it gives one, else bytes over the device time (GB/s = B/ns). */
    uint64_t dur = ev->end_ns - ev->start_ns;
    double bw = ev->u.collective.bandwidth_gbps > 0 ? ev->u.collective.bandwidth_gbps
                : dur && bytes                      ? (double)bytes / (double)dur
                                                    : 0.0;
    if (bw > 0) {
        p = DT_JSONW_PUT_LIT(p, ", \"bandwidth (GB/s)\": ");
        p = dt_jsonw_put_fixed(p, bw, 6);
    }
    return p;
}

static void write_kernel(writer *wr, const devtrace_event *ev)
{
    const escaped_name *name = escaped(wr, ev->name_id);
    const dt_occ_memo *occ = occupancy_of(wr, ev);
    char *p = event_begin(wr, name->len);
    if (!p)
        return;
    p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    int collective = (ev->flags & DEVTRACE_EVENT_COLLECTIVE) != 0;
    if (collective && !collective_name_classified(name)) {
        p = DT_JSONW_PUT_LIT(p, "\"hccl:");
        p = dt_jsonw_put(p, name->text + 1, name->len - 1);
    } else {
        p = dt_jsonw_put(p, name->text, name->len);
    }
    p = put_pid_tid(p, ev->device, ev->stream);
    p = put_ts_dur(wr, p, ev);
    p = DT_JSONW_PUT_LIT(p, ", \"args\": {");
    p = put_external(p, ev);
    p = DT_JSONW_PUT_LIT(p, "\"queued\": ");
    uint64_t q = (ev->flags & DEVTRACE_EVENT_HAS_QUEUED) && ev->u.kernel.queued_ns <= ev->start_ns
                     ? ev->start_ns - ev->u.kernel.queued_ns
                     : 0;
    p = dt_jsonw_put_u64(p, q);
    p = DT_JSONW_PUT_LIT(p, ", ");
    p = put_device_ids(p, ev);
    if (ev->flags & DEVTRACE_EVENT_HAS_REGS) {
        p = DT_JSONW_PUT_LIT(p, ", \"registers per thread\": ");
        p = dt_jsonw_put_u64(p, ev->u.kernel.registers_per_thread);
    }
    if (ev->flags & (DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED)) {
        p = DT_JSONW_PUT_LIT(p, ", \"shared memory\": ");
        p = dt_jsonw_put_u64(p, (uint64_t)ev->u.kernel.static_shared + ev->u.kernel.dynamic_shared);
    }
    if (collective)
        p = put_collective_args(wr, p, ev);
    if (occ)
        p = dt_jsonw_put(p, occ->text, occ->len);
    if (ev->flags & DEVTRACE_EVENT_HAS_LAUNCH) {
        p = DT_JSONW_PUT_LIT(p, ", \"grid\": ");
        p = put_dim3(p, ev->u.kernel.grid);
        p = DT_JSONW_PUT_LIT(p, ", \"block\": ");
        p = put_dim3(p, ev->u.kernel.block);
    }
    if (occ) {
        p = DT_JSONW_PUT_LIT(p, ", \"est. achieved occupancy %\": ");
        p = dt_jsonw_put_u64(p, occ->est_pct);
    }
    p = DT_JSONW_PUT_LIT(p, "}},\n");
    event_end(wr, p);
}

static void write_copy_or_set(writer *wr, const devtrace_event *ev)
{
    char *p = event_begin(wr, 0);
    if (!p)
        return;
    int copy = ev->kind == DEVTRACE_KIND_MEMCPY;
    if (copy) {
        p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": ");
        const char *name = devtrace_memcpy_name(ev->u.memcpy.direction);
        *p++ = '"';
        p = dt_jsonw_put(p, name, strlen(name));
        *p++ = '"';
    } else {
        p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\"");
    }
    p = put_pid_tid(p, ev->device, ev->stream);
    p = put_ts_dur(wr, p, ev);
    p = DT_JSONW_PUT_LIT(p, ", \"args\": {");
    p = put_external(p, ev);
    p = put_device_ids(p, ev);
    uint64_t bytes = copy ? ev->u.memcpy.bytes : ev->u.memset.bytes;
    p = DT_JSONW_PUT_LIT(p, ", \"bytes\": ");
    p = dt_jsonw_put_u64(p, bytes);
    p = DT_JSONW_PUT_LIT(p, ", \"memory bandwidth (GB/s)\": ");
    uint64_t dur = ev->end_ns - ev->start_ns;
    p = dt_jsonw_put_fixed(p, dur ? (double)bytes / (double)dur : 0.0, 6);
    p = DT_JSONW_PUT_LIT(p, "}},\n");
    event_end(wr, p);
}

/* An allocation or release as Kineto's memory instant ("[memory]", PyTorch's keys; Bytes
 * negative for a release), on the host process that asked. */
static void write_memory(writer *wr, const devtrace_event *ev)
{
    char *p = event_begin(wr, 0);
    if (!p)
        return;
    p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\"");
    p = put_pid_tid(p, ev->device, ev->stream);
    p = DT_JSONW_PUT_LIT(p, ", \"ts\": ");
    p = dt_jsonw_put_us3(p, ev->start_ns - wr->s->base_ns);
    p = DT_JSONW_PUT_LIT(p, ", \"args\": {");
    p = put_external(p, ev);
    p = DT_JSONW_PUT_LIT(p, "\"Device Type\": 20, \"Device Id\": "); /* c10::DeviceType::PrivateUse1 */
    p = dt_jsonw_put_u64(p, ev->u.memory.device_id);
    p = DT_JSONW_PUT_LIT(p, ", \"Addr\": ");
    p = dt_jsonw_put_u64(p, ev->u.memory.address);
    p = DT_JSONW_PUT_LIT(p, ", \"Bytes\": ");
    p = dt_jsonw_put_i64(p, ev->u.memory.release ? -(int64_t)ev->u.memory.bytes : (int64_t)ev->u.memory.bytes);
    p = DT_JSONW_PUT_LIT(p, ", \"Total Allocated\": ");
    p = dt_jsonw_put_i64(p, ev->u.memory.total);
    if (ev->u.memory.stream_id != UINT32_MAX) {
        p = DT_JSONW_PUT_LIT(p, ", \"stream\": ");
        p = dt_jsonw_put_u64(p, ev->u.memory.stream_id);
    }
    p = DT_JSONW_PUT_LIT(p, ", \"correlation\": ");
    p = dt_jsonw_put_u64(p, ev->correlation);
    p = DT_JSONW_PUT_LIT(p, "}},\n");
    event_end(wr, p);
}

/* A marker range (paired at drain) or mark, as Kineto writes annotations: user_annotation on
 * the host thread, gpu_user_annotation on the device stream. */
static void write_marker(writer *wr, const devtrace_event *ev)
{
    const escaped_name *name = escaped(wr, ev->name_id);
    char *p = event_begin(wr, name->len + 64);
    if (!p)
        return;
    if (ev->u.marker.device)
        p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": ");
    else
        p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": ");
    p = dt_jsonw_put(p, name->text, name->len);
    p = put_pid_tid(p, ev->device, ev->stream);
    p = put_ts_dur(wr, p, ev);
    p = DT_JSONW_PUT_LIT(p, ", \"args\": {\"marker id\": ");
    p = dt_jsonw_put_u64(p, ev->u.marker.id);
    if (ev->u.marker.domain_id) {
        const escaped_name *domain = escaped(wr, ev->u.marker.domain_id);
        p = DT_JSONW_PUT_LIT(p, ", \"domain\": ");
        p = dt_jsonw_put(p, domain->text, domain->len);
    }
    if (ev->u.marker.phase == DEVTRACE_MARKER_INSTANT)
        p = DT_JSONW_PUT_LIT(p, ", \"mark\": 1");
    p = DT_JSONW_PUT_LIT(p, "}},\n");
    event_end(wr, p);
}

static void write_host_event(writer *wr, const devtrace_event *ev)
{
    const escaped_name *name = escaped(wr, ev->name_id);
    char *p = event_begin(wr, name->len + wr->category_len);
    if (!p)
        return;
    int runtime = ev->kind == DEVTRACE_KIND_RUNTIME;
    p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"X\", \"cat\": ");
    if (runtime)
        p = dt_jsonw_put(p, wr->category, wr->category_len);
    else
        p = DT_JSONW_PUT_LIT(p, "\"cpu_op\"");
    p = DT_JSONW_PUT_LIT(p, ", \"name\": ");
    p = dt_jsonw_put(p, name->text, name->len);
    p = put_pid_tid(p, ev->device, ev->stream);
    p = put_ts_dur(wr, p, ev);
    p = DT_JSONW_PUT_LIT(p, ", \"args\": {");
    if (!runtime) {
        p = DT_JSONW_PUT_LIT(p, "\"External id\": ");
        p = dt_jsonw_put_u64(p, ev->external_id);
        if (ev->flags & DEVTRACE_EVENT_HAS_SEQUENCE) { /* Kineto's keys, for autograd ops */
            p = DT_JSONW_PUT_LIT(p, ", \"Sequence number\": ");
            p = dt_jsonw_put_i64(p, ev->u.cpu_op.sequence_nr);
            p = DT_JSONW_PUT_LIT(p, ", \"Fwd thread id\": ");
            p = dt_jsonw_put_u64(p, ev->u.cpu_op.fwd_thread_id);
        }
        p = DT_JSONW_PUT_LIT(p, "}},\n");
        event_end(wr, p);
        return;
    }
    p = put_external(p, ev);
    if (ev->flags & DEVTRACE_EVENT_HAS_CBID) {
        p = DT_JSONW_PUT_LIT(p, "\"cbid\": ");
        p = dt_jsonw_put_u64(p, ev->u.runtime.cbid);
        p = DT_JSONW_PUT_LIT(p, ", ");
    }
    p = DT_JSONW_PUT_LIT(p, "\"correlation\": ");
    p = dt_jsonw_put_u64(p, ev->correlation);
    if (ev->flags & DEVTRACE_EVENT_HAS_LEVEL) {
        const escaped_name *level = escaped(wr, ev->u.runtime.level_id);
        p = DT_JSONW_PUT_LIT(p, ", \"level\": ");
        p = dt_jsonw_put(p, level->text, level->len);
    }
    p = DT_JSONW_PUT_LIT(p, "}},\n");
    event_end(wr, p);
}

static void write_flow(writer *wr, const devtrace_event *ev)
{
    char *p = event_begin(wr, 0);
    if (!p)
        return;
    if (ev->kind != DEVTRACE_KIND_RUNTIME)
        p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ");
    else
        p = DT_JSONW_PUT_LIT(p, "  {\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ");
    p = dt_jsonw_put_u64(p, ev->correlation);
    p = put_pid_tid(p, ev->device, ev->stream);
    p = DT_JSONW_PUT_LIT(p, ", \"ts\": ");
    p = dt_jsonw_put_us3(p, ev->start_ns - wr->s->base_ns);
    p = DT_JSONW_PUT_LIT(p, "},\n");
    event_end(wr, p);
}

static void write_device_properties(writer *wr)
{
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    DT_JSONW_LIT(w, "  \"deviceProperties\": [");
    for (int i = 0; i < s->ndevices; i++) {
        const dt_device_props *d = &s->devices[i];
        if (i)
            DT_JSONW_LIT(w, ",");
        DT_JSONW_LIT(w, "\n    {");
        DT_JSONW_LIT(w, "\"id\": ");
        dt_jsonw_i64(w, d->id);
        DT_JSONW_LIT(w, ", \"name\": ");
        put_str(w, d->name);
        DT_JSONW_LIT(w, ", \"totalGlobalMem\": ");
        dt_jsonw_u64(w, d->total_global_mem);
        dt_device_field fields[DT_DEVICE_FIELDS];
        dt_device_fields(d, fields);
        for (size_t f = 0; f < DT_DEVICE_FIELDS; f++) {
            DT_JSONW_LIT(w, ", ");
            put_str(w, fields[f].key);
            DT_JSONW_LIT(w, ": ");
            dt_jsonw_i64(w, fields[f].value);
        }
        DT_JSONW_LIT(w, "}");
    }
    if (s->ndevices)
        DT_JSONW_LIT(w, "\n  ");
    DT_JSONW_LIT(w, "],\n");
}

static void put_kind_counts(dt_jsonw *w, const uint64_t *counts)
{
    static const int kinds[] = {DEVTRACE_KIND_KERNEL, DEVTRACE_KIND_MEMCPY, DEVTRACE_KIND_MEMSET, DEVTRACE_KIND_RUNTIME,
                                DEVTRACE_KIND_CPU_OP};
    DT_JSONW_LIT(w, "{");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (i)
            DT_JSONW_LIT(w, ", ");
        put_str(w, devtrace_kind_name(kinds[i]));
        DT_JSONW_LIT(w, ": ");
        dt_jsonw_u64(w, counts[kinds[i]]);
    }
    static const int more[] = {DEVTRACE_KIND_MARKER, DEVTRACE_KIND_MEMORY}; /* only where there are some */
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        if (!counts[more[i]])
            continue;
        DT_JSONW_LIT(w, ", ");
        put_str(w, devtrace_kind_name(more[i]));
        DT_JSONW_LIT(w, ": ");
        dt_jsonw_u64(w, counts[more[i]]);
    }
    DT_JSONW_LIT(w, "}");
}

static void put_counter(dt_jsonw *w, const char *key, uint64_t v)
{
    DT_JSONW_LIT(w, ", ");
    put_str(w, key);
    DT_JSONW_LIT(w, ": ");
    dt_jsonw_u64(w, v);
}

/* Every counter of DEVTRACE_STATS_COUNTERS, as "key": n, or inside "group": {...} for
 * the counters that have one (those of a group are next to each other in the table), and
 * out_of_window per kind where the trace has always had it: after the groups "dropped" and
 * "malformed", before zero_timestamp. */
static void write_stats_counters(dt_jsonw *w, const devtrace_stats *st)
{
    const char *open_group = "";
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++) {
        const dt_stats_counter *c = &dt_stats_counters[i];
        if (strcmp(c->group, open_group) != 0) {
            if (open_group[0])
                DT_JSONW_LIT(w, "}");
            open_group = "";
        }
        if (i == DT_STATS_INDEX_zero_timestamp) {
            DT_JSONW_LIT(w, ",\n    \"out_of_window\": ");
            put_kind_counts(w, st->out_of_window);
        }
        if (c->group[0] && !open_group[0]) {
            DT_JSONW_LIT(w, ",\n    ");
            put_str(w, c->group);
            DT_JSONW_LIT(w, ": {");
            put_str(w, c->key);
            DT_JSONW_LIT(w, ": ");
            dt_jsonw_u64(w, dt_stats_counter_value(st, i));
            open_group = c->group;
            continue;
        }
        put_counter(w, c->key, dt_stats_counter_value(st, i));
    }
    if (open_group[0])
        DT_JSONW_LIT(w, "}");
}

/* The processes devtrace record traced into this trace (the forked children it did not are
 * counted in forked_untraced). */
static void write_processes(writer *wr)
{
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    if (!dt_trace_lists_processes(s->nprocesses, s->stats.forked_untraced))
        return;
    DT_JSONW_LIT(w, ",\n    \"processes\": [");
    for (size_t i = 0; i < s->nprocesses; i++) {
        const dt_traced_process *p = &s->processes[i];
        if (i)
            DT_JSONW_LIT(w, ", ");
        DT_JSONW_LIT(w, "{\"pid\": ");
        dt_jsonw_u64(w, p->pid);
        put_counter(w, "ppid", p->ppid);
        DT_JSONW_LIT(w, ", \"command\": ");
        put_str(w, p->command);
        put_counter(w, "events", p->events);
        put_counter(w, "ended", (uint64_t)(p->ended != 0));
        put_counter(w, "crash_signal", (uint64_t)p->crash_signal);
        DT_JSONW_LIT(w, ", \"rank\": ");
        dt_jsonw_i64(w, p->rank);
        DT_JSONW_LIT(w, ", \"world_size\": ");
        dt_jsonw_i64(w, p->world_size);
        DT_JSONW_LIT(w, "}");
    }
    DT_JSONW_LIT(w, "]");
}

static void write_devtrace_meta(writer *wr)
{
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    const devtrace_stats *st = &s->stats;
    DT_JSONW_LIT(w, "  \"devtrace\": {\"version\": \"" DEVTRACE_VERSION_STRING "\", \"backend\": ");
    put_str(w, s->backend_name);
    DT_JSONW_LIT(w, ", \"validation\": ");
    put_str(w, s->validation);
    if (s->unavailable_reason[0]) {
        DT_JSONW_LIT(w, ", \"unavailable\": ");
        put_str(w, s->unavailable_reason);
    }
    DT_JSONW_LIT(w, ", \"clock\": ");
    put_str(w, dt_clock_mode_name(s->clock.mode));
    DT_JSONW_LIT(w, ",\n    \"counts\": ");
    put_kind_counts(w, st->events);
    write_stats_counters(w, st);
    write_processes(wr);
    DT_JSONW_LIT(w, ",\n    \"window\": [");
    dt_jsonw_u64(w, s->window_start);
    DT_JSONW_LIT(w, ", ");
    dt_jsonw_u64(w, s->window_stop);
    DT_JSONW_LIT(w, "], \"notes\": [");
    for (int i = 0; i < s->nnotes; i++) {
        if (i)
            DT_JSONW_LIT(w, ", ");
        put_str(w, s->notes[i]);
    }
    DT_JSONW_LIT(w, "]},\n");
}

static void write_metadata_event(writer *wr, const char *name, uint32_t pid, uint32_t tid, const char *key,
                                 const char *text, int64_t number)
{
    dt_jsonw *w = &wr->w;
    DT_JSONW_LIT(w, "  {\"name\": ");
    put_str(w, name);
    DT_JSONW_LIT(w, ", \"ph\": \"M\", \"ts\": 0.000");
    DT_JSONW_LIT(w, ", \"pid\": ");
    dt_jsonw_u64(w, pid);
    DT_JSONW_LIT(w, ", \"tid\": ");
    dt_jsonw_u64(w, tid);
    DT_JSONW_LIT(w, ", \"args\": {");
    put_str(w, key);
    DT_JSONW_LIT(w, ": ");
    if (text)
        put_str(w, text);
    else
        dt_jsonw_i64(w, number);
    DT_JSONW_LIT(w, "}},\n");
}

/* process_name/labels/sort_index for each device, thread_name for each stream and host
 * thread: the lanes finalise gathered (device streams by device and stream, then host
 * threads by process and thread). In a trace of several processes each device lane names
 * its process; each traced process's host lanes are named after its program. */
static void write_metadata(writer *wr)
{
    dt_session *s = wr->s;
    char text[96], name[48];
    for (size_t i = 0; i < s->nlanes; i++) {
        uint32_t device = (uint32_t)(s->lanes[i] >> 32), stream = (uint32_t)s->lanes[i];
        int first_of_lane = i == 0 || device != (uint32_t)(s->lanes[i - 1] >> 32) || i == s->ndevice_lanes;
        if (i < s->ndevice_lanes) {
            if (first_of_lane) {
                dt_device_lane_name(s, device, text, sizeof text);
                write_metadata_event(wr, "process_name", device, 0, "name", text, 0);
                const dt_traced_process *owner = s->ranks_differ ? dt_device_owner(s, device) : NULL;
                if (owner) /* the rank of the process whose device this is */
                    snprintf(text + strlen(text), sizeof text - strlen(text), ", rank %d", (int)owner->rank);
                write_metadata_event(wr, "process_labels", device, 0, "labels", text, 0);
                write_metadata_event(wr, "process_sort_index", device, 0, "sort_index", NULL,
                                     5000000 + (int64_t)device);
            }
            snprintf(text, sizeof text, "stream %u", stream);
        } else {
            const dt_traced_process *p = first_of_lane && s->nprocesses > 1 ? dt_traced_process_of(s, device) : NULL;
            if (p) {
                dt_program_name(p->command, name, sizeof name);
                write_metadata_event(wr, "process_name", device, 0, "name", name, 0);
                if (s->ranks_differ)
                    snprintf(text, sizeof text, "pid %u, rank %d", p->pid, (int)p->rank);
                else
                    snprintf(text, sizeof text, "pid %u", p->pid);
                write_metadata_event(wr, "process_labels", device, 0, "labels", text, 0);
            }
            snprintf(text, sizeof text, "thread %u", stream);
        }
        write_metadata_event(wr, "thread_name", device, stream, "name", text, 0);
    }
}

/* The trace up to its first event: the top-level keys and the metadata events. */
static void write_header(writer *wr)
{
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    DT_JSONW_LIT(w, "{\n  \"schemaVersion\": 1,\n");
    write_device_properties(wr);
    DT_JSONW_LIT(w, "  \"distributedInfo\": {\"rank\": ");
    dt_jsonw_i64(w, s->rank);
    DT_JSONW_LIT(w, ", \"world_size\": ");
    dt_jsonw_i64(w, s->world_size);
    DT_JSONW_LIT(w, "},\n");
    write_devtrace_meta(wr);
    DT_JSONW_LIT(w, "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    dt_jsonw_u64(w, s->base_ns);
    DT_JSONW_LIT(w, ",\n  \"traceEvents\": [\n");
    write_metadata(wr);
}

/* The sorted events first .. end-1, each with its flow line. */
static void write_events(writer *wr, size_t first, size_t end)
{
    dt_session *s = wr->s;
    for (size_t i = first; i < end; i++) {
        dt_filemem_every(i); /* the recorder's events are in file memory */
        const devtrace_event *ev = s->sorted[i];
        switch (ev->kind) {
        case DEVTRACE_KIND_KERNEL:
            write_kernel(wr, ev);
            break;
        case DEVTRACE_KIND_MEMCPY:
        case DEVTRACE_KIND_MEMSET:
            write_copy_or_set(wr, ev);
            break;
        case DEVTRACE_KIND_MEMORY:
            write_memory(wr, ev);
            break;
        case DEVTRACE_KIND_MARKER:
            write_marker(wr, ev);
            break;
        default:
            write_host_event(wr, ev);
            break;
        }
        if (ev->flags & DT_EVENT_FLOW)
            write_flow(wr, ev);
    }
}

/* The trace after its last event. */
static void write_tail(writer *wr, const char *trace_name)
{
    dt_jsonw *w = &wr->w;
    dt_session *s = wr->s;
    DT_JSONW_LIT(
        w, "  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    uint64_t end = s->window_stop > s->base_ns ? s->window_stop - s->base_ns : 0;
    dt_jsonw_us3(w, end);
    DT_JSONW_LIT(w, "}\n  ],\n  \"traceName\": ");
    put_str(w, trace_name);
    DT_JSONW_LIT(w, "\n}\n");
}

static void write_trace(writer *wr, const char *trace_name)
{
    write_header(wr);
    write_events(wr, 0, wr->s->nsorted);
    write_tail(wr, trace_name);
}

/* The trace in pieces for the pipeline: the header, the events PIECE_EVENTS at a time
 * (about 400 KB of text, which stays in the formatting core's 1 MiB L2 until the kernel
 * copies it: with 4096-event pieces, 1.6 MB, a 4 GB trace was written at 2.7 to 3.2 M
 * events/s, with 1024 at 5.0 to 5.2 M), the tail. */
#define PIECE_EVENTS 1024

static size_t trace_pieces(const dt_session *s)
{
    return 2 + (s->nsorted + PIECE_EVENTS - 1) / PIECE_EVENTS;
}

typedef struct piece_writer {
    writer wr;
    const char *trace_name; /* borrowed */
} piece_writer;

static void make_piece(void *worker, size_t index, dt_jsonw *out)
{
    piece_writer *pw = worker;
    writer *wr = &pw->wr;
    size_t nsorted = wr->s->nsorted;
    wr->w = *out; /* the piece's buffer, lent for the piece */
    if (index == 0) {
        write_header(wr);
    } else if (index + 1 == trace_pieces(wr->s)) {
        write_tail(wr, pw->trace_name);
    } else {
        size_t first = (index - 1) * PIECE_EVENTS;
        write_events(wr, first, nsorted - first < PIECE_EVENTS ? nsorted : first + PIECE_EVENTS);
    }
    *out = wr->w;
    memset(&wr->w, 0, sizeof wr->w);
}

/* What each worker's piece_writer is made from. */
typedef struct piece_source {
    dt_session *s;
    const trace_names *tn;
    const char *trace_name;
} piece_source;

static void piece_writer_init(void *worker, const void *arg)
{
    const piece_source *src = arg;
    piece_writer *pw = worker;
    writer_init(&pw->wr, src->s, src->tn);
    pw->trace_name = src->trace_name;
}

/* The trace to f by the pipeline with `workers` threads: 0, an errno value, or -1 when no
 * thread could be started (nothing written). */
static int write_pieces(dt_session *s, const trace_names *tn, FILE *f, const char *trace_name, int gzip_level,
                        unsigned workers)
{
    piece_source src = {s, tn, trace_name};
    return dt_pipeline_write_with_workers(fileno(f), gzip_level, trace_pieces(s), make_piece, workers,
                                          sizeof(piece_writer), piece_writer_init, &src);
}

/* The trace to f by this thread, through a 1 MiB buffer (and gzdopen's stream): 0 or an
 * errno value; *gz_failed when gzip compression could not start. */
static int write_serial(dt_session *s, const trace_names *tn, FILE *f, const char *trace_name, int gzip_level,
                        int *gz_failed)
{
    writer *wr = malloc(sizeof *wr);
    if (!wr)
        return ENOMEM;
    writer_init(wr, s, tn);
    if (dt_jsonw_init(&wr->w, 1 << 20) != 0) {
        free(wr);
        return ENOMEM;
    }
    gzFile gzf = NULL;
    if (gzip_level >= 0) {
        gzf = dt_gzip_open(f, gzip_level);
        if (!gzf) {
            *gz_failed = 1;
            dt_jsonw_free(&wr->w);
            free(wr);
            return ENOMEM;
        }
    }
    wr->w.file = gzf ? NULL : f;
    wr->w.gz = gzf;
    write_trace(wr, trace_name);
    dt_jsonw_flush(&wr->w);
    int failed = wr->w.failed, saved = wr->w.err;
    if (gzf && gzclose(gzf) != Z_OK && !failed) {
        failed = 1;
        saved = errno ? errno : EIO;
    }
    dt_jsonw_free(&wr->w);
    free(wr);
    return failed ? (saved ? saved : EIO) : 0;
}

unsigned dt_chrome_write_threads(dt_session *s)
{
    const char *v = getenv("DEVTRACE_WRITE_THREADS");
    uint64_t n;
    if (v && *v) {
        if (dt_parse_u64(v, &n) == 0 && n >= 1 && n <= DT_WRITE_THREADS_MAX)
            return (unsigned)n;
        dt_add_note(
            s, "$DEVTRACE_WRITE_THREADS=\"%.100s\" is not a thread count from 1 to %d: one per CPU (at most %d) used",
            v, DT_WRITE_THREADS_MAX, DT_WRITE_THREADS_DEFAULT_MAX);
    }
    int cpus = dt_online_cpus(); /* the CPUs this process may use, not all the machine has */
    return cpus > DT_WRITE_THREADS_DEFAULT_MAX ? DT_WRITE_THREADS_DEFAULT_MAX : (unsigned)cpus;
}

int dt_chrome_write_buffer(dt_session *s, const char *trace_name, char **out, size_t *outlen)
{
    int frc = dt_session_finalize(s);
    if (frc != 0)
        return frc;
    trace_names tn;
    writer *wr = malloc(sizeof *wr);
    if (!wr || trace_names_init(&tn, s) != 0) {
        free(wr);
        return DEVTRACE_ENOMEM;
    }
    writer_init(wr, s, &tn);
    int rc = 0;
    if (dt_jsonw_init(&wr->w, 1 << 16) != 0) {
        rc = DEVTRACE_ENOMEM;
    } else {
        write_trace(wr, trace_name);
        if (wr->w.failed) {
            dt_jsonw_free(&wr->w);
            rc = DEVTRACE_ENOMEM;
        } else {
            *out = wr->w.buf;
            *outlen = wr->w.len;
        }
    }
    trace_names_free(&tn);
    free(wr);
    return rc;
}

/* The Chrome trace into f (dt_trace_body_fn). */
static int write_chrome_body(dt_session *s, FILE *f, const char *path, const char *tmp, unsigned workers,
                             devtrace_error *err)
{
    int rc = 0;
    int level = dt_trace_gzip_level(s, path);
    trace_names tn;
    if (trace_names_init(&tn, s) != 0)
        return dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
    int failed = workers ? write_pieces(s, &tn, f, path, level, workers) : -1;
    int gz_failed = 0;
    if (failed == -1) /* serial, asked for or for want of a thread */
        failed = write_serial(s, &tn, f, path, level, &gz_failed);
    if (gz_failed)
        rc = dt_error_set(err, DEVTRACE_ENOMEM, "cannot start gzip compression");
    else if (failed)
        rc = dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(failed));
    trace_names_free(&tn);
    return rc;
}

int dt_chrome_write_file(dt_session *s, const char *path, unsigned workers, devtrace_error *err)
{
    return dt_trace_file_write(s, path, workers, write_chrome_body, err);
}

int devtrace_write_chrome(devtrace_session *s, const char *path, devtrace_error *err)
{
    return dt_chrome_write_file(s, path, DT_WRITE_THREADS_AUTO, err);
}

const char *devtrace_kind_name(int kind)
{
    switch (kind) {
    case DEVTRACE_KIND_KERNEL:
        return "kernel";
    case DEVTRACE_KIND_MEMCPY:
        return "memcpy";
    case DEVTRACE_KIND_MEMSET:
        return "memset";
    case DEVTRACE_KIND_RUNTIME:
        return "runtime";
    case DEVTRACE_KIND_CPU_OP:
        return "cpu_op";
    case DEVTRACE_KIND_EXTCORR:
        return "external_correlation";
    case DEVTRACE_KIND_MARKER:
        return "marker";
    case DEVTRACE_KIND_MEMORY:
        return "memory";
    default:
        return "none";
    }
}
