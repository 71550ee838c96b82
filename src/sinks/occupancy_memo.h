/* occupancy_memo.h: the occupancy of a kernel launch shape (dt_occupancy_compute), computed
 * once per shape in a small direct-mapped memo that each writer of a trace keeps: kernels
 * repeat a few shapes. A slot also keeps its sink's formatted form of the figures (text),
 * made by the sink when the slot is filled. Header only: the sinks call it per kernel. */
#ifndef DT_OCCUPANCY_MEMO_H
#define DT_OCCUPANCY_MEMO_H

#include <string.h>

#include "core/session.h"
#include "jsonw.h"

typedef struct dt_occ_memo {
    int used, has_occupancy;
    uint32_t device, regs;
    int32_t grid[3], block[3];
    uint64_t smem;
    dt_occupancy occ;
    uint64_t est_pct; /* est_achieved_occupancy_pct rounded */
    uint32_t len;
    char text[2 * DT_JSONW_FIXED_MAX + 40]; /* the sink's formatted figures */
} dt_occ_memo;

#define DT_OCC_MEMO_SLOTS 16

static inline const dt_device_props *dt_device_of(const dt_session *s, uint32_t id)
{
    for (int i = 0; i < s->ndevices; i++)
        if ((uint32_t)s->devices[i].id == id)
            return &s->devices[i];
    return NULL;
}

/* The slot of ev's launch shape (memo: DT_OCC_MEMO_SLOTS slots), *filled set when it was
 * computed now; NULL when the kernel has no launch shape. The slot's inputs make the key. */
static inline dt_occ_memo *dt_occ_memo_find(dt_occ_memo *memo, const dt_session *s, const devtrace_event *ev,
                                            int *filled)
{
    *filled = 0;
    if (!(ev->flags & DEVTRACE_EVENT_HAS_LAUNCH))
        return NULL; /* dt_occupancy_compute's first refusal that depends on the event */
    const int32_t *g = ev->u.kernel.grid, *b = ev->u.kernel.block;
    uint32_t regs = ev->u.kernel.registers_per_thread;
    uint64_t smem = (uint64_t)ev->u.kernel.static_shared + ev->u.kernel.dynamic_shared;
    uint32_t h = (uint32_t)g[0] * 31u + (uint32_t)g[1] * 7u + (uint32_t)g[2] + (uint32_t)b[0] * 13u +
                 (uint32_t)b[1] * 5u + (uint32_t)b[2] + regs * 3u + (uint32_t)smem + ev->device * 11u;
    dt_occ_memo *m = &memo[(h ^ (h >> 4) ^ (h >> 8)) % DT_OCC_MEMO_SLOTS];
    if (m->used && m->device == ev->device && m->regs == regs && m->smem == smem &&
        !memcmp(m->grid, g, sizeof m->grid) && !memcmp(m->block, b, sizeof m->block))
        return m;
    m->used = 1, m->device = ev->device, m->regs = regs, m->smem = smem;
    memcpy(m->grid, g, sizeof m->grid), memcpy(m->block, b, sizeof m->block);
    m->has_occupancy = dt_occupancy_compute(dt_device_of(s, ev->device), ev, &m->occ) == 0;
    m->est_pct = m->has_occupancy ? (uint64_t)(m->occ.est_achieved_occupancy_pct + 0.5) : 0;
    *filled = 1;
    return m;
}

#endif
