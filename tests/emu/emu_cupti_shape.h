/* emu_cupti_shape.h: the CUPTI-shaped exported API, generated for a symbol prefix.
 *
 * Every CUPTI-family emulator exports the same functions under its own prefix (cupti*,
 * mcpti*, ...) with CUPTI's signatures; each forwards to the shared core (emu.h). The
 * groups are separate so that a variant library can leave one out (a missing-symbol
 * fault): EMU_CUPTI_SHAPE_CORE, _FLUSH (the required FlushAll), _EXTCORR (the optional
 * Push/PopExternalCorrelationId). EMU_CUPTI_SHAPE_DECLARE(P) declares all of them, for
 * test programs that link an emulator directly. */
#ifndef DEVEMU_EMU_CUPTI_SHAPE_H
#define DEVEMU_EMU_CUPTI_SHAPE_H

#include "emu.h"

#define EMU_CUPTI_SHAPE_DECLARE(P)                                                                              \
    emu_result P##GetVersion(uint32_t *version);                                                                \
    emu_result P##GetResultString(emu_result result, const char **str);                                         \
    emu_result P##GetTimestamp(uint64_t *timestamp);                                                            \
    emu_result P##ActivityRegisterCallbacks(emu_buffer_request_fn requested, emu_buffer_complete_fn completed); \
    emu_result P##ActivityRegisterTimestampCallback(emu_timestamp_fn fn);                                       \
    emu_result P##ActivityEnable(int kind);                                                                     \
    emu_result P##ActivityDisable(int kind);                                                                    \
    emu_result P##ActivityGetNextRecord(uint8_t *buffer, size_t valid_size, void **record);                     \
    emu_result P##ActivityGetNumDroppedRecords(emu_context ctx, uint32_t stream, size_t *dropped);              \
    emu_result P##Subscribe(void **subscriber, emu_callback_fn callback, void *userdata);                       \
    emu_result P##Unsubscribe(void *subscriber);                                                                \
    emu_result P##EnableDomain(uint32_t enable, void *subscriber, int domain);                                  \
    emu_result P##EnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid);                 \
    emu_result P##ActivityFlushAll(uint32_t flag);                                                              \
    emu_result P##ActivityPushExternalCorrelationId(int kind, uint64_t id);                                     \
    emu_result P##ActivityPopExternalCorrelationId(int kind, uint64_t *last_id);

#define EMU_CUPTI_SHAPE_CORE(P)                                                                              \
    EMU_EXPORT emu_result P##GetVersion(uint32_t *version)                                                   \
    {                                                                                                        \
        if (!version)                                                                                        \
            return emu_vendor_get()->result.invalid_parameter;                                               \
        *version = emu_vendor_get()->api_version;                                                            \
        return emu_vendor_get()->result.success;                                                             \
    }                                                                                                        \
    EMU_EXPORT emu_result P##GetResultString(emu_result result, const char **str)                            \
    {                                                                                                        \
        return emu_result_string(result, str);                                                               \
    }                                                                                                        \
    EMU_EXPORT emu_result P##GetTimestamp(uint64_t *timestamp)                                               \
    {                                                                                                        \
        return emu_get_timestamp(timestamp);                                                                 \
    }                                                                                                        \
    EMU_EXPORT emu_result P##ActivityRegisterCallbacks(emu_buffer_request_fn requested,                      \
                                                       emu_buffer_complete_fn completed)                     \
    {                                                                                                        \
        return emu_register_buffers(requested, completed);                                                   \
    }                                                                                                        \
    EMU_EXPORT emu_result P##ActivityRegisterTimestampCallback(emu_timestamp_fn fn)                          \
    {                                                                                                        \
        return emu_register_timestamp_callback(fn);                                                          \
    }                                                                                                        \
    EMU_EXPORT emu_result P##ActivityEnable(int kind)                                                        \
    {                                                                                                        \
        return emu_activity_enable(kind, 1);                                                                 \
    }                                                                                                        \
    EMU_EXPORT emu_result P##ActivityDisable(int kind)                                                       \
    {                                                                                                        \
        return emu_activity_enable(kind, 0);                                                                 \
    }                                                                                                        \
    EMU_EXPORT emu_result P##ActivityGetNextRecord(uint8_t *buffer, size_t valid_size, void **record)        \
    {                                                                                                        \
        return emu_next_record(buffer, valid_size, record);                                                  \
    }                                                                                                        \
    EMU_EXPORT emu_result P##ActivityGetNumDroppedRecords(emu_context ctx, uint32_t stream, size_t *dropped) \
    {                                                                                                        \
        (void)ctx, (void)stream; /* one global queue, as since CUDA 6.0 */                                   \
        return emu_dropped_records(dropped);                                                                 \
    }                                                                                                        \
    EMU_EXPORT emu_result P##Subscribe(void **subscriber, emu_callback_fn callback, void *userdata)          \
    {                                                                                                        \
        return emu_subscribe(subscriber, callback, userdata);                                                \
    }                                                                                                        \
    EMU_EXPORT emu_result P##Unsubscribe(void *subscriber)                                                   \
    {                                                                                                        \
        return emu_unsubscribe(subscriber);                                                                  \
    }                                                                                                        \
    EMU_EXPORT emu_result P##EnableDomain(uint32_t enable, void *subscriber, int domain)                     \
    {                                                                                                        \
        return emu_enable_domain(enable, subscriber, domain);                                                \
    }                                                                                                        \
    EMU_EXPORT emu_result P##EnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid)    \
    {                                                                                                        \
        return emu_enable_callback(enable, subscriber, domain, cbid);                                        \
    }

#define EMU_CUPTI_SHAPE_FLUSH(P)                             \
    EMU_EXPORT emu_result P##ActivityFlushAll(uint32_t flag) \
    {                                                        \
        return emu_flush_all(flag);                          \
    }

#define EMU_CUPTI_SHAPE_EXTCORR(P)                                                         \
    EMU_EXPORT emu_result P##ActivityPushExternalCorrelationId(int kind, uint64_t id)      \
    {                                                                                      \
        return emu_push_external(kind, id);                                                \
    }                                                                                      \
    EMU_EXPORT emu_result P##ActivityPopExternalCorrelationId(int kind, uint64_t *last_id) \
    {                                                                                      \
        return emu_pop_external(kind, last_id);                                            \
    }

/* The whole API under prefix P, less what the variant defines leave out. */
#ifdef DEVEMU_OMIT_FLUSH
#define EMU__SHAPE_FLUSH_OR_NOT(P)
#else
#define EMU__SHAPE_FLUSH_OR_NOT(P) EMU_CUPTI_SHAPE_FLUSH(P)
#endif
#ifdef DEVEMU_OMIT_EXTCORR
#define EMU__SHAPE_EXTCORR_OR_NOT(P)
#else
#define EMU__SHAPE_EXTCORR_OR_NOT(P) EMU_CUPTI_SHAPE_EXTCORR(P)
#endif

#define EMU_CUPTI_SHAPE_DEFINE(P) \
    EMU_CUPTI_SHAPE_DECLARE(P)    \
    EMU_CUPTI_SHAPE_CORE(P)       \
    EMU__SHAPE_FLUSH_OR_NOT(P)    \
    EMU__SHAPE_EXTCORR_OR_NOT(P)

#endif /* DEVEMU_EMU_CUPTI_SHAPE_H */
