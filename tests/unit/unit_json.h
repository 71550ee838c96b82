/* unit_json.h: a strict JSON reader for the unit tests (header only).
 *
 * Parses RFC 8259 JSON into a small tree and rejects everything else: trailing commas,
 * leading zeros, bad escapes, raw control characters or invalid UTF-8 in strings, lone
 * surrogate escapes, duplicate keys in one object, text after the value. Objects keep
 * their keys in document order, so tests can check key order. Numbers keep their exact
 * source text (`raw`) as well as a double. No Python is needed to check a trace. */
#ifndef UNIT_JSON_H
#define UNIT_JSON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum uj_type { UJ_NULL, UJ_BOOL, UJ_NUMBER, UJ_STRING, UJ_ARRAY, UJ_OBJECT } uj_type;

typedef struct uj_value {
    uj_type type;
    int boolean;
    double number;
    char *raw;               /* number: the source text; owned */
    char *str;               /* string: decoded UTF-8, NUL-terminated; owned */
    size_t len;              /* string: decoded length */
    char **keys;             /* object: keys in document order; owned */
    struct uj_value **items; /* array elements or object values; owned */
    size_t n;
} uj_value;

typedef struct uj_parser {
    const unsigned char *p, *end;
    int depth;
    char error[160];
} uj_parser;

static inline void uj_free(uj_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        if (v->keys)
            free(v->keys[i]);
        uj_free(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v->raw);
    free(v->str);
    free(v);
}

static inline uj_value *uj_fail(uj_parser *ps, const char *fmt, ...)
{
    if (!ps->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->error, sizeof ps->error, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

static inline void uj_skip_ws(uj_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid. */
static inline size_t uj_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1Fu;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0Fu;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07u;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

static inline int uj_hex4(uj_parser *ps, uint32_t *out)
{
    if (ps->end - ps->p < 4)
        return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = ps->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    ps->p += 4;
    *out = v;
    return 0;
}

static inline size_t uj_put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses a string at ps->p (on the opening quote) into a malloc'd buffer. */
static inline char *uj_parse_string(uj_parser *ps, size_t *outlen)
{
    ps->p++; /* opening quote */
    const unsigned char *start = ps->p;
    /* Decoded text is never longer than the source. */
    size_t cap = 1;
    for (const unsigned char *q = start; q < ps->end && *q != '"'; q++)
        cap += (*q == '\\' && q + 1 < ps->end) ? (q++, 2) : 1;
    char *out = malloc(cap + 4);
    size_t o = 0;
    if (!out) {
        uj_fail(ps, "out of memory");
        return NULL;
    }
    for (;;) {
        if (ps->p >= ps->end) {
            uj_fail(ps, "unterminated string");
            goto fail;
        }
        unsigned char c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) {
            uj_fail(ps, "raw control character 0x%02x in a string", c);
            goto fail;
        }
        if (c == '\\') {
            ps->p++;
            if (ps->p >= ps->end) {
                uj_fail(ps, "unterminated escape");
                goto fail;
            }
            unsigned char e = *ps->p++;
            uint32_t cp;
            switch (e) {
            case '"':
                out[o++] = '"';
                break;
            case '\\':
                out[o++] = '\\';
                break;
            case '/':
                out[o++] = '/';
                break;
            case 'b':
                out[o++] = '\b';
                break;
            case 'f':
                out[o++] = '\f';
                break;
            case 'n':
                out[o++] = '\n';
                break;
            case 'r':
                out[o++] = '\r';
                break;
            case 't':
                out[o++] = '\t';
                break;
            case 'u':
                if (uj_hex4(ps, &cp) != 0) {
                    uj_fail(ps, "bad \\u escape");
                    goto fail;
                }
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    uj_fail(ps, "lone low surrogate escape");
                    goto fail;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                        uj_fail(ps, "lone high surrogate escape");
                        goto fail;
                    }
                    ps->p += 2;
                    if (uj_hex4(ps, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF) {
                        uj_fail(ps, "bad surrogate pair");
                        goto fail;
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                o += uj_put_utf8(out + o, cp);
                break;
            default:
                uj_fail(ps, "bad escape \\%c", e);
                goto fail;
            }
            continue;
        }
        size_t len = uj_utf8_len(ps->p, (size_t)(ps->end - ps->p));
        if (len == 0) {
            uj_fail(ps, "invalid UTF-8 byte 0x%02x in a string", c);
            goto fail;
        }
        memcpy(out + o, ps->p, len);
        o += len;
        ps->p += len;
    }
    out[o] = '\0';
    *outlen = o;
    return out;
fail:
    free(out);
    return NULL;
}

static inline uj_value *uj_new(uj_type t)
{
    uj_value *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

static inline int uj_append(uj_value *v, char *key, uj_value *item)
{
    if (v->type == UJ_OBJECT) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (!keys)
            return -1;
        v->keys = keys;
    }
    uj_value **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items)
        return -1;
    v->items = items;
    if (v->type == UJ_OBJECT)
        v->keys[v->n] = key;
    v->items[v->n++] = item;
    return 0;
}

static inline uj_value *uj_parse_value(uj_parser *ps);

static inline uj_value *uj_parse_number(uj_parser *ps)
{
    const unsigned char *s = ps->p, *q = ps->p;
    if (q < ps->end && *q == '-')
        q++;
    if (q >= ps->end)
        return uj_fail(ps, "truncated number");
    if (*q == '0') {
        q++;
    } else if (*q >= '1' && *q <= '9') {
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    } else {
        return uj_fail(ps, "bad number");
    }
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return uj_fail(ps, "bad fraction");
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return uj_fail(ps, "bad exponent");
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    uj_value *v = uj_new(UJ_NUMBER);
    if (!v || !(v->raw = malloc((size_t)(q - s) + 1))) {
        uj_free(v);
        return uj_fail(ps, "out of memory");
    }
    memcpy(v->raw, s, (size_t)(q - s));
    v->raw[q - s] = '\0';
    v->number = strtod(v->raw, NULL);
    ps->p = q;
    return v;
}

static inline uj_value *uj_parse_container(uj_parser *ps, int object)
{
    if (++ps->depth > 64)
        return uj_fail(ps, "nested too deeply");
    ps->p++; /* [ or { */
    uj_value *v = uj_new(object ? UJ_OBJECT : UJ_ARRAY);
    if (!v)
        return uj_fail(ps, "out of memory");
    uj_skip_ws(ps);
    const unsigned char close = object ? '}' : ']';
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        uj_skip_ws(ps);
        if (object) {
            size_t klen;
            if (ps->p >= ps->end || *ps->p != '"') {
                uj_fail(ps, "expected a key");
                goto fail;
            }
            if (!(key = uj_parse_string(ps, &klen)))
                goto fail;
            for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->keys[i], key) == 0) {
                    uj_fail(ps, "duplicate key \"%.60s\"", key);
                    free(key);
                    goto fail;
                }
            uj_skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                uj_fail(ps, "expected ':'");
                goto fail;
            }
            ps->p++;
        }
        uj_value *item = uj_parse_value(ps);
        if (!item || uj_append(v, key, item) != 0) {
            free(key);
            uj_free(item);
            uj_fail(ps, "out of memory");
            goto fail;
        }
        uj_skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            break;
        }
        uj_fail(ps, "expected ',' or '%c'", close);
        goto fail;
    }
    ps->depth--;
    return v;
