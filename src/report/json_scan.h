/* json_scan.h: the byte-level JSON scanner under the trace reader (trace_reader.c): whitespace,
 * strings, numbers, the separator between items, objects member by member, and values skipped
 * whole, over a window of text that may end in the middle of a value.
 *
 * The window is the data read so far, up to s->end, followed by JSON_SCAN_PAD zero bytes. A
 * zero byte is taken by no scan (it is not whitespace, not a digit, and a control character
 * inside a string), so every scan stops at the end of the data as it stops at any byte it does
 * not take: the fast paths look at the end only where they stop, never per byte, and may read
 * up to 16 bytes past the byte they stop at (inside the padding).
 *
 * Results: JSON_OK; JSON_MORE: the data ends before the value does (read more and parse the
 * unit again from its start; s->expected says what was expected, for the error at the end of
 * the file); JSON_BAD: s->fail_at is the byte where s->expected was expected; JSON_STOP: the
 * caller's own (a callback asked to stop).
 *
 * The fast paths are static inline here: strings without escapes, numbers without an exponent
 * and with at most 18 integer digits, the usual single blank between tokens. Every other case
 * goes to a slow path in json_scan.c, which reads the same token again from its start, each
 * byte checked, and decides the value or the error; both paths give the same results. */
#ifndef DT_JSON_SCAN_H
#define DT_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "trace_reader.h"

#define JSON_SCAN_PAD 64   /* zero bytes after the data; at least 16 (one vector load) */
#define JSON_MAX_DEPTH 128 /* nesting of skipped values */

enum { JSON_OK = 0, JSON_MORE = 1, JSON_BAD = 2, JSON_STOP = 3 };

typedef struct json_scan {
    const char *end;      /* borrowed: the end of the data; end[0 .. JSON_SCAN_PAD-1] are 0 */
    char *scratch;        /* borrowed: where strings with escapes are decoded, the unit's size */
    size_t scratch_len;   /* bytes of scratch used by the current unit */
    const char *fail_at;  /* JSON_BAD: the byte that is not what was expected */
    const char *expected; /* JSON_MORE and JSON_BAD: what was expected there, in words */
} json_scan;

/* A number: both readings the reader needs, from the text (not through a double) where exact. */
typedef struct json_number {
    int64_t integer; /* truncated toward zero, saturated */
    int64_t milli;   /* value * 1000, rounded half away from zero, saturated */
} json_number;

/* Called for each member of an object, at the first byte of its value: parses or skips it. */
typedef int (*json_member_fn)(json_scan *s, const dt_tr_str *key, const char **pp, void *ctx);

/* ---- the slow paths (json_scan.c) ---- */

/* The string at *pp (its opening quote), each byte checked, escapes decoded into the scratch
 * when out is not NULL. */
int dt_json_string_slow(json_scan *s, const char **pp, dt_tr_str *out);
/* The number at *pp, strict grammar, through strtod past 18 digits or with an exponent. */
int dt_json_number_slow(json_scan *s, const char **pp, json_number *out);
/* Any value at *pp, checked and skipped; depth is its nesting (at most JSON_MAX_DEPTH). */
int dt_json_skip_value(json_scan *s, const char **pp, int depth);

/* ---- failing ---- */

static inline int json_need(json_scan *s, const char *what)
{
    s->expected = what;
    return JSON_MORE;
}

static inline int json_bad(json_scan *s, const char *at, const char *what)
{
    s->fail_at = at;
    s->expected = what;
    return JSON_BAD;
}

/* A scan stopped at a byte it does not take: the end of the data (more is needed: need) or a
 * byte that is wrong there (bad). */
static inline int json_stopped(json_scan *s, const char *at, const char *need, const char *bad)
{
    return at >= s->end ? json_need(s, need) : json_bad(s, at, bad);
}

/* ---- whitespace ---- */

static inline int json_is_ws(char c)
{
    unsigned char u = (unsigned char)c;
    return u <= ' ' && ((1ull << u) & ((1ull << ' ') | (1ull << '\n') | (1ull << '\r') | (1ull << '\t'))) != 0;
}

