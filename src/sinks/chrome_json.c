/* chrome_json.c: the Kineto-compatible Chrome trace sink (DESIGN.md, "The trace").
 * Written to <path>.tmp and renamed, gzip when the path ends in ".gz". Names are
 * escaped once per distinct name; numbers are formatted by hand. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/errors.h"
#include "core/session.h"
#include "jsonw.h"
#include "sinks.h"

typedef struct escaped_name {
    char *text; /* owned, quoted and escaped */
    uint32_t len;
} escaped_name;

typedef struct writer {
    dt_session *s;
    dt_jsonw w;
    escaped_name *names; /* by name id, filled lazily */
    uint32_t nnames;
} writer;

static void put_name(writer *wr, uint32_t id)
{
    if (id >= wr->nnames)
        id = 0;
    escaped_name *e = &wr->names[id];
    if (!e->text) {
        const char *s = dt_intern_get(&wr->s->names, id);
        size_t n = strlen(s);
        e->text = malloc(6 * n + 3);
        if (!e->text) {
            DT_JSONW_LIT(&wr->w, "\"\"");
            return;
        }
        e->len = (uint32_t)dt_json_escape(e->text, s, n);
    }
    dt_jsonw_raw(&wr->w, e->text, e->len);
}

static void put_str(dt_jsonw *w, const char *s)
{
    dt_jsonw_str(w, s, strlen(s));
}

static const dt_device_props *device_of(const dt_session *s, uint32_t id)
{
    for (int i = 0; i < s->ndevices; i++)
        if ((uint32_t)s->devices[i].id == id)
            return &s->devices[i];
    return NULL;
}

static void put_ts_dur(writer *wr, const devtrace_event *ev)
{
    dt_jsonw *w = &wr->w;
    DT_JSONW_LIT(w, ", \"ts\": ");
    dt_jsonw_us3(w, ev->start_ns - wr->s->base_ns);
    DT_JSONW_LIT(w, ", \"dur\": ");
    dt_jsonw_us3(w, ev->end_ns - ev->start_ns);
}

static void put_pid_tid(dt_jsonw *w, uint32_t pid, uint32_t tid)
{
    DT_JSONW_LIT(w, ", \"pid\": ");
    dt_jsonw_u64(w, pid);
    DT_JSONW_LIT(w, ", \"tid\": ");
    dt_jsonw_u64(w, tid);
}

static void put_external(dt_jsonw *w, const devtrace_event *ev)
{
    if (ev->flags & DEVTRACE_EVENT_HAS_EXTERNAL) {
        DT_JSONW_LIT(w, "\"External id\": ");
        dt_jsonw_u64(w, ev->external_id);
        DT_JSONW_LIT(w, ", ");
    }
}

static void put_device_ids(dt_jsonw *w, const devtrace_event *ev)
{
    DT_JSONW_LIT(w, "\"device\": ");
    dt_jsonw_u64(w, ev->device);
    DT_JSONW_LIT(w, ", \"context\": ");
    dt_jsonw_u64(w, ev->context);
    DT_JSONW_LIT(w, ", \"stream\": ");
    dt_jsonw_u64(w, ev->stream);
    DT_JSONW_LIT(w, ", \"correlation\": ");
    dt_jsonw_u64(w, ev->correlation);
}

static void put_dim3(dt_jsonw *w, const int32_t *d)
{
    DT_JSONW_LIT(w, "[");
    dt_jsonw_i64(w, d[0]);
    DT_JSONW_LIT(w, ", ");
    dt_jsonw_i64(w, d[1]);
    DT_JSONW_LIT(w, ", ");
    dt_jsonw_i64(w, d[2]);
    DT_JSONW_LIT(w, "]");
}

