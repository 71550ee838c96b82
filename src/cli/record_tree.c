/* record_tree.c: the traced process tree, recorder side (see record_tree.h). */
#include "record_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *chunk_from_file(void *user);

static dt_session *new_session(dt_tree *t)
{
    dt_session **p = dt_room_for_one(t->sessions, t->nsessions, &t->sessions_cap, sizeof *p, 8);
    if (!p)
        return NULL;
    t->sessions = p;
    devtrace_error err;
    dt_session *s = dt_session_new_offline(t->backend, "", NULL, &err);
    if (s && t->chunks_in_file) /* a session made while a spill is replayed (one per process) */
        dt_store_set_chunk_source(&s->store, chunk_from_file, NULL);
    if (s)
        t->sessions[t->nsessions++] = s;
    return s;
}

int dt_tree_listen(const dt_tree *t, const char *name, int backlog, char *path, size_t cap, char *why, size_t whylen)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int n = snprintf(path, cap, "%s/%s", t->dir, name);
    if (n < 0 || (size_t)n >= sizeof addr.sun_path || (size_t)n >= cap) {
        snprintf(why, whylen, "the socket path %s/%s is longer than %zu bytes; set TMPDIR to a shorter directory",
                 t->dir, name, sizeof addr.sun_path - 1);
        return -1;
    }
    memcpy(addr.sun_path, path, (size_t)n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, backlog) != 0) {
        snprintf(why, whylen, "cannot listen on %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int dt_tree_open(dt_tree *t, const char *backend, int per_process, char *why, size_t whylen)
{
    memset(t, 0, sizeof *t);
    t->listen_fd = -1;
    t->per_process = per_process;
    snprintf(t->backend, sizeof t->backend, "%s", backend);
    const char *tmp = getenv("TMPDIR");
    snprintf(t->dir, sizeof t->dir, "%s/devtrace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(t->dir)) { /* mode 0700: only this user can reach the socket */
        snprintf(why, whylen,
                 "cannot make a private directory %s for the collectors' socket: %s; set TMPDIR to a "
                 "writable directory",
                 t->dir, strerror(errno));
        t->dir[0] = '\0';
        return -1;
    }
    if ((t->listen_fd = dt_tree_listen(t, "collect.sock", 128, t->socket_path, sizeof t->socket_path, why, whylen)) < 0)
        return -1;
    t->hook.fds[0] = t->hook.fds[1] = -1;
    if (!per_process && !new_session(t)) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

int dt_tree_set_windowed(dt_tree *t)
{
    t->windowed = 1;
    for (size_t i = 0; i < t->nsessions; i++)
        devtrace_close(t->sessions[i]);
    t->nsessions = 0;
    return 0;
}

/* The session a connection feeds when it joins (or a window opens): NULL between windows. */
static dt_session *session_for_connection(dt_tree *t)
{
    if (t->windowed && !t->window_open)
        return NULL;
    dt_session *s = t->per_process ? new_session(t) : t->sessions[0];
    if (s && t->windowed) {
        s->window_start = t->window_start;
        s->window_stop = t->window_stop;
    }
    return s;
}

/* A connection's message, to the spill (the reader's on_message). */
static int spill_message(void *user, uint32_t type, const void *payload, size_t n)
{
    dt_tree_conn *c = user;
    return dt_spill_append(c->spill, c->index, type, payload, n);
}

/* A new connection at the end of the list (fd -1 for one read back from a spill): its
 * session, and its lanes and flows in the combined one. NULL when out of memory. */
static dt_tree_conn *add_connection(dt_tree *t, int fd)
{
    if (t->nconns >= DT_TREE_MAX_CONNECTIONS)
        return NULL;
    dt_tree_conn *p = dt_room_for_one(t->conns, t->nconns, &t->conns_cap, sizeof *p, 16);
    if (!p)
        return NULL;
    t->conns = p;
    dt_tree_conn *c = &t->conns[t->nconns];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->index = (uint32_t)t->nconns;
    dt_wire_reader_init(&c->reader);
    if (t->windowed && dt_wire_reader_keep_metadata(&c->reader) != 0)
        return NULL;
    c->session = session_for_connection(t);
    if (!c->session && !(t->windowed && !t->window_open)) {
        dt_wire_reader_free(&c->reader);
        return NULL;
    }
    if (!t->per_process) {
        /* Each process of the combined trace on lanes (and flows) of its own. */
        c->reader.device_base = DT_PROCESS_DEVICE_BASE(t->ordinals);
        c->reader.correlation_base = (uint64_t)t->ordinals << 40;
        t->ordinals++;
    }
    if (t->spill && fd >= 0) {
        c->spill = t->spill;
        c->reader.on_message = spill_message;
    }
    t->nconns++;
    return c;
}

static void accept_connections(dt_tree *t)
{
    for (;;) {
        int fd = accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        struct ucred peer;
        socklen_t len = sizeof peer;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != getuid()) {
            close(fd); /* the directory is the user's own: this is only a second lock */
            continue;
        }
        if (!add_connection(t, fd)) {
            close(fd);
            return;
        }
    }
}

/* The connection's process goes into its session's list when its hello arrives. */
static void list_process(dt_tree_conn *c)
{
    dt_session *s = c->session;
    if (!s || c->listed || !c->reader.hello)
        return;
    dt_traced_process *p = realloc(s->processes, (s->nprocesses + 1) * sizeof *p);
    if (!p)
        return;
    s->processes = p;
    p += s->nprocesses++;
    memset(p, 0, sizeof *p);
    p->pid = c->reader.pid;
    p->ppid = c->reader.ppid;
    p->device_base = c->reader.device_base;
    snprintf(p->command, sizeof p->command, "%s", c->reader.command);
    c->listed = 1;
}

/* Reads what the connection has straight into its reader's buffer, 64 KiB or more at a
 * time (what the buffer has room for), until the socket is empty or closed. Out of
 * memory, what arrives is read and lost (said in the trace's notes), so that the program
 * never blocks on a full socket. */
static void read_connection(dt_tree_conn *c)
{
    for (;;) {
        unsigned char lost[4096];
        unsigned char *to = dt_wire_reader_space(&c->reader, 1 << 16);
        size_t room = to ? dt_wire_reader_room(&c->reader) : sizeof lost;
        ssize_t n = read(c->fd, to ? to : lost, room);
        if (n > 0) {
            c->reader.on_message_user = c; /* where c is now (the list may have moved) */
            if (to)
                dt_wire_reader_commit(&c->reader, c->session, (size_t)n);
            else
                dt_add_note(c->session, "recorder ran out of memory receiving events");
            list_process(c);
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            close(c->fd);
            c->fd = -1;
        }
        return;
    }
}

static size_t open_connections(const dt_tree *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nconns; i++)
        n += t->conns[i].fd >= 0;
    return n;
}

static int build_from_spill(dt_tree *t, char *why, size_t whylen);

/* The processes still running when receiving ended (after the sessions are built, so
 * that the note follows what they sent, as when the sessions are fed as it arrives). */
static void note_orphans(dt_tree *t)
{
    for (size_t i = 0; i < t->nconns; i++)
        if (t->conns[i].fd >= 0 && t->conns[i].reader.hello)
            dt_add_note(t->conns[i].session,
                        "process %u (%.100s) was still running %d ms after the program ended: its events "
                        "after that are not in the trace",
                        t->conns[i].reader.pid, t->conns[i].reader.command, DT_TREE_ORPHAN_WAIT_MS);
}

void dt_tree_receive(dt_tree *t, pid_t top, int *status)
{
    int exited = 0;
    uint64_t exited_at = 0;
    struct pollfd *fds = NULL;
    size_t fds_cap = 0;
    for (;;) {
        if (!fds || fds_cap < t->nconns + 3) { /* the listener, the hook's two, each connection */
            size_t cap = (t->nconns + 3) * 2;
            struct pollfd *p = realloc(fds, cap * sizeof *p);
            if (!p)
                break;
            fds = p;
            fds_cap = cap;
        }
        size_t nfds = 0;
        fds[nfds++] = (struct pollfd){t->listen_fd, POLLIN, 0};
        for (int k = 0; k < 2; k++)
            if (t->hook.fds[k] >= 0)
                fds[nfds++] = (struct pollfd){t->hook.fds[k], POLLIN, 0};
        for (size_t i = 0; i < t->nconns; i++)
            if (t->conns[i].fd >= 0)
                fds[nfds++] = (struct pollfd){t->conns[i].fd, POLLIN, 0};
        int rc = poll(fds, (nfds_t)nfds, exited ? 20 : 100);
        if (rc > 0) {
            accept_connections(t);
            for (size_t i = 0; i < t->nconns; i++)
                if (t->conns[i].fd >= 0)
                    read_connection(&t->conns[i]);
        } else if (rc < 0 && errno != EINTR) {
            break;
        }
        if (t->spill)
            dt_spill_flush(t->spill); /* what a recorder killed now would leave */
        if (t->hook.tick)
            t->hook.tick(t->hook.user);
        if (!exited && waitpid(top, status, WNOHANG) == top) {
            exited = 1;
            exited_at = monotonic_ms();
            continue; /* once more: what arrived meanwhile */
        }
        if (exited && rc == 0 && !open_connections(t))
            break;
        if (exited && monotonic_ms() - exited_at > DT_TREE_ORPHAN_WAIT_MS) {
            t->orphans = 1;
            break;
        }
    }
    free(fds);
    if (!exited)
        while (waitpid(top, status, 0) < 0 && errno == EINTR)
            ;
}

int dt_tree_build(dt_tree *t, char *why, size_t whylen)
{
    int rc = t->spill ? build_from_spill(t, why, whylen) : 0;
    if (t->orphans)
        note_orphans(t);
    return rc;
}

int dt_tree_open_offline(dt_tree *t, const char *backend, int per_process)
{
    memset(t, 0, sizeof *t);
    t->listen_fd = -1;
    t->hook.fds[0] = t->hook.fds[1] = -1;
    t->per_process = per_process;
    snprintf(t->backend, sizeof t->backend, "%s", backend);
    return per_process || new_session(t) ? 0 : -1;
}

/* One record of a spill, through its connection's reader into its session. */
static int replay_record(void *user, uint32_t connection, uint32_t type, const unsigned char *payload, size_t n)
{
    dt_tree *t = user;
    if (connection >= DT_TREE_MAX_CONNECTIONS)
        return -1; /* a connection the recorder cannot have had: a corrupt record */
    while (connection >= t->nconns)
        if (t->listen_fd >= 0 || !add_connection(t, -1))
            return -1; /* a connection the recorder never had (or out of memory) */
    dt_tree_conn *c = &t->conns[connection];
    dt_wire_reader_apply(&c->reader, c->session, type, payload, n);
    list_process(c);
    return 0;
}

size_t dt_tree_replay(dt_tree *t, const unsigned char *data, size_t n, uint64_t *count)
{
    return dt_spill_walk(data, n, replay_record, t, count);
}

/* The chunks of the sessions built from a spill: the process's file memory (core/filemem.h,
 * an unnamed file in the spill's folder, mapped shared), so that the events are the page
 * cache's (which the kernel can write out and reclaim) and not the recorder's anonymous
 * memory, and its trimmer keeps them out of the recorder's resident set while the sessions
 * are built, finalised and written. The chunks stay until the process exits: the sessions
 * that use them are the last thing it closes. */
static void *chunk_from_file(void *user)
{
    (void)user;
    dt_filemem_check(); /* the chunks filled so far leave the resident set when they pass the bound */
    void *chunk = dt_filemem_alloc(DT_CHUNK_BYTES);
#ifdef MADV_POPULATE_WRITE
    if (chunk) /* its pages mapped for writing in one call, not one fault (and ext4's page_mkwrite) each */
        madvise(chunk, DT_CHUNK_BYTES, MADV_POPULATE_WRITE);
#endif
    return chunk;
}

int dt_tree_chunks_beside(dt_tree *t, const char *path)
{
    if (!dt_filemem_on()) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
        const char *resident = getenv("DEVTRACE_RECORD_RESIDENT_MB"); /* checked by dt_record_check_env */
        uint64_t mb = resident && *resident ? strtoull(resident, NULL, 10) : 0;
        if (dt_filemem_open(dir, mb << 20) != 0)
            return -1; /* a file system without unnamed files: the heap, as before */
        dt_filemem_trimmer_start();
    }
    t->chunks_in_file = 1;
    for (size_t i = 0; i < t->nsessions; i++)
        if (t->sessions[i])
            dt_store_set_chunk_source(&t->sessions[i]->store, chunk_from_file, NULL);
    return 0;
}

