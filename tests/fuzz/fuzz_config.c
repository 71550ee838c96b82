/* fuzz_config.c: libFuzzer target for the configuration and environment parser: dt_parse_u64
 * (every numeric setting) against a reference of what it must accept, and devtrace_open with
 * the input's values in $DEVTRACE_BACKEND, $DEVTRACE_MAX_EVENTS, $RANK, $WORLD_SIZE and the
 * config's backend name and bound. A session that opens runs a short life on the "none" backend
 * (start, external ids and ranges pushed and popped as the input says, stop) and its trace must
 * be strict JSON; one that does not must say why in one line with an error code (values quoted in
 * the message may bring their own newlines).
 *
 * Input: NUL-separated fields: number text, backend, max events, rank, world size, range name,
 * then u8 flags and u64 ids. Real backends' names are replaced with "none" (probing a vendor
 * library per execution is not what this target tests). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "fuzz_common.h"

/* What dt_parse_u64 must accept: one or more ASCII digits, nothing else, at most UINT64_MAX. */
static int reference_parse(const char *t, uint64_t *out)
{
    uint64_t v = 0;
    if (!*t)
        return -1;
    for (; *t; t++) {
        if (*t < '0' || *t > '9')
            return -1;
        unsigned d = (unsigned)(*t - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* The next NUL-terminated field of the input (at most 256 bytes), or "" at the end. */
static void next_field(fz_input *in, char *out, size_t cap)
{
    size_t n = 0;
    while (in->n) {
        uint8_t c = fz_u8(in);
        if (c == 0)
            break;
        if (n + 1 < cap)
            out[n++] = (char)c;
    }
    out[n] = '\0';
}

static void set_or_unset(const char *name, const char *value, int set)
{
    if (set)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static size_t newlines(const char *t)
{
    size_t n = 0;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

/* A failure has a code and a message of one line (a value quoted in it may bring its own newlines). */
static void check_error(const devtrace_error *err, size_t quoted_newlines)
{
    if (err->code >= 0 || !err->message[0] || newlines(err->message) > quoted_newlines) {
        fprintf(stderr, "fuzz oracle: devtrace_open failed without a one-line reason (code %d): '%s'\n", err->code,
                err->message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    char number[257], backend[257], max_events[257], rank[257], world[257], range[257];
    next_field(&in, number, sizeof number);
    next_field(&in, backend, sizeof backend);
    next_field(&in, max_events, sizeof max_events);
    next_field(&in, rank, sizeof rank);
    next_field(&in, world, sizeof world);
    next_field(&in, range, sizeof range);
    uint8_t flags = fz_u8(&in);

    uint64_t got = 0, want = 0;
    int rc = dt_parse_u64(number, &got), ref = reference_parse(number, &want);
    if (rc != ref || (rc == 0 && got != want)) {
        fprintf(stderr, "fuzz oracle: dt_parse_u64(\"%s\") = %d (%llu), expected %d (%llu)\n", number, rc,
                (unsigned long long)got, ref, (unsigned long long)want);
        abort();
    }

    if (!strcmp(backend, "auto") || (dt_backend_find(backend) && strcmp(backend, "none") != 0))
        strcpy(backend, "none");
    unsetenv("DEVTRACE_RAW");
    set_or_unset("DEVTRACE_BACKEND", backend, flags & 1);
    set_or_unset("DEVTRACE_MAX_EVENTS", max_events, flags & 2);
    set_or_unset("RANK", rank, flags & 4);
    set_or_unset("WORLD_SIZE", world, flags & 8);
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = flags & 1 ? NULL : backend[0] ? backend : "none";
    cfg.max_events = flags & 0x10 ? fz_bytes_u64(&in, 2) : 0;
    if (flags & 0x20)
        cfg.rank = (int)fz_bytes_u64(&in, 1) - 1;
    devtrace_error err;
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        check_error(&err, newlines(backend) + newlines(max_events) + newlines(rank) + newlines(world));
        return 0;
    }
    if (devtrace_start(s) != 0)
        abort();
    while (in.n) {
        uint8_t op = fz_u8(&in);
        uint64_t id = fz_bytes_u64(&in, 8);
        switch (op % 4) {
        case 0:
            devtrace_push_external(s, id);
            break;
        case 1:
            devtrace_pop_external(s, &id);
            break;
        case 2:
            devtrace_range_push(s, range, id);
            break;
        default:
            devtrace_range_pop(s);
            break;
        }
    }
    if (devtrace_stop(s) != 0)
        abort();
    fz_check_trace(s);
    devtrace_close(s);
    return 0;
}
