/* hide_libs.c: an LD_PRELOAD shim that makes this process see a machine without some
 * libraries. Every file whose base name is listed in $DT_HIDE_LIBS (':'-separated, e.g.
 * "libOpenCL.so.1:libcupti.so.13") is absent: dlopen() of it (by bare name or by path,
 * RTLD_NOLOAD included) returns NULL, and access() on a path to it fails with ENOENT;
 * a path that does not exist anyway is passed through, so dlerror() says what it says.
 * The selection tests use it to simulate a machine with no vendor library at all, whatever
 * is installed on the build machine (the CUDA toolkit's libcupti, the OpenCL ICD loader):
 * backends find libraries with access() and dlopen() only. Test fixture, not shipped. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hidden(const char *file)
{
    const char *list = getenv("DT_HIDE_LIBS");
    if (!file || !list || !*list)
        return 0;
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    size_t len = strlen(base);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ":");
        if (n == len && memcmp(p, base, n) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

static int real_access(const char *path, int how)
{
    static int (*fn)(const char *, int);
    if (!fn)
        *(void **)&fn = dlsym(RTLD_NEXT, "access");
    return fn ? fn(path, how) : -1;
}

void *dlopen(const char *file, int mode)
{
    static void *(*real_dlopen)(const char *, int);
    if (!real_dlopen)
        *(void **)&real_dlopen = dlsym(RTLD_NEXT, "dlopen");
    /* A hidden file that exists is absent; a path that does not exist anyway goes on to the
     * real dlopen, so that dlerror() tells what it always tells. */
    if (hidden(file) && (!strchr(file, '/') || real_access(file, F_OK) == 0))
        return NULL;
    return real_dlopen ? real_dlopen(file, mode) : NULL;
}

int access(const char *path, int how)
{
    if (hidden(path)) {
        errno = ENOENT;
        return -1;
    }
    return real_access(path, how);
}