/* A run of whitespace from p, 16 bytes at a time (SSE2 is part of x86-64): a pretty-printed
 * trace is a third whitespace. */
static inline const char *json_skip_ws_run(const char *p)
{
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                  tab = _mm_set1_epi8('\t');
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, nl)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
        unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xFFFFu;
        if (other)
            return p + __builtin_ctz(other);
        p += 16;
    }
#else
    while (json_is_ws(*p))
        p++;
    return p;
#endif
}

/* The first byte from p that is not whitespace (the end of the data at the latest). */
static inline const char *json_skip_ws(const char *p)
{
    if (!json_is_ws(*p))
        return p;
    if (!json_is_ws(p[1])) /* the one blank after ':' and ',' */
        return p + 1;
    return json_skip_ws_run(p + 2);
}

/* ---- strings ---- */

/* The first byte from p that ends a plain run of a string: '"', '\\' or a control character
 * (the zero byte after the data is one). */
static inline const char *json_string_stop(const char *p)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                    _mm_cmpeq_epi8(_mm_min_epu8(v, control), v)); /* v <= 0x1F, unsigned */
        unsigned mask = (unsigned)_mm_movemask_epi8(stop);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#else
    while (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
        p++;
    return p;
#endif
}

/* The string at *pp (its opening quote); out (may be NULL) borrows its bytes from the window,
 * or from the scratch when it holds escapes. */
static inline int json_read_string(json_scan *s, const char **pp, dt_tr_str *out)
{
    const char *begin = *pp + 1, *p = json_string_stop(begin);
    if (*p != '"')
        return dt_json_string_slow(s, pp, out);
    if (out) {
        out->s = begin;
        out->len = (size_t)(p - begin);
    }
    *pp = p + 1;
    return JSON_OK;
}

/* ---- numbers ---- */

static inline int json_is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

/* The 8 bytes at p, the first in the lowest byte, each less '0' (a digit becomes 0 to 9). */
static inline uint64_t json_load8_digits(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v ^ 0x3030303030303030ull;
}

/* How many of those bytes are digits, counted from the first (SWAR: a byte is a digit when its
 * high nibble is 0 and adding 6 does not carry into it; a carry out of a byte that is not a
 * digit only disturbs the bytes after it). */
static inline unsigned json_digit_count8(uint64_t t)
{
    uint64_t not_digit = (t | (t + 0x0606060606060606ull)) & 0xF0F0F0F0F0F0F0F0ull;
    return not_digit ? (unsigned)__builtin_ctzll(not_digit) >> 3 : 8;
}

/* The value of the first n (1 to 8) digits: shifted to the top as if after leading zeros, then
 * pairs, quads and the eight combined by multiplication. */
static inline uint64_t json_digits_value(uint64_t t, unsigned n)
{
    t <<= 8 * (8 - n);
    t = (t * 10 + (t >> 8)) & 0x00FF00FF00FF00FFull;
    t = (t * 100 + (t >> 16)) & 0x0000FFFF0000FFFFull;
    return (t * 10000 + (t >> 32)) & 0xFFFFFFFFull;
}

static const uint64_t json_pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* The number at *pp ('-' or a digit). Microsecond times ("ts": 1700000000123.456) become
 * milli without a double: up to 18 integer digits, the fraction's first three digits and the
 * fourth for rounding. */
