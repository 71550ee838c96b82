/* bench_sink.c: the format, write and drain figures of the Chrome JSON sink.
 *
 * Format: the sink's formatting alone. devtrace_write_chrome (the production path:
 * a 1 MiB buffer flushed with fwrite) writes to a file whose temporary name is a
 * symbolic link to /dev/null, so every byte is formatted and handed to the kernel, and
 * nothing is stored: events/s and bytes/event. Bytes per event by kind come from
 * single-kind traces (the size difference of two traces of different lengths).
 *
 * Write: the same trace to a real file in the scratch folder (the page cache: nothing
 * waits for the disk), plain and .json.gz (gzip level 1, the sink's default): events/s,
 * output MB/s, and the compression ratio. The baseline of both is the format figure of
 * the same repetition (the ratio says what the file and zlib cost); the ceilings are
 * zlib alone on the same bytes and write(2) alone of as many bytes into the same folder.
 *
 * Perfetto: the same trace as .pftrace (the Perfetto sink, src/sinks/perfetto.c), on a warm
 * page cache as the plain write: events/s and bytes/event.
 *
 * Drain: stop-to-trace-on-disk for a session of stored events: finalise (clock
 * alignment, window, external ids, flows, demangling, sort) and write the plain trace. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bench.h"
#include "events.h"
#include "sinks/sinks.h"

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The targets: each sink's time against the time of a reference that writes the same
 * number of bytes, same folder, same repetition (docs/performance.md). */
#define FORMAT_MIN_RATIO 1.2
#define WRITE_PLAIN_MIN_RATIO 0.35
#define WRITE_GZIP_MIN_RATIO 0.7
#define WRITE_GZIP_MIN_COMPRESSION 8.0
#define WRITE_PERFETTO_MIN_RATIO 0.15
#define DRAIN_MIN_RATIO 0.0095

static const bench_span failed_span = {NAN, NAN};

/* Writes the finalised session to path; its span, NaN on failure. component: the figure
 * the time is judged in (bench_slow). */
static bench_span time_write(dt_session *s, const char *path, const char *component)
{
    devtrace_error err;
    bench_mark m = bench_mark_now();
    int rc = devtrace_write_trace(s, path, &err); /* the format by the name, as devtrace record */
    bench_slow(component, m);
    bench_span span = bench_span_since(m);
    if (rc != 0) {
        fprintf(stderr, "bench: writing %s: %s\n", path, err.message);
        return failed_span;
    }
    return span;
}

/* The sink into /dev/null: <path>.tmp is a link to it, renamed to <path>, then removed. */
static bench_span time_format(dt_session *s, const char *dir)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/format-null.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    if (symlink("/dev/null", tmp) != 0) {
        fprintf(stderr, "bench: symlink %s: %s\n", tmp, strerror(errno));
        return failed_span;
    }
    bench_span span = time_write(s, path, "format");
    unlink(path);
    unlink(tmp);
    return span;
}

/* The reference of the format and write figures: bytes written with plain fwrite calls of
 * piece bytes each from a ready buffer, into a new file at path (or /dev/null), closed.
 * Its span, NaN on failure. */
static bench_span fwrite_span(const char *path, uint64_t bytes, size_t piece)
{
    static char block[1u << 20];
    if (!block[0])
        memset(block, ' ', sizeof block);
    if (piece == 0 || piece > sizeof block)
        piece = sizeof block;
    bench_mark m = bench_mark_now();
    FILE *f = fopen(path, "w");
    if (!f)
        return failed_span;
    int ok = 1;
    for (uint64_t left = bytes; ok && left;) {
        size_t n = left < piece ? (size_t)left : piece;
        ok = fwrite(block, 1, n, f) == n;
        left -= n;
    }
    ok &= fclose(f) == 0;
    bench_span span = bench_span_since(m);
    return ok ? span : failed_span;
}

/* zlib alone on the first max_bytes of a plain trace: gzip level 1 (the sink's default),
 * output discarded. Input bytes per second, or NaN, and in *cpu_rate per CPU second. The
 * limit of the gzip write. */
