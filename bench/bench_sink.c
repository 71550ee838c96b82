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

/* Writes the finalised session to path; seconds, or NaN on failure. */
static double time_write(dt_session *s, const char *path)
{
    devtrace_error err;
    uint64_t t0 = bench_now_ns();
    int rc = devtrace_write_trace(s, path, &err); /* the format by the name, as devtrace record */
    uint64_t t1 = bench_now_ns();
    if (rc != 0) {
        fprintf(stderr, "bench: writing %s: %s\n", path, err.message);
        return NAN;
    }
    return (double)(t1 - t0) / 1e9;
}

/* The sink into /dev/null: <path>.tmp is a link to it, renamed to <path>, then removed. */
static double time_format(dt_session *s, const char *dir)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/format-null.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    if (symlink("/dev/null", tmp) != 0) {
        fprintf(stderr, "bench: symlink %s: %s\n", tmp, strerror(errno));
        return NAN;
    }
    double seconds = time_write(s, path);
    unlink(path);
    unlink(tmp);
    return seconds;
}

/* zlib alone on the first max_bytes of a plain trace: gzip level 1 (the sink's default),
 * output discarded. Input bytes per second, or NaN. The limit of the gzip write. */
static double zlib_rate(const char *path, uint64_t max_bytes)
{
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
        uint64_t t0 = bench_now_ns();
        z.next_in = in;
        z.avail_in = (uInt)size;
        int rc;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            rc = deflate(&z, Z_FINISH);
        } while (rc == Z_OK || rc == Z_BUF_ERROR);
        uint64_t t1 = bench_now_ns();
        if (rc == Z_STREAM_END)
            rate = (double)size / ((double)(t1 - t0) / 1e9);
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
        bench_unmeasurable("format.events_per_s", "events/s", BENCH_AT_LEAST, 10e6, "out of memory");
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
    double *wpf = calloc((size_t)reps, sizeof *wpf);
    uint64_t plain_bytes = 0, gz_bytes = 0, pf_bytes = 0;
    int ok = fmt && wp && wg && wp_mb && wg_mb && ratio && wp_share && zlib && kern && wpc && wpf;
    for (int i = 0; ok && i < reps; i++) {
        double f = time_format(s, paths->tmpdir);
        /* A warm page cache: the measured write follows a write of the same trace whose
         * pages were just freed. The first write is reported too (cold): on these VMs,
         * memory the guest freed a while ago costs the host a fault again. */
        double cold = time_write(s, plain);
        unlink(plain);
        double p = time_write(s, plain);
        plain_bytes = file_size(plain);
        zlib[i] = zlib_rate(plain, 256u << 20) / ((double)plain_bytes / events);
        unlink(plain);
        kern[i] = events / kernel_write_seconds(plain, plain_bytes);
        double g = time_write(s, gz);
        gz_bytes = file_size(gz);
        unlink(gz);
        double pf_cold = time_write(s, pftrace); /* then warm, as the plain write */
        unlink(pftrace);
        double pf = time_write(s, pftrace);
        pf_bytes = file_size(pftrace);
        unlink(pftrace);
        if (!isfinite(f) || !isfinite(cold) || !isfinite(p) || !isfinite(g) || !isfinite(pf_cold) || !isfinite(pf) ||
            !plain_bytes || !gz_bytes || !pf_bytes) {
            ok = 0;
            break;
        }
        fmt[i] = events / f;
        wp[i] = events / p;
        wpc[i] = events / cold;
        wg[i] = events / g;
        wpf[i] = events / pf;
        wp_mb[i] = (double)plain_bytes / p;
        wg_mb[i] = (double)gz_bytes / g;
        ratio[i] = (double)plain_bytes / (double)gz_bytes;
        wp_share[i] = f / p;
    }
    if (!ok) {
        bench_unmeasurable("format.events_per_s", "events/s", BENCH_AT_LEAST, 10e6,
                           "the sink failed (out of memory, or the scratch folder %s is not writable)", paths->tmpdir);
    } else {
        snprintf(note, sizeof note, "%.0f events (%.0f%% kernels), %.1f MB of JSON, median of %d", events,
                 100.0 * (double)s->stats.events[DEVTRACE_KIND_KERNEL] / events, (double)plain_bytes / 1e6, reps);
        bench_report("format.events_per_s", bench_median(fmt, reps), "events/s", BENCH_AT_LEAST, 10e6, note);
        bench_report("format.bytes_per_event", (double)plain_bytes / events, "B/event", BENCH_INFO, 0,
                     "the mix, flows and metadata included");
        report_bytes_by_kind();
        bench_report("write.plain.events_per_s", bench_median(wp, reps), "events/s", BENCH_AT_LEAST, 5e6,
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
        bench_report("write.gzip.events_per_s", bench_median(wg, reps), "events/s", BENCH_AT_LEAST, 1e6,
                     "the same trace to .json.gz (zlib level 1, the default)");
        bench_report("write.gzip.bytes_per_s", bench_median(wg_mb, reps), "B/s", BENCH_INFO, 0,
                     "compressed bytes written per second");
        bench_report("write.gzip.compression_ratio", bench_median(ratio, reps), "ratio", BENCH_AT_LEAST, 8,
                     "plain size over .json.gz size");
        bench_report("write.perfetto.events_per_s", bench_median(wpf, reps), "events/s", BENCH_AT_LEAST, 5e6,
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
    free(wpf);
    devtrace_close(s);
}

void bench_drain(const bench_sizes *sz, const bench_paths *paths)
{
    int reps = sz->reps;
    double *seconds = calloc((size_t)reps, sizeof *seconds), *finalize = calloc((size_t)reps, sizeof *finalize);
    char path[4096], note[320];
    snprintf(path, sizeof path, "%s/drain.json", paths->tmpdir);
    uint64_t events = 0;
    for (int i = 0; seconds && finalize && i < reps; i++) {
        dt_session *s = bench_events_session(sz->drain_events, BENCH_MIX_ALL, 1000 + (uint64_t)i);
        if (!s) {
            bench_unmeasurable("drain.seconds", "s", BENCH_AT_MOST, 0.3, "out of memory");
            free(seconds), free(finalize);
            return;
        }
        uint64_t t0 = bench_now_ns();
        int rc = dt_session_finalize(s);
        uint64_t t1 = bench_now_ns();
        double w = rc == 0 ? time_write(s, path) : NAN;
        events = s->nsorted;
        devtrace_close(s);
        unlink(path);
        if (!isfinite(w)) {
            bench_unmeasurable("drain.seconds", "s", BENCH_AT_MOST, 0.3, "the trace could not be written to %s", path);
            free(seconds), free(finalize);
            return;
        }
        finalize[i] = (double)(t1 - t0) / 1e9;
        seconds[i] = finalize[i] + w;
    }
    if (!seconds || !finalize)
        return;
    snprintf(note, sizeof note, "%llu events in the trace: finalise + write plain JSON, median of %d",
             (unsigned long long)events, reps);
    double scale = 1e6 / (double)(events ? events : 1);
    bench_report("drain.seconds_per_1M_events", bench_median(seconds, reps) * scale, "s", BENCH_AT_MOST, 0.3, note);
    bench_report("drain.finalize_seconds_per_1M_events", bench_median(finalize, reps) * scale, "s", BENCH_INFO, 0,
                 "clock alignment, window, external ids, flows, demangling, sort");
    free(seconds), free(finalize);
}
