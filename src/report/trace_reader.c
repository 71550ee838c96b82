/* trace_reader.c: the streaming Kineto-JSON reader (trace_reader.h): the Kineto event model on
 * the JSON scanner (json_scan.h). The text is read into a buffer in pieces; it is parsed one
 * unit at a time: one element of traceEvents, one other top-level member (key and value), or
 * one piece of the top level's punctuation. A unit that runs past the data read so far is
 * parsed again from its start once more is read (the buffer keeps the unit's bytes: it only
 * grows for a unit larger than itself, up to DT_TR_MAX_UNIT). Here: which members of an event
 * and of its args are read and how (times to integer nanoseconds, pid/tid as text and number),
 * the kinds of "cat", the top-level members besides traceEvents (distributedInfo,
 * baseTimeNanoseconds, the devtrace section), the top level's states, and the input (a plain
 * file by read(2), gzip through zlib, or a buffer in memory). */
#include "trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "json_scan.h"

#define READ_PIECE (1u << 20) /* small enough to be parsed from the cache right after the copy */

/* Where the top level stands between units. */
typedef enum top_state {
    S_START,        /* before the top-level '{' (or '[') */
    S_FIRST_KEY,    /* after '{': a member or '}' */
    S_KEY,          /* after ',': a member */
    S_AFTER_MEMBER, /* ',' or '}' */
    S_EV_FIRST,     /* after traceEvents' '[': an event or ']' */
    S_EV_NEXT,      /* after ',' in traceEvents: an event */
    S_EV_AFTER,     /* ',' or ']' */
    S_END,          /* after the closing '}' (or ']'): only whitespace */
    S_FINISHED
} top_state;

typedef struct reader {
    json_scan scan;   /* the window on buf and the scratch */
    const char *name; /* borrowed: for errors */
    gzFile gz;        /* owned: a gzip file, or NULL */
    int fd;           /* owned: a plain file (read directly, no copy through zlib), or -1 */
    const char *mem;  /* borrowed */
    size_t mem_len, mem_pos, piece;
    int eof;
    char *buf; /* owned: cap bytes of text and JSON_SCAN_PAD zero bytes after the data */
    size_t cap, len, pos;
    uint64_t base_offset; /* offset in the text of buf[0] */
    char *scratch;        /* owned: decoded strings of the current unit, cap bytes */
    top_state state;
    int top_is_array;
    dt_tr_info *info;
    dt_tr_info local_info;
    dt_tr_event_fn fn;
    void *user;
    int stop_value;
    const char *unit_start;
    char *err;
    size_t errlen;
} reader;

static const char *const kind_names[DT_TR_KIND_COUNT] = {
    "kernel", "memcpy", "memset", "runtime", "cpu_op", "python_function", "user_annotation", "gpu_user_annotation",
    "sync",   "other"};

const char *dt_tr_kind_name(dt_tr_kind kind)
{
    return (unsigned)kind < DT_TR_KIND_COUNT ? kind_names[kind] : "other";
}

/* The n bytes at s are lit (lower case), ignoring the case of s. */
static int equals_nocase(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return 0;
    }
    return 1;
}

static int ends_with(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len >= n && !memcmp(s + len - n, lit, n);
}

/* Kineto's categories (the names of libkineto's ActivityType, include/ActivityType.h) and the
 * capitalised ones of older exports; any other "..._runtime" or "..._driver" is a runtime
 * call. Device work: kernel and mtia_ccp_events (MTIA's on-device ops) are kernels,
 * gpu_memcpy / gpu_memset copies and sets; gpu_user_annotation is an annotation on a device
 * stream; cuda_sync, cuda_event and xpu_sync are device-side waits (counted, drawn, not work).
 * hpu_op is, by Kineto's comment, "HPU host side runtime event". The other names
 * (external_correlation, cpu_instant_event, overhead, mtia_insight, mtia_counters,
 * cuda_profiler_range, collective_comm, xpu_scope_profiler, hardware_counters) are "other". */
