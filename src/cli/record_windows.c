/* record_windows.c: capture windows on demand, recorder side (see record_windows.h). */
#include "record_windows.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"

static void reply(dt_windows *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(dt_windows *w, const char *fmt, ...)
{
    if (w->client_fd < 0)
        return;
    char line[PATH_MAX + 200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) {
        ssize_t ignored = send(w->client_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored; /* a requester that left does not hold the recording up */
    }
}

static void drop_client(dt_windows *w)
{
    if (w->client_fd >= 0)
        close(w->client_fd);
    w->client_fd = -1;
    w->line_len = 0;
}

static void tick(void *user);

int dt_windows_open(dt_windows *w, dt_tree *t, dt_window_write_fn write, void *user, char *why, size_t whylen)
{
    memset(w, 0, sizeof *w);
    w->tree = t;
    w->listen_fd = w->client_fd = -1;
    w->write = write;
    w->write_user = user;
    if ((w->listen_fd = dt_tree_listen(t, "control.sock", 8, w->socket_path, sizeof w->socket_path, why, whylen)) < 0)
        return -1;
    setenv("DEVTRACE_CONTROL_SOCKET", w->socket_path, 1);
    t->hook.tick = tick;
    t->hook.user = w;
    t->hook.fds[0] = w->listen_fd;
    return 0;
}

/* A requester's PATH: "-", or an absolute path in a directory that exists and is writable. */
static int check_requested_path(const char *path, char *why, size_t whylen)
{
    if (!strcmp(path, "-"))
        return 0;
    if (path[0] != '/' || strlen(path) >= PATH_MAX - 16) {
        snprintf(why, whylen, "the trace path must be absolute and shorter than %d bytes", PATH_MAX - 16);
        return -1;
    }
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    if (access(dir, W_OK) != 0) {
        snprintf(why, whylen, "cannot write to directory %.1000s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* "capture DURATION_NS PATH": opens the window, or answers why not. */
static void handle_request(dt_windows *w, char *line)
{
    char why[PATH_MAX + 100];
    char *end = NULL;
    if (strncmp(line, "capture ", 8) != 0 || line[8] < '0' || line[8] > '9') {
        reply(w, "error: malformed request (expected 'capture DURATION_NS PATH'); use devtrace capture\n");
        drop_client(w);
        return;
    }
    errno = 0;
    unsigned long long duration = strtoull(line + 8, &end, 10);
    if (errno || *end != ' ' || duration == 0 || duration > 10000000ull * 1000000000ull || !end[1]) {
        reply(w, "error: malformed request (a duration of 1 ns to 10^7 s, then a path); use devtrace capture\n");
        drop_client(w);
        return;
    }
    const char *path = end + 1;
    if (check_requested_path(path, why, sizeof why) != 0) {
        reply(w, "error: %s\n", why);
        drop_client(w);
        return;
    }
    uint64_t now = dt_realtime_ns();
    if (dt_tree_window_open(w->tree, now, now + duration) != 0) {
        reply(w, "error: the recorder is out of memory\n");
        drop_client(w);
        return;
    }
    w->open = 1;
    w->tree->hook.fds[1] = -1; /* the requester only waits for the answer now */
    w->start_ns = now;
    w->stop_ns = now + duration;
    snprintf(w->requested, sizeof w->requested, "%s", strcmp(path, "-") ? path : "");
    reply(w, "capturing %d %llu %s\n", w->index, duration, path);
    fprintf(stderr, "devtrace record: capture window %d opened for %.3f s\n", w->index, (double)duration / 1e9);
}

static void accept_request(dt_windows *w)
{
    int fd = accept4(w->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != getuid()) {
        close(fd); /* the directory is the user's own: this is only a second lock */
        return;
    }
    if (w->client_fd >= 0) {
        const char *busy = w->open ? "error: a capture window is open; ask again when its trace is written\n"
                                   : "error: another request is being read; try again\n";
        ssize_t ignored = send(fd, busy, strlen(busy), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
        close(fd);
        return;
    }
    w->client_fd = fd;
    w->line_len = 0;
    w->tree->hook.fds[1] = fd;
}

static void read_request(dt_windows *w)
{
    if (w->client_fd < 0 || w->open)
        return;
    for (;;) {
        ssize_t n = read(w->client_fd, w->line + w->line_len, sizeof w->line - 1 - w->line_len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            drop_client(w);
            return;
        }
        w->line_len += (size_t)n;
        w->line[w->line_len] = '\0';
        char *nl = memchr(w->line, '\n', w->line_len);
        if (nl) {
            *nl = '\0';
            handle_request(w, w->line);
            return;
        }
        if (w->line_len >= sizeof w->line - 1 || memchr(w->line, '\0', w->line_len)) {
            reply(w, "error: malformed request (not one line of text under %d bytes)\n", DT_CONTROL_LINE_MAX);
            drop_client(w);
            return;
        }
    }
}

/* The window's sessions written, each path sent to the requester. */
static void close_and_write(dt_windows *w)
{
    dt_session **sessions;
    uint32_t *pids;
    size_t n = dt_tree_window_close(w->tree, &sessions, &pids);
    int wrote = 0;
    for (size_t i = 0; i < n; i++) {
        dt_session *s = sessions[i];
        if (w->tree->per_process && !s->nprocesses) {
            devtrace_close(s);
            continue; /* a connection that never said hello (a forked child) */
        }
        char path[PATH_MAX];
        if (w->write(w->write_user, s, pids ? pids[i] : 0, w->index, w->requested, path, sizeof path) == 0) {
            reply(w, "written %s\n", path);
            wrote++;
        } else {
            reply(w, "error: the trace of window %d could not be written (the recorder's stderr says why)\n", w->index);
            w->failed++;
        }
        devtrace_close(s);
    }
    if (!n || (!wrote && !w->failed))
        reply(w, "error: no process was traced during window %d: nothing written\n", w->index);
    w->written += wrote;
    free(sessions);
    free(pids);
    w->open = 0;
    w->index++;
    w->tree->hook.fds[1] = -1;
    drop_client(w);
}

static void tick(void *user)
{
    dt_windows *w = user;
    accept_request(w);
    read_request(w);
    if (w->open && dt_realtime_ns() >= w->stop_ns + (uint64_t)DT_WINDOW_GRACE_MS * 1000000u)
        close_and_write(w);
}

void dt_windows_finish(dt_windows *w)
{
    if (!w->open) {
        drop_client(w);
        return;
    }
    uint64_t now = dt_realtime_ns();
    if (now < w->stop_ns) {
        w->stop_ns = now; /* the program ended inside the window */
        for (size_t i = 0; i < w->tree->nsessions; i++)
            w->tree->sessions[i]->window_stop = now;
    }
    close_and_write(w);
}

void dt_windows_close(dt_windows *w)
{
    drop_client(w);
    if (w->listen_fd >= 0)
        close(w->listen_fd);
    if (w->socket_path[0])
        unlink(w->socket_path);
    w->listen_fd = -1;
    w->socket_path[0] = '\0';
}
