/* devemu.h: the driving API every vendor ABI emulator exports (libcupti-emu.so,
 * libmcpti-emu.so, ...), for test programs and emu-run.
 *
 * A test program plays the application: it loads a workload and runs it, or issues
 * runtime calls one by one (from many threads if it likes). The tracer under test
 * sees only the vendor's own symbols. All functions return 0 on success and -1 on a
 * bad argument. The generic call numbers are wl_call (wl.h). */
#ifndef DEVEMU_H
#define DEVEMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the emulator produced, counted since load (or devemu_reset). */
typedef struct devemu_stats {
    uint64_t runtime_calls;
    uint64_t api_records;
    uint64_t kernel_records;
    uint64_t memcpy_records;
    uint64_t memset_records;
    uint64_t external_correlation_records;
    uint64_t injected_zero_time;
    uint64_t injected_malformed;
    uint64_t dropped_records; /* every cause: drop=N, refused buffers, no buffer callbacks */
    uint64_t buffers_requested;
    uint64_t buffers_refused;
    uint64_t buffers_completed;
    uint64_t callbacks_fired;
} devemu_stats;

/* Parses a .wl file and makes it the current workload (earlier ones stay allocated:
 * records may still point at their kernel names). err gets "FILE:LINE: message". */
int devemu_load_workload(const char *path, char *err, size_t errlen);
/* Runs the current workload once on the calling thread. */
int devemu_run(void);

/* Single runtime calls (each is one runtime API call, like one workload statement). */
int devemu_call(int generic);
int devemu_launch(const char *mangled, uint32_t grid_x, uint32_t block_x, uint64_t dur_ns, uint32_t stream);
int devemu_memcpy(int dir, uint64_t bytes, uint64_t dur_ns, uint32_t stream); /* dir: wl_copy_dir */
int devemu_memset(uint64_t bytes, uint32_t value, uint64_t dur_ns, uint32_t stream);
int devemu_sync_stream(uint32_t stream);
int devemu_sync_device(void);

/* A CPU operator (the workload's `op push/pop`): calls devtrace_annotate_push/pop when
 * the process has them, else the vendor's PushExternalCorrelationId(CUSTOM0, id). */
int devemu_op_push(const char *name, uint64_t id);
int devemu_op_pop(void);

/* Replaces the DEVEMU_FAULTS spec (same grammar) and re-arms the fault counters. */
int devemu_set_faults(const char *spec, char *err, size_t errlen);
/* Delivers pending buffers, then forgets the tracer's registration, enabled kinds, the
 * subscriber, drop counts and statistics; re-arms the faults. */
void devemu_reset(void);
void devemu_get_stats(devemu_stats *out);
/* "cupti", "mcpti", ... */
const char *devemu_vendor(void);
/* The emulated vendor's facts, as one JSON object into buf (cut short when it does not fit:
 * the length it needs is returned): {"vendor": "cupti", "records_cbid": true, "calls":
 * {"get_device": {"name": "cudaGetDevice", "cbid": 17}, ...}}: each generic call's runtime
 * name and callback id, and whether its runtime records carry the callback id. */
size_t devemu_describe(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* DEVEMU_H */
