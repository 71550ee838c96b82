/* session.c: session lifecycle (open, start, stop, close), external correlation and
 * annotation ranges, and the process's default session. */
#include "session.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "grow.h"

static atomic_uint_fast64_t session_generations = 1;
static dt_session *_Atomic default_session;

void devtrace_config_init(devtrace_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->rank = -1;
    cfg->world_size = -1;
}

int dt_online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int dt_parse_u64(const char *text, uint64_t *out)
{
    /* A digit first: strtoull would also take leading blanks and a sign (" -1" is UINT64_MAX). */
    if (!text || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* getpid() is a system call (glibc caches nothing since 2.25): the pid is kept, and
 * forgotten in a forked child. */
static _Atomic uint32_t cached_pid;
static _Atomic uint32_t fork_generation; /* thread ids cached before a fork are stale after it */

static void forget_pid(void)
{
    atomic_store_explicit(&cached_pid, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
}

static void register_pid_reset(void)
{
    pthread_atfork(NULL, NULL, forget_pid);
}

uint32_t dt_process_id(void)
{
    uint32_t pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);
    if (pid)
        return pid;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_pid_reset);
    pid = (uint32_t)getpid();
    atomic_store_explicit(&cached_pid, pid, memory_order_relaxed);
    return pid;
}

uint32_t dt_thread_id(void)
{
    static _Thread_local uint32_t tid, tid_generation;
    uint32_t gen = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    if (!tid || tid_generation != gen) {
        dt_process_id(); /* registers the fork handler */
        tid = (uint32_t)syscall(SYS_gettid);
        tid_generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    }
    return tid;
}

static int env_int(const char *name, int fallback, devtrace_error *err)
{
    const char *v = getenv(name);
    uint64_t n;
    if (!v || !*v)
        return fallback;
    if (dt_parse_u64(v, &n) != 0 || n > 1u << 30) {
        dt_error_set(err, DEVTRACE_EINVAL, "$%s=\"%s\" is not a non-negative integer; unset it or fix it", name, v);
        return -2;
    }
    return (int)n;
}

static int session_init_common(dt_session *s, uint64_t max_events)
{
    s->generation = atomic_fetch_add(&session_generations, 1);
    s->stats.size = sizeof s->stats;
    s->kinds = UINT32_MAX;
    pthread_mutex_init(&s->lock, NULL);
    if (dt_intern_init(&s->names) != 0)
        return -1;
    if (dt_store_init(&s->store, max_events) != 0)
        return -1;
    return 0;
}

dt_session *dt_session_new_offline(const char *backend_name, const char *validation, const char *runtime_category,
                                   devtrace_error *err)
{
    dt_session *s = calloc(1, sizeof *s);
    if (!s || session_init_common(s, UINT64_MAX) != 0) {
        devtrace_close(s);
        dt_error_set(err, DEVTRACE_ENOMEM, "out of memory creating a session");
        return NULL;
    }
    snprintf(s->backend_name, sizeof s->backend_name, "%s", backend_name ? backend_name : "none");
    snprintf(s->validation, sizeof s->validation, "%s", validation ? validation : "");
    snprintf(s->runtime_category, sizeof s->runtime_category, "%s",
             runtime_category ? runtime_category : "privateuse1_runtime");
    s->rank = 0;
    s->world_size = 1;
    s->state = DT_STOPPED;
    return s;
}

static const dt_backend *select_backend(const dt_backend_table *t, const char *name, char *reasons, size_t rlen,
                                        devtrace_error *err)
{
    if (strcmp(name, "auto") != 0) {
        const dt_backend *b = dt_backend_table_find(t, name);
        if (!b) {
            char names[256];
            dt_backend_table_names(t, 0, t->unavailable->name, names, sizeof names);
            dt_error_set(err, DEVTRACE_EUNKNOWN_BACKEND,
                         "unknown backend \"%s\"; choose one of: auto, %s (see 'devtrace list')", name, names);
            return NULL;
        }
        return b;
    }
    /* auto: the first compiled-in backend whose probe says yes. */
    size_t used = 0;
    reasons[0] = '\0';
    for (const dt_backend *const *b = t->list; *b; b++) {
        char why[2048] = "";
        if ((*b)->probe && (*b)->probe(why, sizeof why))
            return *b;
        int n = snprintf(reasons + used, rlen - used, "%s%s: %s", used ? "; " : "", (*b)->name, why);
        if (n > 0 && (size_t)n < rlen - used)
            used += (size_t)n;
    }
    if (!used)
        snprintf(reasons, rlen,
                 "no tracing backend is compiled into this devtrace (built with DEVTRACE_BACKENDS empty)");
    return t->unavailable;
}

static void make_unavailable(dt_session *s, const dt_backend *unavailable, const char *why)
{
    if (s->backend && s->backend->close && s->bstate)
        s->backend->close(s, s->bstate);
    free(s->bstate);
    s->bstate = NULL;
    s->backend = unavailable;
    snprintf(s->unavailable_reason, sizeof s->unavailable_reason, "%s", why);
    snprintf(s->backend_name, sizeof s->backend_name, "%s", unavailable->name);
    dt_backend_validation_text(unavailable, s->validation, sizeof s->validation);
}

devtrace_session *dt_session_open(const devtrace_config *given, const dt_backend_table *t, devtrace_error *err)
{
    if (err) {
        err->code = 0;
        err->message[0] = '\0';
    }
    /* The caller's first `size` bytes over the defaults (size 0: a zeroed config of this
     * header, read whole; larger than ours: a newer header's, its extra fields unknown here). */
    devtrace_config local;
    devtrace_config_init(&local);
    if (given) {
        if (given->size && given->size < offsetof(devtrace_config, backend)) {
            dt_error_set(err, DEVTRACE_EINVAL,
                         "devtrace_config.size is %zu, smaller than any devtrace_config; "
                         "fill the config with devtrace_config_init",
                         given->size);
            return NULL;
        }
        size_t n = given->size && given->size < sizeof local ? given->size : sizeof local;
        memcpy(&local, given, n);
    }
    const devtrace_config *cfg = &local;
    const char *name = cfg->backend ? cfg->backend : getenv("DEVTRACE_BACKEND");
    if (!name || !*name)
        name = "auto";
    uint64_t max_events = cfg->max_events;
    const char *me = getenv("DEVTRACE_MAX_EVENTS");
    if (!max_events && me && *me) {
        if (dt_parse_u64(me, &max_events) != 0 || max_events == 0) {
            dt_error_set(err, DEVTRACE_EINVAL,
                         "$DEVTRACE_MAX_EVENTS=\"%s\" is not a positive integer; unset it or set a count like 1000000",
                         me);
            return NULL;
        }
    }
    if (!max_events)
        max_events = DT_DEFAULT_MAX_EVENTS;
    dt_host_clock_choice host_clock;
    if (dt_host_clock_choice_from_env(&host_clock, err) != 0)
        return NULL;
    int rank = cfg->rank >= 0 ? cfg->rank : env_int("RANK", 0, err);
    int world = cfg->world_size >= 0 ? cfg->world_size : env_int("WORLD_SIZE", 1, err);
    if (rank == -2 || world == -2)
        return NULL;

    char reasons[8192];
    const dt_backend *b = select_backend(t, name, reasons, sizeof reasons, err);
    if (!b)
        return NULL;
    dt_session *s = calloc(1, sizeof *s);
    if (!s || session_init_common(s, max_events) != 0) {
        devtrace_close(s);
        dt_error_set(err, DEVTRACE_ENOMEM, "out of memory creating a session");
        return NULL;
    }
    s->rank = rank;
    s->world_size = world;
    s->host_clock = host_clock;
    s->kinds = cfg->kinds ? cfg->kinds : UINT32_MAX;
    s->state = DT_OPEN;
    const char *raw = cfg->raw_path ? cfg->raw_path : getenv("DEVTRACE_RAW");
    snprintf(s->raw_path, sizeof s->raw_path, "%s", raw ? raw : "");
    s->backend = b;
    snprintf(s->backend_name, sizeof s->backend_name, "%s", b->name);
    dt_backend_validation_text(b, s->validation, sizeof s->validation);
    snprintf(s->runtime_category, sizeof s->runtime_category, "%s",
             cfg->runtime_category ? cfg->runtime_category
                                   : (b->runtime_category ? b->runtime_category : "privateuse1_runtime"));
    if (b == t->unavailable) {
        make_unavailable(s, t->unavailable, strcmp(name, "none") == 0 ? "backend \"none\" selected" : reasons);
        return s;
    }
    char why[2048] = "";
    if (b->probe && !b->probe(why, sizeof why)) {
        char msg[2100];
        snprintf(msg, sizeof msg, "%s: %s", b->name, why);
        make_unavailable(s, t->unavailable, msg);
        return s;
    }
    s->bstate = b->state_size ? calloc(1, b->state_size) : NULL;
    if (b->state_size && !s->bstate) {
        make_unavailable(s, t->unavailable, "out of memory for the backend state");
        return s;
    }
    devtrace_error berr = {0, ""};
    if (b->open && b->open(s, s->bstate, &berr) != 0) {
        char msg[1100];
        snprintf(msg, sizeof msg, "%s: %s", b->name, berr.message[0] ? berr.message : "open failed");
        make_unavailable(s, t->unavailable, msg);
    } else if (s->raw_path[0] && !(b->caps & DT_CAP_RAW_CAPTURE)) {
        char can[256];
        dt_backend_table_names(t, DT_CAP_RAW_CAPTURE, NULL, can, sizeof can);
        dt_add_note(s,
                    "raw capture %s not written: the %s backend cannot save one (a .dtraw holds vendor activity "
                    "buffers, and its events do not come from such buffers); the backends that can: %s",
                    s->raw_path, b->name, can[0] ? can : "none in this build");
    }
    return s;
}

int devtrace_start(devtrace_session *s)
{
    if (!s)
        return DEVTRACE_EINVAL;
    if (s->backend && (s->state == DT_STOPPED || s->state == DT_FINAL)) {
        dt_session_retire_window(s); /* a restart: a new capture window, every counter reset */
        s->state = DT_OPEN;
    }
    if (s->state != DT_OPEN)
        return DEVTRACE_ESTATE;
    dt_set_window(s, dt_realtime_ns(), 0);
    int rc = 0;
    memset(&s->ticks, 0, sizeof s->ticks); /* the backend's start may stamp with the counter anew */
    if (s->backend && s->backend->start)
        rc = s->backend->start(s, s->bstate);
    if (!s->owner_collector)
        dt_ticks_start_ops(s); /* else ops take the clock: the recorder converts with the backend's samples */
    s->state = DT_RUNNING;
    return rc;
}

int devtrace_stop(devtrace_session *s)
{
    if (!s)
        return DEVTRACE_EINVAL;
    if (s->state != DT_RUNNING)
        return DEVTRACE_ESTATE;
    int rc = 0;
    if (s->backend && s->backend->stop)
        rc = s->backend->stop(s, s->bstate);
    dt_ticks_sample(s); /* the last pair: every tick stamped lies between two */
    /* The window closes after the flush: records of work finished before stop, delivered
     * late by the vendor, still fall inside it. */
    uint64_t stop_ns = dt_realtime_ns();
    if (!s->op_window || !dt_op_window_at_stop(s, stop_ns)) {
        pthread_mutex_lock(&s->lock);
        s->window_stop = stop_ns;
        pthread_mutex_unlock(&s->lock);
    }
    s->state = DT_STOPPED;
    if (s->on_stop)
        s->on_stop(s, s->on_stop_user);
    return rc;
}

void dt_set_window(dt_session *s, uint64_t start, uint64_t stop)
{
    pthread_mutex_lock(&s->lock);
    if (start)
        s->window_start = start;
    if (stop)
        s->window_stop = stop;
    pthread_mutex_unlock(&s->lock);
}

int dt_vendor_clock_span(dt_session *s, uint64_t *lo, uint64_t *hi)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->nsamples;
    uint64_t first = n ? s->samples[0].vendor_ns : 0, last = n ? s->samples[n - 1].vendor_ns : 0;
    pthread_mutex_unlock(&s->lock);
    if (!n)
        return -1;
    *lo = first < last ? first : last;
    *hi = first < last ? last : first;
    return 0;
}

