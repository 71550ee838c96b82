/* pipeline.c: numbered pieces made by a pool of threads, written in order (pipeline.h).
 *
 * Workers claim pieces in order from a counter. Piece j lives in slot j % nslots of a
 * ring of 2 * workers + 1 slots, and a worker waits while its piece is 2 * workers or
 * more ahead of the next piece to write: memory stays bounded whatever the trace size.
 * The calling thread writes the pieces, each as soon as it is ready, strictly in order.
 *
 * gzip, as pigz makes one member on many cores: piece j is raw deflate (no header)
 * primed with the last 32 KiB of piece j-1's text (deflateSetDictionary) and ended by a
 * sync flush, which ends on a byte boundary, so the pieces concatenate into one deflate
 * stream; the last piece ends with Z_FINISH. The writer adds the 10-byte header zlib
 * writes, and the trailer: the pieces' CRC-32s combined in order (crc32_combine) and
 * the length mod 2^32. A slot is reused only once the piece after it has been written,
 * so piece j-1's text is still there while piece j reads its dictionary from it. */
#include "pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define DICT_BYTES 32768u         /* deflate's window */
#define TEXT_CAP_START (1u << 20) /* a slot's text buffer to begin with; it grows to a piece */

enum piece_phase {
    PIECE_MAKING,  /* a worker is writing its text */
    PIECE_MADE,    /* text final (the next piece may read its dictionary from it) */
    PIECE_READY,   /* text (and for gzip its deflated bytes) ready to write */
    PIECE_WRITTEN, /* handed to the file */
};

typedef struct slot {
    size_t index; /* the piece it holds; SIZE_MAX before the first */
    enum piece_phase phase;
    dt_jsonw text;    /* owned */
    unsigned char *z; /* owned: the text deflated */
    size_t zlen, zcap;
    uint32_t crc; /* CRC-32 of the text */
} slot;

typedef struct run {
    const dt_pipeline *p;
    pthread_mutex_t lock;     /* guards everything below but the slots' contents, which
                             belong to whoever the phase says: maker, then writer */
    pthread_cond_t to_writer; /* piece writer_wants is ready */
    pthread_cond_t room;      /* the writer has made room for piece room_wanted */
    pthread_cond_t made;      /* a piece's text is final (for made_waiters) */
    size_t writer_wants;      /* the piece the writer waits for (SIZE_MAX: none) */
    size_t room_wanted;       /* the first piece waiting for room (SIZE_MAX: none) */
    unsigned made_waiters;    /* workers waiting for the piece before theirs */
    slot *slots;              /* owned */
    size_t nslots;
    size_t next;    /* the next piece to claim */
    size_t written; /* pieces written */
    int error;      /* the first failure (an errno value); stops every thread */
} run;

typedef struct worker_arg {
    run *r;
    void *state; /* borrowed: the caller's per-worker state */
} worker_arg;

/* Each wait has its own condition, signalled only when someone waits for it: on two
 * cores, every needless wake-up of a worker takes the writer's core from the writer. */
static void fail_locked(run *r, int err)
{
    if (!r->error)
        r->error = err;
    pthread_cond_broadcast(&r->to_writer);
    pthread_cond_broadcast(&r->room);
    pthread_cond_broadcast(&r->made);
}

/* s's text deflated into s->z, primed with the end of prev's text (NULL: the first). */
static int deflate_piece(z_stream *z, slot *s, const slot *prev, int last)
{
    if (deflateReset(z) != Z_OK)
        return EIO;
    if (prev && prev->text.len) {
        size_t n = prev->text.len < DICT_BYTES ? prev->text.len : DICT_BYTES;
        if (deflateSetDictionary(z, (const Bytef *)prev->text.buf + prev->text.len - n, (uInt)n) != Z_OK)
            return EIO;
    }
    s->crc = (uint32_t)crc32_z(0, (const Bytef *)s->text.buf, s->text.len);
    size_t need = deflateBound(z, (uLong)s->text.len) + 64; /* + the sync flush's empty block */
    if (s->zcap < need) {
        unsigned char *grown = realloc(s->z, need);
        if (!grown)
            return ENOMEM;
        s->z = grown;
        s->zcap = need;
    }
    z->next_in = (Bytef *)s->text.buf;
    z->avail_in = (uInt)s->text.len;
    z->next_out = s->z;
    z->avail_out = (uInt)s->zcap;
    for (;;) {
        int rc = deflate(z, last ? Z_FINISH : Z_SYNC_FLUSH);
        if (rc == Z_STREAM_ERROR)
            return EIO;
        if (last ? rc == Z_STREAM_END : z->avail_in == 0 && z->avail_out != 0)
            break;
        size_t used = s->zcap - z->avail_out; /* out of room (deflateBound should prevent it) */
        unsigned char *grown = realloc(s->z, 2 * s->zcap);
        if (!grown)
            return ENOMEM;
        s->z = grown;
        s->zcap *= 2;
        z->next_out = s->z + used;
        z->avail_out = (uInt)(s->zcap - used);
    }
    s->zlen = s->zcap - z->avail_out;
    return 0;
}

