/* rel_host.c: the host program of the reliability tests: plays a workload through a vendor ABI
 * emulator (tests/emu) the way emu-run does, with the process-life events a tracer must survive.
 * It is traced from outside (devtrace record sets the vendor's injection variable), so what it
 * exercises is the production path: collector in the program, recorder writing the trace.
 *
 *   rel_host --lib EMULATOR.so WORKLOAD.wl [--repeat N] [SCENARIO]
 *
 * Scenarios (one at most):
 *   --subscribe-first      another profiling tool holds the vendor's callback API first (the
 *                          tracer's own Subscribe is the second)
 *   --clock-jump NS        after the first half of the repeats the vendor clock steps NS back
 *                          (DEVEMU_FAULTS plus clock-epoch, set through devemu_set_faults)
 *   --fork                 runs the workload, forks: the child runs it too and exits; the parent
 *                          waits, then runs it again (the trace must hold the parent's 2 runs)
 *   --exit-from-thread     runs the workload, then a second thread runs it and calls exit(0)
 *                          while the main thread waits for it
 *   --wait-for-signal      runs the workload N times, prints "ready" and flushes stdout, then
 *                          sleeps until a signal ends it
 * Exit status: 0, 1 when a run failed, 2 for a usage error. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct emulator {
    int (*load_workload)(const char *path, char *err, size_t errlen);
    int (*run)(void);
    int (*set_faults)(const char *spec, char *err, size_t errlen);
    const char *(*vendor)(void);
    void *handle;
} emulator;

static emulator emu;

static void *symbol(const char *name)
{
    void *p = dlsym(emu.handle, name);
    if (!p) {
        fprintf(stderr, "rel_host: the emulator has no %s\n", name);
        exit(2);
    }
    return p;
}

static void bind(const char *path)
{
    emu.handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!emu.handle) {
        fprintf(stderr, "rel_host: cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
    void *p = symbol("devemu_load_workload");
    memcpy(&emu.load_workload, &p, sizeof p);
    p = symbol("devemu_run");
    memcpy(&emu.run, &p, sizeof p);
    p = symbol("devemu_set_faults");
    memcpy(&emu.set_faults, &p, sizeof p);
    p = symbol("devemu_vendor");
    memcpy(&emu.vendor, &p, sizeof p);
}

static void run_times(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        if (emu.run() != 0) {
            fprintf(stderr, "rel_host: a workload run failed\n");
            exit(1);
        }
}

static void other_tool(void *userdata, int domain, uint32_t cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void subscribe_first(void)
{
    char name[64];
    snprintf(name, sizeof name, "%sSubscribe", emu.vendor());
    int (*subscribe)(void **, void (*)(void *, int, uint32_t, const void *), void *);
    void *p = symbol(name);
    memcpy(&subscribe, &p, sizeof p);
    void *handle = NULL;
    if (subscribe(&handle, other_tool, NULL) != 0) {
        fprintf(stderr, "rel_host: the other tool's %s was refused\n", name);
        exit(1);
    }
}

static void clock_jump(const char *ns_text)
{
    /* vendor clock = realtime - epoch: an epoch NS later is a clock NS behind. */
    char *end;
    errno = 0;
    long long ns = strtoll(ns_text, &end, 10);
    if (errno || *end || ns <= 0) {
        fprintf(stderr, "rel_host: bad --clock-jump '%s' (nanoseconds > 0)\n", ns_text);
        exit(2);
    }
    const char *faults = getenv("DEVEMU_FAULTS");
    char spec[512], err[512];
    snprintf(spec, sizeof spec, "%s%sclock-epoch=%lld", faults && *faults ? faults : "", faults && *faults ? "," : "",
             ns);
    if (emu.set_faults(spec, err, sizeof err) != 0) {
        fprintf(stderr, "rel_host: %s\n", err);
        exit(2);
    }
}

static void *exiting_thread(void *arg)
{
    (void)arg;
    run_times(1);
    exit(0); /* atexit handlers run on this thread while main waits in pthread_join */
}

int main(int argc, char **argv)
{
    const char *lib = NULL, *wl = NULL, *scenario = NULL, *jump = NULL;
    unsigned long repeat = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--lib") && i + 1 < argc)
            lib = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--clock-jump") && i + 1 < argc)
            scenario = argv[i], jump = argv[++i];
        else if (!strcmp(argv[i], "--subscribe-first") || !strcmp(argv[i], "--fork") ||
                 !strcmp(argv[i], "--exit-from-thread") || !strcmp(argv[i], "--wait-for-signal"))
            scenario = argv[i];
        else if (argv[i][0] != '-' && !wl)
            wl = argv[i];
        else {
            fprintf(stderr, "usage: rel_host --lib EMULATOR.so WORKLOAD.wl [--repeat N] [--subscribe-first | "
                            "--clock-jump NS | --fork | --exit-from-thread | --wait-for-signal]\n");
            return 2;
        }
    }
    if (!lib || !wl || repeat == 0) {
        fprintf(stderr, "rel_host: --lib and a workload are required, --repeat at least 1\n");
        return 2;
    }
    bind(lib);
    char err[1024];
    if (emu.load_workload(wl, err, sizeof err) != 0) {
        fprintf(stderr, "rel_host: %s\n", err);
        return 2;
    }
    if (!scenario) {
        run_times(repeat);
    } else if (!strcmp(scenario, "--subscribe-first")) {
        subscribe_first();
        run_times(repeat);
    } else if (!strcmp(scenario, "--clock-jump")) {
        run_times((repeat + 1) / 2);
        clock_jump(jump);
        run_times(repeat / 2);
    } else if (!strcmp(scenario, "--fork")) {
        run_times(1);
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("rel_host: fork");
            return 1;
        }
        if (pid == 0) {
            run_times(1);
            exit(0); /* a normal exit: atexit handlers run in the child too */
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "rel_host: the forked child failed (status 0x%x)\n", status);
            return 1;
        }
        run_times(1);
    } else if (!strcmp(scenario, "--exit-from-thread")) {
        run_times(1);
        pthread_t t;
        if (pthread_create(&t, NULL, exiting_thread, NULL) != 0)
            return 1;
        pthread_join(t, NULL); /* never returns: the thread exits the process */
        return 1;
    } else { /* --wait-for-signal */
        run_times(repeat);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    return 0;
}
