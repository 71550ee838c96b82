/* test_emu_mcpti.c: the MCPTI (MetaX MACA 3.8.0) emulator's specification, seen from a tracer.
 *
 * Links libmcpti-emu.so and uses the minimal tracer of test_tracer.c through the mcpti*
 * spelling. Checks MetaX's own callback ids and record sizes, both symbol spellings,
 * mcptiActivityGetApiName (and its abort inside the completion callback), the MACA 3.8
 * quirks as faults, and the symbol sets of the variant libraries.
 * Usage: test_emu_mcpti PATH/TO/parity.wl */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "devemu.h"
#include "emu_cupti_shape.h"
#include "test_tracer.h"
#include "wl.h"

EMU_CUPTI_SHAPE_DECLARE(mcpti)
EMU_CUPTI_SHAPE_DECLARE(cupti)
emu_result mcptiActivityGetApiName(int kind, uint32_t cbid, const char **name);
int wcudaDeviceGetAttribute(int *value, int attr, int device);
int wcudaGetDeviceCount(int *count);

/* MetaX callback ids (vendor-abi.md), written out here, not taken from the table. */
enum {
    MC_LAUNCH = 56,
    MC_MEMCPY = 118,
    MC_MEMSET = 147,
    MC_GET_DEVICE = 19,
    MC_MALLOC = 107,
    MC_FREE = 108,
    MC_EVENT_RECORD = 74,
    MC_STREAM_SYNC = 46,
    MC_DEVICE_SYNC = 18,
    MC_GET_DEVICE_COUNT = 20,
    MC_GET_DEVICE_PROPERTIES = 22,
    MC_SET_DEVICE = 23
};

static const char *g_parity_path;

static void run_parity(const char *faults)
{
    tt_start(faults, tt_parity_kinds);
    assert_int_equal(devemu_run(), 0);
    tt_flush();
}

static void test_version_and_result_strings(void **state)
{
    uint32_t version = 0;
    const char *text = NULL;
    (void)state;
    assert_int_equal(mcptiGetVersion(&version), SUCCESS);
    assert_int_equal(version, 18);
    assert_int_equal(cuptiGetVersion(&version), SUCCESS); /* the alias spelling */
    assert_int_equal(version, 18);
    assert_int_equal(mcptiGetResultString(ERROR_MAX_LIMIT_REACHED, &text), SUCCESS);
    assert_string_equal(text, "MCPTI_ERROR_MAX_LIMIT_REACHED");
    assert_string_equal(devemu_vendor(), "mcpti");
}

static void test_parity_counts_with_metax_callback_ids(void **state)
{
    static const uint32_t metax_cbids[] = {MC_LAUNCH,
                                           MC_MEMCPY,
                                           MC_MEMSET,
                                           MC_GET_DEVICE,
                                           MC_MALLOC,
                                           MC_FREE,
                                           MC_EVENT_RECORD,
                                           MC_STREAM_SYNC,
                                           MC_DEVICE_SYNC,
                                           MC_GET_DEVICE_COUNT,
                                           MC_GET_DEVICE_PROPERTIES,
                                           MC_SET_DEVICE};
    (void)state;
    run_parity("");
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 187);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), 17);
    assert_int_equal(tt_count_kind(KIND_MEMCPY), 1);
    assert_int_equal(tt_count_kind(KIND_MEMSET), 1);
    for (size_t i = 0; i < tt.n; i++) {
        const tt_rec *r = &tt.recs[i];
        if (r->kind == KIND_RUNTIME) {
            int known = 0;
            for (size_t k = 0; k < sizeof metax_cbids / sizeof metax_cbids[0]; k++)
                known |= r->cbid == metax_cbids[k];
            assert_true(known);
        }
        if (tt_is_device_kind(r->kind)) {
            const tt_rec *call = tt_find(KIND_RUNTIME, r->correlation);
            assert_non_null(call);
            assert_int_equal(call->cbid, r->kind == KIND_MEMCPY   ? MC_MEMCPY
                                         : r->kind == KIND_MEMSET ? MC_MEMSET
                                                                  : MC_LAUNCH);
        }
    }
}

static void test_records_have_the_metax_sizes(void **state)
{
    size_t seen[64] = {0};
    (void)state;
    run_parity("");
    for (size_t i = 0; i < tt.n; i++) {
        const tt_rec *r = &tt.recs[i];
        if (r->stride == 0)
            continue;
        size_t want = r->kind == KIND_CONCURRENT_KERNEL                  ? 200
                      : r->kind == KIND_MEMCPY || r->kind == KIND_MEMSET ? 88
                      : r->kind == KIND_RUNTIME                          ? 40
                                                                         : 24;
        assert_int_equal(r->stride, want);
        seen[r->kind]++;
    }
    assert_true(seen[KIND_CONCURRENT_KERNEL] && seen[KIND_MEMCPY] && seen[KIND_MEMSET] && seen[KIND_RUNTIME] &&
                seen[KIND_EXTERNAL_CORRELATION]);
}

