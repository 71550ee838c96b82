/* grow.h: room for one more item in an array that doubles when full. */
#ifndef DT_GROW_H
#define DT_GROW_H

#include <stdlib.h>

/* items (count of them, room for *cap) with room for one more: the same pointer, or a new one
 * from realloc with *cap doubled (first when it was 0); NULL when out of memory (items is then
 * unchanged and still owned by the caller). */
static inline void *dt_room_for_one(void *items, size_t count, size_t *cap, size_t item_size, size_t first)
{
    if (count < *cap)
        return items;
    size_t n = *cap ? *cap * 2 : first;
    void *p = realloc(items, n * item_size);
    if (p)
        *cap = n;
    return p;
}

#endif
