/* test_opencl_clock.c: how the OpenCL layer puts device timestamps on its host clock,
 * for devices PoCL does not cover, against a fake target dispatch table (no OpenCL
 * platform needed; links the static library for the backend's internal functions).
 *
 * Each case registers a fake device and feeds it completed commands: the enqueue call's
 * interval on the host clock and the QUEUED time the device reported. Expected:
 *   - a device on the host clock (QUEUED inside the call, or just after it): offset 0;
 *   - a device clock ahead of or behind the host clock: the offset that puts every
 *     QUEUED time at or after its call's start, within the shortest call-to-QUEUED gap;
 *   - a device with clGetDeviceAndHostTimer: the measured offset, whatever the commands say;
 *   - the check's shortcut (dt_cl_device_clock_settled): a command known to within a margin
 *     to lie strictly inside the bounds is counted with the same offset; one within the
 *     margin of a bound, a device not checked yet and a device with a host timer are not.
 * Exit 0: pass; 1: a check failed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/opencl_layer.h"
#include "opencl_test.h" /* CHECK */

#define MS INT64_C(1000000)
#define HOST_TIMER_DEVICE ((cl_device_id)(uintptr_t)0x5000)
#define HOST_TIMER_LAG_NS 1000000000ull

static cl_int CL_API_CALL fake_device_info(cl_device_id device, cl_device_info what, size_t size, void *value,
                                           size_t *size_ret)
{
    return CL_INVALID_VALUE; /* properties unknown: defaults */
}

static cl_int CL_API_CALL fake_device_and_host_timer(cl_device_id device, cl_ulong *device_ts, cl_ulong *host_ts)
{
    if (device != HOST_TIMER_DEVICE)
        return CL_INVALID_OPERATION; /* as PoCL 3.1 */
    *host_ts = dt_cl_host_ns();
    *device_ts = *host_ts - HOST_TIMER_LAG_NS;
    return CL_SUCCESS;
}

/* Feeds commands to the device: calls of 20 us starting every 100 us, each QUEUED time
 * gap_ns after its call's start, on a device clock device_minus_host_ns from the host's.
 * Returns the offset the layer applies after the last one. */
static int64_t feed(int index, int64_t device_minus_host_ns, const int64_t *gaps_ns, int n)
{
    int64_t offset = 0;
    uint64_t host = 1000 * (uint64_t)MS;
    for (int i = 0; i < n; i++, host += 100000) {
        uint64_t queued = (uint64_t)((int64_t)host + gaps_ns[i] + device_minus_host_ns);
        offset = dt_cl_device_clock_offset(index, 1, queued, host, host + 20000);
    }
    return offset;
}

static int device(uintptr_t handle)
{
    int index = dt_cl_device_index((cl_device_id)handle);
    CHECK(index >= 0, "device %#lx not registered", (unsigned long)handle);
    return index;
}

static void expect_note(int index, const char *part)
{
    char note[400];
    dt_cl_device_clock_note(index, note, sizeof note);
    CHECK(strstr(note, part), "device %d's note \"%s\" lacks \"%s\"", index, note, part);
}

int main(void)
{
    memset(&dt_cl_target, 0, sizeof dt_cl_target);
    dt_cl_target.clGetDeviceInfo = fake_device_info;
    dt_cl_target.clGetDeviceAndHostTimer = fake_device_and_host_timer;

    const int64_t inside[] = {5000, 3000, 12000, 2500};
    int same = device(0x1000);
    expect_note(same, "no completed command");
    CHECK(feed(same, 0, inside, 4) == 0, "a device on the host clock needs no offset");
    expect_note(same, "device timer is CLOCK_MONOTONIC_RAW");
    expect_note(same, "checked on 4 commands");
    /* Its bounds now: call start - QUEUED at most -2500, call end - QUEUED at least 8000. */
    CHECK(dt_cl_device_clock_settled(same, -3000, 12000, 64), "a command well inside the bounds is settled");
    CHECK(dt_cl_device_clock_offset_counted(same) == 0, "a settled command: the same offset");
    expect_note(same, "checked on 5 commands");
    CHECK(!dt_cl_device_clock_settled(same, -2450, 12000, 64), "within the margin of the lower bound: exact check");
    CHECK(!dt_cl_device_clock_settled(same, -3000, 8050, 64), "within the margin of the upper bound: exact check");
    CHECK(!dt_cl_device_clock_settled(device(0x1100), -3000, 12000, 64), "a device with no command checked yet");

    const int64_t late[] = {25000, 400000, 30000};
    int stamped_late = device(0x2000);
    CHECK(feed(stamped_late, 0, late, 3) == 0, "a QUEUED stamped just after its call still fits the host clock");

    int ahead = device(0x3000);
    int64_t offset = feed(ahead, 247 * MS, inside, 4);
    CHECK(offset == -247 * MS - 2500, "device 247 ms ahead: offset %" PRId64 " ns, expected %" PRId64, offset,
          -247 * MS - 2500);
    expect_note(ahead, "device timer is not CLOCK_MONOTONIC_RAW");

    int behind = device(0x4000);
    offset = feed(behind, -5 * MS, inside, 4);
    CHECK(offset == 5 * MS - 2500, "device 5 ms behind: offset %" PRId64 " ns", offset);

    int timed = device((uintptr_t)HOST_TIMER_DEVICE);
    offset = feed(timed, 0, inside, 4);
    CHECK(offset >= (int64_t)HOST_TIMER_LAG_NS - MS && offset <= (int64_t)HOST_TIMER_LAG_NS + MS,
          "clGetDeviceAndHostTimer said 1 s; offset %" PRId64 " ns", offset);
    expect_note(timed, "measured with clGetDeviceAndHostTimer");
    CHECK(!dt_cl_device_clock_settled(timed, -3000, 12000, 64), "a device with a host timer is never settled");

    CHECK(dt_cl_device_index((cl_device_id)(uintptr_t)0x1000) == same, "a device registered twice");
    printf("ok: %d fake devices\n", dt_cl_device_count());
    return 0;
}
