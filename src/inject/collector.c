/* collector.c: the collector (see collector.h). A full chunk is shipped by the shipper
 * thread, woken for it (the thread that filled it ships it itself only when the shipper
 * lags DT_STORE_PENDING_MAX chunks behind, or is not there); the shipper also ships what
 * every thread published since, every DT_SHIP_AGE_MS, and runs the final flush on
 * SIGINT/SIGTERM/SIGHUP and the crash flush on a fatal signal. Writes to the recorder are
 * serialised by one mutex. */
#include "collector.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/session.h"
#include "wire.h"

static struct {
    atomic_int claimed; /* autostart ran (successfully or not) in this process */
    int fd;             /* pipe to the recorder, -1 when none */
    pid_t pid;          /* the process that owns the session */
    dt_session *session;
    pthread_mutex_t ship_lock;
    uint32_t names_shipped; /* names [1, names_shipped) are on the wire */
    size_t samples_shipped;
    size_t tick_samples_shipped;
    atomic_int finished;
    atomic_int broken;       /* a write failed: the recorder is gone */
    int wake[2], done[2];    /* signal handler -> shipper thread -> handler */
    atomic_int shipper;      /* the shipper thread runs */
    atomic_long shipper_tid; /* its kernel thread id */
    atomic_int chunks_wake;  /* a DT_WAKE_CHUNKS is on its way to the shipper */
    struct sockaddr_un addr; /* the recorder's socket ($DEVTRACE_COLLECT_SOCKET) */
    socklen_t addr_len;      /* 0: connected through an inherited descriptor instead */
} col = {.fd = -1, .ship_lock = PTHREAD_MUTEX_INITIALIZER, .wake = {-1, -1}, .done = {-1, -1}};

/* How long after a SIGINT/SIGTERM/SIGHUP another one is still taken as a copy of it (the
 * final flush is under way) rather than a request to end now (the flush itself waits at
 * most $DEVTRACE_FLUSH_TIMEOUT_MS for the vendor). */
#define DT_SIGNAL_FINISH_WAIT_MS 15000
/* How long a fatal signal's handler waits while the shipper ships what was captured (no
 * vendor call, no stop: the program is broken) before the signal's default action. */
#define DT_CRASH_SHIP_WAIT_MS 2000

/* What the shipper thread is woken for (one byte through col.wake). */
#define DT_WAKE_STOP 'S'   /* SIGINT/SIGTERM/SIGHUP: the final flush */
#define DT_WAKE_CRASH 'C'  /* a fatal signal: ship what was captured, then die */
#define DT_WAKE_CHUNKS 'F' /* full chunks wait to be shipped (dt_store_set_deferred) */

static void keep_handlers(void);
static void signal_after_flush(int sig);

static void ship(uint32_t type, const void *p, size_t n)
{
    if (col.fd < 0 || atomic_load(&col.broken))
        return;
    if (dt_wire_send(col.fd, type, p, n) != 0)
        atomic_store(&col.broken, 1);
}

/* New names since the last call, as one NAMES message (ship_lock held). */
static void ship_new_names(dt_session *s)
{
    uint32_t count = dt_intern_count(&s->names);
    if (count <= col.names_shipped)
        return;
    size_t bytes = 0;
    for (uint32_t id = col.names_shipped; id < count; id++)
        bytes += 8 + strlen(dt_intern_get(&s->names, id));
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return;
    size_t off = 0;
    for (uint32_t id = col.names_shipped; id < count; id++) {
        const char *name = dt_intern_get(&s->names, id);
        uint32_t len = (uint32_t)strlen(name);
        memcpy(buf + off, &id, 4);
        memcpy(buf + off + 4, &len, 4);
        memcpy(buf + off + 8, name, len);
        off += 8 + len;
    }
    ship(DT_WIRE_NAMES, buf, off);
    free(buf);
    col.names_shipped = count;
}

