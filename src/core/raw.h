/* raw.h: the raw capture container (.dtraw): the vendor's completed buffers byte for
 * byte, the strings their records point to, clock samples, API names and the capture
 * window, so a trace taken on real hardware can be replayed offline through the same
 * decoders. Format (all integers little-endian), see docs/raw-format.md:
 *   header: "DTRAW1\0\0", u32 version (1), u32 vendor-name length, vendor name,
 *           u32 vendor API version
 *   chunks: 4-byte tag, u64 payload length, payload
 *     "BUF " u64 valid_size, bytes          "STR " u64 pointer, u32 length, bytes
 *     "CLK " u64 vendor ns, u64 host ns     "API " u32 domain, u32 cbid, u32 length, bytes
 *     "WIN " u64 start host ns, u64 stop host ns
 *   and what else the trace depends on (readers skip tags they do not know):
 *     "BUFM" u32 mode, u32 0, u64 valid_size, bytes: a buffer that arrived outside the
 *            window (mode 1) or in a buffer lent past the pool bound (mode 2)
 *     "CNT " u64 value, u32 length, name: a loss counted outside the buffers
 *            (a devtrace_stats field: dropped_vendor, refused_buffers, malformed_bytes)
 *     "DEV " a device's properties (docs/raw-format.md)
 *     "NOTE" the session's notes, one a chunk, in order
 *     "META" i32 rank, i32 world size, then u32 length + bytes each: backend name,
 *            validation text, runtime category
 *     "OPS " u64 start, u64 end, u64 external id, u32 pid, u32 tid, u32 length, name:
 *            an annotated CPU operator (devtrace_range_push/pop), host ns
 *     "KSZ " u32 kind, u32 size: the vendor's iterator stepped this many bytes over a
 *            record of a kind devtrace has no layout for (replay skips it the same way) */
#ifndef DT_RAW_H
#define DT_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "devtrace.h"
#include "session.h"

#define DT_RAW_VERSION 1u
#define DT_RAW_MAX_VENDOR 64u

/* BUF/BUFM modes: how live collection walked the buffer. */
typedef enum dt_raw_walk_mode {
    DT_RAW_BUFFER_DECODE = 0,        /* inside the window: decoded ("BUF ") */
    DT_RAW_BUFFER_OUT_OF_WINDOW = 1, /* completed outside the window: records counted out_of_window */
    DT_RAW_BUFFER_POOL_FULL = 2      /* lent past the pool bound: records counted dropped_pool_full */
} dt_raw_walk_mode;

typedef struct dt_raw_writer dt_raw_writer;

dt_raw_writer *dt_raw_open(const char *path, const char *vendor, uint32_t api_version, devtrace_error *err);
/* Each call appends one chunk and flushes it to the file (a killed or forked process
 * leaves whole chunks); thread-safe; a failed write is remembered and reported by
 * dt_raw_close. */
void dt_raw_buffer(dt_raw_writer *w, const void *data, uint64_t valid_size);
/* DT_RAW_BUFFER_DECODE writes "BUF ", the other modes "BUFM". */
void dt_raw_buffer_mode(dt_raw_writer *w, uint32_t mode, const void *data, uint64_t valid_size);
/* Records the string a record's pointer points to, once per pointer value. */
void dt_raw_string(dt_raw_writer *w, uint64_t pointer, const char *s);
void dt_raw_clock(dt_raw_writer *w, uint64_t vendor_ns, uint64_t host_ns);
void dt_raw_api_name(dt_raw_writer *w, uint32_t domain, uint32_t cbid, const char *name);
void dt_raw_window(dt_raw_writer *w, uint64_t start_ns, uint64_t stop_ns);
void dt_raw_counter(dt_raw_writer *w, const char *name, uint64_t value);
void dt_raw_device(dt_raw_writer *w, const dt_device_props *p);
void dt_raw_note(dt_raw_writer *w, const char *text);
void dt_raw_meta(dt_raw_writer *w, int32_t rank, int32_t world_size, const char *backend, const char *validation,
                 const char *runtime_category);
void dt_raw_kind_size(dt_raw_writer *w, uint32_t kind, uint32_t size);
/* ev is a DEVTRACE_KIND_CPU_OP event (host clock); name its name. */
void dt_raw_cpu_op(dt_raw_writer *w, const devtrace_event *ev, const char *name);
/* Closes (NULL is fine); returns 0 or DEVTRACE_EIO with err filled. */
int dt_raw_close(dt_raw_writer *w, devtrace_error *err);

/* What a META chunk says (strings point into the parsed bytes, not NUL-terminated). */
typedef struct dt_raw_meta_info {
    int32_t rank, world_size;
    const char *backend, *validation, *runtime_category;
    uint32_t backend_len, validation_len, runtime_category_len;
} dt_raw_meta_info;