#define CAT(text, kind) text, sizeof text - 1, kind
static const struct {
    const char *text;
    size_t len;
    dt_tr_kind kind;
} cat_kinds[] = {
    {CAT("kernel", DT_TR_KERNEL)},
    {CAT("gpu_memcpy", DT_TR_MEMCPY)},
    {CAT("memcpy", DT_TR_MEMCPY)},
    {CAT("gpu_memset", DT_TR_MEMSET)},
    {CAT("memset", DT_TR_MEMSET)},
    {CAT("cpu_op", DT_TR_CPU_OP)},
    {CAT("operator", DT_TR_CPU_OP)},
    {CAT("python_function", DT_TR_PYTHON)},
    {CAT("user_annotation", DT_TR_ANNOTATION)},
    {CAT("gpu_user_annotation", DT_TR_GPU_ANNOTATION)},
    {CAT("runtime", DT_TR_RUNTIME)},
    {CAT("mtia_ccp_events", DT_TR_KERNEL)},
    {CAT("hpu_op", DT_TR_RUNTIME)},
    {CAT("cuda_sync", DT_TR_SYNC)},
    {CAT("cuda_event", DT_TR_SYNC)},
    {CAT("xpu_sync", DT_TR_SYNC)},
};
#undef CAT

dt_tr_kind dt_tr_kind_of_cat(const char *cat, size_t len)
{
    for (size_t i = 0; i < sizeof cat_kinds / sizeof cat_kinds[0]; i++)
        if (cat_kinds[i].len == len && equals_nocase(cat, cat_kinds[i].text, len))
            return cat_kinds[i].kind;
    if (ends_with(cat, len, "_runtime") || ends_with(cat, len, "_driver"))
        return DT_TR_RUNTIME;
    return DT_TR_OTHER;
}

/* ---- the members of an event ---- */

static inline int key_is(const dt_tr_str *key, const char *lit, size_t n)
{
    return key->len == n && !memcmp(key->s, lit, n);
}
#define KEY_IS(key, lit) key_is((key), "" lit, sizeof("" lit) - 1)

static inline int starts_number(char c)
{
    return c == '-' || json_is_digit(c);
}

/* An integer member: sets *out and the bit when the value is a number, skips it otherwise. */
static int integer_member(json_scan *s, const char **pp, int64_t *out, uint32_t *has, uint32_t bit)
{
    if (starts_number(**pp)) {
        json_number n;
        int rc = json_read_number(s, pp, &n);
        if (rc == JSON_OK) {
            *out = n.integer;
            *has |= bit;
        }
        return rc;
    }
    return dt_json_skip_value(s, pp, 1);
}

static int string_member(json_scan *s, const char **pp, dt_tr_str *out)
{
    if (**pp == '"')
        return json_read_string(s, pp, out);
    return dt_json_skip_value(s, pp, 1);
}

/* The digits a string ends with ("stream 7" -> 7). */
static int trailing_number(const dt_tr_str *str, int64_t *out)
{
    size_t i = str->len;
    while (i > 0 && json_is_digit(str->s[i - 1]) && str->len - i < 18)
        i--;
    if (i == str->len)
        return 0;
    int64_t v = 0;
    for (size_t k = i; k < str->len; k++)
        v = v * 10 + (str->s[k] - '0');
    *out = v;
    return 1;
}

/* pid / tid: a number or a string, kept as text, and as a number when it has one. */
static int lane_member(json_scan *s, const char **pp, dt_tr_str *text, int64_t *num, uint32_t *has, uint32_t text_bit,
                       uint32_t num_bit)
{
    const char *p = *pp;
    if (starts_number(*p)) {
        json_number n;
        int rc = json_read_number(s, pp, &n);
        if (rc == JSON_OK) {
            text->s = p;
            text->len = (size_t)(*pp - p);
            *num = n.integer;
            *has |= text_bit | num_bit;
        }
        return rc;
    }
    if (*p == '"') {
        int rc = json_read_string(s, pp, text);
        if (rc == JSON_OK) {
            *has |= text_bit;
            if (trailing_number(text, num))
                *has |= num_bit;
        }
        return rc;
    }
    return dt_json_skip_value(s, pp, 1);
}