void dt_add_clock_sample(dt_session *s, uint64_t vendor_ns, uint64_t host_ns)
{
    pthread_mutex_lock(&s->lock);
    dt_clock_sample *p = dt_room_for_one(s->samples, s->nsamples, &s->samples_cap, sizeof *p, 16);
    if (!p) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    s->samples = p;
    s->samples[s->nsamples++] = (dt_clock_sample){vendor_ns, host_ns};
    pthread_mutex_unlock(&s->lock);
}

int dt_sample_vendor_clock(dt_session *s, int (*read_vendor)(uint64_t *ns), int success, uint64_t *vendor_ns,
                           uint64_t *host_ns)
{
    /* The vendor read bracketed by two host reads, the host time their midpoint. A thread
     * preempted inside the bracket would pair the vendor time with a host time off by up to
     * half the preemption (milliseconds on a loaded machine: percents of the rate between two
     * samples 100 ms apart), so the read is retried, keeping the narrowest bracket, until one
     * is under DT_CLOCK_BRACKET_NS or DT_CLOCK_BRACKET_TRIES were made. */
    uint64_t vendor = 0, host = 0, width = UINT64_MAX;
    for (int i = 0; i < DT_CLOCK_BRACKET_TRIES && width > DT_CLOCK_BRACKET_NS; i++) {
        uint64_t v = 0, h0 = dt_realtime_ns();
        int rc = read_vendor(&v);
        uint64_t h1 = dt_realtime_ns();
        if (rc != success)
            return -1;
        if (h1 - h0 < width) {
            width = h1 - h0;
            vendor = v;
            host = h0 + (h1 - h0) / 2;
        }
    }
    dt_add_clock_sample(s, vendor, host);
    if (vendor_ns)
        *vendor_ns = vendor;
    if (host_ns)
        *host_ns = host;
    return 0;
}

