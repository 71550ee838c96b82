/* rel_failmalloc.c: an LD_PRELOAD library for the fault matrix: malloc of exactly
 * $REL_FAIL_MALLOC_SIZE bytes fails with ENOMEM, as the allocation of the tracer's vendor buffers
 * does when memory runs out (the tests give the buffers a size nothing else asks for, with
 * $DEVTRACE_BUFFER_SIZE). Every other allocation goes to the C library. Not usable under
 * AddressSanitizer (its malloc in the executable comes first). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);

static size_t failing_size(void)
{
    static size_t size = SIZE_MAX; /* SIZE_MAX: not read yet; 0: none */
    if (size == SIZE_MAX) {
        const char *text = getenv("REL_FAIL_MALLOC_SIZE"); /* getenv does not allocate */
        size_t v = 0;
        for (; text && *text >= '0' && *text <= '9'; text++)
            v = v * 10 + (size_t)(*text - '0');
        size = v;
    }
    return size;
}

void *malloc(size_t size)
{
    if (size && size == failing_size()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}
