/* record_tree.h: devtrace record's side of a traced process tree. Every process of the
 * tree whose collector starts connects to one socket, in a directory only the recording
 * user can enter; each connection is read by its own wire reader into a session: one for
 * the whole tree (each process on lanes of its own), or one per process (-o with %p or
 * %r). Children forked from a traced process report themselves, and are counted when
 * they never run a traced program. */
#ifndef DT_RECORD_TREE_H
#define DT_RECORD_TREE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/core.h"
#include "inject/wire.h"
#include "record_spill.h"

/* After the top program exits, how long the recorder waits for traced processes it left
 * running (a job started in the background) before it writes the trace without the rest. */
#define DT_TREE_ORPHAN_WAIT_MS 5000

/* Connections of one recording at most (processes of the tree, forked children's reports
 * included); a spill's record naming one past it is corrupt. */
#define DT_TREE_MAX_CONNECTIONS 65536u

typedef struct dt_tree_conn {
    int fd; /* -1 once closed */
    dt_wire_reader reader;
    dt_session *session;    /* borrowed: where this connection's messages go */
    int listed;             /* its process is in the session's process list */
    uint64_t events_before; /* events it had sent when its session's window opened */
    dt_spill *spill;        /* borrowed: where its messages go while the program runs, or NULL */
    uint32_t index;         /* its place in the tree's connections (the spill's connection index) */
} dt_tree_conn;

/* Called from the receive loop after every poll (fds: the extra descriptors it polls). */
typedef struct dt_tree_hook {
    void (*tick)(void *user);
    void *user;
    int fds[2]; /* -1: none */
} dt_tree_hook;

typedef struct dt_tree {
    char dir[PATH_MAX];         /* the private directory ("" when none) */
    char socket_path[PATH_MAX]; /* the collectors' socket in it */
    int listen_fd;
    int per_process;    /* one session per traced process */
    int chunks_in_file; /* dt_tree_chunks_beside: every session's chunks from file memory */
    char backend[32];
    dt_tree_conn *conns; /* owned */
    size_t nconns, conns_cap;
    dt_session **sessions; /* owned: the combined one, or one per connection */
    size_t nsessions, sessions_cap;
    size_t ordinals; /* connections accepted into the combined session */
    /* Capture windows (--on-demand): sessions exist only while a window is open. */
    int windowed, window_open;
    uint64_t window_start, window_stop;
    dt_tree_hook hook;
    /* Spilling (record_spill.h): every connection's messages go to the spill as they arrive
     * (the readers keep only each process's identity, end and event count), and the
     * sessions are built from it when receiving ends. NULL: the sessions are fed as the
     * messages arrive (capture windows). */
    dt_spill *spill; /* borrowed */
    int orphans;     /* receiving ended with processes still running (noted after the build) */
} dt_tree;

/* A socket named name in the tree's private directory, listening (non-blocking): its
 * descriptor, with its path in path; or -1 with a line in why. */
int dt_tree_listen(const dt_tree *t, const char *name, int backlog, char *path, size_t cap, char *why, size_t whylen);
/* Makes the private directory and the socket. 0, or -1 with a line in why. */
int dt_tree_open(dt_tree *t, const char *backend, int per_process, char *why, size_t whylen);
/* Capture windows: no session until dt_tree_window_open; between windows the events are
 * counted per kind, and added to the next window's out_of_window. Call before receiving. */
int dt_tree_set_windowed(dt_tree *t);
/* Opens a window [start_ns, stop_ns] (host realtime): a session for the tree (or one per
 * process), which every connection feeds from now on. 0, or -1 when out of memory. */
int dt_tree_window_open(dt_tree *t, uint64_t start_ns, uint64_t stop_ns);
/* Closes the open window: its sessions, handed to the caller (write them, then
 * devtrace_close each; *sessions is malloc'd), and each one's pid (0: the tree's one). */
size_t dt_tree_window_close(dt_tree *t, dt_session ***sessions, uint32_t **pids);

/* Receives from every traced process until the top program (top) has exited and every
 * connection has closed, or DT_TREE_ORPHAN_WAIT_MS after it exited (noted by
 * dt_tree_build); *status is the top's, from waitpid. */
void dt_tree_receive(dt_tree *t, pid_t top, int *status);
/* After receiving: with a spill, the sessions built from it (0, or -1 with a line in why:
 * the spill is kept then); the notes of processes left running. */
int dt_tree_build(dt_tree *t, char *why, size_t whylen);

/* A tree with no socket (devtrace convert of a spill): one combined session, or with
 * per_process one session per process as its connection comes; connections come from the
 * spill's records. 0, or -1 when out of memory. */
int dt_tree_open_offline(dt_tree *t, const char *backend, int per_process);
/* Builds the sessions from a spill's records, data[0, n) (after its header), as the
 * messages arrived: each connection's through a wire reader of its own into its session.
 * Returns the bytes of whole records read (n less an incomplete last record); *count
 * gets their number. */
size_t dt_tree_replay(dt_tree *t, const unsigned char *data, size_t n, uint64_t *count);
/* The events of the tree's sessions go to chunks in an unnamed file in path's folder,
 * mapped shared (not the heap), from now on. 0, or -1 (the heap then). */
int dt_tree_chunks_beside(dt_tree *t, const char *path);
/* The same over map[from, to) of a spill mapped for reading, 16 MiB at a time: the pages
 * read are dropped from the process's resident set as it goes (MADV_DONTNEED), so that a
 * spill's size never adds to the recorder's memory. Returns the bytes of whole records
 * read from from. */
size_t dt_tree_replay_mapped(dt_tree *t, const unsigned char *map, size_t from, size_t to, uint64_t *count);
/* The sessions to write, in the order their processes started, and the pid and rank of
 * each (per process: its own; combined: the top's pid, rank -1). Sessions of connections
 * that never said hello (forked children) are not counted. */
size_t dt_tree_outputs(const dt_tree *t);
dt_session *dt_tree_output(const dt_tree *t, size_t i, uint32_t *pid);
/* The notes and counters of how each process ended, in its session; 1 when no process
 * said hello at all. */
int dt_tree_describe(dt_tree *t);
void dt_tree_close(dt_tree *t);

/* "SIGSEGV" and the like; "a signal" for others. */
const char *dt_record_signal_name(int sig);

#endif
