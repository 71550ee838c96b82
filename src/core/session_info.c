/* session_info.c: the public calls that tell a consumer about a session (version, validation,
 * runtime category, capture window, notes, devices), and the start, stop and drain that say
 * why they failed. What the Chrome sink writes, a program can read here instead. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "core/session.h"

const char *devtrace_version(void)
{
    return DEVTRACE_VERSION_STRING;
}

unsigned devtrace_version_number(void)
{
    return DEVTRACE_VERSION_NUMBER;
}

size_t devtrace_event_size(void)
{
    return sizeof(devtrace_event);
}

const dt_stats_counter dt_stats_counters[DT_STATS_NCOUNTERS] = {
#define DT__STATS_ROW(field, group, key, what) {#field, group, key, what, offsetof(devtrace_stats, field)},
    DEVTRACE_STATS_COUNTERS(DT__STATS_ROW)
#undef DT__STATS_ROW
};

int devtrace_stats_read(const devtrace_session *s, devtrace_stats *out)
{
    if (!s || !out || out->size < offsetof(devtrace_stats, dropped_store_full))
        return DEVTRACE_EINVAL;
    size_t n = out->size < sizeof s->stats ? out->size : sizeof s->stats;
    devtrace_stats now; /* the counters of a running session are being added to: read atomically */
    memset(&now, 0, sizeof now);
    memcpy(now.events, s->stats.events, sizeof now.events);
    memcpy(now.out_of_window, s->stats.out_of_window, sizeof now.out_of_window);
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++)
        *dt_stats_counter_at(&now, i) =
            __atomic_load_n(dt_stats_counter_at((devtrace_stats *)&s->stats, i), __ATOMIC_RELAXED);
    now.size = n;
    memcpy(out, &now, n);
    return 0;
}

const char *devtrace_validation(const devtrace_session *s)
{
    return s ? s->validation : "";
}

const char *devtrace_runtime_category(const devtrace_session *s)
{
    return s ? s->runtime_category : "";
}

int devtrace_capture_window(const devtrace_session *s, uint64_t *start_ns, uint64_t *stop_ns)
{
    uint64_t start = 0, stop = 0;
    int rc = DEVTRACE_EINVAL;
    if (s) {
        pthread_mutex_lock((pthread_mutex_t *)&s->lock);
        start = s->window_start;
        stop = s->window_stop;
        pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
        rc = s->state == DT_OPEN ? DEVTRACE_ESTATE : 0;
        if (rc)
            start = stop = 0;
    }
    if (start_ns)
        *start_ns = start;
    if (stop_ns)
        *stop_ns = stop;
    return rc;
}

int devtrace_note_count(const devtrace_session *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    int n = s->nnotes;
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    return n;
}

const char *devtrace_note(const devtrace_session *s, int index)
{
    if (!s || index < 0)
        return NULL;
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    const char *note = index < s->nnotes ? s->notes[index] : NULL; /* a note is never changed or freed before close */
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    return note;
}

int devtrace_device_count(const devtrace_session *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    int n = s->ndevices;
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    return n;
}

int devtrace_device_get(const devtrace_session *s, int index, devtrace_device *out)
{
    if (!s || !out || out->size < offsetof(devtrace_device, name) + sizeof out->name)
        return DEVTRACE_EINVAL;
    devtrace_device d;
    memset(&d, 0, sizeof d);
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    int found = index >= 0 && index < s->ndevices;
    if (found) {
        const dt_device_props *p = &s->devices[index];
        d.id = p->id;
        memcpy(d.name, p->name, sizeof d.name);
        d.total_global_mem = p->total_global_mem;
        d.compute_major = p->compute_major;
        d.compute_minor = p->compute_minor;
        d.max_threads_per_block = p->max_threads_per_block;
        d.max_threads_per_sm = p->max_threads_per_sm;
        d.max_blocks_per_sm = p->max_blocks_per_sm;
        d.regs_per_block = p->regs_per_block;
        d.regs_per_sm = p->regs_per_sm;
        d.warp_size = p->warp_size;
        d.num_sms = p->num_sms;
        d.smem_per_block = p->smem_per_block;
        d.smem_per_sm = p->smem_per_sm;
        d.has_occupancy = p->has_occupancy;
    }
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    if (!found)
        return DEVTRACE_EINVAL;
    size_t size = out->size < sizeof d ? out->size : sizeof d;
    d.size = out->size;
    memcpy(out, &d, size);
    return 0;
}

