/* record_torch.c: devtrace record --torch: what the program's environment needs so that a
 * Python program that imports torch records every PyTorch op (python/devtrace): the
 * package's bootstrap folder first on PYTHONPATH (its sitecustomize watches for the import
 * of torch, then runs the program's own sitecustomize) and the package itself. The package
 * binds to the collector library the recorder names in $DEVTRACE_COLLECT_LIBRARY (record.c). */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int has_package(const char *dir)
{
    char probe[PATH_MAX];
    int n = snprintf(probe, sizeof probe, "%s/devtrace/_bootstrap/sitecustomize.py", dir);
    return n > 0 && (size_t)n < sizeof probe && access(probe, R_OK) == 0;
}

int dt_torch_python_dir(char *out, size_t cap)
{
    const char *env = getenv("DEVTRACE_PYTHON_DIR");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        if (has_package(out))
            return 0;
        fprintf(stderr,
                "devtrace record: --torch: $DEVTRACE_PYTHON_DIR (%s) has no devtrace/ Python package; "
                "name the folder that holds devtrace/\n",
                env);
        return -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        const char *dir = dirname(exe);
        const char *const layouts[] = {"%s/../python", "%s/../share/devtrace/python"}; /* build tree, install */
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
            char candidate[PATH_MAX];
            int len = snprintf(candidate, sizeof candidate, layouts[i], dir);
            if (len < 0 || (size_t)len >= sizeof candidate)
                continue;
            if (has_package(candidate) && realpath(candidate, out))
                return 0;
        }
    }
    fprintf(stderr,
            "devtrace record: --torch: cannot find devtrace's Python package next to this program "
            "(../python, ../share/devtrace/python); set DEVTRACE_PYTHON_DIR to the folder that holds devtrace/\n");
    return -1;
}

void dt_torch_setup_env(const char *python_dir)
{
    const char *old = getenv("PYTHONPATH");
    size_t n = 2 * strlen(python_dir) + (old ? strlen(old) : 0) + 32;
    char *value = malloc(n);
    if (!value)
        return;
    snprintf(value, n, "%s/devtrace/_bootstrap:%s%s%s", python_dir, python_dir, old && *old ? ":" : "",
             old && *old ? old : "");
    setenv("PYTHONPATH", value, 1);
    free(value);
}
