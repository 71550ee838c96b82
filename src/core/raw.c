/* raw.c: writing and parsing the .dtraw raw capture container (see raw.h and
 * docs/raw-format.md). The writer appends whole chunks and flushes each, so a process
 * that is killed (or forks) leaves a file whose every complete chunk is readable; the
 * parser checks every length against the bytes it has before reading. */
#include "raw.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "new_file.h"

static const char magic[8] = {'D', 'T', 'R', 'A', 'W', '1', 0, 0};

struct dt_raw_writer {
    FILE *f;
    char *path; /* owned */
    pthread_mutex_t lock;
    int failed;
    int err;
    uint64_t *seen; /* pointer values already written as STR (open addressing, 0 = empty) */
    size_t seen_mask, seen_count;
};

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void write_bytes(dt_raw_writer *w, const void *p, size_t n)
{
    if (!w->failed && n && fwrite(p, 1, n, w->f) != n) {
        w->failed = 1;
        w->err = errno ? errno : EIO;
    }
}

/* One chunk: tag, length, a fixed head, then a variable tail (lock held). */
static void write_chunk(dt_raw_writer *w, const char tag[4], const void *head, size_t hlen, const void *tail,
                        size_t tlen)
{
    unsigned char h[12];
    memcpy(h, tag, 4);
    put_u64(h + 4, (uint64_t)hlen + tlen);
    write_bytes(w, h, sizeof h);
    write_bytes(w, head, hlen);
    write_bytes(w, tail, tlen);
    if (!w->failed && fflush(w->f) != 0) {
        w->failed = 1;
        w->err = errno ? errno : EIO;
    }
}

static void write_chunk_locked(dt_raw_writer *w, const char tag[4], const void *head, size_t hlen, const void *tail,
                               size_t tlen)
{
    pthread_mutex_lock(&w->lock);
    write_chunk(w, tag, head, hlen, tail, tlen);
    pthread_mutex_unlock(&w->lock);
}

/* A growing little-endian payload (only for the small chunks written at stop). */
typedef struct payload {
    unsigned char buf[512];
    size_t len;
} payload;

static void pl_u32(payload *p, uint32_t v)
{
    if (p->len + 4 <= sizeof p->buf)
        put_u32(p->buf + p->len, v);
    p->len += 4;
}

static void pl_u64(payload *p, uint64_t v)
{
    if (p->len + 8 <= sizeof p->buf)
        put_u64(p->buf + p->len, v);
    p->len += 8;
}

/* u32 length, then the bytes (cut to what fits: these strings are bounded by the session). */
static void pl_str(payload *p, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (p->len + 4 + n > sizeof p->buf)
        n = p->len + 4 <= sizeof p->buf ? sizeof p->buf - p->len - 4 : 0;
    pl_u32(p, (uint32_t)n);
    if (n)
        memcpy(p->buf + p->len, s, n);
    p->len += n;
}