static void ship_new_samples(dt_session *s)
{
    pthread_mutex_lock(&s->lock);
    for (; col.samples_shipped < s->nsamples; col.samples_shipped++) {
        uint64_t pair[2] = {s->samples[col.samples_shipped].vendor_ns, s->samples[col.samples_shipped].host_ns};
        ship(DT_WIRE_CLOCK, pair, sizeof pair);
    }
    for (; col.tick_samples_shipped < s->ntick_samples; col.tick_samples_shipped++) {
        const dt_clock_sample *t = &s->tick_samples[col.tick_samples_shipped];
        uint64_t pair[2] = {t->vendor_ns, t->host_ns};
        ship(DT_WIRE_TICKS, pair, sizeof pair);
    }
    uint64_t window[2] = {s->window_start, s->window_stop};
    pthread_mutex_unlock(&s->lock);
    ship(DT_WIRE_WINDOW, window, sizeof window);
}

static void on_chunk_full(void *user, const devtrace_event *events, size_t n)
{
    dt_session *s = user;
    if (getpid() != col.pid)
        return;         /* a forked child: its parent ships */
    dt_ticks_sample(s); /* the recorder converts this chunk's ticks between samples it already has */
    pthread_mutex_lock(&col.ship_lock);
    ship_new_names(s);
    ship_new_samples(s);
    ship(DT_WIRE_EVENTS, events, n * sizeof *events);
    pthread_mutex_unlock(&col.ship_lock);
}

static void ship_final(dt_session *s)
{
    dt_store_file_all(&s->store); /* ships every thread's partial chunk */
    pthread_mutex_lock(&col.ship_lock);
    ship_new_names(s);
    ship_new_samples(s);
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->ndevices; i++)
        ship(DT_WIRE_DEVICE, &s->devices[i], sizeof s->devices[i]);
    for (int i = 0; i < s->nnotes; i++)
        ship(DT_WIRE_NOTE, s->notes[i], strlen(s->notes[i]));
    pthread_mutex_unlock(&s->lock);
    devtrace_stats st = s->stats;
    st.dropped_store_full += dt_store_dropped(&s->store);
    unsigned char wire_stats[DT_WIRE_STATS_BYTES];
    ship(DT_WIRE_STATS, wire_stats, dt_wire_stats_encode(&st, wire_stats));
    ship(DT_WIRE_END, NULL, 0);
    pthread_mutex_unlock(&col.ship_lock);
}

/* Held while the final flush runs: a second caller (the program exiting while the shipper
 * flushes after a SIGINT) waits until the first has shipped, so that the process does not
 * end mid-flush. */
static pthread_mutex_t finish_lock = PTHREAD_MUTEX_INITIALIZER;

void dt_collector_finish(void)
{
    if (!col.session || getpid() != col.pid)
        return;
    pthread_mutex_lock(&finish_lock);
    if (!atomic_exchange(&col.finished, 1)) {
        if (col.session->state == DT_RUNNING)
            devtrace_stop(col.session);
        ship_final(col.session);
        pthread_mutex_lock(&col.ship_lock);
        close(col.fd);
        col.fd = -1;
        pthread_mutex_unlock(&col.ship_lock);
    }
    pthread_mutex_unlock(&finish_lock);
}

/* On a fatal signal: what every thread published, the names and samples it needs, the loss
 * counters, and what is known lost (device work the backend had not read back yet), then
 * a CRASH mark. No vendor call: the program is broken, the vendor's state unknown. */
