/* report.c: timing helpers and figure reporting for devtrace-bench (see bench.h).
 * A benchmark runs in a child process and writes its figures to a pipe; main collects
 * them, prints the table and writes the JSON. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int report_fd = -1;

void bench_report_to_fd(int fd)
{
    report_fd = fd;
}

static void emit(const bench_figure *f)
{
    if (report_fd < 0) {
        fprintf(stderr, "bench: %s = %g %s\n", f->name, f->value, f->unit);
        return;
    }
    const char *p = (const char *)f;
    size_t left = sizeof *f;
    while (left) {
        ssize_t n = write(report_fd, p, left);
        if (n <= 0)
            return;
        p += n;
        left -= (size_t)n;
    }
}

static void fill(bench_figure *f, const char *name, const char *unit, int cmp, double target)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->unit, sizeof f->unit, "%s", unit);
    f->cmp = cmp;
    f->target = target;
}

void bench_report(const char *name, double value, const char *unit, int cmp, double target, const char *note)
{
    bench_figure f;
    fill(&f, name, unit, cmp, target);
    f.value = value;
    f.measurable = isfinite(value);
    if (note)
        snprintf(f.reason, sizeof f.reason, "%s", note);
    emit(&f);
}

void bench_unmeasurable(const char *name, const char *unit, int cmp, double target, const char *reason, ...)
{
    bench_figure f;
    fill(&f, name, unit, cmp, target);
    f.value = NAN;
    f.measurable = 0;
    va_list ap;
    va_start(ap, reason);
    vsnprintf(f.reason, sizeof f.reason, reason, ap);
    va_end(ap);
    emit(&f);
}

int bench_figure_passes(const bench_figure *f)
{
    if (!f->measurable)
        return 0;
    switch (f->cmp) {
    case BENCH_AT_LEAST:
        return f->value >= f->target;
    case BENCH_AT_MOST:
        return f->value <= f->target;
    default:
        return 1;
    }
}

int bench_slowed(const char *figure)
{
    const char *list = getenv("DEVTRACE_BENCH_SLOWDOWN");
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len && strncmp(p, figure, len) == 0 && (figure[len] == '\0' || figure[len] == '.'))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

void bench_slow(const char *figure, bench_mark m)
{
    if (!bench_slowed(figure))
        return;
    uint64_t now = bench_process_cpu_ns(), until = now + (now - m.cpu_ns);
    while (bench_process_cpu_ns() < until)
        ;
}

void bench_slow_cpu(const char *figure, uint64_t t0_ns)
{
    if (!bench_slowed(figure))
        return;
    uint64_t now = bench_thread_cpu_ns(), until = now + (now - t0_ns);
    while (bench_thread_cpu_ns() < until)
        ;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bench_process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bench_mark bench_mark_now(void)
{
    bench_mark m = {bench_now_ns(), bench_process_cpu_ns()};
    return m;
}

bench_span bench_span_since(bench_mark m)
{
    uint64_t cpu = bench_process_cpu_ns(), wall = bench_now_ns();
    bench_span s = {(double)(wall - m.wall_ns) / 1e9, (double)(cpu - m.cpu_ns) / 1e9};
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_best(const double *v, int n, int cmp)
{
    double best = NAN;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && (!isfinite(best) || (cmp == BENCH_AT_MOST ? v[i] < best : v[i] > best)))
            best = v[i];
    return best;
}

uint64_t bench_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}
