/* main.c: devtrace-bench, the benchmark suite's one program (scripts/bench builds and runs
 * it). Runs each benchmark in a child process (its own heap and resident set; a crash
 * is reported, not fatal), collects the figures, prints one table (figure, value,
 * target, pass/fail) and writes them as JSON: one object per figure with name, value,
 * unit, target, pass (and note). Every target is a ratio to a reference measured in the
 * same run; the exit status follows them: 0 every target measured and met, 1 a target
 * missed (or a benchmark did not complete), 3 none missed but some could not be measured
 * here (each says why), 2 a usage error. A --smoke run judges nothing (its sizes are too
 * small for the ratios to mean anything) and exits 0 when it ran.
 *
 *   devtrace-bench [--quick | --smoke] [--json PATH] [--only GROUP,...] [--tmpdir DIR]
 *                  [--cli PATH] [--launch-loop PATH] [--library PATH] [--slowdown FIGURE,...]
 *
 * Groups: decode, callback, format (format and write), memory, drain, e2e, report, torch, kineto,
 * recorder. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifndef DT_BENCH_CLI
#define DT_BENCH_CLI ""
#endif
#ifndef DT_BENCH_LAUNCH_LOOP
#define DT_BENCH_LAUNCH_LOOP ""
#endif
#ifndef DT_BENCH_SHARED_LIB
#define DT_BENCH_SHARED_LIB ""
#endif

typedef struct group {
    const char *name;
    void (*run)(const bench_sizes *, const bench_paths *);
} group;

static const group groups[] = {
    {"decode", bench_decode}, {"callback", bench_callback}, {"format", bench_sink},   {"memory", bench_memory},
    {"drain", bench_drain},   {"e2e", bench_e2e},           {"report", bench_reader}, {"torch", bench_torch},
    {"kineto", bench_kineto}, {"recorder", bench_recorder},
};
#define NGROUPS (sizeof groups / sizeof groups[0])

static const bench_sizes full_sizes = {
    .mode = "full",
    .reps = 5,
    .decode_bytes = 1ull << 30,
    .callback_calls = 4000000,
    .callback_calls_mt = 250000,
    .format_events = 10000000,
    .memory_events = 10000000,
    .drain_events = 1000000,
    .e2e_launches = 20000,
    .e2e_pairs = 9,
    .e2e_rounds = 25,
    .trace_bytes = 1ull << 30,
    .torch_ops = 100000,
    .recorder_events = 1000000,
};
static const bench_sizes quick_sizes = {
    .mode = "quick",
    .reps = 3,
    .decode_bytes = 64ull << 20,
    .callback_calls = 500000,
    .callback_calls_mt = 30000,
    .format_events = 500000,
    .memory_events = 1000000,
    .drain_events = 1000000,
    .e2e_launches = 5000,
    .e2e_pairs = 3,
    .e2e_rounds = 3,
    .trace_bytes = 64ull << 20,
    .torch_ops = 30000,
    .recorder_events = 200000,
};
static const bench_sizes smoke_sizes = {
    .mode = "smoke",
    .reps = 1,
    .decode_bytes = 2ull << 20,
    .callback_calls = 2000,
    .callback_calls_mt = 200,
    .format_events = 5000,
    .memory_events = 20000,
    .drain_events = 5000,
    .e2e_launches = 100,
    .e2e_pairs = 1,
    .e2e_rounds = 1,
    .trace_bytes = 1ull << 20,
    .torch_ops = 1000,
    .recorder_events = 5000,
};

/* The 1-minute load average: how busy the shared machine was (told with the figures). */
static double load_average(void)
{
    double load = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = NAN;
        fclose(f);
    }
    return load;
}

static double load_before, load_after;

static bench_figure *figures;
static size_t nfigures, capfigures;

static void keep_figure(const bench_figure *f)
{
    if (nfigures == capfigures) {
        size_t cap = capfigures ? capfigures * 2 : 64;
        bench_figure *p = realloc(figures, cap * sizeof *p);
        if (!p)
            return;
        figures = p;
        capfigures = cap;
    }
    figures[nfigures++] = *f;
}

