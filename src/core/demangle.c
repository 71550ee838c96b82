/* demangle.c: kernel-name demangling through the C++ runtime's __cxa_demangle when the
 * process has it (or can load libstdc++), else none: the raw name stays. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!sym) {
        void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (lib)
            sym = dlsym(lib, "__cxa_demangle");
    }
    *(void **)&demangler = sym;
}

char *dt_demangle(const char *mangled)
{
    if (!mangled || strncmp(mangled, "_Z", 2) != 0)
        return NULL;
    pthread_once(&demangler_once, find_demangler);
    if (!demangler)
        return NULL;
    int status = 0;
    char *out = demangler(mangled, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}
