/* raw.c: writing and parsing the .dtraw raw capture container (see raw.h). */
#include "raw.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

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
static void write_chunk(dt_raw_writer *w, const char tag[4], const void *head, size_t hlen, const void *tail, size_t tlen)
{
    unsigned char h[12];
    memcpy(h, tag, 4);
    put_u64(h + 4, (uint64_t)hlen + tlen);
    write_bytes(w, h, sizeof h);
    write_bytes(w, head, hlen);
    write_bytes(w, tail, tlen);
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
    w->f = fopen(path, "wb");
    if (!w->f || !w->seen || !w->path) {
        dt_error_set(err, DEVTRACE_EIO, "cannot write the raw capture %s: %s; check that the directory exists and is writable",
                     path, strerror(errno ? errno : ENOMEM));
        if (w->f)
            fclose(w->f);
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
    return w;
}

void dt_raw_buffer(dt_raw_writer *w, const void *data, uint64_t valid_size)
{
    if (!w)
        return;
    unsigned char h[8];
    put_u64(h, valid_size);
    pthread_mutex_lock(&w->lock);
    write_chunk(w, "BUF ", h, sizeof h, data, (size_t)valid_size);
    pthread_mutex_unlock(&w->lock);
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
    pthread_mutex_lock(&w->lock);
    write_chunk(w, "CLK ", h, sizeof h, NULL, 0);
    pthread_mutex_unlock(&w->lock);
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
    pthread_mutex_lock(&w->lock);
    write_chunk(w, "API ", h, sizeof h, name, n);
    pthread_mutex_unlock(&w->lock);
}

void dt_raw_window(dt_raw_writer *w, uint64_t start_ns, uint64_t stop_ns)
{
    if (!w)
        return;
    unsigned char h[16];
    put_u64(h, start_ns);
    put_u64(h + 8, stop_ns);
    pthread_mutex_lock(&w->lock);
    write_chunk(w, "WIN ", h, sizeof h, NULL, 0);
    pthread_mutex_unlock(&w->lock);
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

static int parse_chunk(const uint8_t *tag, const uint8_t *p, uint64_t n, const dt_raw_visitor *v, dt_raw_info *info)
{
    if (!memcmp(tag, "BUF ", 4)) {
        if (n < 8 || get_u64(p) != n - 8)
            return -1;
        if (v->buffer)
            v->buffer(v->user, p + 8, (size_t)(n - 8));
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
        if (v->window)
            v->window(v->user, get_u64(p), get_u64(p + 8));
    } else {
        info->unknown_chunks++;
    }
    return 0;
}

int dt_raw_parse(const uint8_t *data, size_t len, const dt_raw_visitor *v, dt_raw_info *info, devtrace_error *err)
{
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
        if (parse_chunk(data + off, data + off + 12, n, v, info) != 0)
            return dt_error_set(err, DEVTRACE_EFORMAT, "raw capture chunk '%.4s' at offset %zu is malformed",
                                (const char *)(data + off), off);
        info->chunks++;
        off += 12 + (size_t)n;
    }
    return 0;
}