static void ship_at_crash(dt_session *s, int sig)
{
    dt_store_hand_partial(&s->store);
    pthread_mutex_lock(&col.ship_lock);
    ship_new_names(s);
    ship_new_samples(s);
    devtrace_stats st = s->stats;
    st.dropped_store_full += dt_store_dropped(&s->store);
    if (s->backend && s->backend->unfolded_counts)
        s->backend->unfolded_counts(s->bstate, &st);
    unsigned char wire_stats[DT_WIRE_STATS_BYTES];
    ship(DT_WIRE_STATS, wire_stats, dt_wire_stats_encode(&st, wire_stats));
    dt_wire_crash crash = {0, (uint32_t)sig, 0};
    if (s->backend && s->backend->pending_events) {
        crash.device_pending = s->backend->pending_events(s->bstate);
        crash.pending_known = 1;
    }
    ship(DT_WIRE_CRASH, &crash, sizeof crash);
    pthread_mutex_unlock(&col.ship_lock);
}

/* In a forked child (async-signal-safe calls only, as after any fork of a threaded
 * process): tells the recorder that this pid was forked from a traced process, on a
 * connection of its own. It is traced only if it execs a program that starts a collector. */
static void report_fork(void)
{
    if (!col.addr_len || getppid() != col.pid)
        return; /* a fork of an untraced fork is not counted again */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (connect(fd, (const struct sockaddr *)&col.addr, col.addr_len) == 0) {
        uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)col.pid};
        dt_wire_send(fd, DT_WIRE_FORKED, ids, sizeof ids);
    }
    close(fd);
}

static void at_fork_child(void)
{
    /* The child is not traced twice: it neither records nor ships (nor has the shipper). */
    dt_set_default_session(NULL);
    if (col.fd >= 0)
        close(col.fd);
    col.fd = -1;
    report_fork();
    atomic_store(&col.shipper, 0);
    for (int i = 0; i < 2; i++) {
        if (col.wake[i] >= 0)
            close(col.wake[i]);
        if (col.done[i] >= 0)
            close(col.done[i]);
        col.wake[i] = col.done[i] = -1;
    }
}

/* The shipper: every DT_SHIP_AGE_MS, what the threads published since it was last shipped;
 * on a wake from a signal handler, the final flush (SIGINT/SIGTERM/SIGHUP) or the crash flush
 * (a fatal signal). A handler may only make async-signal-safe calls, and both flushes lock
 * and allocate, so they run here. */
static void *shipper_main(void *arg)
{
    (void)arg;
    atomic_store(&col.shipper_tid, (long)syscall(SYS_gettid));
    while (!atomic_load(&col.finished) && !atomic_load(&col.broken)) {
        struct pollfd p = {col.wake[0], POLLIN, 0};
        int rc = poll(&p, 1, DT_SHIP_AGE_MS);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0) {
            if (col.session && !atomic_load(&col.finished))
                dt_store_hand_partial(&col.session->store);
            keep_handlers();
            continue;
        }
        unsigned char why[2]; /* what for, and the signal: written at once, so read at once */
        if (read(col.wake[0], why, sizeof why) != (ssize_t)sizeof why)
            continue;
        if (why[0] == DT_WAKE_CHUNKS) {
            atomic_store(&col.chunks_wake, 0); /* before the chunks are taken: a later one wakes again */
            if (col.session && !atomic_load(&col.finished))
                dt_store_hand_deferred(&col.session->store);
            continue;
        }
        if (why[0] != DT_WAKE_CRASH) {
            dt_collector_finish();
            signal_after_flush((int)why[1]);
            break;
        }
        ship_at_crash(col.session, (int)why[1]);
        char done = 1;
        ssize_t ignored = write(col.done[1], &done, 1);
        (void)ignored;
    }
    return NULL;
}

static void start_shipper(void)
{
    if (pipe2(col.wake, O_CLOEXEC) != 0)
        return;
    if (pipe2(col.done, O_CLOEXEC) != 0) {
        close(col.wake[0]), close(col.wake[1]);
        col.wake[0] = col.wake[1] = -1;
        return;
    }
    sigset_t block, old;
    sigfillset(&block); /* inherited: every signal goes to the program's threads */
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, shipper_main, NULL) == 0)
        atomic_store(&col.shipper, 1);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Async-signal-safe: wakes the shipper for why. 0 when it was woken. */