void dt_add_device(dt_session *s, const dt_device_props *p)
{
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->ndevices; i++)
        if (s->devices[i].id == p->id) {
            s->devices[i] = *p;
            goto end;
        }
    if (s->ndevices < DT_MAX_DEVICES)
        s->devices[s->ndevices++] = *p;
end:
    pthread_mutex_unlock(&s->lock);
}

void dt_add_note(dt_session *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->nnotes; i++)
        if (strcmp(s->notes[i], buf) == 0)
            goto end;
    /* The last slot says that notes were dropped, so a full list is never mistaken for all
     * of them; the count of the dropped ones is in s->stats.notes_dropped. */
    if (s->nnotes == DT_MAX_NOTES - 1 || s->nnotes == DT_MAX_NOTES) {
        s->stats.notes_dropped++;
        if (s->nnotes == DT_MAX_NOTES)
            goto end;
        snprintf(buf, sizeof buf, "further notes were dropped: a trace keeps %d distinct notes", DT_MAX_NOTES - 1);
    }
    char *copy = strdup(buf);
    if (copy)
        s->notes[s->nnotes++] = copy;
    else
        s->stats.notes_dropped++;
end:
    pthread_mutex_unlock(&s->lock);
}

uint32_t dt_session_intern(dt_session *s, const char *name)
{
    return dt_intern_str(&s->names, name);
}

