/* none.c: the backend of last resort ("none"). It records nothing; the session says why
 * (every other backend's reason), and the host program runs on untraced. */
#include <stdio.h>

#include "backend.h"

static int none_probe(char *why, size_t whylen)
{
    snprintf(why, whylen, "records nothing; selected when no other backend can trace");
    return 1;
}

const dt_backend dt_backend_none = {
    .name = "none",
    .description = "unavailable (records nothing, says why)",
    .caps = 0,
    .validated = 0,
    .validation_note = "records nothing",
    .runtime_category = "cuda_runtime",
    .load_method = DEVTRACE_LOAD_PRELOAD, /* the collector then says why nothing is recorded */
    .state_size = 0,
    .probe = none_probe,
};
