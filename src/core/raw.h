/* raw.h: the raw capture container (.dtraw): the vendor's completed buffers byte for
 * byte, the strings their records point to, clock samples, API names and the capture
 * window, so a trace taken on real hardware can be replayed offline through the same
 * decoders. Format (all integers little-endian), see docs/raw-format.md:
 *   header: "DTRAW1\0\0", u32 version (1), u32 vendor-name length, vendor name,
 *           u32 vendor API version
 *   chunks: 4-byte tag, u64 payload length, payload
 *     "BUF " u64 valid_size, bytes          "STR " u64 pointer, u32 length, bytes
 *     "CLK " u64 vendor ns, u64 host ns     "API " u32 domain, u32 cbid, u32 length, bytes
 *     "WIN " u64 start host ns, u64 stop host ns */
#ifndef DT_RAW_H
#define DT_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "devtrace.h"

#define DT_RAW_VERSION 1u
#define DT_RAW_MAX_VENDOR 64u

typedef struct dt_raw_writer dt_raw_writer;

dt_raw_writer *dt_raw_open(const char *path, const char *vendor, uint32_t api_version, devtrace_error *err);
/* Each call appends one chunk; thread-safe; a failed write is remembered and reported
 * by dt_raw_close. */
void dt_raw_buffer(dt_raw_writer *w, const void *data, uint64_t valid_size);
/* Records the string a record's pointer points to, once per pointer value. */
void dt_raw_string(dt_raw_writer *w, uint64_t pointer, const char *s);
void dt_raw_clock(dt_raw_writer *w, uint64_t vendor_ns, uint64_t host_ns);
void dt_raw_api_name(dt_raw_writer *w, uint32_t domain, uint32_t cbid, const char *name);
void dt_raw_window(dt_raw_writer *w, uint64_t start_ns, uint64_t stop_ns);
/* Closes (NULL is fine); returns 0 or DEVTRACE_EIO with err filled. */
int dt_raw_close(dt_raw_writer *w, devtrace_error *err);

typedef struct dt_raw_visitor {
    void *user;
    void (*buffer)(void *user, const uint8_t *data, size_t valid_size);
    void (*string)(void *user, uint64_t pointer, const char *s, uint32_t len);
    void (*clock)(void *user, uint64_t vendor_ns, uint64_t host_ns);
    void (*api_name)(void *user, uint32_t domain, uint32_t cbid, const char *name, uint32_t len);
    void (*window)(void *user, uint64_t start_ns, uint64_t stop_ns);
} dt_raw_visitor;

typedef struct dt_raw_info {
    char vendor[DT_RAW_MAX_VENDOR + 1];
    uint32_t api_version;
    uint64_t chunks, unknown_chunks;
    int truncated; /* the last chunk was cut short (a capture that was killed) */
} dt_raw_info;

/* Parses a whole capture in memory, calling the visitor per chunk in file order.
 * Never reads outside [data, data + len). Returns 0, or DEVTRACE_EFORMAT with err
 * naming the offset and the problem. A truncated final chunk is not an error
 * (info->truncated); unknown tags are skipped and counted. */
int dt_raw_parse(const uint8_t *data, size_t len, const dt_raw_visitor *v, dt_raw_info *info, devtrace_error *err);

#endif
