/* bench_recorder.c: devtrace record's memory and its end of run, at two sizes of run ten
 * times apart (full: 1 M and 10 M events). The program that ships the events is
 * rel_host (tests/reliability): the parity workload through the CUPTI emulator, repeated
 * (223 events a repeat: 17 kernels, a memcpy, a memset, 187 runtime calls, 17 ops). The
 * recorder runs with DEVTRACE_RECORDER_STATS=1 and says its peak resident memory
 * (VmHWM) at the program's end and after writing, its anonymous memory, the time from the
 * program's end to the trace written and the spill's bytes (src/cli/record.c). The files
 * go to $TMPDIR or /var/tmp (a disk: the spill, the chunks and a 10 M-event trace are
 * several GB).
 *
 * Figures:
 *   recorder.peak_rss.{small,large}      VmHWM over the whole run (MB), information
 *   recorder.run_rss.{small,large}       VmHWM when the program ended: while it ran (MB), information
 *   recorder.anon_rss.{small,large}      RssAnon with the sessions built (MB), information
 *   recorder.peak_rss.large_vs_small     the ratio of the two peaks: judged, at most 1.5 (flat)
 *   recorder.run_rss.large_vs_small      the same while the program runs: judged, at most 1.5
 *   recorder.write.s_per_M_events        end of run per million events (s), information
 *   recorder.write.vs_read_spill         end of run over one read of the spill's bytes (a
 *                                        file of that size read once, in the same run): judged
 * --slowdown does not reach these rows: the work measured is another process's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef DT_BENCH_REL_HOST
#define DT_BENCH_REL_HOST ""
#endif
#ifndef DT_BENCH_CUPTI_EMU
#define DT_BENCH_CUPTI_EMU ""
#endif
#ifndef DT_BENCH_PARITY_WL
#define DT_BENCH_PARITY_WL ""
#endif

#define EVENTS_PER_REPEAT 223u
#define FLAT_MAX_RATIO 1.5
/* The end of run over one read of the spill's bytes (from the page cache): 238 and 242 measured
 * at load 2 to 5 (full and smoke sizes); the target sits between that and twice it. */
#define WRITE_MAX_RATIO 350.0

typedef struct recorder_run {
    double run_hwm_mb, peak_hwm_mb, anon_mb; /* at the program's end, after writing, with the sessions built */
    double end_s;                            /* the program's end to the trace written */
    unsigned long long spill_bytes;
    uint64_t events;
} recorder_run;

static double field_kb(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? strtod(p + strlen(key), NULL) : -1;
}

/* One recorded run of repeats; 0, or -1 with a line in why. */
static int record_once(const bench_paths *paths, const char *dir, unsigned repeats, recorder_run *r, char *why,
                       size_t whylen)
{
    char out[4096], err[4096], trace[1100], errpath[1100], reps[32];
    snprintf(trace, sizeof trace, "%s/recorder-bench.json", dir);
    snprintf(errpath, sizeof errpath, "%s/recorder-bench.err", dir);
    snprintf(reps, sizeof reps, "%u", repeats);
    setenv("DEVTRACE_CUPTI_LIBRARY", DT_BENCH_CUPTI_EMU, 1);
    setenv("DEVTRACE_RECORDER_STATS", "1", 1);
    char *argv[] = {(char *)paths->cli,
                    "record",
                    "-q",
                    "-b",
                    "cupti",
                    "-o",
                    trace,
                    "--",
                    DT_BENCH_REL_HOST,
                    "--lib",
                    DT_BENCH_CUPTI_EMU,
                    DT_BENCH_PARITY_WL,
                    "--repeat",
                    reps,
                    NULL};
    int rc = bench_run_program(argv, 0, errpath, out, sizeof out, err, sizeof err);
    unlink(trace);
    if (rc != 0) {
        snprintf(why, whylen, "devtrace record exited %d: %.200s", rc, err);
        unlink(errpath);
        return -1;
    }
    FILE *f = fopen(errpath, "r");
    memset(r, 0, sizeof *r);
    char line[512];
    int seen = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "memory at the program's end:"))
            r->run_hwm_mb = field_kb(line, "VmHWM ") / 1024, seen |= 1;
        else if (strstr(line, "memory with the sessions built:"))
            r->anon_mb = field_kb(line, "RssAnon ") / 1024, seen |= 2;
        else if (strstr(line, "memory after writing:"))
            r->peak_hwm_mb = field_kb(line, "VmHWM ") / 1024, seen |= 4;
        else if (strstr(line, "end of run: ")) {
            r->end_s = strtod(strstr(line, "end of run: ") + 12, NULL);
            const char *sp = strstr(line, "spill ");
            r->spill_bytes = sp ? strtoull(sp + 6, NULL, 10) : 0;
            seen |= 8;
        }
    }
    if (f)
        fclose(f);
    unlink(errpath);
    if (seen != 15) {
        snprintf(why, whylen, "devtrace record did not print its DEVTRACE_RECORDER_STATS lines");
        return -1;
    }
    r->events = (uint64_t)repeats * EVENTS_PER_REPEAT;
    return 0;
}

/* Seconds to read a file of bytes once (made here, in dir, then read in 1 MiB pieces),
 * the best of reps; -1 when it cannot be made. */
