/* test_occupancy.c: the occupancy calculator (src/core/occupancy.c).
 *
 * One crafted device: warp 32, 2048 threads/SM, 32 blocks/SM, 65536 registers per SM
 * and per block, 48 KiB shared memory per block, 100 KiB per SM, 80 SMs. Exact figures
 * for launches limited by registers (with the 256-register allocation unit), shared
 * memory (static + dynamic), threads and blocks per SM; blocks and warps per SM
 * (fractional too); the estimated achieved occupancy (launched blocks capped by the
 * active ones); launches that cannot run; -1 when the device has no attributes, there
 * is no launch information, or the launch is invalid. All values are exact in binary
 * floating point, so they are compared with ==. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/session.h"

#define assert_exactly(actual, expected)                              \
    do {                                                              \
        double a_ = (actual), e_ = (expected);                        \
        if (a_ != e_)                                                 \
            fail_msg("%s is %.17g, expected %.17g", #actual, a_, e_); \
    } while (0)

static dt_device_props device(void)
{
    dt_device_props d;
    memset(&d, 0, sizeof d);
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.regs_per_sm = 65536;
    d.regs_per_block = 65536;
    d.smem_per_block = 48 * 1024;
    d.smem_per_sm = 100 * 1024;
    d.num_sms = 80;
    d.has_occupancy = 1;
    return d;
}

static devtrace_event launch(int grid, int block, uint32_t regs, uint32_t static_smem, uint32_t dynamic_smem)
{
    devtrace_event k;
    memset(&k, 0, sizeof k);
    k.kind = DEVTRACE_KIND_KERNEL;
    k.flags = DEVTRACE_EVENT_HAS_LAUNCH | DEVTRACE_EVENT_HAS_REGS;
    k.u.kernel.grid[0] = grid, k.u.kernel.grid[1] = 1, k.u.kernel.grid[2] = 1;
    k.u.kernel.block[0] = block, k.u.kernel.block[1] = 1, k.u.kernel.block[2] = 1;
    k.u.kernel.registers_per_thread = regs;
    k.u.kernel.static_shared = static_smem;
    k.u.kernel.dynamic_shared = dynamic_smem;
    return k;
}

static dt_occupancy compute(const devtrace_event *k)
{
    dt_device_props d = device();
    dt_occupancy o;
    memset(&o, 0, sizeof o);
    assert_int_equal(dt_occupancy_compute(&d, k, &o), 0);
    return o;
}

static void test_block_256_with_32_registers_has_8_active_blocks(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 0, 0);
    dt_occupancy o = compute(&k);
    assert_int_equal(o.active_blocks_per_sm, 8); /* 1024 regs per warp, 8192 per block */
}

static void test_64_registers_leave_4_active_blocks(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 64, 0, 0);
    assert_int_equal(compute(&k).active_blocks_per_sm, 4);
}

static void test_40_kib_shared_memory_leaves_2_active_blocks(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 40 * 1024, 0);
    assert_int_equal(compute(&k).active_blocks_per_sm, 2);
}

static void test_static_and_dynamic_shared_memory_add_up(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 20 * 1024, 20 * 1024);
    assert_int_equal(compute(&k).active_blocks_per_sm, 2);
}

static void test_registers_are_allocated_per_warp_in_units_of_256(void **state)
{
    (void)state;
    /* 33 regs x 32 threads = 1056 -> 1280 per warp, 10240 per block: 6 blocks. */
    devtrace_event k = launch(160, 256, 33, 0, 0);
    assert_int_equal(compute(&k).active_blocks_per_sm, 6);
}

static void test_threads_per_sm_limit_active_blocks(void **state)
{
    (void)state;
    devtrace_event k = launch(80, 1024, 0, 0, 0);
    dt_occupancy o = compute(&k);
    assert_int_equal(o.active_blocks_per_sm, 2);
    assert_exactly(o.est_achieved_occupancy_pct, 50.0); /* 1 block of 1024 threads per SM */
}

static void test_blocks_per_sm_limit_active_blocks(void **state)
{
    (void)state;
    devtrace_event k = launch(8000, 32, 0, 0, 0); /* 100 one-warp blocks per SM */
    dt_occupancy o = compute(&k);
    assert_int_equal(o.active_blocks_per_sm, 32);
    assert_exactly(o.blocks_per_sm, 100.0);
    assert_exactly(o.est_achieved_occupancy_pct, 50.0); /* 32 warps of 64 */
}

static void test_grid_160_gives_2_blocks_and_16_warps_per_sm(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 0, 0);
    dt_occupancy o = compute(&k);
    assert_exactly(o.blocks_per_sm, 2.0);
    assert_exactly(o.warps_per_sm, 16.0);
    assert_exactly(o.est_achieved_occupancy_pct, 25.0); /* 2 x 256 of 2048 threads */
}

static void test_fractional_blocks_per_sm(void **state)
{
    (void)state;
    devtrace_event k = launch(100, 256, 32, 0, 0);
    dt_occupancy o = compute(&k);
    assert_exactly(o.blocks_per_sm, 1.25);
    assert_exactly(o.warps_per_sm, 10.0);
    assert_exactly(o.est_achieved_occupancy_pct, 15.625);
}

