/* op_window.c: the capture window chosen by an operator's name (see op_window.h). */
#include "op_window.h"

#include <stdlib.h>

#include "session.h"

int dt_op_window_arm(dt_session *s, const char *name, uint64_t skip, uint64_t count)
{
    dt_op_window *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    w->name_id = dt_session_intern(s, name);
    w->skip = skip;
    w->count = count ? count : 1;
    free(s->op_window);
    s->op_window = w;
    return 0;
}

void dt_op_window_range_begins(dt_session *s, uint32_t name_id, uint64_t start_ns)
{
    dt_op_window *w = s->op_window;
    if (name_id != w->name_id)
        return;
    if (!start_ns)
        start_ns = dt_realtime_ns() - DT_OP_WINDOW_TICKS_MARGIN_NS;
    if (atomic_fetch_add(&w->begun, 1) == w->skip) {
        pthread_mutex_lock(&s->lock);
        s->window_start = start_ns;
        pthread_mutex_unlock(&s->lock);
    }
}

void dt_op_window_range_ends(dt_session *s, uint32_t name_id, uint64_t end_ns)
{
    dt_op_window *w = s->op_window;
    if (name_id != w->name_id)
        return;
    if (!end_ns)
        end_ns = dt_realtime_ns() + DT_OP_WINDOW_TICKS_MARGIN_NS;
    if (atomic_fetch_add(&w->ended, 1) + 1 == w->skip + w->count) {
        pthread_mutex_lock(&s->lock);
        s->window_stop = end_ns;
        pthread_mutex_unlock(&s->lock);
    }
}

int dt_op_window_at_stop(dt_session *s, uint64_t stop_ns)
{
    dt_op_window *w = s->op_window;
    uint64_t begun = atomic_load(&w->begun), ended = atomic_load(&w->ended);
    const char *name = dt_intern_get(&s->names, w->name_id);
    if (begun <= w->skip) {
        pthread_mutex_lock(&s->lock);
        s->window_start = s->window_stop = stop_ns;
        pthread_mutex_unlock(&s->lock);
        dt_add_note(s, "the capture window never opened: '%.200s' began %llu times, the window opens at its %llu%s",
                    name, (unsigned long long)begun, (unsigned long long)(w->skip + 1),
                    w->skip + 1 == 1   ? "st"
                    : w->skip + 1 == 2 ? "nd"
                    : w->skip + 1 == 3 ? "rd"
                                       : "th");
        return 1;
    }
    if (ended >= w->skip + w->count)
        return 1;
    dt_add_note(s, "the capture window opened at '%.200s' #%llu and was still open at stop (%llu of %llu ended)", name,
                (unsigned long long)(w->skip + 1), (unsigned long long)(ended > w->skip ? ended - w->skip : 0),
                (unsigned long long)w->count);
    return 0;
}
