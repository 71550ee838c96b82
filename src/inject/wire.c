/* wire.c: collector -> recorder messages (see wire.h). */
#include "wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct wire_header {
    uint32_t type;
    uint32_t reserved;
    uint64_t length;
} wire_header;
_Static_assert(sizeof(wire_header) == 16, "wire header is 16 bytes");

static int write_all_iov(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

int dt_wire_send2(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
    wire_header h = {type, 0, (uint64_t)alen + blen};
    struct iovec iov[3] = {{&h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
    return write_all_iov(fd, iov, blen ? 3 : alen ? 2 : 1);
}

int dt_wire_send(int fd, uint32_t type, const void *payload, size_t len)
{
    return dt_wire_send2(fd, type, payload, len, NULL, 0);
}

void dt_wire_reader_init(dt_wire_reader *r)
{
    memset(r, 0, sizeof *r);
}

void dt_wire_reader_free(dt_wire_reader *r)
{
    free(r->buf);
    free(r->name_map);
    free(r->target_map);
    devtrace_close(r->meta);
    memset(r, 0, sizeof *r);
}

int dt_wire_reader_keep_metadata(dt_wire_reader *r)
{
    devtrace_error err;
    if (!r->meta && !(r->meta = dt_session_new_offline("none", "", NULL, &err)))
        return -1;
    return 0;
}

static void copy_identity(dt_session *to, const dt_session *from)
{
    memcpy(to->backend_name, from->backend_name, sizeof to->backend_name);
    memcpy(to->validation, from->validation, sizeof to->validation);
    memcpy(to->runtime_category, from->runtime_category, sizeof to->runtime_category);
    memcpy(to->unavailable_reason, from->unavailable_reason, sizeof to->unavailable_reason);
    to->rank = from->rank;
    to->world_size = from->world_size;
}

void dt_wire_reader_feed_into(dt_wire_reader *r, dt_session *s)
{
    if (!r->meta || !s)
        return;
    dt_session *m = r->meta;
    if (r->hello)
        copy_identity(s, m);
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->nsamples; i++)
        dt_add_clock_sample(s, m->samples[i].vendor_ns, m->samples[i].host_ns);
    for (size_t i = 0; i < m->ntick_samples; i++)
        dt_add_tick_sample(s, m->tick_samples[i].vendor_ns, m->tick_samples[i].host_ns);
    pthread_mutex_unlock(&m->lock);
}

/* The session's id of a name the reader holds as meta_id (a reader that keeps its metadata);
 * interned there the first time. 0 when out of memory. */
static uint32_t target_name(dt_wire_reader *r, dt_session *s, uint32_t meta_id)
{
    if (!meta_id)
        return 0;
    if (r->target != s) {
        if (r->target_map)
            memset(r->target_map, 0, r->target_map_len * sizeof *r->target_map);
        r->target = s;
    }
    if (!r->target_map || meta_id >= r->target_map_len) { /* no map yet, or too short for the id */
        uint32_t kept = r->target_map ? r->target_map_len : 0;
        uint32_t n = kept ? kept : 1024;
        while (n <= meta_id)
            n *= 2;
        uint32_t *m = realloc(r->target_map, n * sizeof *m);
        if (!m)
            return 0;
        memset(m + kept, 0, (n - kept) * sizeof *m);
        r->target_map = m;
        r->target_map_len = n;
    }
    if (!r->target_map[meta_id])
        r->target_map[meta_id] = dt_session_intern(s, dt_intern_get(&r->meta->names, meta_id));
    return r->target_map[meta_id];
}

static uint32_t read_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t read_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static int map_name(dt_wire_reader *r, uint32_t remote, uint32_t local)
{
    if (remote >= (1u << 26))
        return -1;
    if (remote >= r->name_map_len) {
        uint32_t n = r->name_map_len ? r->name_map_len : 1024;
        while (n <= remote)
            n *= 2;
        uint32_t *m = realloc(r->name_map, n * sizeof *m);
        if (!m)
            return -1;
        memset(m + r->name_map_len, 0, (n - r->name_map_len) * sizeof *m);
        r->name_map = m;
        r->name_map_len = n;
    }
    r->name_map[remote] = local;
    return 0;
}

static int apply_names(dt_wire_reader *r, dt_session *s, const unsigned char *p, size_t n)
{
    while (n >= 8) {
        uint32_t id = read_u32(p), len = read_u32(p + 4);
        if (len > n - 8)
            return -1;
        uint32_t local = dt_intern_n(r->meta ? &r->meta->names : &s->names, (const char *)p + 8, len);
        if (map_name(r, id, local) != 0)
            return -1;
        p += 8 + len;
        n -= 8 + (size_t)len;
    }
    return n == 0 ? 0 : -1;
}

/* The events of one message, remapped, written straight into the session's store (one
 * run: the chunk's count published once per message, not once per event). */
static int apply_events(dt_wire_reader *r, dt_session *s, const unsigned char *p, size_t n)
{
    if (n % sizeof(devtrace_event))
        return -1;
    dt_store_cursor run = {0};
    for (size_t i = 0; i < n; i += sizeof(devtrace_event)) {
        uint16_t kind;
        memcpy(&kind, p + i + offsetof(devtrace_event, kind), sizeof kind);
        if (kind == DEVTRACE_KIND_NONE || kind >= DEVTRACE_KIND_COUNT) {
            r->malformed++;
            continue;
        }
        if (!s) {
            r->discarded[kind]++; /* between capture windows */
            continue;
        }
        r->events++;
        devtrace_event *ev = dt_store_run_next(&run, &s->store);
        if (!ev) {
            dt_store_cursor_drop(&run); /* the store is at its bound: counted there */
            continue;
        }
        memcpy(ev, p + i, sizeof *ev);
        ev->name_id = ev->name_id < r->name_map_len ? r->name_map[ev->name_id] : 0;
        if (r->meta)
            ev->name_id = target_name(r, s, ev->name_id);
        ev->flags &= (uint16_t)~DT_EVENT_FLOW;
        if (!dt_lane_is_host(ev))
            ev->device += r->device_base;
        if (ev->correlation)
            ev->correlation += r->correlation_base;
        dt_store_run_commit(&run);
    }
    dt_store_run_close(&run);
    return 0;
}

static void copy_cstr(char *dst, size_t cap, const unsigned char **p, const unsigned char *end)
{
    const unsigned char *nul = memchr(*p, 0, (size_t)(end - *p));
    size_t len = nul ? (size_t)(nul - *p) : (size_t)(end - *p);
    if (dst) { /* NULL: skipped */
        size_t keep = len < cap - 1 ? len : cap - 1;
        memcpy(dst, *p, keep);
        dst[keep] = '\0';
    }
    *p += nul ? len + 1 : len;
}

static int apply_hello(dt_wire_reader *r, dt_session *s, const unsigned char *p, size_t n)
{
    if (n < 12 || read_u32(p) != DT_WIRE_VERSION)
        return -1;
    r->pid = read_u32(p + 4);
    r->ppid = read_u32(p + 8);
    r->hello = 1;
    const unsigned char *q = p + 12, *end = p + n;
    dt_session *to = r->meta ? r->meta : s; /* NULL: a reader that hands its messages on keeps the pid and command */
    copy_cstr(to ? to->backend_name : NULL, sizeof to->backend_name, &q, end);
    copy_cstr(to ? to->validation : NULL, sizeof to->validation, &q, end);
    copy_cstr(to ? to->runtime_category : NULL, sizeof to->runtime_category, &q, end);
    copy_cstr(to ? to->unavailable_reason : NULL, sizeof to->unavailable_reason, &q, end);
    copy_cstr(r->command, sizeof r->command, &q, end);
    if (r->meta && s)
        copy_identity(s, r->meta);
    return 0;
}

size_t dt_wire_stats_encode(const devtrace_stats *st, unsigned char *out)
{
    uint32_t head[2] = {DT_STATS_NCOUNTERS, 0};
    memcpy(out, head, sizeof head);
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++) {
        uint64_t v = dt_stats_counter_value(st, i);
        memcpy(out + sizeof head + 8 * (size_t)i, &v, 8);
    }
    return DT_WIRE_STATS_BYTES;
}

/* Every counter of the table, added (the program's counts join the recorder's own). */
static int add_stats(dt_session *s, const unsigned char *p, size_t n)
{
    if (n != DT_WIRE_STATS_BYTES || read_u32(p) != DT_STATS_NCOUNTERS)
        return -1;
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++)
        *dt_stats_counter_at(&s->stats, i) += read_u64(p + 8 + 8 * (size_t)i);
    return 0;
}