/* Per-thread stack of external ids (and annotation ranges), per session (session.h). */
_Thread_local dt_external_stack dt__external_stack;

/* The thread's stack now belongs to session s: emptied (out of line: once per thread and
 * session). */
static __attribute__((noinline)) void ext_stack_reset(dt_external_stack *x, const dt_session *s)
{
    x->generation = s->generation;
    x->depth = 0;
    x->overflow = 0;
    x->user_depth = 0;
    x->user_overflow = 0;
    x->tid = dt_thread_id();
    memset(&x->ops, 0, sizeof x->ops);
    memset(x->names, 0, sizeof x->names);
    memset(x->texts, 0, sizeof x->texts);
}

static inline dt_external_stack *ext_stack_bind(dt_session *s)
{
    dt_external_stack *x = DT_TLS_SELF(dt__external_stack);
    if (__builtin_expect(x->generation != s->generation, 0))
        ext_stack_reset(x, s);
    return x;
}

/* The place of the next frame on the thread's stack (write it there, then frame_pushed), or
 * NULL when the stack is full: the push is counted as an overflow, popped without effect. */
static inline __attribute__((always_inline)) dt_external_frame *frame_slot(dt_external_stack *x)
{
    if (__builtin_expect(x->depth == DT_EXTERNAL_DEPTH, 0)) {
        x->overflow++;
        return NULL;
    }
    return &x->frames[x->depth];
}

/* The frame written at frame_slot's place is pushed: the backend and the capture window
 * are told. */