static int wake_shipper(char why, int sig)
{
    if (!atomic_load(&col.shipper) || getpid() != col.pid || syscall(SYS_gettid) == atomic_load(&col.shipper_tid))
        return -1;
    char msg[2] = {why, (char)sig};
    return write(col.wake[1], msg, 2) == 2 ? 0 : -1;
}

/* The store's deferred handing (dt_store_set_deferred): a thread filled a chunk. One wake
 * at a time is on its way; 0 when the shipper will ship the chunk. */
static int wake_for_chunks(void *user)
{
    (void)user;
    if (atomic_load(&col.finished) || atomic_load(&col.broken))
        return -1;
    if (atomic_exchange(&col.chunks_wake, 1))
        return 0;
    if (wake_shipper(DT_WAKE_CHUNKS, 0) == 0)
        return 0;
    atomic_store(&col.chunks_wake, 0);
    return -1;
}

/* Async-signal-safe: wakes the shipper for why, and waits for it at most wait_ms. */
static void wake_shipper_and_wait(char why, int sig, int wait_ms)
{
    if (wake_shipper(why, sig) == 0) {
        struct pollfd p = {col.done[0], POLLIN, 0};
        poll(&p, 1, wait_ms);
    }
}

/* The first of SIGINT/SIGTERM/SIGHUP taken (0: none yet): the one the program dies of, and
 * when (CLOCK_MONOTONIC ms); stop_flushed once its final flush has run. */
static atomic_int stop_signal;
static _Atomic int64_t stop_signal_ms;
static atomic_int stop_flushed;

static int64_t monotonic_ms_signal_safe(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe (POSIX) */
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
    /* Wake the shipper and return at once: it runs the final flush, then hands the signal on
     * (signal_after_flush). The handler does not wait, because the flush may need the thread
     * it interrupted (a PoCL worker thread that runs the device work the flush reads back, or
     * a thread holding the runtime's lock): a handler that waited there held the flush up until
     * its bound ran out, and the program died without its final flush. A second signal (the
     * recorder's forwarded copy of a Ctrl-C that also reached the whole process group, a second
     * Ctrl-C, SIGTERM after SIGINT) while the flush runs returns at once; one after the flush,
     * or more than DT_SIGNAL_FINISH_WAIT_MS after the first, ends the program now. Without a
     * shipper, the default action. */
    int saved = errno;
    int first = 0;
    if (!atomic_compare_exchange_strong(&stop_signal, &first, sig)) {
        int64_t first_ms = atomic_load(&stop_signal_ms); /* 0: the first is just being taken */
        if (atomic_load(&stop_flushed) ||
            (first_ms && monotonic_ms_signal_safe() - first_ms > DT_SIGNAL_FINISH_WAIT_MS)) {
            signal(sig, SIG_DFL);
            raise(sig); /* blocked while this handler runs: the default action when it returns */
        }
        errno = saved;
        return;
    }
    atomic_store(&stop_signal_ms, monotonic_ms_signal_safe());
    if (wake_shipper(DT_WAKE_STOP, sig) != 0) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    errno = saved;
}

/* The signals devtrace handles and, for each, the handler a library installed over devtrace's
 * after it started (LLVM, which PoCL loads, installs its own for all of these on the first
 * kernel build): devtrace's goes back on top, and that one runs after it. LLVM's handlers
 * are one-shot (SA_RESETHAND): left on top, a Ctrl-C that reached the process twice (the
 * group's and the recorder's copy) found the default action between LLVM's handler starting
 * and its putting devtrace's back, and the program died without its final flush. */
static void on_fatal_signal(int sig);
static const struct {
    int sig;
    void (*handler)(int);
} kept_signals[] = {{SIGINT, on_signal},        {SIGTERM, on_signal},      {SIGHUP, on_signal},
                    {SIGSEGV, on_fatal_signal}, {SIGBUS, on_fatal_signal}, {SIGFPE, on_fatal_signal},
                    {SIGILL, on_fatal_signal},  {SIGABRT, on_fatal_signal}};