fail:
    uj_free(v);
    return NULL;
}

static inline int uj_literal(uj_parser *ps, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n) != 0)
        return 0;
    ps->p += n;
    return 1;
}

static inline uj_value *uj_parse_value(uj_parser *ps)
{
    uj_skip_ws(ps);
    if (ps->p >= ps->end)
        return uj_fail(ps, "expected a value, found the end");
    unsigned char c = *ps->p;
    if (c == '{' || c == '[')
        return uj_parse_container(ps, c == '{');
    if (c == '"') {
        uj_value *v = uj_new(UJ_STRING);
        if (!v)
            return uj_fail(ps, "out of memory");
        if (!(v->str = uj_parse_string(ps, &v->len))) {
            uj_free(v);
            return NULL;
        }
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return uj_parse_number(ps);
    uj_value *v = NULL;
    if (uj_literal(ps, "true")) {
        v = uj_new(UJ_BOOL);
        if (v)
            v->boolean = 1;
    } else if (uj_literal(ps, "false")) {
        v = uj_new(UJ_BOOL);
    } else if (uj_literal(ps, "null")) {
        v = uj_new(UJ_NULL);
    } else {
        return uj_fail(ps, "unexpected character 0x%02x", c);
    }
    return v ? v : uj_fail(ps, "out of memory");
}

/* Parses text[0..len) as one JSON document. Returns NULL and fills error (when not
 * NULL, 160 bytes) with the reason and byte offset when the text is not valid JSON. */
static inline uj_value *uj_parse(const char *text, size_t len, char *error)
{
    uj_parser ps = {(const unsigned char *)text, (const unsigned char *)text + len, 0, ""};
    uj_value *v = uj_parse_value(&ps);
    if (v) {
        uj_skip_ws(&ps);
        if (ps.p != ps.end) {
            uj_free(v);
            v = uj_fail(&ps, "text after the value");
        }
    }
    if (!v && error)
        snprintf(error, 160, "at byte %ld: %s", (long)(ps.p - (const unsigned char *)text), ps.error);
    return v;
}

/* The member of an object by key, or NULL. */
static inline const uj_value *uj_get(const uj_value *obj, const char *key)
{
    if (!obj || obj->type != UJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

/* The string member of an object, or NULL when absent or not a string. */
static inline const char *uj_get_str(const uj_value *obj, const char *key)
{
    const uj_value *v = uj_get(obj, key);
    return v && v->type == UJ_STRING ? v->str : NULL;
}

/* The number member's source text, or NULL when absent or not a number. */
static inline const char *uj_get_raw(const uj_value *obj, const char *key)
{
    const uj_value *v = uj_get(obj, key);
    return v && v->type == UJ_NUMBER ? v->raw : NULL;
}

/* The object's keys joined by ',' into buf ("a,b,c"). */
static inline const char *uj_keys(const uj_value *obj, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; obj && obj->type == UJ_OBJECT && i < obj->n; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? "," : "", obj->keys[i]);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    return buf;
}

#endif /* UNIT_JSON_H */
