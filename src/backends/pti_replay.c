/* pti_replay.c: a raw capture's buffers replayed through the CUPTI-family engine's own
 * walker and decoders: dt_pti_raw_decoder, which every DT_PTI_BACKEND names in its
 * dt_backend (raw_decoder, with its descriptor as raw_tables), so that the core reaches it
 * through the backend registry alone. */
#include "pti_decode.h"
#include "pti_family.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/raw.h"

typedef struct pti_replay {
    dt_pti_decoder dec;
    uint64_t *keys; /* pointer values (open addressing; 0 = empty) */
    char **vals;    /* owned NUL-terminated copies */
    size_t mask, count;
    uint8_t *copy; /* the buffer being walked: writable, aligned */
    size_t copy_cap;
} pti_replay;

static size_t replay_slot(const pti_replay *r, uint64_t key)
{
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 17) & r->mask;
    while (r->keys[i] && r->keys[i] != key)
        i = (i + 1) & r->mask;
    return i;
}

static const char *replay_resolve(void *user, uint64_t pointer)
{
    pti_replay *r = user;
    if (!pointer || !r->keys)
        return NULL;
    size_t i = replay_slot(r, pointer);
    return r->keys[i] ? r->vals[i] : NULL;
}

static void *replay_open(dt_session *s, const dt_backend *b, uint32_t api_version, devtrace_error *err)
{
    const dt_pti_descriptor *desc = b->raw_tables; /* DT_PTI_BACKEND: the backend's own descriptor */
    pti_replay *r = calloc(1, sizeof *r);
    if (!r) {
        dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
        return NULL;
    }
    dt_pti_decoder_init_offline(&r->dec, desc, s, api_version, replay_resolve, r);
    return r;
}

static int replay_grow(pti_replay *r)
{
    size_t cap = r->mask ? (r->mask + 1) * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof *keys);
    char **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    pti_replay old = *r;
    r->keys = keys;
    r->vals = vals;
    r->mask = cap - 1;
    for (size_t i = 0; old.keys && i <= old.mask; i++)
        if (old.keys[i]) {
            size_t j = replay_slot(r, old.keys[i]);
            r->keys[j] = old.keys[i];
            r->vals[j] = old.vals[i];
        }
    free(old.keys);
    free(old.vals);
    return 0;
}

static void replay_string(void *st, uint64_t pointer, const char *text, uint32_t len)
{
    pti_replay *r = st;
    if (!pointer || ((r->count + 1) * 2 > r->mask && replay_grow(r) != 0))
        return;
    size_t i = replay_slot(r, pointer);
    if (r->keys[i])
        return; /* the first capture of a pointer stands, as in the writer */
    char *copy = malloc((size_t)len + 1);
    if (!copy)
        return;
    memcpy(copy, text, len);
    copy[len] = '\0';
    r->keys[i] = pointer;
    r->vals[i] = copy;
    r->count++;
}

static void replay_kind_size(void *st, uint32_t kind, uint32_t size)
{
    pti_replay *r = st;
    dt_pti_learn_kind_size(&r->dec, kind, size);
}

static void replay_buffer(void *st, uint32_t mode, const uint8_t *data, size_t valid_size)
{
    pti_replay *r = st;
    if (mode > DT_RAW_BUFFER_POOL_FULL) {
        DT_COUNT(r->dec.s, malformed_bytes, valid_size); /* a mode this devtrace does not know */
        return;
    }
    if (valid_size > r->copy_cap) {
        uint8_t *b = realloc(r->copy, valid_size);
        if (!b) {
            DT_COUNT(r->dec.s, malformed_bytes, valid_size);
            return;
        }
        r->copy = b;
        r->copy_cap = valid_size;
    }
    if (valid_size)
        memcpy(r->copy, data, valid_size);
    dt_pti_walk_mode walk = mode == DT_RAW_BUFFER_DECODE          ? DT_PTI_WALK_DECODE
                            : mode == DT_RAW_BUFFER_OUT_OF_WINDOW ? DT_PTI_WALK_OUT_OF_WINDOW
                                                                  : DT_PTI_WALK_POOL_FULL;
    if (valid_size)
        dt_pti_walk_buffer(&r->dec, r->copy, valid_size, walk, NULL);
}

static void replay_api_name(void *st, uint32_t domain, uint32_t cbid, const char *name, uint32_t len)
{
    pti_replay *r = st;
    char copy[256];
    (void)domain;
    if (len == 0 || len >= sizeof copy)
        return;
    memcpy(copy, name, len);
    copy[len] = '\0';
    if (memchr(copy, '\0', len))
        return;
    dt_pti_apply_api_name(&r->dec, cbid, copy);
}

static void replay_close(void *st)
{
    pti_replay *r = st;
    if (!r)
        return;
    for (size_t i = 0; r->keys && i <= r->mask; i++)
        free(r->vals[i]);
    free(r->keys);
    free(r->vals);
    free(r->copy);
    free(r);
}

static int replay_same_records(const dt_backend *backend_a, const dt_backend *backend_b)
{
    if (!backend_a || !backend_b || backend_a->raw_decoder != &dt_pti_raw_decoder ||
        backend_b->raw_decoder != &dt_pti_raw_decoder)
        return -1;
    const dt_pti_descriptor *a = backend_a->raw_tables, *b = backend_b->raw_tables;
    return a->layouts == b->layouts && a->nlayouts == b->nlayouts && memcmp(&a->kinds, &b->kinds, sizeof a->kinds) == 0;
}

const dt_raw_decoder dt_pti_raw_decoder = {
    .engine = "CUPTI family",
    .open = replay_open,
    .string = replay_string,
    .kind_size = replay_kind_size,
    .buffer = replay_buffer,
    .api_name = replay_api_name,
    .close = replay_close,
    .same_records = replay_same_records,
};
