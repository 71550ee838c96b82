/* roctracer_test_emu.c: the ROCtracer emulator's specification, seen from a tracer.
 *
 * Links libroctracer-emu.so and plays a minimal ROCtracer client: opens a pool whose
 * completion callback copies every record (and the kernel name it points to, which dies
 * with the delivery), enables HIP_OPS / HIP_API activity and the HIP_API callback, runs
 * the parity workload or single calls through devemu_*, flushes, and reads the records
 * at the activity_record_t offsets of vendor-abi.md written out here (domain @0, kind @4,
 * op @8, correlation @16, begin @24, end @32, device @40, queue @48, bytes/name @56).
 * Usage: roctracer_test_emu PATH/TO/parity.wl ($DEVEMU_HIP_LAUNCH_ARGS as for the library) */
#include <dlfcn.h>
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
#include "roctracer_emu.h"
#include "wl.h"

enum { CID_GET_DEVICE = 901, CID_LAUNCH = 943, CID_MEMCPY = 949, CID_MEMSET = 955 };

static const char *g_parity_path;
static wl_workload g_parity;

/* ---- the client: records and callbacks, copied as they come ---- */

typedef struct rec {
    uint32_t domain, kind, op;
    uint64_t correlation, begin, end;
    int32_t device;
    uint32_t thread_id;
    uint64_t queue, payload, at40;
    char name[256]; /* the kernel name, copied during the callback */
} rec;

typedef struct call {
    uint32_t cid, phase;
    uint64_t correlation;
    uint8_t args[EMU_ROC_ARGS_SIZE];
    uint64_t *phase_data;
} call;