size_t dt_tree_replay_mapped(dt_tree *t, const unsigned char *map, size_t from, size_t to, uint64_t *count)
{
    const size_t window = 16u << 20, page = 4096;
    size_t done = from;
    uint64_t total = 0;
    while (done < to) {
        size_t left = to - done, span = left < window ? left : window;
        uint64_t k = 0;
        size_t used = dt_tree_replay(t, map + done, span, &k);
        if (!used && span < left) /* a record longer than the window */
            used = dt_tree_replay(t, map + done, left, &k);
        total += k;
        size_t dropped_to = done & ~(page - 1);
        done += used;
        /* What is read leaves this process's resident pages (the page cache keeps it). */
        if ((done & ~(page - 1)) > dropped_to)
            madvise((void *)(map + dropped_to), (done & ~(page - 1)) - dropped_to, MADV_DONTNEED);
        if (!used)
            break; /* an incomplete or corrupt record: nothing after it is read */
    }
    if (count)
        *count = total;
    return done - from;
}

/* The sessions from the spill, at the end of receiving: each connection's reader so far
 * (its identity, end and counts, and an incomplete last message) is set aside and a new
 * one replays the connection's messages into its session, as they arrived. */
static int build_from_spill(dt_tree *t, char *why, size_t whylen)
{
    dt_spill *sp = t->spill;
    dt_spill_flush(sp);
    dt_wire_reader *kept = calloc(t->nconns ? t->nconns : 1, sizeof *kept);
    if (!kept) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->nconns; i++) {
        dt_tree_conn *c = &t->conns[i];
        kept[i] = c->reader;
        dt_wire_reader_init(&c->reader);
        c->reader.device_base = kept[i].device_base;
        c->reader.correlation_base = kept[i].correlation_base;
    }
    int rc = 0;
    const char *in_memory = getenv("DEVTRACE_RECORD_CHUNKS");
    if (!(in_memory && !strcmp(in_memory, "heap")) && dt_tree_chunks_beside(t, sp->path) != 0)
        fprintf(stderr,
                "devtrace record: cannot make an unnamed file beside %s (%s): the trace is built in memory "
                "(about 300 bytes an event at the end of the run)\n",
                sp->path, strerror(errno));
    size_t head = sizeof(dt_spill_header), len = (size_t)sp->file_bytes;
    if (len > head) {
        /* Read through a descriptor of its own to the very file (opened for writing only). */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", sp->fd);
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        void *map = fd >= 0 ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (fd >= 0)
            close(fd);
        if (map == MAP_FAILED) {
            snprintf(why, whylen, "cannot read the spill file %s back: %s", sp->path, strerror(errno));
            rc = -1;
        } else {
            madvise(map, len, MADV_SEQUENTIAL);
            if (dt_tree_replay_mapped(t, map, head, len, NULL) != len - head) {
                snprintf(why, whylen, "the spill file %s was changed during the run (a record is cut short)", sp->path);
                rc = -1;
            }
            munmap(map, len);
        }
    }
    if (rc == 0 && sp->len && dt_tree_replay(t, sp->buf, sp->len, NULL) != sp->len) {
        snprintf(why, whylen, "the spill's records kept in memory are damaged");
        rc = -1;
    }
    for (size_t i = 0; i < t->nconns; i++) {
        dt_tree_conn *c = &t->conns[i];
        if (dt_wire_pending(&kept[i]) && c->session)
            dt_wire_feed(&c->reader, c->session, kept[i].buf, kept[i].len); /* stays pending: said as today */
        if (kept[i].handed_failed)
            dt_add_note(c->session, "the recorder ran out of memory spilling %llu messages from process %u: lost",
                        (unsigned long long)kept[i].handed_failed, kept[i].pid);
        dt_wire_reader_free(&kept[i]);
    }
    free(kept);
    return rc;
}

