/* vendor_lib.c: finding a vendor's tracing library and binding its functions (see
 * vendor_lib.h). */
#include "vendor_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void dt_text_add(dt_text *t, const char *fmt, ...)
{
    if (t->used + 1 >= t->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->used = t->used + (size_t)n < t->len ? t->used + (size_t)n : t->len - 1;
}

int dt_vlib_names_count(const char *const *names)
{
    int n = 0;
    while (names && n < DT_VLIB_MAX_NAMES && names[n])
        n++;
    return n;
}

void dt_vlib_handle_path(void *handle, const char *fallback, char *out, size_t len)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        snprintf(out, len, "%s", map->l_name);
    else
        snprintf(out, len, "%s", fallback);
}

static int accepted(int (*accept)(void *, const void *), void *handle, const void *user)
{
    return !accept || accept(handle, user);
}

/* Tries dir/name for every file name; lists what was tried in `tried`. With load 0 the
 * first existing file is taken without loading it (out->handle NULL). */
static int try_directory(const dt_vlib_search *q, const char *dir, dt_vlib_found *out, dt_text *tried, int load)
{
    int n = dt_vlib_names_count(q->dir_names);
    if (q->names_in_tried) {
        dt_text_add(tried, "%s%s/", tried->used ? ", " : "", dir);
        dt_text_add(tried, n > 1 ? "{" : "");
    } else {
        dt_text_add(tried, "%s%s", tried->used ? ", " : "", dir);
    }
    for (int i = 0; i < n; i++) {
        const char *name = q->dir_names[i];
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (q->names_in_tried)
            dt_text_add(tried, "%s%s", i ? "," : "", name);
        if (access(path, F_OK) != 0)
            continue;
        if (!load) {
            snprintf(out->path, sizeof out->path, "%s", path);
            return 1;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            if (q->names_in_tried)
                dt_text_add(tried, " (%s)", e ? e : "dlopen failed");
            else
                dt_text_add(tried, " (%s: %s)", name, e ? e : "dlopen failed");
            continue;
        }
        if (!accepted(q->accept, h, q->user)) {
            dt_text_add(tried, " (%s: %s)", name, q->rejected ? q->rejected : "passed over");
            continue; /* kept loaded: unloading a vendor library is not safe */
        }
        out->handle = h;
        dt_vlib_handle_path(h, path, out->path, sizeof out->path);
        return 1;
    }
    if (q->names_in_tried)
        dt_text_add(tried, n > 1 ? "}" : "");
    return 0;
}

static int try_root(const dt_vlib_search *q, const char *root, dt_vlib_found *out, dt_text *tried, int load)
{
    int nsub = dt_vlib_names_count(q->subdirs);
    if (nsub == 0)
        return try_directory(q, root, out, tried, load);
    for (int i = 0; i < nsub; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s", root, q->subdirs[i]);
        if (try_directory(q, dir, out, tried, load))
            return 1;
    }
    return 0;
}

/* The SDK roots from the environment, then the default ones. */
static int try_roots(const dt_vlib_search *q, dt_vlib_found *out, dt_text *tried, int load)
{
    for (int i = 0; i < dt_vlib_names_count(q->sdk_env); i++) {
        const char *root = getenv(q->sdk_env[i]);
        if (!root || !*root) {
            dt_text_add(tried, "%s$%s (unset)", tried->used ? ", " : "", q->sdk_env[i]);
            continue;
        }
        if (try_root(q, root, out, tried, load))
            return 1;
    }
    for (int i = 0; i < dt_vlib_names_count(q->default_roots); i++)
        if (try_root(q, q->default_roots[i], out, tried, load))
            return 1;
    return 0;
}

/* dlopen of each name (flags), the first that loads and is accepted. */
static int try_names(const dt_vlib_search *q, const char *const *names, int flags, dt_vlib_found *out)
{
    for (int i = 0; i < dt_vlib_names_count(names); i++) {
        void *h = dlopen(names[i], flags);
        if (h && accepted(q->accept, h, q->user)) {
            out->handle = h;
            dt_vlib_handle_path(h, names[i], out->path, sizeof out->path);
            return 1;
        }
    }
    return 0;
}

int dt_vlib_find(const dt_vlib_search *q, dt_vlib_found *out, dt_text *tried)
{
    memset(out, 0, sizeof *out);
    /* 1. The override: the user said exactly which file. */
    const char *override = q->override_env ? getenv(q->override_env) : NULL;
    if (override && *override) {
        void *h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            out->handle = h;
            dt_vlib_handle_path(h, override, out->path, sizeof out->path);
            return 1;
        }
        const char *e = dlerror();
        out->override = override;
        out->error = e ? e : "dlopen failed";
        return -1;
    }
    /* 2. A copy the process already loaded: use it, never load a second one. */
    if (try_names(q, q->loaded_names, RTLD_NOW | RTLD_NOLOAD, out))
        return 1;
    /* 3. SDK roots from the environment, then the default roots. */
    if (try_roots(q, out, tried, 1))
        return 1;
    /* 4. The loader's own search (LD_LIBRARY_PATH, ld.so.cache). */
    if (try_names(q, q->loader_names, RTLD_NOW | RTLD_LOCAL, out))
        return 1;
    /* 5. The process itself (a program linked with the library). */
    if (q->search_process) {
        void *h = dlopen(NULL, RTLD_NOW);
        if (h && accepted(q->process_accept, h, q->user)) {
            out->handle = h;
            snprintf(out->path, sizeof out->path, "(the process itself)");
            return 1;
        }
    }
    return 0;
}

