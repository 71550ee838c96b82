/* api_stubs.c: the 0.2 API calls not implemented yet (DEVTRACE_ENOTSUP). */
#include "devtrace.h"

int devtrace_push_user_correlation(devtrace_session *s, uint64_t id)
{
    (void)s, (void)id;
    return DEVTRACE_ENOTSUP;
}
int devtrace_pop_user_correlation(devtrace_session *s, uint64_t *id)
{
    (void)s, (void)id;
    return DEVTRACE_ENOTSUP;
}
int devtrace_flush(devtrace_session *s, devtrace_event_cb cb, void *user, size_t *count, devtrace_error *err)
{
    (void)s, (void)cb, (void)user, (void)err;
    if (count)
        *count = 0;
    return DEVTRACE_ENOTSUP;
}
int devtrace_stream_count(const devtrace_session *s)
{
    (void)s;
    return 0;
}
int devtrace_stream_get(const devtrace_session *s, int index, devtrace_stream *out)
{
    (void)s, (void)index, (void)out;
    return DEVTRACE_ENOTSUP;
}