static void test_achieved_occupancy_is_capped_by_active_blocks(void **state)
{
    (void)state;
    devtrace_event by_regs32 = launch(800, 256, 32, 0, 0); /* 10 blocks per SM launched */
    devtrace_event by_regs64 = launch(800, 256, 64, 0, 0);
    devtrace_event by_smem = launch(800, 256, 32, 40 * 1024, 0);
    assert_exactly(compute(&by_regs32).est_achieved_occupancy_pct, 100.0); /* 8 resident */
    assert_exactly(compute(&by_regs64).est_achieved_occupancy_pct, 50.0);  /* 4 resident */
    assert_exactly(compute(&by_smem).est_achieved_occupancy_pct, 25.0);    /* 2 resident */
    assert_exactly(compute(&by_smem).blocks_per_sm, 10.0);                 /* launched, not resident */
}

static void test_a_partial_warp_counts_as_a_whole_warp(void **state)
{
    (void)state;
    devtrace_event k = launch(80, 48, 0, 0, 0); /* 48 threads: 2 warps */
    dt_occupancy o = compute(&k);
    assert_exactly(o.warps_per_sm, 2.0);
    assert_exactly(o.est_achieved_occupancy_pct, 3.125); /* 64 thread slots of 2048 */
}

static void test_three_dimensional_grid_and_block(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 0, 0);
    k.u.kernel.grid[0] = 4, k.u.kernel.grid[1] = 5, k.u.kernel.grid[2] = 8;
    k.u.kernel.block[0] = 16, k.u.kernel.block[1] = 16, k.u.kernel.block[2] = 1;
    dt_occupancy o = compute(&k);
    assert_int_equal(o.active_blocks_per_sm, 8);
    assert_exactly(o.blocks_per_sm, 2.0);
    assert_exactly(o.warps_per_sm, 16.0);
}

static void test_block_over_the_register_limit_cannot_run(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 1024, 255, 0, 0); /* 261,120 registers per block */
    dt_occupancy o = compute(&k);
    assert_int_equal(o.active_blocks_per_sm, 0);
    assert_exactly(o.est_achieved_occupancy_pct, 0.0);
}

static void test_no_device_attributes_gives_minus_one(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 0, 0);
    dt_device_props d = device();
    dt_occupancy o;
    d.has_occupancy = 0;
    assert_int_equal(dt_occupancy_compute(&d, &k, &o), -1);
    assert_int_equal(dt_occupancy_compute(NULL, &k, &o), -1);
    d = device();
    d.num_sms = 0;
    assert_int_equal(dt_occupancy_compute(&d, &k, &o), -1);
    d = device();
    d.warp_size = 0;
    assert_int_equal(dt_occupancy_compute(&d, &k, &o), -1);
}

static void test_no_launch_information_gives_minus_one(void **state)
{
    (void)state;
    devtrace_event k = launch(160, 256, 32, 0, 0);
    dt_device_props d = device();
    dt_occupancy o;
    k.flags &= (uint16_t)~DEVTRACE_EVENT_HAS_LAUNCH;
    assert_int_equal(dt_occupancy_compute(&d, &k, &o), -1);
}

static void test_invalid_launch_gives_minus_one(void **state)
{
    (void)state;
    dt_device_props d = device();
    dt_occupancy o;
    devtrace_event zero_grid = launch(0, 256, 32, 0, 0);
    devtrace_event negative_block = launch(160, -256, 32, 0, 0);
    devtrace_event huge_block = launch(160, 4096, 32, 0, 0); /* more than an SM holds */
    assert_int_equal(dt_occupancy_compute(&d, &zero_grid, &o), -1);
    assert_int_equal(dt_occupancy_compute(&d, &negative_block, &o), -1);
    assert_int_equal(dt_occupancy_compute(&d, &huge_block, &o), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_256_with_32_registers_has_8_active_blocks),
        cmocka_unit_test(test_64_registers_leave_4_active_blocks),
        cmocka_unit_test(test_40_kib_shared_memory_leaves_2_active_blocks),
        cmocka_unit_test(test_static_and_dynamic_shared_memory_add_up),
        cmocka_unit_test(test_registers_are_allocated_per_warp_in_units_of_256),
        cmocka_unit_test(test_threads_per_sm_limit_active_blocks),
        cmocka_unit_test(test_blocks_per_sm_limit_active_blocks),
        cmocka_unit_test(test_grid_160_gives_2_blocks_and_16_warps_per_sm),
        cmocka_unit_test(test_fractional_blocks_per_sm),
        cmocka_unit_test(test_achieved_occupancy_is_capped_by_active_blocks),
        cmocka_unit_test(test_a_partial_warp_counts_as_a_whole_warp),
        cmocka_unit_test(test_three_dimensional_grid_and_block),
        cmocka_unit_test(test_block_over_the_register_limit_cannot_run),
        cmocka_unit_test(test_no_device_attributes_gives_minus_one),
        cmocka_unit_test(test_no_launch_information_gives_minus_one),
        cmocka_unit_test(test_invalid_launch_gives_minus_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