static struct {
    pthread_mutex_t lock;
    rec *recs;
    size_t n, cap;
    size_t deliveries, ragged, bad_args; /* counted, not asserted: callbacks run on other threads */
    pid_t delivery_tid;
    call *calls;
    size_t ncalls, calls_cap;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *g_pool;

static uint32_t at32(const char *p, size_t off)
{
    uint32_t v;
    memcpy(&v, p + off, 4);
    return v;
}

static uint64_t at64(const char *p, size_t off)
{
    uint64_t v;
    memcpy(&v, p + off, 8);
    return v;
}

static void on_buffer(const char *begin, const char *end, void *arg)
{
    pthread_mutex_lock(&C.lock);
    if (arg != &C)
        C.bad_args++;
    C.deliveries++;
    C.delivery_tid = (pid_t)syscall(SYS_gettid);
    if ((size_t)(end - begin) % EMU_ROC_RECORD_SIZE)
        C.ragged++;
    for (const char *p = begin; p + EMU_ROC_RECORD_SIZE <= end; p += EMU_ROC_RECORD_SIZE) {
        if (C.n == C.cap) {
            C.cap = C.cap ? C.cap * 2 : 256;
            C.recs = realloc(C.recs, C.cap * sizeof *C.recs);
            if (!C.recs)
                abort();
        }
        rec *r = &C.recs[C.n++];
        memset(r, 0, sizeof *r);
        r->domain = at32(p, 0);
        r->kind = at32(p, 4);
        r->op = at32(p, 8);
        r->correlation = at64(p, 16);
        r->begin = at64(p, 24);
        r->end = at64(p, 32);
        r->device = (int32_t)at32(p, 40);
        r->thread_id = at32(p, 44);
        r->at40 = at64(p, 40);
        r->queue = at64(p, 48);
        r->payload = at64(p, 56);
        if (r->domain == EMU_ROC_DOMAIN_HIP_OPS && r->op == EMU_ROC_OP_DISPATCH && r->payload) {
            const char *name;
            memcpy(&name, p + 56, sizeof name);
            snprintf(r->name, sizeof r->name, "%s", name);
        }
    }
    pthread_mutex_unlock(&C.lock);
}

static void on_api(uint32_t domain, uint32_t cid, const void *data, void *arg)
{
    pthread_mutex_lock(&C.lock);
    if (arg != &C || domain != EMU_ROC_DOMAIN_HIP_API)
        C.bad_args++;
    if (C.ncalls == C.calls_cap) {
        C.calls_cap = C.calls_cap ? C.calls_cap * 2 : 256;
        C.calls = realloc(C.calls, C.calls_cap * sizeof *C.calls);
        if (!C.calls)
            abort();
    }
    call *c = &C.calls[C.ncalls++];
    c->cid = cid;
    c->correlation = at64(data, 0);
    c->phase = at32(data, 8);
    memcpy(c->args, (const char *)data + EMU_ROC_ARGS_OFFSET, sizeof c->args);
    memcpy(&c->phase_data, (const char *)data + EMU_ROC_PHASE_DATA_OFFSET, sizeof c->phase_data);
    pthread_mutex_unlock(&C.lock);
}

static void client_reset(void)
{
    pthread_mutex_lock(&C.lock);
    C.n = C.ncalls = C.deliveries = C.ragged = C.bad_args = 0;
    pthread_mutex_unlock(&C.lock);
}

/* Opens the pool (buffer_size bytes) and enables the given activity domains. */
static void client_start(const char *faults, size_t buffer_size, int hip_ops, int hip_api_activity)
{
    char err[256];
    client_reset();
    assert_int_equal(devemu_set_faults(faults, err, sizeof err), 0);
    emu_roc_properties props = {0, buffer_size, NULL, NULL, on_buffer, &C};
    assert_int_equal(roctracer_open_pool_expl(&props, &g_pool), EMU_ROC_STATUS_SUCCESS);
    if (hip_ops)
        assert_int_equal(roctracer_enable_domain_activity_expl(EMU_ROC_DOMAIN_HIP_OPS, g_pool), 0);
    if (hip_api_activity)
        assert_int_equal(roctracer_enable_domain_activity_expl(EMU_ROC_DOMAIN_HIP_API, g_pool), 0);
}

static void client_stop(void)
{
    char err[256];
    assert_int_equal(roctracer_flush_activity_expl(g_pool), 0);
    assert_int_equal(roctracer_disable_domain_activity(EMU_ROC_DOMAIN_HIP_OPS), 0);
    assert_int_equal(roctracer_disable_domain_activity(EMU_ROC_DOMAIN_HIP_API), 0);
    assert_int_equal(roctracer_disable_domain_callback(EMU_ROC_DOMAIN_HIP_API), 0);
    assert_int_equal(roctracer_close_pool_expl(g_pool), 0);
    g_pool = NULL;
    assert_int_equal(C.bad_args, 0);
    assert_int_equal(devemu_set_faults("", err, sizeof err), 0);
}

static size_t count_ops(uint32_t kind)
{
    size_t n = 0;
    for (size_t i = 0; i < C.n; i++)
        if (C.recs[i].domain == EMU_ROC_DOMAIN_HIP_OPS && C.recs[i].kind == kind)
            n++;
    return n;
}

static const wl_stmt *nth_statement(int kind, size_t nth)
{
    for (size_t i = 0; i < g_parity.nstmts; i++)
        if (g_parity.stmts[i].kind == kind && nth-- == 0)
            return &g_parity.stmts[i];
    return NULL;
}

/* ---- identity and names ---- */

static void test_version_op_codes_and_strings(void **state)
{
    static const struct {
        const char *name;
        uint32_t cid;
    } calls[] = {{"hipGetDevice", 901},
                 {"hipGetDeviceCount", 907},
                 {"hipGetDeviceProperties", 913},
                 {"hipSetDevice", 919},
                 {"hipMalloc", 925},
                 {"hipFree", 931},
                 {"hipEventRecord", 937},
                 {"hipLaunchKernel", 943},
                 {"hipMemcpy", 949},
                 {"hipMemsetAsync", 955},
                 {"hipStreamSynchronize", 961},
                 {"hipDeviceSynchronize", 967}};
    (void)state;
    assert_int_equal(roctracer_version_major(), 4);
    assert_int_equal(roctracer_version_minor(), 1);
    assert_string_equal(devemu_vendor(), "roctracer");
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        uint32_t op = 0, kind = 77;
        assert_int_equal(roctracer_op_code(EMU_ROC_DOMAIN_HIP_API, calls[i].name, &op, &kind), 0);
        assert_int_equal(op, calls[i].cid);
        assert_int_equal(kind, 0);
        assert_string_equal(roctracer_op_string(EMU_ROC_DOMAIN_HIP_API, calls[i].cid, 0), calls[i].name);
    }
    uint32_t op = 0;
    assert_int_equal(roctracer_op_code(EMU_ROC_DOMAIN_HIP_API, "hipModuleLaunchKernel", &op, NULL),
                     EMU_ROC_STATUS_INVALID_ARGUMENT);
    const char *why = roctracer_error_string();
    assert_non_null(strstr(why, "Invalid API name \"hipModuleLaunchKernel\""));
    free((void *)why); /* the 4.1 interface: the caller frees */
    assert_int_equal(roctracer_op_code(EMU_ROC_DOMAIN_HIP_OPS, "hipMemcpy", &op, NULL), EMU_ROC_STATUS_INVALID_DOMAIN);
    assert_null(roctracer_op_string(EMU_ROC_DOMAIN_HIP_API, 42, 0));
    assert_string_equal(roctracer_op_string(EMU_ROC_DOMAIN_HIP_OPS, 0, EMU_ROC_KIND_KERNEL), "KernelExecution");
    assert_string_equal(roctracer_op_string(EMU_ROC_DOMAIN_HIP_OPS, 1, EMU_ROC_KIND_FILL), "FillBuffer");
}

