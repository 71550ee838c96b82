/* test_emu_cupti.c: the CUPTI emulator's specification, seen from a tracer.
 *
 * Links libcupti-emu.so and plays a minimal tracer: registers buffer callbacks, enables
 * kinds, subscribes, runs the parity workload or single calls through devemu_*, flushes
 * and reads the records with the CUPTI offsets of vendor-abi.md written out in
 * test_tracer.c (not the emulator's own tables). Usage: test_emu_cupti PATH/TO/parity.wl */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "devemu.h"
#include "emu_cupti_shape.h"
#include "test_tracer.h"
#include "wl.h"

EMU_CUPTI_SHAPE_DECLARE(cupti)
int cudaDeviceGetAttribute(int *value, int attr, int device);
int cudaGetDeviceCount(int *count);

enum { KIND_BOGUS = 0x0BAD };
enum { CBID_LAUNCH = 211, CBID_MEMCPY = 31, CBID_MEMSET = 51, CBID_GET_DEVICE = 17 };

static const char *g_parity_path;
static wl_workload g_parity;

/* ---- identity ---- */

static void test_version_and_result_strings(void **state)
{
    uint32_t version = 0;
    const char *text = NULL;
    (void)state;
    assert_int_equal(cuptiGetVersion(&version), SUCCESS);
    assert_int_equal(version, 130001);
    assert_int_equal(cuptiGetResultString(ERROR_MAX_LIMIT_REACHED, &text), SUCCESS);
    assert_string_equal(text, "CUPTI_ERROR_MAX_LIMIT_REACHED");
    assert_int_equal(cuptiGetResultString(ERROR_MULTIPLE_SUBSCRIBERS, &text), SUCCESS);
    assert_string_equal(text, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    assert_int_equal(cuptiGetResultString(12345, &text), ERROR_INVALID_PARAMETER);
    assert_string_equal(devemu_vendor(), "cupti");
}

/* ---- the parity workload ---- */

static void test_parity_counts_and_pairs(void **state)
{
    wl_counts want;
    (void)state;
    wl_expected_counts(&g_parity, &want);
    tt_start("", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_RUNTIME), want.runtime);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), want.kernels);
    assert_int_equal(tt_count_kind(KIND_MEMCPY), want.memcpys);
    assert_int_equal(tt_count_kind(KIND_MEMSET), want.memsets);
    for (size_t i = 0; i < tt.n; i++) {
        const tt_rec *d = &tt.recs[i];
        if (!tt_is_device_kind(d->kind))
            continue;
        const tt_rec *call = tt_find(KIND_RUNTIME, d->correlation);
        assert_non_null(call);
        uint32_t want_cbid = d->kind == KIND_MEMCPY ? CBID_MEMCPY : d->kind == KIND_MEMSET ? CBID_MEMSET : CBID_LAUNCH;
        assert_int_equal(call->cbid, want_cbid);
        assert_true(d->start >= call->start); /* device work starts inside or after its call */
        assert_true(d->end > d->start);
        assert_int_equal(d->stream, 7);
    }
    size_t dropped = 99;
    assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), SUCCESS);
    assert_int_equal(dropped, 0);
}