static void *worker_main(void *arg)
{
    worker_arg *a = arg;
    run *r = a->r;
    const dt_pipeline *p = r->p;
    int gzip = p->gzip_level >= 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    int zlib_ready = gzip && deflateInit2(&z, p->gzip_level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    pthread_mutex_lock(&r->lock);
    if (gzip && !zlib_ready)
        fail_locked(r, ENOMEM);
    while (!r->error && r->next < p->npieces) {
        size_t j = r->next++;
        while (!r->error && j - r->written >= r->nslots - 1) {
            if (j < r->room_wanted)
                r->room_wanted = j;
            pthread_cond_wait(&r->room, &r->lock);
        }
        if (r->error)
            break;
        slot *s = &r->slots[j % r->nslots];
        s->index = j;
        s->phase = PIECE_MAKING;
        pthread_mutex_unlock(&r->lock);

        s->text.len = 0;
        p->make(a->state, j, &s->text);
        int err = s->text.failed ? ENOMEM : 0;

        pthread_mutex_lock(&r->lock);
        if (err) {
            fail_locked(r, err);
            break;
        }
        s->phase = PIECE_MADE;
        if (r->made_waiters)
            pthread_cond_broadcast(&r->made);
        if (gzip) {
            const slot *prev = j ? &r->slots[(j - 1) % r->nslots] : NULL;
            while (prev && !r->error && !(prev->index == j - 1 && prev->phase >= PIECE_MADE)) {
                r->made_waiters++;
                pthread_cond_wait(&r->made, &r->lock);
                r->made_waiters--;
            }
            if (r->error)
                break;
            pthread_mutex_unlock(&r->lock);
            err = deflate_piece(&z, s, prev, j + 1 == p->npieces);
            pthread_mutex_lock(&r->lock);
            if (err) {
                fail_locked(r, err);
                break;
            }
        }
        s->phase = PIECE_READY;
        if (r->writer_wants == j)
            pthread_cond_signal(&r->to_writer);
    }
    pthread_mutex_unlock(&r->lock);
    if (zlib_ready)
        deflateEnd(&z);
    return NULL;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *at = buf;
    while (n) {
        ssize_t k = write(fd, at, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 && errno ? errno : EIO;
        at += k;
        n -= (size_t)k;
    }
    return 0;
}

static void put_le32(unsigned char *out, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        out[i] = (unsigned char)(v >> (8 * i));
}

/* The header deflate writes for windowBits 31 (gzdopen): no name, no time, OS Unix. */
static int write_gzip_header(int fd, int level)
{
    unsigned char h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    h[8] = level == 9 ? 2 : level < 2 ? 4 : 0; /* XFL: best / fastest compression */
    return write_all(fd, h, sizeof h);
}

/* Waits for piece j and writes it; returns 0 or an errno value. */
static int write_piece(run *r, size_t j, uLong *crc, uint64_t *total)
{
    slot *s = &r->slots[j % r->nslots];
    pthread_mutex_lock(&r->lock);
    while (!r->error && !(s->index == j && s->phase == PIECE_READY)) {
        r->writer_wants = j;
        pthread_cond_wait(&r->to_writer, &r->lock);
    }
    r->writer_wants = SIZE_MAX;
    int err = r->error;
    pthread_mutex_unlock(&r->lock);
    if (err)
        return err;
    if (r->p->gzip_level >= 0) {
        err = write_all(r->p->fd, s->z, s->zlen);
        *crc = crc32_combine(*crc, s->crc, (z_off_t)s->text.len);
    } else {
        err = write_all(r->p->fd, s->text.buf, s->text.len);
    }
    *total += s->text.len;
    pthread_mutex_lock(&r->lock);
    if (err) {
        fail_locked(r, err);
    } else {
        s->phase = PIECE_WRITTEN;
        r->written = j + 1;
        if (r->room_wanted - r->written < r->nslots - 1) { /* SIZE_MAX - written never is */
            r->room_wanted = SIZE_MAX;
            pthread_cond_broadcast(&r->room);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return err;
}

static void free_slots(slot *slots, size_t n)
{
    for (size_t i = 0; slots && i < n; i++) {
        dt_jsonw_free(&slots[i].text);
        free(slots[i].z);
    }
    free(slots);
}

int dt_pipeline_write(const dt_pipeline *p)
{
    run r = {.p = p, .nslots = 2 * (size_t)p->nworkers + 1, .writer_wants = SIZE_MAX, .room_wanted = SIZE_MAX};
    pthread_t *threads = calloc(p->nworkers, sizeof *threads);
    worker_arg *args = calloc(p->nworkers, sizeof *args);
    r.slots = calloc(r.nslots, sizeof *r.slots);
    int err = threads && args && r.slots ? 0 : ENOMEM;
    for (size_t i = 0; !err && i < r.nslots; i++) {
        r.slots[i].index = SIZE_MAX;
        if (dt_jsonw_init(&r.slots[i].text, TEXT_CAP_START) != 0)
            err = ENOMEM;
    }
    if (err) {
        free_slots(r.slots, r.nslots);
        free(threads), free(args);
        return err;
    }
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.to_writer, NULL);
    pthread_cond_init(&r.room, NULL);
    pthread_cond_init(&r.made, NULL);
    unsigned started = 0;
    for (; started < p->nworkers; started++) { /* fewer threads than asked is fine */
        args[started] = (worker_arg){&r, p->workers[started]};
        if (pthread_create(&threads[started], NULL, worker_main, &args[started]) != 0)
            break;
    }
    if (started == 0) {
        err = -1;
        goto end;
    }
    uLong crc = crc32(0, NULL, 0);
    uint64_t total = 0;
    if (p->gzip_level >= 0)
        err = write_gzip_header(p->fd, p->gzip_level);
    for (size_t j = 0; !err && j < p->npieces; j++)
        err = write_piece(&r, j, &crc, &total);
    if (!err && p->gzip_level >= 0) {
        unsigned char trailer[8];
        put_le32(trailer, (uint32_t)crc);
        put_le32(trailer + 4, (uint32_t)total);
        err = write_all(p->fd, trailer, sizeof trailer);
    }
    pthread_mutex_lock(&r.lock);
    if (err)
        fail_locked(&r, err);
    pthread_mutex_unlock(&r.lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    if (!err)
        err = r.error; /* a worker's failure after the last piece was claimed */
end:
    pthread_cond_destroy(&r.to_writer);
    pthread_cond_destroy(&r.room);
    pthread_cond_destroy(&r.made);
    pthread_mutex_destroy(&r.lock);
    free_slots(r.slots, r.nslots);
    free(threads), free(args);
    return err;
}

int dt_pipeline_write_with_workers(int fd, int gzip_level, size_t npieces, dt_piece_fn make, unsigned nworkers,
                                   size_t worker_size, dt_worker_init_fn init, const void *arg)
{
    char *states = calloc(nworkers, worker_size);
    void **workers = calloc(nworkers, sizeof *workers);
    int rc = ENOMEM;
    if (states && workers) {
        for (unsigned i = 0; i < nworkers; i++) {
            workers[i] = states + (size_t)i * worker_size;
            init(workers[i], arg);
        }
        dt_pipeline p = {
            .fd = fd,
            .gzip_level = gzip_level,
            .npieces = npieces,
            .make = make,
            .workers = workers,
            .nworkers = nworkers,
        };
        rc = dt_pipeline_write(&p);
    }
    free(workers);
    free(states);
    return rc;
}
