/* json_scan.c: the JSON scanner's slow paths (json_scan.h): strings with escapes or that run
 * past the data, numbers the fast path does not take, and values skipped whole. Each reads its
 * token from the start, every byte checked against the end of the data, and says exactly what
 * was expected where it stops. */
#include "json_scan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings ---- */

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

int dt_json_string_slow(json_scan *s, const char **pp, dt_tr_str *out)
{
    const char *p = *pp + 1, *begin = p, *end = s->end;
    for (;;) {
        p = json_string_stop(p);
        if (p >= end)
            return json_need(s, "the rest of a string and its closing '\"'");
        if (*p == '"') {
            if (out) {
                out->s = begin;
                out->len = (size_t)(p - begin);
            }
            *pp = p + 1;
            return JSON_OK;
        }
        if (*p != '\\')
            return json_bad(s, p, "a character of a string (a control character must be escaped)");
        break;
    }
    /* Escapes: decode from begin into the scratch. */
    char *o = out ? s->scratch + s->scratch_len : NULL, *o_begin = o;
    if (o) {
        memcpy(o, begin, (size_t)(p - begin));
        o += p - begin;
    }
    for (;;) {
        if (p >= end)
            return json_need(s, "the rest of a string and its closing '\"'");
        char c = *p;
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20)
            return json_bad(s, p, "a character of a string (a control character must be escaped)");
        if (c != '\\') {
            if (o)
                *o++ = c;
            p++;
            continue;
        }
        if (p + 1 >= end)
            return json_need(s, "the rest of an escape in a string");
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
            return json_bad(s, p, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
        if (p + 6 > end)
            return json_need(s, "the four hex digits of a \\u escape");
        uint32_t cp;
        if (read_hex4(p + 2, &cp) != 0)
            return json_bad(s, p, "four hex digits after \\u");
        p += 6;
        if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate: its pair follows */
            if (p + 6 > end)
                return json_need(s, "the low surrogate after a \\u high surrogate");
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
        s->scratch_len += out->len;
    }
    *pp = p + 1;
    return JSON_OK;
}

/* ---- numbers ---- */

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

int dt_json_number_slow(json_scan *s, const char **pp, json_number *out)
{
    const char *p = *pp, *start = p, *end = s->end;
    int neg = 0, slow = 0;
    uint64_t acc = 0;
    if (*p == '-') {
        neg = 1;
        if (++p >= end)
            return json_need(s, "the digits of a number");
    }
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && json_is_digit(*p)) {
            if (acc > (UINT64_MAX - 9) / 10)
                slow = 1;
            acc = acc * 10 + (uint64_t)(*p - '0');
            p++;
        }
    } else {
        return json_bad(s, p, "a digit");
    }
    unsigned frac = 0, frac_digits = 0, round_digit = 0;
    if (p < end && *p == '.') {
        p++;
        if (p >= end)
            return json_need(s, "the digits after a number's '.'");
        if (!json_is_digit(*p))
            return json_bad(s, p, "a digit after a number's '.'");
        while (p < end && json_is_digit(*p)) {
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
            return json_need(s, "the digits of a number's exponent");
        if (!json_is_digit(*p))
            return json_bad(s, p, "a digit of a number's exponent");
        while (p < end && json_is_digit(*p))
            p++;
    }
    if (p >= end)
        return json_need(s, "the rest of a number");
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
    return JSON_OK;
}

/* ---- values skipped ---- */

static int skip_literal(json_scan *s, const char **pp, const char *lit)
{
    size_t n = strlen(lit);
    const char *p = *pp;
    for (size_t i = 0; i < n; i++) {
        if (p + i >= s->end)
            return json_need(s, "the rest of true, false or null");
        if (p[i] != lit[i])
            return json_bad(s, p + i, "true, false or null");
    }
    *pp = p + n;
    return JSON_OK;
}

/* Members of an object (from just after '{') or elements of an array, skipped. */
static int skip_container(json_scan *s, const char **pp, int depth, char close)
{
    int object = close == '}', rc, closed = 0;
    const char *p = json_skip_ws(*pp);
    if (*p == close) {
        *pp = p + 1;
        return JSON_OK;
    }
    if (p >= s->end)
        return json_need(s, object ? "a member or '}'" : "a value or ']'");
    while (!closed) {
        if (object && (rc = json_member_name(s, &p, NULL, "a member or '}'", "a member name (a string)")) != JSON_OK)
            return rc;
        if ((rc = dt_json_skip_value(s, &p, depth + 1)) != JSON_OK)
            return rc;
        rc = object ? json_separator(s, &p, '}', "',' or '}' after a member", "a member after ','", &closed)
                    : json_separator(s, &p, ']', "',' or ']' after a value", "a value after ','", &closed);
        if (rc != JSON_OK)
            return rc;
    }
    *pp = p;
    return JSON_OK;
}

int dt_json_skip_value(json_scan *s, const char **pp, int depth)
{
    const char *p = *pp;
    if (p >= s->end)
        return json_need(s, "a value");
    if (depth > JSON_MAX_DEPTH)
        return json_bad(s, p, "a value nested at most 128 deep");
    json_number n;
    switch (*p) {
    case '"':
        return json_read_string(s, pp, NULL);
    case '{':
    case '[':
        *pp = p + 1;
        return skip_container(s, pp, depth, *p == '{' ? '}' : ']');
    case 't':
        return skip_literal(s, pp, "true");
    case 'f':
        return skip_literal(s, pp, "false");
    case 'n':
        return skip_literal(s, pp, "null");
    default:
        if (*p == '-' || json_is_digit(*p))
            return json_read_number(s, pp, &n);
        return json_bad(s, p, "a value (string, number, object, array, true, false or null)");
    }
}