static inline __attribute__((always_inline)) void frame_pushed(dt_session *s, dt_external_stack *x)
{
    const dt_external_frame *f = &x->frames[x->depth++];
    if (s->backend && s->backend->push_external)
        s->backend->push_external(s->bstate, f->id);
    if (__builtin_expect(s->op_window != NULL, 0) && f->is_range)
        dt_op_window_range_begins(s, f->name_id, (f->clock_flags & DT_EVENT_TICKS) ? 0 : f->start_ns);
}

static int push_frame(dt_session *s, dt_external_stack *x, const dt_external_frame *f)
{
    dt_external_frame *slot = frame_slot(x);
    if (!slot)
        return DEVTRACE_ENOMEM;
    *slot = *f;
    frame_pushed(s, x);
    return 0;
}

/* Pops the innermost frame if it is of the kind asked for (a range, or a plain id): *out is
 * then the popped frame, in place (valid until the thread's next push); a mismatch leaves the
 * stack as it was and returns DEVTRACE_ESTATE. */
static inline __attribute__((always_inline)) int pop_frame(dt_session *s, dt_external_stack *x, int want_range,
                                                           const dt_external_frame **out)
{
    if (__builtin_expect(x->overflow != 0, 0)) {
        x->overflow--;
        return DEVTRACE_ENOMEM;
    }
    if (x->depth == 0)
        return DEVTRACE_EEMPTY;
    if (x->frames[x->depth - 1].is_range != want_range)
        return DEVTRACE_ESTATE;
    *out = &x->frames[--x->depth];
    if (s->backend && s->backend->pop_external) {
        uint64_t ignored;
        s->backend->pop_external(s->bstate, &ignored);
    }
    return 0;
}

int devtrace_push_external(devtrace_session *s, uint64_t id)
{
    if (!s)
        return DEVTRACE_EINVAL;
    dt_external_frame f = {.id = id};
    return push_frame(s, ext_stack_bind(s), &f);
}

int devtrace_pop_external(devtrace_session *s, uint64_t *id)
{
    if (!s)
        return DEVTRACE_EINVAL;
    const dt_external_frame *f;
    int rc = pop_frame(s, ext_stack_bind(s), 0, &f);
    if (rc == 0 && id)
        *id = f->id;
    return rc;
}

int devtrace_push_user_correlation(devtrace_session *s, uint64_t id)
{
    if (!s)
        return DEVTRACE_EINVAL;
    dt_external_stack *x = ext_stack_bind(s);
    if (x->user_depth == DT_USER_DEPTH) {
        x->user_overflow++;
        return DEVTRACE_ENOMEM;
    }
    x->user_ids[x->user_depth++] = id;
    if (s->backend && s->backend->push_user_external)
        s->backend->push_user_external(s->bstate, id);
    return 0;
}

int devtrace_pop_user_correlation(devtrace_session *s, uint64_t *id)
{
    if (!s)
        return DEVTRACE_EINVAL;
    dt_external_stack *x = ext_stack_bind(s);
    if (x->user_overflow) {
        x->user_overflow--;
        return DEVTRACE_ENOMEM;
    }
    if (x->user_depth == 0)
        return DEVTRACE_EEMPTY;
    uint64_t top = x->user_ids[--x->user_depth];
    if (s->backend && s->backend->pop_user_external) {
        uint64_t ignored;
        s->backend->pop_user_external(s->bstate, &ignored);
    }
    if (id)
        *id = top;
    return 0;
}

int devtrace_range_push(devtrace_session *s, const char *name, uint64_t id)
{
    if (!s || !name)
        return DEVTRACE_EINVAL;
    dt_external_frame f = {.id = id,
                           .start_ns = dt_realtime_ns(),
                           .name_id = dt_session_intern(s, name),
                           .is_range = 1,
                           .clock_flags = DEVTRACE_EVENT_HOST_CLOCK,
                           .sequence_nr = -1};
    return push_frame(s, ext_stack_bind(s), &f);
}