static double zlib_rate(const char *path, uint64_t max_bytes, double *cpu_rate)
{
    *cpu_rate = NAN;
    int fd = open(path, O_RDONLY);
    uint64_t size = file_size(path);
    if (fd < 0 || size == 0) {
        if (fd >= 0)
            close(fd);
        return NAN;
    }
    if (size > max_bytes)
        size = max_bytes;
    unsigned char *in = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (in == MAP_FAILED)
        return NAN;
    static unsigned char out[1 << 20];
    z_stream z;
    memset(&z, 0, sizeof z);
    double rate = NAN;
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
        bench_mark m = bench_mark_now();
        z.next_in = in;
        z.avail_in = (uInt)size;
        int rc;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            rc = deflate(&z, Z_FINISH);
        } while (rc == Z_OK || rc == Z_BUF_ERROR);
        bench_span span = bench_span_since(m);
        if (rc == Z_STREAM_END) {
            rate = (double)size / span.wall_s;
            *cpu_rate = (double)size / span.cpu_s;
        }
        deflateEnd(&z);
    }
    munmap(in, size);
    return rate;
}

/* Seconds to write(2) `bytes` bytes into a new file at path from a 16 MiB buffer: what
 * the kernel alone costs for a trace of that size in that folder (NAN on failure). */
static double kernel_write_seconds(const char *path, uint64_t bytes)
{
    static char block[16u << 20];
    if (!block[0])
        memset(block, ' ', sizeof block);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return NAN;
    uint64_t t0 = bench_now_ns(), left = bytes;
    while (left) {
        size_t n = left < sizeof block ? (size_t)left : sizeof block;
        ssize_t w = write(fd, block, n);
        if (w <= 0) {
            close(fd);
            unlink(path);
            return NAN;
        }
        left -= (uint64_t)w;
    }
    int rc = close(fd);
    uint64_t t1 = bench_now_ns();
    unlink(path);
    return rc == 0 ? (double)(t1 - t0) / 1e9 : NAN;
}

static double trace_bytes(dt_session *s)
{
    char *out = NULL;
    size_t len = 0;
    if (dt_chrome_write_buffer(s, "bench", &out, &len) != 0)
        return NAN;
    free(out);
    return (double)len;
}

/* Bytes one more event of a kind adds to the trace. */
static double bytes_per_event(bench_mix mix, uint64_t n)
{
    dt_session *a = bench_events_session(n, mix, 7), *b = bench_events_session(2 * n, mix, 7);
    double per = NAN;
    if (a && b && dt_session_finalize(a) == 0 && dt_session_finalize(b) == 0)
        per = (trace_bytes(b) - trace_bytes(a)) / (double)(b->nsorted - a->nsorted);
    devtrace_close(a);
    devtrace_close(b);
    return per;
}

