/* bench_decode.c: the decode figures. Activity buffers written by the emulator's runtime
 * (emu_records.c) are decoded by the real CUPTI-family decoder (dt_pti_walk_buffer, the
 * code the completion callback runs) into a session's event store; the baseline is a
 * memcpy of the same buffers into a buffer of the same size, timed in the same
 * repetition. Records/s, input bytes/s and the ratio of the two times.
 *
 * Memory: each repetition measures twice. Warm (the figures with targets): the store's
 * chunks reuse memory the process has touched before (malloc keeps what the previous
 * session freed) and the copy goes to a destination written before, so both sides run
 * at the speed of the code and the memory bus. Cold (informational): the store takes
 * memory the kernel has to fault in (malloc_trim returns it first), as the first session
 * of a process does, and the copy goes to fresh pages; both sides then pay the page
 * faults, which on these machines cost more than the decoding (docs/performance.md).
 *
 * MCPTI: buffers of MetaX sizes with about 5% bad bytes, walked by the MCPTI
 * descriptor's own scanner (its GetNextRecord cannot be trusted). The descriptor is
 * found at build time (bench/CMakeLists.txt looks for it in src/backends/mcpti.c);
 * without it the figures say so. */
#include <math.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "backends/pti_family.h"
#include "bench.h"
#include "emu_records.h"

/* The targets: memcpy CPU time over decode CPU time of the same buffers, warm, per buffer
 * (series_add), same repetition. */
#define DECODE_CUPTI_MIN_RATIO 0.45
#define DECODE_MCPTI_MIN_RATIO 0.35

#ifdef DT_BENCH_MCPTI_DESCRIPTOR
extern const dt_pti_descriptor DT_BENCH_MCPTI_DESCRIPTOR;
#endif

typedef struct decode_result {
    bench_span decode;
    double piece_cpu; /* the fast quartile of the buffers' CPU seconds (piece_quartile) */
    dt_pti_walk_counts counts;
    uint64_t stored;
} decode_result;

/* The fast quartile of the n buffers' CPU seconds (sorts v): on a loaded machine a buffer
 * that follows another program on the CPU starts with cold caches or is cut by a switch;
 * a quarter of the buffers running undisturbed is enough for the quartile to be theirs. */
static double piece_quartile(double *v, size_t n)
{
    bench_median(v, (int)n); /* sorts */
    return n ? v[n / 4] : NAN;
}

/* Copies every buffer into dst, back to back; *piece_cpu: the fast quartile of the
 * buffers' own CPU times. */
static bench_span time_copy_into(const bench_buffers *b, uint8_t *dst, double *piece_cpu)
{
    double *cpu = calloc(b->n ? b->n : 1, sizeof *cpu);
    bench_mark m = bench_mark_now();
    size_t off = 0;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t c0 = bench_thread_cpu_ns();
        memcpy(dst + off, b->data[i], b->valid[i]);
        off += b->valid[i];
        if (cpu)
            cpu[i] = (double)(bench_thread_cpu_ns() - c0) / 1e9;
    }
    bench_span span = bench_span_since(m);
    bench_keep(dst);
    *piece_cpu = cpu ? piece_quartile(cpu, b->n) : NAN;
    free(cpu);
    return span;
}

/* Into fresh pages (cold). */
static bench_span time_copy_cold(const bench_buffers *b)
{
    uint8_t *dst = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (dst == MAP_FAILED) {
        bench_span failed = {NAN, NAN};
        return failed;
    }
    double piece_cpu;
    bench_span s = time_copy_into(b, dst, &piece_cpu);
    munmap(dst, b->bytes);
    return s;
}

/* offline: the engine's own size-table walker (replay's: no vendor iterator, strides by
 * the layouts' record sizes), so the time is devtrace's alone. */
static int time_decode(const char *prefix, const bench_buffers *b, const dt_pti_descriptor *desc, uint32_t version,
                       int offline, decode_result *r)
{
    devtrace_error err;
    dt_session *s = dt_session_new_offline(desc->name, "benchmark", "cuda_runtime", &err);
    dt_pti_decoder *d = calloc(1, sizeof *d);
    if (!s || !d) {
        devtrace_close(s);
        free(d);
        return -1;
    }
    if (offline)
        dt_pti_decoder_init_offline(d, desc, s, version, NULL, NULL); /* names: the live pointers */
    else
        dt_pti_decoder_init(d, desc, s, version, bench_emu_next_record);
    memset(&r->counts, 0, sizeof r->counts);
    double *cpu = calloc(b->n ? b->n : 1, sizeof *cpu);
    bench_mark m = bench_mark_now();
    for (size_t i = 0; i < b->n; i++) {
        dt_pti_walk_counts c;
        bench_mark piece = bench_mark_now();
        uint64_t c0 = bench_thread_cpu_ns();
        dt_pti_walk_buffer(d, b->data[i], b->valid[i], DT_PTI_WALK_DECODE, &c);
        bench_slow(prefix, piece);
        if (cpu)
            cpu[i] = (double)(bench_thread_cpu_ns() - c0) / 1e9;
        r->counts.records += c.records;
        r->counts.emitted += c.emitted;
        r->counts.malformed += c.malformed;
        r->counts.zero_time += c.zero_time;
        r->counts.ignored += c.ignored;
    }
    r->decode = bench_span_since(m);
    r->piece_cpu = cpu ? piece_quartile(cpu, b->n) : NAN;
    free(cpu);
    dt_store_file_all(&s->store);
    r->stored = dt_store_count(&s->store);
    free(d);
    devtrace_close(s);
    return 0;
}

