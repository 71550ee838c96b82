/* record_windows.h: devtrace record --on-demand: capture windows opened from another shell
 * (devtrace capture PID). The recorder listens on a control socket in its private
 * directory (only its user can enter it, and each peer's uid is checked); the traced
 * programs get its path as $DEVTRACE_CONTROL_SOCKET, which devtrace capture reads from
 * /proc/PID/environ. A request opens a window now, for its duration; after it closes (and
 * DT_WINDOW_GRACE_MS more, for events shipped late) the window's trace is written and
 * its path sent back. Windows do not overlap; each is its own trace (%w in -o: the
 * window's index).
 *
 * Protocol, one line each way (text): "capture DURATION_NS PATH\n" (PATH "-": the -o
 * pattern), answered "capturing WINDOW DURATION_NS PATH\n" then "written PATH\n", or
 * "error: WHAT\n" at any point; then the recorder closes the connection. */
#ifndef DT_RECORD_WINDOWS_H
#define DT_RECORD_WINDOWS_H

#include <limits.h>
#include <stdint.h>

#include "record_tree.h"

/* After a window closes, how long it still takes the events the processes ship. */
#define DT_WINDOW_GRACE_MS 500
#define DT_CAPTURE_DEFAULT_NS 5000000000ull
#define DT_CONTROL_LINE_MAX 4200

/* Writes one window's trace: 0 with the path in path, or -1 (said on stderr). pid: the
 * process of a per-process session, 0 for the tree's one. */
typedef int (*dt_window_write_fn)(void *user, dt_session *s, uint32_t pid, int window, const char *requested_path,
                                  char *path, size_t cap);

typedef struct dt_windows {
    dt_tree *tree; /* borrowed */
    int listen_fd;
    char socket_path[PATH_MAX];
    int client_fd; /* the request being read, or the window's requester; -1: none */
    char line[DT_CONTROL_LINE_MAX];
    size_t line_len;
    int open;                   /* a window is open (or in its grace) */
    int index;                  /* windows opened so far */
    uint64_t start_ns, stop_ns; /* the open window, host realtime */
    char requested[PATH_MAX];   /* its PATH ("" : the -o pattern) */
    dt_window_write_fn write;
    void *write_user;
    int written, failed; /* windows written, and those that could not be */
} dt_windows;

/* Listens on the control socket in the tree's directory and hooks into its receive loop;
 * sets $DEVTRACE_CONTROL_SOCKET for the program. 0, or -1 with a line in why. */
int dt_windows_open(dt_windows *w, dt_tree *t, dt_window_write_fn write, void *user, char *why, size_t whylen);
/* The program ended: the open window closes now (or at its end, if sooner) and is written. */
void dt_windows_finish(dt_windows *w);
void dt_windows_close(dt_windows *w);

#endif
