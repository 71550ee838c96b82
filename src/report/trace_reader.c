/* trace_reader.c: the streaming Kineto-JSON reader (trace_reader.h). The text is read into a
 * buffer in pieces; it is parsed one unit at a time: one element of traceEvents, one other
 * top-level member (key and value), or one piece of the top level's punctuation. A unit that
 * runs past the data read so far is parsed again from its start once more is read (the buffer
 * keeps the unit's bytes: it only grows for a unit larger than itself, up to DT_TR_MAX_UNIT).
 * Strings are decoded only when they hold escapes; numbers in microseconds become integer
 * nanoseconds without going through a double unless they have an exponent or 19+ digits. */
#include "trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define READ_PIECE (1u << 20) /* small enough to be parsed from the cache right after the copy */
#define MAX_DEPTH 128

enum { P_OK = 0, P_MORE = 1, P_BAD = 2, P_STOP = 3 };

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
    const char *name; /* borrowed: for errors */
    gzFile gz;        /* owned: a gzip file, or NULL */
    int fd;           /* owned: a plain file (read directly, no copy through zlib), or -1 */
    const char *mem;  /* borrowed */
    size_t mem_len, mem_pos, piece;
    int eof;
    char *buf; /* owned */
    size_t cap, len, pos;
    uint64_t base_offset; /* offset in the text of buf[0] */
    char *scratch;        /* owned: decoded strings of the current unit, cap bytes */
    size_t scratch_len;
    top_state state;
    int top_is_array;
    dt_tr_info *info;
    dt_tr_info local_info;
    dt_tr_event_fn fn;
    void *user;
    int stop_value;
    const char *fail_at, *expected;
    const char *unit_start;
    char *err;
    size_t errlen;
} reader;

static const char *const kind_names[DT_TR_KIND_COUNT] = {"kernel", "memcpy",          "memset",          "runtime",
                                                         "cpu_op", "python_function", "user_annotation", "other"};

const char *dt_tr_kind_name(dt_tr_kind kind)
{
    return (unsigned)kind < DT_TR_KIND_COUNT ? kind_names[kind] : "other";
}

static int equals_nocase(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n)
        return 0;
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

/* Kineto's categories (ActivityType names) and the capitalised ones of older exports. */
dt_tr_kind dt_tr_kind_of_cat(const char *cat, size_t len)
{
    if (equals_nocase(cat, len, "kernel"))
        return DT_TR_KERNEL;
    if (equals_nocase(cat, len, "gpu_memcpy") || equals_nocase(cat, len, "memcpy"))
        return DT_TR_MEMCPY;
    if (equals_nocase(cat, len, "gpu_memset") || equals_nocase(cat, len, "memset"))
        return DT_TR_MEMSET;
    if (equals_nocase(cat, len, "cpu_op") || equals_nocase(cat, len, "operator"))
        return DT_TR_CPU_OP;
    if (equals_nocase(cat, len, "python_function"))
        return DT_TR_PYTHON;
    if (equals_nocase(cat, len, "user_annotation") || equals_nocase(cat, len, "gpu_user_annotation"))
        return DT_TR_ANNOTATION;
    if (equals_nocase(cat, len, "runtime") || ends_with(cat, len, "_runtime") || ends_with(cat, len, "_driver"))
        return DT_TR_RUNTIME;
    return DT_TR_OTHER;
}

/* ---- failing ---- */

#define NEED(r, what) ((r)->expected = (what), P_MORE)
static int bad(reader *r, const char *at, const char *what)
{
    r->fail_at = at;
    r->expected = what;
    return P_BAD;
}

static uint64_t offset_of(const reader *r, const char *at)
{
    return r->base_offset + (uint64_t)(at - r->buf);
}

/* ---- lexing ---- */

