/* perfetto_facts.c: what every writer of one Perfetto trace reads, made in one pass over
 * the sorted events before any is written: each name's iid in the order of first use (so
 * the bytes do not depend on the order the session interned them), each event's nesting
 * level on its lane (Perfetto pairs an END with the innermost open slice, so slices that
 * overlap without nesting go on overlapping tracks), and the device halves of the flow
 * pairs by correlation. */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "perfetto_trace.h"

/* Makes the map twice as big, or at first big enough for `expected` entries. */
static int flow_grow(flow_map *m, size_t expected)
{
    size_t n = m->slots ? 2 * (m->mask + 1) : 1024;
    while (!m->slots && n < expected + expected / 2)
        n <<= 1;
    flow_slot *old = m->slots;
    dt_bigmem old_mem = m->slots_mem;
    size_t old_n = old ? m->mask + 1 : 0;
    m->slots = dt_bigmem_alloc(&m->slots_mem, n * sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        m->slots_mem = old_mem;
        return -1;
    }
    m->mask = n - 1;
    for (size_t i = 0; i < old_n; i++) {
        if (!old[i].correlation)
            continue;
        size_t j = flow_slot_of(m, old[i].correlation);
        while (m->slots[j].correlation)
            j = (j + 1) & m->mask;
        m->slots[j] = old[i];
    }
    dt_bigmem_free(&old_mem);
    return 0;
}

static int flow_add(flow_map *m, uint64_t correlation, size_t index)
{
    if (3 * (m->used + 1) > 2 * (m->mask + 1) && flow_grow(m, 0) != 0) /* at most 2/3 full */
        return -1;
    size_t i = flow_slot_of(m, correlation);
    while (m->slots[i].correlation && m->slots[i].correlation != correlation)
        i = (i + 1) & m->mask;
    flow_slot *slot = &m->slots[i];
    if (!slot->correlation) {
        *slot = (flow_slot){correlation, index, 0};
        m->used++;
        return 0;
    }
    flow_more *grown = dt_room_for_one(m->more, m->nmore + 1, &m->more_cap, sizeof *grown, 64);
    if (!grown)
        return -1;
    m->more = grown;
    if (!m->nmore)
        m->nmore = 1; /* 0 means none */
    m->more[m->nmore] = (flow_more){index, slot->more};
    slot->more = (uint32_t)m->nmore++;
    return 0;
}

static void flow_map_free(flow_map *m)
{
    dt_bigmem_free(&m->slots_mem);
    free(m->more);
    memset(m, 0, sizeof *m);
}

typedef struct nest_stack {
    uint64_t *ends; /* owned: the ends of the slices open on the level, innermost last */
    uint32_t depth;
    size_t cap;
} nest_stack;

/* The first level of stacks[0, NEST_LEVELS) where [start, end] nests, with it pushed;
 * NEST_LEVELS - 1 with *misnested set (pushed there, nested wrongly) when none; -1 when
 * out of memory. */
static int nest_level(nest_stack *stacks, uint64_t start, uint64_t end, int *misnested)
{
    for (int level = 0; level < NEST_LEVELS; level++) {
        nest_stack *st = &stacks[level];
        while (st->depth && st->ends[st->depth - 1] <= start)
            st->depth--;
        int nests = !st->depth || end <= st->ends[st->depth - 1];
        if (!nests && level + 1 < NEST_LEVELS)
            continue;
        *misnested = !nests;
        uint64_t *grown = dt_room_for_one(st->ends, st->depth, &st->cap, sizeof *grown, 8);
        if (!grown)
            return -1;
        st->ends = grown;
        st->ends[st->depth++] = end;
        return level;
    }
    return -1; /* not reached */
}

void dt_pf_facts_free(trace_facts *t)
{
    flow_map_free(&t->flows);
    free(t->name_iids);
    free(t->names);
    dt_bigmem_free(&t->levels_mem);
    free(t->lane_levels);
    memset(t, 0, sizeof *t);
}