#define DT_NKEPT (sizeof kept_signals / sizeof kept_signals[0])
static struct {
    int installed;            /* devtrace's handler was installed (the program's was SIG_DFL) */
    struct sigaction chained; /* the handler found over devtrace's, run after it */
    volatile sig_atomic_t has_chained;
} kept[DT_NKEPT];
static volatile sig_atomic_t crash_flushed;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t kept_index(int sig)
{
    size_t i = 0;
    while (i < DT_NKEPT && kept_signals[i].sig != sig)
        i++;
    return i;
}

/* After the final flush a SIGINT/SIGTERM/SIGHUP started: the handler devtrace's displaced
 * gets the signal (LLVM's removes its files and ends the program), else the default action
 * ends the program as it would have ended without devtrace. From the shipper, which blocks
 * every signal: one of the program's threads takes it. */
static void signal_after_flush(int sig)
{
    size_t i = kept_index(sig);
    pthread_mutex_lock(&kept_lock);
    if (i < DT_NKEPT && kept[i].has_chained)
        sigaction(sig, &kept[i].chained, NULL);
    else
        signal(sig, SIG_DFL);
    atomic_store(&stop_flushed, 1);
    pthread_mutex_unlock(&kept_lock);
    kill(getpid(), sig);
}

static void on_fatal_signal(int sig)
{
    /* The crash flush (once), then what would have happened without devtrace: the handler
     * devtrace's displaced, or the default action. Raised here, the signal stays blocked until
     * this handler returns, then goes to that handler or kills the process (with a core dump
     * where enabled). A fault that repeats after the chained handler returns finds the
     * default action. */
    int saved = errno;
    int first = !crash_flushed;
    crash_flushed = 1;
    size_t i = kept_index(sig);
    if (first) {
        wake_shipper_and_wait(DT_WAKE_CRASH, sig, DT_CRASH_SHIP_WAIT_MS);
    }
    if (first && i < DT_NKEPT && kept[i].has_chained)
        sigaction(sig, &kept[i].chained, NULL);
    else
        signal(sig, SIG_DFL);
    errno = saved;
    raise(sig);
}

/* From the shipper, every tick, and from the calls after which a library may have installed
 * its own (dt_collector_keep_handlers): devtrace's handlers back on top of any installed
 * over them since (the displaced one chained); no longer once their signal was taken. */
static void keep_handlers(void)
{
    pthread_mutex_lock(&kept_lock);
    for (size_t i = 0; i < DT_NKEPT; i++) {
        void (*mine)(int) = kept_signals[i].handler;
        int taken = mine == on_signal ? atomic_load(&stop_signal) != 0 : crash_flushed;
        struct sigaction now;
        if (!kept[i].installed || taken || sigaction(kept_signals[i].sig, NULL, &now) != 0)
            continue;
        if ((now.sa_flags & SA_SIGINFO) ? (void *)now.sa_sigaction == (void *)mine : now.sa_handler == mine)
            continue;
        if (!(now.sa_flags & SA_SIGINFO) && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN)) {
            kept[i].installed = 0; /* the program chose: leave it */
            continue;
        }
        kept[i].has_chained = 0;
        kept[i].chained = now;
        kept[i].has_chained = 1;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = mine;
        sigemptyset(&sa.sa_mask);
        sigaction(kept_signals[i].sig, &sa, NULL);
    }
    pthread_mutex_unlock(&kept_lock);
}

void dt_collector_keep_handlers(void)
{
    if (atomic_load(&col.shipper) && getpid() == col.pid)
        keep_handlers();
}

/* Only where the program left the signal at its default: its own handlers are kept. */
static void install_signal_handlers(void)
{
    for (size_t i = 0; i < DT_NKEPT; i++) {
        struct sigaction old;
        int sig = kept_signals[i].sig;
        if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = kept_signals[i].handler;
        sigemptyset(&sa.sa_mask);
        kept[i].installed = sigaction(sig, &sa, NULL) == 0;
    }
}

