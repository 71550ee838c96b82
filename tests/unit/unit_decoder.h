/* unit_decoder.h: the fixture of the CUPTI-family decoder tests (header only): an offline
 * session, a decoder over a vendor's descriptor, a record buffer the test writes by hand
 * (unit_bytes.h), and the events a walk of it stored, with their names. */
#ifndef UNIT_DECODER_H
#define UNIT_DECODER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backends/pti_family.h"
#include "core/session.h"

#define UT_DECODER_MAX_EVENTS 64

typedef struct ut_decoder_fixture {
    dt_session *s;                 /* owned: an offline session named after the descriptor */
    dt_pti_decoder *d;             /* owned (large: the callback-id name cache) */
    _Alignas(8) uint8_t buf[8192]; /* the records, from buf[0] */
    size_t used;                   /* the valid bytes of buf */
    /* What the store holds after the last walk (the first UT_DECODER_MAX_EVENTS), in the
     * store's order, and each one's interned name. */
    devtrace_event ev[UT_DECODER_MAX_EVENTS];
    const char *names[UT_DECODER_MAX_EVENTS];
    size_t nev;
} ut_decoder_fixture;

/* A fixture whose decoder reads desc's layouts for a library reporting version, stepping
 * with next (the stand-in for the vendor's GetNextRecord; NULL: offline, as replay walks);
 * the session's runtime events have runtime_category. NULL when out of memory. */
static inline ut_decoder_fixture *ut_decoder_fixture_new(const dt_pti_descriptor *desc, uint32_t version,
                                                         dt_pti_next_fn next, const char *runtime_category)
{
    ut_decoder_fixture *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    devtrace_error err = {0, ""};
    f->s = dt_session_new_offline(desc->name, "unit test", runtime_category, &err);
    f->d = calloc(1, sizeof *f->d);
    if (!f->s || !f->d) {
        if (f->s)
            devtrace_close(f->s);
        free(f->d);
        free(f);
        return NULL;
    }
    dt_pti_decoder_init(f->d, desc, f->s, version, next);
    return f;
}

static inline void ut_decoder_fixture_free(ut_decoder_fixture *f)
{
    if (!f)
        return;
    devtrace_close(f->s);
    free(f->d);
    free(f);
}

static inline void ut_decoder_collect(void *user, devtrace_event *ev)
{
    ut_decoder_fixture *f = user;
    if (f->nev < UT_DECODER_MAX_EVENTS) {
        f->names[f->nev] = dt_intern_get(&f->s->names, ev->name_id);
        f->ev[f->nev++] = *ev;
    }
}

/* Collects what the store holds now (after a walk, or a rename of stored events). */
static inline void ut_decoder_collect_stored(ut_decoder_fixture *f)
{
    f->nev = 0;
    dt_store_visit(&f->s->store, ut_decoder_collect, f);
}

/* Walks buf[0..used) in mode with the engine's dt_pti_walk_buffer, then collects what the
 * store holds; returns the walk's counts. */
static inline dt_pti_walk_counts ut_decoder_walk(ut_decoder_fixture *f, dt_pti_walk_mode mode)
{
    dt_pti_walk_counts c;
    dt_pti_walk_buffer(f->d, f->buf, f->used, mode, &c);
    ut_decoder_collect_stored(f);
    return c;
}

/* The interned name of a stored event (its kernel or API name). */
static inline const char *ut_decoded_name(const ut_decoder_fixture *f, const devtrace_event *ev)
{
    return dt_intern_get(&f->s->names, ev->name_id);
}

/* The nth (from 0) collected event of a kind, or NULL. */
static inline const devtrace_event *ut_decoded_event(const ut_decoder_fixture *f, int kind, size_t nth)
{
    for (size_t i = 0; i < f->nev; i++)
        if (f->ev[i].kind == kind && nth-- == 0)
            return &f->ev[i];
    return NULL;
}

/* How many collected events are of a kind. */
static inline size_t ut_decoded_count(const ut_decoder_fixture *f, int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nev; i++)
        n += f->ev[i].kind == kind;
    return n;
}

#endif /* UNIT_DECODER_H */
