/* mspti_emu.c: libmspti-emu.so, an emulator of Huawei Ascend MSPTI for testing tracers.
 *
 * Exports MSPTI's own symbols with MSPTI's signatures (mspti*, from the Ascend/mspti
 * csrc/include headers) over the shared emulated runtime, plus the devemu_* driving API.
 * The numbers and record layouts are in mspti_table.c. What is MSPTI's own and lives here:
 *  - the completion callback is (buffer, size, validSize), without context or stream;
 *  - the LD_PRELOAD requirement: enabling MEMCPY, MEMSET, MEMORY or HCCL (a runtime
 *    without memory reporting), msptiEnableDomain and msptiEnableCallback return
 *    MSPTI_ERROR_WITHOUT_LD_PRELOAD (6) unless this library is named in $LD_PRELOAD. The
 *    real library looks for "libmspti.so" in $LD_PRELOAD, read once; the emulator looks,
 *    once, for its own file name (libmspti-emu.so, or the variant's);
 *  - msptiActivityGetNextRecord ignores the record passed in and keeps its position in a
 *    thread-local cursor that only MAX_LIMIT_REACHED resets, as the real one does
 *    (csrc/activity/activity_manager.cpp): a caller that stops walking early starts its
 *    next walk on that thread mid-buffer;
 *  - msptiSubscribe accepts a NULL callback; one subscriber (a second gets 2);
 *  - msptiGetCallbackName, msptiGetResultString (MSPTI's names), msptiGetVersion.
 * Variants, built from this file: -DDEVEMU_OMIT_FLUSH (libmspti-emu-noflush.so: no
 * msptiActivityFlushAll, a required symbol) and -DDEVEMU_NO_NODE_API
 * (libmspti-emu-no-node-api.so: enabling NODE_API is refused with INVALID_PARAMETER, as by
 * a CANN release without that kind). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "emu_vendors.h"

enum {
    MSPTI_SUCCESS = 0,
    MSPTI_ERROR_INVALID_PARAMETER = 1,
    MSPTI_ERROR_MAX_LIMIT_REACHED = 3,
    MSPTI_ERROR_WITHOUT_LD_PRELOAD = 6,
    MSPTI_ERROR_INVALID_KIND = 8,
};

enum {
    MSPTI_KIND_MARKER = 1,
    MSPTI_KIND_API = 3,
    MSPTI_KIND_HCCL = 4,
    MSPTI_KIND_MEMORY = 5,
    MSPTI_KIND_MEMSET = 6,
    MSPTI_KIND_MEMCPY = 7,
    MSPTI_KIND_NODE_API = 11,
    MSPTI_KIND_RUNTIME_API = 12,
    MSPTI_KIND_OVERHEAD = 13,
};

__attribute__((constructor)) static void mspti_emu_load(void)
{
    emu_install(&emu_mspti_vendor);
}

/* ---- the LD_PRELOAD requirement ---- */

static pthread_once_t g_preload_once = PTHREAD_ONCE_INIT;
static int g_preloaded;
static char g_self_name[256]; /* this library's file name, e.g. libmspti-emu.so */

