/* occupancy.c: our own occupancy calculator. From the device's attributes and a
 * kernel's launch configuration it computes the figures Kineto shows: blocks per SM,
 * warps per SM, and the estimated achieved occupancy (the launched blocks per SM,
 * capped by the theoretical active blocks, as a share of the SM's thread capacity). */
#include "session.h"

#define REG_ALLOC_UNIT 256 /* registers are allocated per warp in units of 256 */

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int64_t min_i64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Theoretical resident blocks per SM for this launch (0: it cannot run). In 64 bits: the
 * attributes are the vendor's, and absurd ones (a warp of 2^26 threads) must not overflow. */
static int active_blocks(const dt_device_props *d, int threads, int regs, uint64_t smem)
{
    int64_t warps = ceil_div(threads, d->warp_size);
    int64_t limit = d->max_blocks_per_sm > 0 ? d->max_blocks_per_sm : 32;
    limit = min_i64(limit, d->max_threads_per_sm / (warps * d->warp_size));
    if (regs > 0) {
        if (d->regs_per_block > 0 && (int64_t)regs * threads > d->regs_per_block)
            return 0;
        int64_t regs_per_warp = ceil_div((int64_t)regs * d->warp_size, REG_ALLOC_UNIT) * REG_ALLOC_UNIT;
        if (d->regs_per_sm > 0)
            limit = min_i64(limit, d->regs_per_sm / (regs_per_warp * warps));
    }
    if (smem > 0) {
        if (d->smem_per_block > 0 && smem > d->smem_per_block && smem > d->smem_per_sm)
            return 0;
        if (d->smem_per_sm > 0 && d->smem_per_sm / smem < (uint64_t)limit)
            limit = (int64_t)(d->smem_per_sm / smem);
    }
    return limit < 0 ? 0 : (int)limit;
}

int dt_occupancy_compute(const dt_device_props *d, const devtrace_event *k, dt_occupancy *out)
{
    if (!d || !d->has_occupancy || d->warp_size <= 0 || d->num_sms <= 0 || d->max_threads_per_sm <= 0)
        return -1;
    if (!(k->flags & DEVTRACE_EVENT_HAS_LAUNCH))
        return -1;
    const int32_t *g = k->u.kernel.grid, *b = k->u.kernel.block;
    for (int i = 0; i < 3; i++)
        if (g[i] <= 0 || b[i] <= 0)
            return -1;
    /* Products of three int32 dimensions overflow 64 bits: in double, exact up to 2^53. */
    double blocks = (double)g[0] * g[1] * g[2];
    double threads_d = (double)b[0] * b[1] * b[2];
    if (threads_d > d->max_threads_per_sm || threads_d > (1 << 20))
        return -1;
    int threads = (int)threads_d;
    int warps_per_block = (int)ceil_div(threads, d->warp_size);
    uint64_t smem = (uint64_t)k->u.kernel.static_shared + k->u.kernel.dynamic_shared;
    out->blocks_per_sm = blocks / d->num_sms;
    out->warps_per_sm = out->blocks_per_sm * warps_per_block;
    out->active_blocks_per_sm = active_blocks(d, threads, (int)k->u.kernel.registers_per_thread, smem);
    double resident = out->blocks_per_sm < out->active_blocks_per_sm ? out->blocks_per_sm : out->active_blocks_per_sm;
    out->est_achieved_occupancy_pct = 100.0 * resident * warps_per_block * d->warp_size / d->max_threads_per_sm;
    if (out->est_achieved_occupancy_pct > 100.0)
        out->est_achieved_occupancy_pct = 100.0;
    return 0;
}