int dt_vlib_locate(const dt_vlib_search *q, char *path, size_t pathlen, dt_text *tried, char *why, size_t whylen)
{
    dt_vlib_found f;
    memset(&f, 0, sizeof f);
    const char *override = q->override_env ? getenv(q->override_env) : NULL;
    if (override && *override) {
        if (access(override, R_OK) == 0) {
            snprintf(path, pathlen, "%s", override);
            return 1;
        }
        snprintf(why, whylen, "$%s=%s: %s", q->override_env, override, strerror(errno));
        return -1;
    }
    int found = try_roots(q, &f, tried, 0);
    /* The loader's search path, as far as the environment gives it (not ld.so.cache). */
    const char *ldpath = getenv("LD_LIBRARY_PATH");
    int nloader = dt_vlib_names_count(q->loader_names);
    if (!found && ldpath && *ldpath && nloader) {
        char copy[2048], *save = NULL;
        snprintf(copy, sizeof copy, "%s", ldpath);
        for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save))
            for (int i = 0; i < nloader && !found; i++) {
                snprintf(f.path, sizeof f.path, "%s/%s", dir, q->loader_names[i]);
                found = access(f.path, R_OK) == 0;
            }
        if (!found)
            dt_text_add(tried, "%s$LD_LIBRARY_PATH", tried->used ? ", " : "");
    }
    if (!found)
        return 0;
    snprintf(path, pathlen, "%s", f.path);
    return 1;
}

int dt_vlib_bind(void *handle, const char *const *prefixes, const char *const *names, const size_t *offsets, int n,
                 unsigned required, void *api, char (*spelled)[64], dt_text *missing)
{
    static const char *const no_prefix[] = {"", NULL};
    int nprefix = dt_vlib_names_count(prefixes), nmissing = 0;
    if (nprefix == 0) {
        prefixes = no_prefix;
        nprefix = 1;
    }
    for (int i = 0; i < n; i++) {
        char name[64];
        void *sym = NULL;
        for (int p = 0; p < nprefix && !sym; p++) {
            snprintf(name, sizeof name, "%s%s", prefixes[p], names[i]);
            sym = dlsym(handle, name);
        }
        if (spelled)
            snprintf(spelled[i], sizeof spelled[i], "%s", sym ? name : "");
        if (sym) {
            memcpy((char *)api + offsets[i], &sym, sizeof sym);
            continue;
        }
        if (!(required & (1u << i)))
            continue;
        nmissing++;
        if (!missing)
            continue;
        dt_text_add(missing, "%s%s%s", missing->used ? ", " : "", prefixes[0], names[i]);
        if (nprefix > 1) {
            dt_text_add(missing, " (tried");
            for (int p = 0; p < nprefix; p++)
                dt_text_add(missing, " %s%s", prefixes[p], names[i]);
            dt_text_add(missing, ")");
        }
    }
    return nmissing;
}

void *dt_vlib_runtime_symbol(const char *const *names, const char *const *libraries, void *own, const char **found)
{
    int n = dt_vlib_names_count(names);
    void *sym = NULL;
    for (int i = 0; i < n && !sym; i++)
        if ((sym = dlsym(RTLD_DEFAULT, names[i])) && found)
            *found = names[i];
    for (int l = 0; l < dt_vlib_names_count(libraries) && !sym; l++) {
        void *h = dlopen(libraries[l], RTLD_NOW | RTLD_NOLOAD);
        if (!h)
            continue;
        for (int i = 0; i < n && !sym; i++)
            if ((sym = dlsym(h, names[i])) && found)
                *found = names[i];
        dlclose(h); /* balances the NOLOAD reference; the library stays loaded */
    }
    for (int i = 0; i < n && !sym && own; i++)
        if ((sym = dlsym(own, names[i])) && found)
            *found = names[i];
    return sym;
}

/* Adds each name of names not yet in list (n entries of cap), keeping one NULL at the end. */
static void add_names(const char **list, int *n, int cap, const char *const *names)
{
    int count = names ? dt_vlib_names_count(names) : 0;
    for (int i = 0; i < count; i++) {
        int seen = 0;
        for (int j = 0; j < *n && !seen; j++)
            seen = !strcmp(list[j], names[i]);
        if (!seen && *n < cap - 1)
            list[(*n)++] = names[i];
    }
}

void dt_vlib_describe(const dt_vlib_search *q, const char *api, devtrace_backend_info *info)
{
    int cap_sdk = (int)(sizeof info->sdk_variables / sizeof info->sdk_variables[0]);
    int cap_files = (int)(sizeof info->library_files / sizeof info->library_files[0]);
    int nsdk = 0, nfiles = 0;
    info->library_api = api;
    info->library_variable = q->override_env;
    add_names(info->sdk_variables, &nsdk, cap_sdk, q->sdk_env);
    add_names(info->library_files, &nfiles, cap_files, q->dir_names);
    add_names(info->library_files, &nfiles, cap_files, q->loader_names);
    add_names(info->library_files, &nfiles, cap_files, q->loaded_names);
}