static inline int json_read_number(json_scan *s, const char **pp, json_number *out)
{
    const char *p = *pp;
    int neg = *p == '-';
    p += neg;
    uint64_t acc = 0;
    if (*p == '0') {
        p++;
    } else {
        uint64_t t = json_load8_digits(p);
        unsigned n = json_digit_count8(t);
        if (n == 0)
            return dt_json_number_slow(s, pp, out);
        acc = json_digits_value(t, n);
        p += n;
        if (n == 8) {
            t = json_load8_digits(p);
            n = json_digit_count8(t);
            if (n > 0)
                acc = acc * json_pow10[n] + json_digits_value(t, n);
            p += n;
            if (n == 8) {
                t = json_load8_digits(p);
                n = json_digit_count8(t);
                if (n > 2) /* 19 digits or more */
                    return dt_json_number_slow(s, pp, out);
                if (n > 0)
                    acc = acc * json_pow10[n] + json_digits_value(t, n);
                p += n;
            }
        }
    }
    unsigned frac = 0, round_up = 0;
    if (*p == '.') {
        uint64_t t = json_load8_digits(p + 1);
        unsigned n = json_digit_count8(t);
        if (n == 0)
            return dt_json_number_slow(s, pp, out);
        uint64_t first = n >= 4 ? t : t & ((1ull << (8 * n)) - 1); /* the digits among the first four */
        frac = (unsigned)(first & 0xFF) * 100 + (unsigned)(first >> 8 & 0xFF) * 10 + (unsigned)(first >> 16 & 0xFF);
        round_up = (first >> 24 & 0xFF) >= 5;
        p += 1 + n;
        if (n == 8)
            while (json_is_digit(*p))
                p++;
    }
    if (*p == 'e' || *p == 'E' || p >= s->end) /* an exponent, or the number may go on */
        return dt_json_number_slow(s, pp, out);
    out->integer = neg ? -(int64_t)acc : (int64_t)acc;
    int64_t milli = acc <= (uint64_t)(INT64_MAX / 1000 - 1) ? (int64_t)(acc * 1000 + frac + round_up) : INT64_MAX;
    out->milli = neg ? -milli : milli;
    *pp = p;
    return JSON_OK;
}

/* ---- objects ---- */

/* A member's name at *pp (need: what to say when the data ends there, bad: when the byte is not
 * a '"') and the ':' after it; *pp moves to the first byte of the value. key may be NULL. */
static inline int json_member_name(json_scan *s, const char **pp, dt_tr_str *key, const char *need, const char *bad)
{
    const char *p = *pp;
    int rc;
    if (*p != '"')
        return json_stopped(s, p, need, bad);
    if ((rc = json_read_string(s, &p, key)) != JSON_OK)
        return rc;
    if (*p != ':') {
        p = json_skip_ws(p);
        if (*p != ':')
            return json_stopped(s, p, "':' after a member name", "':' after a member name");
    }
    p = json_skip_ws(p + 1);
    if (p >= s->end)
        return json_need(s, "a member's value");
    *pp = p;
    return JSON_OK;
}

/* The separator after an item of an object or an array (whitespace first): ',' and the
 * whitespace after it (*closed = 0, *pp at the next item), or close (*closed = 1, *pp past it).
 * expected names both, next the item after a ','. */
static inline int json_separator(json_scan *s, const char **pp, char close, const char *expected, const char *next,
                                 int *closed)
{
    const char *p = json_skip_ws(*pp);
    if (*p == ',') {
        p = json_skip_ws(p + 1);
        if (p >= s->end)
            return json_need(s, next);
        *closed = 0;
        *pp = p;
        return JSON_OK;
    }
    if (*p == close) {
        *closed = 1;
        *pp = p + 1;
        return JSON_OK;
    }
    return json_stopped(s, p, expected, expected);
}

/* The object at *pp (its '{'), member(s, key, &p, ctx) called at each member's value. Always
 * inlined, so that the member function is called directly (and inlined in turn). */
static inline __attribute__((always_inline)) int json_object(json_scan *s, const char **pp, json_member_fn member,
                                                             void *ctx)
{
    const char *p = json_skip_ws(*pp + 1);
    int rc, closed = 0;
    if (*p == '}') {
        *pp = p + 1;
        return JSON_OK;
    }
    while (!closed) {
        dt_tr_str key;
        if ((rc = json_member_name(s, &p, &key, "a member or '}'", "a member name (a string)")) != JSON_OK)
            return rc;
        if ((rc = member(s, &key, &p, ctx)) != JSON_OK)
            return rc;
        if ((rc = json_separator(s, &p, '}', "',' or '}' after a member", "a member after ','", &closed)) != JSON_OK)
            return rc;
    }
    *pp = p;
    return JSON_OK;
}

#endif
