/* jsonw.h: a small, fast JSON text writer into a growable buffer that is flushed to
 * a plain file or a gzip stream. Used by the Chrome trace sink. */
#ifndef DT_JSONW_H
#define DT_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct dt_jsonw {
    char *buf; /* owned */
    size_t len, cap;
    FILE *file; /* borrowed; one of file/gz/none (memory only) */
    void *gz;   /* gzFile, borrowed */
    int failed; /* a write failed: errno kept in err */
    int err;
    uint64_t written; /* bytes handed to the output */
} dt_jsonw;

int dt_jsonw_init(dt_jsonw *w, size_t cap);
void dt_jsonw_free(dt_jsonw *w);
/* Makes room for n more bytes (flushing to the output first when there is one). */
int dt_jsonw_reserve(dt_jsonw *w, size_t n);
int dt_jsonw_flush(dt_jsonw *w);

static inline void dt_jsonw_raw(dt_jsonw *w, const char *s, size_t n)
{
    if (w->cap - w->len < n && dt_jsonw_reserve(w, n) != 0)
        return;
    memcpy(w->buf + w->len, s, n); /* not a byte loop: a char store may alias w, so each reloads it */
    w->len += n;
}
/* lit must be a string literal ("" lit does not compile otherwise). */
#define DT_JSONW_LIT(w, lit) dt_jsonw_raw((w), "" lit, sizeof("" lit) - 1)

/* Writing at a position the caller made room for (dt_jsonw_reserve): each function
 * writes at p and returns the end, and the caller sets w->len from the last one. A
 * writer of many small pieces keeps p in a register: appending through w->len makes
 * every piece wait for the store of the one before. */
#define DT_JSONW_NUMBER_MAX 24 /* bytes dt_jsonw_put_u64/_i64/_us3 write at most */
#define DT_JSONW_FIXED_MAX 64  /* ... and dt_jsonw_put_fixed */
static inline char *dt_jsonw_put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define DT_JSONW_PUT_LIT(p, lit) dt_jsonw_put((p), "" lit, sizeof("" lit) - 1)
/* Decimal digits: the tables, and v's digits at out (room for 20), returning how many:
 * the digit count from the bit length (bits * log10(2) ~ 1233/4096, corrected by one
 * comparison; v | 1 has the digits of v), then four digits per division, so that the
 * chain of dependent divisions is short. Inline: the sink writes ~12 numbers an event. */
extern const char dt_jsonw_digit_pairs[201]; /* "00" "01" ... "99" */
extern const uint64_t dt_jsonw_pow10[20];
static inline size_t dt_jsonw_format_u64(char *out, uint64_t v)
{
    uint64_t x = v | 1;
    unsigned t = ((64u - (unsigned)__builtin_clzll(x)) * 1233u) >> 12;
    size_t n = (size_t)t - (x < dt_jsonw_pow10[t]) + 1;
    char *p = out + n;
    while (v >= 10000) {
        unsigned r = (unsigned)(v % 10000);
        v /= 10000;
        p -= 4;
        memcpy(p, dt_jsonw_digit_pairs + 2 * (r / 100), 2);
        memcpy(p + 2, dt_jsonw_digit_pairs + 2 * (r % 100), 2);
    }
    unsigned u = (unsigned)v;
    if (u >= 100) {
        p -= 2;
        memcpy(p, dt_jsonw_digit_pairs + 2 * (u % 100), 2);
        u /= 100;
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, dt_jsonw_digit_pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    return n;
}
static inline char *dt_jsonw_put_u64(char *p, uint64_t v)
{
    return p + dt_jsonw_format_u64(p, v);
}
static inline char *dt_jsonw_put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return p + dt_jsonw_format_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return p + dt_jsonw_format_u64(p, (uint64_t)v);
}
/* ns as microseconds with exactly three decimals. */
static inline char *dt_jsonw_put_us3(char *p, uint64_t ns)
{
    size_t n = dt_jsonw_format_u64(p, ns / 1000);
    uint64_t frac = ns % 1000;
    p[n] = '.';
    p[n + 1] = (char)('0' + frac / 100);
    memcpy(p + n + 2, dt_jsonw_digit_pairs + 2 * (frac % 100), 2);
    return p + n + 4;
}
char *dt_jsonw_put_fixed(char *p, double v, int decimals);

void dt_jsonw_u64(dt_jsonw *w, uint64_t v);
void dt_jsonw_i64(dt_jsonw *w, int64_t v);
/* ns as microseconds with exactly three decimals ("12.345"). */
void dt_jsonw_us3(dt_jsonw *w, uint64_t ns);
/* A double with up to `decimals` decimals, fixed notation; non-finite -> 0. */
void dt_jsonw_fixed(dt_jsonw *w, double v, int decimals);
/* A JSON string (with quotes), escaping quotes, backslashes and control characters,
 * and replacing invalid UTF-8 with U+FFFD. */
void dt_jsonw_str(dt_jsonw *w, const char *s, size_t n);
/* The length of the valid UTF-8 sequence at s (1 to 4 bytes of the n there), or 0 when
 * the byte at s starts none. */
size_t dt_utf8_sequence(const unsigned char *s, size_t n);
/* Escapes into dst (capacity >= 6 * n + 3); returns the length written. */
size_t dt_json_escape(char *dst, const char *s, size_t n);

#endif