static void test_pool_rules(void **state)
{
    (void)state;
    emu_roc_properties props = {0, 4096, NULL, NULL, on_buffer, &C};
    void *pool = NULL, *second = NULL;
    const void *next = NULL;
    char rec_bytes[128];
    assert_int_equal(roctracer_open_pool_expl(NULL, &pool), EMU_ROC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(roctracer_open_pool_expl(&props, NULL), EMU_ROC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(roctracer_open_pool_expl(&props, &pool), 0);
    assert_int_equal(roctracer_open_pool_expl(&props, &second), EMU_ROC_STATUS_ERROR); /* one at a time */
    assert_int_equal(roctracer_enable_domain_activity_expl(EMU_ROC_DOMAIN_HIP_OPS, NULL),
                     EMU_ROC_STATUS_DEFAULT_POOL_UNDEFINED);
    assert_int_equal(roctracer_enable_domain_activity_expl(99, pool), EMU_ROC_STATUS_INVALID_DOMAIN);
    assert_int_equal(roctracer_enable_domain_activity_expl(EMU_ROC_DOMAIN_EXT_API, pool), 0); /* accepted, idle */
    assert_int_equal(roctracer_disable_domain_activity(99), EMU_ROC_STATUS_INVALID_DOMAIN);
    assert_int_equal(roctracer_flush_activity_expl(&props), EMU_ROC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(roctracer_enable_domain_callback(EMU_ROC_DOMAIN_HIP_API, NULL, NULL),
                     EMU_ROC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(roctracer_next_record(rec_bytes, &next), 0);
    assert_ptr_equal(next, rec_bytes + 64); /* fixed 64-byte stride */
    assert_int_equal(roctracer_close_pool_expl(pool), 0);
    assert_int_equal(roctracer_close_pool_expl(NULL), 0);
    assert_int_equal(roctracer_close_pool_expl(pool), EMU_ROC_STATUS_INVALID_ARGUMENT); /* already closed */
}

/* ---- activity records ---- */

static void test_parity_records_in_the_roctracer_layout(void **state)
{
    wl_counts want;
    (void)state;
    wl_expected_counts(&g_parity, &want);
    client_start("", 1 << 20, 1, 0);
    assert_int_equal(devemu_run(), 0);
    client_stop();
    assert_int_equal(count_ops(EMU_ROC_KIND_KERNEL), want.kernels);
    const wl_stmt *m = nth_statement(WL_STMT_MEMCPY, 0), *set = nth_statement(WL_STMT_MEMSET, 0);
    assert_non_null(m);
    assert_non_null(set);
    uint32_t copy_kind = m->u.memcpy.dir == WL_COPY_HTOD   ? EMU_ROC_KIND_COPY_HTOD
                         : m->u.memcpy.dir == WL_COPY_DTOH ? EMU_ROC_KIND_COPY_DTOH
                                                           : EMU_ROC_KIND_COPY_DTOD;
    assert_int_equal(count_ops(copy_kind), want.memcpys);
    assert_int_equal(count_ops(EMU_ROC_KIND_FILL), want.memsets);
    assert_int_equal(C.n, want.kernels + want.memcpys + want.memsets); /* nothing else: no API activity */
    assert_int_equal(C.ragged, 0);
    assert_int_not_equal(C.delivery_tid, (pid_t)syscall(SYS_gettid)); /* ROCtracer's own thread */
    size_t nk = 0;
    for (size_t i = 0; i < C.n; i++) {
        const rec *r = &C.recs[i];
        assert_int_equal(r->domain, EMU_ROC_DOMAIN_HIP_OPS);
        assert_true(r->correlation > UINT32_MAX); /* u64 ids, from 2^32 + 1 */
        assert_true(r->begin > 0 && r->end > r->begin);
        assert_int_equal(r->device, 0);
        for (size_t j = 0; j < i; j++)
            assert_true(C.recs[j].correlation != r->correlation);
        if (r->kind == EMU_ROC_KIND_KERNEL) {
            const wl_stmt *st = nth_statement(WL_STMT_LAUNCH, nk++);
            assert_int_equal(r->op, EMU_ROC_OP_DISPATCH);
            assert_string_equal(r->name, st->u.launch.kernel);
            assert_int_equal(r->queue, st->u.launch.stream);
            assert_int_equal(r->end - r->begin, st->u.launch.dur_ns);
        } else if (r->kind == copy_kind) {
            assert_int_equal(r->op, EMU_ROC_OP_COPY);
            assert_int_equal(r->payload, m->u.memcpy.bytes);
            assert_int_equal(r->queue, m->u.memcpy.stream);
        } else {
            assert_int_equal(r->kind, EMU_ROC_KIND_FILL);
            assert_int_equal(r->op, EMU_ROC_OP_COPY);
            assert_int_equal(r->payload, set->u.memset.bytes);
        }
    }
}

static void test_full_buffers_come_without_a_flush(void **state)
{
    (void)state;
    client_start("", 4 * EMU_ROC_RECORD_SIZE, 1, 0); /* four records a buffer */
    assert_int_equal(devemu_run(), 0);
    pthread_mutex_lock(&C.lock);
    size_t before_flush = C.n, deliveries = C.deliveries;
    pthread_mutex_unlock(&C.lock);
    client_stop();
    /* 19 records, 4 a buffer: full ones are delivered as they fill (the last of them may
     * still be with the consumer), the rest at the flush */
    assert_true(deliveries >= 3);
    assert_true(before_flush >= 12);
    assert_int_equal(C.n, 19);
}

static void test_hip_api_activity_has_ext_api_records_before_it(void **state)
{
    (void)state;
    client_start("", 1 << 16, 0, 1);
    assert_int_equal(roctracer_activity_push_external_correlation_id(42), 0);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    uint64_t popped = 0;
    assert_int_equal(roctracer_activity_pop_external_correlation_id(&popped), 0);
    assert_int_equal(popped, 42);
    assert_int_equal(roctracer_activity_pop_external_correlation_id(&popped), EMU_ROC_STATUS_MISMATCHED_EXTERNAL_ID);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0); /* no id pushed: no EXT_API record */
    client_stop();
    assert_int_equal(C.n, 3);
    assert_int_equal(C.recs[0].domain, EMU_ROC_DOMAIN_EXT_API);
    assert_int_equal(C.recs[0].op, EMU_ROC_EXT_OP_EXTERN_ID);
    assert_int_equal(C.recs[0].at40, 42);
    assert_int_equal(C.recs[1].domain, EMU_ROC_DOMAIN_HIP_API);
    assert_int_equal(C.recs[1].op, CID_GET_DEVICE);
    assert_int_equal(C.recs[1].correlation, C.recs[0].correlation);
    assert_int_equal((uint32_t)C.recs[1].device, (uint32_t)getpid());
    assert_int_equal(C.recs[1].thread_id, (uint32_t)syscall(SYS_gettid));
    assert_true(C.recs[1].end >= C.recs[1].begin);
    assert_int_equal(C.recs[2].domain, EMU_ROC_DOMAIN_HIP_API);
}

/* ---- the HIP_API callback ---- */

static void test_callbacks_carry_correlation_phase_and_arguments(void **state)
{
    wl_counts want;
    (void)state;
    wl_expected_counts(&g_parity, &want);
    const char *layout = getenv("DEVEMU_HIP_LAUNCH_ARGS");
    int with_val = !layout || strcmp(layout, "without-val") != 0;
    client_start("", 1 << 20, 1, 0);
    assert_int_equal(roctracer_enable_domain_callback(EMU_ROC_DOMAIN_HIP_API, on_api, &C), 0);
    assert_int_equal(devemu_run(), 0);
    assert_int_equal(roctracer_disable_domain_callback(EMU_ROC_DOMAIN_HIP_API), 0);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0); /* disabled: no callback */
    client_stop();
    assert_int_equal(C.ncalls, 2 * want.runtime);
    size_t launches = 0;
    for (size_t i = 0; i < C.ncalls; i += 2) {
        const call *in = &C.calls[i], *out = &C.calls[i + 1];
        assert_int_equal(in->phase, 0);
        assert_int_equal(out->phase, 1);
        assert_int_equal(in->cid, out->cid);
        assert_int_equal(in->correlation, out->correlation);
        assert_true(in->correlation != 0);
        assert_non_null(in->phase_data);
        assert_ptr_equal(in->phase_data, out->phase_data);
        if (in->cid == CID_LAUNCH) {
            const wl_launch *l = &nth_statement(WL_STMT_LAUNCH, launches++)->u.launch;
            uint32_t v;
            uint64_t smem, word40;
            for (int d = 0; d < 3; d++) {
                memcpy(&v, in->args + 8 + 4 * d, 4);
                assert_int_equal(v, l->grid[d]);
                memcpy(&v, in->args + 20 + 4 * d, 4);
                assert_int_equal(v, l->block[d]);
            }
            memcpy(&word40, in->args + 40, 8);
            memcpy(&smem, in->args + (with_val ? 48 : 40), 8);
            assert_int_equal(smem, l->dyn_smem);
            if (with_val)
                assert_true(word40 >= (1u << 20)); /* args__val: a pointer */
            /* the kernel record of this launch carries the same correlation id */
            int found = 0;
            for (size_t r = 0; r < C.n; r++)
                if (C.recs[r].correlation == in->correlation && C.recs[r].kind == EMU_ROC_KIND_KERNEL)
                    found++;
            assert_int_equal(found, 1);
        } else if (in->cid == CID_MEMCPY) {
            uint64_t bytes;
            memcpy(&bytes, in->args + 16, 8);
            assert_int_equal(bytes, nth_statement(WL_STMT_MEMCPY, 0)->u.memcpy.bytes);
        } else if (in->cid == CID_MEMSET) {
            uint64_t bytes;
            uint32_t value;
            memcpy(&value, in->args + 8, 4);
            memcpy(&bytes, in->args + 16, 8);
            assert_int_equal(value, nth_statement(WL_STMT_MEMSET, 0)->u.memset.value);
            assert_int_equal(bytes, nth_statement(WL_STMT_MEMSET, 0)->u.memset.bytes);
        }
    }
    assert_int_equal(launches, want.kernels);
}

static void test_stop_pauses_callbacks_and_records_until_start(void **state)
{
    (void)state;
    client_start("", 1 << 16, 1, 0);
    assert_int_equal(roctracer_enable_domain_callback(EMU_ROC_DOMAIN_HIP_API, on_api, &C), 0);
    roctracer_stop();
    assert_int_equal(devemu_launch("_Z6pausedv", 4, 64, 1000, 7), 0);
    assert_int_equal(roctracer_flush_activity_expl(g_pool), 0);
    assert_int_equal(C.n + C.ncalls, 0);
    roctracer_start();
    assert_int_equal(devemu_launch("_Z7resumedv", 4, 64, 1000, 7), 0);
    client_stop();
    assert_int_equal(C.n, 1);
    assert_string_equal(C.recs[0].name, "_Z7resumedv");
    assert_int_equal(C.ncalls, 2);
}

/* ---- faults ---- */

static void test_fault_drop_loses_device_records_silently(void **state)
{
    devemu_stats before, after;
    (void)state;
    devemu_get_stats(&before);
    client_start("drop=3", 1 << 20, 1, 0);
    assert_int_equal(devemu_run(), 0);
    client_stop();
    devemu_get_stats(&after);
    assert_int_equal(count_ops(EMU_ROC_KIND_KERNEL), 14);
    assert_int_equal(after.dropped_records - before.dropped_records, 3);
}

static void test_fault_malformed_records_have_no_valid_domain(void **state)
{
    (void)state;
    client_start("malformed=2", 1 << 20, 1, 0);
    assert_int_equal(devemu_run(), 0);
    client_stop();
    size_t bad = 0;
    for (size_t i = 0; i < C.n; i++)
        if (C.recs[i].domain == EMU_ROC_STAGED_BOGUS)
            bad++;
    assert_int_equal(bad, 2);
    assert_int_equal(count_ops(EMU_ROC_KIND_KERNEL), 17);
    assert_int_equal(C.n, 19 + 2);
}

static void test_fault_zero_time_adds_kernel_records_without_timing(void **state)
{
    (void)state;
    client_start("zero-time=2", 1 << 20, 1, 0);
    assert_int_equal(devemu_run(), 0);
    client_stop();
    size_t zero = 0;
    for (size_t i = 0; i < C.n; i++)
        if (C.recs[i].kind == EMU_ROC_KIND_KERNEL && C.recs[i].begin == 0 && C.recs[i].end == 0)
            zero++;
    assert_int_equal(zero, 2);
    assert_int_equal(count_ops(EMU_ROC_KIND_KERNEL), 17 + 2);
}

static uint64_t now_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_clock_is_boottime_like_unless_a_fault_moves_it(void **state)
{
    char err[256];
    uint64_t t = 0;
    (void)state;
    assert_int_equal(roctracer_get_timestamp(&t), 0);
    uint64_t boot = now_ns(CLOCK_BOOTTIME);
    assert_true(t + 100000000ull > boot && t < boot + 100000000ull);
    assert_int_equal(devemu_set_faults("clock-epoch=load,clock-rate=2", err, sizeof err), 0);
    assert_int_equal(roctracer_get_timestamp(&t), 0);
    assert_true(t < 60000000000ull && t < boot); /* counts from the emulator's load */
    assert_int_equal(devemu_set_faults("", err, sizeof err), 0);
    assert_int_equal(roctracer_get_timestamp(NULL), EMU_ROC_STATUS_INVALID_ARGUMENT);
}

static void test_faults_roctracer_has_no_way_to_show_are_refused(void **state)
{
    char err[256];
    (void)state;
    assert_int_equal(devemu_set_faults("refuse-buffer=1", err, sizeof err), -1);
    assert_string_equal(err, "devemu: fault 'refuse-buffer' is not emulated by the roctracer emulator");
    assert_int_equal(devemu_set_faults("subscribe-fail", err, sizeof err), -1);
    assert_int_equal(devemu_set_faults("", err, sizeof err), 0);
}

/* ---- the HIP runtime's device queries ---- */

static void test_device_attributes_use_hip_numbers(void **state)
{
    int v = 0, n = 0;
    (void)state;
    const wl_device *d = &g_parity.devices[0];
    assert_int_equal(hipDeviceGetAttribute(&v, 87, 0), 0); /* WarpSize */
    assert_int_equal(v, (int)d->warp);
    assert_int_equal(hipDeviceGetAttribute(&v, 63, 0), 0); /* MultiprocessorCount */
    assert_int_equal(v, (int)d->sms);
    assert_int_equal(hipDeviceGetAttribute(&v, 57, 0), 0); /* MaxThreadsPerMultiProcessor */
    assert_int_equal(v, (int)d->max_threads_per_sm);
    assert_int_equal(hipDeviceGetAttribute(&v, 10002, 0), 0); /* MaxSharedMemoryPerMultiprocessor */
    assert_int_equal(v, (int)d->smem_per_sm);
    assert_int_equal(hipDeviceGetAttribute(&v, 10, 0), 1);   /* a CUDA number, not a HIP one here */
    assert_int_equal(hipDeviceGetAttribute(&v, 87, 7), 101); /* no such device */
    assert_int_equal(hipDeviceGetAttribute(NULL, 87, 0), 1);
    assert_int_equal(hipGetDeviceCount(&n), 0);
    assert_int_equal(n, 1);
}

/* ---- the missing-symbol variant ---- */

static void test_nocb_variant_lacks_only_the_callback(void **state)
{
    (void)state;
    void *h = dlopen(DEVEMU_ROCTRACER_NOCB_LIB, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    assert_null(dlsym(h, "roctracer_enable_domain_callback"));
    assert_non_null(dlsym(h, "roctracer_disable_domain_callback"));
    assert_non_null(dlsym(h, "roctracer_open_pool_expl"));
    dlclose(h);
}

int main(int argc, char **argv)
{
    char err[512];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_op_codes_and_strings),
        cmocka_unit_test(test_pool_rules),
        cmocka_unit_test(test_parity_records_in_the_roctracer_layout),
        cmocka_unit_test(test_full_buffers_come_without_a_flush),
        cmocka_unit_test(test_hip_api_activity_has_ext_api_records_before_it),
        cmocka_unit_test(test_callbacks_carry_correlation_phase_and_arguments),
        cmocka_unit_test(test_stop_pauses_callbacks_and_records_until_start),
        cmocka_unit_test(test_fault_drop_loses_device_records_silently),
        cmocka_unit_test(test_fault_malformed_records_have_no_valid_domain),
        cmocka_unit_test(test_fault_zero_time_adds_kernel_records_without_timing),
        cmocka_unit_test(test_clock_is_boottime_like_unless_a_fault_moves_it),
        cmocka_unit_test(test_faults_roctracer_has_no_way_to_show_are_refused),
        cmocka_unit_test(test_device_attributes_use_hip_numbers),
        cmocka_unit_test(test_nocb_variant_lacks_only_the_callback),
    };
    if (argc != 2) {
        fprintf(stderr, "usage: roctracer_test_emu PATH/TO/parity.wl\n");
        return 2;
    }
    g_parity_path = argv[1];
    if (devemu_load_workload(g_parity_path, err, sizeof err) < 0 ||
        wl_parse_file(g_parity_path, &g_parity, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    devemu_reset();
    wl_free(&g_parity);
    free(C.recs);
    free(C.calls);
    return failed;
}
