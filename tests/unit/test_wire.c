/* test_wire.c: the recorder's end of the collector stream (src/inject/wire.c).
 *
 * Covers: events fed in any split (one byte at a time) arrive in the session's store with
 * their names mapped, their device lanes and correlation ids moved by the reader's bases
 * and the internal flow flag cleared, a host lane left where it is; an event of no kind
 * (the whole 16-bit field read) counted as malformed; a message still arriving waits in
 * the reader's buffer, in place, until its last byte; events past the session's store bound are counted as dropped
 * there; a corrupt header stops the stream and is counted; every loss counter of
 * DEVTRACE_STATS_COUNTERS the collector ships arrives added to the recorder's, and a STATS
 * message of another counter count is refused; a reader handing its messages on (the
 * recorder's spill) hands each whole message, keeps only its counts, and the messages applied
 * later (dt_wire_reader_apply) fill the session as a feeding reader does. The stream is what
 * dt_wire_send writes, read back from a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/store.h"
#include "inject/wire.h"
#include "unit_session.h"

typedef struct stream {
    unsigned char *bytes;
    size_t len;
} stream;

/* The bytes dt_wire_send writes for a NAMES message (id 5: "vadd") and an EVENTS one. */
static stream make_stream(const devtrace_event *events, size_t nevents)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    unsigned char names[8 + 4];
    uint32_t id = 5, len = 4;
    memcpy(names, &id, 4);
    memcpy(names + 4, &len, 4);
    memcpy(names + 8, "vadd", 4);
    assert_int_equal(dt_wire_send(fileno(f), DT_WIRE_NAMES, names, sizeof names), 0);
    assert_int_equal(dt_wire_send(fileno(f), DT_WIRE_EVENTS, events, nevents * sizeof *events), 0);
    stream s = {NULL, (size_t)lseek(fileno(f), 0, SEEK_END)};
    s.bytes = malloc(s.len);
    assert_non_null(s.bytes);
    assert_int_equal(pread(fileno(f), s.bytes, s.len, 0), (ssize_t)s.len);
    fclose(f);
    return s;
}

/* An event with a name, a device lane and a correlation id (unit_session.h's, and times). */
static devtrace_event event(int kind, uint32_t name_id, uint32_t device, uint64_t correlation)
{
    devtrace_event ev = ut_event(kind, 1000 + correlation, 2000 + correlation, correlation);
    ev.name_id = name_id;
    ev.device = device;
    return ev;
}

static dt_session *offline(void)
{
    devtrace_error err;
    dt_session *s = dt_session_new_offline("opencl", "emulated", NULL, &err);
    assert_non_null(s);
    return s;
}

typedef struct stored {
    devtrace_event ev[8];
    int n;
} stored;

static void keep(void *user, devtrace_event *ev)
{
    stored *st = user;
    if (st->n < 8)
        st->ev[st->n] = *ev;
    st->n++;
}

static stored stored_events(dt_session *s)
{
    stored st = {.n = 0};
    dt_store_visit(&s->store, keep, &st);
    return st;
}

static void events_arrive_mapped_in_any_split(void **state)
{
    (void)state;
    devtrace_event in[4] = {event(DEVTRACE_KIND_KERNEL, 5, 1, 3), event(DEVTRACE_KIND_NONE, 5, 1, 4),
                            event(DEVTRACE_KIND_RUNTIME, 5, 77, 3),
                            event(0x100 | DEVTRACE_KIND_KERNEL, 5, 1, 5)}; /* no kind: its low byte is one */
    in[0].flags = DT_EVENT_FLOW | DEVTRACE_EVENT_HOST_CLOCK;
    stream bytes = make_stream(in, 4);
    dt_session *s = offline();
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    r.device_base = 4;
    r.correlation_base = 100;
    for (size_t i = 0; i < bytes.len; i++)
        assert_int_equal(dt_wire_feed(&r, s, bytes.bytes + i, 1), 0);
    assert_int_equal(dt_wire_pending(&r), 0);
    assert_int_equal(r.malformed, 2); /* the events of no kind */
    assert_int_equal(r.events, 2);
    stored st = stored_events(s);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.ev[0].kind, DEVTRACE_KIND_KERNEL);
    assert_string_equal(dt_intern_get(&s->names, st.ev[0].name_id), "vadd");
    assert_int_equal(st.ev[0].device, 5);                        /* 1 + the device base */
    assert_int_equal(st.ev[0].correlation, 103);                 /* 3 + the correlation base */
    assert_int_equal(st.ev[0].flags, DEVTRACE_EVENT_HOST_CLOCK); /* the flow flag is the recorder's own */
    assert_int_equal(st.ev[0].start_ns, 1003);
    assert_int_equal(st.ev[0].end_ns, 2003);
    assert_int_equal(st.ev[1].kind, DEVTRACE_KIND_RUNTIME);
    assert_int_equal(st.ev[1].device, 77); /* a host lane (the process) stays */
    assert_int_equal(st.ev[1].correlation, 103);
    dt_wire_reader_free(&r);
    devtrace_close(s);
    free(bytes.bytes);
}

