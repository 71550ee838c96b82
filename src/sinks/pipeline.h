/* pipeline.h: text made in numbered pieces by a pool of threads and written to a file
 * strictly in order, plain or as one gzip member (each piece deflated on its own
 * thread, pigz-style). Used by the Chrome trace sink for big traces. */
#ifndef DT_PIPELINE_H
#define DT_PIPELINE_H

#include <stddef.h>

#include "jsonw.h"

/* Appends piece `index` (0 .. npieces-1) to out, using the state of the worker that runs
 * it (one state per worker: the function may keep caches there). A piece's text must
 * not depend on which worker made it. Running out of memory leaves out->failed set. */
typedef void (*dt_piece_fn)(void *worker, size_t index, dt_jsonw *out);

typedef struct dt_pipeline {
    int fd;         /* borrowed: where the bytes go, written with write(2) */
    int gzip_level; /* -1: plain text; 0..9: one gzip member at that level */
    size_t npieces; /* >= 1 */
    dt_piece_fn make;
    void **workers;    /* borrowed: nworkers states, one per thread */
    unsigned nworkers; /* threads wanted, >= 1 */
} dt_pipeline;

/* Writes pieces 0 .. npieces-1 in order. Returns 0; an errno value when a write (or
 * memory, ENOMEM) failed, after which the file holds some prefix; or -1 when not one
 * thread could be started, before anything was written (the caller writes serially).
 * Every thread started is joined before it returns. */
int dt_pipeline_write(const dt_pipeline *p);

/* Fills one worker's state (zeroed before) from arg, before any piece is made. */
typedef void (*dt_worker_init_fn)(void *worker, const void *arg);

/* dt_pipeline_write with worker states it makes: nworkers states of worker_size bytes, each
 * zeroed and given to init with arg, freed when the write is over (a state owns nothing).
 * ENOMEM when they cannot be allocated; otherwise as dt_pipeline_write. */
int dt_pipeline_write_with_workers(int fd, int gzip_level, size_t npieces, dt_piece_fn make, unsigned nworkers,
                                   size_t worker_size, dt_worker_init_fn init, const void *arg);

#endif