static int args_member(json_scan *s, const dt_tr_str *key, const char **pp, void *ctx)
{
    dt_tr_event *ev = ctx;
    switch (key->len) {
    case 11:
        if (KEY_IS(key, "External id"))
            return integer_member(s, pp, &ev->external_id, &ev->has, DT_TR_HAS_EXTERNAL_ID);
        if (KEY_IS(key, "correlation"))
            return integer_member(s, pp, &ev->correlation, &ev->has, DT_TR_HAS_CORRELATION);
        break;
    case 6:
        if (KEY_IS(key, "device"))
            return integer_member(s, pp, &ev->device, &ev->has, DT_TR_HAS_DEVICE);
        if (KEY_IS(key, "stream"))
            return integer_member(s, pp, &ev->stream, &ev->has, DT_TR_HAS_STREAM);
        break;
    case 5:
        if (KEY_IS(key, "bytes"))
            return integer_member(s, pp, &ev->bytes, &ev->has, DT_TR_HAS_BYTES);
        break;
    case 4:
        if (KEY_IS(key, "name"))
            return string_member(s, pp, &ev->meta_name);
        break;
    }
    return dt_json_skip_value(s, pp, 1);
}

/* "ts" / "dur": microseconds in the text, integer nanoseconds within +-DT_TR_TIME_MAX. A value
 * that is not a number, or is beyond that, leaves the field absent with a bit that says why
 * (the _NOT_NUMBER bit is the presence bit << 12, the _OUT_OF_RANGE bit << 14). */
static int time_member(json_scan *s, const char **pp, int64_t *out, uint32_t *has, uint32_t bit)
{
    if (starts_number(**pp)) {
        json_number n;
        int rc = json_read_number(s, pp, &n);
        if (rc == JSON_OK) {
            if (n.milli > DT_TR_TIME_MAX || n.milli < -DT_TR_TIME_MAX) {
                *has |= bit << 14;
            } else {
                *out = n.milli;
                *has |= bit;
            }
        }
        return rc;
    }
    *has |= bit << 12;
    return dt_json_skip_value(s, pp, 1);
}

/* "id": a flow's number, or a string of at most 18 digits. */
static int flow_id_member(json_scan *s, const char **pp, dt_tr_event *ev)
{
    if (**pp != '"')
        return integer_member(s, pp, &ev->flow_id, &ev->has, DT_TR_HAS_FLOW_ID);
    dt_tr_str str;
    int rc = json_read_string(s, pp, &str);
    if (rc == JSON_OK && str.len && trailing_number(&str, &ev->flow_id) && str.len <= 18 && json_is_digit(str.s[0]))
        ev->has |= DT_TR_HAS_FLOW_ID;
    return rc;
}

/* "ph" / "bp": the first character of the string. */
static int letter_member(json_scan *s, const char **pp, char *out)
{
    if (**pp != '"')
        return dt_json_skip_value(s, pp, 1);
    dt_tr_str str;
    int rc = json_read_string(s, pp, &str);
    if (rc == JSON_OK && str.len)
        *out = str.s[0];
    return rc;
}