static void test_both_spellings_drive_one_state(void **state)
{
    uint64_t id = 0;
    (void)state;
    tt_start("", tt_parity_kinds); /* registered through mcpti* */
    assert_int_equal(cuptiActivityPushExternalCorrelationId(CUSTOM0, 5), SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_MALLOC), 0);
    assert_int_equal(mcptiActivityPopExternalCorrelationId(CUSTOM0, &id), SUCCESS);
    assert_int_equal(id, 5);
    assert_int_equal(cuptiActivityFlushAll(0), SUCCESS);
    assert_int_equal(tt.n, 2);
    assert_int_equal(tt.recs[0].external_id, 5);
    assert_int_equal(tt.recs[1].cbid, MC_MALLOC);
}

static void test_get_api_name_gives_metax_names(void **state)
{
    const char *name = NULL;
    (void)state;
    assert_int_equal(mcptiActivityGetApiName(KIND_RUNTIME, MC_LAUNCH, &name), SUCCESS);
    assert_string_equal(name, "mcLaunchKernel");
    assert_int_equal(mcptiActivityGetApiName(KIND_RUNTIME, MC_MEMCPY, &name), SUCCESS);
    assert_string_equal(name, "mcMemcpy");
    assert_int_equal(mcptiActivityGetApiName(KIND_RUNTIME, MC_DEVICE_SYNC, &name), SUCCESS);
    assert_string_equal(name, "mcDeviceSynchronize");
    assert_int_equal(mcptiActivityGetApiName(KIND_RUNTIME, 9999, &name), ERROR_INVALID_PARAMETER);
    assert_int_equal(mcptiActivityGetApiName(KIND_CONCURRENT_KERNEL, MC_LAUNCH, &name), ERROR_INVALID_PARAMETER);
}

static void resolve_name_inside_completion(uint8_t *buffer, size_t valid)
{
    const char *name;
    (void)buffer, (void)valid;
    mcptiActivityGetApiName(KIND_RUNTIME, MC_LAUNCH, &name);
}

static void test_get_api_name_inside_completion_aborts_with_a_message(void **state)
{
    int fds[2], status = 0;
    char out[512] = "";
    (void)state;
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(fds[1], STDERR_FILENO);
        tt_start("", tt_parity_kinds);
        tt.completion_hook = resolve_name_inside_completion;
        devemu_call(WL_CALL_GET_DEVICE);
        mcptiActivityFlushAll(0);
        _exit(0); /* reached only if the emulator did not abort */
    }
    close(fds[1]);
    ssize_t got = read(fds[0], out, sizeof out - 1);
    out[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    waitpid(child, &status, 0);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_non_null(strstr(out, "devemu: mcptiActivityGetApiName called inside the buffer-completed callback: "
                                "the real MACA 3.8.0 library deadlocks here"));
}

static void test_stale_iterator_repeats_the_external_correlation_record(void **state)
{
    (void)state;
    tt_start("stale-iterator", tt_parity_kinds);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0); /* before any op: no ext-corr record */
    assert_int_equal(mcptiActivityPushExternalCorrelationId(CUSTOM0, 9), SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_MALLOC), 0);
    assert_int_equal(devemu_call(WL_CALL_FREE), 0);
    assert_int_equal(mcptiActivityPopExternalCorrelationId(CUSTOM0, NULL), SUCCESS);
    tt_flush();
    /* GetNextRecord gave: API, ext-corr, then the ext-corr again: iteration stops there */
    assert_int_equal(tt.stale_pointers, 1);
    assert_int_equal(tt.n, 2);
    assert_int_equal(tt.recs[1].kind, KIND_EXTERNAL_CORRELATION);
}

static void test_malformed_records_are_kernels_that_fail_validation(void **state)
{
    devemu_stats stats;
    size_t bad = 0;
    (void)state;
    run_parity("malformed=5");
    for (size_t i = 0; i < tt.n; i++)
        bad += tt.recs[i].kind == KIND_CONCURRENT_KERNEL && (tt.recs[i].grid_x == 0 || tt.recs[i].correlation == 0);
    assert_int_equal(bad, 5);
    assert_int_equal(tt_count_kind(KIND_CONCURRENT_KERNEL), 17 + 5);
    assert_int_equal(tt_count_kind(KIND_RUNTIME), 187);
    devemu_get_stats(&stats);
    assert_int_equal(stats.injected_malformed, 5);
}

static void test_maca_3_8_preset_turns_on_every_quirk(void **state)
{
    devemu_stats stats;
    uint64_t ts = 0;
    (void)state;
    run_parity("maca-3.8");
    devemu_get_stats(&stats);
    assert_int_equal(stats.injected_zero_time, 3);
    assert_int_equal(stats.injected_malformed, 4);
    assert_int_equal(stats.kernel_records, 17);
    assert_int_equal(stats.api_records, 187);
    assert_true(tt.stale_pointers > 0);
    assert_int_equal(mcptiGetTimestamp(&ts), SUCCESS);
    assert_true(ts < 3600ull * 1000000000ull); /* a device counter started at load */
}