static void test_parity_device_time_per_op_matches_the_file(void **state)
{
    (void)state;
    tt_start("", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    for (size_t op = 0; op < g_parity.nops; op++) {
        uint64_t sum = 0, events = 0;
        for (size_t i = 0; i < tt.n; i++) {
            const tt_rec *d = &tt.recs[i];
            if (!tt_is_device_kind(d->kind))
                continue;
            const tt_rec *ext = tt_find(KIND_EXTERNAL_CORRELATION, d->correlation);
            assert_non_null(ext);
            assert_int_equal(ext->external_kind, CUSTOM0);
            if (ext->external_id == g_parity.ops[op].id)
                sum += d->end - d->start, events++;
        }
        assert_int_equal(sum, g_parity.ops[op].device_ns);
        assert_int_equal(events, g_parity.ops[op].device_events);
    }
}

static void test_parity_fields_carry_the_statements(void **state)
{
    size_t launch = 0;
    (void)state;
    tt_start("", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    for (size_t i = 0; i < g_parity.nstmts; i++) {
        const wl_stmt *st = &g_parity.stmts[i];
        if (st->kind != WL_STMT_LAUNCH)
            continue;
        while (launch < tt.n && tt.recs[launch].kind != KIND_CONCURRENT_KERNEL)
            launch++;
        assert_true(launch < tt.n);
        assert_string_equal(tt.recs[launch].name, st->u.launch.kernel);
        assert_int_equal(tt.recs[launch].grid_x, st->u.launch.grid[0]);
        launch++;
    }
    const tt_rec *copy = NULL, *set = NULL;
    for (size_t i = 0; i < tt.n; i++) {
        copy = tt.recs[i].kind == KIND_MEMCPY ? &tt.recs[i] : copy;
        set = tt.recs[i].kind == KIND_MEMSET ? &tt.recs[i] : set;
    }
    assert_int_equal(copy->copy_kind, 2); /* DTOH */
    assert_int_equal(copy->bytes, 4);
    assert_int_equal(set->bytes, 128);
    assert_int_equal(set->value, 0);
    const tt_rec *call = tt_find(KIND_RUNTIME, copy->correlation);
    assert_true(call->end >= copy->end); /* cudaMemcpy returns after the copy */
    assert_int_equal(call->process, (uint32_t)getpid());
    assert_int_equal(call->thread, (uint32_t)syscall(SYS_gettid));
}

static void test_kernel_kind_is_used_when_concurrent_kernel_is_off(void **state)
{
    static const int kinds[] = {KIND_KERNEL, 0};
    (void)state;
    tt_start("", kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_KERNEL), 17);
    assert_int_equal(tt.n, 17); /* nothing else was enabled */
}

static void test_nothing_is_recorded_without_enabled_kinds(void **state)
{
    static const int none[] = {0};
    devemu_stats stats;
    (void)state;
    tt_start("", none);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt.n, 0);
    devemu_get_stats(&stats);
    assert_int_equal(stats.runtime_calls, 187);
    assert_int_equal(stats.dropped_records, 0);
}

/* ---- callbacks ---- */

static struct {
    int enter, exit, mismatched, launch_named;
    uint32_t last_enter_correlation;
} g_cb;

static void on_callback(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
    const uint8_t *d = cbdata;
    uint32_t site = tt_u32_at(d, 0), correlation = tt_u32_at(d, 64);
    const char *function_name, *symbol;
    uint64_t *slot;
    memcpy(&function_name, d + 8, sizeof function_name);
    memcpy(&symbol, d + 32, sizeof symbol);
    memcpy(&slot, d + 56, sizeof slot);
    assert_ptr_equal(userdata, &g_cb);
    assert_int_equal(domain, DOMAIN_RUNTIME);
    if (site == 0) {
        g_cb.enter++;
        g_cb.last_enter_correlation = correlation;
        *slot = 0xC0FFEE;
    } else {
        g_cb.exit++;
        g_cb.mismatched += correlation != g_cb.last_enter_correlation || *slot != 0xC0FFEE;
    }
    if (cbid == CBID_LAUNCH && site == 0)
        g_cb.launch_named += strcmp(function_name, "cudaLaunchKernel") == 0 && symbol && strncmp(symbol, "_Z", 2) == 0;
}

static void test_callbacks_fire_enter_and_exit_for_every_call(void **state)
{
    static const int none[] = {0};
    void *sub = NULL, *second = NULL;
    (void)state;
    tt_start("", none);
    memset(&g_cb, 0, sizeof g_cb);
    assert_int_equal(cuptiSubscribe(&sub, on_callback, &g_cb), SUCCESS);
    assert_int_equal(cuptiSubscribe(&second, on_callback, &g_cb), ERROR_MULTIPLE_SUBSCRIBERS);
    assert_int_equal(cuptiEnableDomain(1, sub, DOMAIN_RUNTIME), SUCCESS);
    assert_int_equal(devemu_run(), 0);
    assert_int_equal(g_cb.enter, 187);
    assert_int_equal(g_cb.exit, 187);
    assert_int_equal(g_cb.mismatched, 0);
    assert_int_equal(g_cb.launch_named, 17);
    assert_int_equal(cuptiUnsubscribe(sub), SUCCESS);
    assert_int_equal(cuptiSubscribe(&second, on_callback, &g_cb), SUCCESS); /* free again */
    assert_int_equal(cuptiUnsubscribe(second), SUCCESS);
}