/* A sample, kept for later sessions too when the reader keeps its metadata. */
static void add_sample(dt_wire_reader *r, dt_session *s, void (*add)(dt_session *, uint64_t, uint64_t),
                       const unsigned char *p)
{
    if (r->meta)
        add(r->meta, read_u64(p), read_u64(p + 8));
    if (s)
        add(s, read_u64(p), read_u64(p + 8));
}

static int apply(dt_wire_reader *r, dt_session *s, uint32_t type, const unsigned char *p, size_t n)
{
    dt_session *into = s ? s : r->meta; /* between capture windows: the metadata's */
    /* A reader that hands its messages on keeps these without a session. */
    int reader_only = r->on_message && (type == DT_WIRE_WINDOW || type == DT_WIRE_RANK || type == DT_WIRE_END ||
                                        type == DT_WIRE_FORKED || type == DT_WIRE_CRASH);
    if (!into && !reader_only)
        return -1; /* no session, and no metadata kept: nowhere to put it (counted as malformed) */
    switch (type) {
    case DT_WIRE_HELLO:
        return apply_hello(r, s, p, n);
    case DT_WIRE_NAMES:
        return apply_names(r, s, p, n);
    case DT_WIRE_EVENTS:
        return apply_events(r, s, p, n);
    case DT_WIRE_CLOCK:
        if (n != 16)
            return -1;
        add_sample(r, s, dt_add_clock_sample, p);
        return 0;
    case DT_WIRE_TICKS:
        if (n != 16)
            return -1;
        add_sample(r, s, dt_add_tick_sample, p);
        return 0;
    case DT_WIRE_WINDOW:
        if (n != 16)
            return -1;
        if (read_u64(p))
            r->window_start = read_u64(p);
        if (read_u64(p + 8))
            r->window_stop = read_u64(p + 8);
        return 0;
    case DT_WIRE_DEVICE: {
        if (n != sizeof(dt_device_props))
            return -1;
        dt_device_props d;
        memcpy(&d, p, sizeof d);
        d.name[sizeof d.name - 1] = '\0';
        d.id += (int)r->device_base;
        dt_add_device(into, &d);
        return 0;
    }
    case DT_WIRE_NOTE:
        dt_add_note(into, "%.*s", (int)(n > 480 ? 480 : n), (const char *)p);
        return 0;
    case DT_WIRE_STATS:
        return add_stats(into, p, n);
    case DT_WIRE_RANK:
        if (n != 8)
            return -1;
        r->rank = (int32_t)read_u32(p), r->world_size = (int32_t)read_u32(p + 4);
        if (s)
            s->rank = (int)read_u32(p), s->world_size = (int)read_u32(p + 4);
        if (r->meta)
            r->meta->rank = (int)read_u32(p), r->meta->world_size = (int)read_u32(p + 4);
        return 0;
    case DT_WIRE_END:
        r->ended = 1;
        return 0;
    case DT_WIRE_FORKED:
        if (n != 8 || !read_u32(p))
            return -1;
        r->forked_pid = read_u32(p);
        r->forked_ppid = read_u32(p + 4);
        return 0;
    case DT_WIRE_CRASH:
        if (n != sizeof(dt_wire_crash))
            return -1;
        memcpy(&r->crash, p, sizeof r->crash);
        r->crashed = 1;
        return 0;
    default:
        return -1;
    }
}

