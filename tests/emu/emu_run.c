/* emu_run.c: emu-run, the application that plays a workload against a vendor emulator.
 *
 *   emu-run --lib PATH_TO_EMULATOR.so WORKLOAD.wl [--threads N] [--repeat M] [--ranks R]
 *
 * dlopens the emulator (RTLD_NOW | RTLD_GLOBAL, as a program linked against the vendor
 * runtime would have it), loads the workload and runs it M times on each of N threads.
 * With --ranks R (R > 1) it runs none itself: it starts R copies of itself at once, each
 * with RANK (0 .. R-1) and WORLD_SIZE set, as a launcher starts the ranks of a job, and
 * waits for them (a launcher built like the rest, where a shell would not be: under
 * sanitizers an uninstrumented program cannot load the tracer a recorder preloads).
 * A tracer attaches the way it does to a real program: through the vendor's injection
 * variable (CUDA_INJECTION64_PATH for CUPTI) or by being preloaded. Exit status: 0 on
 * success, 1 when a run failed, 2 for a usage error, a bad library or a bad workload. */
#include <sys/wait.h>
#include <unistd.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMU_RUN_MAX_THREADS 1024
#define EMU_RUN_MAX_RANKS 64

typedef struct options {
    const char *lib;
    const char *workload;
    unsigned long threads;
    unsigned long repeat;
    unsigned long ranks;
    int describe;
} options;

typedef struct driver {
    int (*load_workload)(const char *path, char *err, size_t errlen);
    int (*run)(void);
} driver;

typedef struct worker {
    const driver *drv;
    unsigned long repeat;
    int failed;
} worker;

static void usage(FILE *out)
{
    fprintf(out, "usage: emu-run --lib PATH_TO_EMULATOR.so WORKLOAD.wl [--threads N] [--repeat M] [--ranks R]\n"
                 "       emu-run --lib PATH_TO_EMULATOR.so --describe\n"
                 "Runs a devtrace workload file through a vendor ABI emulator (libcupti-emu.so, ...).\n"
                 "  --lib PATH     the emulator library to load\n"
                 "  --threads N    run the workload on N threads at once (default 1)\n"
                 "  --repeat M     each thread runs the workload M times (default 1)\n"
                 "  --ranks R      run R processes of it at once, with RANK 0..R-1 and WORLD_SIZE R (default 1)\n"
                 "  --describe     print the emulated vendor's facts (JSON: its name, each generic call's\n"
                 "                 runtime name and callback id) instead of running a workload\n"
                 "Environment: DEVEMU_FAULTS (fault injection, see tests/emu/README.md),\n"
                 "CUDA_INJECTION64_PATH (a tracer's injection library, for the CUPTI emulator).\n");
}

static int fail_usage(const char *what, const char *arg)
{
    fprintf(stderr, "emu-run: %s%s%s (try --help)\n", what, arg ? ": " : "", arg ? arg : "");
    return -1;
}

static int parse_count(const char *flag, const char *text, unsigned long max, unsigned long *out)
{
    char *end;
    if (!text)
        return fail_usage("missing value for", flag);
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || *end || text[0] < '0' || text[0] > '9' || v == 0 || v > max) {
        fprintf(stderr, "emu-run: bad value '%s' for %s (expected 1..%lu)\n", text, flag, max);
        return -1;
    }
    *out = v;
    return 0;
}

/* 0: run; 1: --help was printed; -1: usage error (printed). */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.threads = 1, .repeat = 1, .ranks = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(a, "--lib") == 0) {
            if (++i >= argc)
                return fail_usage("missing value for", "--lib");
            o->lib = argv[i];
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_count(a, ++i < argc ? argv[i] : NULL, EMU_RUN_MAX_THREADS, &o->threads) < 0)
                return -1;
        } else if (strcmp(a, "--repeat") == 0) {
            if (parse_count(a, ++i < argc ? argv[i] : NULL, 1000000000ul, &o->repeat) < 0)
                return -1;
        } else if (strcmp(a, "--ranks") == 0) {
            if (parse_count(a, ++i < argc ? argv[i] : NULL, EMU_RUN_MAX_RANKS, &o->ranks) < 0)
                return -1;
        } else if (strcmp(a, "--describe") == 0) {
            o->describe = 1;
        } else if (a[0] == '-') {
            return fail_usage("unknown option", a);
        } else if (o->workload) {
            return fail_usage("more than one workload given", a);
        } else {
            o->workload = a;
        }
    }
    if (!o->lib)
        return fail_usage("missing --lib PATH_TO_EMULATOR.so", NULL);
    if (!o->workload && !o->describe)
        return fail_usage("missing WORKLOAD.wl", NULL);
    return 0;
}

