/* perfetto_pair.c: writes one synthetic session as a Chrome trace and as Perfetto traces,
 * for compare_with_json.py (tests/perfetto/CMakeLists.txt).
 *
 * usage: perfetto_pair OUT.json OUT-serial.pftrace OUT-threads.pftrace
 *
 * The session holds what the Perfetto sink must get right beyond a plain workload: 3000
 * launches (a runtime call, then a kernel, copy or set on the device, with External ids,
 * launch shapes and occupancy; every 50th device event with a user correlation) so that the events span several pieces; every copy
 * direction and one that is not a direction; a call whose correlation has three kernels
 * (three flow pairs); a kernel that starts before its call (the flow runs backwards in
 * time); two kernels with the same start (nested); a CPU op that starts inside a runtime
 * call and outlasts it, and two more each overlapping the one before, on one thread (they
 * cannot nest on one track); a name that is not valid UTF-8; a note; and 4100 threads with
 * one call each, so that lanes go past the 4096 the trace names; markers (a host range in a
 * domain, a host mark, a device range on a stream, a range whose end is missing) and memory
 * events of two processes on their device 0, interleaved, and of one on its device 1 (a
 * counter track each). The first .pftrace is
 * made by the calling thread alone, the second by four threads. Exit 0, or 1 with a message. */
#include <stdio.h>
#include <stdlib.h>

#include "sinks/sinks.h"
#include "unit_session.h"

#define BASE 1700000000000000000ull
#define LAUNCHES 3000
#define EXTRA_THREADS 4100

static void emit(dt_session *s, devtrace_event ev)
{
    if (dt_emit(s, &ev) != 0) {
        fprintf(stderr, "perfetto_pair: the store refused an event\n");
        exit(1);
    }
}

static devtrace_event device_event(int kind, uint64_t start, uint64_t end, uint64_t correlation, uint32_t stream)
{
    devtrace_event ev = ut_kernel(start, end, correlation);
    ev.kind = (uint16_t)kind;
    ev.stream = stream;
    ev.context = 1;
    return ev;
}

static devtrace_event launched_kernel(dt_session *s, uint64_t start, uint64_t end, uint64_t correlation,
                                      uint32_t stream, const char *name)
{
    devtrace_event ev = device_event(DEVTRACE_KIND_KERNEL, start, end, correlation, stream);
    ev.name_id = dt_session_intern(s, name);
    ev.flags |= DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_QUEUED;
    int32_t grid[3] = {416 + (int32_t)(correlation % 3), 1, 1}, block[3] = {256, 1, 1};
    memcpy(ev.u.kernel.grid, grid, sizeof grid);
    memcpy(ev.u.kernel.block, block, sizeof block);
    ev.u.kernel.registers_per_thread = 30;
    ev.u.kernel.static_shared = 1024;
    ev.u.kernel.dynamic_shared = 512;
    ev.u.kernel.queued_ns = start - 250;
    return ev;
}

static devtrace_event call(dt_session *s, uint64_t start, uint64_t end, uint64_t correlation, const char *name)
{
    devtrace_event ev = ut_runtime(start, end, correlation);
    ev.name_id = dt_session_intern(s, name);
    ev.flags |= DEVTRACE_EVENT_HAS_CBID;
    ev.u.runtime.cbid = 211;
    return ev;
}

static devtrace_event cpu_op(dt_session *s, uint64_t start, uint64_t end, uint64_t id, const char *name)
{
    devtrace_event ev = ut_runtime(start, end, 0);
    ev.kind = DEVTRACE_KIND_CPU_OP;
    ev.name_id = dt_session_intern(s, name);
    ev.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
    ev.external_id = id;
    return ev;
}

static void add_launches(dt_session *s)
{
    for (uint64_t i = 0; i < LAUNCHES; i++) {
        uint64_t t = BASE + 10000 + i * 1000, corr = i + 1;
        devtrace_event c = call(s, t, t + 300, corr, "cudaLaunchKernel");
        c.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        c.external_id = 5000 + i / 10;
        emit(s, c);
        devtrace_event d;
        if (i % 5 == 4) {
            d = device_event(DEVTRACE_KIND_MEMSET, t + 500, t + 900, corr, 7);
            d.u.memset.bytes = 4096 * i;
        } else if (i % 3 == 2) {
            d = device_event(DEVTRACE_KIND_MEMCPY, t + 500, t + 500 + i % 7, corr, 7); /* some last 0 ns */
            d.u.memcpy.bytes = 1000 + i;
            d.u.memcpy.direction = (uint32_t)(i % 6); /* 5: no direction */
        } else {
            d = launched_kernel(s, t + 500, t + 900, corr, 7, i % 2 ? "vadd" : "scale");
        }
        d.flags |= DEVTRACE_EVENT_HAS_EXTERNAL;
        d.external_id = c.external_id;
        if (i % 50 == 0) { /* a user correlation (devtrace_push_user_correlation) on 60 pairs */
            d.flags |= DEVTRACE_EVENT_HAS_USER_EXTERNAL;
            d.user_external_id = 900000 + i;
        }
        emit(s, d);
    }
}

