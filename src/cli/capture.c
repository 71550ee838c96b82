/* capture.c: devtrace capture PID: opens a capture window in a program that
 * `devtrace record --on-demand` runs, from another shell (like Kineto's on-demand tracing
 * of a running job), waits until the window's trace is written and prints its path. The
 * recorder's control socket is found in the process's environment
 * ($DEVTRACE_CONTROL_SOCKET in /proc/PID/environ); the protocol is in record_windows.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/core.h"
#include "record_capture.h"
#include "record_windows.h"

static const char capture_usage[] =
    "usage: devtrace capture PID [--duration S] [-o PATH]\n"
    "\n"
    "Opens a capture window now in a program run by 'devtrace record --on-demand' (PID: the\n"
    "traced program, or any process it started, as pgrep shows it), waits until the window's\n"
    "trace is written and prints its path. Only the user who started the recording can.\n"
    "\n"
    "options:\n"
    "  --duration S   the window's length in seconds (default 5)\n"
    "  -o PATH        the trace file (default: the recorder's -o, %w the window's index)\n"
    "  -h, --help     this text\n";

/* $DEVTRACE_CONTROL_SOCKET of process pid: 0, or -1 with why. */
static int find_control_socket(const char *pid, char *out, size_t cap, char *why, size_t whylen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot read %s: %s%s", path, strerror(errno),
                 errno == ENOENT   ? " (no such process)"
                 : errno == EACCES ? " (another user's process)"
                                   : "");
        return -1;
    }
    size_t cap_env = 1 << 20, len = 0;
    char *env = malloc(cap_env + 1);
    ssize_t n;
    while (env && len < cap_env && (n = read(fd, env + len, cap_env - len)) > 0)
        len += (size_t)n;
    close(fd);
    if (!env) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    env[len] = '\0';
    static const char key[] = "DEVTRACE_CONTROL_SOCKET=";
    for (size_t off = 0; off < len; off += strlen(env + off) + 1)
        if (!strncmp(env + off, key, sizeof key - 1)) {
            snprintf(out, cap, "%s", env + off + sizeof key - 1);
            free(env);
            return 0;
        }
    free(env);
    snprintf(why, whylen,
             "process %s is not traced by 'devtrace record --on-demand' (no $DEVTRACE_CONTROL_SOCKET in its "
             "environment)",
             pid);
    return -1;
}

/* find_control_socket of pid, else of its children (pid: the recorder itself, as
 * `pgrep -f PROGRAM` also shows it). */