/* Callbacks per chunk, each optional. Byte strings are not NUL-terminated. */
typedef struct dt_raw_visitor {
    void *user;
    void (*buffer)(void *user, const uint8_t *data, size_t valid_size);
    void (*string)(void *user, uint64_t pointer, const char *s, uint32_t len);
    void (*clock)(void *user, uint64_t vendor_ns, uint64_t host_ns);
    void (*api_name)(void *user, uint32_t domain, uint32_t cbid, const char *name, uint32_t len);
    void (*window)(void *user, uint64_t start_ns, uint64_t stop_ns);
    /* BUFM (buffer_mode is also called for BUF, with DT_RAW_BUFFER_DECODE, when set) */
    void (*buffer_mode)(void *user, uint32_t mode, const uint8_t *data, size_t valid_size);
    void (*counter)(void *user, const char *name, uint32_t len, uint64_t value);
    void (*device)(void *user, const dt_device_props *p);
    void (*note)(void *user, const char *text, uint32_t len);
    void (*meta)(void *user, const dt_raw_meta_info *m);
    void (*cpu_op)(void *user, uint64_t start_ns, uint64_t end_ns, uint64_t external_id, uint32_t pid, uint32_t tid,
                   const char *name, uint32_t len);
    void (*kind_size)(void *user, uint32_t kind, uint32_t size);
} dt_raw_visitor;

typedef struct dt_raw_info {
    char vendor[DT_RAW_MAX_VENDOR + 1];
    uint32_t api_version;
    uint64_t chunks, unknown_chunks;
    uint64_t buffers, buffer_bytes; /* BUF and BUFM chunks, and their valid bytes */
    int has_window;                 /* a WIN chunk was seen: the session stopped normally */
    int truncated;                  /* the last chunk was cut short (a capture that was killed) */
} dt_raw_info;

/* Parses a whole capture in memory, calling the visitor per chunk in file order.
 * Never reads outside [data, data + len). Returns 0, or DEVTRACE_EFORMAT with err
 * naming the offset and the problem. A truncated final chunk is not an error
 * (info->truncated); unknown tags are skipped and counted. */
int dt_raw_parse(const uint8_t *data, size_t len, const dt_raw_visitor *v, dt_raw_info *info, devtrace_error *err);

/* ---- replay (replay.c) ---- */

/* Decoding a capture's buffers: the backend that wrote them names its decoder in its
 * descriptor (dt_backend.raw_decoder; the CUPTI-family engine's serves every CUPTI-shaped
 * vendor), and replay reaches it through the backend registry only. */
typedef struct dt_raw_decoder {
    const char *engine; /* "CUPTI family" */
    /* Prepares decoding of backend b's buffers (as version api_version) into s, with the
     * backend's b->raw_tables; NULL with err when it cannot. */
    void *(*open)(dt_session *s, const dt_backend *b, uint32_t api_version, devtrace_error *err);
    /* A string a record pointed to, and the size of a kind without a layout (both before
     * any buffer is given). */
    void (*string)(void *st, uint64_t pointer, const char *s, uint32_t len);
    void (*kind_size)(void *st, uint32_t kind, uint32_t size);
    void (*buffer)(void *st, uint32_t mode, const uint8_t *data, size_t valid_size);
    /* A name the vendor's resolver gave after the run (after every buffer). */
    void (*api_name)(void *st, uint32_t domain, uint32_t cbid, const char *name, uint32_t len);
    void (*close)(void *st);
    /* Do two backends' buffers hold the same records (layouts and kind numbers)? 1 yes, 0 no,
     * -1 when one is NULL (not compiled in) or not this engine's. */
    int (*same_records)(const dt_backend *a, const dt_backend *b);
} dt_raw_decoder;

typedef struct dt_replay_options {
    const char *backend; /* decode as this backend's vendor; NULL: the capture's vendor */
} dt_replay_options;

/* Builds an offline session from a capture in memory: the session's metadata, devices,
 * notes, clock samples, window and CPU operators as captured, and every buffer decoded
 * through the engine's decoders and scanner as in live collection, by the decoder of the
 * backend of t that the capture (or opt->backend) names. *out is stopped, ready to drain
 * or write. info (optional) receives what the container held. backends/backend.h has the
 * same with the compiled-in backends (dt_replay_capture, dt_replay_file). */
int dt_replay_capture_with(const dt_backend_table *t, const uint8_t *data, size_t len, const dt_replay_options *opt,
                           dt_session **out, dt_raw_info *info, devtrace_error *err);
/* The same from a file. */
int dt_replay_file_with(const dt_backend_table *t, const char *path, const dt_replay_options *opt, dt_session **out,
                        dt_raw_info *info, devtrace_error *err);

#endif
