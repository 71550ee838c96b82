/* fuzz_dtraw.c: libFuzzer target for the raw capture reader and replay (src/core/raw.c,
 * src/core/replay.c): the fuzzer's bytes are a .dtraw file.
 *
 * The bytes (a heap copy of exactly the input: AddressSanitizer sees any read past them)
 * are parsed with a visitor that reads every byte each chunk hands out, then replayed
 * whole: a session rebuilt from the capture's metadata, devices, notes, samples, window,
 * CPU operators and losses, every buffer decoded through the CUPTI-family decoders and the
 * vendor's scanner (MCPTI, MSPTI) or the layout stride (CUPTI, PPU, Iluvatar), record
 * pointers resolved through the capture's strings only. Oracles: the parser keeps to its
 * bytes, its chunk counts add up, and a replayed session writes a strict-JSON trace.
 *
 * Seeds (corpus/fuzz_dtraw/): captures of the parity workload through the MCPTI emulator
 * (MACA 3.8.0 quirks on) and the CUPTI emulator, and one of every chunk kind. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h" /* dt_replay_file with the compiled-in backends */
#include "core/raw.h"
#include "fuzz_common.h"

typedef struct touch {
    uint64_t sum; /* every byte handed out is read into this */
    uint64_t chunks;
} touch;

static void add(touch *t, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        t->sum += b[i];
    t->chunks++;
}

static void t_buffer(void *u, uint32_t mode, const uint8_t *d, size_t n)
{
    ((touch *)u)->sum += mode;
    add(u, d, n);
}
static void t_string(void *u, uint64_t p, const char *s, uint32_t n)
{
    ((touch *)u)->sum += p;
    add(u, s, n);
}
static void t_clock(void *u, uint64_t v, uint64_t h)
{
    uint64_t both[2] = {v, h};
    add(u, both, sizeof both);
}
static void t_api(void *u, uint32_t dom, uint32_t cbid, const char *s, uint32_t n)
{
    ((touch *)u)->sum += dom + cbid;
    add(u, s, n);
}
static void t_window(void *u, uint64_t a, uint64_t b)
{
    uint64_t both[2] = {a, b};
    add(u, both, sizeof both);
}
static void t_counter(void *u, const char *name, uint32_t n, uint64_t v)
{
    ((touch *)u)->sum += v;
    add(u, name, n);
}
static void t_device(void *u, const dt_device_props *p)
{
    add(u, p->name, strlen(p->name));
}
static void t_note(void *u, const char *s, uint32_t n)
{
    add(u, s, n);
}
static void t_meta(void *u, const dt_raw_meta_info *m)
{
    touch *t = u;
    add(t, m->backend, m->backend_len);
    add(t, m->validation, m->validation_len);
    add(t, m->runtime_category, m->runtime_category_len);
    t->chunks -= 2;
}
static void t_cpu_op(void *u, uint64_t s, uint64_t e, uint64_t x, uint32_t pid, uint32_t tid, const char *n,
                     uint32_t len)
{
    ((touch *)u)->sum += s + e + x + pid + tid;
    add(u, n, len);
}
static void t_kind_size(void *u, uint32_t kind, uint32_t size)
{
    uint32_t both[2] = {kind, size};
    add(u, both, sizeof both);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    touch t = {0, 0};
    dt_raw_visitor v = {.user = &t,
                        .buffer_mode = t_buffer,
                        .string = t_string,
                        .clock = t_clock,
                        .api_name = t_api,
                        .window = t_window,
                        .counter = t_counter,
                        .device = t_device,
                        .note = t_note,
                        .meta = t_meta,
                        .cpu_op = t_cpu_op,
                        .kind_size = t_kind_size};
    dt_raw_info info;
    devtrace_error err = {0, ""};
    if (dt_raw_parse(copy, size, &v, &info, &err) == 0 && t.chunks + info.unknown_chunks != info.chunks) {
        fprintf(stderr, "fuzz oracle: %llu chunks visited + %llu unknown != %llu parsed\n",
                (unsigned long long)t.chunks, (unsigned long long)info.unknown_chunks, (unsigned long long)info.chunks);
        abort();
    }
    dt_session *s = NULL;
    if (dt_replay_capture(copy, size, NULL, &s, &info, &err) == 0) {
        fz_check_trace(s);
        devtrace_close(s);
    }
    /* the same bytes decoded as MCPTI's (its scanner takes any bytes) */
    dt_replay_options as_mcpti = {"mcpti"};
    if (dt_replay_capture(copy, size, &as_mcpti, &s, &info, &err) == 0) {
        fz_check_trace(s);
        devtrace_close(s);
    }
    free(copy);
    return 0;
}