/* The process's entry in its session: the events it sent into it, how it ended (so far). */
static void update_process(dt_tree_conn *c)
{
    dt_session *s = c->session;
    const dt_wire_reader *r = &c->reader;
    for (size_t i = 0; i < s->nprocesses; i++)
        if (s->processes[i].pid == r->pid) {
            s->processes[i].events = r->events - c->events_before;
            s->processes[i].ended = r->ended;
            s->processes[i].running = c->fd >= 0 && !r->ended && !r->crashed;
            s->processes[i].crash_signal = r->crashed ? (int)r->crash.signal : 0;
            s->processes[i].rank = r->rank;
            s->processes[i].world_size = r->world_size;
            s->processes[i].window_start = r->window_start;
            s->processes[i].window_stop = r->window_stop;
        }
}

int dt_tree_window_open(dt_tree *t, uint64_t start_ns, uint64_t stop_ns)
{
    t->window_open = 1;
    t->window_start = start_ns;
    t->window_stop = stop_ns;
    if (!t->per_process && !new_session(t))
        return -1;
    if (!t->per_process) {
        t->sessions[0]->window_start = start_ns;
        t->sessions[0]->window_stop = stop_ns;
    }
    for (size_t i = 0; i < t->nconns; i++) {
        dt_tree_conn *c = &t->conns[i];
        if (c->fd < 0)
            continue; /* its process ended before the window */
        c->session = session_for_connection(t);
        if (!c->session)
            return -1;
        c->listed = 0;
        c->events_before = c->reader.events;
        dt_wire_reader_feed_into(&c->reader, c->session);
        for (int k = 0; k < DEVTRACE_KIND_COUNT; k++) {
            c->session->stats.out_of_window[k] += c->reader.discarded[k]; /* since the last window */
            c->reader.discarded[k] = 0;
        }
        list_process(c);
    }
    return 0;
}