static double read_once_s(const char *dir, unsigned long long bytes, int reps)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/recorder-bench.read", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    enum { PIECE = 1 << 20 };
    char *buf = malloc(PIECE);
    double best = -1;
    if (fd < 0 || !buf)
        goto end;
    memset(buf, 0x5a, PIECE);
    for (unsigned long long left = bytes; left;) {
        size_t n = left < PIECE ? (size_t)left : PIECE;
        if (write(fd, buf, n) != (ssize_t)n)
            goto end;
        left -= n;
    }
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = bench_now_ns();
        ssize_t n;
        unsigned long long sum = 0;
        lseek(fd, 0, SEEK_SET);
        while ((n = read(fd, buf, PIECE)) > 0)
            sum += (unsigned char)buf[n - 1];
        double s = (double)(bench_now_ns() - t0) / 1e9;
        if (sum && (best < 0 || s < best))
            best = s;
    }
end:
    if (fd >= 0)
        close(fd);
    unlink(path);
    free(buf);
    return best;
}

void bench_recorder(const bench_sizes *sz, const bench_paths *paths)
{
    static const char *const names[] = {"recorder.peak_rss.large_vs_small", "recorder.run_rss.large_vs_small",
                                        "recorder.write.vs_read_spill"};
    const double targets[] = {FLAT_MAX_RATIO, FLAT_MAX_RATIO, WRITE_MAX_RATIO};
    if (!paths->cli[0] || !DT_BENCH_REL_HOST[0] || !DT_BENCH_CUPTI_EMU[0]) {
        for (int i = 0; i < 3; i++)
            bench_unmeasurable(names[i], "ratio", BENCH_AT_MOST, targets[i],
                               "needs the devtrace command, rel_host and the CUPTI emulator (a build with the tests)");
        return;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/devtrace-recorder-bench-XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
    if (!mkdtemp(dir)) {
        for (int i = 0; i < 3; i++)
            bench_unmeasurable(names[i], "ratio", BENCH_AT_MOST, targets[i], "cannot make a folder %s: %s", dir,
                               strerror(errno));
        return;
    }
    unsigned small = (unsigned)((sz->recorder_events + EVENTS_PER_REPEAT - 1) / EVENTS_PER_REPEAT);
    recorder_run runs[2];
    char why[320], note[320];
    const char *label[2] = {"small", "large"};
    for (int k = 0; k < 2; k++) {
        if (record_once(paths, dir, k ? small * 10 : small, &runs[k], why, sizeof why) != 0) {
            for (int i = 0; i < 3; i++)
                bench_unmeasurable(names[i], "ratio", BENCH_AT_MOST, targets[i], "%s", why);
            rmdir(dir);
            return;
        }
        char name[64];
        snprintf(note, sizeof note, "%.2f M events: VmHWM over the whole run", (double)runs[k].events / 1e6);
        snprintf(name, sizeof name, "recorder.peak_rss.%s", label[k]);
        bench_report(name, runs[k].peak_hwm_mb, "MB", BENCH_INFO, 0, note);
        snprintf(note, sizeof note, "%.2f M events: VmHWM when the program ended", (double)runs[k].events / 1e6);
        snprintf(name, sizeof name, "recorder.run_rss.%s", label[k]);
        bench_report(name, runs[k].run_hwm_mb, "MB", BENCH_INFO, 0, note);
        snprintf(note, sizeof note, "%.2f M events: RssAnon with the sessions built (the events in file-backed chunks)",
                 (double)runs[k].events / 1e6);
        snprintf(name, sizeof name, "recorder.anon_rss.%s", label[k]);
        bench_report(name, runs[k].anon_mb, "MB", BENCH_INFO, 0, note);
    }
    snprintf(note, sizeof note, "VmHWM at %.2f M events over VmHWM at %.2f M (flat: at most %.1f)",
             (double)runs[1].events / 1e6, (double)runs[0].events / 1e6, FLAT_MAX_RATIO);
    bench_report(names[0], runs[1].peak_hwm_mb / runs[0].peak_hwm_mb, "ratio", BENCH_AT_MOST, FLAT_MAX_RATIO, note);
    bench_report(names[1], runs[1].run_hwm_mb / runs[0].run_hwm_mb, "ratio", BENCH_AT_MOST, FLAT_MAX_RATIO,
                 "the same, when the program ended (what the recorder holds while it runs)");
    const recorder_run *big = &runs[1];
    bench_report("recorder.write.s_per_M_events", big->end_s / ((double)big->events / 1e6), "s", BENCH_INFO, 0,
                 "the program's end to the trace written, per million events (the large run)");
    double ref = read_once_s(dir, big->spill_bytes, sz->reps);
    if (ref <= 0) {
        bench_unmeasurable(names[2], "ratio", BENCH_AT_MOST, WRITE_MAX_RATIO, "cannot time a read of %llu bytes in %s",
                           big->spill_bytes, dir);
    } else {
        snprintf(note, sizeof note, "%.2f s over %.3f s to read the spill's %.0f MB once (the large run)", big->end_s,
                 ref, (double)big->spill_bytes / 1e6);
        bench_report(names[2], big->end_s / ref, "ratio", BENCH_AT_MOST, WRITE_MAX_RATIO, note);
    }
    rmdir(dir);
}