static void *need_symbol(void *lib, const char *lib_path, const char *name)
{
    void *sym = dlsym(lib, name);
    if (!sym)
        fprintf(stderr, "emu-run: %s is not a devemu emulator (no %s)\n", lib_path, name);
    return sym;
}

static int bind_driver(const char *lib_path, driver *drv)
{
    void *lib = dlopen(lib_path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "emu-run: cannot load %s: %s\n", lib_path, dlerror());
        return -1;
    }
    void *load = need_symbol(lib, lib_path, "devemu_load_workload");
    void *run = load ? need_symbol(lib, lib_path, "devemu_run") : NULL;
    if (!run)
        return -1;
    memcpy(&drv->load_workload, &load, sizeof load);
    memcpy(&drv->run, &run, sizeof run);
    return 0;
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    for (unsigned long i = 0; i < w->repeat && !w->failed; i++)
        w->failed = w->drv->run() != 0;
    return NULL;
}

/* Runs the workload on every thread; 0 when all runs succeeded. */
static int run_threads(const driver *drv, const options *o)
{
    pthread_t tids[EMU_RUN_MAX_THREADS];
    worker workers[EMU_RUN_MAX_THREADS];
    unsigned long started = 0;
    int failed = 0;
    if (o->threads == 1) {
        worker only = {drv, o->repeat, 0};
        run_worker(&only);
        return only.failed ? -1 : 0;
    }
    for (; started < o->threads; started++) {
        workers[started] = (worker){drv, o->repeat, 0};
        if (pthread_create(&tids[started], NULL, run_worker, &workers[started]) != 0) {
            fprintf(stderr, "emu-run: cannot start thread %lu\n", started + 1);
            failed = 1;
            break;
        }
    }
    for (unsigned long i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
        failed |= workers[i].failed;
    }
    return failed ? -1 : 0;
}

/* --ranks R: this program again, R times at once (the same arguments but --ranks), each with
 * its RANK and WORLD_SIZE; 0 when every rank exited 0. */
static int run_ranks(int argc, char **argv, unsigned long ranks)
{
    char *args[argc + 1];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--ranks") == 0) {
            i++; /* and its value (parse_options checked it) */
            continue;
        }
        args[n++] = argv[i];
    }
    args[n] = NULL;
    pid_t pids[EMU_RUN_MAX_RANKS];
    unsigned long started = 0;
    int failed = 0;
    for (; started < ranks; started++) {
        char rank[24], world[24];
        snprintf(rank, sizeof rank, "%lu", started);
        snprintf(world, sizeof world, "%lu", ranks);
        pids[started] = fork();
        if (pids[started] == 0) {
            setenv("RANK", rank, 1);
            setenv("WORLD_SIZE", world, 1);
            execv("/proc/self/exe", args);
            fprintf(stderr, "emu-run: cannot run rank %s: %s\n", rank, strerror(errno));
            _exit(127);
        }
        if (pids[started] < 0) {
            fprintf(stderr, "emu-run: cannot start rank %lu: %s\n", started, strerror(errno));
            failed = 1;
            break;
        }
    }
    for (unsigned long i = 0; i < started; i++) {
        int status = 0;
        while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "emu-run: rank %lu failed\n", i);
            failed = 1;
        }
    }
    return failed;
}

/* --describe: the emulator's devemu_describe, printed. */
static int describe(const char *lib_path)
{
    void *lib = dlopen(lib_path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "emu-run: cannot load %s: %s\n", lib_path, dlerror());
        return 2;
    }
    void *sym = need_symbol(lib, lib_path, "devemu_describe");
    if (!sym)
        return 2;
    size_t (*fn)(char *, size_t);
    memcpy(&fn, &sym, sizeof fn);
    size_t need = fn(NULL, 0) + 1;
    char *buf = malloc(need);
    if (!buf) {
        fprintf(stderr, "emu-run: out of memory\n");
        return 2;
    }
    fn(buf, need);
    puts(buf);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    driver drv;
    char err[1024];
    int parsed = parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    if (o.describe)
        return describe(o.lib);
    if (o.ranks > 1)
        return run_ranks(argc, argv, o.ranks);
    if (bind_driver(o.lib, &drv) < 0)
        return 2;
    if (drv.load_workload(o.workload, err, sizeof err) < 0) {
        fprintf(stderr, "emu-run: %s\n", err);
        return 2;
    }
    if (run_threads(&drv, &o) < 0) {
        fprintf(stderr, "emu-run: running %s failed\n", o.workload);
        return 1;
    }
    return 0;
}
