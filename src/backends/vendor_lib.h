/* vendor_lib.h: finding a vendor's tracing library and binding its functions, for every
 * backend that loads one at run time (the CUPTI-family engine, ROCtracer).
 *
 * The search order is the same for every vendor: the override variable (a path, alone);
 * a copy the process already loaded (never a second one); each SDK root from the
 * environment, then each default root, joined with each subdirectory and each file
 * name; the loader's own search; the process itself (a program linked with the
 * library). What was tried is listed for the "why not" message, which each backend
 * writes in its own words: nothing here knows a vendor. Binding and notes only, never
 * a callback's path. */
#ifndef DT_VENDOR_LIB_H
#define DT_VENDOR_LIB_H

#include <stddef.h>

#include "devtrace.h"

#define DT_VLIB_MAX_NAMES 8 /* entries of a name list at most (else NULL-terminated) */

/* Text built piecewise into a fixed buffer, cut short (and NUL-terminated) when full. */
typedef struct dt_text {
    char *buf;
    size_t len, used;
} dt_text;
void dt_text_add(dt_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How many names a list holds (NULL-terminated, or DT_VLIB_MAX_NAMES long). */
int dt_vlib_names_count(const char *const *names);

/* Where to look for a vendor library; name lists as above (NULL: none). */
typedef struct dt_vlib_search {
    const char *override_env;        /* a path, taken alone */
    const char *const *loaded_names; /* a copy already loaded under one of these (RTLD_NOLOAD) */
    const char *const *sdk_env;      /* SDK roots from the environment */
    const char *const *default_roots;
    const char *const *subdirs;      /* joined with each root; none: the root itself */
    const char *const *dir_names;    /* file names tried in each directory */
    const char *const *loader_names; /* the loader's own search (and $LD_LIBRARY_PATH for locate) */
    int search_process;              /* the process's own global symbols */
    /* A library accept refuses is passed over (NULL: any that loads); the process itself
     * is taken only when process_accept says so (NULL: always). */
    int (*accept)(void *handle, const void *user);
    int (*process_accept)(void *handle, const void *user);
    const void *user;
    const char *rejected; /* what the tried list says of a file accept refused */
    /* 1: each directory is listed with its file names ("dir/{a,b}", a load error after
     * its name); 0: the directory alone ("dir (a: error)"): the caller names the files. */
    int names_in_tried;
} dt_vlib_search;

typedef struct dt_vlib_found {
    void *handle;
    char path[512];
    /* When the override could not be loaded: its value, and the loader's error (valid
     * until the next dl* call). */
    const char *override;
    const char *error;
} dt_vlib_found;

/* Loads the first library the search finds: 1 with out->handle and out->path; 0 when
 * none was found (tried lists the roots and directories, the caller adds the rest); -1
 * when the override names a file that does not load (out->override, out->error). A
 * library that is passed over stays loaded: unloading a vendor library is not safe. */
int dt_vlib_find(const dt_vlib_search *q, dt_vlib_found *out, dt_text *tried);

/* The path of the library the search would load, without loading anything: the
 * override (readable), the SDK roots' directories, then each loader name in each
 * directory of $LD_LIBRARY_PATH. 1 with path set; 0 when none (tried, as for find,
 * plus "$LD_LIBRARY_PATH" when it was searched); -1 when the override is not readable
 * (why: "$VAR=path: reason"). */
int dt_vlib_locate(const dt_vlib_search *q, char *path, size_t pathlen, dt_text *tried, char *why, size_t whylen);

/* Where the search looks, for devtrace_backend_info (include/devtrace.h): api (the name
 * in the backend's messages), the override variable, the SDK variables, and every file
 * name tried (in a directory, through the loader, already loaded), each once. */
void dt_vlib_describe(const dt_vlib_search *q, const char *api, devtrace_backend_info *info);
/* The path of a loaded library, from its handle (fallback when the loader cannot say). */
void dt_vlib_handle_path(void *handle, const char *fallback, char *out, size_t len);

/* Binds n functions into api (a struct of function pointers): names[i] goes to
 * offsets[i], tried as prefix + name for each prefix in order (prefixes NULL or empty:
 * the name alone); one not found is left as it was. spelled (when not NULL) gets the
 * spelling each was found under, "" when not found. Each required function (bit i:
 * names[i]) that is missing is listed in missing, ", "-separated, under its first
 * spelling, with " (tried a b)" when there are several prefixes. Returns how many
 * required ones are missing. */
int dt_vlib_bind(void *handle, const char *const *prefixes, const char *const *names, const size_t *offsets, int n,
                 unsigned required, void *api, char (*spelled)[64], dt_text *missing);

/* A vendor runtime function in the process: its global symbols, then each of libraries
 * already loaded (RTLD_NOLOAD), then own (the tracing library: an emulator, and DTK's
 * libgalaxyhip.so.5, export both); in each place every name in order. *found (when not
 * NULL) gets the name found. NULL when none has it. */
void *dt_vlib_runtime_symbol(const char *const *names, const char *const *libraries, void *own, const char **found);

#endif