static int event_member(json_scan *s, const dt_tr_str *key, const char **pp, void *ctx)
{
    dt_tr_event *ev = ctx;
    switch (key->len) {
    case 2:
        if (KEY_IS(key, "ph"))
            return letter_member(s, pp, &ev->ph);
        if (KEY_IS(key, "ts"))
            return time_member(s, pp, &ev->ts_ns, &ev->has, DT_TR_HAS_TS);
        if (KEY_IS(key, "id"))
            return flow_id_member(s, pp, ev);
        if (KEY_IS(key, "bp"))
            return letter_member(s, pp, &ev->bp);
        break;
    case 3:
        if (KEY_IS(key, "cat"))
            return string_member(s, pp, &ev->cat);
        if (KEY_IS(key, "dur"))
            return time_member(s, pp, &ev->dur_ns, &ev->has, DT_TR_HAS_DUR);
        if (KEY_IS(key, "pid"))
            return lane_member(s, pp, &ev->pid, &ev->pid_num, &ev->has, DT_TR_HAS_PID, DT_TR_HAS_PID_NUM);
        if (KEY_IS(key, "tid"))
            return lane_member(s, pp, &ev->tid, &ev->tid_num, &ev->has, DT_TR_HAS_TID, DT_TR_HAS_TID_NUM);
        break;
    case 4:
        if (KEY_IS(key, "name"))
            return string_member(s, pp, &ev->name);
        if (KEY_IS(key, "args")) {
            if (**pp == '{')
                return json_object(s, pp, args_member, ev);
            return dt_json_skip_value(s, pp, 1);
        }
        break;
    }
    return dt_json_skip_value(s, pp, 1);
}

static uint64_t offset_of(const reader *r, const char *at)
{
    return r->base_offset + (uint64_t)(at - r->buf);
}

static int parse_event(reader *r, const char **pp)
{
    dt_tr_event ev;
    memset(&ev, 0, sizeof ev);
    ev.offset = offset_of(r, *pp);
    if (**pp != '{')
        return json_bad(&r->scan, *pp, "an event (an object, '{')");
    int rc = json_object(&r->scan, pp, event_member, &ev);
    if (rc != JSON_OK)
        return rc;
    ev.kind = ev.cat.len ? dt_tr_kind_of_cat(ev.cat.s, ev.cat.len) : DT_TR_OTHER;
    r->info->events++;
    if (r->fn) {
        int stop = r->fn(&ev, r->user);
        if (stop) {
            r->stop_value = stop;
            return JSON_STOP;
        }
    }
    return JSON_OK;
}

/* ---- the top-level members besides traceEvents ---- */

static char *dup_str(const dt_tr_str *str)
{
    char *c = malloc(str->len + 1);
    if (c) {
        memcpy(c, str->s, str->len);
        c[str->len] = 0;
    }
    return c;
}

static void clear_devtrace(dt_tr_info *info)
{
    free(info->backend);
    free(info->validation);
    info->backend = info->validation = NULL;
    for (int i = 0; i < info->ncounters; i++)
        free(info->counters[i].path);
    for (int i = 0; i < info->nnotes; i++)
        free(info->notes[i]);
    info->ncounters = info->nnotes = 0;
}

static void add_counter(dt_tr_info *info, const dt_tr_str *outer, const dt_tr_str *inner, int64_t value)
{
    if (info->ncounters >= DT_TR_MAX_COUNTERS)
        return;
    size_t n = outer->len + (inner ? inner->len + 1 : 0);
    char *path = malloc(n + 1);
    if (!path)
        return;
    memcpy(path, outer->s, outer->len);
    if (inner) {
        path[outer->len] = '.';
        memcpy(path + outer->len + 1, inner->s, inner->len);
    }
    path[n] = 0;
    info->counters[info->ncounters].path = path;
    info->counters[info->ncounters++].value = value;
}

typedef struct counter_group {
    dt_tr_info *info;
    dt_tr_str outer; /* points into the buffer: the unit is parsed at once */
} counter_group;

static int counter_member(json_scan *s, const dt_tr_str *key, const char **pp, void *ctx)
{
    counter_group *g = ctx;
    if (starts_number(**pp)) {
        json_number n;
        int rc = json_read_number(s, pp, &n);
        if (rc == JSON_OK)
            add_counter(g->info, &g->outer, key, n.integer);
        return rc;
    }
    return dt_json_skip_value(s, pp, 1);
}

