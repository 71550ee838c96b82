/* registry.c: the one list of compiled-in backends, in the fixed order that
 * DEVTRACE_BACKEND=auto probes them. The CMake option DEVTRACE_BACKENDS decides
 * which are compiled in (DT_HAVE_<NAME>). */
#include <stdio.h>
#include <string.h>

#include "backend.h"

#ifdef DT_HAVE_CUPTI
extern const dt_backend dt_backend_cupti;
#endif
#ifdef DT_HAVE_MCPTI
extern const dt_backend dt_backend_mcpti;
#endif
#ifdef DT_HAVE_PPU
extern const dt_backend dt_backend_ppu;
#endif
#ifdef DT_HAVE_ILUVATAR
extern const dt_backend dt_backend_iluvatar;
#endif
#ifdef DT_HAVE_ROCTRACER
extern const dt_backend dt_backend_roctracer;
#endif
#ifdef DT_HAVE_MSPTI
extern const dt_backend dt_backend_mspti;
#endif
#ifdef DT_HAVE_MUSA
extern const dt_backend dt_backend_musa;
#endif
#ifdef DT_HAVE_OPENCL
extern const dt_backend dt_backend_opencl;
#endif

/* auto order: vendor device APIs first (a process has at most one vendor runtime
 * loaded, and each probe only looks for its own library), OpenCL last. */
static const dt_backend *const all_backends[] = {
#ifdef DT_HAVE_CUPTI
    &dt_backend_cupti,
#endif
#ifdef DT_HAVE_MCPTI
    &dt_backend_mcpti,
#endif
#ifdef DT_HAVE_PPU
    &dt_backend_ppu,
#endif
#ifdef DT_HAVE_ILUVATAR
    &dt_backend_iluvatar,
#endif
#ifdef DT_HAVE_ROCTRACER
    &dt_backend_roctracer,
#endif
#ifdef DT_HAVE_MSPTI
    &dt_backend_mspti,
#endif
#ifdef DT_HAVE_MUSA
    &dt_backend_musa,
#endif
#ifdef DT_HAVE_OPENCL
    &dt_backend_opencl,
#endif
    NULL,
};

const dt_backend *const *dt_backends(void)
{
    return all_backends;
}

const dt_backend *dt_backend_find(const char *name)
{
    if (!name)
        return NULL;
    if (strcmp(name, dt_backend_unavailable.name) == 0)
        return &dt_backend_unavailable;
    for (const dt_backend *const *b = all_backends; *b; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

/* The names of the listed backends with every capability in caps, ", " between them,
 * then tail (NULL: nothing). */
static void names_with(unsigned caps, const char *tail, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const dt_backend *const *b = all_backends; *b; b++) {
        if (((*b)->caps & caps) != caps)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", (*b)->name);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
    if (tail)
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", tail);
}

void dt_backend_names(char *buf, size_t len)
{
    names_with(0, dt_backend_unavailable.name, buf, len);
}

void dt_backend_names_with(unsigned caps, char *buf, size_t len)
{
    names_with(caps, NULL, buf, len);
}

void dt_backend_validation_text(const dt_backend *b, char *buf, size_t len)
{
    if (!b->validated) {
        snprintf(buf, len, "n/a: %s", b->validation_note ? b->validation_note : "");
        return;
    }
    const char *level = (b->validated & DT_VALIDATED_HARDWARE)  ? "hardware"
                        : (b->validated & DT_VALIDATED_HEADERS) ? "headers+emulated"
                                                                : "emulated";
    snprintf(buf, len, "%s: %s", level, b->validation_note ? b->validation_note : "");
}
