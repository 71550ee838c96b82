/* jsonw.h: a small, fast JSON text writer into a growable buffer that is flushed to
 * a plain file or a gzip stream. Used by the Chrome trace sink. */
#ifndef DT_JSONW_H
#define DT_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dt_jsonw {
    char *buf;     /* owned */
    size_t len, cap;
    FILE *file;    /* borrowed; one of file/gz/none (memory only) */
    void *gz;      /* gzFile, borrowed */
    int failed;    /* a write failed: errno kept in err */
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
    for (size_t i = 0; i < n; i++)
        w->buf[w->len + i] = s[i];
    w->len += n;
}
/* lit must be a string literal ("" lit does not compile otherwise). */
#define DT_JSONW_LIT(w, lit) dt_jsonw_raw((w), "" lit, sizeof("" lit) - 1)

void dt_jsonw_u64(dt_jsonw *w, uint64_t v);
void dt_jsonw_i64(dt_jsonw *w, int64_t v);
/* ns as microseconds with exactly three decimals ("12.345"). */
void dt_jsonw_us3(dt_jsonw *w, uint64_t ns);
/* A double with up to `decimals` decimals, fixed notation; non-finite -> 0. */
void dt_jsonw_fixed(dt_jsonw *w, double v, int decimals);
/* A JSON string (with quotes), escaping quotes, backslashes and control characters,
 * and replacing invalid UTF-8 with U+FFFD. */
void dt_jsonw_str(dt_jsonw *w, const char *s, size_t n);
/* Escapes into dst (capacity >= 6 * n + 3); returns the length written. */
size_t dt_json_escape(char *dst, const char *s, size_t n);

#endif