/* The vendor's iterator alone over the same buffers (reading each record's kind): the
 * part of a CUPTI decode that is the library's, not devtrace's. */
static double time_iterate(const bench_buffers *b, const dt_pti_descriptor *desc)
{
    uint64_t sum = 0, t0 = bench_now_ns();
    for (size_t i = 0; i < b->n; i++) {
        void *rec = NULL;
        while (bench_emu_next_record(b->data[i], b->valid[i], &rec) == desc->results.success && rec)
            sum += *(const uint8_t *)rec;
    }
    uint64_t t1 = bench_now_ns();
    bench_keep(&sum);
    return (double)(t1 - t0) / 1e9;
}

typedef struct series {
    double *rate, *bytes, *ratio;
} series;

static int series_init(series *x, int reps)
{
    x->rate = calloc((size_t)reps, sizeof *x->rate);
    x->bytes = calloc((size_t)reps, sizeof *x->bytes);
    x->ratio = calloc((size_t)reps, sizeof *x->ratio);
    return x->rate && x->bytes && x->ratio ? 0 : -1;
}

static void series_free(series *x)
{
    free(x->rate), free(x->bytes), free(x->ratio);
}

/* The rates by the wall clock; the ratio by CPU time (bench.h says why), per buffer: the
 * fast quartile of the copies' over that of the decodes (piece_quartile), when both are known. */
static void series_add(series *x, int i, const bench_buffers *b, bench_span copy, double copy_piece,
                       const decode_result *r)
{
    x->rate[i] = (double)b->records / r->decode.wall_s;
    x->bytes[i] = (double)b->bytes / r->decode.wall_s;
    x->ratio[i] = isfinite(copy_piece) && isfinite(r->piece_cpu) && r->piece_cpu > 0 ? copy_piece / r->piece_cpu
                                                                                     : copy.cpu_s / r->decode.cpu_s;
}