/* The devtrace section's "notes": an array of strings (anything else in it is skipped). */
static int notes_array(json_scan *s, const char **pp, dt_tr_info *info)
{
    const char *p = json_skip_ws(*pp + 1);
    int rc, closed = 0;
    if (*p == ']') {
        *pp = p + 1;
        return JSON_OK;
    }
    if (p >= s->end)
        return json_need(s, "a note or ']'");
    while (!closed) {
        if (*p == '"') {
            dt_tr_str note;
            if ((rc = json_read_string(s, &p, &note)) != JSON_OK)
                return rc;
            if (info->nnotes < DT_TR_MAX_NOTES && (info->notes[info->nnotes] = dup_str(&note)))
                info->nnotes++;
        } else if ((rc = dt_json_skip_value(s, &p, 2)) != JSON_OK) {
            return rc;
        }
        if ((rc = json_separator(s, &p, ']', "',' or ']' after a note", "a note after ','", &closed)) != JSON_OK)
            return rc;
    }
    *pp = p;
    return JSON_OK;
}

static int devtrace_member(json_scan *s, const dt_tr_str *key, const char **pp, void *ctx)
{
    dt_tr_info *info = ctx;
    int rc;
    if ((KEY_IS(key, "backend") || KEY_IS(key, "validation")) && **pp == '"') {
        dt_tr_str str;
        if ((rc = json_read_string(s, pp, &str)) != JSON_OK)
            return rc;
        char **slot = key->s[0] == 'b' ? &info->backend : &info->validation;
        free(*slot);
        *slot = dup_str(&str);
        return JSON_OK;
    }
    if (KEY_IS(key, "notes") && **pp == '[')
        return notes_array(s, pp, info);
    if (**pp == '{') {
        /* The key stays valid: the members' strings go after it in the scratch. */
        counter_group g = {info, *key};
        return json_object(s, pp, counter_member, &g);
    }
    if (starts_number(**pp)) {
        json_number n;
        if ((rc = json_read_number(s, pp, &n)) == JSON_OK)
            add_counter(info, key, NULL, n.integer);
        return rc;
    }
    return dt_json_skip_value(s, pp, 1);
}

static int distributed_member(json_scan *s, const dt_tr_str *key, const char **pp, void *ctx)
{
    dt_tr_info *info = ctx;
    uint32_t has = 0;
    if (KEY_IS(key, "rank")) {
        int rc = integer_member(s, pp, &info->rank, &has, 1);
        if (has)
            info->has_rank = 1;
        return rc;
    }
    if (KEY_IS(key, "world_size"))
        return integer_member(s, pp, &info->world_size, &has, 1);
    return dt_json_skip_value(s, pp, 1);
}

/* A top-level member from its name: key ':' value, or for traceEvents key ':' '['. */
static int parse_member(reader *r, const char **pp)
{
    json_scan *s = &r->scan;
    const char *p = *pp;
    dt_tr_str key;
    int rc = json_member_name(s, &p, &key, "a member name (a string) of the top-level object",
                              "a member name (a string) of the top-level object");
    if (rc != JSON_OK)
        return rc;
    if (KEY_IS(&key, "traceEvents")) {
        if (*p != '[')
            return json_bad(s, p, "'[' (traceEvents is an array of events)");
        *pp = p + 1;
        r->state = S_EV_FIRST;
        r->info->has_trace_events = 1;
        return JSON_OK;
    }
    if (KEY_IS(&key, "devtrace") && *p == '{') {
        clear_devtrace(r->info); /* a unit parsed again starts from nothing */
        r->info->has_devtrace = 1;
        rc = json_object(s, &p, devtrace_member, r->info);
    } else if (KEY_IS(&key, "distributedInfo") && *p == '{') {
        rc = json_object(s, &p, distributed_member, r->info);
    } else if (KEY_IS(&key, "baseTimeNanoseconds") && starts_number(*p)) {
        json_number n;
        if ((rc = json_read_number(s, &p, &n)) == JSON_OK) {
            r->info->base_time_ns = n.integer;
            r->info->has_base_time = 1;
        }
    } else {
        rc = dt_json_skip_value(s, &p, 1);
    }
    if (rc != JSON_OK)
        return rc;
    *pp = p;
    r->state = S_AFTER_MEMBER;
    return JSON_OK;
}