const char *devtrace_interned_name(const devtrace_session *s, uint32_t id)
{
    return s ? dt_intern_get(&s->names, id) : "";
}

int devtrace_kernel_occupancy(const devtrace_session *s, const devtrace_event *kernel, devtrace_occupancy *out)
{
    if (!s || !kernel || !out || out->size < sizeof *out || kernel->kind != DEVTRACE_KIND_KERNEL)
        return DEVTRACE_EINVAL;
    dt_device_props dev;
    int found = 0;
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    for (int i = 0; i < s->ndevices && !found; i++) {
        if ((uint32_t)s->devices[i].id == kernel->device) {
            dev = s->devices[i];
            found = 1;
        }
    }
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    dt_occupancy occ;
    if (!found || dt_occupancy_compute(&dev, kernel, &occ) != 0)
        return DEVTRACE_ENOTSUP;
    out->blocks_per_sm = occ.blocks_per_sm;
    out->warps_per_sm = occ.warps_per_sm;
    out->active_blocks_per_sm = occ.active_blocks_per_sm;
    out->est_achieved_occupancy_pct = occ.est_achieved_occupancy_pct;
    return 0;
}

static const char *state_words(dt_state state)
{
    switch (state) {
    case DT_OPEN:
        return "open and not started";
    case DT_RUNNING:
        return "already running";
    case DT_STOPPED:
        return "stopped";
    default:
        return "stopped and drained";
    }
}

/* The newest note, when the call that failed added one (it says why); else "". */
static const char *note_since(const devtrace_session *s, int before)
{
    int n = devtrace_note_count(s);
    return n > before ? devtrace_note(s, n - 1) : "";
}

int devtrace_start_with_error(devtrace_session *s, devtrace_error *err)
{
    if (!s)
        return dt_error_set(err, DEVTRACE_EINVAL, "no session (devtrace_open returned NULL)");
    if (s->state != DT_OPEN)
        return dt_error_set(err, DEVTRACE_ESTATE, "the session is %s; a session starts once, after devtrace_open",
                            state_words(s->state));
    int notes = devtrace_note_count(s);
    int rc = devtrace_start(s);
    if (rc) {
        const char *why = note_since(s, notes);
        return dt_error_set(err, rc, "backend %s: start failed: %s%s%s", s->backend_name, devtrace_strerror(rc),
                            *why ? "; " : "", why);
    }
    return dt_error_set(err, 0, "%s", "");
}

int devtrace_stop_with_error(devtrace_session *s, devtrace_error *err)
{
    if (!s)
        return dt_error_set(err, DEVTRACE_EINVAL, "no session (devtrace_open returned NULL)");
    if (s->state != DT_RUNNING)
        return dt_error_set(err, DEVTRACE_ESTATE, "the session is %s; only a running session stops",
                            state_words(s->state));
    int notes = devtrace_note_count(s);
    int rc = devtrace_stop(s);
    if (rc) {
        const char *why = note_since(s, notes);
        return dt_error_set(err, rc, "backend %s: stop failed: %s%s%s", s->backend_name, devtrace_strerror(rc),
                            *why ? "; " : "", why);
    }
    return dt_error_set(err, 0, "%s", "");
}