/* Decodes the buffers reps times, cold then warm, each after a copy of the same bytes. */
static void measure(const char *prefix, const bench_buffers *b, const dt_pti_descriptor *desc, uint32_t version,
                    int reps, double min_ratio)
{
    series warm = {0}, cold = {0}, own = {0};
    decode_result own_r = {0};
    double *iterate = calloc((size_t)reps, sizeof *iterate);
    char name[64], note[320];
    decode_result r = {0};
    uint8_t *dst = malloc(b->bytes);
    int ok = dst && iterate && series_init(&warm, reps) == 0 && series_init(&cold, reps) == 0 &&
             series_init(&own, reps) == 0;
    if (ok)
        memset(dst, 1, b->bytes);
    /* Free memory stays with malloc (warm) until malloc_trim returns it (cold). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, INT32_MAX);
    for (int i = 0; ok && i < reps; i++) {
        malloc_trim(0);
        bench_span copy = time_copy_cold(b);
        if (!isfinite(copy.wall_s) || time_decode(prefix, b, desc, version, 0, &r) != 0) {
            ok = 0;
            break;
        }
        series_add(&cold, i, b, copy, NAN, &r);
        double copy_piece = NAN;
        copy = time_copy_into(b, dst, &copy_piece);
        if (time_decode(prefix, b, desc, version, 0, &r) != 0) {
            ok = 0;
            break;
        }
        series_add(&warm, i, b, copy, copy_piece, &r);
        if (!desc->scan) {
            if (time_decode(prefix, b, desc, version, 1, &own_r) != 0) {
                ok = 0;
                break;
            }
            series_add(&own, i, b, copy, copy_piece, &own_r);
        }
        iterate[i] = (double)b->records / time_iterate(b, desc);
    }
    free(dst);
    if (!ok) {
        snprintf(name, sizeof name, "%s.vs_memcpy", prefix);
        bench_unmeasurable(name, "ratio", BENCH_AT_LEAST, min_ratio, "out of memory");
        series_free(&warm), series_free(&cold), series_free(&own);
        free(iterate);
        return;
    }
    snprintf(note, sizeof note,
             "%.0f MiB in %zu buffers of 1 MiB, %llu records (%llu stored, %llu malformed, %llu zero-time), "
             "warm memory, median of %d",
             (double)b->bytes / (1 << 20), b->n, (unsigned long long)b->records, (unsigned long long)r.stored,
             (unsigned long long)r.counts.malformed, (unsigned long long)r.counts.zero_time, reps);
    snprintf(name, sizeof name, "%s.records_per_s", prefix);
    bench_report(name, bench_median(warm.rate, reps), "records/s", BENCH_INFO, 0, note);
    snprintf(name, sizeof name, "%s.bytes_per_s", prefix);
    bench_report(name, bench_median(warm.bytes, reps), "B/s", BENCH_INFO, 0, "input bytes decoded per second");
    snprintf(name, sizeof name, "%s.vs_memcpy", prefix);
    bench_report(name, bench_median(warm.ratio, reps), "ratio", BENCH_AT_LEAST, min_ratio,
                 "memcpy of the same buffers over the decode, in CPU time per 1 MiB buffer (the fast quartile "
                 "of each), same repetition; the median of the repetitions");
    if (!desc->scan) {
        snprintf(name, sizeof name, "%s.iterator_only.records_per_s", prefix);
        bench_report(name, bench_median(iterate, reps), "records/s", BENCH_INFO, 0,
                     "the vendor's GetNextRecord (the emulator's) walking the same buffers without decoding: "
                     "the ceiling of a decode that must use it");
        snprintf(name, sizeof name, "%s.own.records_per_s", prefix);
        snprintf(note, sizeof note,
                 "devtrace's own part: the same buffers decoded by the engine's size-table walker (replay's, "
                 "no vendor iterator), warm; %llu of %llu records taken",
                 (unsigned long long)own_r.counts.records, (unsigned long long)b->records);
        bench_report(name, bench_median(own.rate, reps), "records/s", BENCH_INFO, 0, note);
        snprintf(name, sizeof name, "%s.own.vs_memcpy", prefix);
        bench_report(name, bench_median(own.ratio, reps), "ratio", BENCH_INFO, 0,
                     "the size-table walker's decode over memcpy of the same buffers, same repetition");
    }
    snprintf(name, sizeof name, "%s.cold.records_per_s", prefix);
    bench_report(name, bench_median(cold.rate, reps), "records/s", BENCH_INFO, 0,
                 "the store's memory faulted in during the decode (a process's first session)");
    snprintf(name, sizeof name, "%s.cold.vs_memcpy", prefix);
    bench_report(name, bench_median(cold.ratio, reps), "ratio", BENCH_INFO, 0,
                 "cold decode over memcpy into fresh pages");
    series_free(&warm), series_free(&cold), series_free(&own);
    free(iterate);
}

void bench_decode(const bench_sizes *sz, const bench_paths *paths)
{
    (void)paths;
    bench_buffers b;
    fprintf(stderr, "bench: decode: writing %.0f MiB of CUPTI records with the emulator\n",
            (double)sz->decode_bytes / (1 << 20));
    if (bench_buffers_build(&b, BENCH_CUPTI, sz->decode_bytes, 0x5eed) != 0) {
        bench_unmeasurable("decode.cupti.vs_memcpy", "ratio", BENCH_AT_LEAST, DECODE_CUPTI_MIN_RATIO,
                           "the emulator could not write the buffers (out of memory)");
    } else {
        measure("decode.cupti", &b, &dt_pti_cupti_descriptor, bench_emu_version(BENCH_CUPTI), sz->reps,
                DECODE_CUPTI_MIN_RATIO);
    }
    bench_buffers_free(&b);

#ifdef DT_BENCH_MCPTI_DESCRIPTOR
    const dt_pti_descriptor *mcpti = &DT_BENCH_MCPTI_DESCRIPTOR;
    if (!mcpti->scan) {
        bench_unmeasurable("decode.mcpti.vs_memcpy", "ratio", BENCH_AT_LEAST, DECODE_MCPTI_MIN_RATIO,
                           "the MCPTI descriptor has no scanner (.scan is NULL)");
        return;
    }
    fprintf(stderr, "bench: decode: writing %.0f MiB of MCPTI records (5%% bad) with the emulator\n",
            (double)sz->decode_bytes / (1 << 20));
    if (bench_buffers_build(&b, BENCH_MCPTI, sz->decode_bytes, 0x5eed) != 0) {
        bench_unmeasurable("decode.mcpti.vs_memcpy", "ratio", BENCH_AT_LEAST, DECODE_MCPTI_MIN_RATIO,
                           "the emulator could not write the buffers (out of memory)");
    } else {
        measure("decode.mcpti", &b, mcpti, bench_emu_version(BENCH_MCPTI), sz->reps, DECODE_MCPTI_MIN_RATIO);
    }
    bench_buffers_free(&b);
#else
    static const char why[] = "not measurable yet: no MCPTI backend in this build (src/backends/mcpti.c with its "
                              "scanner); the benchmark picks it up when it exists";
    bench_unmeasurable("decode.mcpti.vs_memcpy", "ratio", BENCH_AT_LEAST, DECODE_MCPTI_MIN_RATIO, "%s", why);
#endif
}