/* The cpu_op event of a range that ends now, written in place in the thread's chunk. */
static inline __attribute__((always_inline)) void emit_range(dt_session *s, dt_external_stack *x,
                                                             const dt_external_frame *f)
{
    uint64_t end = (f->clock_flags & DT_EVENT_TICKS) ? dt_ticks_stamp(s) : dt_realtime_ns();
    if (__builtin_expect(s->op_window != NULL, 0))
        dt_op_window_range_ends(s, f->name_id, (f->clock_flags & DT_EVENT_TICKS) ? 0 : end);
    devtrace_event *ev = dt_store_cursor_next(&x->ops, &s->store);
    if (!ev) {
        dt_store_cursor_drop(&x->ops); /* the store is at its bound: counted */
        return;
    }
    dt_event_zero(ev);
    ev->kind = DEVTRACE_KIND_CPU_OP;
    ev->flags = (uint16_t)(DEVTRACE_EVENT_HAS_EXTERNAL | f->clock_flags);
    ev->start_ns = f->start_ns;
    ev->end_ns = end;
    ev->external_id = f->id;
    ev->name_id = f->name_id;
    ev->device = dt_process_id();
    ev->stream = x->tid;
    if (f->sequence_nr >= 0) {
        ev->flags |= DEVTRACE_EVENT_HAS_SEQUENCE;
        ev->u.cpu_op.sequence_nr = f->sequence_nr;
        ev->u.cpu_op.fwd_thread_id = f->fwd_thread_id;
    }
    dt_store_cursor_commit(&x->ops);
}

static inline __attribute__((always_inline)) int range_pop(dt_session *s, dt_external_stack *x)
{
    const dt_external_frame *f;
    int rc = pop_frame(s, x, 1, &f);
    if (rc != 0)
        return rc;
    if (s->state == DT_RUNNING)
        emit_range(s, x, f);
    return 0;
}

int devtrace_range_pop(devtrace_session *s)
{
    if (!s)
        return DEVTRACE_EINVAL;
    return range_pop(s, ext_stack_bind(s));
}

/* An op name by pointer, from the thread's cache when the pointer is there and its entry
 * has the same text (a framework may reuse an address for another name); else by text,
 * from the thread's second cache, else from the session's table. */
static __attribute__((noinline)) uint32_t op_name_slow(dt_session *s, dt_external_stack *x, const char *name,
                                                       unsigned slot)
{
    size_t len = strlen(name);
    uint32_t hash = dt_intern_hash(name, len), id;
    unsigned t = hash & (DT_OP_TEXT_CACHE - 1);
    if (x->texts[t].id && x->texts[t].hash == hash && x->texts[t].len == len &&
        memcmp(dt_intern_get(&s->names, x->texts[t].id), name, len) == 0) {
        id = x->texts[t].id;
    } else if ((id = dt_intern_nh(&s->names, name, len, hash)) != 0 && len <= UINT32_MAX) {
        x->texts[t].hash = hash;
        x->texts[t].len = (uint32_t)len;
        x->texts[t].id = id;
    }
    if (id) {
        x->names[slot].ptr = name;
        x->names[slot].text = dt_intern_get(&s->names, id); /* stable until the session ends */
        x->names[slot].id = id;
    }
    return id;
}

static inline uint32_t op_name(dt_session *s, dt_external_stack *x, const char *name)
{
    unsigned slot = (unsigned)((((uintptr_t)name >> 3) * 0x9E3779B1u) >> 26) & (DT_OP_NAME_CACHE - 1);
    if (x->names[slot].ptr == name && strcmp(x->names[slot].text, name) == 0)
        return x->names[slot].id;
    return op_name_slow(s, x, name, slot);
}

/* The innermost op waits for its first child's sequence number (DEVTRACE_SEQUENCE_FROM_CHILD):
 * it is this one. */
static void op_sequence_to_parent(dt_external_stack *x, int64_t sequence_nr, uint64_t fwd_thread_id)
{
    dt_external_frame *parent = &x->frames[x->depth - 1];
    if (parent->sequence_nr == DEVTRACE_SEQUENCE_FROM_CHILD && !x->overflow) {
        parent->sequence_nr = sequence_nr;
        parent->fwd_thread_id = fwd_thread_id;
    }
}

/* An operator observer's op (devtrace.h): on the default session, stamped like the
 * backend's own callbacks (the counter when the backend stamps ticks). One thread-local
 * lookup (the thread's stack, which holds the name cache and the store place too), no
 * lock, no formatting. */
