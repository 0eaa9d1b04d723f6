// sizing.h - how a scenario sizes one GPU's cache, and the per-step numbers
// derived from it (L1 reserve, prefetch budget).
//
// The simulator and the runtime size their cache managers here, so that
// both make the same decisions from the same scenario.
#ifndef KS_SIZING_H
#define KS_SIZING_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "rng.h"
#include "scenario.h"

// Level of detail (detail.layers): the cache manager's groups are the
// simulated layers, each standing for layer_scale consecutive layers of the
// model; a block of a group holds those layers' KV of its tokens (its bytes
// are layer_scale layers'), so capacities, migrations and bytes stay the
// model's while the blocks handled shrink by layer_scale. Full detail:
// groups = model.layers, layer_scale = 1.
struct ks_step_sizing {
    uint64_t block_bytes[KS_TIERS]; // bytes of one block of one group in each tier (compression shrinks L2, L3)
    uint64_t token_bytes;           // KV bytes of one token, all layers
    uint64_t admit_blocks;          // blocks of admitted requests (at full length) one GPU may hold, per group
    uint64_t l1_pages;              // L1 pages per GPU
    uint32_t groups;                // layers simulated: the cache manager's groups
    uint32_t layer_scale;           // model layers each simulated layer stands for
    uint32_t floor_blocks;          // blocks that carry a full-detail batch's bytes: cache.migration_batch /
                                    // layer_scale, at least 1 (the least a step's budget moves)
};

// The model layer whose selections group g simulates for request `id` when
// each group stands for `scale` layers (ks_step_sizing.layer_scale): one of
// them, drawn by a hash of the request and the group, so that over a batch
// every layer of a group is drawn alike and a group's misses are, in
// expectation, the mean of its layers' (one layer for all would carry that
// layer's locality: the loaded cluster's group of layers 24-31 missed half
// as much at its middle layer as at full detail).
static inline uint32_t ks_step_layer_of(uint32_t scale, uint32_t g, uint64_t id)
{
    return g * scale + (scale > 1 ? (uint32_t)(ks_rng_mix(id * 0x10001u + g) % scale) : 0);
}

// Blocks of one layer that `tokens` tokens fill: ceil(tokens / block_size).
uint32_t ks_step_blocks(const struct ks_scenario *s, uint64_t tokens);

// Fills the cache manager's parameters (cp->seed is the scenario's; GPU i
// of a cluster adds i) and *z. KS_OK, or KS_EINVAL with the reason in err
// (L1 smaller than one block).
int ks_step_size(const struct ks_scenario *s, struct ks_cache_params *cp, struct ks_step_sizing *z, char *err,
                 size_t len);

// A decode step's L1 reserve (ks_cache_set_reserve) for n_act admitted
// requests: one page per request and group (with speculative decoding, as
// many as the tokens a step may keep can open), at most a quarter of L1.
uint32_t ks_step_reserve(const struct ks_scenario *s, const struct ks_step_sizing *z, uint32_t n_act);

// A decode step's prefetch budget (ks_cache_plan) when its selections read
// kv_bytes: what the host link carries while HBM reads them, at least one
// full migration batch.
uint64_t ks_step_budget(const struct ks_scenario *s, const struct ks_step_sizing *z, double kv_bytes);

#endif