static const unsigned char ws_byte[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

static inline int is_ws(char c)
{
    return ws_byte[(unsigned char)c];
}

#ifdef __SSE2__
/* 16 bytes at a time (SSE2 is part of x86-64): a pretty-printed trace is a third whitespace. */
static inline const char *skip_ws(const char *p, const char *end)
{
    if (p < end && !is_ws(*p))
        return p;
    if (p + 1 < end && !is_ws(p[1])) /* the one blank after ':' and ',' */
        return p + 1;
    const __m128i space = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                  tab = _mm_set1_epi8('\t');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, nl)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
        unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xFFFFu;
        if (other)
            return p + __builtin_ctz(other);
        p += 16;
    }
    while (p < end && is_ws(*p))
        p++;
    return p;
}
#else
static inline const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws(*p))
        p++;
    return p;
}
#endif

/* 1 for the bytes that end a plain run inside a string: '"', '\\' and control characters. */
static const unsigned char string_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, ['\\'] = 1,
};

/* The first byte from p that ends a plain run of a string (or end). */
static inline const char *scan_plain(const char *p, const char *end)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                    _mm_cmpeq_epi8(_mm_min_epu8(v, control), v)); /* v <= 0x1F, unsigned */
        unsigned mask = (unsigned)_mm_movemask_epi8(stop);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (p < end && !string_stop[(unsigned char)*p])
        p++;
    return p;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Four hex digits at p (p + 4 <= end checked by the caller). */
static int read_hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(p[i]);
        if (h < 0)
            return -1;
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* The escaped string from its opening quote at *pp; decodes into the scratch when out is not
 * NULL and the string holds escapes. */
static int parse_string(reader *r, const char **pp, const char *end, dt_tr_str *out)
{
    const char *p = *pp + 1, *begin = p;
    for (;;) {
        p = scan_plain(p, end);
        if (p >= end)
            return NEED(r, "the rest of a string and its closing '\"'");
        if (*p == '"') {
            if (out) {
                out->s = begin;
                out->len = (size_t)(p - begin);
            }
            *pp = p + 1;
            return P_OK;
        }
        if (*p != '\\')
            return bad(r, p, "a character of a string (a control character must be escaped)");
        break;
    }
    /* Escapes: decode from begin into the scratch. */
    char *o = out ? r->scratch + r->scratch_len : NULL, *o_begin = o;
    if (o) {
        memcpy(o, begin, (size_t)(p - begin));
        o += p - begin;
    }
    for (;;) {
        if (p >= end)
            return NEED(r, "the rest of a string and its closing '\"'");
        char c = *p;
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20)
            return bad(r, p, "a character of a string (a control character must be escaped)");
        if (c != '\\') {
            if (o)
                *o++ = c;
            p++;
            continue;
        }
        if (p + 1 >= end)
            return NEED(r, "the rest of an escape in a string");
        char e = p[1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (o)
                *o++ = decoded[simple - "\"\\/bfnrt"];
            p += 2;
            continue;
        }
        if (e != 'u')
            return bad(r, p, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
        if (p + 6 > end)
            return NEED(r, "the four hex digits of a \\u escape");
        uint32_t cp;
        if (read_hex4(p + 2, &cp) != 0)
            return bad(r, p, "four hex digits after \\u");
        p += 6;
        if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate: its pair follows */
            if (p + 6 > end)
                return NEED(r, "the low surrogate after a \\u high surrogate");
            uint32_t lo;
            if (p[0] == '\\' && p[1] == 'u' && read_hex4(p + 2, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            } else {
                cp = 0xFFFD;
            }
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            cp = 0xFFFD;
        }
        if (o)
            o = put_utf8(o, cp);
    }
    if (out) {
        out->s = o_begin;
        out->len = (size_t)(o - o_begin);
        r->scratch_len += out->len;
    }
    *pp = p + 1;
    return P_OK;
}

typedef struct number {
    int64_t integer; /* truncated toward zero, saturated */
    int64_t milli;   /* value * 1000, rounded half away from zero, saturated */
} number;

static int64_t saturate(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9.2e18)
        return INT64_MAX;
    if (d <= -9.2e18)
        return INT64_MIN;
    return (int64_t)d;
}

static inline int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The value of the 8 digits at p, or UINT32_MAX when they are not all digits (SWAR: the
 * bytes as one little-endian word, pairs then quads combined by multiplication). */