static void a_message_still_arriving_waits_in_place(void **state)
{
    (void)state;
    devtrace_event in[2] = {event(DEVTRACE_KIND_KERNEL, 5, 0, 1), event(DEVTRACE_KIND_KERNEL, 5, 0, 2)};
    stream bytes = make_stream(in, 2);
    dt_session *s = offline();
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    size_t first = bytes.len - 10; /* all but the last event's last 10 bytes */
    unsigned char *to = dt_wire_reader_space(&r, first);
    assert_non_null(to);
    assert_true(dt_wire_reader_room(&r) >= first);
    memcpy(to, bytes.bytes, first);
    dt_wire_reader_commit(&r, s, first);
    size_t events_message = 16 + 2 * sizeof(devtrace_event) - 10;
    assert_int_equal(dt_wire_pending(&r), events_message); /* the names were applied, the events wait */
    assert_int_equal(stored_events(s).n, 0);
    assert_ptr_equal(dt_wire_reader_space(&r, 10), r.buf + events_message); /* not moved */
    memcpy(r.buf + events_message, bytes.bytes + first, 10);
    dt_wire_reader_commit(&r, s, 10);
    assert_int_equal(dt_wire_pending(&r), 0);
    stored st = stored_events(s);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.ev[0].correlation, 1);
    assert_int_equal(st.ev[1].correlation, 2);
    dt_wire_reader_free(&r);
    devtrace_close(s);
    free(bytes.bytes);
}

static void events_past_the_store_bound_are_counted(void **state)
{
    (void)state;
    devtrace_event in[5];
    for (int i = 0; i < 5; i++)
        in[i] = event(DEVTRACE_KIND_KERNEL, 5, 0, (uint64_t)i + 1);
    stream bytes = make_stream(in, 5);
    dt_session *s = offline();
    s->store.max_events = 3;
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    assert_int_equal(dt_wire_feed(&r, s, bytes.bytes, bytes.len), 0);
    assert_int_equal(r.events, 5);
    assert_int_equal(dt_store_count(&s->store), 3);
    assert_int_equal(dt_store_dropped(&s->store), 2);
    stored st = stored_events(s);
    assert_int_equal(st.ev[2].correlation, 3); /* the first three, in order */
    dt_wire_reader_free(&r);
    devtrace_close(s);
    free(bytes.bytes);
}

static void a_corrupt_header_stops_the_stream(void **state)
{
    (void)state;
    devtrace_event in[1] = {event(DEVTRACE_KIND_KERNEL, 5, 0, 1)};
    stream bytes = make_stream(in, 1);
    size_t events_at = bytes.len - 16 - sizeof(devtrace_event);
    bytes.bytes[events_at + 4] = 1; /* the reserved word */
    dt_session *s = offline();
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    assert_int_equal(dt_wire_feed(&r, s, bytes.bytes, bytes.len), 0);
    assert_int_equal(r.malformed, 1);
    assert_int_equal(r.events, 0);
    assert_int_equal(dt_wire_pending(&r), 0); /* nothing after it is kept */
    assert_int_equal(stored_events(s).n, 0);
    dt_wire_reader_free(&r);
    devtrace_close(s);
    free(bytes.bytes);
}

/* What a reader with on_message (the recorder's spill) was handed: every message whole. */
typedef struct handed {
    uint32_t types[8];
    unsigned char bytes[4096];
    size_t sizes[8], used;
    int n;
} handed;

static int hand(void *user, uint32_t type, const void *payload, size_t n)
{
    handed *h = user;
    assert_true(h->n < 8 && h->used + n <= sizeof h->bytes);
    h->types[h->n] = type;
    h->sizes[h->n++] = n;
    memcpy(h->bytes + h->used, payload, n);
    h->used += n;
    return 0;
}