static void write_kernel(writer *wr, const devtrace_event *ev)
{
    dt_jsonw *w = &wr->w;
    DT_JSONW_LIT(w, "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    put_name(wr, ev->name_id);
    put_pid_tid(w, ev->device, ev->stream);
    put_ts_dur(wr, ev);
    DT_JSONW_LIT(w, ", \"args\": {");
    put_external(w, ev);
    DT_JSONW_LIT(w, "\"queued\": ");
    uint64_t q = (ev->flags & DEVTRACE_EVENT_HAS_QUEUED) && ev->u.kernel.queued_ns <= ev->start_ns
                     ? ev->start_ns - ev->u.kernel.queued_ns
                     : 0;
    dt_jsonw_u64(w, q);
    DT_JSONW_LIT(w, ", ");
    put_device_ids(w, ev);
    if (ev->flags & DEVTRACE_EVENT_HAS_REGS) {
        DT_JSONW_LIT(w, ", \"registers per thread\": ");
        dt_jsonw_u64(w, ev->u.kernel.registers_per_thread);
        DT_JSONW_LIT(w, ", \"shared memory\": ");
        dt_jsonw_u64(w, (uint64_t)ev->u.kernel.static_shared + ev->u.kernel.dynamic_shared);
    }
    dt_occupancy occ;
    if (dt_occupancy_compute(device_of(wr->s, ev->device), ev, &occ) == 0) {
        DT_JSONW_LIT(w, ", \"blocks per SM\": ");
        dt_jsonw_fixed(w, occ.blocks_per_sm, 6);
        DT_JSONW_LIT(w, ", \"warps per SM\": ");
        dt_jsonw_fixed(w, occ.warps_per_sm, 6);
    }
    if (ev->flags & DEVTRACE_EVENT_HAS_LAUNCH) {
        DT_JSONW_LIT(w, ", \"grid\": ");
        put_dim3(w, ev->u.kernel.grid);
        DT_JSONW_LIT(w, ", \"block\": ");
        put_dim3(w, ev->u.kernel.block);
    }
    if (dt_occupancy_compute(device_of(wr->s, ev->device), ev, &occ) == 0) {
        DT_JSONW_LIT(w, ", \"est. achieved occupancy %\": ");
        dt_jsonw_u64(w, (uint64_t)(occ.est_achieved_occupancy_pct + 0.5));
    }
    DT_JSONW_LIT(w, "}},\n");
}

static const char *memcpy_name(uint32_t dir)
{
    switch (dir) {
    case DEVTRACE_COPY_HTOD:
        return "\"Memcpy HtoD (Pageable -> Device)\"";
    case DEVTRACE_COPY_DTOH:
        return "\"Memcpy DtoH (Device -> Pageable)\"";
    case DEVTRACE_COPY_DTOD:
        return "\"Memcpy DtoD (Device -> Device)\"";
    case DEVTRACE_COPY_HTOH:
        return "\"Memcpy HtoH (Pageable -> Pageable)\"";
    default:
        return "\"Memcpy (Unknown)\"";
    }
}

static void write_copy_or_set(writer *wr, const devtrace_event *ev)
{
    dt_jsonw *w = &wr->w;
    int copy = ev->kind == DEVTRACE_KIND_MEMCPY;
    if (copy) {
        DT_JSONW_LIT(w, "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": ");
        const char *name = memcpy_name(ev->u.memcpy.direction);
        dt_jsonw_raw(w, name, strlen(name));
    } else {
        DT_JSONW_LIT(w, "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\"");
    }
    put_pid_tid(w, ev->device, ev->stream);
    put_ts_dur(wr, ev);
    DT_JSONW_LIT(w, ", \"args\": {");
    put_external(w, ev);
    put_device_ids(w, ev);
    uint64_t bytes = copy ? ev->u.memcpy.bytes : ev->u.memset.bytes;
    DT_JSONW_LIT(w, ", \"bytes\": ");
    dt_jsonw_u64(w, bytes);
    DT_JSONW_LIT(w, ", \"memory bandwidth (GB/s)\": ");
    uint64_t dur = ev->end_ns - ev->start_ns;
    dt_jsonw_fixed(w, dur ? (double)bytes / (double)dur : 0.0, 6);
    DT_JSONW_LIT(w, "}},\n");
}

static void write_host_event(writer *wr, const devtrace_event *ev)
{
    dt_jsonw *w = &wr->w;
    int runtime = ev->kind == DEVTRACE_KIND_RUNTIME;
    DT_JSONW_LIT(w, "  {\"ph\": \"X\", \"cat\": ");
    put_str(w, runtime ? wr->s->runtime_category : "cpu_op");
    DT_JSONW_LIT(w, ", \"name\": ");
    put_name(wr, ev->name_id);
    put_pid_tid(w, ev->device, ev->stream);
    put_ts_dur(wr, ev);
    DT_JSONW_LIT(w, ", \"args\": {");
    if (!runtime) {
        DT_JSONW_LIT(w, "\"External id\": ");
        dt_jsonw_u64(w, ev->external_id);
        DT_JSONW_LIT(w, "}},\n");
        return;
    }
    put_external(w, ev);
    if (ev->flags & DEVTRACE_EVENT_HAS_CBID) {
        DT_JSONW_LIT(w, "\"cbid\": ");
        dt_jsonw_u64(w, ev->u.runtime.cbid);
        DT_JSONW_LIT(w, ", ");
    }
    DT_JSONW_LIT(w, "\"correlation\": ");
    dt_jsonw_u64(w, ev->correlation);
    DT_JSONW_LIT(w, "}},\n");
}

static void write_flow(writer *wr, const devtrace_event *ev)
{
    dt_jsonw *w = &wr->w;
    int device = ev->kind != DEVTRACE_KIND_RUNTIME;
    if (device)
        DT_JSONW_LIT(w, "  {\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ");
    else
        DT_JSONW_LIT(w, "  {\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ");
    dt_jsonw_u64(w, ev->correlation);
    put_pid_tid(w, ev->device, ev->stream);
    DT_JSONW_LIT(w, ", \"ts\": ");
    dt_jsonw_us3(w, ev->start_ns - wr->s->base_ns);
    DT_JSONW_LIT(w, "},\n");
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
        const struct {
            const char *key;
            int64_t value;
        } fields[] = {
            {"computeMajor", d->compute_major},
            {"computeMinor", d->compute_minor},
            {"maxThreadsPerBlock", d->max_threads_per_block},
            {"maxThreadsPerMultiprocessor", d->max_threads_per_sm},
            {"regsPerBlock", d->regs_per_block},
            {"regsPerMultiprocessor", d->regs_per_sm},
            {"warpSize", d->warp_size},
            {"sharedMemPerBlock", (int64_t)d->smem_per_block},
            {"sharedMemPerMultiprocessor", (int64_t)d->smem_per_sm},
            {"numSms", d->num_sms},
        };
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
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
    static const int kinds[] = {DEVTRACE_KIND_KERNEL, DEVTRACE_KIND_MEMCPY, DEVTRACE_KIND_MEMSET,
                                DEVTRACE_KIND_RUNTIME, DEVTRACE_KIND_CPU_OP};
    DT_JSONW_LIT(w, "{");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (i)
            DT_JSONW_LIT(w, ", ");
        put_str(w, devtrace_kind_name(kinds[i]));
        DT_JSONW_LIT(w, ": ");
        dt_jsonw_u64(w, counts[kinds[i]]);
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
    DT_JSONW_LIT(w, ",\n    \"dropped\": {\"store_full\": ");
    dt_jsonw_u64(w, st->dropped_store_full);
    put_counter(w, "pool_full", st->dropped_pool_full);
    put_counter(w, "vendor", st->dropped_vendor);
    DT_JSONW_LIT(w, "},\n    \"malformed\": {\"records\": ");
    dt_jsonw_u64(w, st->malformed_records);
    put_counter(w, "bytes", st->malformed_bytes);
    DT_JSONW_LIT(w, "},\n    \"out_of_window\": ");
    put_kind_counts(w, st->out_of_window);
    DT_JSONW_LIT(w, ",\n    \"zero_timestamp\": ");
    dt_jsonw_u64(w, st->zero_timestamp);
    put_counter(w, "refused_buffers", st->refused_buffers);
    put_counter(w, "unpaired_flows", st->unpaired_flows);
    put_counter(w, "unresolved_names", st->unresolved_names);
    put_counter(w, "bad_timestamps", st->bad_timestamps);
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
    put_pid_tid(w, pid, tid);
    DT_JSONW_LIT(w, ", \"args\": {");
    put_str(w, key);
    DT_JSONW_LIT(w, ": ");
    if (text)
        put_str(w, text);
    else
        dt_jsonw_i64(w, number);
    DT_JSONW_LIT(w, "}},\n");
}

/* process_name/labels/sort_index for each device, thread_name for each stream and
 * host thread seen. */
static void write_metadata(writer *wr)
{
    dt_session *s = wr->s;
    uint64_t seen_dev[DT_MAX_DEVICES] = {0};
    int nseen = 0;
    uint64_t *pairs = calloc(2 * (s->nsorted + 1), sizeof *pairs);
    size_t npairs = 0;
    char text[64];
    for (size_t i = 0; i < s->nsorted; i++) {
        const devtrace_event *ev = s->sorted[i];
        int host = ev->kind == DEVTRACE_KIND_RUNTIME || ev->kind == DEVTRACE_KIND_CPU_OP;
        uint64_t key = ((uint64_t)host << 63) | ((uint64_t)ev->device << 32) | ev->stream;
        int known = 0;
        for (size_t p = 0; p < npairs && !known; p++)
            known = pairs[p] == key;
        if (known || !pairs)
            continue;
        pairs[npairs++] = key;
        if (npairs > 4096) /* bounded: the metadata is for humans, not for every thread */
            break;
        if (!host) {
            int dev_known = 0;
            for (int d = 0; d < nseen; d++)
                dev_known |= seen_dev[d] == ev->device;
            if (!dev_known && nseen < DT_MAX_DEVICES) {
                seen_dev[nseen++] = ev->device;
                snprintf(text, sizeof text, "GPU %u", ev->device);
                write_metadata_event(wr, "process_name", ev->device, 0, "name", text, 0);
                write_metadata_event(wr, "process_labels", ev->device, 0, "labels", text, 0);
                write_metadata_event(wr, "process_sort_index", ev->device, 0, "sort_index", NULL,
                                     5000000 + (int64_t)ev->device);
            }
            snprintf(text, sizeof text, "stream %u", ev->stream);
        } else {
            snprintf(text, sizeof text, "thread %u", ev->stream);
        }
        write_metadata_event(wr, "thread_name", ev->device, ev->stream, "name", text, 0);
    }
    free(pairs);
}

static void write_trace(writer *wr, const char *trace_name)
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
    for (size_t i = 0; i < s->nsorted; i++) {
        const devtrace_event *ev = s->sorted[i];
        switch (ev->kind) {
        case DEVTRACE_KIND_KERNEL:
            write_kernel(wr, ev);
            break;
        case DEVTRACE_KIND_MEMCPY:
        case DEVTRACE_KIND_MEMSET:
            write_copy_or_set(wr, ev);
            break;
        default:
            write_host_event(wr, ev);
            break;
        }
        if (ev->flags & DT_EVENT_FLOW)
            write_flow(wr, ev);
    }
    DT_JSONW_LIT(w, "  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    uint64_t end = s->window_stop > s->base_ns ? s->window_stop - s->base_ns : 0;
    dt_jsonw_us3(w, end);
    DT_JSONW_LIT(w, "}\n  ],\n  \"traceName\": ");
    put_str(w, trace_name);
    DT_JSONW_LIT(w, "\n}\n");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int dt_chrome_write_buffer(dt_session *s, const char *trace_name, char **out, size_t *outlen)
{
    if (dt_session_finalize(s) != 0)
        return DEVTRACE_ESTATE;
    writer wr = {.s = s};
    wr.nnames = dt_intern_count(&s->names);
    wr.names = calloc(wr.nnames ? wr.nnames : 1, sizeof *wr.names);
    if (!wr.names || dt_jsonw_init(&wr.w, 1 << 16) != 0) {
        free(wr.names);
        return DEVTRACE_ENOMEM;
    }
    write_trace(&wr, trace_name);
    for (uint32_t i = 0; i < wr.nnames; i++)
        free(wr.names[i].text);
    free(wr.names);
    if (wr.w.failed) {
        dt_jsonw_free(&wr.w);
        return DEVTRACE_ENOMEM;
    }
    *out = wr.w.buf;
    *outlen = wr.w.len;
    return 0;
}

int devtrace_write_chrome(devtrace_session *s, const char *path, devtrace_error *err)
{
    if (!s || !path || !*path)
        return dt_error_set(err, DEVTRACE_EINVAL, "no output path given");
    if (s->state == DT_RUNNING)
        devtrace_stop(s);
    if (dt_session_finalize(s) != 0)
        return dt_error_set(err, DEVTRACE_ESTATE, "the session was never started; call devtrace_start first");
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (!tmp)
        return dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    int gz = ends_with(path, ".gz");
    writer wr = {.s = s};
    int rc = 0;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        rc = dt_error_set(err, DEVTRACE_EIO, "cannot write the trace to %s: %s; check that the directory exists and is writable",
                          tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    gzFile gzf = NULL;
    if (gz) {
        const char *lvl = getenv("DEVTRACE_GZIP_LEVEL");
        char mode[8] = "wb1";
        if (lvl && lvl[0] >= '0' && lvl[0] <= '9' && !lvl[1])
            mode[2] = lvl[0];
        gzf = gzdopen(dup(fileno(f)), mode);
        if (!gzf)
            rc = dt_error_set(err, DEVTRACE_ENOMEM, "cannot start gzip compression");
    }
    wr.nnames = dt_intern_count(&s->names);
    wr.names = calloc(wr.nnames ? wr.nnames : 1, sizeof *wr.names);
    if (!rc && (!wr.names || dt_jsonw_init(&wr.w, 1 << 20) != 0))
        rc = dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
    if (!rc) {
        wr.w.file = gz ? NULL : f;
        wr.w.gz = gzf;
        write_trace(&wr, path);
        dt_jsonw_flush(&wr.w);
        int saved = wr.w.err;
        if (gzf && gzclose(gzf) != Z_OK && !wr.w.failed) {
            wr.w.failed = 1;
            saved = errno ? errno : EIO;
        }
        gzf = NULL;
        if (wr.w.failed)
            rc = dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(saved));
    }
    if (gzf)
        gzclose(gzf);
    if (fclose(f) != 0 && !rc)
        rc = dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path) != 0)
        rc = dt_error_set(err, DEVTRACE_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc)
        unlink(tmp);
    for (uint32_t i = 0; i < wr.nnames; i++)
        free(wr.names[i].text);
    free(wr.names);
    dt_jsonw_free(&wr.w);
    free(tmp);
    return rc;
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
    default:
        return "none";
    }
}