static inline uint32_t eight_digits(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    if (((v & 0xF0F0F0F0F0F0F0F0ull) | ((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4) !=
        (0x3030303030303030ull | 0x0303030303030303ull))
        return UINT32_MAX;
    v -= 0x3030303030303030ull;
    v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFull;
    v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFull;
    return (uint32_t)((v * 10000 + (v >> 32)) & 0xFFFFFFFFull);
}

/* A JSON number at *pp (strict grammar). */
static int parse_number(reader *r, const char **pp, const char *end, number *out)
{
    const char *p = *pp, *start = p;
    int neg = 0, slow = 0;
    uint64_t acc = 0;
    if (*p == '-') {
        neg = 1;
        if (++p >= end)
            return NEED(r, "the digits of a number");
    }
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        uint32_t eight;
        while (end - p >= 8 && acc < 100000000000ull && (eight = eight_digits(p)) != UINT32_MAX) {
            acc = acc * 100000000u + eight; /* < 10^19: no overflow */
            p += 8;
        }
        while (p < end && is_digit(*p)) {
            if (acc > (UINT64_MAX - 9) / 10)
                slow = 1;
            acc = acc * 10 + (uint64_t)(*p - '0');
            p++;
        }
    } else {
        return bad(r, p, "a digit");
    }
    unsigned frac = 0, frac_digits = 0, round_digit = 0;
    if (p < end && *p == '.') {
        p++;
        if (p >= end)
            return NEED(r, "the digits after a number's '.'");
        if (!is_digit(*p))
            return bad(r, p, "a digit after a number's '.'");
        while (p < end && is_digit(*p)) {
            if (frac_digits < 3)
                frac = frac * 10 + (unsigned)(*p - '0');
            else if (frac_digits == 3)
                round_digit = (unsigned)(*p - '0');
            frac_digits++;
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        slow = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end)
            return NEED(r, "the digits of a number's exponent");
        if (!is_digit(*p))
            return bad(r, p, "a digit of a number's exponent");
        while (p < end && is_digit(*p))
            p++;
    }
    if (p >= end)
        return NEED(r, "the rest of a number");
    while (frac_digits < 3) {
        frac *= 10;
        frac_digits++;
    }
    if (!slow && acc <= (uint64_t)INT64_MAX) {
        out->integer = neg ? -(int64_t)acc : (int64_t)acc; /* exact, also past a double's 53 bits */
        int64_t milli =
            acc <= (uint64_t)(INT64_MAX / 1000 - 1) ? (int64_t)(acc * 1000 + frac + (round_digit >= 5)) : INT64_MAX;
        out->milli = neg ? -milli : milli;
    } else {
        char text[64];
        size_t n = (size_t)(p - start);
        if (n >= sizeof text)
            n = sizeof text - 1; /* only digits past the 63rd are cut: far below a double's precision */
        memcpy(text, start, n);
        text[n] = 0;
        double d = strtod(text, NULL);
        out->integer = saturate(d);
        out->milli = saturate(round(d * 1000.0));
    }
    *pp = p;
    return P_OK;
}

/* A member's name and the ':' after it, up to its value (*pp at the opening quote). */
static int parse_member_name(reader *r, const char **pp, const char *end, dt_tr_str *key, const char *what)
{
    const char *p = *pp;
    int rc;
    if (*p != '"')
        return bad(r, p, what);
    if ((rc = parse_string(r, &p, end, key)) != P_OK)
        return rc;
    p = skip_ws(p, end);
    if (p >= end)
        return NEED(r, "':' after a member name");
    if (*p != ':')
        return bad(r, p, "':' after a member name");
    p = skip_ws(p + 1, end);
    if (p >= end)
        return NEED(r, "a member's value");
    *pp = p;
    return P_OK;
}

static int skip_value(reader *r, const char **pp, const char *end, int depth);

static int skip_literal(reader *r, const char **pp, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    const char *p = *pp;
    for (size_t i = 0; i < n; i++) {
        if (p + i >= end)
            return NEED(r, "the rest of true, false or null");
        if (p[i] != lit[i])
            return bad(r, p + i, "true, false or null");
    }
    *pp = p + n;
    return P_OK;
}

/* Members of an object (from just after '{') or elements of an array, skipped. */
static int skip_container(reader *r, const char **pp, const char *end, int depth, char close)
{
    const char *p = skip_ws(*pp, end);
    if (p >= end)
        return NEED(r, close == '}' ? "a member or '}'" : "a value or ']'");
    if (*p == close) {
        *pp = p + 1;
        return P_OK;
    }
    for (;;) {
        int rc;
        dt_tr_str key;
        if (close == '}' && (rc = parse_member_name(r, &p, end, &key, "a member name (a string)")) != P_OK)
            return rc;
        if ((rc = skip_value(r, &p, end, depth + 1)) != P_OK)
            return rc;
        p = skip_ws(p, end);
        if (p >= end)
            return NEED(r, close == '}' ? "',' or '}' after a member" : "',' or ']' after a value");
        if (*p == close) {
            *pp = p + 1;
            return P_OK;
        }
        if (*p != ',')
            return bad(r, p, close == '}' ? "',' or '}' after a member" : "',' or ']' after a value");
        p = skip_ws(p + 1, end);
        if (p >= end)
            return NEED(r, close == '}' ? "a member after ','" : "a value after ','");
    }
}

static int skip_value(reader *r, const char **pp, const char *end, int depth)
{
    const char *p = *pp;
    if (p >= end)
        return NEED(r, "a value");
    if (depth > MAX_DEPTH)
        return bad(r, p, "a value nested at most 128 deep");
    number n;
    switch (*p) {
    case '"':
        return parse_string(r, pp, end, NULL);
    case '{':
    case '[':
        *pp = p + 1;
        return skip_container(r, pp, end, depth, *p == '{' ? '}' : ']');
    case 't':
        return skip_literal(r, pp, end, "true");
    case 'f':
        return skip_literal(r, pp, end, "false");
    case 'n':
        return skip_literal(r, pp, end, "null");
    default:
        if (*p == '-' || is_digit(*p))
            return parse_number(r, pp, end, &n);
        return bad(r, p, "a value (string, number, object, array, true, false or null)");
    }
}

/* ---- objects with known members ---- */

/* Calls member(r, key, &p, end, ctx) for each member of the object at *pp (which is '{'): the
 * callback parses or skips the value. */
typedef int (*member_fn)(reader *r, const dt_tr_str *key, const char **pp, const char *end, void *ctx);

/* Inlined where it is called, so that the member function is called directly (and inlined in turn). */
static inline __attribute__((always_inline)) int parse_object(reader *r, const char **pp, const char *end,
                                                              const char *what, member_fn member, void *ctx)
{
    const char *p = *pp;
    if (*p != '{')
        return bad(r, p, what);
    p = skip_ws(p + 1, end);
    if (p >= end)
        return NEED(r, "a member or '}'");
    if (*p == '}') {
        *pp = p + 1;
        return P_OK;
    }
    for (;;) {
        int rc;
        dt_tr_str key;
        if ((rc = parse_member_name(r, &p, end, &key, "a member name (a string)")) != P_OK)
            return rc;
        if ((rc = member(r, &key, &p, end, ctx)) != P_OK)
            return rc;
        p = skip_ws(p, end);
        if (p >= end)
            return NEED(r, "',' or '}' after a member");
        if (*p == '}') {
            *pp = p + 1;
            return P_OK;
        }
        if (*p != ',')
            return bad(r, p, "',' or '}' after a member");
        p = skip_ws(p + 1, end);
        if (p >= end)
            return NEED(r, "a member after ','");
    }
}

static inline int key_is(const dt_tr_str *key, const char *lit, size_t n)
{
    return key->len == n && !memcmp(key->s, lit, n);
}
#define KEY_IS(key, lit) key_is((key), "" lit, sizeof("" lit) - 1)

/* An integer member: sets *out and the bit when the value is a number, skips it otherwise. */
static int integer_member(reader *r, const char **pp, const char *end, int64_t *out, uint32_t *has, uint32_t bit)
{
    if (**pp == '-' || is_digit(**pp)) {
        number n;
        int rc = parse_number(r, pp, end, &n);
        if (rc == P_OK) {
            *out = n.integer;
            *has |= bit;
        }
        return rc;
    }
    return skip_value(r, pp, end, 1);
}

static int string_member(reader *r, const char **pp, const char *end, dt_tr_str *out)
{
    if (**pp == '"')
        return parse_string(r, pp, end, out);
    return skip_value(r, pp, end, 1);
}

/* The digits a string ends with ("stream 7" -> 7). */
static int trailing_number(const dt_tr_str *s, int64_t *out)
{
    size_t i = s->len;
    while (i > 0 && is_digit(s->s[i - 1]) && s->len - i < 18)
        i--;
    if (i == s->len)
        return 0;
    int64_t v = 0;
    for (size_t k = i; k < s->len; k++)
        v = v * 10 + (s->s[k] - '0');
    *out = v;
    return 1;
}

/* pid / tid: a number or a string, kept as text, and as a number when it has one. */
static int lane_member(reader *r, const char **pp, const char *end, dt_tr_str *text, int64_t *num, uint32_t *has,
                       uint32_t text_bit, uint32_t num_bit)
{
    const char *p = *pp;
    if (*p == '-' || is_digit(*p)) {
        number n;
        int rc = parse_number(r, pp, end, &n);
        if (rc == P_OK) {
            text->s = p;
            text->len = (size_t)(*pp - p);
            *num = n.integer;
            *has |= text_bit | num_bit;
        }
        return rc;
    }
    if (*p == '"') {
        int rc = parse_string(r, pp, end, text);
        if (rc == P_OK) {
            *has |= text_bit;
            if (trailing_number(text, num))
                *has |= num_bit;
        }
        return rc;
    }
    return skip_value(r, pp, end, 1);
}

static int args_member(reader *r, const dt_tr_str *key, const char **pp, const char *end, void *ctx)
{
    dt_tr_event *ev = ctx;
    switch (key->len) {
    case 11:
        if (KEY_IS(key, "External id"))
            return integer_member(r, pp, end, &ev->external_id, &ev->has, DT_TR_HAS_EXTERNAL_ID);
        if (KEY_IS(key, "correlation"))
            return integer_member(r, pp, end, &ev->correlation, &ev->has, DT_TR_HAS_CORRELATION);
        break;
    case 6:
        if (KEY_IS(key, "device"))
            return integer_member(r, pp, end, &ev->device, &ev->has, DT_TR_HAS_DEVICE);
        if (KEY_IS(key, "stream"))
            return integer_member(r, pp, end, &ev->stream, &ev->has, DT_TR_HAS_STREAM);
        break;
    case 5:
        if (KEY_IS(key, "bytes"))
            return integer_member(r, pp, end, &ev->bytes, &ev->has, DT_TR_HAS_BYTES);
        break;
    case 4:
        if (KEY_IS(key, "name"))
            return string_member(r, pp, end, &ev->meta_name);
        break;
    }
    return skip_value(r, pp, end, 1);
}

static int time_member(reader *r, const char **pp, const char *end, int64_t *out, uint32_t *has, uint32_t bit)
{
    if (**pp == '-' || is_digit(**pp)) {
        number n;
        int rc = parse_number(r, pp, end, &n);
        if (rc == P_OK) {
            *out = n.milli > DT_TR_TIME_MAX ? DT_TR_TIME_MAX : n.milli < -DT_TR_TIME_MAX ? -DT_TR_TIME_MAX : n.milli;
            *has |= bit;
        }
        return rc;
    }
    return skip_value(r, pp, end, 1);
}

static int event_member(reader *r, const dt_tr_str *key, const char **pp, const char *end, void *ctx)
{
    dt_tr_event *ev = ctx;
    dt_tr_str s;
    int rc;
    switch (key->len) {
    case 2:
        if (KEY_IS(key, "ph") || KEY_IS(key, "bp")) {
            if (**pp != '"')
                return skip_value(r, pp, end, 1);
            if ((rc = parse_string(r, pp, end, &s)) == P_OK && s.len)
                *(key->s[0] == 'p' ? &ev->ph : &ev->bp) = s.s[0];
            return rc;
        }
        if (KEY_IS(key, "ts"))
            return time_member(r, pp, end, &ev->ts_ns, &ev->has, DT_TR_HAS_TS);
        if (KEY_IS(key, "id")) {
            if (**pp == '"') {
                if ((rc = parse_string(r, pp, end, &s)) == P_OK && s.len && trailing_number(&s, &ev->flow_id) &&
                    s.len <= 18 && is_digit(s.s[0]))
                    ev->has |= DT_TR_HAS_FLOW_ID;
                return rc;
            }
            return integer_member(r, pp, end, &ev->flow_id, &ev->has, DT_TR_HAS_FLOW_ID);
        }
        break;
    case 3:
        if (KEY_IS(key, "cat"))
            return string_member(r, pp, end, &ev->cat);
        if (KEY_IS(key, "dur"))
            return time_member(r, pp, end, &ev->dur_ns, &ev->has, DT_TR_HAS_DUR);
        if (KEY_IS(key, "pid"))
            return lane_member(r, pp, end, &ev->pid, &ev->pid_num, &ev->has, DT_TR_HAS_PID, DT_TR_HAS_PID_NUM);
        if (KEY_IS(key, "tid"))
            return lane_member(r, pp, end, &ev->tid, &ev->tid_num, &ev->has, DT_TR_HAS_TID, DT_TR_HAS_TID_NUM);
        break;
    case 4:
        if (KEY_IS(key, "name"))
            return string_member(r, pp, end, &ev->name);
        if (KEY_IS(key, "args")) {
            if (**pp == '{')
                return parse_object(r, pp, end, "args", args_member, ev);
            return skip_value(r, pp, end, 1);
        }
        break;
    }
    return skip_value(r, pp, end, 1);
}

static int parse_event(reader *r, const char **pp, const char *end)
{
    dt_tr_event ev;
    memset(&ev, 0, sizeof ev);
    ev.offset = offset_of(r, *pp);
    if (**pp != '{')
        return bad(r, *pp, "an event (an object, '{')");
    int rc = parse_object(r, pp, end, "an event (an object, '{')", event_member, &ev);
    if (rc != P_OK)
        return rc;
    ev.kind = ev.cat.len ? dt_tr_kind_of_cat(ev.cat.s, ev.cat.len) : DT_TR_OTHER;
    r->info->events++;
    if (r->fn) {
        int stop = r->fn(&ev, r->user);
        if (stop) {
            r->stop_value = stop;
            return P_STOP;
        }
    }
    return P_OK;
}

/* ---- the top-level members besides traceEvents ---- */

static char *dup_str(const dt_tr_str *s)
{
    char *c = malloc(s->len + 1);
    if (c) {
        memcpy(c, s->s, s->len);
        c[s->len] = 0;
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

static int counter_member(reader *r, const dt_tr_str *key, const char **pp, const char *end, void *ctx)
{
    counter_group *g = ctx;
    if (**pp == '-' || is_digit(**pp)) {
        number n;
        int rc = parse_number(r, pp, end, &n);
        if (rc == P_OK)
            add_counter(g->info, &g->outer, key, n.integer);
        return rc;
    }
    return skip_value(r, pp, end, 1);
}

static int notes_array(reader *r, const char **pp, const char *end)
{
    const char *p = skip_ws(*pp + 1, end);
    if (p >= end)
        return NEED(r, "a note or ']'");
    if (*p == ']') {
        *pp = p + 1;
        return P_OK;
    }
    for (;;) {
        int rc;
        if (*p == '"') {
            dt_tr_str s;
            if ((rc = parse_string(r, &p, end, &s)) != P_OK)
                return rc;
            if (r->info->nnotes < DT_TR_MAX_NOTES && (r->info->notes[r->info->nnotes] = dup_str(&s)))
                r->info->nnotes++;
        } else if ((rc = skip_value(r, &p, end, 2)) != P_OK) {
            return rc;
        }
        p = skip_ws(p, end);
        if (p >= end)
            return NEED(r, "',' or ']' after a note");
        if (*p == ']') {
            *pp = p + 1;
            return P_OK;
        }
        if (*p != ',')
            return bad(r, p, "',' or ']' after a note");
        p = skip_ws(p + 1, end);
        if (p >= end)
            return NEED(r, "a note after ','");
    }
}

static int devtrace_member(reader *r, const dt_tr_str *key, const char **pp, const char *end, void *ctx)
{
    dt_tr_info *info = r->info;
    int rc;
    if ((KEY_IS(key, "backend") || KEY_IS(key, "validation")) && **pp == '"') {
        dt_tr_str s;
        if ((rc = parse_string(r, pp, end, &s)) != P_OK)
            return rc;
        char **slot = key->s[0] == 'b' ? &info->backend : &info->validation;
        free(*slot);
        *slot = dup_str(&s);
        return P_OK;
    }
    if (KEY_IS(key, "notes") && **pp == '[')
        return notes_array(r, pp, end);
    if (**pp == '{') {
        /* The key stays valid: the members' strings go after it in the scratch. */
        counter_group g = {info, *key};
        return parse_object(r, pp, end, "an object", counter_member, &g);
    }
    if (**pp == '-' || is_digit(**pp)) {
        number n;
        if ((rc = parse_number(r, pp, end, &n)) == P_OK)
            add_counter(info, key, NULL, n.integer);
        return rc;
    }
    return skip_value(r, pp, end, 1);
}

static int distributed_member(reader *r, const dt_tr_str *key, const char **pp, const char *end, void *ctx)
{
    dt_tr_info *info = r->info;
    uint32_t has = 0;
    if (KEY_IS(key, "rank")) {
        int rc = integer_member(r, pp, end, &info->rank, &has, 1);
        if (has)
            info->has_rank = 1;
        return rc;
    }
    if (KEY_IS(key, "world_size"))
        return integer_member(r, pp, end, &info->world_size, &has, 1);
    return skip_value(r, pp, end, 1);
}

/* A top-level member from its name: key ':' value, or for traceEvents key ':' '['. */
static int parse_member(reader *r, const char **pp, const char *end)
{
    const char *p = *pp;
    dt_tr_str key;
    int rc = parse_member_name(r, &p, end, &key, "a member name (a string) of the top-level object");
    if (rc != P_OK)
        return rc;
    if (KEY_IS(&key, "traceEvents")) {
        if (*p != '[')
            return bad(r, p, "'[' (traceEvents is an array of events)");
        *pp = p + 1;
        r->state = S_EV_FIRST;
        return P_OK;
    }
    if (KEY_IS(&key, "devtrace") && *p == '{') {
        clear_devtrace(r->info); /* a unit parsed again starts from nothing */
        r->info->has_devtrace = 1;
        rc = parse_object(r, &p, end, "an object", devtrace_member, NULL);
    } else if (KEY_IS(&key, "distributedInfo") && *p == '{') {
        rc = parse_object(r, &p, end, "an object", distributed_member, NULL);
    } else if (KEY_IS(&key, "baseTimeNanoseconds") && (*p == '-' || is_digit(*p))) {
        number n;
        if ((rc = parse_number(r, &p, end, &n)) == P_OK) {
            r->info->base_time_ns = n.integer;
            r->info->has_base_time = 1;
        }
    } else {
        rc = skip_value(r, &p, end, 1);
    }
    if (rc != P_OK)
        return rc;
    *pp = p;
    r->state = S_AFTER_MEMBER;
    return P_OK;
}

/* One unit from *pp. */
static int step(reader *r, const char **pp, const char *end)
{
    const char *p = skip_ws(*pp, end);
    r->unit_start = p;
    if (p >= end) {
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
                return NEED(r, expected[S_END]);
            r->state = S_FINISHED;
            return P_OK;
        }
        return NEED(r, expected[r->state]);
    }
    int rc;
    switch (r->state) {
    case S_START:
        if (*p == '{') {
            r->state = S_FIRST_KEY;
        } else if (*p == '[') {
            r->top_is_array = 1;
            r->state = S_EV_FIRST;
        } else {
            return bad(r, p, "'{' (a trace is a JSON object with traceEvents)");
        }
        *pp = p + 1;
        return P_OK;
    case S_FIRST_KEY:
        if (*p == '}') {
            r->state = S_END;
            *pp = p + 1;
            return P_OK;
        }
        /* fall through */
    case S_KEY:
        if ((rc = parse_member(r, &p, end)) == P_OK)
            *pp = p;
        return rc;
    case S_AFTER_MEMBER:
        if (*p == ',')
            r->state = S_KEY;
        else if (*p == '}')
            r->state = S_END;
        else
            return bad(r, p, "',' or '}' after a top-level member");
        *pp = p + 1;
        return P_OK;
    case S_EV_FIRST:
        if (*p == ']') {
            r->state = r->top_is_array ? S_END : S_AFTER_MEMBER;
            *pp = p + 1;
            return P_OK;
        }
        /* fall through */
    case S_EV_NEXT:
        if ((rc = parse_event(r, &p, end)) == P_OK) {
            *pp = p;
            r->state = S_EV_AFTER;
        }
        return rc;
    case S_EV_AFTER:
        if (*p == ',')
            r->state = S_EV_NEXT;
        else if (*p == ']')
            r->state = r->top_is_array ? S_END : S_AFTER_MEMBER;
        else
            return bad(r, p, "',' or ']' after an event");
        *pp = p + 1;
        return P_OK;
    case S_END:
        return bad(r, p, "the end of the file after the trace's closing bracket");
    case S_FINISHED:
        break;
    }
    return P_OK;
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
        char *buf = realloc(r->buf, cap);
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
    return 0;
}

static void format_error(reader *r, const char *at, int truncated)
{
    uint64_t where = truncated ? r->base_offset + r->len : offset_of(r, at);
    if (truncated) {
        uint64_t unit = offset_of(r, r->unit_start);
        if ((r->state == S_EV_FIRST || r->state == S_EV_NEXT) && r->unit_start < r->buf + r->len)
            snprintf(r->err, r->errlen,
                     "%s: truncated at byte %llu (the end of the data): expected %s (in the event at byte %llu)",
                     r->name, (unsigned long long)where, r->expected, (unsigned long long)unit);
        else
            snprintf(r->err, r->errlen, "%s: truncated at byte %llu (the end of the data): expected %s", r->name,
                     (unsigned long long)where, r->expected);
        return;
    }
    unsigned char c = (unsigned char)*at;
    char seen[16];
    if (c >= 0x20 && c < 0x7f)
        snprintf(seen, sizeof seen, "'%c'", c);
    else
        snprintf(seen, sizeof seen, "byte 0x%02x", c);
    snprintf(r->err, r->errlen, "%s: byte %llu: expected %s, found %s", r->name, (unsigned long long)where, r->expected,
             seen);
}

static int read_all(reader *r)
{
    r->cap = r->piece < (1u << 16) ? (1u << 16) : r->piece;
    if (r->mem && r->cap > r->mem_len + 1) /* a buffer in memory: no bigger than itself */
        r->cap = r->mem_len + 1 < (1u << 16) ? (1u << 16) : r->mem_len + 1;
    r->buf = malloc(r->cap);
    r->scratch = malloc(r->cap);
    if (!r->buf || !r->scratch) {
        snprintf(r->err, r->errlen, "%s: out of memory for the read buffer", r->name);
        return -1;
    }
    for (;;) {
        const char *p = r->buf + r->pos, *end = r->buf + r->len;
        r->scratch_len = 0;
        int rc = step(r, &p, end);
        if (rc == P_OK) {
            r->pos = (size_t)(p - r->buf);
            if (r->state == S_FINISHED)
                break;
            continue;
        }
        if (rc == P_MORE) {
            if (r->eof) {
                format_error(r, NULL, 1);
                return -1;
            }
            if (refill(r) != 0)
                return -1;
            continue;
        }
        if (rc == P_STOP) {
            snprintf(r->err, r->errlen, "%s: stopped at the event at byte %llu", r->name,
                     (unsigned long long)offset_of(r, r->unit_start));
            return r->stop_value;
        }
        format_error(r, r->fail_at, 0);
        return -1;
    }
    r->info->bytes = r->base_offset + r->len;
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
    r.mem = data;
    r.mem_len = len;
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