size_t dt_tree_window_close(dt_tree *t, dt_session ***sessions, uint32_t **pids)
{
    size_t n = t->nsessions;
    *sessions = t->sessions;
    *pids = calloc(n ? n : 1, sizeof **pids);
    for (size_t i = 0; i < t->nconns; i++) {
        dt_tree_conn *c = &t->conns[i];
        for (size_t k = 0; *pids && t->per_process && k < n; k++)
            if (t->sessions[k] == c->session)
                (*pids)[k] = c->reader.pid;
        if (c->session)
            update_process(c);
        c->session = NULL;
    }
    t->sessions = NULL;
    t->nsessions = t->sessions_cap = 0;
    t->window_open = 0;
    return n;
}

static int traced_pid(const dt_tree *t, uint32_t pid)
{
    for (size_t i = 0; i < t->nconns; i++)
        if (t->conns[i].reader.hello && t->conns[i].reader.pid == pid)
            return 1;
    return 0;
}

const char *dt_record_signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
                 {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
                 {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "a signal";
}

/* What a process's end means for its session's trace. */
static void describe_process(dt_tree_conn *c)
{
    dt_session *s = c->session;
    const dt_wire_reader *r = &c->reader;
    if (!s)
        return; /* between capture windows */
    update_process(c);
    if (r->ended)
        return;
    if (r->crashed) {
        const char *sig = dt_record_signal_name((int)r->crash.signal);
        if (r->crash.pending_known) {
            s->stats.device_pending += r->crash.device_pending;
            dt_add_note(s,
                        "process %u got %s: what it had captured was shipped from the signal; %llu device "
                        "commands it had enqueued were not yet read back and are lost (lost.device_pending)",
                        r->pid, sig, (unsigned long long)r->crash.device_pending);
        } else {
            s->stats.events_missing = 1;
            dt_add_note(s,
                        "process %u got %s: what it had captured was shipped from the signal; device records "
                        "still in the vendor's buffers are missing (how many is not known)",
                        r->pid, sig);
        }
        return;
    }
    s->stats.events_missing = 1;
    dt_add_note(s,
                "process %u (%.100s) ended without its final flush (_exit, SIGKILL, or the recorder lost it): "
                "events of its last %d ms, and device work not yet read back, are missing",
                r->pid, r->command, DT_SHIP_AGE_MS);
}

/* A session's window: the union of its processes' windows (a process's own window: its
 * session's start and stop, or what --capture-op chose in it); in one trace of several
 * processes each one's events are kept in its own window (process_windows), so that
 * --capture-op chooses the same iterations of each as it would in a file of its own. */
static void set_windows(dt_tree *t)
{
    for (size_t k = 0; k < t->nsessions; k++) {
        dt_session *s = t->sessions[k];
        if (!s)
            continue;
        uint64_t start = 0, stop = 0;
        int open_ended = 0;
        for (size_t i = 0; i < t->nconns; i++) {
            const dt_wire_reader *r = &t->conns[i].reader;
            if (t->conns[i].session != s || !r->hello)
                continue;
            if (r->window_start && (!start || r->window_start < start))
                start = r->window_start;
            open_ended |= !r->window_stop;
            if (r->window_stop > stop)
                stop = r->window_stop;
        }
        dt_set_window(s, start, open_ended ? 0 : stop);
        s->process_windows = s->nprocesses > 1;
    }
}

/* A trace of processes of several ranks (one file for a whole job): each process's rank is
 * on its own lanes' labels and in its entry of the process list; distributedInfo is the
 * lowest rank's (not whichever process reported last), and a note says so. */
static void set_ranks(dt_tree *t)
{
    for (size_t k = 0; k < t->nsessions; k++) {
        dt_session *s = t->sessions[k];
        if (!s)
            continue;
        const dt_traced_process *lowest = s->nprocesses ? &s->processes[0] : NULL;
        s->ranks_differ = 0;
        for (size_t i = 1; i < s->nprocesses; i++) {
            const dt_traced_process *p = &s->processes[i];
            if (p->rank != lowest->rank || p->world_size != lowest->world_size)
                s->ranks_differ = 1;
            if (p->rank < lowest->rank)
                lowest = p;
        }
        if (!s->ranks_differ)
            continue;
        s->rank = lowest->rank;
        s->world_size = lowest->world_size;
        char ranks[200] = "";
        size_t used = 0;
        for (size_t i = 0; i < s->nprocesses && used < sizeof ranks - 40; i++)
            used += (size_t)snprintf(ranks + used, sizeof ranks - used, "%s%u: %d", i ? ", " : "", s->processes[i].pid,
                                     (int)s->processes[i].rank);
        dt_add_note(s,
                    "the processes of this trace have different ranks (pid: rank %s): each one's is in its lanes' "
                    "labels and in devtrace.processes; distributedInfo is the lowest rank's, process %u's",
                    ranks, lowest->pid);
    }
}

int dt_tree_describe(dt_tree *t)
{
    int any = 0;
    for (size_t i = 0; i < t->nconns; i++) {
        dt_tree_conn *c = &t->conns[i];
        if (c->reader.hello) {
            any = 1;
            describe_process(c);
        }
        if (!c->session)
            continue;
        if (dt_wire_pending(&c->reader))
            dt_add_note(c->session, "the last %zu bytes from process %u were an incomplete message and were dropped",
                        dt_wire_pending(&c->reader), c->reader.pid);
        if (c->reader.malformed)
            dt_add_note(c->session, "%llu malformed messages from process %u were skipped",
                        (unsigned long long)c->reader.malformed, c->reader.pid);
    }
    /* Forked children are counted in the trace of the process that forked them (combined:
     * the one trace). */
    for (size_t i = 0; i < t->nconns; i++) {
        const dt_wire_reader *r = &t->conns[i].reader;
        if (!r->forked_pid || traced_pid(t, r->forked_pid))
            continue;
        dt_session *parent = t->per_process || !t->nsessions ? NULL : t->sessions[0];
        for (size_t j = 0; !parent && j < t->nconns; j++)
            if (t->conns[j].reader.hello && t->conns[j].reader.pid == r->forked_ppid)
                parent = t->conns[j].session;
        if (parent)
            parent->stats.forked_untraced++;
    }
    if (!t->windowed)
        set_windows(t); /* a capture window's own bounds stay */
    set_ranks(t);
    return !any;
}

size_t dt_tree_outputs(const dt_tree *t)
{
    if (!t->per_process)
        return t->nsessions;
    size_t n = 0;
    for (size_t i = 0; i < t->nconns; i++)
        n += t->conns[i].reader.hello;
    return n;
}

dt_session *dt_tree_output(const dt_tree *t, size_t i, uint32_t *pid)
{
    if (!t->per_process) {
        *pid = 0;
        return i < t->nsessions ? t->sessions[i] : NULL;
    }
    for (size_t k = 0; k < t->nconns; k++)
        if (t->conns[k].reader.hello && i-- == 0) {
            *pid = t->conns[k].reader.pid;
            return t->conns[k].session;
        }
    return NULL;
}

void dt_tree_close(dt_tree *t)
{
    for (size_t i = 0; i < t->nconns; i++) {
        if (t->conns[i].fd >= 0)
            close(t->conns[i].fd);
        dt_wire_reader_free(&t->conns[i].reader);
    }
    free(t->conns);
    for (size_t i = 0; i < t->nsessions; i++)
        devtrace_close(t->sessions[i]);
    free(t->sessions);
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    if (t->socket_path[0])
        unlink(t->socket_path);
    if (t->dir[0])
        rmdir(t->dir);
    memset(t, 0, sizeof *t);
    t->listen_fd = -1;
}