/* Runs one group in a child; its figures come back through a pipe. */
static void run_group(const group *g, const bench_sizes *sz, const bench_paths *paths)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("bench: pipe");
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench: fork");
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        bench_report_to_fd(fds[1]);
        g->run(sz, paths);
        fflush(NULL);
        _exit(0);
    }
    close(fds[1]);
    bench_figure f;
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fds[0], (char *)&f + got, sizeof f - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got == sizeof f) {
            f.name[sizeof f.name - 1] = f.unit[sizeof f.unit - 1] = f.reason[sizeof f.reason - 1] = '\0';
            keep_figure(&f);
            got = 0;
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char name[64], why[128];
        snprintf(name, sizeof name, "%s.completed", g->name);
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, "the %s benchmark died of signal %d (%s)", g->name, WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
        else
            snprintf(why, sizeof why, "the %s benchmark exited with status %d", g->name, WEXITSTATUS(status));
        memset(&f, 0, sizeof f);
        snprintf(f.name, sizeof f.name, "%s", name);
        snprintf(f.reason, sizeof f.reason, "%s", why);
        f.value = NAN;
        keep_figure(&f);
    }
}

/* 1234567 -> "1.23 M"; fixed decimals for small values. */
static void human(double v, const char *unit, char *out, size_t cap)
{
    if (!isfinite(v)) {
        snprintf(out, cap, "-");
        return;
    }
    double a = fabs(v);
    const char *scale = "";
    double d = v;
    if (a >= 1e9)
        d = v / 1e9, scale = "G";
    else if (a >= 1e6)
        d = v / 1e6, scale = "M";
    else if (a >= 1e4)
        d = v / 1e3, scale = "k";
    snprintf(out, cap, "%.3g %s%s", d, scale, unit);
}

typedef struct verdict {
    int targets, passed, missed, unmeasured, incomplete;
} verdict;

static verdict print_table(FILE *out, const bench_sizes *sz)
{
    verdict v = {0};
    int passed = 0, targets = 0;
    fprintf(out,
            "\ndevtrace benchmarks (%s run; a value the median of the repetitions, a judged ratio as its note "
            "says; load average %.1f before, %.1f after, on %ld CPUs)\n",
            sz->mode, load_before, load_after, sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(out, "%-38s %20s %22s  %s\n", "figure", "value", "target", "result");
    for (size_t i = 0; i < nfigures; i++) {
        const bench_figure *f = &figures[i];
        char value[48], target[48] = "", tv[40];
        human(f->value, f->unit, value, sizeof value);
        if (f->cmp != BENCH_INFO) {
            human(f->target, f->unit, tv, sizeof tv);
            snprintf(target, sizeof target, "%s %s", f->cmp == BENCH_AT_LEAST ? ">=" : "<=", tv);
            targets++;
        }
        int pass = bench_figure_passes(f);
        passed += f->cmp != BENCH_INFO && pass;
        v.missed += f->cmp != BENCH_INFO && f->measurable && !pass;
        v.unmeasured += f->cmp != BENCH_INFO && !f->measurable;
        v.incomplete += strstr(f->name, ".completed") != NULL;
        const char *result = !f->measurable         ? "FAIL (not measured)"
                             : f->cmp == BENCH_INFO ? "info"
                             : pass                 ? "pass"
                                                    : "FAIL";
        fprintf(out, "%-38s %20s %22s  %s\n", f->name, value, target, result);
        if (!f->measurable && f->reason[0])
            fprintf(out, "%-38s   why: %s\n", "", f->reason);
    }
    fprintf(out, "%d of %d targets met", passed, targets);
    if (v.missed || v.unmeasured)
        fprintf(out, " (%d missed, %d not measured here: not counted as met)", v.missed, v.unmeasured);
    fputc('\n', out);
    const char *slow = getenv("DEVTRACE_BENCH_SLOWDOWN");
    if (slow && *slow)
        fprintf(out, "slowed 2x on purpose ($DEVTRACE_BENCH_SLOWDOWN): %s\n", slow);
    v.targets = targets;
    v.passed = passed;
    return v;
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void json_number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.6g", v);
    else
        fputs("null", out);
}

static int write_json(const char *path, const bench_sizes *sz)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(out, "{\"mode\": \"%s\", \"cpus\": %ld, \"load_before\": ", sz->mode, sysconf(_SC_NPROCESSORS_ONLN));
    json_number(out, load_before);
    fputs(", \"load_after\": ", out);
    json_number(out, load_after);
    fputs(", \"figures\": [\n", out);
    for (size_t i = 0; i < nfigures; i++) {
        const bench_figure *f = &figures[i];
        fputs("  {\"name\": ", out);
        json_string(out, f->name);
        fputs(", \"value\": ", out);
        json_number(out, f->measurable ? f->value : NAN);
        fputs(", \"unit\": ", out);
        json_string(out, f->unit);
        fputs(", \"target\": ", out);
        if (f->cmp == BENCH_INFO) {
            fputs("null", out);
        } else {
            fprintf(out, "\"%s ", f->cmp == BENCH_AT_LEAST ? ">=" : "<=");
            fprintf(out, "%.6g\"", f->target);
        }
        fputs(", \"pass\": ", out);
        fputs(f->cmp == BENCH_INFO && f->measurable ? "null" : bench_figure_passes(f) ? "true" : "false", out);
        if (f->reason[0]) {
            fputs(", \"note\": ", out);
            json_string(out, f->reason);
        }
        fprintf(out, "}%s\n", i + 1 < nfigures ? "," : "");
    }
    fputs("]}\n", out);
    return fclose(out) == 0 ? 0 : -1;
}