/* ---- the top level ---- */

/* One unit from *pp. */
static int step(reader *r, const char **pp)
{
    json_scan *s = &r->scan;
    const char *p = json_skip_ws(*pp);
    r->unit_start = p;
    if (p >= s->end) {
        static const char *const expected[] = {
            [S_START] = "'{' (a trace is a JSON object with traceEvents)",
            [S_FIRST_KEY] = "a member or '}'",
            [S_KEY] = "a member after ','",
            [S_AFTER_MEMBER] = "',' or '}' after a top-level member",
            [S_EV_FIRST] = "an event or ']'",
            [S_EV_NEXT] = "an event after ','",
            [S_EV_AFTER] = "',' or ']' after an event",
            [S_END] = "the end of the file",
            [S_FINISHED] = "the end of the file",
        };
        *pp = p;
        if (r->state == S_END) {
            if (!r->eof)
                return json_need(s, expected[S_END]);
            r->state = S_FINISHED;
            return JSON_OK;
        }
        return json_need(s, expected[r->state]);
    }
    int rc, closed = 0;
    switch (r->state) {
    case S_START:
        if (*p == '{') {
            r->state = S_FIRST_KEY;
        } else if (*p == '[') {
            r->top_is_array = 1;
            r->info->has_trace_events = 1;
            r->state = S_EV_FIRST;
        } else {
            return json_bad(s, p, "'{' (a trace is a JSON object with traceEvents)");
        }
        *pp = p + 1;
        return JSON_OK;
    case S_FIRST_KEY:
        if (*p == '}') {
            r->info->top_end = offset_of(r, p);
            r->state = S_END;
            *pp = p + 1;
            return JSON_OK;
        }
        /* fall through */
    case S_KEY:
        if ((rc = parse_member(r, &p)) == JSON_OK)
            *pp = p;
        return rc;
    case S_AFTER_MEMBER:
        rc = json_separator(s, &p, '}', "',' or '}' after a top-level member", "a member after ','", &closed);
        if (rc == JSON_OK) {
            if (closed)
                r->info->top_end = offset_of(r, p - 1);
            r->state = closed ? S_END : S_KEY;
            *pp = p;
        }
        return rc;
    case S_EV_FIRST:
        if (*p == ']') {
            r->state = r->top_is_array ? S_END : S_AFTER_MEMBER;
            *pp = p + 1;
            return JSON_OK;
        }
        /* fall through */
    case S_EV_NEXT:
        if ((rc = parse_event(r, &p)) == JSON_OK) {
            *pp = p;
            r->state = S_EV_AFTER;
        }
        return rc;
    case S_EV_AFTER:
        rc = json_separator(s, &p, ']', "',' or ']' after an event", "an event after ','", &closed);
        if (rc == JSON_OK) {
            r->state = !closed ? S_EV_NEXT : r->top_is_array ? S_END : S_AFTER_MEMBER;
            *pp = p;
        }
        return rc;
    case S_END:
        return json_bad(s, p, "the end of the file after the trace's closing bracket");
    case S_FINISHED:
        break;
    }
    return JSON_OK;
}

/* ---- the input ---- */