int devtrace_drain_events(devtrace_session *s, devtrace_event_cb cb, void *user, size_t *count, devtrace_error *err)
{
    if (count)
        *count = 0;
    if (!s)
        return dt_error_set(err, DEVTRACE_EINVAL, "no session (devtrace_open returned NULL)");
    if (s->state == DT_RUNNING || s->state == DT_OPEN)
        return dt_error_set(err, DEVTRACE_ESTATE, "the session is %s; call devtrace_stop before draining it",
                            state_words(s->state));
    int rc = dt_session_finalize(s);
    if (rc)
        return dt_error_set(err, rc, "cannot finalise the session's events: %s", devtrace_strerror(rc));
    size_t n = dt_session_deliver(s, cb, user);
    if (count)
        *count = n;
    return dt_error_set(err, 0, "%s", "");
}

/* The device streams: the device lanes of the events finalised (drain.c gathers them,
 * ascending by device then stream). */
int devtrace_stream_count(const devtrace_session *s)
{
    if (!s || s->state != DT_FINAL)
        return 0;
    return (int)s->ndevice_lanes;
}

int devtrace_stream_get(const devtrace_session *s, int index, devtrace_stream *out)
{
    if (!s || !out || index < 0 || index >= devtrace_stream_count(s) ||
        out->size < offsetof(devtrace_stream, name) + sizeof out->name)
        return DEVTRACE_EINVAL;
    devtrace_stream st;
    memset(&st, 0, sizeof st);
    uint64_t key = s->lanes[index];
    st.size = out->size < sizeof st ? out->size : sizeof st;
    st.device = (int)(uint32_t)(key >> 32);
    st.stream = (uint32_t)key;
    for (size_t i = 0; i < s->nsorted; i++) { /* the context of the stream's first event */
        dt_filemem_every(i);
        if (!dt_lane_is_host(s->sorted[i]) && dt_lane_key(s->sorted[i]) == key) {
            st.context = s->sorted[i]->context;
            break;
        }
    }
    snprintf(st.name, sizeof st.name, "stream %u", st.stream); /* as the trace names its thread */
    memcpy(out, &st, st.size);
    return 0;
}

int devtrace_flush(devtrace_session *s, devtrace_event_cb cb, void *user, size_t *count, devtrace_error *err)
{
    if (count)
        *count = 0;
    if (err) {
        err->code = 0;
        err->message[0] = '\0';
    }
    if (!s) {
        dt_error_set(err, DEVTRACE_EINVAL, "devtrace_flush: no session");
        return DEVTRACE_EINVAL;
    }
    if (s->state == DT_RUNNING) {
        if (s->backend && s->backend->flush)
            s->backend->flush(s, s->bstate);
        long n = dt_session_flush_running(s, cb, user);
        if (n < 0) {
            dt_error_set(err, DEVTRACE_ENOMEM, "devtrace_flush: out of memory finalising the events");
            return DEVTRACE_ENOMEM;
        }
        if (count)
            *count = (size_t)n;
        return 0;
    }
    if (s->state == DT_OPEN) {
        dt_error_set(err, DEVTRACE_ESTATE, "devtrace_flush: the session was never started; call devtrace_start");
        return DEVTRACE_ESTATE;
    }
    if (s->flushed_final) {
        dt_error_set(err, DEVTRACE_ESTATE,
                     "devtrace_flush: the window's last events were delivered already; devtrace_start begins a "
                     "new window");
        return DEVTRACE_ESTATE;
    }
    int rc = dt_session_finalize(s);
    if (rc != 0) {
        dt_error_set(err, rc, "devtrace_flush: out of memory finalising the events");
        return rc;
    }
    size_t n = dt_session_deliver(s, cb, user);
    for (size_t i = 0; i < s->nsorted; i++) {
        dt_filemem_every(i);
        s->sorted[i]->flags |= DT_EVENT_DELIVERED;
    }
    s->nsorted = 0; /* given: a drain or a writer after this sees none of them again */
    s->flushed_final = 1;
    if (count)
        *count = n;
    return 0;
}
