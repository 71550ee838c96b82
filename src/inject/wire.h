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

#define DT_WIRE_VERSION 3u
#define DT_WIRE_MAX_PAYLOAD (64u << 20)

typedef enum dt_wire_type {
    DT_WIRE_HELLO =
        1, /* u32 version, u32 pid, u32 parent pid, then NUL-terminated strings: backend, validation, runtime category, unavailable reason, command line */
    DT_WIRE_NAMES = 2,   /* repeated: u32 id, u32 len, bytes */
    DT_WIRE_EVENTS = 3,  /* n * devtrace_event */
    DT_WIRE_CLOCK = 4,   /* u64 vendor ns, u64 host ns */
    DT_WIRE_WINDOW = 5,  /* u64 start, u64 stop (0 = open): kept in the reader, the recorder sets the session's */
    DT_WIRE_DEVICE = 6,  /* dt_device_props */
    DT_WIRE_NOTE = 7,    /* text */
    DT_WIRE_STATS = 8,   /* u32 counter count, u32 0, u64 per DEVTRACE_STATS_COUNTERS counter, in its order */
    DT_WIRE_END = 9,     /* the session stopped and everything was shipped */
    DT_WIRE_RANK = 10,   /* i32 rank, i32 world size */
    DT_WIRE_TICKS = 11,  /* u64 TSC ticks, u64 backend clock ns: a sample converting DT_EVENT_TICKS events */
    DT_WIRE_FORKED = 12, /* u32 pid, u32 parent pid: a child forked from a traced process (its own connection) */
    DT_WIRE_CRASH = 13   /* dt_wire_crash: the program got a fatal signal; what it had captured was shipped */
} dt_wire_type;

/* The oldest an event gets in a traced process before it is shipped: a crash, _exit or
 * SIGKILL loses at most this much, and what the vendor or the device still held. */
#define DT_SHIP_AGE_MS 100

/* The command line a HELLO carries at most (bytes, with its NUL). */
#define DT_WIRE_COMMAND_MAX 256

typedef struct dt_wire_crash {
    uint64_t device_pending; /* device work the backend had not read back yet: lost */
    uint32_t signal;
    uint32_t pending_known; /* 1: device_pending is a count; 0: the backend cannot tell */
} dt_wire_crash;

/* The STATS payload of st's counters into out (DT_WIRE_STATS_BYTES); returns its length. */
#define DT_WIRE_STATS_BYTES (8u + 8u * DT_STATS_NCOUNTERS)
size_t dt_wire_stats_encode(const devtrace_stats *st, unsigned char *out);

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
    uint32_t pid, ppid;
    char command[DT_WIRE_COMMAND_MAX];
    uint32_t forked_pid, forked_ppid;   /* a FORKED report (pid 0: none) */
    int crashed;                        /* a CRASH message arrived */
    uint64_t window_start, window_stop; /* the process's window, host realtime ns (0: not set / open) */
    int32_t rank, world_size;           /* the process's RANK message (0, 0 before one) */
    dt_wire_crash crash;
    /* Where this process's events go in a session shared with other processes: device
     * lanes at device_base + device, correlation ids (non-zero) + correlation_base. */
    uint32_t device_base;
    uint64_t correlation_base;
    uint64_t malformed; /* messages rejected */
    uint64_t events;
    /* Capture windows (dt_wire_reader_keep_metadata): the stream feeds one session per window,
     * or none between windows. meta keeps what every session needs (names, clock and tick
     * samples, the hello, the rank); name_map then maps into meta, target_map from meta into
     * the session fed now (target). */
    dt_session *meta;     /* owned, or NULL */
    dt_session *target;   /* borrowed: the session target_map maps into */
    uint32_t *target_map; /* owned */
    uint32_t target_map_len;
    uint64_t discarded[DEVTRACE_KIND_COUNT]; /* events received while feeding no session, per kind */
    /* Handing messages on (devtrace record's spill): each complete message goes to
     * on_message, and only what the reader itself keeps (hello, rank, window, end, crash,
     * forked, the events counted in events) is read from it; no session is fed. A corrupt
     * header is handed on as type 0 with no payload (applied later: counted malformed).
     * on_message returns 0, or -1 (counted in handed_failed). */
    int (*on_message)(void *user, uint32_t type, const void *payload, size_t n);
    void *on_message_user;
    uint64_t handed_failed;
} dt_wire_reader;

void dt_wire_reader_init(dt_wire_reader *r);
void dt_wire_reader_free(dt_wire_reader *r);
/* Keeps the stream's metadata for several sessions in turn (capture windows): then s in
 * dt_wire_feed may change between calls, or be NULL (events discarded, counted per kind).
 * 0, or -1 when out of memory. */
int dt_wire_reader_keep_metadata(dt_wire_reader *r);
/* A session the stream feeds from now on (a reader that keeps its metadata): the clock and
 * tick samples, the hello's backend and the rank received so far are given to it. */
void dt_wire_reader_feed_into(dt_wire_reader *r, dt_session *s);
/* Returns 0, or -1 when out of memory. Malformed messages are counted and skipped;
 * a corrupt length stops the stream (counted). s may be NULL only for a reader that keeps
 * its metadata; for another, each message fed without a session is counted as malformed. */
int dt_wire_feed(dt_wire_reader *r, dt_session *s, const void *data, size_t n);
/* The same without the copy, for reading a socket straight into the reader's buffer:
 * dt_wire_reader_space makes room for at least want more bytes and returns where they go
 * (NULL when out of memory; dt_wire_reader_room says how many fit there), and
 * dt_wire_reader_commit takes the n bytes written there as fed. */
void *dt_wire_reader_space(dt_wire_reader *r, size_t want);
size_t dt_wire_reader_room(const dt_wire_reader *r);
void dt_wire_reader_commit(dt_wire_reader *r, dt_session *s, size_t n);
/* One whole message (type, payload of n bytes), as dt_wire_reader_commit applies each:
 * 0, or -1 when it is malformed (counted in r->malformed). */
int dt_wire_reader_apply(dt_wire_reader *r, dt_session *s, uint32_t type, const void *payload, size_t n);
/* Bytes of an incomplete last message (the program ended mid-message). */
size_t dt_wire_pending(const dt_wire_reader *r);

#endif