/* Makes room and reads more: keeps the bytes from pos (the unit being parsed) at the front. */
static int refill(reader *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->base_offset += r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        if (r->cap >= DT_TR_MAX_UNIT) {
            snprintf(r->err, r->errlen,
                     "%s: byte %llu: an event or member larger than %u MiB; not a trace this reader takes", r->name,
                     (unsigned long long)r->base_offset, DT_TR_MAX_UNIT >> 20);
            return -1;
        }
        size_t cap = r->cap * 2;
        char *buf = realloc(r->buf, cap + JSON_SCAN_PAD);
        if (buf)
            r->buf = buf;
        char *scratch = buf ? realloc(r->scratch, cap) : NULL;
        if (scratch)
            r->scratch = scratch;
        if (!buf || !scratch) {
            snprintf(r->err, r->errlen, "%s: out of memory for an event of %zu bytes", r->name, r->cap);
            return -1;
        }
        r->cap = cap;
    }
    size_t want = r->cap - r->len;
    if (want > r->piece)
        want = r->piece;
    size_t got;
    if (r->gz) {
        int n = gzread(r->gz, r->buf + r->len, (unsigned)want);
        if (n < 0) {
            int zerr = 0;
            const char *msg = gzerror(r->gz, &zerr);
            snprintf(r->err, r->errlen, "%s: byte %llu: could not read the trace: %s", r->name,
                     (unsigned long long)(r->base_offset + r->len), zerr == Z_ERRNO ? strerror(errno) : msg);
            return -1;
        }
        got = (size_t)n;
        if (n == 0 && !gzeof(r->gz)) {
            int zerr = 0;
            const char *msg = gzerror(r->gz, &zerr);
            snprintf(r->err, r->errlen, "%s: byte %llu: could not read the trace: %s", r->name,
                     (unsigned long long)(r->base_offset + r->len), msg);
            return -1;
        }
    } else if (r->fd >= 0) {
        ssize_t n;
        do
            n = read(r->fd, r->buf + r->len, want);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            snprintf(r->err, r->errlen, "%s: byte %llu: could not read the trace: %s", r->name,
                     (unsigned long long)(r->base_offset + r->len), strerror(errno));
            return -1;
        }
        got = (size_t)n;
    } else {
        got = r->mem_len - r->mem_pos < want ? r->mem_len - r->mem_pos : want;
        memcpy(r->buf + r->len, r->mem + r->mem_pos, got);
        r->mem_pos += got;
    }
    if (got == 0)
        r->eof = 1;
    r->len += got;
    memset(r->buf + r->len, 0, JSON_SCAN_PAD); /* the scanner's sentinel */
    return 0;
}

static void format_error(reader *r, int truncated)
{
    const char *at = r->scan.fail_at;
    uint64_t where = truncated ? r->base_offset + r->len : offset_of(r, at);
    if (truncated) {
        uint64_t unit = offset_of(r, r->unit_start);
        if ((r->state == S_EV_FIRST || r->state == S_EV_NEXT) && r->unit_start < r->buf + r->len)
            snprintf(r->err, r->errlen,
                     "%s: truncated at byte %llu (the end of the data): expected %s (in the event at byte %llu)",
                     r->name, (unsigned long long)where, r->scan.expected, (unsigned long long)unit);
        else
            snprintf(r->err, r->errlen, "%s: truncated at byte %llu (the end of the data): expected %s", r->name,
                     (unsigned long long)where, r->scan.expected);
        return;
    }
    unsigned char c = (unsigned char)*at;
    char seen[16];
    if (c >= 0x20 && c < 0x7f)
        snprintf(seen, sizeof seen, "'%c'", c);
    else
        snprintf(seen, sizeof seen, "byte 0x%02x", c);
    snprintf(r->err, r->errlen, "%s: byte %llu: expected %s, found %s", r->name, (unsigned long long)where,
             r->scan.expected, seen);
}