static void test_enable_callback_selects_one_cbid(void **state)
{
    static const int none[] = {0};
    void *sub = NULL;
    (void)state;
    tt_start("", none);
    memset(&g_cb, 0, sizeof g_cb);
    assert_int_equal(cuptiSubscribe(&sub, on_callback, &g_cb), SUCCESS);
    assert_int_equal(cuptiEnableCallback(1, sub, DOMAIN_RUNTIME, CBID_LAUNCH), SUCCESS);
    assert_int_equal(cuptiEnableCallback(1, sub, DOMAIN_RUNTIME, 100000), ERROR_INVALID_PARAMETER);
    assert_int_equal(devemu_run(), 0);
    assert_int_equal(g_cb.enter, 17);
    assert_int_equal(g_cb.exit, 17);
    assert_int_equal(cuptiUnsubscribe(sub), SUCCESS);
}

/* callbacks_fired is counted per thread and summed when read: every thread's callbacks,
 * those of threads that have exited and of threads that took over their records, counted
 * once; a reset starts again from 0. */
#define FIRED_THREADS 8
#define FIRED_CALLS 500

static void on_callback_count_only(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
    (void)userdata, (void)domain, (void)cbid, (void)cbdata;
}

static void *fired_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < FIRED_CALLS; i++)
        devemu_call(WL_CALL_GET_DEVICE);
    return NULL;
}

static void run_fired_threads(void)
{
    pthread_t threads[FIRED_THREADS];
    for (int t = 0; t < FIRED_THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, fired_thread, NULL), 0);
    for (int t = 0; t < FIRED_THREADS; t++)
        pthread_join(threads[t], NULL);
}

static void test_callbacks_fired_sums_every_thread_once(void **state)
{
    static const int none[] = {0};
    void *sub = NULL;
    devemu_stats stats;
    (void)state;
    tt_start("", none);
    devemu_get_stats(&stats);
    assert_int_equal(stats.callbacks_fired, 0);
    assert_int_equal(cuptiSubscribe(&sub, on_callback_count_only, NULL), SUCCESS);
    assert_int_equal(cuptiEnableDomain(1, sub, DOMAIN_RUNTIME), SUCCESS);
    run_fired_threads(); /* every thread has exited when read */
    devemu_get_stats(&stats);
    assert_int_equal(stats.callbacks_fired, 2 * FIRED_THREADS * FIRED_CALLS);
    assert_int_equal(stats.runtime_calls, FIRED_THREADS * FIRED_CALLS);
    run_fired_threads(); /* new threads, counting in the records the first ones left */
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    devemu_get_stats(&stats);
    assert_int_equal(stats.callbacks_fired, 2 * (2 * FIRED_THREADS * FIRED_CALLS + 1));
    assert_int_equal(cuptiEnableDomain(0, sub, DOMAIN_RUNTIME), SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0); /* no callback: not counted */
    devemu_get_stats(&stats);
    assert_int_equal(stats.callbacks_fired, 2 * (2 * FIRED_THREADS * FIRED_CALLS + 1));
    assert_int_equal(cuptiUnsubscribe(sub), SUCCESS);
    devemu_reset();
    devemu_get_stats(&stats);
    assert_int_equal(stats.callbacks_fired, 0);
    assert_int_equal(cuptiSubscribe(&sub, on_callback_count_only, NULL), SUCCESS);
    assert_int_equal(cuptiEnableDomain(1, sub, DOMAIN_RUNTIME), SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    devemu_get_stats(&stats);
    assert_int_equal(stats.callbacks_fired, 2);
    assert_int_equal(cuptiUnsubscribe(sub), SUCCESS);
}

/* ---- the buffer protocol ---- */

static void test_flush_delivers_on_the_flushing_thread_and_allows_reentry(void **state)
{
    (void)state;
    tt_start("", tt_parity_kinds);
    tt.reenter_from_completion = 1;
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    assert_int_equal(tt.buffers, 0); /* not full: kept until flushed */
    tt_flush();
    assert_int_equal(tt.buffers, 1);
    assert_true(pthread_equal(tt.last_completion_thread, pthread_self()));
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 1);
}

static void test_full_buffers_come_back_without_a_flush(void **state)
{
    (void)state;
    tt_start("", tt_parity_kinds);
    tt.buffer_bytes = 400; /* 10 API records */
    for (int i = 0; i < 25; i++)
        assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    assert_int_equal(tt.buffers, 2);
    tt_flush();
    assert_int_equal(tt.buffers, 3);
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 25);
}

