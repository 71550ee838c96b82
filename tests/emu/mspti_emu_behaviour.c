/* mspti_emu_behaviour.c: the MSPTI (Huawei Ascend) emulator's specification, seen from a tracer.
 *
 * Links libmspti-emu.so and drives it through MSPTI's own symbols with a minimal tracer
 * written here. Every offset, size and number below is written out from vendor-abi.md
 * (never taken from the emulator's table, so that the test checks the table): packed
 * records at their exact offsets, u64 correlation ids, API records named by string, the
 * completion callback without context or stream, the LD_PRELOAD requirement, the
 * thread-local GetNextRecord cursor, one subscriber, the callback names, and the faults.
 * Run twice (ctest): with DEVEMU_MSPTI_PRELOAD=1 the program names the emulator in
 * $LD_PRELOAD before its first MSPTI call; without it, $LD_PRELOAD is cleared. The
 * library reads the variable once, as the real one does, hence two processes.
 * Usage: mspti_emu_behaviour PATH/TO/parity.wl */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "devemu.h"
#include "emu.h"
#include "wl.h"

/* MSPTI's exports (mspti_emu.c), with the headers' shapes. */
emu_result msptiActivityRegisterCallbacks(emu_buffer_request_fn requested, emu_buffer_complete3_fn completed);
emu_result msptiActivityEnable(int kind);
emu_result msptiActivityDisable(int kind);
emu_result msptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size, void **record);
emu_result msptiActivityFlushAll(uint32_t flag);
emu_result msptiActivityGetNumDroppedRecords(void *context, uint32_t stream, size_t *dropped);
emu_result msptiActivityPushExternalCorrelationId(int kind, uint64_t id);
emu_result msptiActivityPopExternalCorrelationId(int kind, uint64_t *last_id);
emu_result msptiGetTimestamp(uint64_t *timestamp);
emu_result msptiGetVersion(uint32_t *version);
emu_result msptiGetResultString(emu_result result, const char **str);
emu_result msptiSubscribe(void **subscriber, emu_callback_fn callback, void *userdata);
emu_result msptiUnsubscribe(void *subscriber);
emu_result msptiEnableDomain(uint32_t enable, void *subscriber, int domain);
emu_result msptiEnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid);
emu_result msptiGetCallbackName(int domain, uint32_t cbid, const char **name);

/* vendor-abi.md, "Huawei Ascend MSPTI". */
enum {
    K_MARKER = 1,
    K_KERNEL = 2,
    K_API = 3,
    K_HCCL = 4,
    K_MEMORY = 5,
    K_MEMSET = 6,
    K_MEMCPY = 7,
    K_EXTCORR = 8,
    K_ACL_API = 10,
    K_NODE_API = 11,
    K_RUNTIME_API = 12,
    K_OVERHEAD = 13
};
enum {
    R_SUCCESS = 0,
    R_INVALID_PARAMETER = 1,
    R_MULTIPLE_SUBSCRIBERS = 2,
    R_MAX_LIMIT_REACHED = 3,
    R_WITHOUT_LD_PRELOAD = 6,
    R_INVALID_KIND = 8
};
enum { CUSTOM0 = 2, DOMAIN_RUNTIME = 1, DOMAIN_HCCL = 2 };
enum { COPY_HTOH = 1, COPY_HTOD = 2, COPY_DTOH = 3, COPY_DTOD = 4 };
enum { SIZE_KERNEL = 56, SIZE_API = 48, SIZE_MEMSET = 56, SIZE_MEMCPY = 56, SIZE_EXTCORR = 24 };

static const char *g_parity_path;
static int g_preload;

/* ---- a minimal tracer ---- */

#define MT_BUFFER_SIZE (64u << 10)

typedef struct mt_rec {
    uint8_t bytes[64]; /* the record as the emulator wrote it */
    uint32_t kind;
    size_t offset; /* in its buffer */
} mt_rec;