static int find_control_socket_near(const char *pid, char *out, size_t cap, char *why, size_t whylen)
{
    if (find_control_socket(pid, out, cap, why, whylen) == 0)
        return 0;
    char path[96], children[4096], ignored[256];
    snprintf(path, sizeof path, "/proc/%s/task/%s/children", pid, pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(children, 1, sizeof children - 1, f);
    fclose(f);
    children[n] = '\0';
    for (char *save = NULL, *child = strtok_r(children, " \n", &save); child; child = strtok_r(NULL, " \n", &save))
        if (find_control_socket(child, out, cap, ignored, sizeof ignored) == 0)
            return 0;
    return -1;
}

/* An absolute form of the requested path (the recorder runs elsewhere). */
static int absolute_path(const char *path, char *out, size_t cap)
{
    if (path[0] == '/') {
        snprintf(out, cap, "%s", path);
        return 0;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return snprintf(out, cap, "%s/%s", cwd, path) < (int)cap ? 0 : -1;
}

int dt_cmd_capture(int argc, char **argv)
{
    const char *pid = NULL, *output = NULL;
    uint64_t duration_ns = DT_CAPTURE_DEFAULT_NS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(capture_usage, stdout);
            return 0;
        } else if (!strcmp(a, "--duration") || !strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!v) {
                fprintf(stderr, "devtrace capture: %s needs a value; run 'devtrace capture --help'\n", a);
                return DT_EXIT_USAGE;
            }
            i++;
            if (a[1] == '-' && a[2] == 'd') {
                if (dt_capture_parse_seconds(v, &duration_ns) != 0 || duration_ns == 0) {
                    fprintf(stderr,
                            "devtrace capture: --duration takes seconds above 0 (like 2 or 0.5), not '%.100s'\n", v);
                    return DT_EXIT_USAGE;
                }
            } else {
                output = v;
            }
        } else if (!pid && a[0] >= '1' && a[0] <= '9' && strspn(a, "0123456789") == strlen(a) && strlen(a) < 12) {
            pid = a;
        } else {
            fprintf(stderr,
                    "devtrace capture: unexpected '%.100s'; usage: devtrace capture PID [--duration S] [-o PATH]\n", a);
            return DT_EXIT_USAGE;
        }
    }
    if (!pid) {
        fprintf(stderr, "devtrace capture: no PID given; usage: devtrace capture PID [--duration S] [-o PATH]\n");
        return DT_EXIT_USAGE;
    }
    char socket_path[PATH_MAX], why[PATH_MAX + 200], target[PATH_MAX] = "-";
    if (find_control_socket_near(pid, socket_path, sizeof socket_path, why, sizeof why) != 0) {
        fprintf(stderr, "devtrace capture: %s\n", why);
        return DT_EXIT_FAILURE;
    }
    if (output && absolute_path(output, target, sizeof target) != 0) {
        fprintf(stderr, "devtrace capture: the path '%.100s' is too long\n", output);
        return DT_EXIT_USAGE;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof addr.sun_path) {
        fprintf(stderr, "devtrace capture: the control socket path %s is too long\n", socket_path);
        return DT_EXIT_FAILURE;
    }
    memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr,
                "devtrace capture: cannot reach the recorder of process %s at %s: %s (has the recording ended?)\n", pid,
                socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return DT_EXIT_FAILURE;
    }
    char request[PATH_MAX + 64];
    int n = snprintf(request, sizeof request, "capture %llu %s\n", (unsigned long long)duration_ns, target);
    if (n < 0 || (size_t)n >= sizeof request) {
        fprintf(stderr, "devtrace capture: the request is too long\n");
        close(fd);
        return DT_EXIT_FAILURE;
    }
    int sent = send(fd, request, (size_t)n, MSG_NOSIGNAL) == n, send_errno = errno;
    /* Unsent (the recorder answered and closed at once, as when it is busy): its answer says why. */
    /* The answers until the recorder closes: at most the window, its grace, and the write. */
    int timeout_ms = (int)(duration_ns / 1000000u) + DT_WINDOW_GRACE_MS + 120000;
    char buf[PATH_MAX + 400];
    size_t len = 0;
    int written = 0, error = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0) {
            fprintf(stderr, "devtrace capture: no answer from the recorder within %d s\n", timeout_ms / 1000);
            error = 1;
            break;
        }
        ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
        if (got <= 0) {
            if (!sent && !error && !written)
                fprintf(stderr, "devtrace capture: cannot send the request: %s\n", strerror(send_errno));
            break;
        }
        len += (size_t)got;
        buf[len] = '\0';
        char *nl;
        while ((nl = strchr(buf, '\n'))) {
            *nl = '\0';
            if (!strncmp(buf, "written ", 8)) {
                printf("trace: %s\n", buf + 8);
                written++;
            } else if (!strncmp(buf, "capturing ", 10)) {
                int window = atoi(buf + 10);
                fprintf(stderr, "devtrace capture: window %d open for %.3f s\n", window, (double)duration_ns / 1e9);
            } else {
                fprintf(stderr, "devtrace capture: %s\n", buf);
                error = 1;
            }
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len + 1);
        }
        if (len == sizeof buf - 1)
            len = 0; /* a line longer than any answer: not the recorder's */
    }
    close(fd);
    return written && !error ? 0 : DT_EXIT_FAILURE;
}
