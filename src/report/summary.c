/* summary.c: the short summary devtrace record prints at exit: counts per kind,
 * every loss counter that is not zero, and the top kernels by total device time (the kernels
 * table of devtrace report, made by the same code). */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/summary.h"

/* The kernels table of devtrace report (src/report/), from the session's kernels, names without
 * template arguments. */
static void print_top_kernels(dt_session *s, FILE *out, size_t top)
{
    if (!top)
        return; /* no heading, no table */
    dt_report r;
    char err[160];
    if (dt_report_begin(&r, "session", DT_NAMES_SHORT, err, sizeof err) != 0) {
        dt_report_free(&r);
        return;
    }
    int ok = 1;
    for (size_t i = 0; ok && i < s->nsorted; i++) {
        dt_filemem_every(i);
        const devtrace_event *ev = s->sorted[i];
        if (ev->kind != DEVTRACE_KIND_KERNEL)
            continue;
        const char *name = dt_intern_get(&s->names, ev->name_id);
        uint64_t dur = ev->end_ns > ev->start_ns ? ev->end_ns - ev->start_ns : 0;
        dt_tr_event k;
        memset(&k, 0, sizeof k);
        k.ph = 'X';
        k.kind = DT_TR_KERNEL;
        k.has = DT_TR_HAS_TS | DT_TR_HAS_DUR | DT_TR_HAS_DEVICE | DT_TR_HAS_STREAM;
        k.name.s = name;
        k.name.len = strlen(name);
        k.dur_ns = dur < (uint64_t)DT_TR_TIME_MAX ? (int64_t)dur : DT_TR_TIME_MAX;
        k.device = ev->device;
        k.stream = ev->stream;
        ok = dt_report_add(&r, &k) == 0;
    }
    if (ok && dt_report_end(&r, err, sizeof err) == 0 && r.nkernels) {
        dt_table t;
        dt_report_kernels_table(&r, &t);
        fputs("  ", out);
        dt_table_write_text(&t, out, top);
        dt_table_free(&t);
    }
    dt_report_free(&r);
}

/* The processes of a recorded tree, in the order they started tracing. */
static void print_processes(const dt_session *s, FILE *out)
{
    if (!s->nprocesses && !s->stats.forked_untraced)
        return;
    fprintf(out, "  processes: %zu traced", s->nprocesses);
    if (s->stats.forked_untraced)
        fprintf(out, ", %llu forked without exec (not traced)", (unsigned long long)s->stats.forked_untraced);
    fputc('\n', out);
    for (size_t i = 0; i < s->nprocesses; i++) {
        const dt_traced_process *p = &s->processes[i];
        fprintf(out, "    pid %u (parent %u): %llu events%s  %.100s\n", p->pid, p->ppid, (unsigned long long)p->events,
                p->crash_signal ? ", crashed"
                : p->ended      ? ""
                : p->running    ? ", still running"
                                : ", no final flush",
                p->command);
    }
}

void dt_summary_print(dt_session *s, FILE *out, size_t top)
{
    if (dt_session_finalize(s) != 0)
        return;
    const devtrace_stats *st = &s->stats;
    fprintf(out, "devtrace: backend %s (%s)\n", s->backend_name, s->validation);
    if (s->unavailable_reason[0])
        fprintf(out, "  nothing was traced: %s\n", s->unavailable_reason);
    fprintf(out, "  events: kernel=%llu memcpy=%llu memset=%llu runtime=%llu cpu_op=%llu\n",
            (unsigned long long)st->events[DEVTRACE_KIND_KERNEL], (unsigned long long)st->events[DEVTRACE_KIND_MEMCPY],
            (unsigned long long)st->events[DEVTRACE_KIND_MEMSET], (unsigned long long)st->events[DEVTRACE_KIND_RUNTIME],
            (unsigned long long)st->events[DEVTRACE_KIND_CPU_OP]);
    uint64_t oow = 0;
    for (int k = 0; k < DEVTRACE_KIND_COUNT; k++)
        oow += st->out_of_window[k];
    /* Every counter of DEVTRACE_STATS_COUNTERS that is not 0, by its line, but two: events_missing
     * (a line of its own: how many is not known) and forked_untraced (on the processes' line). */
    int any = 0;
    for (int i = 0; i < DT_STATS_NCOUNTERS; i++) {
        uint64_t n = dt_stats_counter_value(st, i);
        if (n && i != DT_STATS_INDEX_events_missing && i != DT_STATS_INDEX_forked_untraced) {
            fprintf(out, "  %s: %llu\n", dt_stats_counters[i].what, (unsigned long long)n);
            any = 1;
        }
        if (i == DT_STATS_INDEX_refused_buffers && oow) {
            fprintf(out, "  outside the capture window: %llu\n", (unsigned long long)oow);
            any = 1;
        }
    }
    if (st->events_missing)
        fprintf(out, "  events are missing, how many is not known: see the notes\n");
    else if (!any)
        fprintf(out, "  nothing dropped, malformed or out of window\n");
    for (int i = 0; i < s->nnotes; i++)
        fprintf(out, "  note: %s\n", s->notes[i]);
    print_processes(s, out);
    print_top_kernels(s, out, top);
}
