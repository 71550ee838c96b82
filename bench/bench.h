/* bench.h: what the benchmarks of devtrace-bench share: the sizes of a run, timing and
 * medians, and how a benchmark reports a figure (name, value, unit, target, pass).
 *
 * Every figure is a rate or a ratio measured in the run that reports it, against a
 * baseline measured in the same run (memcpy of the same bytes, the same call without
 * tracing, the same program untraced), over several repetitions, and the median is
 * reported (a judged ratio: the best repetition, bench_best, or per piece, as its note says): these machines are shared and noisy, so absolute numbers from another run
 * mean little. Every target is on such a ratio (the absolute value is reported beside it,
 * as information), and devtrace-bench's exit status follows the ratio targets. */
#ifndef DT_BENCH_H
#define DT_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* The sizes of one run: --full (the figures of issue 6), --quick (seconds), --smoke
 * (tiny: only checks that everything runs and the JSON is written). */
typedef struct bench_sizes {
    const char *mode;           /* "full", "quick", "smoke" */
    int reps;                   /* repetitions of each measurement (the median is reported) */
    uint64_t decode_bytes;      /* bytes of CUPTI-layout records decoded */
    uint64_t callback_calls;    /* calls per thread of the callback benchmark at 1 thread */
    uint64_t callback_calls_mt; /* ... and per thread at 16 threads */
    uint64_t format_events;     /* events formatted and written */
    uint64_t memory_events;     /* events stored for bytes/event */
    uint64_t drain_events;      /* events drained */
    uint32_t e2e_launches;      /* launches of the PoCL loop */
    int e2e_pairs;              /* untraced/traced pairs of runs (the PyTorch figure) */
    int e2e_rounds;             /* interleaved rounds of the PoCL loop's modes */
    uint64_t trace_bytes;       /* bytes of the Kineto trace devtrace report's reader reads */
    uint32_t torch_ops;         /* torch.add calls per run of the PyTorch per-op figure */
    uint64_t recorder_events;   /* events of the recorder's smaller run (the larger: 10 times as many) */
} bench_sizes;

/* Where the benchmarks find what they run (set by main from the build). */
typedef struct bench_paths {
    const char *cli;         /* the devtrace command, or "" */
    const char *launch_loop; /* bench/opencl-launch-loop, or "" */
    const char *library;     /* the libdevtrace.so the callback figures load (another build's, to compare) */
    const char *tmpdir;      /* a scratch folder for trace files */
} bench_paths;

/* ---- reporting ---- */

typedef enum bench_cmp { BENCH_INFO = 0, BENCH_AT_LEAST = 1, BENCH_AT_MOST = 2 } bench_cmp;

/* One figure. value is NaN when it could not be measured (reason says why). */
typedef struct bench_figure {
    char name[64];
    char unit[24];
    char reason[320]; /* not measurable: why; else an optional note */
    double value;
    double target;
    int cmp;        /* bench_cmp */
    int measurable; /* 0: value is meaningless, pass is false */
} bench_figure;

/* A figure with a target (cmp BENCH_AT_LEAST/AT_MOST) or informational (BENCH_INFO). */
void bench_report(const char *name, double value, const char *unit, int cmp, double target, const char *note);
/* A figure that cannot be measured in this build or on this machine: pass is false. */
void bench_unmeasurable(const char *name, const char *unit, int cmp, double target, const char *reason, ...)
    __attribute__((format(printf, 5, 6)));
/* Whether a figure meets its target (informational figures: 1). */
int bench_figure_passes(const bench_figure *f);

/* Figures go to this file descriptor (a pipe to the parent) as bench_figure structs. */
void bench_report_to_fd(int fd);

/* ---- timing ---- */

uint64_t bench_now_ns(void);         /* CLOCK_MONOTONIC */
uint64_t bench_thread_cpu_ns(void);  /* CLOCK_THREAD_CPUTIME_ID */
uint64_t bench_process_cpu_ns(void); /* CLOCK_PROCESS_CPUTIME_ID: every thread of the process */