/* What the sorted event at index adds: its name's iid at its first use, its device half
 * of a flow pair, its nesting level on a named lane. 0, or -1 out of memory. */
static int facts_add_event(trace_facts *t, size_t index, nest_stack *stacks, lane_memo *memo)
{
    const dt_session *s = t->s;
    const devtrace_event *ev = s->sorted[index];
    if (ev->kind == DEVTRACE_KIND_MEMORY)
        return 0; /* a counter's value: no name, no slice on its lane */
    uint32_t id = ev->name_id < t->ninterned ? ev->name_id : 0;
    if (ev->kind != DEVTRACE_KIND_MEMCPY && ev->kind != DEVTRACE_KIND_MEMSET && !t->name_iids[id]) {
        t->name_iids[id] = NAME_IID_BASE + t->nnames;
        t->names[t->nnames++] = id;
    }
    if ((ev->flags & DT_EVENT_FLOW) && is_device_kind(ev->kind) && flow_add(&t->flows, ev->correlation, index) != 0)
        return -1;
    lane_memo *m;
    size_t lane = lane_index(memo, s, ev, &m);
    if (lane == NOT_NAMED)
        return 0;
    int misnested;
    int level = nest_level(&stacks[lane * NEST_LEVELS], ev->start_ns, ev->end_ns, &misnested);
    if (level < 0)
        return -1;
    t->over_nested += (uint64_t)misnested;
    t->levels[index] = (uint8_t)level;
    if (level > t->lane_levels[lane])
        t->lane_levels[lane] = (uint8_t)level;
    return 0;
}

/* The names' iids, each event's nesting level, and the device halves of the flow pairs,
 * by correlation: one pass over the events. */
int dt_pf_facts_init(trace_facts *t, dt_session *s)
{
    memset(t, 0, sizeof *t);
    t->s = s;
    uint32_t n = t->ninterned = dt_intern_count(&s->names);
    t->name_iids = calloc(n ? n : 1, sizeof *t->name_iids);
    t->names = malloc((n ? n : 1) * sizeof *t->names);
    t->levels = dt_bigmem_alloc(&t->levels_mem, s->nsorted ? s->nsorted : 1);
    t->lane_levels = calloc(s->nlanes ? s->nlanes : 1, 1);
    nest_stack *stacks = calloc((s->nlanes ? s->nlanes : 1) * NEST_LEVELS, sizeof *stacks);
    lane_memo *memo = calloc(LANE_MEMO_SLOTS, sizeof *memo);
    int rc = -1;
    const uint64_t *kinds = s->stats.events; /* the device events: each may be a flow's half */
    size_t device_events =
        (size_t)(kinds[DEVTRACE_KIND_KERNEL] + kinds[DEVTRACE_KIND_MEMCPY] + kinds[DEVTRACE_KIND_MEMSET]);
    if (!t->name_iids || !t->names || !t->levels || !t->lane_levels || !stacks || !memo ||
        flow_grow(&t->flows, device_events) != 0)
        goto end;
    for (size_t i = 0; i < s->nsorted; i++) {
        dt_filemem_every(i);
        if (i + PREFETCH_AHEAD < s->nsorted) /* the events lie scattered in the store's chunks */
            __builtin_prefetch(s->sorted[i + PREFETCH_AHEAD]);
        if (facts_add_event(t, i, stacks, memo) != 0)
            goto end;
    }
    rc = 0;
    if (t->over_nested)
        dt_add_note(s,
                    "the Perfetto trace: %llu events overlap more than %d others on their lane without nesting; "
                    "they are on its last overlapping track, where Perfetto ends them wrongly",
                    (unsigned long long)t->over_nested, NEST_LEVELS - 1);
end:
    for (size_t i = 0; stacks && i < s->nlanes * NEST_LEVELS; i++)
        free(stacks[i].ends);
    free(stacks);
    free(memo);
    if (rc)
        dt_pf_facts_free(t);
    return rc;
}