static void a_reader_handing_messages_on_keeps_only_its_own_part(void **state)
{
    (void)state;
    devtrace_event in[3] = {event(DEVTRACE_KIND_KERNEL, 5, 1, 3), event(DEVTRACE_KIND_NONE, 5, 1, 4),
                            event(DEVTRACE_KIND_RUNTIME, 5, 77, 3)};
    stream bytes = make_stream(in, 3);
    dt_session *s = offline();
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    handed h = {.n = 0};
    uint32_t names_before = dt_intern_count(&s->names);
    r.on_message = hand;
    r.on_message_user = &h;
    for (size_t i = 0; i < bytes.len; i++)
        dt_wire_reader_commit(&r, s, (memcpy(dt_wire_reader_space(&r, 1), bytes.bytes + i, 1), 1));
    assert_int_equal(h.n, 2); /* NAMES and EVENTS, each whole */
    assert_int_equal(h.types[0], DT_WIRE_NAMES);
    assert_int_equal(h.types[1], DT_WIRE_EVENTS);
    assert_int_equal(h.sizes[1], 3 * sizeof(devtrace_event));
    assert_memory_equal(h.bytes + h.sizes[0], in, sizeof in);
    assert_int_equal(r.events, 2);    /* counted: the two with a kind */
    assert_int_equal(r.malformed, 0); /* judged where the messages are applied */
    assert_int_equal(stored_events(s).n, 0);
    assert_int_equal(dt_intern_count(&s->names), names_before); /* "vadd" not interned yet */
    /* Applied later, in order, they give what a reader feeding the session gives. */
    dt_wire_reader later;
    dt_wire_reader_init(&later);
    assert_int_equal(dt_wire_reader_apply(&later, s, h.types[0], h.bytes, h.sizes[0]), 0);
    assert_int_equal(dt_wire_reader_apply(&later, s, h.types[1], h.bytes + h.sizes[0], h.sizes[1]), 0);
    assert_int_equal(dt_wire_reader_apply(&later, s, 0, NULL, 0), -1); /* a corrupt header, handed on as type 0 */
    assert_int_equal(later.events, 2);
    assert_int_equal(later.malformed, 2); /* the event of no kind, and the type 0 */
    stored st = stored_events(s);
    assert_int_equal(st.n, 2);
    assert_string_equal(dt_intern_get(&s->names, st.ev[0].name_id), "vadd");
    dt_wire_reader_free(&later);
    dt_wire_reader_free(&r);
    devtrace_close(s);
    free(bytes.bytes);
}

/* A STATS message (as the collector ships it: dt_wire_stats_encode) with every counter of the
 * table set to its own value, read into a session that counted some of its own. */
static void every_stats_counter_survives_the_wire(void **state)
{
    (void)state;
    devtrace_stats in;
    memset(&in, 0, sizeof in);
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++)
        *dt_stats_counter_at(&in, i) = 1000u + (uint64_t)i;
    unsigned char payload[DT_WIRE_STATS_BYTES];
    assert_int_equal(dt_wire_stats_encode(&in, payload), DT_WIRE_STATS_BYTES);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(dt_wire_send(fileno(f), DT_WIRE_STATS, payload, sizeof payload), 0);
    payload[0]--; /* one counter fewer than this build's table: refused */
    assert_int_equal(dt_wire_send(fileno(f), DT_WIRE_STATS, payload, sizeof payload), 0);
    size_t len = (size_t)lseek(fileno(f), 0, SEEK_END);
    unsigned char *bytes = malloc(len);
    assert_non_null(bytes);
    assert_int_equal(pread(fileno(f), bytes, len, 0), (ssize_t)len);
    fclose(f);
    dt_session *s = offline();
    s->stats.forked_untraced = 2; /* counted by the recorder itself */
    dt_wire_reader r;
    dt_wire_reader_init(&r);
    assert_int_equal(dt_wire_feed(&r, s, bytes, len), 0);
    assert_int_equal(r.malformed, 1);
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++) {
        uint64_t want = 1000u + (uint64_t)i + (i == DT_STATS_INDEX_forked_untraced ? 2 : 0);
        if (dt_stats_counter_value(&s->stats, i) != want)
            fail_msg("counter %s: %llu, not %llu", dt_stats_counters[i].field,
                     (unsigned long long)dt_stats_counter_value(&s->stats, i), (unsigned long long)want);
    }
    assert_int_equal(s->stats.notes_dropped, 1000 + DT_STATS_INDEX_notes_dropped);
    assert_int_equal(s->stats.unpaired_flows, 1007);
    dt_wire_reader_free(&r);
    devtrace_close(s);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(events_arrive_mapped_in_any_split),
        cmocka_unit_test(a_message_still_arriving_waits_in_place),
        cmocka_unit_test(events_past_the_store_bound_are_counted),
        cmocka_unit_test(a_corrupt_header_stops_the_stream),
        cmocka_unit_test(every_stats_counter_survives_the_wire),
        cmocka_unit_test(a_reader_handing_messages_on_keeps_only_its_own_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