int dt_wire_reader_apply(dt_wire_reader *r, dt_session *s, uint32_t type, const void *payload, size_t n)
{
    if (apply(r, s, type, payload, n) == 0)
        return 0;
    r->malformed++;
    return -1;
}

/* What a reader that hands its messages on (on_message) keeps of one: the process's
 * identity and end, its window and rank, and how many events it sent. */
static void keep_own_part(dt_wire_reader *r, uint32_t type, const unsigned char *p, size_t n)
{
    switch (type) {
    case DT_WIRE_HELLO:
        apply_hello(r, NULL, p, n);
        return;
    case DT_WIRE_EVENTS:
        if (n % sizeof(devtrace_event))
            return;
        for (size_t i = 0; i < n; i += sizeof(devtrace_event)) {
            uint16_t kind;
            memcpy(&kind, p + i + offsetof(devtrace_event, kind), sizeof kind);
            r->events += kind != DEVTRACE_KIND_NONE && kind < DEVTRACE_KIND_COUNT;
        }
        return;
    case DT_WIRE_WINDOW:
    case DT_WIRE_RANK:
    case DT_WIRE_END:
    case DT_WIRE_FORKED:
    case DT_WIRE_CRASH:
        apply(r, NULL, type, p, n); /* these touch the reader only, without a session */
        return;
    default:
        return;
    }
}

