/* errors.c: error codes to text, and the cause chain carried in devtrace_error. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *devtrace_strerror(int code)
{
    switch (code) {
#define DT_STRERROR_CASE(name, value, msg) \
    case value:                            \
        return msg;
        DEVTRACE_ERRNO_MAP(DT_STRERROR_CASE)
#undef DT_STRERROR_CASE
    }
    return "unknown error code";
}

const char *devtrace_errname(int code)
{
    switch (code) {
#define DT_ERRNAME_CASE(name, value, msg) \
    case value:                           \
        return "DEVTRACE_E" #name;
        DEVTRACE_ERRNO_MAP(DT_ERRNAME_CASE)
#undef DT_ERRNAME_CASE
    }
    return "DEVTRACE_E?";
}

int dt_error_set(devtrace_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int dt_error_wrap(devtrace_error *err, const char *fmt, ...)
{
    if (!err)
        return DEVTRACE_EINVAL;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0)
        return err->code;
    size_t plen = strlen(prefix), mlen = strlen(err->message);
    if (plen + 2 + mlen + 1 > sizeof err->message)
        mlen = sizeof err->message - plen - 3;
    memmove(err->message + plen + 2, err->message, mlen);
    err->message[plen + 2 + mlen] = '\0';
    memcpy(err->message, prefix, plen);
    err->message[plen] = ':';
    err->message[plen + 1] = ' ';
    return err->code;
}
