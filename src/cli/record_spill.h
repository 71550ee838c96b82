/* record_spill.h: devtrace record's spill. What the traced processes ship (their wire
 * messages, wire.h) is written, as it arrives, to a file beside the trace, so that the
 * recorder keeps no event in memory while the program runs; at the end the trace is built
 * from the file, which is then removed. A recorder killed before that leaves the file, and
 * 'devtrace convert SPILL OUT' turns it into the trace (convert.c).
 *
 * The file, written sequentially, in this machine's byte order and devtrace_event layout
 * (it is read back by the same build of devtrace, as the wire's messages are):
 *   header (dt_spill_header, 96 bytes): "DTSPILL1", the spill and wire versions, the event
 *     size, flags, the program's start and the --delay/--duration window, the backend named;
 *   then records, each: u32 wire message type, u32 connection index (the order the
 *     recorder accepted the processes' connections in), u64 payload length, the payload
 *     (the wire message's), zero bytes to the next multiple of 8.
 * The records are in the order the recorder received the messages, so replaying them gives
 * the sessions the recorder would have built in memory, byte for byte the same trace. */
#ifndef DT_RECORD_SPILL_H
#define DT_RECORD_SPILL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define DT_SPILL_MAGIC "DTSPILL1"
#define DT_SPILL_VERSION 1u
#define DT_SPILL_SUFFIX ".spill"

enum {
    DT_SPILL_PER_PROCESS = 1u,  /* -o had %p or %r: the recorder wrote one trace per process */
    DT_SPILL_HAS_DELAY = 2u,    /* --delay */
    DT_SPILL_HAS_DURATION = 4u, /* --duration */
};

typedef struct dt_spill_header {
    char magic[8];         /* DT_SPILL_MAGIC, no NUL */
    uint32_t version;      /* DT_SPILL_VERSION */
    uint32_t wire_version; /* DT_WIRE_VERSION of the messages */
    uint32_t event_size;   /* sizeof(devtrace_event) */
    uint32_t flags;        /* DT_SPILL_* */
    uint64_t program_start_ns;
    uint64_t delay_ns, duration_ns;
    char backend[48]; /* --backend, NUL-terminated */
} dt_spill_header;
_Static_assert(sizeof(dt_spill_header) == 96, "the spill header is 96 bytes");

typedef struct dt_spill_record {
    uint32_t type;
    uint32_t connection;
    uint64_t length;
} dt_spill_record;
_Static_assert(sizeof(dt_spill_record) == 16, "a spill record's header is 16 bytes");

/* The writer: records go to a 1 MiB buffer, written out when it fills and at each
 * dt_spill_flush (the recorder's every poll round, so that a recorder killed loses at
 * most the round it was in). When a write fails (a full disk), the records from then on
 * stay in memory (buf), read after the file's at the end (write_errno says so: the file
 * alone is then not the whole run). */
typedef struct dt_spill {
    int fd; /* -1: none */
    char path[PATH_MAX];
    unsigned char *buf; /* owned: records not yet written (all of them after a failure) */
    size_t len, cap;
    uint64_t file_bytes; /* written to the file, the header included */
    uint64_t records;
    int write_errno; /* a write failed: 0 while none has */
} dt_spill;

/* Makes the spill for a trace at trace_path: "TRACE_PATH.spill", or when that name is taken
 * (a killed run's spill, which is never overwritten, or anything planted there)
 * "TRACE_PATH.spill.XXXXXX"; created new (O_EXCL|O_NOFOLLOW: a link there is never
 * followed). 0, or -1 with a line in why. */
int dt_spill_create(dt_spill *sp, const char *trace_path, const dt_spill_header *h, char *why, size_t whylen);
/* Appends one record. 0, or -1 when out of memory (the record is lost: the caller counts it). */
int dt_spill_append(dt_spill *sp, uint32_t connection, uint32_t type, const void *payload, size_t n);
/* Writes out what the buffer holds. */
void dt_spill_flush(dt_spill *sp);
/* Closes the file; removes it when remove is set. Safe on a zeroed or closed spill. */
void dt_spill_close(dt_spill *sp, int remove);

/* Reading: fn is called with every whole record, in order; a non-zero return stops. */
typedef int (*dt_spill_record_fn)(void *user, uint32_t connection, uint32_t type, const unsigned char *payload,
                                  size_t n);
/* The records of data[0, n) (after the header, or a writer's tail). Returns the bytes the
 * whole records took (n less an incomplete last record); *count gets their number. */
size_t dt_spill_walk(const unsigned char *data, size_t n, dt_spill_record_fn fn, void *user, uint64_t *count);
/* Whether the first n bytes of a file begin a spill. */
int dt_spill_recognises(const unsigned char *head, size_t n);
/* Checks a header read from a file of total bytes: 0, or -1 with a line in why. */
int dt_spill_check_header(const dt_spill_header *h, uint64_t total, char *why, size_t whylen);

#endif