/* One complete message: applied, or handed on. */
static void take_message(dt_wire_reader *r, dt_session *s, uint32_t type, const unsigned char *p, size_t n)
{
    if (r->on_message) {
        if (r->on_message(r->on_message_user, type, p, n) != 0)
            r->handed_failed++;
        keep_own_part(r, type, p, n);
        return;
    }
    if (apply(r, s, type, p, n) != 0)
        r->malformed++;
}

void *dt_wire_reader_space(dt_wire_reader *r, size_t want)
{
    if (r->cap - r->len < want) {
        size_t cap = r->cap ? r->cap : 1 << 20;
        while (cap - r->len < want)
            cap *= 2;
        unsigned char *b = realloc(r->buf, cap);
        if (!b)
            return NULL;
        r->buf = b;
        r->cap = cap;
    }
    return r->buf + r->len;
}

size_t dt_wire_reader_room(const dt_wire_reader *r)
{
    return r->cap - r->len;
}

void dt_wire_reader_commit(dt_wire_reader *r, dt_session *s, size_t n)
{
    r->len += n;
    size_t off = 0;
    while (r->len - off >= sizeof(wire_header)) {
        wire_header h;
        memcpy(&h, r->buf + off, sizeof h);
        if (h.length > DT_WIRE_MAX_PAYLOAD || h.reserved != 0) {
            if (r->on_message) /* counted where the messages are applied */
                take_message(r, s, 0, NULL, 0);
            else
                r->malformed++;
            off = r->len; /* the stream is corrupt: nothing after this can be trusted */
            break;
        }
        if (r->len - off - sizeof h < h.length)
            break;
        take_message(r, s, h.type, r->buf + off + sizeof h, (size_t)h.length);
        off += sizeof h + (size_t)h.length;
    }
    if (off == 0)
        return; /* a message still arriving stays where it is */
    memmove(r->buf, r->buf + off, r->len - off);
    r->len -= off;
}

int dt_wire_feed(dt_wire_reader *r, dt_session *s, const void *data, size_t n)
{
    void *to = dt_wire_reader_space(r, n);
    if (!to)
        return -1;
    memcpy(to, data, n);
    dt_wire_reader_commit(r, s, n);
    return 0;
}

size_t dt_wire_pending(const dt_wire_reader *r)
{
    return r->len;
}