static int wanted(const char *only, const char *name)
{
    if (!only)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static void usage(FILE *out)
{
    fputs("usage: devtrace-bench [--quick | --smoke] [--json PATH] [--only GROUP,...] [--tmpdir DIR]\n"
          "                      [--cli PATH] [--launch-loop PATH] [--library PATH] [--slowdown FIGURE,...]\n"
          "groups: decode, callback, format, memory, drain, e2e, report, torch, kineto, recorder\n"
          "every target is a ratio to a reference measured in the same run; exit status: 0 every target met,\n"
          "1 a target missed, 3 none missed but some not measured here, 2 usage (--smoke judges nothing)\n"
          "--slowdown FIGURE (or $DEVTRACE_BENCH_SLOWDOWN): the component a judged figure measures made 2x\n"
          "slower on purpose (a whole figure name or a prefix: decode.cupti, callback.opencl, write.plain)\n",
          out);
}

int main(int argc, char **argv)
{
    const bench_sizes *sz = &full_sizes;
    const char *json = NULL, *only = NULL;
    bench_paths paths = {DT_BENCH_CLI, DT_BENCH_LAUNCH_LOOP, DT_BENCH_SHARED_LIB, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick"))
            sz = &quick_sizes;
        else if (!strcmp(a, "--smoke"))
            sz = &smoke_sizes;
        else if (!strcmp(a, "--full"))
            sz = &full_sizes;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (v && !strcmp(a, "--json"))
            json = v, i++;
        else if (v && !strcmp(a, "--only"))
            only = v, i++;
        else if (v && !strcmp(a, "--tmpdir"))
            paths.tmpdir = v, i++;
        else if (v && !strcmp(a, "--cli"))
            paths.cli = v, i++;
        else if (v && !strcmp(a, "--launch-loop"))
            paths.launch_loop = v, i++;
        else if (v && !strcmp(a, "--library"))
            paths.library = v, i++;
        else if (v && !strcmp(a, "--slowdown"))
            setenv("DEVTRACE_BENCH_SLOWDOWN", v, 1), i++;
        else {
            fprintf(stderr, "devtrace-bench: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    for (size_t i = 0; only && i < strlen(only);) {
        size_t len = strcspn(only + i, ",");
        int known = 0;
        for (size_t g = 0; g < NGROUPS; g++)
            known |= strlen(groups[g].name) == len && !strncmp(groups[g].name, only + i, len);
        if (!known) {
            fprintf(stderr, "devtrace-bench: unknown group '%.*s'\n", (int)len, only + i);
            usage(stderr);
            return 2;
        }
        i += len + 1;
    }
    /* Trace files go to memory (tmpfs, the page cache with no disk behind it) when there
     * is room: the write figures are about the sink, not the disk (--tmpdir for a disk). */
    char tmpl[64] = "/tmp/devtrace-bench-XXXXXX";
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize >= (8ull << 30) &&
        access("/dev/shm", W_OK) == 0)
        snprintf(tmpl, sizeof tmpl, "/dev/shm/devtrace-bench-XXXXXX");
    int own_tmp = 0;
    if (!paths.tmpdir) {
        if (!mkdtemp(tmpl)) {
            perror("devtrace-bench: mkdtemp");
            return 1;
        }
        paths.tmpdir = tmpl;
        own_tmp = 1;
    }
    fprintf(stderr, "bench: trace files in %s\n", paths.tmpdir);
    signal(SIGPIPE, SIG_IGN);
    load_before = load_average();
    for (size_t g = 0; g < NGROUPS; g++)
        if (wanted(only, groups[g].name)) {
            fprintf(stderr, "bench: %s (%s sizes)\n", groups[g].name, sz->mode);
            run_group(&groups[g], sz, &paths);
        }
    load_after = load_average();
    if (own_tmp)
        rmdir(tmpl);
    verdict v = print_table(stdout, sz);
    int rc = 0;
    if (strcmp(sz->mode, "smoke") == 0)
        printf("smoke run: the sizes are too small for the ratios to mean anything; no target judged\n");
    else if (v.missed || v.incomplete)
        rc = 1;
    else if (v.unmeasured)
        rc = 3;
    if (json && write_json(json, sz) != 0)
        rc = 1;
    free(figures);
    return rc;
}
