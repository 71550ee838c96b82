/* test_kernel_occupancy.c: devtrace_kernel_occupancy (src/core/session_info.c), the public
 * occupancy query the Kineto adaptor writes its kernel args from: the exact figures for
 * launches on a device with known attributes (an SM of 2048 threads, 32 blocks, 64 K
 * registers, 164 KiB of shared memory; 108 SMs), each limit in turn (threads, registers,
 * shared memory, a launch that cannot run), DEVTRACE_ENOTSUP when the kernel has no launch
 * shape or its device no attributes, DEVTRACE_EINVAL for bad arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_session.h"

/* A session with device 0 (attributes known: ut_occupancy_device) and device 1 without any. */
static dt_session *session_with_devices(void)
{
    dt_session *s = ut_offline_session();
    assert_non_null(s);
    dt_device_props d = ut_occupancy_device("Device zero", 8, 108, 49152, 167936);
    d.id = 0;
    dt_add_device(s, &d);
    dt_device_props bare;
    memset(&bare, 0, sizeof bare);
    bare.id = 1;
    snprintf(bare.name, sizeof bare.name, "Device one");
    dt_add_device(s, &bare);
    return s;
}

/* A kernel launch on a device: grid (gx,1,1), block (bx,1,1), registers, shared memory. */
static devtrace_event launch(uint32_t device, int32_t gx, int32_t bx, uint32_t regs, uint32_t static_shared,
                             uint32_t dynamic_shared)
{
    devtrace_event ev = ut_kernel(1000, 2000, 1);
    ev.device = device;
    ev.flags |= DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED;
    ev.u.kernel.grid[0] = gx;
    ev.u.kernel.grid[1] = ev.u.kernel.grid[2] = 1;
    ev.u.kernel.block[0] = bx;
    ev.u.kernel.block[1] = ev.u.kernel.block[2] = 1;
    ev.u.kernel.registers_per_thread = regs;
    ev.u.kernel.static_shared = static_shared;
    ev.u.kernel.dynamic_shared = dynamic_shared;
    return ev;
}

static devtrace_occupancy query(const dt_session *s, const devtrace_event *ev, int expect_rc)
{
    devtrace_occupancy occ;
    memset(&occ, 0x5a, sizeof occ);
    occ.size = sizeof occ;
    assert_int_equal(devtrace_kernel_occupancy(s, ev, &occ), expect_rc);
    assert_int_equal(occ.size, sizeof occ); /* the caller's size is left as set */
    return occ;
}

/* 216 blocks of 256 threads (8 warps), 32 registers, 8 + 4 KiB shared: 2 blocks an SM of the
 * 8 that fit (threads: 2048 / 256; registers: 65536 / (1024 * 8)), 16 warps, 25%. */
static void a_launch_below_every_limit_is_its_blocks_share(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 216, 256, 32, 8192, 4096);
    devtrace_occupancy occ = query(s, &ev, 0);
    assert_true(occ.blocks_per_sm == 2.0);
    assert_true(occ.warps_per_sm == 16.0);
    assert_int_equal(occ.active_blocks_per_sm, 8);
    assert_true(occ.est_achieved_occupancy_pct == 25.0);
    devtrace_close(s);
}

/* 1080 blocks of 128 threads, 64 registers: 10 blocks an SM launched, registers let 8 reside
 * (2048 a warp, 4 warps a block: 65536 / 8192), so 8 * 4 warps of 64: 50%. */
static void registers_cap_the_resident_blocks(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 1080, 128, 64, 0, 0);
    devtrace_occupancy occ = query(s, &ev, 0);
    assert_true(occ.blocks_per_sm == 10.0);
    assert_true(occ.warps_per_sm == 40.0);
    assert_int_equal(occ.active_blocks_per_sm, 8);
    assert_true(occ.est_achieved_occupancy_pct == 50.0);
    devtrace_close(s);
}

/* 432 blocks of 512 threads, 16 registers, 48 KiB shared a block: threads allow 4, registers
 * 8, shared memory 3 (167936 / 49152): 3 of the 4 launched reside, 3 * 16 warps: 75%. */
static void shared_memory_caps_the_resident_blocks(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 432, 512, 16, 49152, 0);
    devtrace_occupancy occ = query(s, &ev, 0);
    assert_true(occ.blocks_per_sm == 4.0);
    assert_true(occ.warps_per_sm == 64.0);
    assert_int_equal(occ.active_blocks_per_sm, 3);
    assert_true(occ.est_achieved_occupancy_pct == 75.0);
    devtrace_close(s);
}

/* More blocks launched than fit: 2160 blocks of 1024 threads (32 warps), 20 an SM, of which 2
 * reside (threads: 2048 / 1024): 64 warps of 64, 100%. */
