/* summary.c: the short summary devtrace record prints at exit: counts per kind,
 * every loss counter that is not zero, and the top kernels by total device time. */
#include <stdlib.h>
#include <string.h>

#include "sinks.h"

typedef struct kernel_total {
    uint32_t name_id;
    uint64_t total_ns;
    uint64_t calls;
} kernel_total;

static int by_total(const void *a, const void *b)
{
    const kernel_total *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return x->name_id < y->name_id ? -1 : x->name_id > y->name_id;
}

static void print_top_kernels(dt_session *s, FILE *out, size_t top)
{
    uint32_t nnames = dt_intern_count(&s->names);
    kernel_total *t = calloc(nnames ? nnames : 1, sizeof *t);
    if (!t)
        return;
    for (size_t i = 0; i < s->nsorted; i++) {
        const devtrace_event *ev = s->sorted[i];
        if (ev->kind != DEVTRACE_KIND_KERNEL || ev->name_id >= nnames)
            continue;
        t[ev->name_id].name_id = ev->name_id;
        t[ev->name_id].total_ns += ev->end_ns - ev->start_ns;
        t[ev->name_id].calls++;
    }
    qsort(t, nnames, sizeof *t, by_total);
    if (top && nnames && t[0].calls)
        fprintf(out, "  top kernels by total device time:\n");
    for (size_t i = 0; i < top && i < nnames && t[i].calls; i++) {
        const char *name = dt_intern_get(&s->names, t[i].name_id);
        fprintf(out, "    %10.3f us  %5llu x  %.100s%s\n", (double)t[i].total_ns / 1000.0,
                (unsigned long long)t[i].calls, name, strlen(name) > 100 ? "..." : "");
    }
    free(t);
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
    const struct {
        const char *what;
        uint64_t n;
    } losses[] = {
        {"dropped (event store full)", st->dropped_store_full},
        {"dropped (buffer pool full)", st->dropped_pool_full},
        {"dropped (reported by the vendor)", st->dropped_vendor},
        {"malformed records skipped", st->malformed_records},
        {"malformed bytes skipped", st->malformed_bytes},
        {"records without timing (start == end == 0)", st->zero_timestamp},
        {"buffers refused", st->refused_buffers},
        {"outside the capture window", oow},
        {"unpaired flow halves", st->unpaired_flows},
        {"names the vendor could not resolve", st->unresolved_names},
        {"bad timestamps (end before start)", st->bad_timestamps},
    };
    int any = 0;
    for (size_t i = 0; i < sizeof losses / sizeof losses[0]; i++)
        if (losses[i].n) {
            fprintf(out, "  %s: %llu\n", losses[i].what, (unsigned long long)losses[i].n);
            any = 1;
        }
    if (!any)
        fprintf(out, "  nothing dropped, malformed or out of window\n");
    for (int i = 0; i < s->nnotes; i++)
        fprintf(out, "  note: %s\n", s->notes[i]);
    print_top_kernels(s, out, top);
}