static int read_all(reader *r)
{
    r->cap = r->piece < (1u << 16) ? (1u << 16) : r->piece;
    if (r->mem && r->cap > r->mem_len + 1) /* a buffer in memory: no bigger than itself */
        r->cap = r->mem_len + 1 < (1u << 16) ? (1u << 16) : r->mem_len + 1;
    r->buf = malloc(r->cap + JSON_SCAN_PAD);
    r->scratch = malloc(r->cap);
    if (!r->buf || !r->scratch) {
        snprintf(r->err, r->errlen, "%s: out of memory for the read buffer", r->name);
        return -1;
    }
    memset(r->buf, 0, JSON_SCAN_PAD);
    for (;;) {
        const char *p = r->buf + r->pos;
        r->scan.end = r->buf + r->len;
        r->scan.scratch = r->scratch;
        r->scan.scratch_len = 0;
        int rc = step(r, &p);
        if (rc == JSON_OK) {
            r->pos = (size_t)(p - r->buf);
            if (r->state == S_FINISHED)
                break;
            continue;
        }
        if (rc == JSON_MORE) {
            if (r->eof) {
                format_error(r, 1);
                return -1;
            }
            if (refill(r) != 0)
                return -1;
            continue;
        }
        if (rc == JSON_STOP) {
            snprintf(r->err, r->errlen, "%s: stopped at the event at byte %llu", r->name,
                     (unsigned long long)offset_of(r, r->unit_start));
            return r->stop_value;
        }
        format_error(r, 0);
        return -1;
    }
    r->info->bytes = r->base_offset + r->len;
    if (!r->info->has_trace_events) {
        snprintf(r->err, r->errlen,
                 "%s: byte %llu: the top-level object ends without traceEvents: not a Kineto trace (a PyTorch "
                 "execution trace, with \"nodes\", is not one either); give the trace torch.profiler or devtrace wrote",
                 r->name, (unsigned long long)r->info->top_end);
        return -1;
    }
    return 0;
}

static int run_reader(reader *r, dt_tr_info *info)
{
    r->info = info ? info : &r->local_info;
    memset(r->info, 0, sizeof *r->info);
    if (r->errlen)
        r->err[0] = 0;
    int rc = read_all(r);
    if (!info)
        dt_tr_info_free(&r->local_info);
    free(r->buf);
    free(r->scratch);
    return rc;
}

int dt_tr_read_file(const char *path, dt_tr_event_fn fn, void *user, dt_tr_info *info, char *err, size_t errlen)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.name = path;
    r.fn = fn;
    r.user = user;
    r.err = err;
    r.errlen = errlen;
    r.piece = READ_PIECE;
    r.fd = open(path, O_RDONLY | O_CLOEXEC);
    unsigned char magic[2];
    ssize_t n = r.fd >= 0 ? pread(r.fd, magic, 2, 0) : -1;
    if (n < 0) {
        snprintf(err, errlen, "%s: cannot %s: %s", path, r.fd < 0 ? "open" : "read", strerror(errno));
        if (r.fd >= 0)
            close(r.fd);
        if (info)
            memset(info, 0, sizeof *info);
        return -1;
    }
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) { /* gzip: zlib reads it from the start */
        r.gz = gzdopen(r.fd, "rb");
        if (!r.gz) {
            close(r.fd);
            snprintf(err, errlen, "%s: out of memory for the gzip reader", path);
            if (info)
                memset(info, 0, sizeof *info);
            return -1;
        }
        r.fd = -1;
        gzbuffer(r.gz, 1u << 20);
    }
    int rc = run_reader(&r, info);
    if (r.gz)
        gzclose(r.gz);
    if (r.fd >= 0)
        close(r.fd);
    return rc;
}

int dt_tr_read_buffer_pieces(const char *name, const void *data, size_t len, size_t piece, dt_tr_event_fn fn,
                             void *user, dt_tr_info *info, char *err, size_t errlen)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.fn = fn;
    r.user = user;
    r.err = err;
    r.errlen = errlen;
    r.fd = -1;
    r.mem = data ? data : ""; /* no data: an empty text */
    r.mem_len = data ? len : 0;
    r.piece = piece ? piece : READ_PIECE;
    return run_reader(&r, info);
}

int dt_tr_read_buffer(const char *name, const void *data, size_t len, dt_tr_event_fn fn, void *user, dt_tr_info *info,
                      char *err, size_t errlen)
{
    return dt_tr_read_buffer_pieces(name, data, len, 0, fn, user, info, err, errlen);
}

void dt_tr_info_free(dt_tr_info *info)
{
    if (!info)
        return;
    clear_devtrace(info);
}