static void a_full_sm_is_one_hundred_percent(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 2160, 1024, 0, 0, 0);
    ev.flags &= (uint16_t) ~(DEVTRACE_EVENT_HAS_REGS | DEVTRACE_EVENT_HAS_SHARED);
    devtrace_occupancy occ = query(s, &ev, 0);
    assert_true(occ.blocks_per_sm == 20.0);
    assert_true(occ.warps_per_sm == 640.0);
    assert_int_equal(occ.active_blocks_per_sm, 2);
    assert_true(occ.est_achieved_occupancy_pct == 100.0);
    devtrace_close(s);
}

/* 255 registers a thread for 512 threads need 130560 registers, more than a block may have
 * (65536): the launch cannot run, 0 blocks reside, 0%, while the launched share is still given. */
static void a_launch_over_the_block_register_limit_resides_nowhere(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 108, 512, 255, 0, 0);
    devtrace_occupancy occ = query(s, &ev, 0);
    assert_true(occ.blocks_per_sm == 1.0);
    assert_true(occ.warps_per_sm == 16.0);
    assert_int_equal(occ.active_blocks_per_sm, 0);
    assert_true(occ.est_achieved_occupancy_pct == 0.0);
    devtrace_close(s);
}

/* No launch shape, no attributes for the kernel's device, a device not listed, a block
 * larger than the SM, an empty grid: not supported (the trace then has no occupancy keys). */
static void without_a_shape_or_attributes_it_is_not_supported(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 216, 256, 32, 0, 0);
    ev.flags &= (uint16_t)~DEVTRACE_EVENT_HAS_LAUNCH;
    query(s, &ev, DEVTRACE_ENOTSUP);
    ev = launch(1, 216, 256, 32, 0, 0); /* device 1: no attributes */
    query(s, &ev, DEVTRACE_ENOTSUP);
    ev = launch(7, 216, 256, 32, 0, 0); /* no device 7 */
    query(s, &ev, DEVTRACE_ENOTSUP);
    ev = launch(0, 216, 4096, 0, 0, 0); /* 4096 threads a block: more than an SM holds */
    query(s, &ev, DEVTRACE_ENOTSUP);
    ev = launch(0, 0, 256, 0, 0, 0); /* a grid of 0 blocks */
    query(s, &ev, DEVTRACE_ENOTSUP);
    devtrace_close(s);
    /* A session without devices. */
    dt_session *empty = ut_offline_session();
    ev = launch(0, 216, 256, 32, 0, 0);
    query(empty, &ev, DEVTRACE_ENOTSUP);
    devtrace_close(empty);
}

/* NULL arguments, an event that is not a kernel, a size smaller than the struct's. */
static void bad_arguments_are_refused(void **state)
{
    (void)state;
    dt_session *s = session_with_devices();
    devtrace_event ev = launch(0, 216, 256, 32, 0, 0);
    devtrace_occupancy occ;
    memset(&occ, 0, sizeof occ);
    occ.size = sizeof occ;
    assert_int_equal(devtrace_kernel_occupancy(NULL, &ev, &occ), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_kernel_occupancy(s, NULL, &occ), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_kernel_occupancy(s, &ev, NULL), DEVTRACE_EINVAL);
    occ.size = sizeof occ - 1;
    assert_int_equal(devtrace_kernel_occupancy(s, &ev, &occ), DEVTRACE_EINVAL);
    occ.size = 0;
    assert_int_equal(devtrace_kernel_occupancy(s, &ev, &occ), DEVTRACE_EINVAL);
    occ.size = sizeof occ;
    devtrace_event copy = ev;
    copy.kind = DEVTRACE_KIND_MEMCPY;
    assert_int_equal(devtrace_kernel_occupancy(s, &copy, &occ), DEVTRACE_EINVAL);
    copy.kind = DEVTRACE_KIND_RUNTIME;
    assert_int_equal(devtrace_kernel_occupancy(s, &copy, &occ), DEVTRACE_EINVAL);
    assert_int_equal(devtrace_kernel_occupancy(s, &ev, &occ), 0); /* the same launch, well asked */
    devtrace_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_launch_below_every_limit_is_its_blocks_share),
        cmocka_unit_test(registers_cap_the_resident_blocks),
        cmocka_unit_test(shared_memory_caps_the_resident_blocks),
        cmocka_unit_test(a_full_sm_is_one_hundred_percent),
        cmocka_unit_test(a_launch_over_the_block_register_limit_resides_nowhere),
        cmocka_unit_test(without_a_shape_or_attributes_it_is_not_supported),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
