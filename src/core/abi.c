/* abi.c: the layout of the public structs (devtrace_abi_layout, devtrace_abi_field), from
 * the compiler that built the library, so that a binding mirroring them (the Python
 * package's ctypes structs) is checked against the real offsets instead of restating them. */
#include <stddef.h>
#include <string.h>

#include "devtrace.h"

typedef struct abi_field {
    const char *strct, *field;
    size_t offset, size;
} abi_field;

#define F(type, member)                                                     \
    {                                                                       \
#type, #member, offsetof(type, member), sizeof(((type *)0)->member) \
    }
#define S(type)                      \
    {                                \
#type, NULL, 0, sizeof(type) \
    }

/* Each struct: its size, then its fields in declaration order (the union of an event as one
 * field, "u", and its members by path). */
static const abi_field fields[] = {
    S(devtrace_error),
    F(devtrace_error, code),
    F(devtrace_error, message),
    S(devtrace_config),
    F(devtrace_config, size),
    F(devtrace_config, backend),
    F(devtrace_config, runtime_category),
    F(devtrace_config, max_events),
    F(devtrace_config, rank),
    F(devtrace_config, world_size),
    F(devtrace_config, raw_path),
    F(devtrace_config, kinds),
    S(devtrace_event),
    F(devtrace_event, start_ns),
    F(devtrace_event, end_ns),
    F(devtrace_event, correlation),
    F(devtrace_event, external_id),
    F(devtrace_event, name_id),
    F(devtrace_event, kind),
    F(devtrace_event, flags),
    F(devtrace_event, device),
    F(devtrace_event, context),
    F(devtrace_event, stream),
    F(devtrace_event, reserved),
    F(devtrace_event, u),
    F(devtrace_event, user_external_id),
    S(devtrace_stats),
    F(devtrace_stats, size),
    F(devtrace_stats, events),
    F(devtrace_stats, out_of_window),
#define ABI_STATS_FIELD(field, group, key, what) F(devtrace_stats, field),
    DEVTRACE_STATS_COUNTERS(ABI_STATS_FIELD)
#undef ABI_STATS_FIELD
        S(devtrace_device),
    F(devtrace_device, size),
    F(devtrace_device, id),
    F(devtrace_device, name),
    F(devtrace_device, total_global_mem),
    F(devtrace_device, compute_major),
    F(devtrace_device, compute_minor),
    F(devtrace_device, max_threads_per_block),
    F(devtrace_device, max_threads_per_sm),
    F(devtrace_device, max_blocks_per_sm),
    F(devtrace_device, regs_per_block),
    F(devtrace_device, regs_per_sm),
    F(devtrace_device, warp_size),
    F(devtrace_device, num_sms),
    F(devtrace_device, smem_per_block),
    F(devtrace_device, smem_per_sm),
    F(devtrace_device, has_occupancy),
    S(devtrace_backend_info),
    F(devtrace_backend_info, size),
    F(devtrace_backend_info, name),
    F(devtrace_backend_info, description),
    F(devtrace_backend_info, capabilities),
    F(devtrace_backend_info, runtime_category),
    F(devtrace_backend_info, load_method),
    F(devtrace_backend_info, load_variable),
    F(devtrace_backend_info, preload_library),
    F(devtrace_backend_info, validation),
    F(devtrace_backend_info, library_api),
    F(devtrace_backend_info, library_variable),
    F(devtrace_backend_info, sdk_variables),
    F(devtrace_backend_info, library_files),
    S(devtrace_stream),
    F(devtrace_stream, size),
    F(devtrace_stream, device),
    F(devtrace_stream, context),
    F(devtrace_stream, stream),
    F(devtrace_stream, name),
};
#undef F
#undef S

/* The members of an event's union, by path ("u.kernel.grid"): found by devtrace_abi_layout,
 * not listed by devtrace_abi_field (a binding may read the union as raw words). */
#define U(member)                                                                                                   \
    {                                                                                                               \
        "devtrace_event", "u." #member, offsetof(devtrace_event, u.member), sizeof(((devtrace_event *)0)->u.member) \
    }
static const abi_field union_members[] = {
    U(kernel.grid),          U(kernel.block),          U(kernel.registers_per_thread),
    U(kernel.static_shared), U(kernel.dynamic_shared), U(kernel.queued_ns),
    U(memcpy.bytes),         U(memcpy.direction),      U(memcpy.src_kind),
    U(memcpy.dst_kind),      U(memset.bytes),          U(memset.value),
    U(runtime.cbid),         U(runtime.return_value),  U(cpu_op.sequence_nr),
    U(cpu_op.fwd_thread_id),
};
#undef U

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int devtrace_abi_layout(const char *struct_name, const char *field, size_t *offset, size_t *size)
{
    if (!struct_name)
        return DEVTRACE_EINVAL;
    for (int table = 0; table < 2; table++) {
        const abi_field *t = table ? union_members : fields;
        size_t n = table ? COUNT(union_members) : COUNT(fields);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(t[i].strct, struct_name) != 0)
                continue;
            if (field ? (t[i].field && strcmp(t[i].field, field) == 0) : !t[i].field) {
                if (offset)
                    *offset = t[i].offset;
                if (size)
                    *size = t[i].size;
                return 0;
            }
        }
    }
    return DEVTRACE_EINVAL;
}

const char *devtrace_abi_field(const char *struct_name, int index)
{
    if (!struct_name || index < 0)
        return NULL;
    for (size_t i = 0; i < COUNT(fields); i++)
        if (fields[i].field && strcmp(fields[i].strct, struct_name) == 0 && index-- == 0)
            return fields[i].field;
    return NULL;
}
