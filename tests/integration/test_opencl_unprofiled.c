/* test_opencl_unprofiled.c: launches on a queue without profiling (one the layer did not see
 * created, so it could not add CL_QUEUE_PROFILING_ENABLE) are each a runtime event and no
 * device event, and each is counted as lost: in dropped_vendor and in the stop's note.
 *
 * The layer is given a fake target dispatch (no OpenCL platform needed; links the static
 * library for the session's internals). The counts are kept per thread and added at stop,
 * so the test launches from THREADS threads that exit before stop and from the main
 * thread, and checks, exactly:
 *   - while recording, what a crash would ship (the backend's unfolded_counts) holds every
 *     launch made so far, and the session's own counter none of them yet;
 *   - after stop, dropped_vendor is every launch, the note says so, the trace has a
 *     runtime event per launch (and per clFinish) and no kernel;
 *   - a second session counts only its own launches (stop cleared the counts).
 * The threads also learn the queue and the kernel at once (the layer did not see them
 * created): under TSan this checks that two threads learning one object write it once.
 * Exit 0: pass; 1: a check failed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/opencl_layer.h"
#include "core/session.h"
#include "opencl_fake.h" /* tests/emu */
#include "opencl_test.h"

#define THREADS 3
#define PER_THREAD 1000
#define MAIN_LAUNCHES 500
#define FINISH_EVERY 100

#define FAKE_QUEUE ((cl_command_queue)(uintptr_t)0x3000)
#define FAKE_KERNEL ((cl_kernel)(uintptr_t)0x5000)

static cl_int CL_API_CALL stub_enqueue(cl_command_queue q, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                                       const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait,
                                       cl_event *event)
{
    (void)q, (void)kernel, (void)work_dim, (void)offset, (void)global, (void)local, (void)nwait, (void)wait;
    CHECK(!event, "the layer asked for an event on a queue it knows has no profiling");
    return CL_SUCCESS;
}

static const cl_icd_dispatch *layer;

static void launch(int n)
{
    size_t global = 64, local = 16;
    for (int i = 1; i <= n; i++) {
        CHECK(layer->clEnqueueNDRangeKernel(FAKE_QUEUE, FAKE_KERNEL, 1, NULL, &global, &local, 0, NULL, NULL) ==
                  CL_SUCCESS,
              "launch %d", i);
        if (i % FINISH_EVERY == 0)
            layer->clFinish(FAKE_QUEUE);
    }
}

static void *launcher(void *arg)
{
    (void)arg;
    launch(PER_THREAD);
    return NULL;
}

typedef struct counted {
    uint64_t launches, finishes, kernels;
} counted;

static void count_event(const devtrace_event *ev, const char *name, void *user)
{
    counted *c = user;
    if (ev->kind == DEVTRACE_KIND_KERNEL)
        c->kernels++;
    else if (ev->kind == DEVTRACE_KIND_RUNTIME && name && !strcmp(name, "clEnqueueNDRangeKernel"))
        c->launches++;
    else if (ev->kind == DEVTRACE_KIND_RUNTIME && name && !strcmp(name, "clFinish"))
        c->finishes++;
}

static int has_note(dt_session *s, const char *text)
{
    for (int i = 0; i < devtrace_note_count(s); i++)
        if (strstr(devtrace_note(s, i), text))
            return 1;
    return 0;
}

/* Records one session of launches: from THREADS threads and the main thread when threaded,
 * else main_launches from the main thread alone; checks its counts exactly. */
static void record(int threaded, int main_launches)
{
    dt_session *s = ot_open_session();
    CHECK(devtrace_start(s) == 0, "devtrace_start");
    uint64_t expected = (uint64_t)main_launches;
    if (threaded) {
        pthread_t tid[THREADS];
        for (int i = 0; i < THREADS; i++)
            CHECK(pthread_create(&tid[i], NULL, launcher, NULL) == 0, "pthread_create");
        for (int i = 0; i < THREADS; i++)
            CHECK(pthread_join(tid[i], NULL) == 0, "pthread_join");
        expected += (uint64_t)THREADS * PER_THREAD;
    }
    launch(main_launches);

    /* What a crash now would ship: every launch so far, though none is in the session's
     * counter yet. */
    devtrace_stats crash = s->stats;
    CHECK(crash.dropped_vendor == 0, "%llu counted per launch before stop", (unsigned long long)crash.dropped_vendor);
    CHECK(s->backend->unfolded_counts, "the OpenCL backend has no unfolded_counts");
    s->backend->unfolded_counts(s->bstate, &crash);
    CHECK(crash.dropped_vendor == expected, "a crash would ship %llu of %llu", (unsigned long long)crash.dropped_vendor,
          (unsigned long long)expected);

    CHECK(devtrace_stop(s) == 0, "devtrace_stop");
    counted c = {0, 0, 0};
    devtrace_drain(s, count_event, &c);
    const devtrace_stats *st = devtrace_stats_get(s);
    CHECK(st->dropped_vendor == expected, "dropped_vendor %llu, %llu launches", (unsigned long long)st->dropped_vendor,
          (unsigned long long)expected);
    CHECK(c.launches == expected && c.kernels == 0, "%llu launch events and %llu kernels for %llu launches",
          (unsigned long long)c.launches, (unsigned long long)c.kernels, (unsigned long long)expected);
    CHECK(c.finishes == expected / FINISH_EVERY, "%llu clFinish events", (unsigned long long)c.finishes);
    char note[160];
    snprintf(note, sizeof note, "%llu enqueues on queues without profiling", (unsigned long long)expected);
    CHECK(has_note(s, note), "no note \"%s\"", note);
    printf("  %llu launches on an unprofiled queue: %llu counted lost, a runtime event each, no kernel\n",
           (unsigned long long)expected, (unsigned long long)st->dropped_vendor);
    devtrace_close(s);
}

int main(void)
{
    static cl_icd_dispatch target;
    target.clEnqueueNDRangeKernel = stub_enqueue;
    fake_cl_install_objects(&target);
    fake_cl_queue_properties = 0; /* no profiling */
    cl_uint entries = 0;
    CHECK(clInitLayer((cl_uint)(sizeof target / sizeof(void *)), &target, &entries, &layer) == CL_SUCCESS && layer,
          "clInitLayer refused the fake target");
    record(1, MAIN_LAUNCHES);
    record(0, 200); /* stop cleared the first session's counts */
    printf("PASS\n");
    return 0;
}
