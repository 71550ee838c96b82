/* protow.h: writing protocol buffer wire format by hand, at a position the caller made
 * room for (the pattern of dt_jsonw_put: each function writes at p and returns the end).
 * Used by the Perfetto sink. A nested message is opened with one byte kept for its
 * length and closed once its content is written: a content of 128 bytes or more is moved
 * up to make room for the longer length, so every length is in its shortest form. */
#ifndef DT_PROTOW_H
#define DT_PROTOW_H

#include <stdint.h>
#include <string.h>

enum { DT_PB_VARINT = 0, DT_PB_FIXED64 = 1, DT_PB_LEN = 2 };

#define DT_PB_VARINT_MAX 10 /* bytes a varint takes at most */

static inline char *dt_pb_varint(char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (char)v;
    return p;
}

/* A field's key: its number and wire type. */
static inline char *dt_pb_key(char *p, uint32_t field, int wire_type)
{
    return dt_pb_varint(p, (uint64_t)field << 3 | (uint64_t)wire_type);
}

static inline char *dt_pb_uint(char *p, uint32_t field, uint64_t v)
{
    return dt_pb_varint(dt_pb_key(p, field, DT_PB_VARINT), v);
}

/* An int32/int64 field: negative values as their 64-bit two's complement. */
static inline char *dt_pb_int(char *p, uint32_t field, int64_t v)
{
    return dt_pb_uint(p, field, (uint64_t)v);
}

static inline char *dt_pb_fixed64(char *p, uint32_t field, uint64_t v)
{
    p = dt_pb_key(p, field, DT_PB_FIXED64);
    for (int i = 0; i < 8; i++)
        *p++ = (char)(v >> (8 * i));
    return p;
}

static inline char *dt_pb_double(char *p, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return dt_pb_fixed64(p, field, bits);
}

static inline char *dt_pb_bytes(char *p, uint32_t field, const void *data, size_t n)
{
    p = dt_pb_varint(dt_pb_key(p, field, DT_PB_LEN), n);
    memcpy(p, data, n);
    return p + n;
}

/* Opens a nested message (or any length-delimited field): returns where its content
 * starts; *len_at is where dt_pb_close writes the length. */
static inline char *dt_pb_open(char *p, uint32_t field, char **len_at)
{
    p = dt_pb_key(p, field, DT_PB_LEN);
    *len_at = p;
    return p + 1;
}

/* Closes the message opened at len_at whose content ends at end; returns the new end. */
static inline char *dt_pb_close(char *len_at, char *end)
{
    size_t n = (size_t)(end - (len_at + 1));
    if (n < 0x80) {
        *len_at = (char)n;
        return end;
    }
    char len[DT_PB_VARINT_MAX];
    size_t width = (size_t)(dt_pb_varint(len, n) - len);
    memmove(len_at + width, len_at + 1, n);
    memcpy(len_at, len, width);
    return len_at + width + n;
}

#endif
