/* jsonw.c: JSON writer (see jsonw.h). */
#include "jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int dt_jsonw_init(dt_jsonw *w, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->buf = malloc(cap);
    if (!w->buf)
        return -1;
    w->cap = cap;
    return 0;
}

void dt_jsonw_free(dt_jsonw *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

int dt_jsonw_flush(dt_jsonw *w)
{
    if (w->failed)
        return -1;
    if (!w->len || (!w->file && !w->gz))
        return 0;
    if (w->gz) {
        if (gzwrite((gzFile)w->gz, w->buf, (unsigned)w->len) != (int)w->len) {
            int zerr = 0;
            gzerror((gzFile)w->gz, &zerr);
            w->err = zerr == Z_ERRNO && errno ? errno : EIO;
            w->failed = 1;
            return -1;
        }
    } else if (fwrite(w->buf, 1, w->len, w->file) != w->len) {
        w->err = errno ? errno : EIO;
        w->failed = 1;
        return -1;
    }
    w->written += w->len;
    w->len = 0;
    return 0;
}

int dt_jsonw_reserve(dt_jsonw *w, size_t n)
{
    if (w->failed)
        return -1;
    if (w->cap - w->len >= n)
        return 0;
    if ((w->file || w->gz) && dt_jsonw_flush(w) != 0)
        return -1;
    if (w->cap - w->len >= n)
        return 0;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap - w->len < n)
        cap *= 2;
    char *p = realloc(w->buf, cap);
    if (!p) {
        w->failed = 1;
        w->err = ENOMEM;
        return -1;
    }
    w->buf = p;
    w->cap = cap;
    return 0;
}

static size_t format_u64(char *out, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

void dt_jsonw_u64(dt_jsonw *w, uint64_t v)
{
    if (w->cap - w->len < 24 && dt_jsonw_reserve(w, 24) != 0)
        return;
    w->len += format_u64(w->buf + w->len, v);
}

void dt_jsonw_i64(dt_jsonw *w, int64_t v)
{
    if (v < 0) {
        DT_JSONW_LIT(w, "-");
        dt_jsonw_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        dt_jsonw_u64(w, (uint64_t)v);
    }
}

void dt_jsonw_us3(dt_jsonw *w, uint64_t ns)
{
    if (w->cap - w->len < 32 && dt_jsonw_reserve(w, 32) != 0)
        return;
    char *p = w->buf + w->len;
    size_t n = format_u64(p, ns / 1000);
    uint64_t frac = ns % 1000;
    p[n] = '.';
    p[n + 1] = (char)('0' + frac / 100);
    p[n + 2] = (char)('0' + frac / 10 % 10);
    p[n + 3] = (char)('0' + frac % 10);
    w->len += n + 4;
}

void dt_jsonw_fixed(dt_jsonw *w, double v, int decimals)
{
    if (!isfinite(v) || fabs(v) > 1e15)
        v = 0;
    char tmp[64], out[64];
    int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
    /* "%f" writes the traced program's LC_NUMERIC decimal point (',' in de_DE, maybe
     * several bytes); JSON needs '.': keep the sign and digits, write '.' for the rest. */
    size_t o = 0;
    for (int i = 0, radix = 0; i < n && i < (int)sizeof tmp - 1; i++) {
        char c = tmp[i];
        if ((c >= '0' && c <= '9') || (i == 0 && c == '-'))
            out[o++] = c;
        else if (!radix)
            out[o++] = '.', radix = 1;
    }
    dt_jsonw_raw(w, out, o);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

size_t dt_json_escape(char *dst, const char *src, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    dst[o++] = '"';
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            dst[o++] = (char)c;
            i++;
            continue;
        }
        if (c == '"' || c == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)c;
            i++;
            continue;
        }
        if (c < 0x20) {
            const char *short_form = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (short_form) {
                dst[o++] = short_form[0];
                dst[o++] = short_form[1];
            } else {
                memcpy(dst + o, "\\u00", 4);
                dst[o + 4] = hex[c >> 4];
                dst[o + 5] = hex[c & 15];
                o += 6;
            }
            i++;
            continue;
        }
        size_t len = utf8_sequence(s + i, n - i);
        if (len == 0) {
            memcpy(dst + o, "\\ufffd", 6);
            o += 6;
            i++;
        } else {
            memcpy(dst + o, s + i, len);
            o += len;
            i += len;
        }
    }
    dst[o++] = '"';
    return o;
}

void dt_jsonw_str(dt_jsonw *w, const char *s, size_t n)
{
    size_t need = 6 * n + 3;
    if (w->cap - w->len < need && dt_jsonw_reserve(w, need) != 0)
        return;
    w->len += dt_json_escape(w->buf + w->len, s, n);
}
