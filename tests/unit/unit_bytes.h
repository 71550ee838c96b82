/* unit_bytes.h: values written at byte offsets of a record buffer, in the host's order
 * and at any alignment, as the vendors' libraries lay out their records; for the tests
 * that build vendor buffers by hand (header only). */
#ifndef UNIT_BYTES_H
#define UNIT_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void ut_put8(uint8_t *b, size_t off, uint8_t v)
{
    b[off] = v;
}

static inline void ut_put16(uint8_t *b, size_t off, uint16_t v)
{
    memcpy(b + off, &v, 2);
}

static inline void ut_put32(uint8_t *b, size_t off, uint32_t v)
{
    memcpy(b + off, &v, 4);
}

static inline void ut_put64(uint8_t *b, size_t off, uint64_t v)
{
    memcpy(b + off, &v, 8);
}

/* A pointer field (a kernel or API name the record points to). */
static inline void ut_putptr(uint8_t *b, size_t off, const void *p)
{
    memcpy(b + off, &p, sizeof p);
}

#endif
