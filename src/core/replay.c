/* replay.c: rebuilding a session from a raw capture (.dtraw, raw.h): the capture's
 * session metadata, devices, notes, clock samples, window and CPU operators as they were,
 * and every vendor buffer decoded again through the decoders and scanner of the engine
 * that wrote it (dt_raw_decoder), exactly as in live collection. A capture of a live
 * session replays to the same trace, byte for byte, given the same trace name.
 *
 * Passes over the bytes, in this order: the metadata (to name the session), the strings
 * (record pointers resolve through them), the sizes of kinds without a layout and the clock
 * samples (the MCPTI scanner bounds record times by them), the buffers, then the rest in file order (the
 * vendor's names apply after every buffer, as they did live). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "raw.h"
#include "session.h"

typedef struct replay_ctx {
    dt_session *s;
    const dt_raw_decoder *decoder;
    void *dst;
    int have_meta;
    dt_raw_meta_info meta;
    uint64_t unknown_counters;
} replay_ctx;

static void on_meta(void *user, const dt_raw_meta_info *m)
{
    replay_ctx *c = user;
    c->meta = *m;
    c->have_meta = 1;
}

static void on_string(void *user, uint64_t pointer, const char *s, uint32_t len)
{
    replay_ctx *c = user;
    c->decoder->string(c->dst, pointer, s, len);
}

static void on_kind_size(void *user, uint32_t kind, uint32_t size)
{
    replay_ctx *c = user;
    c->decoder->kind_size(c->dst, kind, size);
}

static void on_buffer(void *user, uint32_t mode, const uint8_t *data, size_t valid_size)
{
    replay_ctx *c = user;
    c->decoder->buffer(c->dst, mode, data, valid_size);
}

static void on_api_name(void *user, uint32_t domain, uint32_t cbid, const char *name, uint32_t len)
{
    replay_ctx *c = user;
    c->decoder->api_name(c->dst, domain, cbid, name, len);
}

static void on_clock(void *user, uint64_t vendor_ns, uint64_t host_ns)
{
    replay_ctx *c = user;
    dt_add_clock_sample(c->s, vendor_ns, host_ns);
}

static void on_window(void *user, uint64_t start_ns, uint64_t stop_ns)
{
    replay_ctx *c = user;
    pthread_mutex_lock(&c->s->lock);
    c->s->window_start = start_ns;
    c->s->window_stop = stop_ns;
    pthread_mutex_unlock(&c->s->lock);
}

static void on_device(void *user, const dt_device_props *p)
{
    replay_ctx *c = user;
    dt_add_device(c->s, p);
}

static void on_note(void *user, const char *text, uint32_t len)
{
    replay_ctx *c = user;
    dt_add_note(c->s, "%.*s", (int)(len > 2048 ? 2048 : len), text);
}

/* A loss counted outside the buffers, by its devtrace_stats name. */
static void on_counter(void *user, const char *name, uint32_t len, uint64_t value)
{
    replay_ctx *c = user;
    devtrace_stats *st = &c->s->stats;
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++) {
        const char *field = dt_stats_counters[i].field;
        if (strlen(field) == len && memcmp(field, name, len) == 0) {
            *dt_stats_counter_at(st, i) += value;
            return;
        }
    }
    c->unknown_counters++;
}

static void on_cpu_op(void *user, uint64_t start_ns, uint64_t end_ns, uint64_t external_id, uint32_t pid, uint32_t tid,
                      const char *name, uint32_t len)
{
    replay_ctx *c = user;
    devtrace_event ev;
    dt_event_zero(&ev);
    ev.kind = DEVTRACE_KIND_CPU_OP;
    ev.flags = DEVTRACE_EVENT_HAS_EXTERNAL | DEVTRACE_EVENT_HOST_CLOCK;
    ev.start_ns = start_ns;
    ev.end_ns = end_ns;
    ev.external_id = external_id;
    ev.device = pid;
    ev.stream = tid;
    ev.name_id = dt_intern_n(&c->s->names, name, len);
    dt_emit(c->s, &ev);
}

/* A string of the META chunk, NUL-terminated into out ("" when absent). */
static void meta_string(const char *p, uint32_t len, char *out, size_t cap)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

