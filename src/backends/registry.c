/* registry.c: the one list of compiled-in backends, in the fixed order that
 * DEVTRACE_BACKEND=auto probes them, handed to the core as its table of backends
 * (devtrace_open, replay), and its public view (devtrace_backend_*: what a program that
 * starts traced programs needs from each descriptor). The CMake option DEVTRACE_BACKENDS
 * decides which are compiled in (DT_HAVE_<NAME>). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

/* The one list of backends, in the order DEVTRACE_BACKEND=auto probes them: vendor device
 * APIs first (a process has at most one vendor runtime loaded, and each probe only looks
 * for its own library), OpenCL last. A backend NAME is the descriptor dt_backend_NAME in
 * src/backends/NAME.c. This list is the only place that names them: CMake reads its
 * DT_REGISTER lines (the known backends, DEVTRACE_ALL_BACKENDS) and defines DT_WITH_NAME to
 * 1 for each backend compiled in (DEVTRACE_BACKENDS), 0 for the others; the tests read the
 * compiled-in list through devtrace_backend_get (`devtrace list --json`). */
#define DT_REGISTRY(DT_REGISTER) \
    DT_REGISTER(cupti)           \
    DT_REGISTER(mcpti)           \
    DT_REGISTER(ppu)             \
    DT_REGISTER(iluvatar)        \
    DT_REGISTER(roctracer)       \
    DT_REGISTER(mspti)           \
    DT_REGISTER(musa)            \
    DT_REGISTER(cnpapi)          \
    DT_REGISTER(opencl)

/* DT_IF(DT_WITH_NAME, tokens): the tokens when the backend is compiled in, else nothing. */
#define DT_IF_1(...) __VA_ARGS__
#define DT_IF_0(...)
#define DT_IF_(flag, ...) DT_IF_##flag(__VA_ARGS__)
#define DT_IF(flag, ...) DT_IF_(flag, __VA_ARGS__)
#define DT_DECLARE(name) extern const dt_backend dt_backend_##name;
#define DT_ENTRY(name) DT_IF(DT_WITH_##name, &dt_backend_##name, )

DT_REGISTRY(DT_DECLARE)

static const dt_backend *const all_backends[] = {DT_REGISTRY(DT_ENTRY) NULL};

static const dt_backend_table registry = {all_backends, &dt_backend_none};

const dt_backend_table *dt_backend_registry(void)
{
    return &registry;
}

const dt_backend *const *dt_backends(void)
{
    return all_backends;
}

const dt_backend *dt_backend_find(const char *name)
{
    return dt_backend_table_find(&registry, name);
}

void dt_backend_names(char *buf, size_t len)
{
    dt_backend_table_names(&registry, 0, dt_backend_none.name, buf, len);
}

void dt_backend_names_with(unsigned caps, char *buf, size_t len)
{
    dt_backend_table_names(&registry, caps, NULL, buf, len);
}

/* The core's session and replay, with the compiled-in backends. */
devtrace_session *devtrace_open(const devtrace_config *cfg, devtrace_error *err)
{
    return dt_session_open(cfg, &registry, err);
}

int dt_replay_capture(const uint8_t *data, size_t len, const dt_replay_options *opt, dt_session **out,
                      dt_raw_info *info, devtrace_error *err)
{
    return dt_replay_capture_with(&registry, data, len, opt, out, info, err);
}

int dt_replay_file(const char *path, const dt_replay_options *opt, dt_session **out, dt_raw_info *info,
                   devtrace_error *err)
{
    return dt_replay_file_with(&registry, path, opt, out, info, err);
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
    if (b->describe_library)
        b->describe_library(&info);
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
