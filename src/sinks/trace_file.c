/* trace_file.c: what the trace sinks share: the format a trace's file name asks for, the
 * file written atomically (<path>.tmp, made new, never through a link or another user's file
 * planted there; renamed once complete, removed on failure), its
 * gzip level and stream, and
 * devtrace_write_trace, which writes whichever format the name asks for; and the names
 * both formats give copies and device properties. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "core/errors.h"
#include "core/new_file.h"
#include "sinks.h"

static int ends_with_nocase(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

dt_trace_format dt_trace_format_of(const char *path)
{
    static const char *const perfetto[] = {".pftrace", ".perfetto-trace", ".pftrace.gz", ".perfetto-trace.gz"};
    for (size_t i = 0; path && i < sizeof perfetto / sizeof perfetto[0]; i++)
        if (ends_with_nocase(path, perfetto[i]))
            return DT_FORMAT_PERFETTO;
    return DT_FORMAT_CHROME_JSON;
}

int dt_trace_path_is_gzip(const char *path)
{
    return ends_with_nocase(path, ".gz");
}

int dt_trace_gzip_level(dt_session *s, const char *path)
{
    if (!dt_trace_path_is_gzip(path))
        return -1;
    const char *lvl = getenv("DEVTRACE_GZIP_LEVEL");
    if (!lvl || !*lvl)
        return 1;
    if (lvl[0] >= '0' && lvl[0] <= '9' && !lvl[1])
        return lvl[0] - '0';
    dt_add_note(s, "$DEVTRACE_GZIP_LEVEL=\"%.100s\" is not a level from 0 to 9: 1 used", lvl);
    return 1;
}

void *dt_gzip_open(FILE *f, int level)
{
    char mode[4] = {'w', 'b', (char)('0' + level), '\0'};
    int fd = dup(fileno(f));
    gzFile gz = fd >= 0 ? gzdopen(fd, mode) : NULL;
    if (!gz && fd >= 0)
        close(fd);
    return gz;
}

const char *devtrace_memcpy_name(uint32_t direction)
{
    switch (direction) {
    case DEVTRACE_COPY_HTOD:
        return "Memcpy HtoD (Pageable -> Device)";
    case DEVTRACE_COPY_DTOH:
        return "Memcpy DtoH (Device -> Pageable)";
    case DEVTRACE_COPY_DTOD:
        return "Memcpy DtoD (Device -> Device)";
    case DEVTRACE_COPY_HTOH:
        return "Memcpy HtoH (Pageable -> Pageable)";
    default:
        return "Memcpy (Unknown)";
    }
}

const dt_traced_process *dt_device_owner(const dt_session *s, uint32_t device)
{
    const dt_traced_process *owner = NULL;
    for (size_t i = 0; i < s->nprocesses; i++)
        if (s->processes[i].device_base <= device && (!owner || s->processes[i].device_base > owner->device_base))
            owner = &s->processes[i];
    return owner;
}

const dt_traced_process *dt_traced_process_of(const dt_session *s, uint32_t pid)
{
    for (size_t i = 0; i < s->nprocesses; i++)
        if (s->processes[i].pid == pid)
            return &s->processes[i];
    return NULL;
}

void dt_device_lane_name(const dt_session *s, uint32_t device, char *out, size_t cap)
{
    const dt_traced_process *p = s->nprocesses > 1 ? dt_device_owner(s, device) : NULL;
    if (p)
        snprintf(out, cap, "GPU %u (pid %u)", device - p->device_base, p->pid);
    else
        snprintf(out, cap, "GPU %u", device);
}

void dt_program_name(const char *command, char *out, size_t cap)
{
    size_t len = strcspn(command, " ");
    const char *start = command;
    for (size_t i = 0; i < len; i++)
        if (command[i] == '/')
            start = command + i + 1;
    size_t n = (size_t)(command + len - start);
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), start);
}

void dt_device_fields(const dt_device_props *d, dt_device_field out[DT_DEVICE_FIELDS])
{
    const dt_device_field fields[DT_DEVICE_FIELDS] = {
        {"computeMajor", d->compute_major},
        {"computeMinor", d->compute_minor},
        {"maxThreadsPerBlock", d->max_threads_per_block},
        {"maxThreadsPerMultiprocessor", d->max_threads_per_sm},
        {"regsPerBlock", d->regs_per_block},
        {"regsPerMultiprocessor", d->regs_per_sm},
        {"warpSize", d->warp_size},
        {"sharedMemPerBlock", (int64_t)d->smem_per_block},
        {"sharedMemPerMultiprocessor", (int64_t)d->smem_per_sm},
        {"numSms", d->num_sms},
    };
    memcpy(out, fields, sizeof fields);
}

int dt_trace_file_write(dt_session *s, const char *path, unsigned workers, dt_trace_body_fn body, devtrace_error *err)
{
    if (!s || !path || !*path)
        return dt_error_set(err, DEVTRACE_EINVAL, "no output path given");
    if (s->state == DT_RUNNING)
        devtrace_stop(s);
    int frc = dt_session_finalize(s);
    if (frc == DEVTRACE_ENOMEM)
        return dt_error_set(err, frc, "out of memory while sorting the session's events for the trace");
    if (frc != 0)
        return dt_error_set(err, frc, "the session was never started; call devtrace_start first");
    if (workers == DT_WRITE_THREADS_AUTO) {
        unsigned threads = dt_chrome_write_threads(s);
        workers = threads > 1 ? threads : 0;
    }
    size_t cap = strlen(path) + 16;
    char *tmp = malloc(cap);
    if (!tmp)
        return dt_error_set(err, DEVTRACE_ENOMEM, "out of memory");
    int fd = dt_file_create_tmp(path, tmp, cap); /* never through a name planted there */
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int e = errno;
        int rc = dt_file_refusal(e)
                     ? dt_error_set(err, DEVTRACE_EIO, "cannot write the trace to %s: %s", path, dt_file_refusal(e))
                     : dt_error_set(err, DEVTRACE_EIO,
                                    "cannot write the trace to %s: %s; check that the directory "
                                    "exists and is writable",
                                    tmp, strerror(e));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return rc;
    }
    int rc = body(s, f, path, tmp, workers, err);
    if (fclose(f) != 0 && !rc)
        rc = dt_error_set(err, DEVTRACE_EIO, "writing the trace to %s failed: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path) != 0)
        rc = dt_error_set(err, DEVTRACE_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

int devtrace_write_trace(devtrace_session *s, const char *path, devtrace_error *err)
{
    if (dt_trace_format_of(path) == DT_FORMAT_PERFETTO)
        return devtrace_write_perfetto(s, path, err);
    return devtrace_write_chrome(s, path, err);
}
