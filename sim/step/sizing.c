// sizing.c - how a scenario sizes one GPU's cache (see sizing.h).
#include "sizing.h"

#include <math.h>
#include <stdio.h>

uint32_t ks_step_blocks(const struct ks_scenario *s, uint64_t tokens)
{
    uint32_t bs = s->cache.block_size;
    return (uint32_t)((tokens + bs - 1) / bs);
}

int ks_step_size(const struct ks_scenario *s, struct ks_cache_params *cp, struct ks_step_sizing *z, char *err,
                 size_t len)
{
    ks_cache_params_default(cp);
    uint64_t tb = s->model.arch.gpu_kv_token_bytes; // one GPU of its rank
    z->token_bytes = tb * s->model.layers;
    z->groups = s->detail.layers ? s->detail.layers : s->model.layers;
    z->layer_scale = s->model.layers / z->groups;
    z->floor_blocks = s->cache.migration_batch > z->layer_scale ? s->cache.migration_batch / z->layer_scale : 1;
    z->block_bytes[KS_L1] = tb * s->cache.block_size * z->layer_scale;
    uint64_t low = s->cache.compression == KS_COMPRESSION_INT8 ? (z->block_bytes[KS_L1] + 1) / 2 : z->block_bytes[KS_L1];
    z->block_bytes[KS_L2] = z->block_bytes[KS_L3] = low;
    uint64_t bb = z->block_bytes[KS_L1];
    double hbm_free = ks_scenario_kv_room(s);
    double l1 = s->cache.l1.is_share ? hbm_free : s->cache.l1.value;
    double l2 = s->cache.l2.is_share ? s->cache.l2.value * (double)s->platform.l2 : s->cache.l2.value;
    l2 /= s->platform.gpus_per_node; // host DRAM is shared by the node's GPUs
    uint64_t l2p = (uint64_t)(l2 / (double)z->block_bytes[KS_L2]);
    // admission: the batch's blocks may exceed L1 by the share's inverse (or
    // fill L1 and L2 when L1 is in bytes). An indexer's keys (or page
    // summaries) of every admitted token stay in HBM beside L1's pages: ib
    // bytes per admitted block.
    int share = s->cache.l1.is_share && s->cache.l1.value > 0;
    double ib = (double)s->cache.block_size * ks_arch_scan_bytes(&s->model.arch) * z->layer_scale;
    double l1p_real = ib == 0 ? l1 / (double)bb
                      : share ? l1 / ((double)bb + ib / s->cache.l1.value)
                              : (l1 - (double)l2p * ib) / ((double)bb + ib);
    uint64_t l1p = l1p_real > 0 ? (uint64_t)l1p_real : 0;
    if (l1p == 0) {
        if (ib > 0)
            snprintf(err, len, "cache.l1: less than one %llu-byte block per GPU beside the index keys or "
                     "page summaries of the admitted requests (model.indexer, sparse.summaries)", (unsigned long long)bb);
        else
            snprintf(err, len, "cache.l1: less than one %llu-byte block per GPU", (unsigned long long)bb);
        return KS_EINVAL;
    }
    z->admit_blocks = share ? (uint64_t)((double)l1p / s->cache.l1.value) : l1p + l2p;
    if (s->cache.organisation == KS_ORG_PER_REQUEST) {
        // device buffers (cache.h): L1 is all the KV may use (cache.l1 in
        // bytes, or as a share the whole room), cut into buffers of B pages;
        // the host holds every block, so it admits: host pages, ratio x L1's
        // when host_to_device_ratio is set. An indexer's keys (or page
        // summaries) of every admitted token stay in HBM beside the buffers.
        uint64_t B = ks_step_blocks(s, s->cache.device_buffer_size);
        double ratio = s->cache.host_to_device_ratio, dev = share ? hbm_free : l1;
        l1p_real = ib == 0      ? dev / (double)bb
                   : ratio > 0 ? dev / ((double)bb + ratio * ib)
                               : (dev - (double)l2p * ib) / (double)bb;
        l1p = l1p_real > 0 ? (uint64_t)l1p_real / B * B : 0;
        if (l1p < B * z->groups) {
            snprintf(err, len, "cache.device_buffer_size: L1 holds %llu pages per GPU beside the index keys or "
                     "page summaries of the admitted requests, less than one request's %llu-page buffers in "
                     "each of %u layers",
                     (unsigned long long)l1p, (unsigned long long)B, z->groups);
            return KS_EINVAL;
        }
        if (ratio > 0)
            l2p = (uint64_t)(ratio * (double)l1p);
        z->admit_blocks = l2p;
        cp->buffer_blocks = (uint32_t)B;
    }
    cp->count_per_req = s->cache.gather_warps > 0; // only a gather limited per request reads it
    // L3: the node's drives (or the remote pool) shared by its GPUs; without
    // a capacity, room for twice what the admitted requests can hold
    uint64_t l3p = s->cache.l3 == KS_L3_NONE ? 0 : 2 * z->admit_blocks + 1024;
    double l3_bytes = s->cache.l3 == KS_L3_SSD      ? (double)s->platform.ssd.bytes * s->platform.ssd.count
                      : s->cache.l3 == KS_L3_REMOTE ? (double)s->platform.remote.bytes / s->platform.nodes
                                                    : 0;
    if (l3_bytes > 0)
        l3p = (uint64_t)(l3_bytes / s->platform.gpus_per_node / (double)z->block_bytes[KS_L3]);
    uint64_t cap = KS_PAGE_MAX;
    cp->tier_blocks[KS_L1] = (uint32_t)(l1p < cap ? l1p : cap);
    z->l1_pages = cp->tier_blocks[KS_L1];
    cp->tier_blocks[KS_L2] = (uint32_t)(l2p < cap ? l2p : cap);
    cp->tier_blocks[KS_L3] = (uint32_t)(l3p < cap ? l3p : cap);
    uint64_t ids = (uint64_t)cp->tier_blocks[0] + cp->tier_blocks[1] + cp->tier_blocks[2] +
                   (uint64_t)KS_CHUNK * z->groups * 64; // room for partly used chunks
    cp->n_blocks = (uint32_t)(ids < (UINT32_C(1) << 31) - KS_CHUNK ? ids : (UINT32_C(1) << 31) - KS_CHUNK);
    for (int t = 0; t < KS_TIERS; t++)
        cp->block_bytes[t] = (uint32_t)z->block_bytes[t];
    cp->groups = z->groups;
    cp->heat_half_life = s->cache.heat_half_life;
    cp->prefetch_window = s->cache.prefetch_window;
    // a batch carries one layer group's blocks (migrate.c), as many as at full
    // detail: it stands for layer_scale batches, one per layer of the group
    // (a block holds layer_scale layers' bytes), and the lanes copy it as
    // those (ks_step_job_split); the least a step moves stays full detail's bytes
    cp->migration_batch = s->cache.migration_batch;
    cp->warm_floor = z->floor_blocks;
    cp->evict = s->cache.evict;
    cp->seed = s->seed;
    return KS_OK;
}

uint32_t ks_step_reserve(const struct ks_scenario *s, const struct ks_step_sizing *z, uint32_t n_act)
{
    // m tokens kept in a step (speculative decoding: up to ceil(accept_length))
    // open at most ceil(m / block) blocks
    uint32_t m = (s->speculative.accept_milli + 999) / 1000;
    uint32_t opened = m > 1 ? (m - 1) / s->cache.block_size + 1 : 1;
    uint64_t reserve = (uint64_t)n_act * z->groups * opened, quarter = z->l1_pages / 4;
    return (uint32_t)(reserve < quarter ? reserve : quarter);
}

uint64_t ks_step_budget(const struct ks_scenario *s, const struct ks_step_sizing *z, double kv_bytes)
{
    double link_step = (double)s->platform.pcie_bw * (s->platform.hbm_bw > 0 ? kv_bytes / s->platform.hbm_bw : 0);
    return (uint64_t)fmax(link_step, (double)z->block_bytes[KS_L1] * z->floor_blocks);
}
