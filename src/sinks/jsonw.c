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

const char dt_jsonw_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
const uint64_t dt_jsonw_pow10[20] = {1ull,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};

void dt_jsonw_u64(dt_jsonw *w, uint64_t v)
{
    if (w->cap - w->len < DT_JSONW_NUMBER_MAX && dt_jsonw_reserve(w, DT_JSONW_NUMBER_MAX) != 0)
        return;
    w->len = (size_t)(dt_jsonw_put_u64(w->buf + w->len, v) - w->buf);
}

void dt_jsonw_i64(dt_jsonw *w, int64_t v)
{
    if (w->cap - w->len < DT_JSONW_NUMBER_MAX && dt_jsonw_reserve(w, DT_JSONW_NUMBER_MAX) != 0)
        return;
    w->len = (size_t)(dt_jsonw_put_i64(w->buf + w->len, v) - w->buf);
}

void dt_jsonw_us3(dt_jsonw *w, uint64_t ns)
{
    if (w->cap - w->len < DT_JSONW_NUMBER_MAX && dt_jsonw_reserve(w, DT_JSONW_NUMBER_MAX) != 0)
        return;
    w->len = (size_t)(dt_jsonw_put_us3(w->buf + w->len, ns) - w->buf);
}

/* Powers of ten a double holds exactly. */
static const double exact_pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

/* v with `decimals` decimals exactly as printf("%.*f") writes it (in the C locale),
 * without printf, when that is certain: x = |v| * 10^decimals carries one rounding
 * error of at most x * 2^-53, so when x's fraction is farther than twice that from one
 * half, x's nearest integer is the correct rounding of the exact decimal expansion.
 * Returns the length written, or 0 when unsure (a tie or near one, or out of range). */
static size_t format_fixed_fast(char *out, double v, int decimals)
{
    if (decimals < 0 || decimals > 9)
        return 0;
    double x = fabs(v) * exact_pow10[decimals];
    if (!(x < 0x1p50))
        return 0;
    double whole = floor(x), frac = x - whole; /* both exact below 2^52 */
    if (fabs(frac - 0.5) <= x * 0x1p-52)
        return 0;
    uint64_t r = (uint64_t)whole + (frac > 0.5);
    size_t n = 0;
    if (signbit(v))
        out[n++] = '-';
    n += dt_jsonw_format_u64(out + n, r / dt_jsonw_pow10[decimals]);
    if (decimals > 0) {
        uint64_t f = r % dt_jsonw_pow10[decimals];
        out[n] = '.';
        for (int i = decimals; i > 0; i--, f /= 10)
            out[n + (size_t)i] = (char)('0' + f % 10);
        n += (size_t)decimals + 1;
    }
    return n;
}

char *dt_jsonw_put_fixed(char *p, double v, int decimals)
{
    if (!isfinite(v) || fabs(v) > 1e15)
        v = 0;
    size_t o = format_fixed_fast(p, v, decimals);
    if (o)
        return p + o;
    char tmp[DT_JSONW_FIXED_MAX];
    int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
    /* "%f" writes the traced program's LC_NUMERIC decimal point (',' in de_DE, maybe
     * several bytes); JSON needs '.': keep the sign and digits, write '.' for the rest. */
    for (int i = 0, radix = 0; i < n && i < (int)sizeof tmp - 1; i++) {
        char c = tmp[i];
        if ((c >= '0' && c <= '9') || (i == 0 && c == '-'))
            p[o++] = c;
        else if (!radix)
            p[o++] = '.', radix = 1;
    }
    return p + o;
}

void dt_jsonw_fixed(dt_jsonw *w, double v, int decimals)
{
    if (w->cap - w->len < DT_JSONW_FIXED_MAX && dt_jsonw_reserve(w, DT_JSONW_FIXED_MAX) != 0)
        return;
    w->len = (size_t)(dt_jsonw_put_fixed(w->buf + w->len, v, decimals) - w->buf);
}

size_t dt_utf8_sequence(const unsigned char *s, size_t n)
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
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
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
        size_t len = dt_utf8_sequence(s + i, n - i);
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