dt_raw_writer *dt_raw_open(const char *path, const char *vendor, uint32_t api_version, devtrace_error *err)
{
    size_t vlen = strlen(vendor);
    if (vlen > DT_RAW_MAX_VENDOR) {
        dt_error_set(err, DEVTRACE_EINVAL, "vendor name too long for a raw capture");
        return NULL;
    }
    dt_raw_writer *w = calloc(1, sizeof *w);
    if (!w) {
        dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
        return NULL;
    }
    w->seen_mask = 1023;
    w->seen = calloc(w->seen_mask + 1, sizeof *w->seen);
    w->path = strdup(path);
    int fd = w->seen && w->path ? dt_file_create_or_empty(path) : -1; /* never through a link */
    int open_errno = fd < 0 ? (w->seen && w->path ? errno : ENOMEM) : 0;
    w->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (fd >= 0 && !w->f) {
        open_errno = errno;
        close(fd);
    }
    if (!w->f) {
        if (dt_file_refusal(open_errno))
            dt_error_set(err, DEVTRACE_EIO, "cannot write the raw capture %s: %s", path, dt_file_refusal(open_errno));
        else
            dt_error_set(err, DEVTRACE_EIO,
                         "cannot write the raw capture %s: %s; check that the directory exists and is writable", path,
                         strerror(open_errno));
        free(w->seen);
        free(w->path);
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    unsigned char head[8 + 8 + DT_RAW_MAX_VENDOR + 4];
    memcpy(head, magic, 8);
    put_u32(head + 8, DT_RAW_VERSION);
    put_u32(head + 12, (uint32_t)vlen);
    memcpy(head + 16, vendor, vlen);
    put_u32(head + 16 + vlen, api_version);
    write_bytes(w, head, 20 + vlen);
    if (!w->failed && fflush(w->f) != 0) {
        w->failed = 1;
        w->err = errno ? errno : EIO;
    }
    return w;
}

void dt_raw_buffer(dt_raw_writer *w, const void *data, uint64_t valid_size)
{
    if (!w)
        return;
    unsigned char h[8];
    put_u64(h, valid_size);
    write_chunk_locked(w, "BUF ", h, sizeof h, data, (size_t)valid_size);
}

void dt_raw_buffer_mode(dt_raw_writer *w, uint32_t mode, const void *data, uint64_t valid_size)
{
    if (!w)
        return;
    if (mode == DT_RAW_BUFFER_DECODE) {
        dt_raw_buffer(w, data, valid_size);
        return;
    }
    unsigned char h[16];
    put_u32(h, mode);
    put_u32(h + 4, 0);
    put_u64(h + 8, valid_size);
    write_chunk_locked(w, "BUFM", h, sizeof h, data, (size_t)valid_size);
}

void dt_raw_counter(dt_raw_writer *w, const char *name, uint64_t value)
{
    if (!w || !name)
        return;
    payload p = {.len = 0};
    pl_u64(&p, value);
    pl_str(&p, name);
    write_chunk_locked(w, "CNT ", p.buf, p.len, NULL, 0);
}

void dt_raw_device(dt_raw_writer *w, const dt_device_props *d)
{
    if (!w || !d)
        return;
    payload p = {.len = 0};
    pl_u32(&p, (uint32_t)d->id);
    pl_u64(&p, d->total_global_mem);
    const int fields[] = {d->compute_major,     d->compute_minor,  d->max_threads_per_block, d->max_threads_per_sm,
                          d->max_blocks_per_sm, d->regs_per_block, d->regs_per_sm,           d->warp_size,
                          d->num_sms,           d->has_occupancy};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        pl_u32(&p, (uint32_t)fields[i]);
    pl_u64(&p, d->smem_per_block);
    pl_u64(&p, d->smem_per_sm);
    pl_str(&p, d->name);
    write_chunk_locked(w, "DEV ", p.buf, p.len, NULL, 0);
}

void dt_raw_kind_size(dt_raw_writer *w, uint32_t kind, uint32_t size)
{
    if (!w)
        return;
    unsigned char h[8];
    put_u32(h, kind);
    put_u32(h + 4, size);
    write_chunk_locked(w, "KSZ ", h, sizeof h, NULL, 0);
}

void dt_raw_note(dt_raw_writer *w, const char *text)
{
    if (!w || !text)
        return;
    write_chunk_locked(w, "NOTE", text, strlen(text), NULL, 0);
}

void dt_raw_meta(dt_raw_writer *w, int32_t rank, int32_t world_size, const char *backend, const char *validation,
                 const char *runtime_category)
{
    if (!w)
        return;
    payload p = {.len = 0};
    pl_u32(&p, (uint32_t)rank);
    pl_u32(&p, (uint32_t)world_size);
    pl_str(&p, backend);
    pl_str(&p, validation);
    pl_str(&p, runtime_category);
    write_chunk_locked(w, "META", p.buf, p.len, NULL, 0);
}

void dt_raw_cpu_op(dt_raw_writer *w, const devtrace_event *ev, const char *name)
{
    if (!w || !ev)
        return;
    unsigned char h[36];
    size_t n = name ? strlen(name) : 0;
    put_u64(h, ev->start_ns);
    put_u64(h + 8, ev->end_ns);
    put_u64(h + 16, ev->external_id);
    put_u32(h + 24, ev->device);
    put_u32(h + 28, ev->stream);
    put_u32(h + 32, (uint32_t)n);
    write_chunk_locked(w, "OPS ", h, sizeof h, name, n);
}

/* 1 when the pointer is new (and now remembered). */
static int remember_pointer(dt_raw_writer *w, uint64_t p)
{
    if (p == 0)
        return 0;
    if (w->seen_count * 2 >= w->seen_mask) {
        size_t mask = w->seen_mask * 2 + 1;
        uint64_t *seen = calloc(mask + 1, sizeof *seen);
        if (!seen)
            return 1; /* write it again rather than lose it */
        for (size_t i = 0; i <= w->seen_mask; i++) {
            if (!w->seen[i])
                continue;
            size_t j = (size_t)(w->seen[i] * 0x9E3779B97F4A7C15ull >> 17) & mask;
            while (seen[j])
                j = (j + 1) & mask;
            seen[j] = w->seen[i];
        }
        free(w->seen);
        w->seen = seen;
        w->seen_mask = mask;
    }
    size_t i = (size_t)(p * 0x9E3779B97F4A7C15ull >> 17) & w->seen_mask;
    for (; w->seen[i]; i = (i + 1) & w->seen_mask)
        if (w->seen[i] == p)
            return 0;
    w->seen[i] = p;
    w->seen_count++;
    return 1;
}

void dt_raw_string(dt_raw_writer *w, uint64_t pointer, const char *s)
{
    if (!w || !s)
        return;
    pthread_mutex_lock(&w->lock);
    if (remember_pointer(w, pointer)) {
        unsigned char h[12];
        size_t n = strlen(s);
        put_u64(h, pointer);
        put_u32(h + 8, (uint32_t)n);
        write_chunk(w, "STR ", h, sizeof h, s, n);
    }
    pthread_mutex_unlock(&w->lock);
}

void dt_raw_clock(dt_raw_writer *w, uint64_t vendor_ns, uint64_t host_ns)
{
    if (!w)
        return;
    unsigned char h[16];
    put_u64(h, vendor_ns);
    put_u64(h + 8, host_ns);
    write_chunk_locked(w, "CLK ", h, sizeof h, NULL, 0);
}

void dt_raw_api_name(dt_raw_writer *w, uint32_t domain, uint32_t cbid, const char *name)
{
    if (!w || !name)
        return;
    unsigned char h[12];
    size_t n = strlen(name);
    put_u32(h, domain);
    put_u32(h + 4, cbid);
    put_u32(h + 8, (uint32_t)n);
    write_chunk_locked(w, "API ", h, sizeof h, name, n);
}

void dt_raw_window(dt_raw_writer *w, uint64_t start_ns, uint64_t stop_ns)
{
    if (!w)
        return;
    unsigned char h[16];
    put_u64(h, start_ns);
    put_u64(h + 8, stop_ns);
    write_chunk_locked(w, "WIN ", h, sizeof h, NULL, 0);
}

int dt_raw_close(dt_raw_writer *w, devtrace_error *err)
{
    if (!w)
        return 0;
    int rc = 0;
    if (fclose(w->f) != 0 && !w->failed) {
        w->failed = 1;
        w->err = errno;
    }
    if (w->failed)
        rc = dt_error_set(err, DEVTRACE_EIO, "writing the raw capture %s failed: %s", w->path, strerror(w->err));
    pthread_mutex_destroy(&w->lock);
    free(w->seen);
    free(w->path);
    free(w);
    return rc;
}

/* A bounded reader over one chunk's payload. */
typedef struct reader {
    const uint8_t *p;
    uint64_t left;
    int bad;
} reader;

/* The next n bytes of the payload; NULL when fewer are left, and the reader is bad from
 * then on (every later read gives 0 or ""). */
static const uint8_t *rd_take(reader *r, uint64_t n)
{
    if (r->bad || r->left < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

static uint32_t rd_u32(reader *r)
{
    const uint8_t *p = rd_take(r, 4);
    return p ? get_u32(p) : 0;
}

static uint64_t rd_u64(reader *r)
{
    const uint8_t *p = rd_take(r, 8);
    return p ? get_u64(p) : 0;
}

/* u32 length, then that many bytes. */
static const char *rd_str(reader *r, uint32_t *len)
{
    *len = rd_u32(r);
    const char *s = (const char *)rd_take(r, *len);
    if (!s) {
        *len = 0;
        return "";
    }
    return s;
}

static int parse_device(reader *r, const dt_raw_visitor *v)
{
    dt_device_props d;
    memset(&d, 0, sizeof d);
    d.id = (int)rd_u32(r);
    d.total_global_mem = rd_u64(r);
    int *fields[] = {&d.compute_major,     &d.compute_minor,  &d.max_threads_per_block, &d.max_threads_per_sm,
                     &d.max_blocks_per_sm, &d.regs_per_block, &d.regs_per_sm,           &d.warp_size,
                     &d.num_sms,           &d.has_occupancy};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = (int)rd_u32(r);
    d.smem_per_block = rd_u64(r);
    d.smem_per_sm = rd_u64(r);
    uint32_t n;
    const char *name = rd_str(r, &n);
    if (r->bad || r->left)
        return -1;
    if (n >= sizeof d.name)
        n = sizeof d.name - 1;
    memcpy(d.name, name, n);
    d.name[n] = '\0';
    if (v->device)
        v->device(v->user, &d);
    return 0;
}

static int parse_chunk(const uint8_t *tag, const uint8_t *p, uint64_t n, const dt_raw_visitor *v, dt_raw_info *info)
{
    reader r = {p, n, 0};
    if (!memcmp(tag, "BUF ", 4)) {
        if (n < 8 || get_u64(p) != n - 8)
            return -1;
        info->buffers++;
        info->buffer_bytes += n - 8;
        if (v->buffer)
            v->buffer(v->user, p + 8, (size_t)(n - 8));
        if (v->buffer_mode)
            v->buffer_mode(v->user, DT_RAW_BUFFER_DECODE, p + 8, (size_t)(n - 8));
    } else if (!memcmp(tag, "BUFM", 4)) {
        if (n < 16 || get_u64(p + 8) != n - 16)
            return -1;
        info->buffers++;
        info->buffer_bytes += n - 16;
        if (v->buffer_mode)
            v->buffer_mode(v->user, get_u32(p), p + 16, (size_t)(n - 16));
    } else if (!memcmp(tag, "STR ", 4)) {
        if (n < 12 || get_u32(p + 8) != n - 12)
            return -1;
        if (v->string)
            v->string(v->user, get_u64(p), (const char *)p + 12, get_u32(p + 8));
    } else if (!memcmp(tag, "CLK ", 4)) {
        if (n != 16)
            return -1;
        if (v->clock)
            v->clock(v->user, get_u64(p), get_u64(p + 8));
    } else if (!memcmp(tag, "API ", 4)) {
        if (n < 12 || get_u32(p + 8) != n - 12)
            return -1;
        if (v->api_name)
            v->api_name(v->user, get_u32(p), get_u32(p + 4), (const char *)p + 12, get_u32(p + 8));
    } else if (!memcmp(tag, "WIN ", 4)) {
        if (n != 16)
            return -1;
        info->has_window = 1;
        if (v->window)
            v->window(v->user, get_u64(p), get_u64(p + 8));
    } else if (!memcmp(tag, "CNT ", 4)) {
        uint64_t value = rd_u64(&r);
        uint32_t len;
        const char *name = rd_str(&r, &len);
        if (r.bad || r.left)
            return -1;
        if (v->counter)
            v->counter(v->user, name, len, value);
    } else if (!memcmp(tag, "KSZ ", 4)) {
        if (n != 8)
            return -1;
        if (v->kind_size)
            v->kind_size(v->user, get_u32(p), get_u32(p + 4));
    } else if (!memcmp(tag, "DEV ", 4)) {
        return parse_device(&r, v);
    } else if (!memcmp(tag, "NOTE", 4)) {
        if (n > UINT32_MAX)
            return -1;
        if (v->note)
            v->note(v->user, (const char *)p, (uint32_t)n);
    } else if (!memcmp(tag, "META", 4)) {
        dt_raw_meta_info m;
        m.rank = (int32_t)rd_u32(&r);
        m.world_size = (int32_t)rd_u32(&r);
        m.backend = rd_str(&r, &m.backend_len);
        m.validation = rd_str(&r, &m.validation_len);
        m.runtime_category = rd_str(&r, &m.runtime_category_len);
        if (r.bad || r.left)
            return -1;
        if (v->meta)
            v->meta(v->user, &m);
    } else if (!memcmp(tag, "OPS ", 4)) {
        uint64_t start = rd_u64(&r), end = rd_u64(&r), ext = rd_u64(&r);
        uint32_t pid = rd_u32(&r), tid = rd_u32(&r), len;
        const char *name = rd_str(&r, &len);
        if (r.bad || r.left)
            return -1;
        if (v->cpu_op)
            v->cpu_op(v->user, start, end, ext, pid, tid, name, len);
    } else {
        info->unknown_chunks++;
    }
    return 0;
}

int dt_raw_parse(const uint8_t *data, size_t len, const dt_raw_visitor *v, dt_raw_info *info, devtrace_error *err)
{
    dt_raw_info local;
    static const dt_raw_visitor none;
    if (!info)
        info = &local;
    if (!v)
        v = &none;
    memset(info, 0, sizeof *info);
    if (len < 16 || memcmp(data, magic, 8) != 0)
        return dt_error_set(err, DEVTRACE_EFORMAT, "not a devtrace raw capture (no DTRAW1 header)");
    uint32_t version = get_u32(data + 8), vlen = get_u32(data + 12);
    if (version != DT_RAW_VERSION)
        return dt_error_set(err, DEVTRACE_EFORMAT, "raw capture version %u is not supported (this devtrace reads %u)",
                            version, DT_RAW_VERSION);
    if (vlen > DT_RAW_MAX_VENDOR || len < 20 + (size_t)vlen)
        return dt_error_set(err, DEVTRACE_EFORMAT, "raw capture header is corrupt (vendor name length %u)", vlen);
    memcpy(info->vendor, data + 16, vlen);
    info->vendor[vlen] = '\0';
    info->api_version = get_u32(data + 16 + vlen);
    size_t off = 20 + (size_t)vlen;
    while (off < len) {
        if (len - off < 12) {
            info->truncated = 1;
            break;
        }
        uint64_t n = get_u64(data + off + 4);
        if (n > len - off - 12) {
            info->truncated = 1;
            break;
        }
        if (parse_chunk(data + off, data + off + 12, n, v, info) != 0) {
            char tag[5];
            for (int i = 0; i < 4; i++)
                tag[i] = data[off + i] >= 0x20 && data[off + i] < 0x7f ? (char)data[off + i] : '?';
            tag[4] = '\0';
            return dt_error_set(err, DEVTRACE_EFORMAT, "raw capture chunk '%s' at offset %zu is malformed", tag, off);
        }
        info->chunks++;
        off += 12 + (size_t)n;
    }
    return 0;
}