static void test_get_next_record_edges(void **state)
{
    _Alignas(8) uint8_t buf[128] = {0};
    void *record = NULL;
    uint32_t kind = KIND_RUNTIME;
    (void)state;
    assert_int_equal(cuptiActivityGetNextRecord(NULL, 10, &record), ERROR_INVALID_PARAMETER);
    assert_int_equal(cuptiActivityGetNextRecord(buf, 0, &record), ERROR_MAX_LIMIT_REACHED);
    memcpy(buf, &kind, 4);
    assert_int_equal(cuptiActivityGetNextRecord(buf, 39, &record), ERROR_INVALID_KIND); /* truncated */
    assert_int_equal(cuptiActivityGetNextRecord(buf, 40, &record), SUCCESS);
    assert_ptr_equal(record, buf);
    assert_int_equal(cuptiActivityGetNextRecord(buf, 40, &record), ERROR_MAX_LIMIT_REACHED);
    record = buf + 100;
    assert_int_equal(cuptiActivityGetNextRecord(buf, 40, &record), ERROR_INVALID_PARAMETER);
    kind = 777;
    memcpy(buf, &kind, 4);
    record = NULL;
    assert_int_equal(cuptiActivityGetNextRecord(buf, 64, &record), ERROR_INVALID_KIND);
}

static void test_buffers_refused_by_the_tracer_are_counted_as_dropped(void **state)
{
    size_t dropped = 0;
    devemu_stats stats;
    (void)state;
    tt_start("", tt_parity_kinds);
    tt.refuse_next = 3;
    for (int i = 0; i < 10; i++)
        assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 7);
    assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), SUCCESS);
    assert_int_equal(dropped, 3);
    assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), SUCCESS);
    assert_int_equal(dropped, 0); /* reading resets the count, as CUPTI does */
    devemu_get_stats(&stats);
    assert_int_equal(stats.buffers_refused, 3);
    assert_int_equal(stats.dropped_records, 3);
}

/* ---- external correlation ---- */

static void test_external_correlation_stack(void **state)
{
    uint64_t id = 0;
    (void)state;
    tt_start("", tt_parity_kinds);
    assert_int_equal(cuptiActivityPopExternalCorrelationId(CUSTOM0, &id), ERROR_QUEUE_EMPTY);
    assert_int_equal(cuptiActivityPushExternalCorrelationId(0, 1), ERROR_INVALID_PARAMETER);
    assert_int_equal(cuptiActivityPushExternalCorrelationId(CUSTOM0, 0), SUCCESS); /* 0 is a valid id */
    assert_int_equal(cuptiActivityPushExternalCorrelationId(CUSTOM0, 42), SUCCESS);
    assert_int_equal(cuptiActivityPushExternalCorrelationId(CUSTOM1, 7), SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_MALLOC), 0);
    assert_int_equal(cuptiActivityPopExternalCorrelationId(CUSTOM0, &id), SUCCESS);
    assert_int_equal(id, 42);
    assert_int_equal(devemu_call(WL_CALL_FREE), 0);
    assert_int_equal(cuptiActivityPopExternalCorrelationId(CUSTOM0, &id), SUCCESS);
    assert_int_equal(id, 0);
    assert_int_equal(cuptiActivityPopExternalCorrelationId(CUSTOM1, NULL), SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    tt_flush();
    /* malloc: CUSTOM0 42 and CUSTOM1 7, both before its API record; free: CUSTOM0 0 and CUSTOM1 7 */
    assert_int_equal(tt.n, 4 + 3);
    assert_int_equal(tt.recs[0].kind, KIND_EXTERNAL_CORRELATION);
    assert_int_equal(tt.recs[0].external_id, 42);
    assert_int_equal(tt.recs[1].external_kind, CUSTOM1);
    assert_int_equal(tt.recs[2].kind, KIND_RUNTIME);
    assert_int_equal(tt.recs[2].correlation, tt.recs[0].correlation);
    assert_int_equal(tt.recs[3].external_id, 0);
    assert_int_equal(tt.recs[6].kind, KIND_RUNTIME); /* nothing pushed: no link */
}

/* ---- device queries ---- */