static void report_bytes_by_kind(void)
{
    static const struct {
        bench_mix mix;
        const char *name, *note;
    } kinds[] = {
        {BENCH_MIX_KERNEL, "format.bytes_per_event.kernel", "with External id, launch shape and occupancy args"},
        {BENCH_MIX_MEMCPY, "format.bytes_per_event.memcpy", "with External id and bandwidth"},
        {BENCH_MIX_MEMSET, "format.bytes_per_event.memset", "with External id and bandwidth"},
        {BENCH_MIX_RUNTIME, "format.bytes_per_event.runtime", "cbid and correlation, no External id"},
        {BENCH_MIX_FLOW_PAIRS, "format.bytes_per_event.launch_pair",
         "a runtime call and its kernel with External ids and the ac2g flow pair, per event"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        bench_report(kinds[i].name, bytes_per_event(kinds[i].mix, 5000), "B/event", BENCH_INFO, 0, kinds[i].note);
}

void bench_sink(const bench_sizes *sz, const bench_paths *paths)
{
    int reps = sz->reps;
    fprintf(stderr, "bench: format: storing %llu events\n", (unsigned long long)sz->format_events);
    dt_session *s = bench_events_session(sz->format_events, BENCH_MIX_ALL, 42);
    if (!s || dt_session_finalize(s) != 0) {
        bench_unmeasurable("format.vs_fwrite", "ratio", BENCH_AT_LEAST, FORMAT_MIN_RATIO, "out of memory");
        devtrace_close(s);
        return;
    }
    double events = (double)s->nsorted;
    char plain[4096], gz[4096], pftrace[4096], note[320];
    snprintf(plain, sizeof plain, "%s/write.json", paths->tmpdir);
    snprintf(pftrace, sizeof pftrace, "%s/write.pftrace", paths->tmpdir);
    snprintf(gz, sizeof gz, "%s/write.json.gz", paths->tmpdir);
    double *fmt = calloc((size_t)reps, sizeof *fmt), *wp = calloc((size_t)reps, sizeof *wp);
    double *wg = calloc((size_t)reps, sizeof *wg), *wp_mb = calloc((size_t)reps, sizeof *wp_mb);
    double *wg_mb = calloc((size_t)reps, sizeof *wg_mb), *ratio = calloc((size_t)reps, sizeof *ratio);
    double *wp_share = calloc((size_t)reps, sizeof *wp_share), *zlib = calloc((size_t)reps, sizeof *zlib);
    double *kern = calloc((size_t)reps, sizeof *kern), *wpc = calloc((size_t)reps, sizeof *wpc);
    double *wpf = calloc((size_t)reps, sizeof *wpf), *fmt_ratio = calloc((size_t)reps, sizeof *fmt_ratio);
    double *wp_ratio = calloc((size_t)reps, sizeof *wp_ratio), *wg_ratio = calloc((size_t)reps, sizeof *wg_ratio);
    double *wpf_ratio = calloc((size_t)reps, sizeof *wpf_ratio);
    uint64_t plain_bytes = 0, gz_bytes = 0, pf_bytes = 0;
    int ok = fmt && wp && wg && wp_mb && wg_mb && ratio && wp_share && zlib && kern && wpc && wpf && fmt_ratio &&
             wp_ratio && wg_ratio && wpf_ratio;
    for (int i = 0; ok && i < reps; i++) {
        bench_span f = time_format(s, paths->tmpdir);
        /* A warm page cache: the measured write follows a write of the same trace whose
         * pages were just freed. The first write is reported too (cold): on these VMs,
         * memory the guest freed a while ago costs the host a fault again. */
        bench_span cold = time_write(s, plain, "write.plain");
        unlink(plain);
        bench_span p = time_write(s, plain, "write.plain");
        plain_bytes = file_size(plain);
        double zlib_cpu = NAN;
        zlib[i] = zlib_rate(plain, 256u << 20, &zlib_cpu) / ((double)plain_bytes / events);
        zlib_cpu /= (double)plain_bytes / events;
        unlink(plain);
        kern[i] = events / kernel_write_seconds(plain, plain_bytes);
        /* The references: each event's bytes, ready, by one fwrite to /dev/null (format);
         * the trace's size by fwrite into a new file of the same folder (plain, Perfetto). */
        bench_span ref_fmt =
            plain_bytes ? fwrite_span("/dev/null", plain_bytes, (size_t)(plain_bytes / events)) : failed_span;
        bench_span ref_plain = fwrite_span(plain, plain_bytes, 0);
        unlink(plain);
        bench_span g = time_write(s, gz, "write.gzip");
        gz_bytes = file_size(gz);
        unlink(gz);
        bench_span pf_cold = time_write(s, pftrace, "write.perfetto"); /* then warm, as the plain write */
        unlink(pftrace);
        bench_span pf = time_write(s, pftrace, "write.perfetto");
        pf_bytes = file_size(pftrace);
        unlink(pftrace);
        bench_span ref_pf = fwrite_span(pftrace, pf_bytes, 0);
        unlink(pftrace);
        if (!isfinite(f.wall_s) || !isfinite(cold.wall_s) || !isfinite(p.wall_s) || !isfinite(g.wall_s) ||
            !isfinite(pf_cold.wall_s) || !isfinite(pf.wall_s) || !isfinite(ref_fmt.wall_s) ||
            !isfinite(ref_plain.wall_s) || !isfinite(ref_pf.wall_s) || !isfinite(zlib_cpu) || !plain_bytes ||
            !gz_bytes || !pf_bytes) {
            ok = 0;
            break;
        }
        /* The judged ratios by CPU time (bench.h says why); the rates by the wall clock. */
        fmt_ratio[i] = ref_fmt.cpu_s / f.cpu_s;
        wp_ratio[i] = ref_plain.cpu_s / p.cpu_s;
        wg_ratio[i] = (events / g.cpu_s) / zlib_cpu;
        wpf_ratio[i] = ref_pf.cpu_s / pf.cpu_s;
        fmt[i] = events / f.wall_s;
        wp[i] = events / p.wall_s;
        wpc[i] = events / cold.wall_s;
        wg[i] = events / g.wall_s;
        wpf[i] = events / pf.wall_s;
        wp_mb[i] = (double)plain_bytes / p.wall_s;
        wg_mb[i] = (double)gz_bytes / g.wall_s;
        ratio[i] = (double)plain_bytes / (double)gz_bytes;
        wp_share[i] = f.wall_s / p.wall_s;
    }
    if (!ok) {
        static const struct {
            const char *name;
            double min;
        } judged[] = {{"format.vs_fwrite", FORMAT_MIN_RATIO},
                      {"write.plain.vs_fwrite", WRITE_PLAIN_MIN_RATIO},
                      {"write.gzip.vs_zlib", WRITE_GZIP_MIN_RATIO},
                      {"write.gzip.compression_ratio", WRITE_GZIP_MIN_COMPRESSION},
                      {"write.perfetto.vs_fwrite", WRITE_PERFETTO_MIN_RATIO}};
        bench_unmeasurable("format.events_per_s", "events/s", BENCH_INFO, 0,
                           "the sink failed (out of memory, or the scratch folder %s is not writable)", paths->tmpdir);
        for (size_t j = 0; j < sizeof judged / sizeof judged[0]; j++)
            bench_unmeasurable(judged[j].name, "ratio", BENCH_AT_LEAST, judged[j].min,
                               "the sink failed (out of memory, or the scratch folder %s is not writable)",
                               paths->tmpdir);
    } else {
        snprintf(note, sizeof note, "%.0f events (%.0f%% kernels), %.1f MB of JSON, median of %d", events,
                 100.0 * (double)s->stats.events[DEVTRACE_KIND_KERNEL] / events, (double)plain_bytes / 1e6, reps);
        bench_report("format.vs_fwrite", bench_best(fmt_ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST,
                     FORMAT_MIN_RATIO,
                     "fwrite of each event's bytes, ready, to the same /dev/null, over the format, in CPU time, "
                     "same repetition; the best of the repetitions");
        bench_report("format.events_per_s", bench_median(fmt, reps), "events/s", BENCH_INFO, 0, note);
        bench_report("format.bytes_per_event", (double)plain_bytes / events, "B/event", BENCH_INFO, 0,
                     "the mix, flows and metadata included");
        report_bytes_by_kind();
        bench_report("write.plain.vs_fwrite", bench_best(wp_ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST,
                     WRITE_PLAIN_MIN_RATIO,
                     "fwrite of as many bytes, 1 MiB at a time, into a new file of the same folder, over the plain "
                     "write, in CPU time, same repetition; the best of the repetitions");
        bench_report("write.plain.events_per_s", bench_median(wp, reps), "events/s", BENCH_INFO, 0,
                     "the same trace to a file in the scratch folder, on a warm page cache (right after a write "
                     "of the same trace whose pages were freed)");
        bench_report("write.plain.cold_events_per_s", bench_median(wpc, reps), "events/s", BENCH_INFO, 0,
                     "the first of the two writes: pages the kernel has to find first");
        bench_report("write.plain.bytes_per_s", bench_median(wp_mb, reps), "B/s", BENCH_INFO, 0, NULL);
        bench_report("write.plain.format_share", bench_median(wp_share, reps), "ratio", BENCH_INFO, 0,
                     "format time over plain write time, same repetition (the rest is the file)");
        bench_report("write.plain.kernel_only_events_per_s", bench_median(kern, reps), "events/s", BENCH_INFO, 0,
                     "write(2) of as many bytes into a new file in the same folder, 16 MiB at a time, same "
                     "repetition: the kernel's own ceiling for the plain write");
        bench_report("write.gzip.vs_zlib", bench_best(wg_ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST,
                     WRITE_GZIP_MIN_RATIO,
                     "the gzip write's events per CPU second over zlib deflate level 1's alone on the plain "
                     "trace's bytes (up to 256 MB), same repetition; the best of the repetitions");
        bench_report("write.gzip.events_per_s", bench_median(wg, reps), "events/s", BENCH_INFO, 0,
                     "the same trace to .json.gz (zlib level 1, the default)");
        bench_report("write.gzip.bytes_per_s", bench_median(wg_mb, reps), "B/s", BENCH_INFO, 0,
                     "compressed bytes written per second");
        bench_report("write.gzip.compression_ratio", bench_median(ratio, reps), "ratio", BENCH_AT_LEAST,
                     WRITE_GZIP_MIN_COMPRESSION, "plain size over .json.gz size");
        bench_report("write.perfetto.vs_fwrite", bench_best(wpf_ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST,
                     WRITE_PERFETTO_MIN_RATIO,
                     "fwrite of as many bytes, 1 MiB at a time, into a new file of the same folder, over the "
                     ".pftrace write, in CPU time, same repetition; the best of the repetitions");
        bench_report("write.perfetto.events_per_s", bench_median(wpf, reps), "events/s", BENCH_INFO, 0,
                     "the same trace to .pftrace (Perfetto's protobuf: a BEGIN and an END packet an event), warm "
                     "page cache as the plain write");
        bench_report("write.perfetto.bytes_per_event", (double)pf_bytes / events, "B/event", BENCH_INFO, 0,
                     "the .pftrace's size over the events, descriptors and interned names included");
        bench_report("write.gzip.zlib_only_events_per_s", bench_median(zlib, reps), "events/s", BENCH_INFO, 0,
                     "zlib deflate level 1 alone on the plain trace's bytes (up to 256 MB), same repetition: "
                     "the ceiling of the gzip write");
    }
    free(fmt), free(wp), free(wg), free(wp_mb), free(wg_mb), free(ratio), free(wp_share), free(zlib), free(kern),
        free(wpc);
    free(wpf), free(fmt_ratio), free(wp_ratio), free(wg_ratio), free(wpf_ratio);
    devtrace_close(s);
}

/* The drain figure's reference: a memcpy of the stored events' bytes (events x the event's size)
 * between two buffers touched before, seconds; NaN when out of memory. */
static bench_span store_memcpy_span(uint64_t events)
{
    size_t bytes = (size_t)events * sizeof(devtrace_event);
    char *src = malloc(bytes), *dst = malloc(bytes);
    bench_span span = failed_span;
    if (src && dst) {
        memset(src, 1, bytes);
        memset(dst, 2, bytes);
        bench_mark m = bench_mark_now();
        memcpy(dst, src, bytes);
        bench_keep(dst);
        span = bench_span_since(m);
    }
    free(src);
    free(dst);
    return span;
}

void bench_drain(const bench_sizes *sz, const bench_paths *paths)
{
    int reps = sz->reps;
    double *seconds = calloc((size_t)reps, sizeof *seconds), *finalize = calloc((size_t)reps, sizeof *finalize);
    double *ratio = calloc((size_t)reps, sizeof *ratio), *copy = calloc((size_t)reps, sizeof *copy);
    char path[4096], note[320];
    snprintf(path, sizeof path, "%s/drain.json", paths->tmpdir);
    uint64_t events = 0;
    if (!seconds || !finalize || !ratio || !copy) {
        bench_unmeasurable("drain.vs_memcpy", "ratio", BENCH_AT_LEAST, DRAIN_MIN_RATIO, "out of memory");
        free(seconds), free(finalize), free(ratio), free(copy);
        return;
    }
    for (int i = 0; i < reps; i++) {
        dt_session *s = bench_events_session(sz->drain_events, BENCH_MIX_ALL, 1000 + (uint64_t)i);
        bench_span c = s ? store_memcpy_span(sz->drain_events) : failed_span;
        copy[i] = c.wall_s;
        if (!s || !isfinite(c.wall_s)) {
            bench_unmeasurable("drain.vs_memcpy", "ratio", BENCH_AT_LEAST, DRAIN_MIN_RATIO, "out of memory");
            devtrace_close(s);
            free(seconds), free(finalize), free(ratio), free(copy);
            return;
        }
        bench_mark m = bench_mark_now();
        int rc = dt_session_finalize(s);
        bench_slow("drain", m);
        bench_span fin = bench_span_since(m);
        bench_span w = rc == 0 ? time_write(s, path, "drain") : failed_span;
        events = s->nsorted;
        devtrace_close(s);
        unlink(path);
        if (!isfinite(w.wall_s)) {
            bench_unmeasurable("drain.vs_memcpy", "ratio", BENCH_AT_LEAST, DRAIN_MIN_RATIO,
                               "the trace could not be written to %s", path);
            free(seconds), free(finalize), free(ratio), free(copy);
            return;
        }
        finalize[i] = fin.wall_s;
        seconds[i] = fin.wall_s + w.wall_s;
        ratio[i] = c.cpu_s / (fin.cpu_s + w.cpu_s); /* by CPU time (bench.h says why) */
    }
    snprintf(note, sizeof note, "%llu events in the trace: finalise + write plain JSON, median of %d",
             (unsigned long long)events, reps);
    double scale = 1e6 / (double)(events ? events : 1);
    bench_report("drain.vs_memcpy", bench_best(ratio, reps, BENCH_AT_LEAST), "ratio", BENCH_AT_LEAST, DRAIN_MIN_RATIO,
                 "memcpy of the store's bytes (the events x their size) over finalise + write, in CPU time, same "
                 "repetition; the best of the repetitions");
    bench_report("drain.seconds_per_1M_events", bench_median(seconds, reps) * scale, "s", BENCH_INFO, 0, note);
    bench_report("drain.finalize_seconds_per_1M_events", bench_median(finalize, reps) * scale, "s", BENCH_INFO, 0,
                 "clock alignment, window, external ids, flows, demangling, sort");
    bench_report("drain.memcpy_seconds_per_1M_events", bench_median(copy, reps) * scale, "s", BENCH_INFO, 0,
                 "the reference: memcpy of the store's bytes");
    free(seconds), free(finalize), free(ratio), free(copy);
}
