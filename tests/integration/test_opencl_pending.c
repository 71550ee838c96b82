/* test_opencl_pending.c: how the OpenCL layer resolves the device events it keeps until
 * their commands complete (opencl_pending.c), against a fake target dispatch table (no
 * OpenCL platform needed; links the static library for the backend's internals).
 *
 * Fake events are indices into a table of states (running, complete, failed); the fake
 * target counts the queries. Expected:
 *   - a completed command costs its three profiling reads and no status query, is emitted
 *     once with its times and released once;
 *   - past a command still running on an in-order queue, that queue's later commands are
 *     not asked at all; on an out-of-order queue every command is asked;
 *   - a command that completes between its END query and its status query is emitted;
 *   - a failed command is counted (dropped_vendor), never emitted, and released.
 * Exit 0: pass; 1: a check failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/opencl_layer.h"
#include "opencl_test.h" /* CHECK */

enum { RUNNING, COMPLETE, FAILED, COMPLETING /* completes while its status is asked */ };
#define EVENTS 8
static int state[EVENTS];
static int profiling_reads[EVENTS], status_reads[EVENTS], releases[EVENTS];

static int index_of(cl_event e)
{
    return (int)(uintptr_t)e - 1;
}

static cl_int CL_API_CALL fake_profiling(cl_event e, cl_profiling_info what, size_t size, void *value, size_t *size_ret)
{
    (void)size, (void)size_ret;
    int i = index_of(e);
    profiling_reads[i]++;
    if (state[i] != COMPLETE)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    cl_ulong t = 1000000u * (cl_ulong)(i + 1);
    *(cl_ulong *)value = what == CL_PROFILING_COMMAND_QUEUED ? t : what == CL_PROFILING_COMMAND_START ? t + 10 : t + 20;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_event_info(cl_event e, cl_event_info what, size_t size, void *value, size_t *size_ret)
{
    (void)what, (void)size, (void)size_ret;
    int i = index_of(e);
    status_reads[i]++;
    if (state[i] == COMPLETING)
        state[i] = COMPLETE;
    *(cl_int *)value = state[i] == RUNNING ? CL_RUNNING : state[i] == COMPLETE ? CL_COMPLETE : -5;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_release(cl_event e)
{
    releases[index_of(e)]++;
    return CL_SUCCESS;
}

static void add(dt_cl_thread *t, int i, const void *in_order_queue)
{
    devtrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = DEVTRACE_KIND_KERNEL;
    ev.correlation = (uint64_t)i + 1;
    CHECK(dt_cl_pending_add(t, (cl_event)(uintptr_t)(i + 1), 0, in_order_queue, &ev, 0, 0) == 0, "add %d", i);
}

static void count_event(void *user, devtrace_event *ev)
{
    int *seen = user;
    seen[ev->correlation - 1]++;
    CHECK(ev->start_ns == 1000000u * ev->correlation + 10 && ev->end_ns == ev->start_ns + 10,
          "event %llu's times %llu..%llu", (unsigned long long)ev->correlation, (unsigned long long)ev->start_ns,
          (unsigned long long)ev->end_ns);
}

int main(void)
{
    memset(&dt_cl_target, 0, sizeof dt_cl_target);
    dt_cl_target.clGetEventProfilingInfo = fake_profiling;
    dt_cl_target.clGetEventInfo = fake_event_info;
    dt_cl_target.clReleaseEvent = fake_release;
    devtrace_error err;
    dt_session *s = dt_session_new_offline("opencl", "test", "privateuse1_runtime", &err);
    CHECK(s != NULL, "offline session: %s", err.message);
    dt_cl_recording r;
    memset(&r, 0, sizeof r);
    r.session = s;
    dt_cl_thread *t = dt_cl_thread_self();
    CHECK(t != NULL, "thread record");
    int in_order_queue; /* its address stands for the queue's record */

    /* In order: 0 complete, 1 running, 2 and 3 behind it. Out of order: 4 running, 5 complete. */
    state[0] = COMPLETE, state[1] = RUNNING, state[2] = COMPLETE, state[3] = RUNNING;
    state[4] = RUNNING, state[5] = COMPLETE;
    for (int i = 0; i < 4; i++)
        add(t, i, &in_order_queue);
    add(t, 4, NULL);
    add(t, 5, NULL);
    dt_cl_pending_poll(t, &r);
    CHECK(profiling_reads[0] == 3 && status_reads[0] == 0 && releases[0] == 1,
          "a completed command: 3 profiling reads (%d), no status query (%d), one release (%d)", profiling_reads[0],
          status_reads[0], releases[0]);
    CHECK(profiling_reads[1] == 1 && status_reads[1] == 1 && releases[1] == 0,
          "a running command: END asked (%d), then its status (%d), kept (%d releases)", profiling_reads[1],
          status_reads[1], releases[1]);
    CHECK(profiling_reads[2] == 0 && status_reads[2] == 0 && profiling_reads[3] == 0,
          "behind a running command on an in-order queue: not asked (%d, %d, %d)", profiling_reads[2], status_reads[2],
          profiling_reads[3]);
    CHECK(profiling_reads[4] == 1 && status_reads[4] == 1 && profiling_reads[5] == 3 && releases[5] == 1,
          "out of order: every command asked (%d, %d, %d)", profiling_reads[4], status_reads[4], profiling_reads[5]);
    CHECK(dt_cl_pending_count() == 4, "4 still pending, %llu", (unsigned long long)dt_cl_pending_count());

    /* Everything ends: 1 failed, the rest complete. */
    state[1] = FAILED, state[3] = COMPLETING, state[4] = COMPLETE;
    dt_cl_pending_poll(t, &r);
    CHECK(dt_cl_pending_count() == 0, "none pending, %llu", (unsigned long long)dt_cl_pending_count());
    for (int i = 0; i < 6; i++)
        CHECK(releases[i] == 1, "command %d released %d times", i, releases[i]);
    CHECK(profiling_reads[3] == 4 && status_reads[3] == 1, "completed between the queries: END asked twice (%d reads)",
          profiling_reads[3]);
    CHECK(s->stats.dropped_vendor == 1, "the failed command counted: dropped_vendor %llu",
          (unsigned long long)s->stats.dropped_vendor);
    CHECK(atomic_load(&r.failed_commands) == 1, "failed_commands %llu",
          (unsigned long long)atomic_load(&r.failed_commands));
    int seen[EVENTS] = {0};
    dt_store_visit(&s->store, count_event, seen);
    for (int i = 0; i < 6; i++)
        CHECK(seen[i] == (i == 1 ? 0 : 1), "command %d emitted %d times", i, seen[i]);
    devtrace_close(s);
    printf("ok: 6 commands, 5 emitted, 1 failed\n");
    return 0;
}