static devtrace_event marker(dt_session *s, uint64_t t, uint64_t id, uint32_t phase, int device, const char *name)
{
    devtrace_event ev = ut_runtime(t, t, 0);
    ev.kind = DEVTRACE_KIND_MARKER;
    ev.name_id = name ? dt_session_intern(s, name) : 0;
    ev.u.marker.id = id;
    ev.u.marker.phase = phase;
    ev.u.marker.device = (uint32_t)device;
    if (device) { /* device 0, stream 7 */
        ev.device = 0;
        ev.stream = 7;
    }
    return ev;
}

static devtrace_event memory(uint64_t t, uint32_t pid, uint32_t dev, uint64_t bytes, int release)
{
    devtrace_event ev = ut_runtime(t, t, 0);
    ev.kind = DEVTRACE_KIND_MEMORY;
    ev.device = ev.stream = pid;
    ev.u.memory.address = 0x10000 + bytes;
    ev.u.memory.bytes = bytes;
    ev.u.memory.release = (uint32_t)release;
    ev.u.memory.device_id = dev;
    ev.u.memory.stream_id = release ? UINT32_MAX : 7;
    return ev;
}

/* 3 marker slices (2 user_annotation, 1 gpu_user_annotation) and 7 memory counter values
 * on 3 counter tracks (processes 100 and 101 on device 0, 100 on device 1). */
static void add_markers_and_memory(dt_session *s, uint64_t t)
{
    devtrace_event start = marker(s, t, 1, DEVTRACE_MARKER_START, 0, "forward");
    start.u.marker.domain_id = dt_session_intern(s, "training \xff domain");
    emit(s, start);
    emit(s, marker(s, t + 30, 2, DEVTRACE_MARKER_INSTANT, 0, "checkpoint"));
    emit(s, marker(s, t + 90, 1, DEVTRACE_MARKER_END, 0, NULL));
    emit(s, marker(s, t + 10, 1, DEVTRACE_MARKER_START, 1, "device range"));
    emit(s, marker(s, t + 80, 1, DEVTRACE_MARKER_END, 1, NULL));
    emit(s, marker(s, t + 40, 3, DEVTRACE_MARKER_START, 0, "never ends"));
    emit(s, memory(t + 5, 100, 0, 4096, 0));
    emit(s, memory(t + 15, 101, 0, 1000, 0));
    emit(s, memory(t + 25, 100, 1, 64, 0));
    emit(s, memory(t + 35, 100, 0, 512, 0));
    emit(s, memory(t + 45, 101, 0, 1000, 1));
    emit(s, memory(t + 55, 100, 0, 4096, 1));
    emit(s, memory(t + 65, 100, 1, 64, 1));
}

static void add_edge_cases(dt_session *s)
{
    uint64_t t = BASE + 10000 + LAUNCHES * 1000ull;
    /* One call, three kernels: three flow pairs. */
    emit(s, call(s, t, t + 100, 90000, "cudaGraphLaunch"));
    for (uint64_t k = 0; k < 3; k++)
        emit(s, launched_kernel(s, t + 200 + 300 * k, t + 400 + 300 * k, 90000, 8, "graph_node"));
    /* A kernel before its call; two kernels with one start, one inside the other. */
    emit(s, launched_kernel(s, t + 2000, t + 2100, 90001, 9, "early"));
    emit(s, call(s, t + 2050, t + 2200, 90001, "cudaLaunchKernel"));
    emit(s, launched_kernel(s, t + 3000, t + 3500, 0, 9, "outer"));
    emit(s, launched_kernel(s, t + 3000, t + 3200, 0, 9, "inner"));
    /* CPU ops overlapping a runtime call and each other without nesting, on one thread. */
    emit(s, call(s, t + 4000, t + 4100, 0, "cudaGetDevice"));
    emit(s, cpu_op(s, t + 4050, t + 4500, 77, "aten::relu"));
    emit(s, cpu_op(s, t + 4400, t + 4800, 78, "aten::add"));
    emit(s, cpu_op(s, t + 4700, t + 4900, 79, "aten::mul"));
    /* A name that is not UTF-8, and a note. */
    emit(s, launched_kernel(s, t + 5000, t + 5100, 0, 7, "bad\xff\xfe name"));
    dt_add_note(s, "a note with \"quotes\" and a tab\there");
    add_markers_and_memory(s, t + 5200);
    /* Lanes past the 4096 named: one call on each of 4100 more threads. */
    for (uint32_t k = 0; k < EXTRA_THREADS; k++) {
        devtrace_event c = call(s, t + 6000 + k, t + 6000 + k + 1, 0, "cudaGetDevice");
        c.device = 300;
        c.stream = 1000 + k;
        emit(s, c);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: perfetto_pair OUT.json OUT-serial.pftrace OUT-threads.pftrace\n");
        return 2;
    }
    dt_session *s = ut_offline_session();
    if (!s)
        return 1;
    dt_device_props dev = ut_occupancy_device("Synthetic GPU", 8, 108, 49152, 167936);
    dt_add_device(s, &dev);
    dt_set_window(s, BASE, BASE + 20000000);
    add_launches(s);
    add_edge_cases(s);
    devtrace_error err = {0, ""};
    int rc = dt_chrome_write_file(s, argv[1], 0, &err);
    rc = rc ? rc : dt_perfetto_write_file(s, argv[2], 0, &err);
    rc = rc ? rc : dt_perfetto_write_file(s, argv[3], 4, &err);
    if (rc)
        fprintf(stderr, "perfetto_pair: %s\n", err.message);
    devtrace_close(s);
    return rc ? 1 : 0;
}
