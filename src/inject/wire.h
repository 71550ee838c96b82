/* wire.h: the collector -> recorder stream. The collector (inside the traced program)
 * ships what it captured as it goes; the recorder (devtrace record) rebuilds an offline
 * session from it. Both ends are the same build on the same machine, so events travel
 * as raw devtrace_event structs; every message is checked on receipt all the same.
 *
 * Message: u32 type, u32 reserved (0), u64 payload length, payload. */
#ifndef DT_WIRE_H
#define DT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/session.h"

#define DT_WIRE_VERSION 1u
#define DT_WIRE_MAX_PAYLOAD (64u << 20)

typedef enum dt_wire_type {
    DT_WIRE_HELLO = 1,  /* u32 version, u32 pid, then 3 NUL-terminated strings: backend, validation, runtime category, then unavailable reason */
    DT_WIRE_NAMES = 2,  /* repeated: u32 id, u32 len, bytes */
    DT_WIRE_EVENTS = 3, /* n * devtrace_event */
    DT_WIRE_CLOCK = 4,  /* u64 vendor ns, u64 host ns */
    DT_WIRE_WINDOW = 5, /* u64 start, u64 stop (0 = open) */
    DT_WIRE_DEVICE = 6, /* dt_device_props */
    DT_WIRE_NOTE = 7,   /* text */
    DT_WIRE_STATS = 8,  /* devtrace_stats (loss counters), u64 events dropped by the store bound */
    DT_WIRE_END = 9,    /* the session stopped and everything was shipped */
    DT_WIRE_RANK = 10,  /* i32 rank, i32 world size */
    DT_WIRE_TICKS = 11  /* u64 TSC ticks, u64 backend clock ns: a sample converting DT_EVENT_TICKS events */
} dt_wire_type;

/* Writer: whole messages, retrying short writes and EINTR. Returns 0 or -1 (errno). */
int dt_wire_send(int fd, uint32_t type, const void *payload, size_t len);
int dt_wire_send2(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen);

/* Reader: feeds bytes in any split; complete messages are applied to the session. */
typedef struct dt_wire_reader {
    unsigned char *buf; /* owned */
    size_t len, cap;
    uint32_t *name_map; /* collector name id -> local id (owned) */
    uint32_t name_map_len;
    int hello, ended;
    uint32_t pid;
    uint64_t malformed; /* messages rejected */
    uint64_t events;
} dt_wire_reader;

void dt_wire_reader_init(dt_wire_reader *r);
void dt_wire_reader_free(dt_wire_reader *r);
/* Returns 0, or -1 when out of memory. Malformed messages are counted and skipped;
 * a corrupt length stops the stream (counted). */
int dt_wire_feed(dt_wire_reader *r, dt_session *s, const void *data, size_t n);
/* Bytes of an incomplete last message (the program ended mid-message). */
size_t dt_wire_pending(const dt_wire_reader *r);

#endif
