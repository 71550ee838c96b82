/* registry.c: the one list of compiled-in backends, in the fixed order that
 * DEVTRACE_BACKEND=auto probes them, and its public view (devtrace_backend_*: what a
 * program that starts traced programs needs from each descriptor). The CMake option
 * DEVTRACE_BACKENDS decides which are compiled in (DT_HAVE_<NAME>). */
#include <stddef.h>
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

/* ---- the public view of the list (include/devtrace.h) ---- */

int devtrace_backend_count(void)
{
    return (int)(sizeof all_backends / sizeof all_backends[0]) - 1;
}

static int backend_info(const dt_backend *b, devtrace_backend_info *out)
{
    if (!out || out->size < offsetof(devtrace_backend_info, name) + sizeof out->name)
        return DEVTRACE_EINVAL;
    devtrace_backend_info info;
    memset(&info, 0, sizeof info);
    info.name = b->name;
    info.description = b->description;
    info.capabilities = b->caps;
    info.runtime_category = b->runtime_category;
    info.load_method = b->load_method;
    info.load_variable = b->load_variable;
    info.preload_library = b->preload_library;
    dt_backend_validation_text(b, info.validation, sizeof info.validation);
    size_t size = out->size < sizeof info ? out->size : sizeof info;
    info.size = out->size;
    memcpy(out, &info, size);
    return 0;
}

int devtrace_backend_get(int index, devtrace_backend_info *out)
{
    if (index < 0 || index >= devtrace_backend_count())
        return DEVTRACE_EINVAL;
    return backend_info(all_backends[index], out);
}

int devtrace_backend_find(const char *name, devtrace_backend_info *out)
{
    const dt_backend *b = dt_backend_find(name);
    return b ? backend_info(b, out) : DEVTRACE_EUNKNOWN_BACKEND;
}

/* "unknown backend 'x'; choose one of: cupti, ..., none" into why. */
static void say_unknown(const char *name, char *why, size_t whylen)
{
    char names[256];
    dt_backend_names(names, sizeof names);
    snprintf(why, whylen, "unknown backend '%s'; choose one of: %s", name ? name : "(null)", names);
}

int devtrace_backend_probe(const char *name, char *why, size_t whylen)
{
    const dt_backend *b = dt_backend_find(name);
    char none[1];
    if (!why || !whylen) {
        why = none;
        whylen = sizeof none;
    }
    why[0] = '\0';
    if (!b) {
        say_unknown(name, why, whylen);
        return DEVTRACE_EUNKNOWN_BACKEND;
    }
    return b->probe ? b->probe(why, whylen) != 0 : 1;
}

int devtrace_backend_locate_library(const char *name, char *path, size_t cap, devtrace_error *err)
{
    devtrace_error local;
    if (!err)
        err = &local;
    err->code = 0;
    err->message[0] = '\0';
    const dt_backend *b = dt_backend_find(name);
    if (!path || !cap) {
        err->code = DEVTRACE_EINVAL;
        snprintf(err->message, sizeof err->message, "devtrace_backend_locate_library: no buffer for the path");
    } else if (!b) {
        err->code = DEVTRACE_EUNKNOWN_BACKEND;
        say_unknown(name, err->message, sizeof err->message);
    } else if (!b->locate_library) {
        err->code = DEVTRACE_ENOTSUP;
        snprintf(err->message, sizeof err->message, "backend %s does not look for a vendor library of its own",
                 b->name);
    } else if (b->locate_library(path, cap, err->message, sizeof err->message) != 0) {
        err->code = DEVTRACE_EUNAVAILABLE;
    }
    if (err->code && path && cap)
        path[0] = '\0';
    return err->code;
}
