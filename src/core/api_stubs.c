/* api_stubs.c: the 0.2 API calls not implemented yet (DEVTRACE_ENOTSUP). */
#include "devtrace.h"

int devtrace_flush(devtrace_session *s, devtrace_event_cb cb, void *user, size_t *count, devtrace_error *err)
{
    (void)s, (void)cb, (void)user, (void)err;
    if (count)
        *count = 0;
    return DEVTRACE_ENOTSUP;
}