static void test_device_attributes_come_from_the_device_statement(void **state)
{
    int v = 0, count = 0;
    (void)state;
    assert_int_equal(cudaDeviceGetAttribute(&v, 16, 0), 0);
    assert_int_equal(v, 104);
    assert_int_equal(cudaDeviceGetAttribute(&v, 10, 0), 0);
    assert_int_equal(v, 64);
    assert_int_equal(cudaDeviceGetAttribute(&v, 39, 0), 0);
    assert_int_equal(v, 2048);
    assert_int_equal(cudaDeviceGetAttribute(&v, 106, 0), 0);
    assert_int_equal(v, 32);
    assert_int_equal(cudaDeviceGetAttribute(&v, 82, 0), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(cudaDeviceGetAttribute(&v, 81, 0), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(cudaDeviceGetAttribute(&v, 1, 0), 0);
    assert_int_equal(v, 1024);
    assert_int_equal(cudaDeviceGetAttribute(&v, 75, 0), 0);
    assert_int_equal(v, 8);
    assert_int_equal(cudaDeviceGetAttribute(&v, 9999, 0), 1); /* cudaErrorInvalidValue */
    assert_int_equal(cudaDeviceGetAttribute(&v, 16, 3), 101); /* cudaErrorInvalidDevice */
    assert_int_equal(cudaGetDeviceCount(&count), 0);
    assert_int_equal(count, 1);
}

/* ---- faults ---- */

static void test_fault_drop_removes_device_records_and_reports_them(void **state)
{
    size_t dropped = 0;
    (void)state;
    tt_start("drop=3", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL) + tt_count_kind(KIND_MEMCPY) + tt_count_kind(KIND_MEMSET),
                     19 - 3);
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 187);
    assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), SUCCESS);
    assert_int_equal(dropped, 3);
}

static void test_fault_zero_time_adds_records_beside_the_real_ones(void **state)
{
    (void)state;
    tt_start("zero-time=5", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt_count_zero_time_kernels(), 5);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL) - 5, 17);
}

static void test_fault_zero_time_beyond_the_kernels_comes_at_flush(void **state)
{
    devemu_stats stats;
    (void)state;
    tt_start("zero-time=20", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt_count_zero_time_kernels(), 20);
    devemu_get_stats(&stats);
    assert_int_equal(stats.injected_zero_time, 20);
    assert_int_equal(stats.kernel_records, 17);
}

static void test_fault_malformed_records_are_skipped_by_size(void **state)
{
    (void)state;
    tt_start("malformed=4", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_BOGUS), 4);
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 187);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), 17);
    assert_int_equal(tt.recs[0].kind == KIND_BOGUS, 0); /* between valid records, not first */
}

static void test_fault_refuse_buffer_drops_and_counts(void **state)
{
    size_t dropped = 0;
    devemu_stats stats;
    (void)state;
    tt_start("refuse-buffer=2", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), SUCCESS);
    assert_int_equal(dropped, 2);
    devemu_get_stats(&stats);
    assert_int_equal(stats.buffers_refused, 2);
    assert_int_equal(tt.n + 2, stats.api_records + stats.kernel_records + stats.memcpy_records + stats.memset_records +
                                   stats.external_correlation_records);
}

static void test_fault_subscribe_fail(void **state)
{
    static const int none[] = {0};
    void *sub = NULL;
    (void)state;
    tt_start("subscribe-fail", none);
    assert_int_equal(cuptiSubscribe(&sub, on_callback, &g_cb), ERROR_MULTIPLE_SUBSCRIBERS);
}

static void test_fault_small_buffer_forces_many_buffers(void **state)
{
    (void)state;
    tt_start("small-buffer", tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
    assert_true(tt.buffers > 10);
    assert_true(tt.max_valid_seen <= 1024);
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 187);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), 17);
}

static void test_fault_clock_epoch_and_rate(void **state)
{
    const uint64_t epoch = 1000000000000000000ull;
    uint64_t ts = 0;
    (void)state;
    tt_start("clock-epoch=1000000000000000000,clock-rate=2", tt_parity_kinds);
    uint64_t before = tt_realtime_ns();
    assert_int_equal(cuptiGetTimestamp(&ts), SUCCESS);
    uint64_t after = tt_realtime_ns();
    assert_true(ts >= (before - epoch) * 2 && ts <= (after - epoch) * 2);
    assert_int_equal(devemu_launch("_Z6kernelv", 1, 1, 5000, 3), 0);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), 1);
    const tt_rec *k = &tt.recs[0];
    while (k->kind != KIND_CONCURRENT_KERNEL)
        k++;
    assert_int_equal(k->end - k->start, 10000); /* 5000 ns at rate 2 */
    tt_start("clock-epoch=load", tt_parity_kinds);
    assert_int_equal(cuptiGetTimestamp(&ts), SUCCESS);
    assert_true(ts < 3600ull * 1000000000ull); /* a counter that starts at load */
}