int devtrace_op_enter(const char *name, uint64_t id, int64_t sequence_nr, uint64_t fwd_thread_id)
{
    dt_session *s = atomic_load_explicit(&default_session, memory_order_acquire);
    if (__builtin_expect(!s || s->state != DT_RUNNING, 0))
        return DEVTRACE_ESTATE;
    if (!name)
        return DEVTRACE_EINVAL;
    dt_external_stack *x = ext_stack_bind(s);
    if (__builtin_expect(sequence_nr >= 0 && x->depth > 0, 0))
        op_sequence_to_parent(x, sequence_nr, fwd_thread_id);
    /* Written in place on the thread's stack: the name, clock and sequence of the op. */
    dt_external_frame *f = frame_slot(x);
    if (!f)
        return DEVTRACE_ENOMEM;
    int ticks = s->ticks.on;
    f->id = id;
    f->start_ns = ticks ? dt_ticks_stamp(s) : dt_realtime_ns();
    f->name_id = op_name(s, x, name);
    f->is_range = 1;
    f->clock_flags = ticks ? DT_EVENT_TICKS : DEVTRACE_EVENT_HOST_CLOCK;
    f->sequence_nr = sequence_nr < 0 && sequence_nr != DEVTRACE_SEQUENCE_FROM_CHILD ? -1 : sequence_nr;
    f->fwd_thread_id = fwd_thread_id;
    frame_pushed(s, x);
    return 0;
}

/* Op exits that matched no op of their thread (the op began on another thread). */
static atomic_uint_fast64_t op_exits_elsewhere;

int devtrace_op_exit(uint64_t id)
{
    dt_session *s = atomic_load_explicit(&default_session, memory_order_acquire);
    if (__builtin_expect(!s, 0))
        return DEVTRACE_ESTATE;
    dt_external_stack *x = ext_stack_bind(s);
    if (__builtin_expect(!x->overflow && x->depth > 0 && x->frames[x->depth - 1].id != id, 0)) {
        if (atomic_fetch_add_explicit(&op_exits_elsewhere, 1, memory_order_relaxed) == 0)
            dt_add_note(s, "an operator ended on another thread than it began on: its thread's stack was left "
                           "as it was (its cpu_op is missing)");
        return DEVTRACE_ESTATE;
    }
    return range_pop(s, x);
}

int devtrace_add_note(devtrace_session *s, const char *text)
{
    if (!s || !text)
        return DEVTRACE_EINVAL;
    dt_add_note(s, "%s", text);
    return 0;
}

void dt_set_default_session(dt_session *s)
{
    atomic_store(&default_session, s);
}

int devtrace_set_default_session(devtrace_session *s)
{
    dt_session *now = atomic_load(&default_session);
    if (now && now->owner_collector && now != s)
        return DEVTRACE_ESTATE; /* devtrace record's session stays the default */
    dt_set_default_session(s);
    return 0;
}

/* The hooks a layer above registered (dt_core_set_hooks): the collector's, in the injected
 * library; none in a program that links devtrace without it. */
static _Atomic(const dt_core_hooks *) core_hooks;

void dt_core_set_hooks(const dt_core_hooks *hooks)
{
    atomic_store(&core_hooks, hooks);
}

void dt_core_autostart(const char *backend_name)
{
    const dt_core_hooks *hooks = atomic_load(&core_hooks);
    if (hooks && hooks->autostart)
        hooks->autostart(backend_name);
}

void dt_core_keep_handlers(void)
{
    const dt_core_hooks *hooks = atomic_load(&core_hooks);
    if (hooks && hooks->keep_handlers)
        hooks->keep_handlers();
}

/* Under devtrace record, the collector's session from its first use in the program (an
 * annotation, or the PyTorch bridge asking for it), not only from the backend's first call. */
static dt_session *default_session_started(void)
{
    dt_session *s = atomic_load(&default_session);
    const dt_core_hooks *hooks = s ? NULL : atomic_load(&core_hooks);
    if (hooks && hooks->start_early) {
        hooks->start_early();
        s = atomic_load(&default_session);
    }
    return s;
}

devtrace_session *devtrace_default_session(void)
{
    return default_session_started();
}

int devtrace_annotate_push(const char *name, uint64_t id)
{
    dt_session *s = default_session_started();
    return s ? devtrace_range_push(s, name, id) : DEVTRACE_ESTATE;
}

int devtrace_annotate_pop(void)
{
    dt_session *s = atomic_load(&default_session);
    return s ? devtrace_range_pop(s) : DEVTRACE_ESTATE;
}

