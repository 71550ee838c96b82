/* selection_open.c: what devtrace_open selects in this process, and why. With no
 * argument the configuration leaves the backend to $DEVTRACE_BACKEND (else auto), as an
 * application linking libdevtrace does; with one, that name is asked for. Prints
 *   backend=NAME
 *   reason=TEXT   (devtrace_unavailable_reason: empty when the backend can trace)
 * or "error=MESSAGE" and exit 1 when devtrace_open refuses (an unknown name). */
#include <stdio.h>

#include "devtrace.h"

int main(int argc, char **argv)
{
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    if (argc > 1)
        cfg.backend = argv[1];
    devtrace_error err;
    devtrace_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        printf("error=%s\n", err.message);
        return 1;
    }
    printf("backend=%s\n", devtrace_backend_name(s));
    printf("reason=%s\n", devtrace_unavailable_reason(s));
    devtrace_close(s);
    return 0;
}
