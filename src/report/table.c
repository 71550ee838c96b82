/* table.c: the report's tables and their three formats (table.h). */
#include "table.h"

#include "core/grow.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void dt_table_init(dt_table *t, const char *title, const dt_column *columns, int ncolumns)
{
    memset(t, 0, sizeof *t);
    t->title = title;
    t->columns = columns;
    t->ncolumns = ncolumns;
}

void dt_table_free(dt_table *t)
{
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->ncells = t->nrows = t->cap = 0;
}

static void add_cell(dt_table *t, char *text)
{
    if (!text || t->failed) {
        free(text);
        t->failed = 1;
        return;
    }
    char **cells = dt_room_for_one(t->cells, t->ncells, &t->cap, sizeof *cells, 64);
    if (!cells) {
        free(text);
        t->failed = 1;
        return;
    }
    t->cells = cells;
    t->cells[t->ncells++] = text;
    t->nrows = t->ncells / (size_t)t->ncolumns;
}

void dt_table_cell(dt_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    add_cell(t, text);
}

int dt_format_us(char *buf, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    return snprintf(buf, 32, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(mag / 1000),
                    (unsigned long long)(mag % 1000));
}

void dt_table_us(dt_table *t, int64_t ns)
{
    char buf[32];
    dt_format_us(buf, ns);
    dt_table_cell(t, "%s", buf);
}

void dt_table_u64(dt_table *t, uint64_t v)
{
    dt_table_cell(t, "%llu", (unsigned long long)v);
}

void dt_table_ratio(dt_table *t, int64_t num, int64_t den, int64_t scale, int decimals)
{
    if (den == 0) {
        dt_table_cell(t, "%s", "");
        return;
    }
    int64_t unit = 1;
    for (int i = 0; i < decimals; i++)
        unit *= 10;
    /* num * scale * unit / den, rounded half away from zero, in 128 bits */
    __int128 q = (__int128)num * scale * unit;
    int neg = (q < 0) != (den < 0);
    unsigned __int128 a = q < 0 ? (unsigned __int128)(-q) : (unsigned __int128)q;
    unsigned __int128 d = den < 0 ? (unsigned __int128)(-(__int128)den) : (unsigned __int128)den;
    unsigned __int128 r = (a * 2 + d) / (d * 2);
    unsigned long long whole = (unsigned long long)(r / (unsigned __int128)unit);
    unsigned long long frac = (unsigned long long)(r % (unsigned __int128)unit);
    if (decimals)
        dt_table_cell(t, "%s%llu.%0*llu", neg && r ? "-" : "", whole, decimals, frac);
    else
        dt_table_cell(t, "%s%llu", neg && r ? "-" : "", whole);
}

void dt_table_str(dt_table *t, const char *s)
{
    add_cell(t, strdup(s ? s : ""));
}

static size_t shown_rows(const dt_table *t, size_t top)
{
    return top && top < t->nrows ? top : t->nrows;
}

void dt_table_write_text(const dt_table *t, FILE *out, size_t top)
{
    size_t rows = shown_rows(t, top);
    int n = t->ncolumns;
    size_t width[32] = {0};
    int order[32], norder = 0;
    for (int pass = 0; pass < 2; pass++) /* narrow columns first, wide names last */
        for (int c = 0; c < n && c < 32; c++)
            if ((t->columns[c].kind == 'w') == pass)
                order[norder++] = c;
    for (int c = 0; c < n && c < 32; c++) {
        width[c] = strlen(t->columns[c].name);
        for (size_t r = 0; r < rows; r++) {
            size_t w = strlen(t->cells[r * (size_t)n + (size_t)c]);
            if (w > width[c])
                width[c] = w;
        }
    }
    fprintf(out, "%s", t->title);
    if (rows < t->nrows)
        fprintf(out, " (top %zu of %zu)", rows, t->nrows);
    fprintf(out, ":\n");
    if (!t->nrows) {
        fprintf(out, "  (none)\n");
        return;
    }
    char *line = NULL; /* one row, its trailing blanks (empty cells at the end) dropped */
    size_t line_cap = 0;
    FILE *row = open_memstream(&line, &line_cap);
    if (!row)
        return;
    for (size_t r = 0; r <= rows; r++) {
        rewind(row);
        fputs(" ", row);
        for (int i = 0; i < norder; i++) {
            int c = order[i];
            const char *text = r == 0 ? t->columns[c].name : t->cells[(r - 1) * (size_t)n + (size_t)c];
            if (t->columns[c].kind == 'n')
                fprintf(row, " %*s", (int)width[c], text);
            else
                fprintf(row, " %-*s", (int)width[c], text);
        }
        fflush(row);
        size_t len = (size_t)ftell(row);
        while (len > 0 && line[len - 1] == ' ')
            len--;
        fwrite(line, 1, len, out);
        fputc('\n', out);
    }
    fclose(row);
    free(line);
}

static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void dt_table_write_csv(const dt_table *t, FILE *out, size_t top)
{
    size_t rows = shown_rows(t, top);
    for (size_t r = 0; r <= rows; r++)
        for (int c = 0; c < t->ncolumns; c++) {
            csv_field(out, r == 0 ? t->columns[c].name : t->cells[(r - 1) * (size_t)t->ncolumns + (size_t)c]);
            fputc(c == t->ncolumns - 1 ? '\n' : ',', out);
        }
}

void dt_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

void dt_table_write_json(const dt_table *t, FILE *out, size_t top)
{
    size_t rows = shown_rows(t, top);
    dt_json_write_string(out, t->title);
    fputs(": [", out);
    for (size_t r = 0; r < rows; r++) {
        fputs(r ? ",\n  {" : "\n  {", out);
        for (int c = 0; c < t->ncolumns; c++) {
            const char *text = t->cells[r * (size_t)t->ncolumns + (size_t)c];
            if (c)
                fputs(", ", out);
            dt_json_write_string(out, t->columns[c].name);
            fputs(": ", out);
            if (t->columns[c].kind == 'n')
                fputs(*text ? text : "null", out);
            else
                dt_json_write_string(out, text);
        }
        fputc('}', out);
    }
    fputs(rows ? "\n]" : "]", out);
}

void dt_table_write(const dt_table *t, dt_format format, FILE *out, size_t top)
{
    if (format == DT_FORMAT_CSV)
        dt_table_write_csv(t, out, top);
    else if (format == DT_FORMAT_JSON)
        dt_table_write_json(t, out, top);
    else
        dt_table_write_text(t, out, top);
}