const devtrace_stats *devtrace_stats_get(devtrace_session *s)
{
    if (!s)
        return NULL;
    if (s->state == DT_STOPPED)
        dt_session_finalize(s);
    return &s->stats;
}

const char *devtrace_backend_name(const devtrace_session *s)
{
    return s ? s->backend_name : "";
}

const char *devtrace_unavailable_reason(const devtrace_session *s)
{
    return s ? s->unavailable_reason : "no session";
}

void devtrace_close(devtrace_session *s)
{
    if (!s)
        return;
    if (s->state == DT_RUNNING)
        devtrace_stop(s);
    if (atomic_load(&default_session) == s)
        dt_set_default_session(NULL);
    if (s->backend && s->backend->close && s->bstate)
        s->backend->close(s, s->bstate);
    free(s->bstate);
    dt_store_destroy(&s->store);
    dt_intern_destroy(&s->names);
    free(s->samples);
    free(s->tick_samples);
    dt_bigmem_free(&s->sorted_mem);
    free(s->lanes);
    free(s->processes);
    free(s->op_window);
    dt_clock_map_free(&s->clock);
    for (int i = 0; i < s->nnotes; i++)
        free(s->notes[i]);
    if (s->generation)
        pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- vendor calls with a deadline ---- */

typedef struct deadline_call {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    int (*fn)(void *arg);
    void *arg;
    int done, rc, refs; /* refs: the caller and the helper; the last one frees */
} deadline_call;

static void deadline_call_release(deadline_call *c)
{
    pthread_mutex_lock(&c->lock);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->lock);
    if (last) {
        pthread_cond_destroy(&c->done_cv);
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
}

static void *deadline_thread(void *arg)
{
    deadline_call *c = arg;
    int rc = c->fn(c->arg);
    pthread_mutex_lock(&c->lock);
    c->rc = rc;
    c->done = 1;
    pthread_cond_signal(&c->done_cv);
    pthread_mutex_unlock(&c->lock);
    deadline_call_release(c);
    return NULL;
}

int dt_call_with_deadline(int (*fn)(void *arg), void *arg, uint64_t timeout_ms, int *rc)
{
    deadline_call *c = calloc(1, sizeof *c);
    pthread_condattr_t ca;
    pthread_attr_t ta;
    pthread_t t;
    if (!c) {
        *rc = fn(arg);
        return 0;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    c->fn = fn;
    c->arg = arg;
    c->refs = 2;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&t, &ta, deadline_thread, c) == 0;
    pthread_attr_destroy(&ta);
    if (!started) {
        c->refs = 1;
        deadline_call_release(c);
        *rc = fn(arg);
        return 0;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    if (timeout_ms > 100000000u)
        timeout_ms = 100000000u; /* about a day: no overflow below */
    deadline.tv_sec += (time_t)(timeout_ms / 1000);
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->lock);
    while (!c->done && pthread_cond_timedwait(&c->done_cv, &c->lock, &deadline) != ETIMEDOUT)
        ;
    int done = c->done;
    *rc = c->rc;
    pthread_mutex_unlock(&c->lock);
    deadline_call_release(c);
    return done ? 0 : -1;
}

int dt_flush_with_deadline(dt_session *s, const char *what, int (*fn)(void *arg), void *arg, uint64_t timeout_ms,
                           _Atomic int *hung, int *rc)
{
    if (atomic_load(hung))
        return -1;
    if (dt_call_with_deadline(fn, arg, timeout_ms, rc) == 0)
        return 0;
    atomic_store(hung, 1);
    dt_add_note(s,
                "%s did not return within %llu ms: the records the library still holds are missing (it never "
                "handed them over, so they cannot be counted); $DEVTRACE_FLUSH_TIMEOUT_MS sets the wait",
                what, (unsigned long long)timeout_ms);
    return -1;
}

uint64_t dt_flush_timeout_ms(int *bad)
{
    const char *text = getenv("DEVTRACE_FLUSH_TIMEOUT_MS");
    uint64_t ms;
    *bad = 0;
    if (!text || !*text)
        return DT_FLUSH_TIMEOUT_MS;
    if (dt_parse_u64(text, &ms) != 0 || ms == 0) {
        *bad = 1;
        return DT_FLUSH_TIMEOUT_MS;
    }
    return ms;
}