static void test_preset_and_vendor_faults_parse(void **state)
{
    char err[256];
    (void)state;
    assert_int_equal(devemu_set_faults("maca-3.8,drop=1", err, sizeof err), 0);
    assert_int_equal(devemu_set_faults("maca-3.8=1", err, sizeof err), -1);
    assert_string_equal(err, "devemu: fault 'maca-3.8' takes no value");
    assert_int_equal(devemu_set_faults("", err, sizeof err), 0);
}

static void test_wcuda_device_queries(void **state)
{
    int v = 0, count = 0;
    (void)state;
    assert_int_equal(wcudaDeviceGetAttribute(&v, 16, 0), 0);
    assert_int_equal(v, 104);
    assert_int_equal(wcudaDeviceGetAttribute(&v, 10, 0), 0);
    assert_int_equal(v, 64);
    assert_int_equal(wcudaGetDeviceCount(&count), 0);
    assert_int_equal(count, 1);
}

static struct {
    int launches_named;
} g_cb;

static void on_callback(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
    const char *function_name;
    (void)userdata, (void)domain;
    memcpy(&function_name, (const uint8_t *)cbdata + 8, sizeof function_name);
    if (cbid == MC_LAUNCH && tt_u32_at(cbdata, 0) == 0)
        g_cb.launches_named += strcmp(function_name, "mcLaunchKernel") == 0;
}

static void test_callbacks_carry_metax_ids_and_names(void **state)
{
    static const int none[] = {0};
    void *sub = NULL, *second = NULL;
    (void)state;
    tt_start("", none);
    g_cb.launches_named = 0;
    assert_int_equal(mcptiSubscribe(&sub, on_callback, NULL), SUCCESS);
    assert_int_equal(cuptiSubscribe(&second, on_callback, NULL), ERROR_MULTIPLE_SUBSCRIBERS);
    assert_int_equal(mcptiEnableDomain(1, sub, DOMAIN_RUNTIME), SUCCESS);
    assert_int_equal(devemu_run(), 0);
    assert_int_equal(g_cb.launches_named, 17);
    assert_int_equal(mcptiUnsubscribe(sub), SUCCESS);
}

static void test_variant_libraries_lack_one_spelling(void **state)
{
    (void)state;
    assert_true(tt_has_symbol(DEVEMU_MCPTI_ONLY_CUPTI_LIB, "cuptiActivityEnable"));
    assert_false(tt_has_symbol(DEVEMU_MCPTI_ONLY_CUPTI_LIB, "mcptiActivityEnable"));
    assert_false(tt_has_symbol(DEVEMU_MCPTI_ONLY_CUPTI_LIB, "mcptiActivityGetApiName"));
    assert_true(tt_has_symbol(DEVEMU_MCPTI_ONLY_MCPTI_LIB, "mcptiActivityEnable"));
    assert_true(tt_has_symbol(DEVEMU_MCPTI_ONLY_MCPTI_LIB, "mcptiActivityGetApiName"));
    assert_false(tt_has_symbol(DEVEMU_MCPTI_ONLY_MCPTI_LIB, "cuptiActivityEnable"));
    assert_false(tt_has_symbol(DEVEMU_MCPTI_ONLY_MCPTI_LIB, "cuptiGetTimestamp"));
}

int main(int argc, char **argv)
{
    char err[512];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_result_strings),
        cmocka_unit_test(test_parity_counts_with_metax_callback_ids),
        cmocka_unit_test(test_records_have_the_metax_sizes),
        cmocka_unit_test(test_both_spellings_drive_one_state),
        cmocka_unit_test(test_get_api_name_gives_metax_names),
        cmocka_unit_test(test_get_api_name_inside_completion_aborts_with_a_message),
        cmocka_unit_test(test_stale_iterator_repeats_the_external_correlation_record),
        cmocka_unit_test(test_malformed_records_are_kernels_that_fail_validation),
        cmocka_unit_test(test_maca_3_8_preset_turns_on_every_quirk),
        cmocka_unit_test(test_preset_and_vendor_faults_parse),
        cmocka_unit_test(test_wcuda_device_queries),
        cmocka_unit_test(test_callbacks_carry_metax_ids_and_names),
        cmocka_unit_test(test_variant_libraries_lack_one_spelling),
    };
    if (argc != 2) {
        fprintf(stderr, "usage: test_emu_mcpti PATH/TO/parity.wl\n");
        return 2;
    }
    g_parity_path = argv[1];
    tt_bind(&(tt_vendor_api){mcptiGetTimestamp, mcptiActivityRegisterCallbacks, mcptiActivityEnable,
                             mcptiActivityFlushAll, mcptiActivityGetNextRecord, mcptiActivityGetNumDroppedRecords});
    if (devemu_load_workload(g_parity_path, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    devemu_reset();
    free(tt.recs);
    return failed;
}