static int recorder_fd(void)
{
    const char *fdtext = getenv("DEVTRACE_COLLECT_FD");
    uint64_t fd;
    if (!fdtext || dt_parse_u64(fdtext, &fd) != 0 || fd > 1u << 20)
        return -1;
    if (fcntl((int)fd, F_GETFD) < 0)
        return -1;
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
}

/* The recorder's socket, $DEVTRACE_COLLECT_SOCKET (every process of the traced tree
 * connects; with $DEVTRACE_COLLECT_PID set, only that process: --no-children), else a
 * descriptor inherited from it, $DEVTRACE_COLLECT_FD (the process $DEVTRACE_COLLECT_PID
 * only). -1 when this process is not to be traced. */
static int connect_recorder(void)
{
    const char *path = getenv("DEVTRACE_COLLECT_SOCKET");
    const char *pidtext = getenv("DEVTRACE_COLLECT_PID");
    uint64_t pid;
    if (pidtext && *pidtext && (dt_parse_u64(pidtext, &pid) != 0 || pid != (uint64_t)getpid()))
        return -1; /* the recorder's direct child only */
    if (!path || !*path)
        return !pidtext || !*pidtext ? -1 : recorder_fd();
    if (strlen(path) >= sizeof col.addr.sun_path)
        return -1;
    memset(&col.addr, 0, sizeof col.addr);
    col.addr.sun_family = AF_UNIX;
    memcpy(col.addr.sun_path, path, strlen(path));
    col.addr_len = (socklen_t)sizeof col.addr;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&col.addr, col.addr_len) != 0) {
        close(fd);
        col.addr_len = 0;
        return -1; /* the recorder is gone (a process left running after it ended) */
    }
    return fd;
}

static int backend_wanted(const char *backend_name)
{
    const char *wanted = getenv("DEVTRACE_BACKEND");
    if (!backend_name || !wanted || !*wanted || strcmp(wanted, "auto") == 0)
        return 1;
    return strcmp(wanted, backend_name) == 0;
}