static void test_bad_fault_specs_are_rejected_with_a_message(void **state)
{
    char err[512];
    (void)state;
    assert_int_equal(devemu_set_faults("zero-time=1,bogus", err, sizeof err), -1);
    assert_true(strncmp(err, "devemu: unknown fault 'bogus' in DEVEMU_FAULTS (known: ", 55) == 0);
    assert_int_equal(devemu_set_faults("stale-iterator", err, sizeof err), -1);
    assert_string_equal(err, "devemu: fault 'stale-iterator' is not emulated by the cupti emulator");
    assert_int_equal(devemu_set_faults("drop=x", err, sizeof err), -1);
    assert_string_equal(err, "devemu: bad value 'x' for fault 'drop'");
    assert_int_equal(devemu_set_faults("clock-rate=0", err, sizeof err), -1);
    assert_string_equal(err, "devemu: bad value '0' for fault 'clock-rate'");
    assert_int_equal(devemu_set_faults("small-buffer=100", err, sizeof err), -1);
    assert_int_equal(devemu_set_faults("subscribe-fail=1", err, sizeof err), -1);
    assert_string_equal(err, "devemu: fault 'subscribe-fail' takes no value");
    assert_int_equal(devemu_set_faults("drop=1,,drop=2", err, sizeof err), -1);
    assert_int_equal(devemu_set_faults("", err, sizeof err), 0);
}

/* ---- many threads ---- */

#define STRESS_THREADS 16
#define STRESS_CALLS 10000
#define STRESS_ID(thread, i) ((uint64_t)(thread)*1000000u + (uint64_t)(i))

static uint32_t g_stress_tids[STRESS_THREADS];

static void *stress_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    g_stress_tids[t] = (uint32_t)syscall(SYS_gettid);
    for (int i = 0; i < STRESS_CALLS; i++) {
        if (i % 4 == 0) {
            devemu_op_push("stress", STRESS_ID(t, i));
            devemu_launch("_Z6stressv", 1, 32, 10, (uint32_t)t);
            devemu_op_pop();
        } else {
            devemu_call(WL_CALL_GET_DEVICE);
        }
    }
    return NULL;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void test_sixteen_threads_lose_nothing(void **state)
{
    pthread_t threads[STRESS_THREADS];
    size_t dropped = 1;
    (void)state;
    tt_start("", tt_parity_kinds);
    for (int t = 0; t < STRESS_THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, stress_thread, (void *)(intptr_t)t), 0);
    for (int t = 0; t < STRESS_THREADS; t++)
        pthread_join(threads[t], NULL);
    tt_flush();
    assert_int_equal(tt_count_kind(KIND_RUNTIME), STRESS_THREADS * STRESS_CALLS);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), STRESS_THREADS * STRESS_CALLS / 4);
    assert_int_equal(tt_count_kind(KIND_EXTERNAL_CORRELATION), STRESS_THREADS * STRESS_CALLS / 4);
    assert_int_equal(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), SUCCESS);
    assert_int_equal(dropped, 0);
    /* correlation ids are unique */
    uint32_t *ids = malloc(sizeof *ids * STRESS_THREADS * STRESS_CALLS), n = 0;
    for (size_t i = 0; i < tt.n; i++) {
        if (tt.recs[i].kind == KIND_RUNTIME)
            ids[n++] = tt.recs[i].correlation;
    }
    qsort(ids, n, sizeof *ids, compare_u32);
    for (uint32_t i = 1; i < n; i++)
        assert_true(ids[i] != ids[i - 1]);
    free(ids);
    /* each external id links to a launch made by the thread that pushed it */
    uint32_t max_id = 0;
    for (size_t i = 0; i < tt.n; i++)
        max_id = tt.recs[i].correlation > max_id ? tt.recs[i].correlation : max_id;
    size_t *call_at = calloc((size_t)max_id + 1, sizeof *call_at);
    for (size_t i = 0; i < tt.n; i++) {
        if (tt.recs[i].kind == KIND_RUNTIME)
            call_at[tt.recs[i].correlation] = i + 1;
    }
    size_t linked = 0;
    for (size_t i = 0; i < tt.n; i++) {
        const tt_rec *ext = &tt.recs[i];
        if (ext->kind != KIND_EXTERNAL_CORRELATION)
            continue;
        assert_true(call_at[ext->correlation] != 0);
        const tt_rec *call = &tt.recs[call_at[ext->correlation] - 1];
        uint64_t t = ext->external_id / 1000000u;
        assert_true(t < STRESS_THREADS);
        assert_int_equal(call->thread, g_stress_tids[t]);
        assert_int_equal(call->cbid, CBID_LAUNCH);
        linked++;
    }
    free(call_at);
    assert_int_equal(linked, STRESS_THREADS * STRESS_CALLS / 4);
}