static void read_preload(void)
{
    Dl_info info;
    const char *ld = getenv("LD_PRELOAD");
    if (dladdr(&g_preloaded, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        strncpy(g_self_name, slash ? slash + 1 : info.dli_fname, sizeof g_self_name - 1);
    }
    g_preloaded = ld && g_self_name[0] && strstr(ld, g_self_name) != NULL;
}

static int preloaded(void)
{
    pthread_once(&g_preload_once, read_preload);
    return g_preloaded;
}

static int kind_needs_preload(int kind)
{
    return kind == MSPTI_KIND_HCCL || kind == MSPTI_KIND_MEMORY || kind == MSPTI_KIND_MEMSET ||
           kind == MSPTI_KIND_MEMCPY;
}

static int kind_supported(int kind)
{
#ifdef DEVEMU_NO_NODE_API
    if (kind == MSPTI_KIND_NODE_API)
        return 0;
#endif
    return kind >= MSPTI_KIND_MARKER && kind <= MSPTI_KIND_OVERHEAD;
}

/* ---- exports ---- */

EMU_EXPORT emu_result msptiActivityRegisterCallbacks(emu_buffer_request_fn requested,
                                                     emu_buffer_complete3_fn completed);
EMU_EXPORT emu_result msptiActivityEnable(int kind);
EMU_EXPORT emu_result msptiActivityDisable(int kind);
EMU_EXPORT emu_result msptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size, void **record);
EMU_EXPORT emu_result msptiActivityGetNumDroppedRecords(void *context, uint32_t stream, size_t *dropped);
EMU_EXPORT emu_result msptiActivityPushExternalCorrelationId(int kind, uint64_t id);
EMU_EXPORT emu_result msptiActivityPopExternalCorrelationId(int kind, uint64_t *last_id);
EMU_EXPORT emu_result msptiActivityRegisterTimestampCallback(emu_timestamp_fn fn);
EMU_EXPORT emu_result msptiGetTimestamp(uint64_t *timestamp);
EMU_EXPORT emu_result msptiGetVersion(uint32_t *version);
EMU_EXPORT emu_result msptiGetResultString(emu_result result, const char **str);
EMU_EXPORT emu_result msptiSubscribe(void **subscriber, emu_callback_fn callback, void *userdata);
EMU_EXPORT emu_result msptiUnsubscribe(void *subscriber);
EMU_EXPORT emu_result msptiEnableDomain(uint32_t enable, void *subscriber, int domain);
EMU_EXPORT emu_result msptiEnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid);
EMU_EXPORT emu_result msptiGetCallbackName(int domain, uint32_t cbid, const char **name);

EMU_EXPORT emu_result msptiActivityRegisterCallbacks(emu_buffer_request_fn requested, emu_buffer_complete3_fn completed)
{
    return emu_register_buffers3(requested, completed);
}

EMU_EXPORT emu_result msptiActivityEnable(int kind)
{
    if (!kind_supported(kind))
        return MSPTI_ERROR_INVALID_PARAMETER;
    if (kind_needs_preload(kind) && !preloaded())
        return MSPTI_ERROR_WITHOUT_LD_PRELOAD;
    return emu_activity_enable(kind, 1);
}

EMU_EXPORT emu_result msptiActivityDisable(int kind)
{
    if (!kind_supported(kind))
        return MSPTI_ERROR_INVALID_PARAMETER;
    return emu_activity_enable(kind, 0);
}

/* The record size of a kind the emulator writes (and of the other API levels). */
static uint32_t record_size(uint32_t kind)
{
    const emu_vendor *v = emu_vendor_get();
    if (kind == v->kind.kernel)
        return v->kernel.size;
    if (kind == v->kind.memcpy)
        return v->memcpy.size;
    if (kind == v->kind.memset)
        return v->memset.size;
    if (kind == v->kind.external_correlation)
        return v->external_correlation.size;
    if (kind == v->kind.communication)
        return v->communication.size;
    if (kind == v->kind.marker)
        return v->marker.size;
    if (kind == v->kind.memory)
        return v->memory.size;
    if (kind == v->kind.runtime || kind == MSPTI_KIND_API || kind == MSPTI_KIND_NODE_API ||
        kind == MSPTI_KIND_RUNTIME_API)
        return v->api.size;
    return 0;
}

static _Thread_local size_t t_cursor; /* the real library's `static thread_local size_t pos` */

EMU_EXPORT emu_result msptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size, void **record)
{
    if (!buffer || !record)
        return MSPTI_ERROR_INVALID_PARAMETER;
    if (t_cursor >= valid_size) {
        t_cursor = 0;
        return MSPTI_ERROR_MAX_LIMIT_REACHED;
    }
    uint32_t kind = 0, size = 0;
    if (valid_size - t_cursor >= sizeof kind) {
        memcpy(&kind, buffer + t_cursor, sizeof kind);
        size = record_size(kind);
    }
    if (size == 0)
        return MSPTI_ERROR_INVALID_KIND; /* the cursor stays where it is, as in the real library */
    *record = buffer + t_cursor;
    t_cursor += size;
    return MSPTI_SUCCESS;
}

