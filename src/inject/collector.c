/* collector.c: the collector (see collector.h). Shipping happens on the thread that
 * filled a chunk, under one mutex held only while writing to the pipe. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "core/session.h"
#include "wire.h"

static struct {
    atomic_int claimed;       /* autostart ran (successfully or not) in this process */
    int fd;                   /* pipe to the recorder, -1 when none */
    pid_t pid;                /* the process that owns the session */
    dt_session *session;
    pthread_mutex_t ship_lock;
    uint32_t names_shipped;   /* names [1, names_shipped) are on the wire */
    size_t samples_shipped;
    size_t tick_samples_shipped;
    atomic_int finished;
    atomic_int broken;        /* a write failed: the recorder is gone */
    int wake[2], done[2];     /* signal handler -> finisher thread -> handler */
    atomic_int finisher;      /* the finisher thread runs */
} col = {.fd = -1, .ship_lock = PTHREAD_MUTEX_INITIALIZER, .wake = {-1, -1}, .done = {-1, -1}};

/* How long a signal handler waits for the final flush before the program dies of the signal
 * anyway (the flush itself waits at most $DEVTRACE_FLUSH_TIMEOUT_MS for the vendor). */
#define DT_SIGNAL_FINISH_WAIT_MS 15000

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
        return; /* a forked child: its parent ships */
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
    ship(DT_WIRE_STATS, &st, sizeof st);
    ship(DT_WIRE_END, NULL, 0);
    pthread_mutex_unlock(&col.ship_lock);
}

void dt_collector_finish(void)
{
    if (!col.session || getpid() != col.pid || atomic_exchange(&col.finished, 1))
        return;
    if (col.session->state == DT_RUNNING)
        devtrace_stop(col.session);
    ship_final(col.session);
    close(col.fd);
    col.fd = -1;
}

static void at_fork_child(void)
{
    /* The child is not traced twice: it neither records nor ships (nor has the finisher). */
    dt_set_default_session(NULL);
    if (col.fd >= 0)
        close(col.fd);
    col.fd = -1;
    atomic_store(&col.finisher, 0);
    for (int i = 0; i < 2; i++) {
        if (col.wake[i] >= 0)
            close(col.wake[i]);
        if (col.done[i] >= 0)
            close(col.done[i]);
        col.wake[i] = col.done[i] = -1;
    }
}

/* The final flush on SIGINT/SIGTERM/SIGHUP runs on this thread, not in the handler: a handler
 * may only make async-signal-safe calls, and the flush allocates, locks and calls the vendor. */
static void *finisher_main(void *arg)
{
    (void)arg;
    char sig;
    ssize_t n;
    while ((n = read(col.wake[0], &sig, 1)) < 0 && errno == EINTR)
        ;
    if (n == 1) {
        dt_collector_finish();
        char done = 1;
        ssize_t ignored = write(col.done[1], &done, 1);
        (void)ignored;
    }
    return NULL;
}

static void start_finisher(void)
{
    if (pipe2(col.wake, O_CLOEXEC) != 0)
        return;
    if (pipe2(col.done, O_CLOEXEC) != 0) {
        close(col.wake[0]), close(col.wake[1]);
        col.wake[0] = col.wake[1] = -1;
        return;
    }
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT), sigaddset(&block, SIGTERM), sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old); /* inherited: the signals go to the program's threads */
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, finisher_main, NULL) == 0)
        atomic_store(&col.finisher, 1);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_signal(int sig)
{
    /* Async-signal-safe: wake the finisher, wait (bounded) while it ships what was captured,
     * then die of the signal as the program would have. */
    int saved = errno;
    signal(sig, SIG_DFL);
    if (atomic_load(&col.finisher) && getpid() == col.pid) {
        char c = (char)sig;
        if (write(col.wake[1], &c, 1) == 1) {
            struct pollfd p = {col.done[0], POLLIN, 0};
            poll(&p, 1, DT_SIGNAL_FINISH_WAIT_MS);
        }
    }
    errno = saved;
    raise(sig);
}

static void install_signal_handlers(void)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

static int recorder_fd(void)
{
    const char *fdtext = getenv("DEVTRACE_COLLECT_FD");
    const char *pidtext = getenv("DEVTRACE_COLLECT_PID");
    uint64_t fd, pid;
    if (!fdtext || dt_parse_u64(fdtext, &fd) != 0 || fd > 1u << 20)
        return -1;
    if (!pidtext || dt_parse_u64(pidtext, &pid) != 0 || pid != (uint64_t)getpid())
        return -1; /* the recorder's direct child only: not a process it started */
    if (fcntl((int)fd, F_GETFD) < 0)
        return -1;
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
}

static int backend_wanted(const char *backend_name)
{
    const char *wanted = getenv("DEVTRACE_BACKEND");
    if (!backend_name || !wanted || !*wanted || strcmp(wanted, "auto") == 0)
        return 1;
    return strcmp(wanted, backend_name) == 0;
}

static void ship_hello(dt_session *s)
{
    char buf[12288];
    uint32_t head[2] = {DT_WIRE_VERSION, (uint32_t)getpid()};
    size_t off = 0;
    memcpy(buf, head, sizeof head);
    off += sizeof head;
    const char *fields[] = {s->backend_name, s->validation, s->runtime_category, s->unavailable_reason};
    for (size_t i = 0; i < 4; i++) {
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

void dt_collector_autostart(const char *backend_name)
{
    if (!backend_wanted(backend_name))
        return;
    if (atomic_exchange(&col.claimed, 1))
        return;
    int fd = recorder_fd();
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
    s->store.on_full_user = s;
    s->owner_collector = 1;
    col.session = s;
    ship_hello(s);
    devtrace_start(s);
    pthread_mutex_lock(&col.ship_lock);
    ship_new_samples(s);
    pthread_mutex_unlock(&col.ship_lock);
    dt_set_default_session(s);
    pthread_atfork(NULL, NULL, at_fork_child);
    start_finisher();
    install_signal_handlers();
    atexit(dt_collector_finish);
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

/* Vendors without an injection hook: started when the library is preloaded. */
__attribute__((constructor)) static void collector_preload(void)
{
    const char *mode = getenv("DEVTRACE_COLLECT_MODE");
    if (mode && strcmp(mode, "preload") == 0)
        dt_collector_autostart(getenv("DEVTRACE_COLLECT_PRELOAD")); /* NULL: $DEVTRACE_BACKEND */
}