/* A region timed on two clocks: the wall clock (the absolute figures) and the process's CPU
 * time, all its threads (the judged ratios: on a loaded machine a region is preempted for
 * longer the longer it runs, which wall time charges to the longer of the two regions
 * compared; CPU time charges only the work). Each benchmark group runs in a process of its
 * own, so the process's CPU time is the region's. */
typedef struct bench_mark {
    uint64_t wall_ns, cpu_ns;
} bench_mark;
typedef struct bench_span {
    double wall_s, cpu_s;
} bench_span;
bench_mark bench_mark_now(void);
bench_span bench_span_since(bench_mark m);
double bench_median(double *v, int n); /* sorts v */
/* The best of n repetitions of a judged ratio: the largest for a BENCH_AT_LEAST target, the
 * smallest for BENCH_AT_MOST. On a loaded machine every repetition is slowed by others to
 * some degree; the best one is the least disturbed, and a component made slower is slower
 * in every repetition, the best included. */
double bench_best(const double *v, int n, int cmp);

/* ---- a deliberate slowdown, to show that a target catches one ----
 *
 * $DEVTRACE_BENCH_SLOWDOWN=NAME[,NAME...] (devtrace-bench --slowdown NAME): the component a
 * judged figure measures is made twice as slow. The figure is named whole
 * (decode.cupti.vs_memcpy) or by a prefix ending before a dot (decode.cupti, callback.opencl).
 * At the end of the component's timed region the bench busy-waits until the process's CPU
 * time has grown as much again as in the region (the thread's, for the callback loops),
 * before it reads the region's end; the
 * reference is not touched, so the figure's ratio to it moves by 2x (or more, where the
 * figure is a difference: a traced call made twice as long adds the untraced call once more). */
int bench_slowed(const char *figure);
/* The end of a region timed from m (bench_mark_now) or from t0 of bench_thread_cpu_ns. */
void bench_slow(const char *figure, bench_mark m);
void bench_slow_cpu(const char *figure, uint64_t t0_ns);

/* Resident set size of this process in bytes (/proc/self/statm). */
uint64_t bench_rss_bytes(void);

/* A deterministic generator (xorshift64*), for reproducible inputs. */
static inline uint64_t bench_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Keeps the compiler from removing a computation whose result is otherwise unused. */
static inline void bench_keep(const void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* ---- the benchmarks (one file each) ---- */

void bench_decode(const bench_sizes *sz, const bench_paths *paths);   /* bench_decode.c */
void bench_callback(const bench_sizes *sz, const bench_paths *paths); /* bench_callback.c */
void bench_sink(const bench_sizes *sz, const bench_paths *paths);     /* bench_sink.c: format, write */
void bench_drain(const bench_sizes *sz, const bench_paths *paths);    /* bench_sink.c */
void bench_memory(const bench_sizes *sz, const bench_paths *paths);   /* bench_memory.c */
void bench_recorder(const bench_sizes *sz, const bench_paths *paths);
void bench_e2e(const bench_sizes *sz, const bench_paths *paths);    /* bench_e2e.c */
void bench_reader(const bench_sizes *sz, const bench_paths *paths); /* bench_reader.c: devtrace report */
void bench_torch(const bench_sizes *sz, const bench_paths *paths);  /* bench_torch.c */
void bench_kineto(const bench_sizes *sz, const bench_paths *paths); /* bench_kineto_group.c */

/* Runs argv in a child (execvp): its stdout into out (NUL-terminated), its stderr into
 * errpath, whose first line (all of it when the program failed) goes into err. Without
 * keep_opencl_layers, OPENCL_LAYERS is removed from the child's environment. Returns the
 * exit status, -1 when it did not run or died of a signal. */
int bench_run_program(char *const argv[], int keep_opencl_layers, const char *errpath, char *out, size_t outcap,
                      char *err, size_t errcap);
/* Lines of the file at path that contain needle (a trace's events of a kind), -1 when it
 * cannot be read. */
long bench_count_lines(const char *path, const char *needle);

#endif