int dt_replay_capture_with(const dt_backend_table *t, const uint8_t *data, size_t len, const dt_replay_options *opt,
                           dt_session **out, dt_raw_info *info_out, devtrace_error *err)
{
    dt_raw_info info;
    replay_ctx c;
    memset(&c, 0, sizeof c);
    *out = NULL;

    /* 1. the header and the session's metadata */
    dt_raw_visitor v = {.user = &c, .meta = on_meta};
    int rc = dt_raw_parse(data, len, &v, &info, err);
    if (rc != 0)
        return rc;
    char backend[DT_RAW_MAX_VENDOR + 16], validation[256], category[40];
    const char *vendor = opt && opt->backend ? opt->backend : info.vendor;
    /* Another vendor's decoders read another layout: refused, unless the engine says the
     * two write the same records (CUPTI and the CUDA-shaped vendors), or does not know the
     * capture's vendor (then decoding it as a known one is the way to read it: noted). */
    const dt_backend *decoding = dt_backend_table_find(t, vendor);
    if (!decoding || !decoding->raw_decoder)
        return dt_error_set(err, DEVTRACE_EUNKNOWN_BACKEND,
                            "no backend named \"%s\" that replays raw captures is "
                            "compiled into this devtrace; decode it as another with --backend NAME (see 'devtrace "
                            "list')",
                            vendor);
    c.decoder = decoding->raw_decoder; /* the backend's own (dt_backend.raw_decoder) */
    int other_vendor = strcmp(vendor, info.vendor) != 0;
    if (other_vendor && c.decoder->same_records(dt_backend_table_find(t, info.vendor), decoding) == 0)
        return dt_error_set(err, DEVTRACE_EINVAL,
                            "the capture holds %s's records, and --backend %s would decode them as %s's, another "
                            "vendor's layouts; drop --backend to decode it as %s",
                            info.vendor, vendor, vendor, info.vendor);
    if (c.have_meta && !(opt && opt->backend)) {
        meta_string(c.meta.backend, c.meta.backend_len, backend, sizeof backend);
        meta_string(c.meta.validation, c.meta.validation_len, validation, sizeof validation);
    } else {
        const dt_backend *b = dt_backend_table_find(t, vendor);
        snprintf(backend, sizeof backend, "%s", vendor);
        if (b)
            dt_backend_validation_text(b, validation, sizeof validation);
        else
            snprintf(validation, sizeof validation, "replayed from a %s capture", info.vendor);
    }
    if (c.have_meta && c.meta.runtime_category_len) {
        meta_string(c.meta.runtime_category, c.meta.runtime_category_len, category, sizeof category);
    } else {
        const dt_backend *b = dt_backend_table_find(t, vendor);
        snprintf(category, sizeof category, "%s",
                 b && b->runtime_category ? b->runtime_category : "privateuse1_runtime");
    }
    c.s = dt_session_new_offline(backend, validation, category, err);
    if (!c.s)
        return DEVTRACE_ENOMEM;
    if (c.have_meta) {
        c.s->rank = c.meta.rank;
        c.s->world_size = c.meta.world_size;
    }
    if (other_vendor)
        dt_add_note(c.s, "the capture was written by %s and its buffers were decoded as %s's records (--backend %s)",
                    info.vendor, vendor, vendor);
    c.dst = c.decoder->open(c.s, decoding, info.api_version, err);
    if (!c.dst) {
        devtrace_close(c.s);
        return err ? err->code : DEVTRACE_EUNKNOWN_BACKEND;
    }

    /* 2. the strings and clock samples (decoders bound record times by the samples), 3. the
     * buffers, 4. the rest in file order */
    dt_raw_visitor strings = {.user = &c, .string = on_string, .kind_size = on_kind_size, .clock = on_clock};
    dt_raw_visitor buffers = {.user = &c, .buffer_mode = on_buffer};
    dt_raw_visitor rest = {.user = &c,
                           .api_name = on_api_name,
                           .window = on_window,
                           .device = on_device,
                           .note = on_note,
                           .counter = on_counter,
                           .cpu_op = on_cpu_op};
    dt_raw_parse(data, len, &strings, &info, NULL);
    dt_raw_parse(data, len, &buffers, &info, NULL);
    dt_raw_parse(data, len, &rest, &info, NULL);
    c.decoder->close(c.dst);

    if (!info.has_window)
        dt_add_note(c.s,
                    "the raw capture ends before its session stopped (the program was killed, or called _exit): "
                    "it has no window, devices or notes; events come from its %llu buffers",
                    (unsigned long long)info.buffers);
    if (info.truncated)
        dt_add_note(c.s, "the raw capture's last chunk is cut short and was ignored");
    if (info.unknown_chunks)
        dt_add_note(c.s, "%llu chunks of kinds this devtrace does not know were skipped (a newer capture?)",
                    (unsigned long long)info.unknown_chunks);
    if (c.unknown_counters)
        dt_add_note(c.s, "%llu loss counters this devtrace does not know were skipped",
                    (unsigned long long)c.unknown_counters);
    if (info_out)
        *info_out = info;
    *out = c.s;
    return 0;
}

int dt_replay_file_with(const dt_backend_table *t, const char *path, const dt_replay_options *opt, dt_session **out,
                        dt_raw_info *info, devtrace_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dt_error_set(err, DEVTRACE_EIO, "cannot open the raw capture %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dt_error_set(err, DEVTRACE_EIO, "%s is not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (len && map == MAP_FAILED)
        return dt_error_set(err, DEVTRACE_EIO, "cannot read the raw capture %s: %s", path, strerror(errno));
    static const uint8_t empty[1];
    int rc = dt_replay_capture_with(t, len ? map : empty, len, opt, out, info, err);
    if (rc != 0)
        dt_error_wrap(err, "replaying %s", path);
    if (len)
        munmap(map, len);
    return rc;
}