/* The program's command line (/proc/self/cmdline, arguments joined by spaces, cut at cap). */
static void read_command_line(char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return;
    while (n > 0 && out[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    out[n] = '\0';
}

static void ship_hello(dt_session *s)
{
    char buf[12800], command[DT_WIRE_COMMAND_MAX];
    uint32_t head[3] = {DT_WIRE_VERSION, (uint32_t)getpid(), (uint32_t)getppid()};
    size_t off = 0;
    memcpy(buf, head, sizeof head);
    off += sizeof head;
    read_command_line(command, sizeof command);
    const char *fields[] = {s->backend_name, s->validation, s->runtime_category, s->unavailable_reason, command};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        size_t n = strnlen(fields[i], 8191);
        if (off + n + 1 > sizeof buf)
            break;
        memcpy(buf + off, fields[i], n);
        buf[off + n] = '\0';
        off += n + 1;
    }
    ship(DT_WIRE_HELLO, buf, off);
    int32_t rank[2] = {s->rank, s->world_size};
    ship(DT_WIRE_RANK, rank, sizeof rank);
}

/* devtrace record --capture-op NAME --skip K --count C: the window chosen by NAME's ranges
 * in this process ($DEVTRACE_CAPTURE_OP, _SKIP, _COUNT; the recorder checked them). */
static void arm_capture_op(dt_session *s)
{
    const char *name = getenv("DEVTRACE_CAPTURE_OP");
    const char *skip_text = getenv("DEVTRACE_CAPTURE_SKIP"), *count_text = getenv("DEVTRACE_CAPTURE_COUNT");
    uint64_t skip = 0, count = 1;
    if (!name || !*name)
        return;
    if ((skip_text && dt_parse_u64(skip_text, &skip) != 0) || (count_text && dt_parse_u64(count_text, &count) != 0))
        dt_add_note(s, "$DEVTRACE_CAPTURE_SKIP or _COUNT is not a number: --skip 0 --count 1 used");
    if (dt_op_window_arm(s, name, skip, count) != 0)
        dt_add_note(s, "out of memory: the capture window of '%.200s' is the whole session", name);
}

void dt_collector_autostart(const char *backend_name)
{
    if (!backend_wanted(backend_name))
        return;
    if (atomic_exchange(&col.claimed, 1))
        return;
    int fd = connect_recorder();
    if (fd < 0)
        return;
    col.fd = fd;
    col.pid = getpid();
    devtrace_config cfg;
    devtrace_config_init(&cfg);
    cfg.backend = backend_name; /* NULL: $DEVTRACE_BACKEND */
    devtrace_error err;
    dt_session *s = devtrace_open(&cfg, &err);
    if (!s) {
        /* The recorder validated the name; this is a configuration error in the environment. */
        fprintf(stderr, "devtrace: %s\n", err.message);
        char note[1100];
        snprintf(note, sizeof note, "collector could not open a session: %s", err.message);
        ship(DT_WIRE_NOTE, note, strlen(note));
        close(fd);
        col.fd = -1;
        return;
    }
    s->store.on_full = on_chunk_full;
    s->store.recycle = 1; /* what was shipped is the recorder's: chunks are reused */
    s->store.on_full_user = s;
    dt_store_set_deferred(&s->store, wake_for_chunks, NULL); /* off the program's threads */
    s->owner_collector = 1;
    arm_capture_op(s);
    col.session = s;
    ship_hello(s);
    devtrace_start(s);
    pthread_mutex_lock(&col.ship_lock);
    ship_new_samples(s);
    pthread_mutex_unlock(&col.ship_lock);
    dt_set_default_session(s);
    pthread_atfork(NULL, NULL, at_fork_child);
    install_signal_handlers(); /* before the shipper, which keeps them on top */
    start_shipper();
    atexit(dt_collector_finish);
    dt_exit_hook_install(); /* _exit and _Exit too: a multiprocessing worker ends with os._exit */
}

/* The program used the annotation API, or the PyTorch bridge asked for the default
 * session, before its first call through the traced runtime: the session starts now (with
 * the backend the recorder named), so that the ops before that call are in the trace. */
/* Whether this library is the file the recorder injected ($DEVTRACE_COLLECT_LIBRARY): a
 * copy the program linked or opened from elsewhere is not the collector (it would start a
 * second session beside the one the injected library starts at the backend's hook). */
static int is_injected_library(void)
{
    const char *injected = getenv("DEVTRACE_COLLECT_LIBRARY");
    Dl_info self;
    struct stat a, b;
    return injected && dladdr((void *)&col, &self) && self.dli_fname && stat(injected, &a) == 0 &&
           stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void dt_collector_start_early(void)
{
    if (atomic_load(&col.claimed) || !is_injected_library())
        return;
    const char *mode = getenv("DEVTRACE_COLLECT_MODE");
    dt_collector_autostart(mode && strcmp(mode, "preload") == 0 ? getenv("DEVTRACE_COLLECT_PRELOAD") : NULL);
}

static const dt_core_hooks collector_hooks = {.start_early = dt_collector_start_early,
                                              .autostart = dt_collector_autostart,
                                              .keep_handlers = dt_collector_keep_handlers};

/* The hooks the core calls (dt_core_set_hooks); vendors without an injection hook: started
 * when the library is preloaded. */
__attribute__((constructor)) static void collector_preload(void)
{
    dt_core_set_hooks(&collector_hooks);
    const char *mode = getenv("DEVTRACE_COLLECT_MODE");
    if (mode && strcmp(mode, "preload") == 0)
        dt_collector_autostart(getenv("DEVTRACE_COLLECT_PRELOAD")); /* NULL: $DEVTRACE_BACKEND */
}
