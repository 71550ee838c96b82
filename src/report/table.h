/* table.h: the report's tables: named columns of formatted cells, written as an aligned text
 * table, CSV (a header row with the column names) or JSON (an array of objects, numbers
 * unquoted). report, diff and the many-rank views build their answers as tables so that the
 * three formats never drift apart. */
#ifndef DT_TABLE_H
#define DT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A column: its name and kind: 'n' a number (right-aligned; unquoted in JSON; an empty cell is
 * null), 's' a string, 'w' a wide string (a name: printed last in the text table). */
typedef struct dt_column {
    const char *name;
    char kind;
} dt_column;

typedef struct dt_table {
    const char *title;        /* borrowed: "kernels", also the CSV file's name */
    const dt_column *columns; /* borrowed */
    int ncolumns;
    char **cells; /* owned: row-major */
    size_t nrows, ncells, cap;
    int failed; /* out of memory while adding: the table is incomplete */
} dt_table;

typedef enum dt_format { DT_FORMAT_TABLE, DT_FORMAT_CSV, DT_FORMAT_JSON } dt_format;

void dt_table_init(dt_table *t, const char *title, const dt_column *columns, int ncolumns);
void dt_table_free(dt_table *t);
/* Appends one cell (printf); a row is complete after ncolumns cells. */
void dt_table_cell(dt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Common cells: nanoseconds as microseconds with three decimals; a count; a ratio num/den with
 * `decimals` decimals (empty when den is 0); a string. */
void dt_table_us(dt_table *t, int64_t ns);
void dt_table_u64(dt_table *t, uint64_t v);
void dt_table_ratio(dt_table *t, int64_t num, int64_t den, int64_t scale, int decimals);
void dt_table_str(dt_table *t, const char *s);

/* The first `top` rows (0: all). JSON writes `"title": [...]` (the caller writes the braces). */
void dt_table_write_text(const dt_table *t, FILE *out, size_t top);
void dt_table_write_csv(const dt_table *t, FILE *out, size_t top);
void dt_table_write_json(const dt_table *t, FILE *out, size_t top);
void dt_table_write(const dt_table *t, dt_format format, FILE *out, size_t top);
/* A JSON string literal. */
void dt_json_write_string(FILE *out, const char *s);

/* ns as "123.456" (exact: no floating point); returns the length. buf holds 32 bytes. */
int dt_format_us(char *buf, int64_t ns);

#endif