#ifndef DEVEMU_OMIT_FLUSH
EMU_EXPORT emu_result msptiActivityFlushAll(uint32_t flag);
EMU_EXPORT emu_result msptiActivityFlushAll(uint32_t flag)
{
    return emu_flush_all(flag);
}
#endif

EMU_EXPORT emu_result msptiActivityGetNumDroppedRecords(void *context, uint32_t stream, size_t *dropped)
{
    (void)context, (void)stream; /* unused by the real library too */
    return emu_dropped_records(dropped);
}

EMU_EXPORT emu_result msptiActivityPushExternalCorrelationId(int kind, uint64_t id)
{
    return emu_push_external(kind, id);
}

EMU_EXPORT emu_result msptiActivityPopExternalCorrelationId(int kind, uint64_t *last_id)
{
    return emu_pop_external(kind, last_id);
}

EMU_EXPORT emu_result msptiActivityRegisterTimestampCallback(emu_timestamp_fn fn)
{
    if (!fn)
        return MSPTI_ERROR_INVALID_PARAMETER;
    return emu_register_timestamp_callback(fn);
}

EMU_EXPORT emu_result msptiGetTimestamp(uint64_t *timestamp)
{
    return emu_get_timestamp(timestamp);
}

EMU_EXPORT emu_result msptiGetVersion(uint32_t *version)
{
    if (!version)
        return MSPTI_ERROR_INVALID_PARAMETER;
    *version = emu_vendor_get()->api_version;
    return MSPTI_SUCCESS;
}

/* mspti_result.h's codes and names. */
EMU_EXPORT emu_result msptiGetResultString(emu_result result, const char **str)
{
    static const struct {
        emu_result code;
        const char *name;
    } names[] = {
        {0, "MSPTI_SUCCESS"},
        {1, "MSPTI_ERROR_INVALID_PARAMETER"},
        {2, "MSPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
        {3, "MSPTI_ERROR_MAX_LIMIT_REACHED"},
        {4, "MSPTI_ERROR_DEVICE_OFFLINE"},
        {5, "MSPTI_ERROR_QUEUE_EMPTY"},
        {6, "MSPTI_ERROR_WITHOUT_LD_PRELOAD"},
        {7, "MSPTI_ERROR_NOT_INITIALIZED"},
        {8, "MSPTI_ERROR_INVALID_KIND"},
        {9, "MSPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT"},
        {999, "MSPTI_ERROR_INNER"},
    };
    if (!str)
        return MSPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == result) {
            *str = names[i].name;
            return MSPTI_SUCCESS;
        }
    return MSPTI_ERROR_INVALID_PARAMETER;
}

static void no_callback(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
    (void)userdata, (void)domain, (void)cbid, (void)cbdata;
}

EMU_EXPORT emu_result msptiSubscribe(void **subscriber, emu_callback_fn callback, void *userdata)
{
    return emu_subscribe(subscriber, callback ? callback : no_callback, userdata);
}

EMU_EXPORT emu_result msptiUnsubscribe(void *subscriber)
{
    return emu_unsubscribe(subscriber);
}

EMU_EXPORT emu_result msptiEnableDomain(uint32_t enable, void *subscriber, int domain)
{
    if (!preloaded())
        return MSPTI_ERROR_WITHOUT_LD_PRELOAD;
    return emu_enable_domain(enable, subscriber, domain);
}

EMU_EXPORT emu_result msptiEnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid)
{
    if (!preloaded())
        return MSPTI_ERROR_WITHOUT_LD_PRELOAD;
    return emu_enable_callback(enable, subscriber, domain, cbid);
}

EMU_EXPORT emu_result msptiGetCallbackName(int domain, uint32_t cbid, const char **name)
{
    const emu_vendor *v = emu_vendor_get();
    int call = emu_call_for_cbid(cbid);
    if (!name || (uint32_t)domain != v->callback_domain_runtime || cbid == 0 || call < 0)
        return MSPTI_ERROR_INVALID_PARAMETER;
    *name = v->api_name[call];
    return MSPTI_SUCCESS;
}
