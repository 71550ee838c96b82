/* record_spill.c: the spill file of devtrace record (see record_spill.h). */
#include "record_spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "devtrace.h"
#include "inject/wire.h"

#define SPILL_BUFFER (1u << 20)

static size_t padded(uint64_t n)
{
    return (size_t)((n + 7u) & ~(uint64_t)7u);
}

/* Makes room for want more bytes in the buffer; 0 or -1. */
static int reserve(dt_spill *sp, size_t want)
{
    if (sp->cap - sp->len >= want)
        return 0;
    size_t cap = sp->cap ? sp->cap : SPILL_BUFFER;
    while (cap - sp->len < want)
        cap *= 2;
    unsigned char *b = realloc(sp->buf, cap);
    if (!b)
        return -1;
    sp->buf = b;
    sp->cap = cap;
    return 0;
}

int dt_spill_create(dt_spill *sp, const char *trace_path, const dt_spill_header *h, char *why, size_t whylen)
{
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
    if (snprintf(sp->path, sizeof sp->path, "%s" DT_SPILL_SUFFIX, trace_path) >= (int)sizeof sp->path - 8) {
        snprintf(why, whylen, "the spill's path %s" DT_SPILL_SUFFIX " is too long; choose a shorter -o", trace_path);
        return -1;
    }
    int fd = dt_file_create_new(sp->path);
    if (fd < 0 && errno == EEXIST) {
        /* A spill left by a killed run (kept: it may be someone's only copy), or anything
         * planted there: a new name of our own beside it. */
        strcat(sp->path, ".XXXXXX");
        fd = dt_path_has_foreign_link(sp->path) ? (errno = EXDEV, -1) : mkostemp(sp->path, O_CLOEXEC);
    }
    if (fd < 0) {
        const char *refusal = dt_file_refusal(errno);
        snprintf(why, whylen, "cannot make the spill file %s: %s", sp->path, refusal ? refusal : strerror(errno));
        return -1;
    }
    sp->fd = fd;
    if (reserve(sp, sizeof *h) != 0) {
        snprintf(why, whylen, "out of memory");
        dt_spill_close(sp, 1);
        return -1;
    }
    memcpy(sp->buf, h, sizeof *h);
    sp->len = sizeof *h;
    dt_spill_flush(sp);
    if (sp->write_errno) {
        snprintf(why, whylen, "cannot write the spill file %s: %s", sp->path, strerror(sp->write_errno));
        dt_spill_close(sp, 1);
        return -1;
    }
    return 0;
}

void dt_spill_flush(dt_spill *sp)
{
    if (sp->fd < 0 || sp->write_errno || !sp->len)
        return;
    size_t off = 0;
    while (off < sp->len) {
        ssize_t w = write(sp->fd, sp->buf + off, sp->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            sp->write_errno = w < 0 ? errno : ENOSPC;
            /* The file keeps the records written before this flush (file_bytes, where the
             * recorder reads it to); the buffer, all of this flush's, stays in memory. A
             * part written now is cut off (if that fails too, 'devtrace convert' of the
             * file says it ends mid-record and keeps the whole ones). */
            if (ftruncate(sp->fd, (off_t)sp->file_bytes) != 0)
                sp->write_errno = sp->write_errno ? sp->write_errno : errno;
            return;
        }
        off += (size_t)w;
    }
    sp->file_bytes += sp->len;
    sp->len = 0;
}

int dt_spill_append(dt_spill *sp, uint32_t connection, uint32_t type, const void *payload, size_t n)
{
    size_t total = sizeof(dt_spill_record) + padded(n);
    if (!sp->write_errno && sp->len + total > SPILL_BUFFER)
        dt_spill_flush(sp);
    if (reserve(sp, total) != 0)
        return -1;
    dt_spill_record rec = {type, connection, n};
    unsigned char *to = sp->buf + sp->len;
    memcpy(to, &rec, sizeof rec);
    if (n)
        memcpy(to + sizeof rec, payload, n);
    memset(to + sizeof rec + n, 0, padded(n) - n);
    sp->len += total;
    sp->records++;
    if (!sp->write_errno && sp->len >= SPILL_BUFFER)
        dt_spill_flush(sp);
    return 0;
}

void dt_spill_close(dt_spill *sp, int remove)
{
    if (sp->fd >= 0) {
        close(sp->fd);
        if (remove)
            unlink(sp->path);
    }
    free(sp->buf);
    sp->buf = NULL;
    sp->len = sp->cap = 0;
    sp->fd = -1;
}

size_t dt_spill_walk(const unsigned char *data, size_t n, dt_spill_record_fn fn, void *user, uint64_t *count)
{
    size_t off = 0;
    uint64_t k = 0;
    while (n - off >= sizeof(dt_spill_record)) {
        dt_spill_record rec;
        memcpy(&rec, data + off, sizeof rec);
        if (rec.length > DT_WIRE_MAX_PAYLOAD || padded(rec.length) > n - off - sizeof rec)
            break; /* cut short (or corrupt): the whole records before it are kept */
        if (fn(user, rec.connection, rec.type, data + off + sizeof rec, (size_t)rec.length) != 0)
            break;
        off += sizeof rec + padded(rec.length);
        k++;
    }
    if (count)
        *count = k;
    return off;
}

int dt_spill_recognises(const unsigned char *head, size_t n)
{
    return n >= 8 && memcmp(head, DT_SPILL_MAGIC, 8) == 0;
}

int dt_spill_check_header(const dt_spill_header *h, uint64_t total, char *why, size_t whylen)
{
    if (total < sizeof *h || memcmp(h->magic, DT_SPILL_MAGIC, 8) != 0) {
        snprintf(why, whylen, "it is not a devtrace spill (too short, or no '" DT_SPILL_MAGIC "' header)");
        return -1;
    }
    if (h->version != DT_SPILL_VERSION || h->wire_version != DT_WIRE_VERSION ||
        h->event_size != sizeof(devtrace_event)) {
        snprintf(why, whylen,
                 "it was written by another version of devtrace (spill %u, wire %u, event %u bytes; this one reads "
                 "spill %u, wire %u, %zu bytes); convert it with the devtrace that recorded it",
                 h->version, h->wire_version, h->event_size, DT_SPILL_VERSION, DT_WIRE_VERSION, sizeof(devtrace_event));
        return -1;
    }
    return 0;
}