/* ---- the missing-symbol variants ---- */

static void test_variant_libraries_lack_one_symbol(void **state)
{
    (void)state;
    assert_false(tt_has_symbol(DEVEMU_CUPTI_NOFLUSH_LIB, "cuptiActivityFlushAll"));
    assert_true(tt_has_symbol(DEVEMU_CUPTI_NOFLUSH_LIB, "cuptiActivityPushExternalCorrelationId"));
    assert_true(tt_has_symbol(DEVEMU_CUPTI_NOFLUSH_LIB, "cuptiActivityGetNextRecord"));
    assert_false(tt_has_symbol(DEVEMU_CUPTI_NOPUSH_LIB, "cuptiActivityPushExternalCorrelationId"));
    assert_false(tt_has_symbol(DEVEMU_CUPTI_NOPUSH_LIB, "cuptiActivityPopExternalCorrelationId"));
    assert_true(tt_has_symbol(DEVEMU_CUPTI_NOPUSH_LIB, "cuptiActivityFlushAll"));
}

int main(int argc, char **argv)
{
    char err[512];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_result_strings),
        cmocka_unit_test(test_parity_counts_and_pairs),
        cmocka_unit_test(test_parity_device_time_per_op_matches_the_file),
        cmocka_unit_test(test_parity_fields_carry_the_statements),
        cmocka_unit_test(test_kernel_kind_is_used_when_concurrent_kernel_is_off),
        cmocka_unit_test(test_nothing_is_recorded_without_enabled_kinds),
        cmocka_unit_test(test_callbacks_fire_enter_and_exit_for_every_call),
        cmocka_unit_test(test_enable_callback_selects_one_cbid),
        cmocka_unit_test(test_callbacks_fired_sums_every_thread_once),
        cmocka_unit_test(test_flush_delivers_on_the_flushing_thread_and_allows_reentry),
        cmocka_unit_test(test_full_buffers_come_back_without_a_flush),
        cmocka_unit_test(test_get_next_record_edges),
        cmocka_unit_test(test_buffers_refused_by_the_tracer_are_counted_as_dropped),
        cmocka_unit_test(test_external_correlation_stack),
        cmocka_unit_test(test_device_attributes_come_from_the_device_statement),
        cmocka_unit_test(test_fault_drop_removes_device_records_and_reports_them),
        cmocka_unit_test(test_fault_zero_time_adds_records_beside_the_real_ones),
        cmocka_unit_test(test_fault_zero_time_beyond_the_kernels_comes_at_flush),
        cmocka_unit_test(test_fault_malformed_records_are_skipped_by_size),
        cmocka_unit_test(test_fault_refuse_buffer_drops_and_counts),
        cmocka_unit_test(test_fault_subscribe_fail),
        cmocka_unit_test(test_fault_small_buffer_forces_many_buffers),
        cmocka_unit_test(test_fault_clock_epoch_and_rate),
        cmocka_unit_test(test_bad_fault_specs_are_rejected_with_a_message),
        cmocka_unit_test(test_sixteen_threads_lose_nothing),
        cmocka_unit_test(test_variant_libraries_lack_one_symbol),
    };
    if (argc != 2) {
        fprintf(stderr, "usage: test_emu_cupti PATH/TO/parity.wl\n");
        return 2;
    }
    g_parity_path = argv[1];
    tt_bind(&(tt_vendor_api){cuptiGetTimestamp, cuptiActivityRegisterCallbacks, cuptiActivityEnable,
                             cuptiActivityFlushAll, cuptiActivityGetNextRecord, cuptiActivityGetNumDroppedRecords});
    if (devemu_load_workload(g_parity_path, err, sizeof err) < 0 ||
        wl_parse_file(g_parity_path, &g_parity, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    devemu_reset();
    wl_free(&g_parity);
    free(tt.recs);
    return failed;
}