static struct {
    pthread_mutex_t lock;
    mt_rec *recs;
    size_t n, cap;
    size_t buffers, bad_size;
    uint8_t last_buffer[MT_BUFFER_SIZE]; /* a copy of the last completed buffer */
    size_t last_valid;
} mt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint32_t u32_at(const uint8_t *p, size_t off)
{
    uint32_t v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

static uint64_t u64_at(const uint8_t *p, size_t off)
{
    uint64_t v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

static const char *ptr_at(const uint8_t *p, size_t off)
{
    const char *v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

static size_t size_of_kind(uint32_t kind)
{
    switch (kind) {
    case K_KERNEL:
        return SIZE_KERNEL;
    case K_API:
    case K_ACL_API:
    case K_NODE_API:
    case K_RUNTIME_API:
        return SIZE_API;
    case K_MEMSET:
        return SIZE_MEMSET;
    case K_MEMCPY:
        return SIZE_MEMCPY;
    case K_EXTCORR:
        return SIZE_EXTCORR;
    default:
        return 0;
    }
}

static void mt_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, MT_BUFFER_SIZE);
    *size = *buffer ? MT_BUFFER_SIZE : 0;
    *max_records = 0;
}

/* MSPTI's completion callback: (buffer, size, validSize), no context or stream. */
static void mt_complete(uint8_t *buffer, size_t size, size_t valid)
{
    pthread_mutex_lock(&mt.lock);
    mt.buffers++;
    if (size != MT_BUFFER_SIZE || valid > size)
        mt.bad_size++;
    memcpy(mt.last_buffer, buffer, valid);
    mt.last_valid = valid;
    for (size_t off = 0; off + 4 <= valid;) {
        uint32_t kind = u32_at(buffer, off);
        size_t n = size_of_kind(kind);
        if (n == 0 || off + n > valid) {
            mt.bad_size++;
            break;
        }
        if (mt.n == mt.cap) {
            mt.cap = mt.cap ? mt.cap * 2 : 256;
            mt.recs = realloc(mt.recs, mt.cap * sizeof *mt.recs);
        }
        mt_rec *r = &mt.recs[mt.n++];
        memset(r, 0, sizeof *r);
        memcpy(r->bytes, buffer + off, n);
        r->kind = kind;
        r->offset = off;
        off += n;
    }
    pthread_mutex_unlock(&mt.lock);
    free(buffer);
}

static void mt_start(const char *faults, const int *kinds)
{
    char err[256];
    devemu_reset();
    mt.n = mt.buffers = mt.bad_size = 0;
    assert_int_equal(devemu_set_faults(faults, err, sizeof err), 0);
    assert_int_equal(msptiActivityRegisterCallbacks(mt_request, mt_complete), R_SUCCESS);
    for (const int *k = kinds; *k; k++)
        assert_int_equal(msptiActivityEnable(*k), R_SUCCESS);
}

static void mt_flush(void)
{
    assert_int_equal(msptiActivityFlushAll(1), R_SUCCESS);
}

static size_t mt_count(uint32_t kind)
{
    size_t n = 0;
    for (size_t i = 0; i < mt.n; i++)
        n += mt.recs[i].kind == kind;
    return n;
}

/* The API record (ACL_API) with this u64 correlation id. */
static const mt_rec *mt_api(uint64_t correlation)
{
    for (size_t i = 0; i < mt.n; i++)
        if (mt.recs[i].kind == K_ACL_API && u64_at(mt.recs[i].bytes, 28) == correlation)
            return &mt.recs[i];
    return NULL;
}

/* The kinds a tracer enables; memcpy and memset need the preload. */
static const int all_kinds[] = {K_KERNEL, K_MEMCPY, K_MEMSET, K_EXTCORR, K_ACL_API, K_NODE_API, K_RUNTIME_API, 0};
static const int no_preload_kinds[] = {K_KERNEL, K_EXTCORR, K_ACL_API, K_NODE_API, K_RUNTIME_API, 0};

static const int *usable_kinds(void)
{
    return g_preload ? all_kinds : no_preload_kinds;
}

/* ---- tests ---- */

static void version_result_strings_and_vendor(void **state)
{
    uint32_t version = 0;
    const char *text = NULL;
    (void)state;
    assert_int_equal(msptiGetVersion(&version), R_SUCCESS);
    assert_true(version > 0);
    assert_int_equal(msptiGetResultString(R_WITHOUT_LD_PRELOAD, &text), R_SUCCESS);
    assert_string_equal(text, "MSPTI_ERROR_WITHOUT_LD_PRELOAD");
    assert_int_equal(msptiGetResultString(R_MULTIPLE_SUBSCRIBERS, &text), R_SUCCESS);
    assert_string_equal(text, "MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    assert_int_equal(msptiGetResultString(999, &text), R_SUCCESS);
    assert_string_equal(text, "MSPTI_ERROR_INNER");
    assert_int_equal(msptiGetResultString(12345, &text), R_INVALID_PARAMETER);
    assert_string_equal(devemu_vendor(), "mspti");
}

static void enabling_follows_the_preload_rule(void **state)
{
    (void)state;
    devemu_reset();
    int want = g_preload ? R_SUCCESS : R_WITHOUT_LD_PRELOAD;
    assert_int_equal(msptiActivityEnable(K_MEMCPY), want);
    assert_int_equal(msptiActivityEnable(K_MEMSET), want);
    assert_int_equal(msptiActivityEnable(K_MEMORY), want);
    assert_int_equal(msptiActivityEnable(K_HCCL), want);
    /* kernels, API records and external correlation never need it */
    assert_int_equal(msptiActivityEnable(K_KERNEL), R_SUCCESS);
    assert_int_equal(msptiActivityEnable(K_ACL_API), R_SUCCESS);
    assert_int_equal(msptiActivityEnable(K_NODE_API), R_SUCCESS);
    assert_int_equal(msptiActivityEnable(K_RUNTIME_API), R_SUCCESS);
    assert_int_equal(msptiActivityEnable(K_EXTCORR), R_SUCCESS);
    assert_int_equal(msptiActivityEnable(K_MARKER), R_SUCCESS);
    assert_int_equal(msptiActivityEnable(K_OVERHEAD), R_SUCCESS);
    /* kinds MSPTI does not have */
    assert_int_equal(msptiActivityEnable(0), R_INVALID_PARAMETER);
    assert_int_equal(msptiActivityEnable(14), R_INVALID_PARAMETER);
    assert_int_equal(msptiActivityDisable(14), R_INVALID_PARAMETER);
    /* the callback API needs it too */
    void *sub = NULL;
    assert_int_equal(msptiSubscribe(&sub, NULL, NULL), R_SUCCESS);
    assert_int_equal(msptiEnableDomain(1, sub, DOMAIN_RUNTIME), want);
    assert_int_equal(msptiEnableCallback(1, sub, DOMAIN_RUNTIME, 8), want);
    assert_int_equal(msptiUnsubscribe(sub), R_SUCCESS);
    devemu_reset();
}

static void parity_counts_ascend_names_and_u64_correlation(void **state)
{
    static const char *const names[] = {
        "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtGetDeviceInfo",     "aclrtSetDevice",
        "aclrtMalloc",    "aclrtFree",           "aclrtRecordEvent",       "aclrtLaunchKernel",
        "aclrtMemcpy",    "aclrtMemsetAsync",    "aclrtSynchronizeStream", "aclrtSynchronizeDevice"};
    (void)state;
    mt_start("", usable_kinds());
    assert_int_equal(devemu_run(), 0);
    mt_flush();
    assert_int_equal(mt.bad_size, 0);
    assert_true(mt.buffers >= 1);
    /* The aclrt* calls are ACL-level API records; no record of the other API levels. */
    assert_int_equal(mt_count(K_ACL_API), 187);
    assert_int_equal(mt_count(K_API) + mt_count(K_NODE_API) + mt_count(K_RUNTIME_API), 0);
    assert_int_equal(mt_count(K_KERNEL), 17);
    assert_int_equal(mt_count(K_MEMCPY), g_preload ? 1 : 0);
    assert_int_equal(mt_count(K_MEMSET), g_preload ? 1 : 0);
    assert_true(mt_count(K_EXTCORR) > 0);
    for (size_t i = 0; i < mt.n; i++) {
        const mt_rec *r = &mt.recs[i];
        if (r->kind == K_ACL_API) {
            const char *name = ptr_at(r->bytes, 36);
            int known = 0;
            assert_non_null(name);
            for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
                known |= strcmp(name, names[k]) == 0;
            assert_true(known);
            assert_true(u64_at(r->bytes, 28) > UINT32_MAX); /* u64 ids, above 2^32 */
        }
        size_t corr_at = r->kind == K_KERNEL ? 28 : r->kind == K_EXTCORR ? 16 : 40;
        if (r->kind == K_KERNEL || r->kind == K_MEMCPY || r->kind == K_MEMSET || r->kind == K_EXTCORR) {
            const mt_rec *call = mt_api(u64_at(r->bytes, corr_at));
            assert_non_null(call); /* every device and external-correlation record has its API record */
        }
        if (r->kind == K_KERNEL)
            assert_string_equal(ptr_at(mt_api(u64_at(r->bytes, 28))->bytes, 36), "aclrtLaunchKernel");
    }
}

/* One call of each shape, read at vendor-abi.md's exact byte offsets. */
static void records_are_packed_at_the_headers_offsets(void **state)
{
    (void)state;
    mt_start("", usable_kinds());
    uint64_t t0 = 0, t1 = 0;
    assert_int_equal(msptiGetTimestamp(&t0), R_SUCCESS);
    assert_int_equal(msptiActivityPushExternalCorrelationId(CUSTOM0, 0xABCDEF0123ull), R_SUCCESS);
    assert_int_equal(devemu_launch("_ZN2at6native9addKernelEPfi", 4, 128, 20000, 7), 0);
    if (g_preload) {
        assert_int_equal(devemu_memcpy(WL_COPY_DTOH, 4096, 3000, 7), 0);
        assert_int_equal(devemu_memset(256, 0x5a, 2000, 7), 0);
    }
    uint64_t popped = 0;
    assert_int_equal(msptiActivityPopExternalCorrelationId(CUSTOM0, &popped), R_SUCCESS);
    assert_int_equal(popped, 0xABCDEF0123ull);
    assert_int_equal(devemu_sync_device(), 0);
    mt_flush();
    assert_int_equal(msptiGetTimestamp(&t1), R_SUCCESS);
    assert_int_equal(mt.bad_size, 0);
    size_t kernels = 0, copies = 0, sets = 0, links = 0;
    for (size_t i = 0; i < mt.n; i++) {
        const uint8_t *b = mt.recs[i].bytes;
        assert_int_equal(mt.recs[i].offset % 8, 0); /* sizes are multiples of 8: records stay 8-aligned */
        switch (mt.recs[i].kind) {
        case K_ACL_API: {
            uint64_t start = u64_at(b, 4), end = u64_at(b, 12);
            assert_true(t0 <= start && start <= end && end <= t1); /* CLOCK_REALTIME ns */
            assert_true(u32_at(b, 20) > 0 && u32_at(b, 24) > 0);   /* processId, threadId */
            assert_non_null(ptr_at(b, 36));
            break;
        }
        case K_KERNEL: {
            kernels++;
            uint64_t start = u64_at(b, 4), end = u64_at(b, 12);
            assert_int_equal(end - start, 20000);
            assert_int_equal(u32_at(b, 24), 7); /* ds.streamId */
            assert_string_equal(ptr_at(b, 36), "KERNEL_AICORE");
            assert_string_equal(ptr_at(b, 44), "_ZN2at6native9addKernelEPfi");
            const mt_rec *call = mt_api(u64_at(b, 28));
            assert_non_null(call);
            assert_string_equal(ptr_at(call->bytes, 36), "aclrtLaunchKernel");
            assert_true(start >= u64_at(call->bytes, 4)); /* device work after its call began */
            break;
        }
        case K_MEMCPY:
            copies++;
            assert_int_equal(u32_at(b, 4), COPY_DTOH);
            assert_int_equal(u64_at(b, 8), 4096);
            assert_int_equal(u64_at(b, 24) - u64_at(b, 16), 3000);
            assert_int_equal(u32_at(b, 36), 7);
            assert_int_equal(b[48], 0); /* aclrtMemcpy is synchronous */
            assert_string_equal(ptr_at(mt_api(u64_at(b, 40))->bytes, 36), "aclrtMemcpy");
            break;
        case K_MEMSET:
            sets++;
            assert_int_equal(u32_at(b, 4), 0x5a);
            assert_int_equal(u64_at(b, 8), 256);
            assert_int_equal(u64_at(b, 24) - u64_at(b, 16), 2000);
            assert_int_equal(u32_at(b, 36), 7);
            assert_int_equal(b[48], 1); /* aclrtMemsetAsync */
            assert_string_equal(ptr_at(mt_api(u64_at(b, 40))->bytes, 36), "aclrtMemsetAsync");
            break;
        case K_EXTCORR:
            links++;
            assert_int_equal(u32_at(b, 4), CUSTOM0);
            assert_int_equal(u64_at(b, 8), 0xABCDEF0123ull);
            assert_non_null(mt_api(u64_at(b, 16)));
            break;
        default:
            fail_msg("unexpected kind %u", mt.recs[i].kind);
        }
    }
    assert_int_equal(kernels, 1);
    assert_int_equal(copies, g_preload ? 1 : 0);
    assert_int_equal(sets, g_preload ? 1 : 0);
    assert_int_equal(links, g_preload ? 3 : 1); /* the calls made while the id was pushed */
}

/* The real iterator keeps a thread-local position and ignores the record passed in. */
static void next_record_uses_a_thread_local_cursor(void **state)
{
    (void)state;
    mt_start("", usable_kinds());
    for (int i = 0; i < 3; i++)
        assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    mt_flush();
    assert_int_equal(mt.last_valid, 3 * SIZE_API);
    static uint8_t a[3 * SIZE_API], b[3 * SIZE_API];
    memcpy(a, mt.last_buffer, sizeof a);
    memcpy(b, mt.last_buffer, sizeof b);
    void *rec = NULL;
    assert_int_equal(msptiActivityGetNextRecord(a, sizeof a, &rec), R_SUCCESS);
    assert_ptr_equal(rec, a);
    rec = NULL; /* a CUPTI-style restart: ignored */
    assert_int_equal(msptiActivityGetNextRecord(a, sizeof a, &rec), R_SUCCESS);
    assert_ptr_equal(rec, a + SIZE_API);
    /* Stopping here and walking another buffer on this thread starts mid-way. */
    rec = NULL;
    assert_int_equal(msptiActivityGetNextRecord(b, sizeof b, &rec), R_SUCCESS);
    assert_ptr_equal(rec, b + 2 * SIZE_API);
    assert_int_equal(msptiActivityGetNextRecord(b, sizeof b, &rec), R_MAX_LIMIT_REACHED);
    /* MAX_LIMIT_REACHED reset it. */
    rec = NULL;
    assert_int_equal(msptiActivityGetNextRecord(b, sizeof b, &rec), R_SUCCESS);
    assert_ptr_equal(rec, b);
    /* An unknown kind: INVALID_KIND, and the cursor stays put. */
    uint32_t bogus = 0x77;
    memcpy(b + SIZE_API, &bogus, 4);
    assert_int_equal(msptiActivityGetNextRecord(b, sizeof b, &rec), R_INVALID_KIND);
    assert_int_equal(msptiActivityGetNextRecord(b, sizeof b, &rec), R_INVALID_KIND);
    assert_int_equal(msptiActivityGetNextRecord(NULL, sizeof b, &rec), R_INVALID_PARAMETER);
    /* Leave the cursor reset for whatever runs next on this thread. */
    assert_int_equal(msptiActivityGetNextRecord(a, SIZE_API, &rec), R_MAX_LIMIT_REACHED);
}

static void one_subscriber_and_callback_names(void **state)
{
    void *first = NULL, *second = NULL;
    const char *name = NULL;
    (void)state;
    devemu_reset();
    assert_int_equal(msptiSubscribe(&first, NULL, NULL), R_SUCCESS); /* a NULL callback is accepted */
    assert_int_equal(msptiSubscribe(&second, NULL, NULL), R_MULTIPLE_SUBSCRIBERS);
    assert_int_equal(msptiUnsubscribe(first), R_SUCCESS);
    assert_int_equal(msptiSubscribe(&second, NULL, NULL), R_SUCCESS);
    assert_int_equal(msptiUnsubscribe(second), R_SUCCESS);
    assert_int_equal(msptiSubscribe(NULL, NULL, NULL), R_INVALID_PARAMETER);
    /* subscribe-fail: the slot is taken by another tool */
    char err[128];
    assert_int_equal(devemu_set_faults("subscribe-fail", err, sizeof err), 0);
    assert_int_equal(msptiSubscribe(&first, NULL, NULL), R_MULTIPLE_SUBSCRIBERS);
    assert_int_equal(devemu_set_faults("", err, sizeof err), 0);
    assert_int_equal(msptiGetCallbackName(DOMAIN_RUNTIME, 8, &name), R_SUCCESS);
    assert_string_equal(name, "aclrtLaunchKernel");
    assert_int_equal(msptiGetCallbackName(DOMAIN_RUNTIME, 9, &name), R_SUCCESS);
    assert_string_equal(name, "aclrtMemcpy");
    assert_int_equal(msptiGetCallbackName(DOMAIN_HCCL, 8, &name), R_INVALID_PARAMETER);
    assert_int_equal(msptiGetCallbackName(DOMAIN_RUNTIME, 0, &name), R_INVALID_PARAMETER);
    assert_int_equal(msptiGetCallbackName(DOMAIN_RUNTIME, 8, NULL), R_INVALID_PARAMETER);
}

static struct {
    int calls, site_enter, site_exit;
    uint32_t cbid, domain;
    uint64_t correlation;
    char function[64];
} cb_seen;

static void record_callback(void *userdata, int domain, uint32_t cbid, const void *data)
{
    const uint8_t *d = data; /* msptiCallbackData: site@0 functionName@8 correlationId u64@40 */
    (void)userdata;
    cb_seen.calls++;
    cb_seen.domain = (uint32_t)domain;
    cb_seen.cbid = cbid;
    if (u32_at(d, 0) == 0)
        cb_seen.site_enter++;
    else
        cb_seen.site_exit++;
    snprintf(cb_seen.function, sizeof cb_seen.function, "%s", ptr_at(d, 8));
    cb_seen.correlation = u64_at(d, 40);
}

static void callbacks_fire_with_mspti_callback_data(void **state)
{
    void *sub = NULL;
    (void)state;
    if (!g_preload) {
        skip(); /* without the preload no domain can be enabled (enabling_follows_the_preload_rule) */
        return;
    }
    mt_start("", usable_kinds());
    memset(&cb_seen, 0, sizeof cb_seen);
    assert_int_equal(msptiSubscribe(&sub, record_callback, NULL), R_SUCCESS);
    assert_int_equal(msptiEnableDomain(1, sub, DOMAIN_RUNTIME), R_SUCCESS);
    assert_int_equal(devemu_call(WL_CALL_GET_DEVICE), 0);
    mt_flush();
    assert_int_equal(cb_seen.calls, 2);
    assert_int_equal(cb_seen.site_enter, 1);
    assert_int_equal(cb_seen.site_exit, 1);
    assert_int_equal(cb_seen.domain, DOMAIN_RUNTIME);
    assert_int_equal(cb_seen.cbid, 1);
    assert_string_equal(cb_seen.function, "aclrtGetDevice");
    assert_non_null(mt_api(cb_seen.correlation));
    assert_int_equal(msptiUnsubscribe(sub), R_SUCCESS);
}

static void faults_drop_zero_time_malformed_refuse(void **state)
{
    size_t dropped = 99;
    (void)state;
    /* drop=N: the first N device records are not written, and counted exactly. */
    mt_start("drop=3", usable_kinds());
    assert_int_equal(devemu_run(), 0);
    mt_flush();
    assert_int_equal(mt_count(K_KERNEL) + mt_count(K_MEMCPY) + mt_count(K_MEMSET), (g_preload ? 19 : 17) - 3);
    assert_int_equal(msptiActivityGetNumDroppedRecords(NULL, 0, &dropped), R_SUCCESS);
    assert_int_equal(dropped, 3);
    assert_int_equal(msptiActivityGetNumDroppedRecords(NULL, 0, &dropped), R_SUCCESS);
    assert_int_equal(dropped, 0); /* read resets it */
    assert_int_equal(msptiActivityGetNumDroppedRecords(NULL, 0, NULL), R_INVALID_PARAMETER);
    /* zero-time=N: N more kernels with start == end == 0. */
    mt_start("zero-time=3", usable_kinds());
    assert_int_equal(devemu_run(), 0);
    mt_flush();
    size_t zero = 0;
    for (size_t i = 0; i < mt.n; i++)
        zero += mt.recs[i].kind == K_KERNEL && u64_at(mt.recs[i].bytes, 4) == 0 && u64_at(mt.recs[i].bytes, 12) == 0;
    assert_int_equal(zero, 3);
    assert_int_equal(mt_count(K_KERNEL), 20);
    /* malformed=N: N more kernels that end before they start. */
    mt_start("malformed=2", usable_kinds());
    assert_int_equal(devemu_run(), 0);
    mt_flush();
    size_t backwards = 0;
    for (size_t i = 0; i < mt.n; i++)
        backwards += mt.recs[i].kind == K_KERNEL && u64_at(mt.recs[i].bytes, 12) < u64_at(mt.recs[i].bytes, 4);
    assert_int_equal(backwards, 2);
    assert_int_equal(mt_count(K_KERNEL), 19);
    /* refuse-buffer=1: the record that needed the buffer is lost, and counted. */
    mt_start("refuse-buffer=1", usable_kinds());
    assert_int_equal(devemu_run(), 0);
    mt_flush();
    assert_int_equal(msptiActivityGetNumDroppedRecords(NULL, 0, &dropped), R_SUCCESS);
    assert_int_equal(dropped, 1);
    devemu_stats st;
    devemu_get_stats(&st);
    assert_int_equal(st.buffers_refused, 1);
    /* stale-iterator is MCPTI's: not emulated here */
    char err[256];
    assert_int_equal(devemu_set_faults("stale-iterator", err, sizeof err), -1);
    assert_non_null(strstr(err, "not emulated by the mspti emulator"));
}

static int has_symbol(const char *path, const char *name)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fail_msg("cannot load %s: %s", path, dlerror());
    int found = dlsym(h, name) != NULL;
    dlclose(h);
    return found;
}

static void variant_libraries(void **state)
{
    (void)state;
    assert_false(has_symbol(DEVEMU_MSPTI_NOFLUSH_LIB, "msptiActivityFlushAll"));
    assert_true(has_symbol(DEVEMU_MSPTI_NOFLUSH_LIB, "msptiActivityEnable"));
    void *h = dlopen(DEVEMU_MSPTI_NO_NODE_API_LIB, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    emu_result (*enable)(int);
    void *p = dlsym(h, "msptiActivityEnable");
    assert_non_null(p);
    memcpy(&enable, &p, sizeof p);
    assert_int_equal(enable(K_NODE_API), R_INVALID_PARAMETER);
    assert_int_equal(enable(K_RUNTIME_API), R_SUCCESS);
    dlclose(h);
}

int main(int argc, char **argv)
{
    char err[512];
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH/TO/parity.wl\n", argv[0]);
        return 2;
    }
    g_parity_path = argv[1];
    g_preload = getenv("DEVEMU_MSPTI_PRELOAD") && strcmp(getenv("DEVEMU_MSPTI_PRELOAD"), "1") == 0;
    if (g_preload) {
        /* What `LD_PRELOAD=.../libmspti-emu.so program` gives the library: its name in the variable. */
        Dl_info info;
        void *sym = dlsym(RTLD_DEFAULT, "msptiActivityEnable");
        if (!sym || !dladdr(sym, &info) || !info.dli_fname) {
            fprintf(stderr, "cannot find the emulator's path\n");
            return 1;
        }
        setenv("LD_PRELOAD", info.dli_fname, 1);
    } else {
        unsetenv("LD_PRELOAD");
    }
    if (devemu_load_workload(g_parity_path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_result_strings_and_vendor),
        cmocka_unit_test(enabling_follows_the_preload_rule),
        cmocka_unit_test(parity_counts_ascend_names_and_u64_correlation),
        cmocka_unit_test(records_are_packed_at_the_headers_offsets),
        cmocka_unit_test(next_record_uses_a_thread_local_cursor),
        cmocka_unit_test(one_subscriber_and_callback_names),
        cmocka_unit_test(callbacks_fire_with_mspti_callback_data),
        cmocka_unit_test(faults_drop_zero_time_malformed_refuse),
        cmocka_unit_test(variant_libraries),
    };
    return cmocka_run_group_tests_name(g_preload ? "mspti emulator, preloaded" : "mspti emulator, not preloaded", tests,
                                       NULL, NULL);
}
