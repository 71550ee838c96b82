/* fuzz_common.h: helpers shared by the fuzz targets (header only): the oracle that a session
 * whatever it was fed writes a Chrome trace that is strict JSON, a reader of the input as a
 * sequence of little fields, and silencing stderr around code that prints one line per bad input
 * (set FUZZ_VERBOSE=1 to keep it, e.g. when rerunning a crash artifact). */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session.h"
#include "sinks/sinks.h"
#include "unit_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, consumed from the front; reads past the end give zeros. */
typedef struct fz_input {
    const uint8_t *p;
    size_t n;
} fz_input;

static inline uint8_t fz_u8(fz_input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint64_t fz_bytes_u64(fz_input *in, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)fz_u8(in) << (8 * i);
    return v;
}

/* How far buf[0, len) is a sequence of whole Trace.packet fields (key 0x0A, a varint
 * length, that many bytes): len when all of it is. */
static inline size_t fz_whole_packets(const char *buf, size_t len)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t at = 0;
    while (at < len && b[at] == 0x0A) {
        size_t p = at + 1;
        uint64_t n = 0;
        int shift = 0, ended = 0;
        while (p < len && shift < 64 && !ended) {
            n |= (uint64_t)(b[p] & 0x7F) << shift;
            ended = !(b[p++] & 0x80);
            shift += 7;
        }
        if (!ended || n > len - p)
            return at;
        at = p + (size_t)n;
    }
    return at;
}

/* The session's Chrome trace must be written and be strict JSON with the top-level keys in
 * order, and its Perfetto trace a sequence of whole packets; anything else is a finding
 * (abort, so libFuzzer saves the input). */
static inline void fz_check_trace(dt_session *s)
{
    char *buf = NULL;
    size_t len = 0;
    if (dt_chrome_write_buffer(s, "fuzz", &buf, &len) != 0) {
        fprintf(stderr, "fuzz oracle: dt_chrome_write_buffer failed\n");
        abort();
    }
    char error[160] = "";
    uj_value *root = uj_parse(buf, len, error);
    if (!root || root->type != UJ_OBJECT || !uj_get(root, "traceEvents") || !uj_get(root, "devtrace")) {
        fprintf(stderr, "fuzz oracle: the trace is not valid JSON: %s\n%.*s\n", error, (int)(len > 4000 ? 4000 : len),
                buf);
        abort();
    }
    uj_free(root);
    free(buf);
    /* And its Perfetto trace. */
    if (dt_perfetto_write_buffer(s, &buf, &len) != 0) {
        fprintf(stderr, "fuzz oracle: dt_perfetto_write_buffer failed\n");
        abort();
    }
    size_t at = fz_whole_packets(buf, len);
    if (at != len) {
        fprintf(stderr, "fuzz oracle: the Perfetto trace is not a sequence of packets (from byte %zu of %zu)\n", at,
                len);
        abort();
    }
    free(buf);
}

/* stderr to /dev/null while a parser prints its one-line errors (not with FUZZ_VERBOSE). */
static inline int fz_quiet_begin(void)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose)
        return -1;
    fflush(stderr);
    int saved = dup(2);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved < 0 || null < 0) {
        if (saved >= 0)
            close(saved);
        if (null >= 0)
            close(null);
        return -1;
    }
    dup2(null, 2);
    close(null);
    return saved;
}

static inline void fz_quiet_end(int saved)
{
    if (saved < 0)
        return;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

#endif
