// scenario.c - the scenario schema, overrides, profile merge, validation.
//
// The schema is one flat table of fields, each with its dotted path, type,
// unit, default and range, and its place in struct ks_scenario; tables are
// implied by the paths. Everything else walks it: the unknown-field check and
// its suggestions, the paths --set may name, the profile's figures (the
// fields marked `figure`, read from the profile unless the scenario gives
// them), defaults, conversion and ks_scenario_foreach.
//
// Order of work: run the file (luatab), apply --set, reject unknown fields,
// load and check the profile, convert every field, then the consistency
// rules; a stage whose input had errors still runs, the consistency rules
// only run on a scenario whose fields all converted.
#define _POSIX_C_SOURCE 200809L // strdup

#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "luatab.h"
#include "status.h"
#include "units.h"

// The build names the source tree's folders and the installed ones.
#if !defined(KS_LUA_SRC_DIR) || !defined(KS_LUA_INSTALL_DIR)
#error "the build defines KS_LUA_SRC_DIR and KS_LUA_INSTALL_DIR"
#endif
#if !defined(KS_PROFILE_SRC_DIR) || !defined(KS_PROFILE_INSTALL_DIR)
#error "the build defines KS_PROFILE_SRC_DIR and KS_PROFILE_INSTALL_DIR"
#endif
#define KS_LUA_DIRS KS_LUA_SRC_DIR ";" KS_LUA_INSTALL_DIR
#define KS_PROFILE_DIRS KS_PROFILE_SRC_DIR ";" KS_PROFILE_INSTALL_DIR

enum ftype {
    T_STR,     // char *; "" default = optional
    T_CHOICE,  // int, index into choices
    T_U32,     // uint32_t in unit
    T_U64,     // uint64_t in unit
    T_REAL,    // double in unit
    T_AMOUNT,  // struct ks_scenario_amount: bytes, or "N%" as a share
    T_DIST,    // struct ks_dist: a token count or {kind = ..., ...}
    T_PROFILE, // char *: a profile name or an inline table
};

struct field {
    const char *path;
    enum ftype type;
    enum ks_unit unit;
    size_t off;                 // in struct ks_scenario
    const char *def;            // default as written in a scenario; NULL = required; "" = optional
    int positive;               // must be more than 0
    double max;                 // inclusive upper bound in base units; 0 = none
    const char *const *choices; // T_CHOICE: NULL-terminated
    int figure;                 // a platform figure: the profile may give it
};

// Bounds a run would refuse later (or never reach), checked at load so that
// `scenario check` refuses what `run` refuses, with the reason.
// duration: SimGrid keeps time in a double and times events to 1 ns
// (precision/timing); up to 30 days a double still resolves 0.6 ns, and a
// longer run (1e308 s never ends) is better made of shorter ones. A run under
// 1 ms ends before one decode step of the models kvstrata simulates
// (0.27 ms for the smallest test model, milliseconds for real ones), so it
// would report zeros as measurements.
#define DURATION_MIN 1e-3
#define DURATION_MAX (30 * 86400.0)
#define DURATION_WHY "a run lasts from 1 ms, about one decode step, to 30 days, while SimGrid's clock resolves 1 ns"
// The simulated platform (sim/engine/platform.c, ks_platform_check) and the
// cache manager (sim/cache/cache.c, check_params) refuse larger values.
#define PLATFORM_MAX_NODES 100000
#define PLATFORM_MAX_GPUS 1024 // per node
#define PLATFORM_MAX_SSDS 1024 // per node, when L3 is on SSD
#define PREFETCH_MAX 1024      // blocks per miss
#define PLATFORM_WHY "the simulated platform holds at most 100000 nodes, 1024 GPUs and 1024 SSDs per node"
// The engine starts 1 + KS_STEP_LANES (4) actors per decode GPU and one per
// prefill GPU (sim/engine/engine.c); SimGrid measured 100000 actors at 23 s
// and 5.8 GB on this project's 2-core, 24 GiB machine (SIMGRID.md), so more
// would not fit it (a prefill pool of 1e9 GPUs ran out of memory mappings).
#define ACTORS_MAX 100000
#define ACTORS_PER_GPU 5

// Bounds with a reason, beyond a field's own `positive` and `max`.
struct bound {
    const char *path;
    double min, max; // inclusive, in base units; 0 = none
    const char *why; // shown with a refusal
};
static const struct bound bounds[] = {
    {"duration", DURATION_MIN, DURATION_MAX, DURATION_WHY},
    {"platform.nodes", 0, PLATFORM_MAX_NODES, PLATFORM_WHY},
    {"platform.gpus_per_node", 0, PLATFORM_MAX_GPUS, PLATFORM_WHY},
    {"cache.prefetch_window", 0, PREFETCH_MAX, "the cache manager prefetches at most 1024 neighbours of a miss"},
};

// The cluster network's shape. The platform (sim/engine/platform.h) joins the nodes'
// NICs through one non-blocking core, which is what a single switch (star) and
// a full-bisection fat tree give; oversubscribed or direct topologies (torus,
// dragonfly) are not modelled, so they are not offered.
static const char *const topologies[] = {"star", "fat_tree", NULL};
static const char *const dtypes[] = {"fp16", "bf16", "fp8", "int8", "fp32", NULL};
// parallel.dispatch_dtype: 0 as comm_dtype, else dtypes[i - 1]
static const char *const dispatch_dtypes[] = {"comm_dtype", "fp16", "bf16", "fp8", "int8", "fp32", NULL};
static const char *const attentions[] = {"gqa", "mla", NULL};            // enum ks_attention
static const char *const embeddings[] = {"untied", "tied", NULL};        // model.tied_embeddings
static const char *const sched_kinds[] = {"fused", "serial", NULL};      // enum ks_sched_kind
static const char *const reserves[] = {"full", "estimate", NULL};        // enum ks_reserve
static const int dtype_size[] = {2, 2, 1, 1, 4}; // bytes, by enum ks_dtype
static const char *const arrivals[] = {"poisson", "closed", "trace", NULL};
static const char *const policies[] = {"dense", "window", "stride", "random", "topk", "retrieval", "mixed",
                                       "trace", "model", "dsa", NULL}; // enum ks_sparse_policy
static const char *const synth_presets[] = {"stable", "drifting", "noisy", NULL};
static const char *const kernel_time_sources[] = {"profile", "trace", NULL}; // KS_KERNEL_TIME_*
static const char *const summary_kinds[] = {"none", "minmax", NULL};          // KS_SUMMARIES_*
static const char *const l3s[] = {"ssd", "remote", "none", NULL};
// order of enum ks_evict_policy; "lua function" is shown for a Lua function, never typed
static const char *const evicts[] = {"heat", "lru", "lfu", "belady", "lua function", "fifo", "random", NULL};
static const char *const organisations[] = {"pool", "per_request", NULL}; // enum ks_organisation
static const char *const accountings[] = {"aggregate", "per_block", NULL}; // enum ks_accounting
static const char *const compressions[] = {"none", "int8", NULL};
static const char *const copies[] = {"batch", "per_item", "gather", NULL}; // enum ks_copy
static const char *const layer_prefetches[] = {"none", "previous", NULL};  // enum ks_layer_prefetch
static const char *const follow_modes[] = {"batches", "time", NULL};       // enum ks_follow_mode
static const char *const routers[] = {"round_robin", "least_loaded", "prefix_affinity", NULL}; // enum ks_router
static const char *const rdmas[] = {"host", "gpudirect", NULL};            // platform.rdma (gpudirect)
static const char *const overlaps[] = {"none", "two_batch", NULL};        // enum ks_overlap
static const char *const rank_steps[] = {"independent", "lockstep", NULL}; // enum ks_ranks
static const char *const prefill_modes[] = {"colocated", "disaggregated", NULL}; // enum ks_prefill_mode
static const char *const dist_kinds[] = {"constant", "uniform", "lognormal", "normal", "trace", NULL};
// The fields each distribution takes, by kind, and the ones it needs.
static const char *const dist_takes[] = {"kind value", "kind min max", "kind mu sigma min max",
                                         "kind mean stddev min max", "kind file"};
static const char *const dist_needs[] = {"value", "min max", "mu sigma", "mean stddev", "file"};
static const char *const dist_keys[] = {"kind", "value", "min", "max", "mu", "sigma", "mean", "stddev", "file", NULL};
static const char *const figure_kinds[] = {"datasheet", "datasheet-derived", "measured (published)", "measured",
                                           "assumed", NULL};
static const char *const profile_meta[] = {"name", "part", "notes", "cpu", NULL};

#define OFF(m) offsetof(struct ks_scenario, m)
#define B KS_UNIT_BYTES
#define BW KS_UNIT_BANDWIDTH
#define TM KS_UNIT_TIME
#define CN KS_UNIT_COUNT

static const struct field fields[] = {
    {"name", T_STR, CN, OFF(name), "", 0, 0, NULL, 0},
    {"seed", T_U64, CN, OFF(seed), "1", 0, 0, NULL, 0},
    {"duration", T_REAL, TM, OFF(duration), "60s", 1, 0, NULL, 0},
    {"platform.nodes", T_U32, CN, OFF(platform.nodes), "1", 1, 0, NULL, 0},
    {"platform.gpus_per_node", T_U32, CN, OFF(platform.gpus_per_node), "8", 1, 0, NULL, 0},
    {"platform.profile", T_PROFILE, CN, OFF(platform.profile), NULL, 0, 0, NULL, 0},
    {"platform.hbm_bytes", T_U64, B, OFF(platform.hbm_bytes), NULL, 1, 0, NULL, 1},
    {"platform.hbm_bw", T_REAL, BW, OFF(platform.hbm_bw), NULL, 1, 0, NULL, 1},
    {"platform.pcie_bw", T_REAL, BW, OFF(platform.pcie_bw), NULL, 1, 0, NULL, 1},
    {"platform.pcie_lat", T_REAL, TM, OFF(platform.pcie_lat), NULL, 0, 0, NULL, 1},
    {"platform.copy_overhead", T_REAL, TM, OFF(platform.copy_overhead), NULL, 0, 0, NULL, 1},
    {"platform.nvlink_bw", T_REAL, BW, OFF(platform.nvlink_bw), NULL, 0, 0, NULL, 1},
    {"platform.gpus_per_switch", T_U32, CN, OFF(platform.gpus_per_switch), NULL, 1, 0, NULL, 1},
    {"platform.l2", T_U64, B, OFF(platform.l2), NULL, 1, 0, NULL, 1},
    {"platform.dram_bw", T_REAL, BW, OFF(platform.dram_bw), NULL, 1, 0, NULL, 1},
    {"platform.ssd.count", T_U32, CN, OFF(platform.ssd.count), NULL, 0, 0, NULL, 1},
    {"platform.ssd.read_bw", T_REAL, BW, OFF(platform.ssd.read_bw), NULL, 1, 0, NULL, 1},
    {"platform.ssd.write_bw", T_REAL, BW, OFF(platform.ssd.write_bw), NULL, 1, 0, NULL, 1},
    {"platform.ssd.lat", T_REAL, TM, OFF(platform.ssd.lat), NULL, 0, 0, NULL, 1},
    {"platform.network.topology", T_CHOICE, CN, OFF(platform.network.topology), NULL, 0, 0, topologies, 1},
    {"platform.network.bw", T_REAL, BW, OFF(platform.network.bw), NULL, 1, 0, NULL, 1},
    {"platform.network.lat", T_REAL, TM, OFF(platform.network.lat), NULL, 0, 0, NULL, 1},
    {"platform.remote.bw", T_REAL, BW, OFF(platform.remote.bw), "", 1, 0, NULL, 1},
    {"platform.remote.lat", T_REAL, TM, OFF(platform.remote.lat), "", 0, 0, NULL, 1},
    {"platform.remote.bytes", T_U64, B, OFF(platform.remote.bytes), "", 1, 0, NULL, 1},
    {"platform.flops", T_REAL, KS_UNIT_FLOPS, OFF(platform.flops), NULL, 1, 0, NULL, 1},
    {"model.layers", T_U32, CN, OFF(model.layers), "32", 1, 0, NULL, 0},
    {"model.kv_heads", T_U32, CN, OFF(model.kv_heads), "8", 1, 0, NULL, 0},
    {"model.head_dim", T_U32, CN, OFF(model.head_dim), "128", 1, 0, NULL, 0},
    {"model.dtype", T_CHOICE, CN, OFF(model.dtype), "fp16", 0, 0, dtypes, 0},
    {"model.weight_bytes", T_U64, B, OFF(model.weight_bytes), "", 0, 0, NULL, 0},
    {"model.max_context", T_U32, CN, OFF(model.max_context), "131072", 1, 0, NULL, 0},
    {"workload.arrival.kind", T_CHOICE, CN, OFF(workload.arrival.kind), "poisson", 0, 0, arrivals, 0},
    {"workload.arrival.rate", T_REAL, KS_UNIT_RATE, OFF(workload.arrival.rate), "1/s", 1, 0, NULL, 0},
    {"workload.arrival.concurrency", T_U32, CN, OFF(workload.arrival.concurrency), "1", 1, 0, NULL, 0},
    {"workload.arrival.file", T_STR, CN, OFF(workload.arrival.file), "", 0, 0, NULL, 0},
    {"workload.prompt_tokens", T_DIST, CN, OFF(workload.prompt_tokens), "4096", 0, 0, NULL, 0},
    {"workload.output_tokens", T_DIST, CN, OFF(workload.output_tokens), "256", 0, 0, NULL, 0},
    {"workload.shared_prefix.tokens", T_U32, CN, OFF(workload.shared_prefix.tokens), "0", 0, 0, NULL, 0},
    {"workload.shared_prefix.groups", T_U32, CN, OFF(workload.shared_prefix.groups), "1", 1, 0, NULL, 0},
    {"workload.shared_prefix.fraction", T_REAL, KS_UNIT_FRACTION, OFF(workload.shared_prefix.fraction), "0", 0, 1,
     NULL, 0},
    {"workload.sessions.turns", T_U32, CN, OFF(workload.sessions.turns), "1", 1, 0, NULL, 0},
    {"workload.sessions.think_time", T_REAL, TM, OFF(workload.sessions.think_time), "0s", 0, 0, NULL, 0},
    {"workload.requests", T_U64, CN, OFF(workload.requests), "0", 0, 0, NULL, 0},
    {"sparse.policy", T_CHOICE, CN, OFF(sparse.policy), "window", 0, 0, policies, 0},
    {"sparse.budget_tokens", T_U32, CN, OFF(sparse.budget_tokens), "2048", 0, 0, NULL, 0},
    {"sparse.sink_blocks", T_U32, CN, OFF(sparse.sink_blocks), "1", 0, 0, NULL, 0},
    {"sparse.window_blocks", T_U32, CN, OFF(sparse.window_blocks), "4", 0, 0, NULL, 0},
    {"sparse.stride", T_U32, CN, OFF(sparse.stride), "8", 1, 0, NULL, 0},
    {"cache.block_size", T_U32, CN, OFF(cache.block_size), "32", 1, 0, NULL, 0},
    {"cache.l1", T_AMOUNT, B, OFF(cache.l1), "85%", 1, 0, NULL, 0},
    {"cache.l2", T_AMOUNT, B, OFF(cache.l2), "90%", 1, 0, NULL, 0},
    {"cache.l3", T_CHOICE, CN, OFF(cache.l3), "ssd", 0, 0, l3s, 0},
    {"cache.evict", T_CHOICE, CN, OFF(cache.evict), "heat", 0, 0, evicts, 0},
    {"cache.heat_half_life", T_U32, CN, OFF(cache.heat_half_life), "256", 1, 0, NULL, 0},
    {"cache.prefetch_window", T_U32, CN, OFF(cache.prefetch_window), "4", 0, 0, NULL, 0},
    {"cache.migration_batch", T_U32, CN, OFF(cache.migration_batch), "32", 1, 0, NULL, 0},
    {"cache.compression", T_CHOICE, CN, OFF(cache.compression), "none", 0, 0, compressions, 0},
    {"slo.tpot_p99", T_REAL, TM, OFF(slo.tpot_p99), "", 1, 0, NULL, 0},
    {"slo.tpot_mean", T_REAL, TM, OFF(slo.tpot_mean), "", 1, 0, NULL, 0},
    {"slo.ttft_p99", T_REAL, TM, OFF(slo.ttft_p99), "", 1, 0, NULL, 0},
    {"slo.ttft_mean", T_REAL, TM, OFF(slo.ttft_mean), "", 1, 0, NULL, 0},
    {"slo.itl_p99", T_REAL, TM, OFF(slo.itl_p99), "", 1, 0, NULL, 0},
    {"slo.itl_mean", T_REAL, TM, OFF(slo.itl_mean), "", 1, 0, NULL, 0},
    {"slo.e2el_p99", T_REAL, TM, OFF(slo.e2el_p99), "", 1, 0, NULL, 0},
    {"slo.e2el_mean", T_REAL, TM, OFF(slo.e2el_mean), "", 1, 0, NULL, 0},
    {"slo.ttft", T_REAL, TM, OFF(slo.ttft), "", 1, 0, NULL, 0},
    {"slo.tpot", T_REAL, TM, OFF(slo.tpot), "", 1, 0, NULL, 0},
    {"slo.e2el", T_REAL, TM, OFF(slo.e2el), "", 1, 0, NULL, 0},
    {"router", T_CHOICE, CN, OFF(router), "round_robin", 0, 0, routers, 0},
    // appended after the first schema (tests name fields by index)
    {"platform.sched_overhead", T_REAL, TM, OFF(platform.sched_overhead), "0s", 0, 0, NULL, 1},
    {"platform.table_rebuild", T_REAL, TM, OFF(platform.table_rebuild), "0s", 0, 0, NULL, 1},
    {"platform.prefill_efficiency", T_REAL, KS_UNIT_FRACTION, OFF(platform.prefill_efficiency), "1", 1, 1, NULL, 1},
    {"model.q_heads", T_U32, CN, OFF(model.q_heads), "32", 1, 0, NULL, 0},
    {"prefill.mode", T_CHOICE, CN, OFF(prefill.mode), "colocated", 0, 0, prefill_modes, 0},
    {"prefill.gpus", T_U32, CN, OFF(prefill.gpus), "8", 1, 0, NULL, 0},
    {"prefill.chunk", T_U32, CN, OFF(prefill.chunk), "8192", 0, 0, NULL, 0},
    {"platform.ssd.bytes", T_U64, B, OFF(platform.ssd.bytes), "0", 0, 0, NULL, 1},
    {"sparse.file", T_STR, CN, OFF(sparse.file), "", 0, 0, NULL, 0},
    {"sparse.fit", T_STR, CN, OFF(sparse.fit), "", 0, 0, NULL, 0},
    {"sparse.preset", T_CHOICE, CN, OFF(sparse.preset), "drifting", 0, 0, synth_presets, 0},
    {"sparse.attention_layers", T_U32, CN, OFF(sparse.attention_layers), "4", 1, 0, NULL, 0},
    {"sparse.switch_prob", T_REAL, KS_UNIT_FRACTION, OFF(sparse.switch_prob), "0.05", 0, 1, NULL, 0},
    {"platform.ssd.read_op_time", T_REAL, TM, OFF(platform.ssd.read_op_time), "0s", 0, 0, NULL, 1},
    {"platform.ssd.write_op_time", T_REAL, TM, OFF(platform.ssd.write_op_time), "0s", 0, 0, NULL, 1},
    {"sparse.kernel_time", T_CHOICE, CN, OFF(sparse.kernel_time), "profile", 0, 0, kernel_time_sources, 0},
    {"sparse.summaries", T_CHOICE, CN, OFF(sparse.summaries), "none", 0, 0, summary_kinds, 0},
    // the synthetic attention's locality between and beyond the presets;
    // left out: the preset's (NAN); topic_switch's bound is synth.h's with its 32 topics
    {"sparse.topic_switch", T_REAL, KS_UNIT_FRACTION, OFF(sparse.topic_switch), "", 0, 0.96875, NULL, 0},
    {"sparse.retrieval_prob", T_REAL, KS_UNIT_FRACTION, OFF(sparse.retrieval_prob), "", 0, 1, NULL, 0},
    // the architecture (arch.h); the defaults are Llama-3-8B's (lua/models.lua cites its config)
    {"model.attention", T_CHOICE, CN, OFF(model.attention), "gqa", 0, 0, attentions, 0},
    {"model.q_lora_rank", T_U32, CN, OFF(model.q_lora_rank), "0", 0, 0, NULL, 0},
    {"model.kv_lora_rank", T_U32, CN, OFF(model.kv_lora_rank), "512", 1, 0, NULL, 0},
    {"model.qk_nope_dim", T_U32, CN, OFF(model.qk_nope_dim), "128", 0, 0, NULL, 0},
    {"model.qk_rope_dim", T_U32, CN, OFF(model.qk_rope_dim), "64", 0, 0, NULL, 0},
    {"model.v_head_dim", T_U32, CN, OFF(model.v_head_dim), "128", 1, 0, NULL, 0},
    {"model.hidden", T_U32, CN, OFF(model.hidden), "4096", 1, 0, NULL, 0},
    {"model.vocab", T_U32, CN, OFF(model.vocab), "128256", 1, 0, NULL, 0},
    {"model.intermediate", T_U32, CN, OFF(model.intermediate), "14336", 1, 0, NULL, 0},
    {"model.embeddings", T_CHOICE, CN, OFF(model.tied_embeddings), "untied", 0, 0, embeddings, 0},
    {"model.weight_dtype", T_CHOICE, CN, OFF(model.weight_dtype), "bf16", 0, 0, dtypes, 0},
    {"model.kv_token_bytes", T_U64, B, OFF(model.kv_token_bytes), "", 1, 0, NULL, 0},
    {"model.indexer.heads", T_U32, CN, OFF(model.indexer.heads), "0", 0, 0, NULL, 0},
    {"model.indexer.dim", T_U32, CN, OFF(model.indexer.dim), "128", 1, 0, NULL, 0},
    {"model.indexer.dtype", T_CHOICE, CN, OFF(model.indexer.dtype), "fp8", 0, 0, dtypes, 0},
    {"model.indexer.token_bytes", T_U64, B, OFF(model.indexer.token_bytes), "", 1, 0, NULL, 0},
    {"model.moe.experts", T_U32, CN, OFF(model.moe.experts), "0", 0, 0, NULL, 0},
    {"model.moe.active", T_U32, CN, OFF(model.moe.active), "8", 1, 0, NULL, 0},
    {"model.moe.shared", T_U32, CN, OFF(model.moe.shared), "0", 0, 0, NULL, 0},
    {"model.moe.intermediate", T_U32, CN, OFF(model.moe.intermediate), "2048", 1, 0, NULL, 0},
    {"model.moe.first_dense", T_U32, CN, OFF(model.moe.first_dense), "0", 0, 0, NULL, 0},
    {"parallel.tp", T_U32, CN, OFF(parallel.tp), "1", 1, 0, NULL, 0},
    {"parallel.dp_attention", T_U32, CN, OFF(parallel.dp_attention), "1", 1, 0, NULL, 0},
    {"parallel.ep", T_U32, CN, OFF(parallel.ep), "1", 1, 0, NULL, 0},
    {"parallel.dense_tp", T_U32, CN, OFF(parallel.dense_tp), "0", 0, 0, NULL, 0},
    {"parallel.overlap", T_CHOICE, CN, OFF(parallel.overlap), "none", 0, 0, overlaps, 0},
    {"platform.rdma", T_CHOICE, CN, OFF(platform.gpudirect), "host", 0, 0, rdmas, 0},
    {"parallel.comm_dtype", T_CHOICE, CN, OFF(parallel.comm_dtype), "bf16", 0, 0, dtypes, 0},
    {"parallel.dispatch_dtype", T_CHOICE, CN, OFF(parallel.dispatch_dtype), "comm_dtype", 0, 0, dispatch_dtypes, 0},
    {"platform.flops_fp8", T_REAL, KS_UNIT_FLOPS, OFF(platform.flops_fp8), "", 1, 0, NULL, 1},
    {"platform.copy_item_h2d", T_REAL, TM, OFF(platform.copy_item_h2d), "", 1, 0, NULL, 1},
    {"platform.copy_item_d2h", T_REAL, TM, OFF(platform.copy_item_d2h), "", 1, 0, NULL, 1},
    {"platform.gather_h2d_bw", T_REAL, BW, OFF(platform.gather_h2d_bw), "", 1, 0, NULL, 1},
    {"platform.gather_d2h_bw", T_REAL, BW, OFF(platform.gather_d2h_bw), "", 1, 0, NULL, 1},
    {"platform.host_read_lat", T_REAL, TM, OFF(platform.host_read_lat), "", 1, 0, NULL, 1},
    {"cache.copy", T_CHOICE, CN, OFF(cache.copy), "batch", 0, 0, copies, 0},
    {"cache.gather_warps", T_U32, CN, OFF(cache.gather_warps), "0", 0, 0, NULL, 0},
    // layer-wise prefetch: a layer's top-k predicted by the previous layer's (issue 18)
    {"cache.layer_prefetch", T_CHOICE, CN, OFF(cache.layer_prefetch), "none", 0, 0, layer_prefetches, 0},
    {"cache.gather_load_bytes", T_U32, CN, OFF(cache.gather_load_bytes), "8", 1, 0, NULL, 0},
    {"scheduler.kind", T_CHOICE, CN, OFF(scheduler.kind), "fused", 0, 0, sched_kinds, 0},
    {"scheduler.max_batched_tokens", T_U32, CN, OFF(scheduler.max_batched_tokens), "8192", 0, 0, NULL, 0},
    {"scheduler.max_running_requests", T_U32, CN, OFF(scheduler.max_running_requests), "0", 0, 0, NULL, 0},
    {"scheduler.mem_fraction", T_REAL, KS_UNIT_FRACTION, OFF(scheduler.mem_fraction), "", 1, 1, NULL, 0},
    // L1 as SGLang's HiSparse organises it (cache.h, "Device buffers"); its defaults are HiSparse's
    {"cache.organisation", T_CHOICE, CN, OFF(cache.organisation), "pool", 0, 0, organisations, 0},
    {"cache.device_buffer_size", T_U32, CN, OFF(cache.device_buffer_size), "4096", 1, 0, NULL, 0},
    {"cache.host_to_device_ratio", T_REAL, KS_UNIT_NUMBER, OFF(cache.host_to_device_ratio), "0", 0, 0, NULL, 0},
    // cold regions warm up aside (the seed's section 5.5; off by default)
    {"cache.cold_share", T_REAL, KS_UNIT_FRACTION, OFF(cache.cold_share), "0", 0, 1, NULL, 0},
    // levels of detail (issue 19): layers, and GPUs, simulated in full, the others following them
    {"detail.layers", T_U32, CN, OFF(detail.layers), "0", 0, 0, NULL, 0},
    {"detail.gpus", T_U32, CN, OFF(detail.gpus), "0", 0, 0, NULL, 0},
    {"detail.nodes", T_U32, CN, OFF(detail.nodes), "0", 0, 0, NULL, 0},
    {"detail.follow", T_CHOICE, CN, OFF(detail.follow), "batches", 0, 0, follow_modes, 0},
    // the same figures either way; per_block checks aggregate (tests/engine)
    {"cache.accounting", T_CHOICE, CN, OFF(cache.accounting), "aggregate", 0, 0, accountings, 0},
    // speculative decoding (multi-token prediction): tokens verified and kept per step
    {"speculative.draft_tokens", T_U32, CN, OFF(speculative.draft_tokens), "0", 0, 0, NULL, 0},
    {"speculative.accept_length", T_REAL, KS_UNIT_NUMBER, OFF(speculative.accept_length), "1", 1, 0, NULL, 0},
    {"speculative.draft_layers", T_U32, CN, OFF(speculative.draft_layers), "1", 0, 0, NULL, 0},
    // admission as SGLang's (sim/step/active.h): the output's reservation, estimated
    {"scheduler.reserve", T_CHOICE, CN, OFF(scheduler.reserve), "full", 0, 0, reserves, 0},
    {"scheduler.new_token_ratio", T_REAL, KS_UNIT_FRACTION, OFF(scheduler.new_token_ratio), "0.7", 1, 1, NULL, 0},
    {"scheduler.reserve_clip", T_U32, CN, OFF(scheduler.reserve_clip), "4096", 1, 0, NULL, 0},
    // the engine's fixed time per layer of a forward pass (sim/step/cost.h)
    {"scheduler.layer_overhead", T_REAL, TM, OFF(scheduler.layer_overhead), "0s", 0, 0, NULL, 0},
    // the attention ranks of an expert group: on their own, or together (sim/engine/lockstep.c)
    {"parallel.ranks", T_CHOICE, CN, OFF(parallel.ranks), "lockstep", 0, 0, rank_steps, 0},
};
enum { N_FIELDS = sizeof fields / sizeof fields[0] };
#define PLATFORM "platform."

enum { DEFAULT_MAX_ERRORS = 20, PATH_MAX_LEN = 256 };

struct ctx {
    const char *file;            // the scenario
    const struct ks_scenario_params *p;
    struct ks_luatab *tree;      // the scenario's table
    struct ks_luatab *profile;   // the profile's table (its own tree, or inside tree when inline)
    struct ks_luatab *own_profile; // the profile tree when loaded from a file
    char *profile_file;
    char *err;
    size_t len, used;
    int n_errors, max_errors, dropped, oom;
    struct ks_scenario *s;
    const char *at_file[N_FIELDS]; // where each field was written (borrowed from the trees)
    int at_line[N_FIELDS];
    int is_set[N_FIELDS];          // 0: optional field left out
    int from_default[N_FIELDS];
};

static void report(struct ctx *x, const char *file, int line, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void report(struct ctx *x, const char *file, int line, const char *path, const char *fmt, ...)
{
    if (x->n_errors++ >= x->max_errors) {
        x->dropped++;
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[512];
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d", file, line);
    else
        snprintf(where, sizeof where, "%s", file);
    if (x->used < x->len) {
        int n = snprintf(x->err + x->used, x->len - x->used, "%s%s: %s: %s", x->used ? "\n" : "", where, path, msg);
        x->used = n > 0 && (size_t)n < x->len - x->used ? x->used + (size_t)n : x->len;
    }
}

// Reports at a node's place (file and line), or the scenario's when NULL.
#define REPORT_AT(x, node, path, ...) \
    report((x), (node) ? (node)->file : (x)->file, (node) ? (node)->line : 0, (path), __VA_ARGS__)

// ---- names: the schema's tables and fields, suggestions ------------------

static const struct field *field_at(const char *path)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (strcmp(fields[i].path, path) == 0)
            return &fields[i];
    return NULL;
}

static int field_index(const char *path)
{
    const struct field *f = field_at(path);
    KS_ASSERT(f);
    return (int)(f - fields);
}

// Is path a table of the schema (a proper prefix of some field's path)?
// With figures_only, of a figure's path relative to "platform.".
static int is_table(const char *path, int figures_only)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < N_FIELDS; i++) {
        const char *fp = fields[i].path;
        if (figures_only) {
            if (!fields[i].figure)
                continue;
            fp += strlen(PLATFORM);
        }
        if ((n == 0 || (strncmp(fp, path, n) == 0 && fp[n] == '.')))
            return 1;
    }
    return 0;
}

static const struct field *figure_at(const char *rel)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (fields[i].figure && strcmp(fields[i].path + strlen(PLATFORM), rel) == 0)
            return &fields[i];
    return NULL;
}

static int in_list(const char *const *list, const char *s)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0)
            return i;
    return -1;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

// Writes "; did you mean 'x'?" for the known name nearest `key` among the
// children of `parent` (a schema table; figures relative to "platform."
// with figures_only), or the full path of a field of that name elsewhere,
// into buf; "" when nothing is near.
static void suggest(const char *parent, const char *key, int figures_only, char *buf, size_t len)
{
    size_t pl = strlen(parent), best = (size_t)-1;
    char name[64] = "", other[PATH_MAX_LEN] = "";
    buf[0] = '\0';
    for (size_t i = 0; i < N_FIELDS; i++) {
        const char *fp = fields[i].path;
        if (figures_only) {
            if (!fields[i].figure)
                continue;
            fp += strlen(PLATFORM);
        }
        const char *last = strrchr(fp, '.');
        if (strcmp(last ? last + 1 : fp, key) == 0 && !other[0])
            snprintf(other, sizeof other, "%s", fp);
        if (pl && (strncmp(fp, parent, pl) != 0 || fp[pl] != '.'))
            continue;
        const char *child = fp + (pl ? pl + 1 : 0);
        size_t cl = strcspn(child, ".");
        char c[64];
        snprintf(c, sizeof c, "%.*s", (int)cl, child);
        size_t d = edit_distance(c, key);
        if (d < best) {
            best = d;
            snprintf(name, sizeof name, "%s", c);
        }
    }
    size_t kl = strlen(key);
    if (name[0] && best <= (kl > 6 ? kl / 3 : 2))
        snprintf(buf, len, "; did you mean '%s'?", name);
    else if (other[0])
        snprintf(buf, len, "; did you mean '%s'?", other);
}

// parent.key into out; a path too long to hold is cut (and then not found).
static void join(char *out, size_t len, const char *parent, const char *key)
{
    if (snprintf(out, len, "%s%s%s", parent, *parent ? "." : "", key) >= (int)len)
        out[len - 1] = '\0';
}

// ---- --set ---------------------------------------------------------------

// May --set name this path? A field, or a field of a distribution.
static int settable(const char *path)
{
    if (field_at(path))
        return 1;
    const char *dot = strrchr(path, '.');
    if (!dot)
        return 0;
    char parent[PATH_MAX_LEN];
    snprintf(parent, sizeof parent, "%.*s", (int)(dot - path), path);
    const struct field *f = field_at(parent);
    return f && f->type == T_DIST && in_list(dist_keys, dot + 1) >= 0;
}

// A node for the text of a --set value: a number when it reads as one,
// true/false, else a string.
static struct ks_luatab *set_value(const char *key, const char *v)
{
    struct ks_luatab *n = ks_luatab_new(key, KS_LUATAB_STRING, NULL);
    if (!n)
        return NULL;
    size_t digits = strspn(v + (*v == '-'), "0123456789");
    char *end = NULL;
    double d = strtod(v, &end);
    int whole = *v && digits && digits == strlen(v + (*v == '-'));
    errno = 0;
    long long i = whole ? strtoll(v, NULL, 10) : 0;
    if (whole && errno == 0) {
        n->type = KS_LUATAB_INT;
        n->i = i;
        n->d = (double)n->i;
    } else if (whole) {
        // beyond int64 (a seed up to 2^64 - 1): kept as its text, which the
        // field's reader parses exactly or refuses as too large
        if (!(n->s = strdup(v))) {
            ks_luatab_free(n);
            return NULL;
        }
    } else if (*v && end && *end == '\0' && isfinite(d) && strspn(v, "+-.0123456789eE") == strlen(v)) {
        n->type = KS_LUATAB_REAL;
        n->d = d;
    } else if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        n->type = KS_LUATAB_BOOL;
        n->b = v[0] == 't';
    } else if (!(n->s = strdup(v))) {
        ks_luatab_free(n);
        return NULL;
    }
    return n;
}

static void apply_set(struct ctx *x, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char path[PATH_MAX_LEN];
    if (!eq || eq == arg) {
        report(x, "--set", 0, arg, "expected path=value (e.g. cache.block_size=16)");
        return;
    }
    snprintf(path, sizeof path, "%.*s", (int)(eq - arg), arg);
    if (!settable(path) && is_table(path, 0)) {
        const char *example = NULL;
        size_t pl = strlen(path);
        for (size_t i = 0; i < N_FIELDS && !example; i++)
            if (strncmp(fields[i].path, path, pl) == 0 && fields[i].path[pl] == '.')
                example = fields[i].path;
        report(x, "--set", 0, path, "is a table, not a value; set one of its fields (e.g. --set %s=...)", example);
        return;
    }
    if (!settable(path)) {
        char hint[PATH_MAX_LEN + 32] = "", parent[PATH_MAX_LEN];
        const char *dot = strrchr(path, '.');
        snprintf(parent, sizeof parent, "%.*s", dot ? (int)(dot - path) : 0, path);
        suggest(parent, dot ? dot + 1 : path, 0, hint, sizeof hint);
        report(x, "--set", 0, path, "unknown field%s", hint);
        return;
    }
    struct ks_luatab *t = x->tree;
    char key[PATH_MAX_LEN];
    const char *p = path;
    for (;;) {
        size_t k = strcspn(p, ".");
        snprintf(key, sizeof key, "%.*s", (int)k, p);
        struct ks_luatab **link = &t->child;
        while (*link && strcmp((*link)->key, key) != 0)
            link = &(*link)->next;
        if (p[k] == '\0') { // the field itself: replace or append
            struct ks_luatab *n = set_value(key, eq + 1);
            if (!n) {
                x->oom = 1;
                return;
            }
            if (*link) {
                n->next = (*link)->next;
                (*link)->next = NULL;
                ks_luatab_free(*link);
            }
            *link = n;
            return;
        }
        if (!*link && !(*link = ks_luatab_new(key, KS_LUATAB_TABLE, NULL))) {
            x->oom = 1;
            return;
        }
        if ((*link)->type != KS_LUATAB_TABLE) {
            char at[PATH_MAX_LEN];
            snprintf(at, sizeof at, "%.*s", (int)(p + k - path), path);
            report(x, "--set", 0, path, "%s is a %s (%s:%d), not a table", at, ks_luatab_type_name(*link),
                   (*link)->file, (*link)->line);
            return;
        }
        t = *link;
        p += k + 1;
    }
}

// ---- unknown fields ------------------------------------------------------

static void check_dist_keys(struct ctx *x, const struct ks_luatab *n, const char *path)
{
    for (const struct ks_luatab *ch = n->child; ch; ch = ch->next)
        if (in_list(dist_keys, ch->key) < 0) {
            char p[PATH_MAX_LEN];
            join(p, sizeof p, path, ch->key);
            REPORT_AT(x, ch, p, "unknown field; a distribution takes kind, value, min, max, mu, sigma, mean, "
                                "stddev or file");
        }
}

static void check_unknown(struct ctx *x, const struct ks_luatab *t, const char *path)
{
    for (const struct ks_luatab *ch = t->child; ch; ch = ch->next) {
        char p[PATH_MAX_LEN];
        join(p, sizeof p, path, ch->key);
        const struct field *f = field_at(p);
        if (strcmp(p, "platform.kernel_time") == 0 || strcmp(p, "platform.host_wake") == 0)
            continue; // a table of its own: read_kernel_time, read_host_wake
        if (f) {
            if (f->type == T_DIST && ch->type == KS_LUATAB_TABLE)
                check_dist_keys(x, ch, p);
            continue; // a table in place of a value is refused when it is read
        }
        if (is_table(p, 0)) {
            if (ch->type != KS_LUATAB_TABLE)
                REPORT_AT(x, ch, p, "is a %s; expected a table", ks_luatab_type_name(ch));
            else
                check_unknown(x, ch, p);
            continue;
        }
        char hint[PATH_MAX_LEN + 32];
        suggest(path, ch->key, 0, hint, sizeof hint);
        REPORT_AT(x, ch, p, "unknown field%s", hint);
    }
}

// ---- the profile ---------------------------------------------------------

// Turns a figure table {value = V, source = S, kind = K} into the value V
// carrying S and K. Returns 0, or -1 after reporting.
static int unwrap(struct ctx *x, struct ks_luatab *n, const char *label)
{
    struct ks_luatab *v = NULL, *src = NULL, *kind = NULL;
    int bad = 0;
    char p[PATH_MAX_LEN];
    for (struct ks_luatab *ch = n->child; ch; ch = ch->next) {
        join(p, sizeof p, label, ch->key);
        if (strcmp(ch->key, "value") == 0)
            v = ch;
        else if (strcmp(ch->key, "source") == 0)
            src = ch;
        else if (strcmp(ch->key, "kind") == 0)
            kind = ch;
        else {
            REPORT_AT(x, ch, p, "unknown field; a figure is {value = ..., source = \"...\", kind = \"...\"}");
            bad = 1;
        }
    }
    if (!src || src->type != KS_LUATAB_STRING || !src->s[0]) {
        REPORT_AT(x, src ? src : n, label, "a figure needs its source, a non-empty string");
        bad = 1;
    }
    if (!kind || kind->type != KS_LUATAB_STRING || in_list(figure_kinds, kind->s) < 0) {
        REPORT_AT(x, kind ? kind : n, label,
                  "a figure needs its kind: \"datasheet\", \"datasheet-derived\", \"measured (published)\", "
                  "\"measured\" or \"assumed\"");
        bad = 1;
    }
    if (v->type == KS_LUATAB_TABLE) {
        REPORT_AT(x, v, label, "a figure's value is a number or a string with its unit");
        bad = 1;
    }
    if (bad)
        return -1;
    n->type = v->type;
    n->b = v->b;
    n->i = v->i;
    n->d = v->d;
    n->s = v->s;
    v->s = NULL;
    n->source = src->s;
    src->s = NULL;
    n->kind = kind->s;
    kind->s = NULL;
    ks_luatab_free(n->child);
    n->child = NULL;
    return 0;
}

// Checks a profile table: known figures, each with source and kind (always
// in a file; in an inline profile a plain value is accepted too).
static void check_profile(struct ctx *x, struct ks_luatab *t, const char *rel, const char *prefix, int need_sources)
{
    for (struct ks_luatab *ch = t->child; ch; ch = ch->next) {
        char r[PATH_MAX_LEN], label[PATH_MAX_LEN * 2];
        join(r, sizeof r, rel, ch->key);
        snprintf(label, sizeof label, "%s%s", prefix, r);
        if (!rel[0] && (strcmp(ch->key, "kernel_time") == 0 || strcmp(ch->key, "host_wake") == 0))
            continue; // a table of its own: read_kernel_time, read_host_wake
        if (!rel[0] && in_list(profile_meta, ch->key) >= 0) {
            if (ch->type != KS_LUATAB_STRING)
                REPORT_AT(x, ch, label, "is a %s; expected a string", ks_luatab_type_name(ch));
            continue;
        }
        if (figure_at(r)) {
            if (ch->type == KS_LUATAB_TABLE && ks_luatab_get(ch, "value"))
                unwrap(x, ch, label);
            else if (ch->type == KS_LUATAB_TABLE)
                REPORT_AT(x, ch, label, "a figure is {value = ..., source = \"...\", kind = \"...\"}");
            else if (need_sources)
                REPORT_AT(x, ch, label, "needs its source: write {value = ..., source = \"...\", kind = \"datasheet\"}");
            continue;
        }
        if (is_table(r, 1)) {
            if (ch->type != KS_LUATAB_TABLE)
                REPORT_AT(x, ch, label, "is a %s; expected a table", ks_luatab_type_name(ch));
            else
                check_profile(x, ch, r, prefix, need_sources);
            continue;
        }
        char hint[PATH_MAX_LEN + 32];
        suggest(rel, ch->key, 1, hint, sizeof hint);
        REPORT_AT(x, ch, label, "unknown field%s", hint);
    }
}

// Finds name.lua in the ';'-separated dirs; a heap path or NULL.
static char *find_profile(const char *dirs, const char *name)
{
    for (const char *d = dirs; *d;) {
        size_t k = strcspn(d, ";");
        size_t n = k + strlen(name) + 8;
        char *path = malloc(n);
        if (!path)
            return NULL;
        snprintf(path, n, "%.*s/%s.lua", (int)k, d, name);
        FILE *f = k ? fopen(path, "r") : NULL;
        if (f) {
            fclose(f);
            return path;
        }
        free(path);
        d += k + (d[k] == ';');
    }
    return NULL;
}

static void load_profile(struct ctx *x)
{
    struct ks_luatab *n = ks_luatab_find(x->tree, "platform.profile");
    if (!n) {
        report(x, x->file, 0, "platform.profile",
               "missing; name a profile under calib/profiles (e.g. \"h200_sxm_pcie5\") or give a table");
        return;
    }
    if (n->type == KS_LUATAB_TABLE) {
        x->profile = n;
        check_profile(x, n, "", "platform.profile.", 0);
        return;
    }
    if (n->type != KS_LUATAB_STRING) {
        REPORT_AT(x, n, "platform.profile", "is a %s; expected a profile name or a table", ks_luatab_type_name(n));
        return;
    }
    if (!n->s[0] || strspn(n->s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(n->s)) {
        REPORT_AT(x, n, "platform.profile", "'%s' is not a profile name (letters, digits, '_' and '-')", n->s);
        return;
    }
    const char *dirs = x->p->profile_dirs ? x->p->profile_dirs : KS_PROFILE_DIRS;
    x->profile_file = find_profile(dirs, n->s);
    if (!x->profile_file) {
        REPORT_AT(x, n, "platform.profile", "no profile '%s' in %s", n->s, dirs);
        return;
    }
    char msg[4096];
    int st = ks_luatab_load(x->profile_file, x->p->lua_dirs ? x->p->lua_dirs : KS_LUA_DIRS, &x->own_profile, msg,
                            sizeof msg);
    if (st == KS_ENOMEM) {
        x->oom = 1;
        return;
    }
    if (st != KS_OK) {
        REPORT_AT(x, n, "platform.profile", "the profile does not load: %s", msg);
        return;
    }
    x->profile = x->own_profile;
    check_profile(x, x->profile, "", "", 1);
}

// ---- conversion ----------------------------------------------------------

static int get_real(struct ctx *x, const struct ks_luatab *n, const char *label, enum ks_unit unit, double *out)
{
    char why[512];
    if (n->type == KS_LUATAB_INT || n->type == KS_LUATAB_REAL) {
        if (ks_units_check(n->d, unit, why, sizeof why) == 0) {
            *out = n->d;
            return 0;
        }
    } else if (n->type == KS_LUATAB_STRING) {
        if (ks_units_parse(n->s, unit, out, why, sizeof why) == 0)
            return 0;
    } else {
        snprintf(why, sizeof why, "is a %s; expected a %s", ks_luatab_type_name(n), ks_units_kind_name(unit));
    }
    REPORT_AT(x, n, label, "%s", why);
    return -1;
}

static int get_u64(struct ctx *x, const struct ks_luatab *n, const char *label, enum ks_unit unit, uint64_t *out)
{
    char why[512];
    if (n->type == KS_LUATAB_INT) {
        if (n->i >= 0) {
            *out = (uint64_t)n->i;
            return 0;
        }
        snprintf(why, sizeof why, "%" PRId64 " is negative", n->i);
    } else if (n->type == KS_LUATAB_REAL) {
        if (ks_units_check(n->d, KS_UNIT_COUNT, why, sizeof why) == 0) {
            if (n->d <= 0x1p53) {
                *out = (uint64_t)n->d;
                return 0;
            }
            snprintf(why, sizeof why,
                     "%g is too large to be exact; write it as an integer (a string such as \"18446744073709551615\" "
                     "above 2^63 - 1)",
                     n->d);
        }
    } else if (n->type == KS_LUATAB_STRING) {
        if (ks_units_parse_u64(n->s, unit, out, why, sizeof why) == 0)
            return 0;
    } else {
        snprintf(why, sizeof why, "is a %s; expected %s", ks_luatab_type_name(n),
                 unit == KS_UNIT_COUNT ? "a whole number" : ks_units_kind_name(unit));
    }
    REPORT_AT(x, n, label, "%s", why);
    return -1;
}

static int get_choice(struct ctx *x, const struct ks_luatab *n, const char *label, const char *const *choices,
                      int *out)
{
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; choices[i] && used < sizeof list; i++)
        if (choices != evicts || i != KS_EVICT_CALLBACK) // a Lua function is not typed
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", choices[i]);
    if (choices == evicts && used < sizeof list)
        snprintf(list + used, sizeof list - used, " or a Lua function");
    if (n->type != KS_LUATAB_STRING) {
        REPORT_AT(x, n, label, "is a %s; expected one of %s", ks_luatab_type_name(n), list);
        return -1;
    }
    int k = in_list(choices, n->s);
    if (k < 0) {
        REPORT_AT(x, n, label, "'%s' is not one of %s", n->s, list);
        return -1;
    }
    *out = k;
    return 0;
}

// Range rules of a field, on a value in base units.
static int in_range(struct ctx *x, const struct field *f, const struct ks_luatab *n, const char *label, double v)
{
    char buf[64];
    if (f->positive && v <= 0) {
        REPORT_AT(x, n, label, "must be more than 0");
        return -1;
    }
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        const struct bound *b = &bounds[i];
        if (strcmp(b->path, f->path) != 0)
            continue;
        if ((b->min > 0 && v < b->min) || (b->max > 0 && v > b->max)) {
            ks_units_format(v < b->min ? b->min : b->max, f->unit, buf, sizeof buf);
            REPORT_AT(x, n, label, "must be at %s %s (%s)", v < b->min ? "least" : "most", buf, b->why);
            return -1;
        }
    }
    if (f->max > 0 && v > f->max) {
        ks_units_format(f->max, f->unit == KS_UNIT_BYTES && f->type == T_AMOUNT ? KS_UNIT_FRACTION : f->unit, buf,
                        sizeof buf);
        REPORT_AT(x, n, label, "must be at most %s", buf);
        return -1;
    }
    if (f->type == T_U32 && v > UINT32_MAX) {
        REPORT_AT(x, n, label, "is too large (at most %" PRIu32 ")", UINT32_MAX);
        return -1;
    }
    return 0;
}

// Resolves a path relative to the scenario's folder; a heap string.
static char *resolve_path(const struct ctx *x, const char *path)
{
    const char *slash = strrchr(x->file, '/');
    size_t dl = path[0] == '/' || !slash ? 0 : (size_t)(slash - x->file) + 1;
    size_t n = dl + strlen(path) + 1;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%.*s%s", (int)dl, x->file, path);
    return r;
}

// 1 when f holds an HDF5 superblock signature: at byte 0, or at 512, 1024,
// 2048, ... after a user block.
static int has_hdf5_signature(FILE *f)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char b[8];
    for (long off = 0; off >= 0; off = off ? 2 * off : 512)
        if (fseek(f, off, SEEK_SET) != 0 || fread(b, 1, sizeof b, f) != sizeof b)
            return 0;
        else if (memcmp(b, sig, sizeof sig) == 0)
            return 1;
    return 0;
}

// A file the scenario names, resolved from its folder and readable; with
// hdf5 set, an HDF5 file (a trace: what it holds is checked when the run
// loads it).
static int get_file(struct ctx *x, const struct ks_luatab *n, const char *label, int hdf5, char **out)
{
    if (n->type != KS_LUATAB_STRING || !n->s[0]) {
        REPORT_AT(x, n, label, "is a %s; expected a file name", n->type == KS_LUATAB_STRING ? "empty string"
                                                                                            : ks_luatab_type_name(n));
        return -1;
    }
    char *path = resolve_path(x, n->s);
    if (!path) {
        x->oom = 1;
        return -1;
    }
    FILE *f = fopen(path, "rb");
    int e = f ? 0 : errno;
    if (f && getc(f) == EOF && ferror(f))
        e = errno; // a folder opens, then reads EISDIR
    int foreign = f && !e && hdf5 && !has_hdf5_signature(f);
    if (f)
        fclose(f);
    if (e || foreign) {
        if (e)
            REPORT_AT(x, n, label, "cannot read '%s': %s", path, strerror(e));
        else
            REPORT_AT(x, n, label, "'%s' is not an HDF5 file (a trace: kvstrata trace record, or results/README.md)",
                      path);
        free(path);
        return -1;
    }
    free(*out);
    *out = path;
    return 0;
}

static int get_count(struct ctx *x, const struct ks_luatab *n, const char *label, double *out)
{
    uint64_t u;
    if (get_u64(x, n, label, KS_UNIT_COUNT, &u) != 0)
        return -1;
    *out = (double)u;
    return 0;
}

static void get_dist(struct ctx *x, const struct ks_luatab *n, const char *label, struct ks_dist *d)
{
    free(d->file);
    *d = (struct ks_dist){.kind = KS_DIST_CONSTANT, .min = 1};
    if (n->type != KS_LUATAB_TABLE) {
        if (get_count(x, n, label, &d->value) == 0 && d->value < 1)
            REPORT_AT(x, n, label, "must be at least 1 token");
        d->min = d->max = d->value;
        return;
    }
    char p[PATH_MAX_LEN];
    join(p, sizeof p, label, "kind");
    const struct ks_luatab *kn = ks_luatab_get(n, "kind");
    int kind;
    if (!kn) {
        REPORT_AT(x, n, p, "missing; a distribution is a number or {kind = \"constant\"|\"uniform\"|"
                           "\"lognormal\"|\"normal\"|\"trace\", ...}");
        return;
    }
    if (get_choice(x, kn, p, dist_kinds, &kind) != 0)
        return;
    d->kind = (enum ks_dist_kind)kind;
    int bad = 0;
    for (const struct ks_luatab *ch = n->child; ch; ch = ch->next) {
        join(p, sizeof p, label, ch->key);
        char padded[64];
        snprintf(padded, sizeof padded, " %s ", ch->key);
        char takes[64];
        snprintf(takes, sizeof takes, " %s ", dist_takes[kind]);
        if (in_list(dist_keys, ch->key) < 0)
            continue; // reported as unknown already
        if (!strstr(takes, padded)) {
            REPORT_AT(x, ch, p, "a %s distribution takes only %s", dist_kinds[kind], dist_takes[kind]);
            bad = 1;
            continue;
        }
        const char *k = ch->key;
        int rc = 0;
        if (!strcmp(k, "value"))
            rc = get_count(x, ch, p, &d->value);
        else if (!strcmp(k, "min"))
            rc = get_count(x, ch, p, &d->min);
        else if (!strcmp(k, "max"))
            rc = get_count(x, ch, p, &d->max);
        else if (!strcmp(k, "mu"))
            rc = get_real(x, ch, p, KS_UNIT_NUMBER, &d->mu);
        else if (!strcmp(k, "sigma"))
            rc = get_real(x, ch, p, KS_UNIT_NUMBER, &d->sigma);
        else if (!strcmp(k, "mean"))
            rc = get_real(x, ch, p, KS_UNIT_NUMBER, &d->mean);
        else if (!strcmp(k, "stddev"))
            rc = get_real(x, ch, p, KS_UNIT_NUMBER, &d->stddev);
        else if (!strcmp(k, "file"))
            rc = get_file(x, ch, p, 0, &d->file);
        bad |= rc != 0;
    }
    char needs[64];
    snprintf(needs, sizeof needs, "%s", dist_needs[kind]);
    for (char *w = strtok(needs, " "); w; w = strtok(NULL, " "))
        if (!ks_luatab_get(n, w)) {
            join(p, sizeof p, label, w);
            REPORT_AT(x, n, p, "missing; a %s distribution needs %s", dist_kinds[kind], dist_needs[kind]);
            bad = 1;
        }
    if (bad)
        return;
    if (d->kind == KS_DIST_CONSTANT) {
        if (d->value < 1)
            REPORT_AT(x, n, label, "must be at least 1 token");
        d->min = d->max = d->value;
    }
    if ((d->kind == KS_DIST_LOGNORMAL && d->sigma <= 0) || (d->kind == KS_DIST_NORMAL && d->stddev <= 0))
        REPORT_AT(x, n, label, "the spread (%s) must be more than 0", d->kind == KS_DIST_NORMAL ? "stddev" : "sigma");
    if (d->min < 1)
        REPORT_AT(x, n, label, "min must be at least 1 token");
    if (d->max > 0 && d->min > d->max)
        REPORT_AT(x, n, label, "min (%.0f) is more than max (%.0f)", d->min, d->max);
}

static char *dup_checked(struct ctx *x, const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        x->oom = 1;
    return d;
}

// The profile's `cpu` (the machine it was measured on), when it says one.
static void read_profile_cpu(struct ctx *x)
{
    const struct ks_luatab *cpu = x->profile ? ks_luatab_get(x->profile, "cpu") : NULL;
    if (cpu && cpu->type == KS_LUATAB_STRING) // a string: check_profile refuses anything else
        x->s->platform.profile_cpu = dup_checked(x, cpu->s);
}

// Records where field i came from.
static void set_origin(struct ctx *x, int i, const struct ks_luatab *n, const char *how)
{
    struct ks_scenario_origin *o = &x->s->origin[i];
    char from[512];
    if (how)
        snprintf(from, sizeof from, "%s", how);
    else if (n->source && strncmp(fields[i].path, PLATFORM, strlen(PLATFORM)) == 0)
        snprintf(from, sizeof from, "profile %s", x->s->platform.profile ? x->s->platform.profile : "?");
    else if (n->line)
        snprintf(from, sizeof from, "%s:%d", n->file, n->line);
    else
        snprintf(from, sizeof from, "%s", n->file);
    o->from = dup_checked(x, from);
    o->source = dup_checked(x, n ? n->source : NULL);
    o->kind = dup_checked(x, n ? n->kind : NULL);
    x->at_file[i] = n ? n->file : x->file;
    x->at_line[i] = n ? n->line : 0;
}

// Converts one field from its node into the struct; 0 or -1 (reported).
// The fields a Lua function may stand for (a policy the engine calls): a
// function there sets what says so, and the engine fetches the function
// from the scenario file itself.
static int lua_function(struct ctx *x, const struct field *f, const struct ks_luatab *n)
{
    if (n->type != KS_LUATAB_OTHER || !n->s || strcmp(n->s, "function") != 0)
        return 0;
    if (f->off == OFF(cache.evict)) {
        x->s->cache.evict = KS_EVICT_CALLBACK;
        return 1;
    }
    if (f->off == OFF(cache.prefetch_window)) {
        x->s->cache.prefetch_lua = 1;
        x->s->cache.prefetch_window = 0;
        return 1;
    }
    return 0; // a function elsewhere: refused as the field's type says
}

static int convert(struct ctx *x, const struct field *f, const struct ks_luatab *n, const char *label)
{
    void *p = (char *)x->s + f->off;
    double v = 0;
    uint64_t u = 0;
    if (lua_function(x, f, n))
        return 0;
    switch (f->type) {
    case T_STR:
        if (strcmp(f->path, "workload.arrival.file") == 0)
            return get_file(x, n, label, 0, (char **)p);
        if (strcmp(f->path, "sparse.file") == 0 || strcmp(f->path, "sparse.fit") == 0)
            return get_file(x, n, label, 1, (char **)p);
        if (n->type != KS_LUATAB_STRING || !n->s[0]) {
            REPORT_AT(x, n, label, "is a %s; expected a non-empty string",
                      n->type == KS_LUATAB_STRING ? "empty string" : ks_luatab_type_name(n));
            return -1;
        }
        free(*(char **)p);
        *(char **)p = dup_checked(x, n->s);
        return 0;
    case T_CHOICE:
        if (get_choice(x, n, label, f->choices, (int *)p) != 0)
            return -1;
        if (f->choices == evicts && *(int *)p == KS_EVICT_CALLBACK) {
            REPORT_AT(x, n, label, "a Lua policy is a function: evict = function(b) return b.heat end");
            return -1;
        }
        return 0;
    case T_U32:
    case T_U64:
        if (get_u64(x, n, label, f->unit, &u) != 0 || in_range(x, f, n, label, (double)u) != 0)
            return -1;
        if (f->type == T_U32)
            *(uint32_t *)p = (uint32_t)u;
        else
            *(uint64_t *)p = u;
        return 0;
    case T_REAL:
        if (get_real(x, n, label, f->unit, &v) != 0 || in_range(x, f, n, label, v) != 0)
            return -1;
        *(double *)p = v;
        return 0;
    case T_AMOUNT: {
        struct ks_scenario_amount *a = p;
        if (n->type == KS_LUATAB_STRING && n->s[0] && n->s[strlen(n->s) - 1] == '%') {
            if (get_real(x, n, label, KS_UNIT_FRACTION, &v) != 0)
                return -1;
            a->is_share = 1;
        } else {
            char why[512];
            if (n->type == KS_LUATAB_STRING) { // a size, or else the share's form is named too
                if (ks_units_parse_u64(n->s, KS_UNIT_BYTES, &u, why, sizeof why) != 0) {
                    REPORT_AT(x, n, label, "%s, or a share such as \"85%%\"", why);
                    return -1;
                }
            } else if (get_u64(x, n, label, KS_UNIT_BYTES, &u) != 0) {
                return -1;
            }
            v = (double)u;
            a->is_share = 0;
        }
        if (in_range(x, f, n, label, v) != 0)
            return -1;
        a->value = v;
        return 0;
    }
    case T_DIST: {
        int before = x->n_errors;
        get_dist(x, n, label, p);
        return x->n_errors == before ? 0 : -1;
    }
    case T_PROFILE:
        free(*(char **)p);
        *(char **)p = dup_checked(x, n->type == KS_LUATAB_STRING ? n->s : "inline");
        return 0;
    }
    return -1;
}

static void convert_all(struct ctx *x)
{
    for (int i = 0; i < N_FIELDS; i++) {
        const struct field *f = &fields[i];
        struct ks_luatab *n = ks_luatab_find(x->tree, f->path);
        char label[PATH_MAX_LEN * 2];
        snprintf(label, sizeof label, "%s", f->path);
        if (!n && f->figure && x->profile) {
            const char *rel = f->path + strlen(PLATFORM);
            n = ks_luatab_find(x->profile, rel);
            if (n && n->type == KS_LUATAB_TABLE)
                continue; // a figure table that did not unwrap: reported
            if (n && x->profile == x->own_profile)
                snprintf(label, sizeof label, "%s", rel);
            else if (n)
                snprintf(label, sizeof label, "platform.profile.%s", rel);
        }
        // a model figure may cite the config it comes from, as a profile's do
        if (n && n->type == KS_LUATAB_TABLE && strncmp(f->path, "model.", 6) == 0 && ks_luatab_get(n, "value") &&
            unwrap(x, n, label) != 0)
            continue;
        if (n) {
            x->is_set[i] = 1;
            set_origin(x, i, n, n->file && strcmp(n->file, "--set") == 0 ? "--set" : NULL);
            convert(x, f, n, label);
            continue;
        }
        if (!f->def) {
            if (f->figure && !x->profile)
                continue; // no profile: reported once, by load_profile
            if (f->figure)
                report(x, x->profile_file ? x->profile_file : x->file, 0, f->path,
                       "missing; give it in the scenario or the profile");
            else if (f->type != T_PROFILE) // the profile's absence is reported once, by load_profile
                report(x, x->file, 0, f->path, "missing");
            continue;
        }
        if (!f->def[0]) { // optional and left out
            set_origin(x, i, NULL, "not set");
            continue;
        }
        struct ks_luatab *d = ks_luatab_new(f->path, KS_LUATAB_STRING, "default");
        if (!d || !(d->s = strdup(f->def))) {
            ks_luatab_free(d);
            x->oom = 1;
            return;
        }
        x->is_set[i] = 1;
        x->from_default[i] = 1;
        // NOTE: no node: d is freed below, and a later check of a default
        // (check_consistency's FAIL) is reported at the scenario
        set_origin(x, i, NULL, "default");
        convert(x, f, d, label);
        ks_luatab_free(d);
    }
}

// ---- the kernel-time table -------------------------------------------------

// Reads an array of positive numbers; its length, or -1 (reported).
static int read_array(struct ctx *x, const struct ks_luatab *t, const char *label, double *out, int cap)
{
    if (!t || t->type != KS_LUATAB_TABLE) {
        if (t)
            REPORT_AT(x, t, label, "is a %s; expected a list of numbers", ks_luatab_type_name(t));
        else
            report(x, x->file, 0, label, "missing; expected a list of numbers");
        return -1;
    }
    int n = 0;
    for (const struct ks_luatab *ch = t->child; ch; ch = ch->next, n++) {
        char want[16];
        snprintf(want, sizeof want, "[%d]", n + 1);
        if (strcmp(ch->key, want) != 0 || (ch->type != KS_LUATAB_INT && ch->type != KS_LUATAB_REAL) ||
            !(ch->d > 0) || !isfinite(ch->d) || n >= cap) {
            REPORT_AT(x, ch, label, "entry %s: expected a list of at most %d positive numbers", ch->key, cap);
            return -1;
        }
        out[n] = ch->d;
    }
    return n;
}

// A measured table: platform.NAME from the scenario, else NAME from the
// profile, {XS = {...}, seconds = {...}, source = "...", kind = "...", ...}
// with no key outside `keys` (`takes` lists them for the message). Reads XS
// and seconds (non-empty, one length, at most cap) into xs and ys. Returns
// their length; 0 when there is no table; -1 after reporting. *t, *label
// and lx (XS's path) are the table's; *source its source ("inline" when
// unnamed; a profile file must name it).
static int read_table(struct ctx *x, const char *name, const char *xs_key, const char *const *keys, const char *takes,
                      double *xs, double *ys, int cap, struct ks_luatab **t_out, char *label, char *lx,
                      const char **source)
{
    char scen[64];
    snprintf(scen, sizeof scen, "platform.%s", name);
    struct ks_luatab *t = x->tree ? ks_luatab_find(x->tree, scen) : NULL;
    snprintf(label, PATH_MAX_LEN, "%s", scen);
    int in_profile_file = 0;
    if (!t && x->profile) {
        t = ks_luatab_find(x->profile, name);
        snprintf(label, PATH_MAX_LEN, "%s%s", x->profile == x->own_profile ? "" : "platform.profile.", name);
        in_profile_file = t && x->profile == x->own_profile;
    }
    *t_out = t;
    if (!t)
        return 0;
    if (t->type != KS_LUATAB_TABLE) {
        REPORT_AT(x, t, label, "is a %s; expected {%s = {...}, seconds = {...}, source = ...}", ks_luatab_type_name(t),
                  xs_key);
        return -1;
    }
    for (const struct ks_luatab *ch = t->child; ch; ch = ch->next)
        if (in_list(keys, ch->key) < 0) {
            char p[PATH_MAX_LEN];
            join(p, sizeof p, label, ch->key);
            REPORT_AT(x, ch, p, "unknown field; %s takes %s", name, takes);
        }
    char ls[PATH_MAX_LEN];
    join(lx, PATH_MAX_LEN, label, xs_key);
    join(ls, sizeof ls, label, "seconds");
    int nx = read_array(x, ks_luatab_get(t, xs_key), lx, xs, cap);
    int ns = read_array(x, ks_luatab_get(t, "seconds"), ls, ys, cap);
    if (nx < 0 || ns < 0)
        return -1;
    if (nx != ns || nx == 0) {
        REPORT_AT(x, t, label, "%s and seconds must be non-empty lists of one length (%d and %d)", xs_key, nx, ns);
        return -1;
    }
    const struct ks_luatab *src = ks_luatab_get(t, "source");
    int named = src && src->type == KS_LUATAB_STRING && src->s[0];
    if (in_profile_file && !named) {
        REPORT_AT(x, t, label, "needs its source, a non-empty string");
        return -1;
    }
    *source = named ? src->s : "inline";
    return nx;
}

// kernel_time (read_table) with blocks = {...} and batch = N, and optional
// kv_heads, q_heads, head_dim, block_size that must match the model and
// cache, and backend, dtype (informative).
static void read_kernel_time(struct ctx *x)
{
    static const char *const keys[] = {"blocks", "seconds", "batch", "source", "kind", "backend", "dtype",
                                       "kv_heads", "q_heads", "head_dim", "block_size", NULL};
    enum { CAP = 256 };
    double b[CAP], sec[CAP];
    char label[PATH_MAX_LEN], lb[PATH_MAX_LEN];
    struct ks_luatab *t;
    const char *source;
    int nb = read_table(x, "kernel_time", "blocks", keys,
                        "blocks, seconds, batch, source, kind, backend, dtype, kv_heads, q_heads, head_dim, block_size",
                        b, sec, CAP, &t, label, lb, &source);
    if (nb <= 0)
        return;
    for (int i = 0; i < nb; i++)
        if (b[i] != floor(b[i]) || b[i] > UINT32_MAX || (i > 0 && b[i] <= b[i - 1])) {
            REPORT_AT(x, t, lb, "entry [%d]: block counts are whole numbers, strictly increasing", i + 1);
            return;
        }
    const struct ks_luatab *bt = ks_luatab_get(t, "batch");
    if (!bt || bt->type != KS_LUATAB_INT || bt->i < 1) {
        REPORT_AT(x, bt ? bt : t, label, "needs batch, the sequences per measured launch (an integer >= 1)");
        return;
    }
    const struct ks_scenario *s = x->s;
    const char *shape[] = {"kv_heads", "q_heads", "head_dim", "block_size"};
    const uint32_t have[] = {s->model.kv_heads, s->model.q_heads, s->model.head_dim, s->cache.block_size};
    for (int k = 0; k < 4; k++) {
        const struct ks_luatab *v = ks_luatab_get(t, shape[k]);
        if (v && v->type != KS_LUATAB_INT)
            REPORT_AT(x, v, label, "%s must be an integer; the scenario has %u", shape[k], have[k]);
        else if (v && v->i != (int64_t)have[k])
            REPORT_AT(x, v, label, "was measured with %s = %" PRId64 "; the scenario has %u", shape[k], v->i,
                      have[k]);
    }
    struct ks_kernel_time *kt = &x->s->platform.kernel_time;
    kt->blocks = malloc((size_t)nb * sizeof *kt->blocks);
    kt->seconds = malloc((size_t)nb * sizeof *kt->seconds);
    kt->source = dup_checked(x, source);
    if (!kt->blocks || !kt->seconds) {
        x->oom = 1;
        return;
    }
    for (int i = 0; i < nb; i++) {
        kt->blocks[i] = (uint32_t)b[i];
        kt->seconds[i] = sec[i];
    }
    kt->n = (uint32_t)nb;
    kt->batch = (uint32_t)bt->i;
}

// host_wake (read_table) with idle = {...}, strictly increasing.
static void read_host_wake(struct ctx *x)
{
    static const char *const keys[] = {"idle", "seconds", "source", "kind", NULL};
    enum { CAP = 64 };
    double idle[CAP], sec[CAP];
    char label[PATH_MAX_LEN], li[PATH_MAX_LEN];
    struct ks_luatab *t;
    const char *source;
    int ni = read_table(x, "host_wake", "idle", keys, "idle, seconds, source, kind", idle, sec, CAP, &t, label, li,
                        &source);
    if (ni <= 0)
        return;
    for (int i = 1; i < ni; i++)
        if (idle[i] <= idle[i - 1]) {
            REPORT_AT(x, t, li, "entry [%d]: idle times are strictly increasing", i + 1);
            return;
        }
    struct ks_host_wake *w = &x->s->platform.host_wake;
    w->idle = malloc((size_t)ni * sizeof *w->idle);
    w->seconds = malloc((size_t)ni * sizeof *w->seconds);
    w->source = dup_checked(x, source);
    if (!w->idle || !w->seconds) {
        x->oom = 1;
        return;
    }
    memcpy(w->idle, idle, (size_t)ni * sizeof *idle);
    memcpy(w->seconds, sec, (size_t)ni * sizeof *sec);
    w->n = (uint32_t)ni;
}

double ks_host_wake_time(const struct ks_host_wake *w, double idle)
{
    if (w->n == 0)
        return 0;
    if (idle <= w->idle[0])
        return w->seconds[0];
    for (uint32_t i = 1; i < w->n; i++)
        if (idle <= w->idle[i]) {
            double f = log(idle / w->idle[i - 1]) / log(w->idle[i] / w->idle[i - 1]);
            return w->seconds[i - 1] + f * (w->seconds[i] - w->seconds[i - 1]);
        }
    return w->seconds[w->n - 1];
}

// ---- consistency ---------------------------------------------------------

#define FAIL(x, path, ...) \
    report((x), (x)->at_file[field_index(path)], (x)->at_line[field_index(path)], (path), __VA_ARGS__)

uint64_t ks_dtype_bytes(enum ks_dtype d)
{
    return (unsigned)d < sizeof dtype_size / sizeof dtype_size[0] ? (uint64_t)dtype_size[d] : 2;
}

double ks_scenario_kv_room(const struct ks_scenario *s)
{
    double hbm = (double)s->platform.hbm_bytes;
    if (s->scheduler.mem_fraction > 0)
        hbm *= s->scheduler.mem_fraction;
    return hbm - s->model.arch.gpu_weight_bytes;
}

uint64_t ks_scenario_block_bytes(const struct ks_scenario *s)
{
    return (uint64_t)s->cache.block_size * s->model.arch.gpu_kv_token_bytes;
}

// The largest count a distribution yields, or `cap` when unbounded.
static double upper(const struct ks_dist *d, double cap)
{
    if (d->kind == KS_DIST_TRACE || d->max <= 0)
        return cap;
    return d->max;
}

uint32_t ks_scenario_sampled(const struct ks_scenario *s, struct ks_scenario *out)
{
    *out = *s;
    uint32_t k = s->detail.nodes, n = s->platform.nodes;
    if (k == 0 || k >= n || n % k != 0)
        return 1;
    uint32_t f = n / k;
    out->detail.nodes = 0;
    out->platform.nodes = k;
    out->platform.remote.bytes = s->platform.remote.bytes / f;
    out->workload.arrival.rate = s->workload.arrival.rate / f;
    out->workload.arrival.concurrency = s->workload.arrival.concurrency / f;
    out->workload.requests = s->workload.requests / f;
    out->prefill.gpus = s->prefill.gpus / f;
    out->workload.keep_one_in = f;
    return f;
}

uint32_t ks_scenario_decode_units(const struct ks_scenario *s)
{
    uint32_t rank = s->model.arch.attn_tp ? s->model.arch.attn_tp : 1;
    return s->platform.nodes * s->platform.gpus_per_node / rank;
}

uint64_t ks_scenario_step_blocks(const struct ks_scenario *s)
{
    uint64_t bs = s->cache.block_size, per_layer;
    if (s->sparse.policy == KS_SPARSE_DENSE) {
        double ctx = upper(&s->workload.prompt_tokens, s->model.max_context) +
                     upper(&s->workload.output_tokens, s->model.max_context);
        if (ctx > s->model.max_context)
            ctx = s->model.max_context;
        per_layer = ((uint64_t)ctx + bs - 1) / bs;
    } else {
        per_layer = (uint64_t)s->sparse.sink_blocks + s->sparse.window_blocks + (s->sparse.budget_tokens + bs - 1) / bs;
    }
    return per_layer * s->model.layers;
}

// scheduler.mem_fraction: L1 (the KV pool) is what that share of HBM holds
// after one GPU's weights, as SGLang's mem_fraction_static and vLLM's
// gpu_memory_utilization size it (the rest is for activations), and the
// batch is what it holds (ks_scenario_kv_room; L1 = 100% of it); it takes
// the place of cache.l1 in bytes. cache.l1 as a share may be given beside
// it: the share of the admitted requests' KV the pool holds (the batch may
// then outgrow the pool, its other blocks in L2, ESS's "sparse memory ratio").
static void pool_from_fraction(struct ctx *x)
{
    struct ks_scenario *s = x->s;
    if (!x->is_set[field_index("scheduler.mem_fraction")])
        return;
    int l1 = field_index("cache.l1");
    int l1_given = x->is_set[l1] && !x->from_default[l1];
    if (l1_given && !s->cache.l1.is_share) {
        FAIL(x, "cache.l1", "scheduler.mem_fraction sizes L1 (the KV pool): give one of them, or cache.l1 as a "
                            "share of the batch's KV");
        return;
    }
    if (ks_scenario_kv_room(s) <= 0) {
        char a[64];
        ks_units_format(s->model.arch.gpu_weight_bytes, KS_UNIT_BYTES, a, sizeof a);
        FAIL(x, "scheduler.mem_fraction", "%.4g of HBM holds no more than one GPU's %s of weights",
             s->scheduler.mem_fraction, a);
        return;
    }
    if (l1_given)
        return; // the pool, holding that share of the batch's KV
    // all of the pool, and no more requests admitted than their KV fills
    s->cache.l1 = (struct ks_scenario_amount){.is_share = 1, .value = 1};
    free(s->origin[l1].from);
    s->origin[l1].from = dup_checked(x, "the pool: scheduler.mem_fraction x platform.hbm_bytes - one GPU's weights");
}

// cache.copy: a mechanism needs its profile figures, both directions.
static void check_copy(struct ctx *x)
{
    const struct ks_scenario *s = x->s;
    if (s->cache.copy == KS_COPY_PER_ITEM && !(s->platform.copy_item_h2d > 0 && s->platform.copy_item_d2h > 0))
        FAIL(x, "cache.copy", "\"per_item\" needs platform.copy_item_h2d and copy_item_d2h (seconds per item copied "
             "on its own; the profile's or the scenario's)");
    if (s->cache.copy == KS_COPY_GATHER && !(s->platform.gather_h2d_bw > 0 && s->platform.gather_d2h_bw > 0))
        FAIL(x, "cache.copy", "\"gather\" needs platform.gather_h2d_bw and gather_d2h_bw (a gather kernel's rates; "
             "the profile's or the scenario's)");
    if (s->cache.gather_warps > 0 && s->cache.copy != KS_COPY_GATHER)
        FAIL(x, "cache.gather_warps", "applies to cache.copy = \"gather\" only (it is %s)",
             s->cache.copy == KS_COPY_PER_ITEM ? "\"per_item\"" : "\"batch\"");
    if (s->cache.layer_prefetch != KS_LAYER_PREFETCH_NONE && s->sparse.policy < KS_SPARSE_TOPK)
        FAIL(x, "cache.layer_prefetch", "applies to selections made layer by layer (sparse.policy topk, retrieval, "
             "mixed, trace, model or dsa): the others select once a step, and their copies start with the step");
    if (s->cache.gather_warps > 0 && !(s->platform.host_read_lat > 0))
        FAIL(x, "cache.gather_warps", "needs platform.host_read_lat (seconds a GPU load from pinned host memory "
             "takes to return; the profile's or the scenario's)");
}

// speculative: accept_length lies in [1, 1 + draft_tokens] with at most three
// decimals (a request keeps floor((n + 1) a) - floor(n a) tokens at its step
// n, counted exactly in thousandths); at most 15 draft tokens; Belady's
// next uses are counted in steps of one token.
#define SPEC_MAX_DRAFT 15
static void check_speculative(struct ctx *x)
{
    struct ks_scenario *s = x->s;
    struct ks_scenario_speculative *p = &s->speculative;
    double a = p->accept_length, milli = round(a * 1000);
    if (p->draft_tokens > SPEC_MAX_DRAFT)
        FAIL(x, "speculative.draft_tokens", "%" PRIu32 " is more than %d draft tokens a step", p->draft_tokens,
             SPEC_MAX_DRAFT);
    else if (a < 1 || a > 1 + p->draft_tokens)
        FAIL(x, "speculative.accept_length", "%g is not within 1 .. 1 + speculative.draft_tokens (%" PRIu32 "): "
             "a step keeps its verified token and at most every draft token", a, 1 + p->draft_tokens);
    else if (fabs(a * 1000 - milli) > 1e-6)
        FAIL(x, "speculative.accept_length", "%.9g has more than three decimals", a);
    else
        p->accept_milli = (uint32_t)milli;
    if (p->draft_tokens > 0 && s->cache.evict == KS_EVICT_BELADY)
        FAIL(x, "speculative.draft_tokens", "cache.evict = \"belady\" counts next uses in steps of one token: "
             "it needs speculative decoding off");
}

// cache.organisation = "per_request" (cache.h, "Device buffers"):
// - each request's buffer holds, in each layer, one step's selection
//   (ks_scenario_step_blocks / layers blocks): the blocks a step reads must
//   all be in L1 at once;
// - L1 (cache.l1 in bytes; as a share, all the HBM the KV may use) holds the
//   buffers of one request, every layer;
// - the host pool (host_to_device_ratio x L1, or cache.l2) fits in the
//   node's host DRAM share of one GPU;
// - no shared prefixes (SGLang runs HiSparse with its radix cache off);
// - host_to_device_ratio and cache.evict = "fifo" need it.
static void check_organisation(struct ctx *x)
{
    const struct ks_scenario *s = x->s;
    const struct ks_scenario_cache *k = &s->cache;
    if (k->organisation != KS_ORG_PER_REQUEST) {
        if (k->evict == KS_EVICT_FIFO)
            FAIL(x, "cache.evict", "\"fifo\" orders a request's device buffer: it needs cache.organisation = "
                 "\"per_request\"");
        if (k->host_to_device_ratio > 0)
            FAIL(x, "cache.host_to_device_ratio", "sizes the host pool of cache.organisation = \"per_request\"; "
                 "the pool's L2 is cache.l2");
        return;
    }
    uint64_t buf = (k->device_buffer_size + k->block_size - 1) / k->block_size;
    uint64_t layer_step = ks_scenario_step_blocks(s) / (s->model.layers ? s->model.layers : 1);
    if (buf < layer_step)
        FAIL(x, "cache.device_buffer_size", "%" PRIu32 " tokens (%" PRIu64 " blocks) hold less than one step's "
             "selection in a layer (%" PRIu64 " blocks: sink, window and sparse.budget_tokens; dense: the context)",
             k->device_buffer_size, buf, layer_step);
    double l1 = k->l1.is_share ? ks_scenario_kv_room(s) : k->l1.value;
    double one = (double)buf * (double)ks_scenario_block_bytes(s) * s->model.layers;
    char a[64], b[64];
    if (l1 > 0 && one > l1) {
        ks_units_format(one, KS_UNIT_BYTES, a, sizeof a);
        ks_units_format(l1, KS_UNIT_BYTES, b, sizeof b);
        FAIL(x, "cache.device_buffer_size", "one request's buffers (%s over %" PRIu32 " layers) do not fit in L1's %s",
             a, s->model.layers, b);
    }
    if (k->host_to_device_ratio > 0 && k->host_to_device_ratio < 1)
        FAIL(x, "cache.host_to_device_ratio", "%.4g: the host pool holds every block, the device pool copies of "
             "some: at least 1", k->host_to_device_ratio);
    double host = k->host_to_device_ratio > 0 ? k->host_to_device_ratio * l1 : 0;
    double share = (double)s->platform.l2 / (s->platform.gpus_per_node ? s->platform.gpus_per_node : 1);
    if (host > share) {
        ks_units_format(host, KS_UNIT_BYTES, a, sizeof a);
        ks_units_format(share, KS_UNIT_BYTES, b, sizeof b);
        FAIL(x, "cache.host_to_device_ratio", "a host pool of %s per GPU is more than its %s share of host DRAM "
             "(platform.l2 over platform.gpus_per_node)", a, b);
    }
    if (s->workload.shared_prefix.tokens > 0 && s->workload.shared_prefix.fraction > 0)
        FAIL(x, "workload.shared_prefix.tokens", "cache.organisation = \"per_request\" keeps no shared prefixes (each "
             "request has its own buffers; SGLang runs HiSparse with its radix cache off)");
}

// The architecture's rules (arch.h):
// - gqa: model.q_heads is a multiple of model.kv_heads;
// - mla: the query/key head has a part: qk_nope_dim + qk_rope_dim > 0;
// - moe: active <= experts, first_dense < layers, and the weights come from
//   the architecture (model.weight_bytes would hide which of them are experts).
static void check_model(struct ctx *x)
{
    const struct ks_scenario_model *m = &x->s->model;
    if (m->attention == KS_ATTENTION_GQA && m->q_heads % m->kv_heads != 0)
        FAIL(x, "model.q_heads", "%" PRIu32 " query heads are not a multiple of the %" PRIu32 " KV heads",
             m->q_heads, m->kv_heads);
    if (m->attention == KS_ATTENTION_MLA && m->qk_nope_dim + m->qk_rope_dim == 0)
        FAIL(x, "model.qk_nope_dim", "MLA needs a query/key head: qk_nope_dim + qk_rope_dim is 0");
    const struct ks_scenario_parallel *par = &x->s->parallel;
    if (x->s->platform.gpus_per_node % par->tp != 0)
        FAIL(x, "parallel.tp", "%" PRIu32 " GPUs per replica do not divide the node's %" PRIu32
             " (platform.gpus_per_node): a replica spans GPUs of one node", par->tp, x->s->platform.gpus_per_node);
    if (par->tp % par->dp_attention != 0)
        FAIL(x, "parallel.dp_attention", "%" PRIu32 " attention ranks do not divide the replica's %" PRIu32
             " GPUs (parallel.tp)", par->dp_attention, par->tp);
    uint32_t gpn = x->s->platform.gpus_per_node, gpus = x->s->platform.nodes * gpn;
    if (par->ep != 1 && par->ep != par->tp && (par->ep < par->tp || par->ep % gpn != 0 || gpus % par->ep != 0))
        FAIL(x, "parallel.ep", "%" PRIu32 ": expert parallelism is 1, the replica's %" PRIu32 " GPUs (parallel.tp), "
             "or an expert group of whole nodes (a multiple of platform.gpus_per_node, %" PRIu32 ") that divides the "
             "cluster's %" PRIu32 " GPUs", par->ep, par->tp, gpn, gpus);
    else if (par->ep > 1 && (!m->moe.experts || m->moe.experts % par->ep != 0))
        FAIL(x, "parallel.ep", "%" PRIu32 " ranks need experts they divide (model.moe.experts is %" PRIu32 ")",
             par->ep, m->moe.experts);
    uint32_t attn_tp = par->tp / par->dp_attention ? par->tp / par->dp_attention : 1;
    if (par->dense_tp && (par->tp % par->dense_tp != 0 || par->dense_tp % attn_tp != 0))
        FAIL(x, "parallel.dense_tp", "%" PRIu32 " GPUs must divide the replica's %" PRIu32 " (parallel.tp) and be a "
             "multiple of an attention rank's %" PRIu32, par->dense_tp, par->tp, attn_tp);
    if (!m->moe.experts)
        return;
    if (m->moe.active > m->moe.experts)
        FAIL(x, "model.moe.active", "%" PRIu32 " routed experts per token, more than the %" PRIu32 " there are",
             m->moe.active, m->moe.experts);
    if (m->moe.first_dense >= m->layers)
        FAIL(x, "model.moe.first_dense", "%" PRIu32 " dense layers leave none of the %" PRIu32 " for experts",
             m->moe.first_dense, m->layers);
    if (m->weights_given)
        FAIL(x, "model.weight_bytes", "an MoE model's weights are counted from its architecture (model.moe): "
             "leave model.weight_bytes out");
}

// The levels of detail (README, detail.*): detail.layers divides
// model.layers; detail.nodes divides platform.nodes, and the workload and
// the pools shared by the nodes share out evenly over the sampled ones
// (ks_scenario_sampled; a trace's rows are thinned at random), which prefix
// groups homed on the GPUs do not; detail.gpus is at most the sampled
// nodes' decode GPUs (sub: the scenario they run, ks_scenario_sampled) and,
// below them, refused with cold regions.
static void check_detail(struct ctx *x, const struct ks_scenario *sub)
{
    const struct ks_scenario *s = x->s;
    if (s->detail.layers > 0 && (s->detail.layers > s->model.layers || s->model.layers % s->detail.layers != 0))
        FAIL(x, "detail.layers", "%" PRIu32 " does not divide model.layers (%" PRIu32 "): each simulated layer "
             "stands for the same number of layers", s->detail.layers, s->model.layers);
    uint32_t k = s->detail.nodes, n = s->platform.nodes, gpn = s->platform.gpus_per_node;
    if (k > n || (k && n % k != 0))
        FAIL(x, "detail.nodes", "%" PRIu32 " does not divide platform.nodes (%" PRIu32 "): each simulated node stands "
             "for the same number of nodes", k, n);
    else if (k && k < n) {
        uint32_t f = n / k;
        const struct ks_scenario_workload *w = &s->workload;
        const char *why = "detail.nodes: each sampled node takes 1/%" PRIu32 " of the workload (platform.nodes / "
                          "detail.nodes), so %s";
        if (w->arrival.kind == KS_ARRIVAL_CLOSED && w->arrival.concurrency % f != 0)
            FAIL(x, "workload.arrival.concurrency", why, f, "the requests in flight must be a multiple of it");
        if (w->requests % f != 0)
            FAIL(x, "workload.requests", why, f, "the requests to run must be a multiple of it");
        if (s->prefill.mode == KS_PREFILL_DISAGGREGATED && s->prefill.gpus % f != 0)
            FAIL(x, "prefill.gpus", why, f, "the prefill pool's GPUs must be a multiple of it");
        if (s->parallel.ep > gpn && (k * gpn) % s->parallel.ep != 0)
            FAIL(x, "detail.nodes", "%" PRIu32 " node%s cannot hold whole expert groups of %" PRIu32 " GPUs "
                 "(parallel.ep): a multiple of %" PRIu32 " nodes", k, k == 1 ? "" : "s", s->parallel.ep,
                 s->parallel.ep / gpn);
        if (s->router == KS_ROUTER_PREFIX_AFFINITY && w->shared_prefix.tokens > 0 && w->shared_prefix.fraction > 0)
            FAIL(x, "router", "prefix_affinity gives each prefix group a home GPU; with detail.nodes every group "
                 "would make its home on the sampled nodes: another router, or every node (detail.nodes = 0)");
    }
    uint32_t units = ks_scenario_decode_units(sub);
    if (s->detail.gpus > units)
        FAIL(x, "detail.gpus", "%" PRIu32 " GPUs sampled, more than the %" PRIu32 " decode GPU%s%s%s", s->detail.gpus,
             units, units == 1 ? "" : "s", s->model.arch.attn_tp > 1 ? " (attention ranks)" : "",
             sub->platform.nodes < n ? " of the sampled nodes (detail.nodes)" : "");
    else if (s->detail.gpus && s->detail.gpus < units && s->cache.cold_share > 0)
        FAIL(x, "detail.gpus", "a follower cannot tell which of its requests would sit out a step "
             "(cache.cold_share): sample every GPU (detail.gpus = 0) or leave cold_share at 0");
    if (s->detail.follow != KS_FOLLOW_TIME)
        return;
    // followers in time put no traffic on any link: the sampled GPUs must
    // share theirs with no follower (whole nodes), and no layer may meet
    // other GPUs, nor any copy cross the network core
    const char *why = NULL;
    if (s->detail.gpus == 0 || s->detail.gpus >= units)
        why = "there is no follower: detail.gpus samples some of the decode GPUs";
    else if (s->parallel.tp > 1 || (s->model.moe.experts > 0 && s->model.arch.moe_ranks > 1))
        why = "a follower in time takes no part in a layer's collectives (parallel.tp > 1, or an expert group of "
              "several GPUs): detail.follow = \"batches\"";
    else if (s->cache.l3 == KS_L3_REMOTE)
        why = "the remote pool's copies cross the network core, which followers in time leave empty: "
              "detail.follow = \"batches\"";
    else if (s->cache.organisation == KS_ORG_PER_REQUEST)
        why = "device buffers back up every new token to the host, traffic that followers in time leave out: "
              "detail.follow = \"batches\"";
    else if (s->detail.gpus % sub->platform.gpus_per_node != 0)
        why = "the sampled GPUs must be whole nodes (a multiple of platform.gpus_per_node), their links shared "
              "with no follower";
    if (why)
        FAIL(x, "detail.follow", "\"time\": %s", why);
}

// The rules between fields, run when every field converted:
// - the model's own rules (check_model);
// - the weights fit in HBM: model.weight_bytes (given, or counted from the
//   architecture) < platform.hbm_bytes;
// - L1 in bytes fits in what HBM leaves after the weights, and holds one
//   step of one request: ks_scenario_step_blocks() * ks_scenario_block_bytes(),
//   where one step needs, per layer, sink_blocks + window_blocks +
//   ceil(budget_tokens / block_size) blocks (dense: every block of the
//   longest context, ceil(min(max_context, max prompt + max output) /
//   block_size)), times model.layers (a block holds one layer's K and V).
//   L1 as a share of the batch's active blocks never sizes L1 below one step,
//   so then one step must fit in what HBM leaves after the weights;
// - L2 in bytes is at most platform.l2; as a share, at most 100% of it;
// - cache.l3 = "ssd" needs platform.ssd.count >= 1; "remote" needs
//   platform.remote; platform.remote is all of bw, lat and bytes or none;
// - workload.arrival: rate only for poisson, concurrency only for closed, file
//   only (and always) for trace;
// - distributions: an explicit max is at most model.max_context, and the
//   explicit largest prompt + output is at most model.max_context;
//   lognormal and normal without max are clamped at model.max_context;
// - block_size and shared_prefix.tokens are at most model.max_context;
// - with L3 on SSD, at most PLATFORM_MAX_SSDS drives per node (the platform's bound);
// - cache.evict = "belady" needs sparse.policy = "trace" (the engine's rule),
//   and scheduler.reserve = "full" (next uses are placed at admission).
static void check_consistency(struct ctx *x)
{
    struct ks_scenario *s = x->s;
    char a[64], b[64], c[64];
    uint64_t bb = ks_scenario_block_bytes(s), step = ks_scenario_step_blocks(s);
    double hbm = (double)s->platform.hbm_bytes, weights = s->model.arch.gpu_weight_bytes;
    check_model(x);
    check_copy(x);
    check_organisation(x);
    check_speculative(x);
    if (s->scheduler.reserve == KS_RESERVE_ESTIMATE && s->cache.evict == KS_EVICT_BELADY)
        FAIL(x, "scheduler.reserve", "cache.evict = \"belady\" places next uses at admission, which a retracted "
             "request leaves: it needs scheduler.reserve = \"full\"");
    struct ks_scenario sub; // what is simulated (detail.nodes)
    ks_scenario_sampled(s, &sub);
    check_detail(x, &sub);
    if (weights >= hbm) {
        ks_units_format(weights, KS_UNIT_BYTES, a, sizeof a);
        ks_units_format(hbm, KS_UNIT_BYTES, b, sizeof b);
        FAIL(x, "model.weight_bytes", "%s of weights%s%s leave no room in %s of HBM (platform.hbm_bytes)", a,
             s->model.weights_given ? "" : " (counted from the architecture)",
             s->parallel.tp > 1 ? " per GPU of the replica" : "", b);
    } else {
        double room = ks_scenario_kv_room(s), need = (double)step * (double)bb;
        ks_units_format(room, KS_UNIT_BYTES, b, sizeof b);
        ks_units_format(need, KS_UNIT_BYTES, c, sizeof c);
        if (!s->cache.l1.is_share && s->cache.l1.value > room) {
            ks_units_format(s->cache.l1.value, KS_UNIT_BYTES, a, sizeof a);
            FAIL(x, "cache.l1", "%s is more than the %s of HBM left after the weights", a, b);
        } else if (!s->cache.l1.is_share && s->cache.l1.value < need) {
            ks_units_format(s->cache.l1.value, KS_UNIT_BYTES, a, sizeof a);
            FAIL(x, "cache.l1",
                 "%s is too small for one step of one request: %" PRIu64 " blocks of %" PRIu64 " B (%s) across %" PRIu32
                 " layers",
                 a, step, bb, c, s->model.layers);
        } else if (s->cache.l1.is_share && need > room) {
            FAIL(x, "cache.l1", "one step of one request needs %" PRIu64 " blocks (%s), more than the %s of HBM left "
                                "after the weights", step, c, b);
        }
    }
    if (!s->cache.l2.is_share && s->cache.l2.value > (double)s->platform.l2) {
        ks_units_format(s->cache.l2.value, KS_UNIT_BYTES, a, sizeof a);
        ks_units_format((double)s->platform.l2, KS_UNIT_BYTES, b, sizeof b);
        FAIL(x, "cache.l2", "%s is more than the node's %s of host DRAM (platform.l2)", a, b);
    } else if (s->cache.l2.is_share && s->cache.l2.value > 1) {
        FAIL(x, "cache.l2", "a share of host DRAM (platform.l2) is at most 100%%");
    }
    int ri = field_index("platform.remote.bw");
    int nr = x->is_set[ri] + x->is_set[ri + 1] + x->is_set[ri + 2];
    if (nr > 0 && nr < 3)
        for (int i = ri; i < ri + 3; i++)
            if (!x->is_set[i])
                report(x, x->profile_file ? x->profile_file : x->file, 0, fields[i].path,
                       "missing; a remote memory pool needs bw, lat and bytes");
    s->platform.remote.present = nr == 3;
    if (s->cache.l3 == KS_L3_SSD && s->platform.ssd.count == 0)
        FAIL(x, "cache.l3", "L3 on SSD needs platform.ssd.count >= 1");
    if (s->cache.l3 == KS_L3_SSD && s->platform.ssd.count > PLATFORM_MAX_SSDS)
        FAIL(x, "platform.ssd.count", "%" PRIu32 " drives per node with L3 on SSD: %s", s->platform.ssd.count,
             PLATFORM_WHY);
    double actors = (double)sub.platform.nodes * s->platform.gpus_per_node * ACTORS_PER_GPU +
                    (s->prefill.mode == KS_PREFILL_DISAGGREGATED ? (double)sub.prefill.gpus : 0);
    if (actors > ACTORS_MAX)
        FAIL(x, s->prefill.mode == KS_PREFILL_DISAGGREGATED && s->prefill.gpus > ACTORS_MAX / 2 ? "prefill.gpus"
                                                                                            : "platform.nodes",
             "%.0f simulated actors (%d per decode GPU, 1 per prefill GPU): at most %d fit a simulation "
             "(SimGrid: 100000 actors took 23 s and 5.8 GB)",
             actors, ACTORS_PER_GPU, ACTORS_MAX);
    if (s->cache.evict == KS_EVICT_BELADY && s->sparse.policy != KS_SPARSE_TRACE)
        FAIL(x, "cache.evict", "belady needs the future accesses, which only a replayed trace knows "
                               "(sparse.policy = \"trace\")");
    if (s->cache.l3 == KS_L3_REMOTE && !s->platform.remote.present)
        FAIL(x, "cache.l3", "L3 in remote memory needs platform.remote = {bw, lat, bytes}");
    const struct ks_scenario_arrival *ar = &s->workload.arrival;
    static const char *const only[] = {"workload.arrival.rate", "workload.arrival.concurrency",
                                       "workload.arrival.file"};
    for (int k = 0; k < 3; k++) {
        int i = field_index(only[k]);
        if ((int)ar->kind != k && x->is_set[i] && !x->from_default[i])
            FAIL(x, only[k], "applies to %s arrivals only (workload.arrival.kind is %s)", arrivals[k],
                 arrivals[ar->kind]);
    }
    if (ar->kind == KS_ARRIVAL_TRACE && !ar->file)
        FAIL(x, "workload.arrival.kind", "trace arrivals need workload.arrival.file");
    double mc = s->model.max_context;
    struct ks_dist *pt = &s->workload.prompt_tokens, *ot = &s->workload.output_tokens;
    const char *dn[] = {"workload.prompt_tokens", "workload.output_tokens"};
    struct ks_dist *ds[] = {pt, ot};
    int explicit_max = 1; // both distributions name their largest count
    for (int k = 0; k < 2; k++) {
        if (ds[k]->max > mc)
            FAIL(x, dn[k], "up to %.0f tokens is more than model.max_context (%.0f)", ds[k]->max, mc);
        explicit_max &= ds[k]->kind != KS_DIST_TRACE && ds[k]->max > 0;
        if (ds[k]->max <= 0 && ds[k]->kind != KS_DIST_TRACE)
            ds[k]->max = mc;
    }
    if (explicit_max && pt->max <= mc && ot->max <= mc && pt->max + ot->max > mc)
        FAIL(x, dn[0], "up to %.0f prompt + %.0f output tokens is more than model.max_context (%.0f)", pt->max,
             ot->max, mc);
    if (s->cache.block_size > s->model.max_context)
        FAIL(x, "cache.block_size", "%" PRIu32 " tokens is more than model.max_context", s->cache.block_size);
    if (s->workload.shared_prefix.tokens > s->model.max_context)
        FAIL(x, "workload.shared_prefix.tokens", "%" PRIu32 " tokens is more than model.max_context",
             s->workload.shared_prefix.tokens);
    if (s->sparse.policy == KS_SPARSE_TRACE && !s->sparse.file)
        FAIL(x, "sparse.policy", "trace replay needs sparse.file (a trace written by kvstrata trace record)");
    if (s->sparse.kernel_time == KS_KERNEL_TIME_TRACE && s->sparse.policy != KS_SPARSE_TRACE)
        FAIL(x, "sparse.kernel_time", "\"trace\" takes the kernel times of a replayed trace: it needs "
             "sparse.policy = \"trace\"");
    if (s->sparse.policy == KS_SPARSE_MODEL && !s->sparse.fit)
        FAIL(x, "sparse.policy", "the fitted access model needs sparse.fit (the trace to fit)");
    if (s->sparse.summaries == KS_SUMMARIES_MINMAX && s->model.attention != KS_ATTENTION_GQA)
        FAIL(x, "sparse.summaries", "\"minmax\" (Quest's per-channel min and max keys) needs per-head keys: "
             "model.attention = \"gqa\"");
    if (s->sparse.summaries == KS_SUMMARIES_MINMAX && s->sparse.policy == KS_SPARSE_DENSE)
        FAIL(x, "sparse.summaries", "\"minmax\" scores blocks for a selection: sparse.policy \"dense\" makes none");
}


// ---- the public functions ------------------------------------------------

const char *ks_scenario_lua_dirs(void)
{
    return KS_LUA_DIRS;
}

enum ks_file_kind ks_scenario_file_kind(const struct ks_luatab *root)
{
    if (ks_luatab_get(root, "base"))
        return ks_luatab_get(root, "search")                                      ? KS_FILE_PLAN
               : ks_luatab_get(root, "axes") || ks_luatab_get(root, "points") ? KS_FILE_SWEEP
                                                                                  : KS_FILE_OTHER;
    return ks_luatab_get(root, "platform") || ks_luatab_get(root, "model") || ks_luatab_get(root, "workload")
               ? KS_FILE_SCENARIO
               : KS_FILE_OTHER;
}

void ks_scenario_platform_fini(struct ks_scenario_platform *p)
{
    free(p->profile);
    free(p->profile_file);
    free(p->profile_cpu);
    free(p->kernel_time.blocks);
    free(p->kernel_time.seconds);
    free(p->kernel_time.source);
    free(p->host_wake.idle);
    free(p->host_wake.seconds);
    free(p->host_wake.source);
    memset(p, 0, sizeof *p);
}

void ks_scenario_free(struct ks_scenario *s)
{
    if (!s)
        return;
    free(s->file);
    free(s->name);
    ks_scenario_platform_fini(&s->platform);
    free(s->workload.arrival.file);
    free(s->sparse.file);
    free(s->sparse.fit);
    free(s->workload.prompt_tokens.file);
    free(s->workload.output_tokens.file);
    for (size_t i = 0; i < s->n_included; i++)
        free(s->included[i]);
    free(s->included);
    if (s->origin)
        for (int i = 0; i < N_FIELDS; i++) {
            free(s->origin[i].from);
            free(s->origin[i].source);
            free(s->origin[i].kind);
        }
    free(s->origin);
    free(s);
}

// The file's name without its folder and ".lua".
static char *stem(const char *file)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    size_t n = strlen(b);
    if (n > 4 && strcmp(b + n - 4, ".lua") == 0)
        n -= 4;
    char *s = malloc(n + 1);
    if (s)
        snprintf(s, n + 1, "%.*s", (int)n, b);
    return s;
}

static int finish(struct ctx *x, int st)
{
    if (x->oom)
        st = KS_ENOMEM;
    if (st == KS_ENOMEM)
        snprintf(x->err, x->len, "%s: out of memory", x->file);
    else if (x->dropped && x->used < x->len)
        snprintf(x->err + x->used, x->len - x->used, "\n%s: %d more errors not shown", x->file, x->dropped);
    ks_luatab_free(x->tree);
    ks_luatab_free(x->own_profile);
    free(x->profile_file);
    return st;
}

int ks_scenario_load(const char *file, const struct ks_scenario_params *params, struct ks_scenario **out, char *err,
                     size_t len)
{
    static const struct ks_scenario_params none = {0};
    struct ctx x = {.file = file, .p = params ? params : &none, .err = err, .len = len};
    x.max_errors = x.p->max_errors > 0 ? x.p->max_errors : DEFAULT_MAX_ERRORS;
    *out = NULL;
    if (len)
        err[0] = '\0';
    int st = ks_luatab_load(file, x.p->lua_dirs ? x.p->lua_dirs : KS_LUA_DIRS, &x.tree, err, len);
    if (st != KS_OK)
        return st;
    // a sweep's or a plan's file given for a scenario: one error that says
    // so, not one for each of its fields
    enum ks_file_kind kind = ks_scenario_file_kind(x.tree);
    if (kind == KS_FILE_PLAN || kind == KS_FILE_SWEEP) {
        const char *other = kind == KS_FILE_PLAN ? "a plan (kvstrata plan FILE)" : "a sweep (kvstrata sweep FILE -o DIR)";
        report(&x, file, 0, "base", "the file is %s, not a scenario: it names its scenario as base", other);
        return finish(&x, KS_EINVAL);
    }
    for (size_t i = 0; i < x.p->n_sets; i++)
        apply_set(&x, x.p->sets[i]);
    check_unknown(&x, x.tree, "");
    load_profile(&x);
    x.s = calloc(1, sizeof *x.s);
    if (!x.s || !(x.s->origin = calloc(N_FIELDS, sizeof *x.s->origin)) || !(x.s->file = strdup(file))) {
        ks_scenario_free(x.s);
        x.oom = 1;
        return finish(&x, KS_ENOMEM);
    }
    x.s->included = x.tree->included; // the files the scenario included: inputs too
    x.s->n_included = x.tree->n_included;
    x.tree->included = NULL;
    x.tree->n_included = 0;
    convert_all(&x);
    if (!x.s->name) {
        x.oom |= !(x.s->name = stem(file));
        free(x.s->origin[0].from);
        x.s->origin[0].from = dup_checked(&x, "default (the file's name)");
    }
    x.s->platform.profile_file = dup_checked(&x, x.profile_file);
    read_profile_cpu(&x);
    if (x.n_errors == 0 && !x.oom && !(x.p && x.p->no_kernel_time))
        read_kernel_time(&x);
    if (x.n_errors == 0 && !x.oom)
        read_host_wake(&x);
    // optional locality knobs left out: the preset's
    static const char *const preset_knobs[] = {"sparse.topic_switch", "sparse.retrieval_prob"};
    for (size_t k = 0; x.n_errors == 0 && !x.oom && k < sizeof preset_knobs / sizeof preset_knobs[0]; k++) {
        int i = field_index(preset_knobs[k]);
        if (i >= 0 && x.s->origin[i].from && strcmp(x.s->origin[i].from, "not set") == 0)
            *(double *)((char *)x.s + fields[i].off) = NAN;
    }
    // NOTE: only a scenario whose fields all converted: a field refused is
    // left 0 (a division by model.kv_heads = 0 once killed the loader)
    x.s->model.weights_given = x.is_set[field_index("model.weight_bytes")];
    if (x.n_errors == 0 && !x.oom) {
        ks_arch_derive(&x.s->model, &x.s->parallel, x.s->platform.gpus_per_node);
        // Quest's page summaries: a block's min and max key per channel of
        // each KV head, as many bytes as one token's K and V on the GPU
        if (x.s->sparse.summaries == KS_SUMMARIES_MINMAX)
            x.s->model.arch.summary_token_bytes =
                (double)x.s->model.arch.gpu_kv_token_bytes / (double)x.s->cache.block_size;
    }
    if (x.n_errors == 0 && !x.oom)
        pool_from_fraction(&x);
    // a run of workload.requests runs until they have finished: a duration
    // left out is then the longest limit, not the open-ended run's 60 s
    int di = field_index("duration");
    if (x.n_errors == 0 && !x.oom && x.from_default[di] && x.s->workload.requests > 0) {
        x.s->duration = DURATION_MAX;
        free(x.s->origin[di].from);
        x.s->origin[di].from = dup_checked(&x, "default (workload.requests: until they finish)");
    }
    if (x.n_errors == 0 && !x.oom)
        check_consistency(&x);
    if (x.n_errors || x.oom) {
        ks_scenario_free(x.s);
        return finish(&x, KS_EINVAL);
    }
    *out = x.s;
    return finish(&x, KS_OK);
}

// Loads and checks one profile file, reading its figures and host_wake into
// s (a figure it leaves out takes its default, when it has one). KS_OK, or
// KS_EINVAL with the errors in err; what s holds then is s's to free.
static int read_profile(const char *file, const char *lua_dirs, struct ks_scenario *s, char *err, size_t len)
{
    static const struct ks_scenario_params none = {0};
    struct ctx x = {.file = file, .p = &none, .err = err, .len = len, .max_errors = DEFAULT_MAX_ERRORS};
    if (len)
        err[0] = '\0';
    int st = ks_luatab_load(file, lua_dirs ? lua_dirs : KS_LUA_DIRS, &x.own_profile, err, len);
    if (st != KS_OK)
        return st;
    x.profile = x.own_profile;
    check_profile(&x, x.profile, "", "", 1);
    x.s = s;
    read_profile_cpu(&x);
    read_host_wake(&x);
    for (int i = 0; i < N_FIELDS; i++) { // every required figure is there, and reads
        const struct field *f = &fields[i];
        if (!f->figure)
            continue;
        const char *rel = f->path + strlen(PLATFORM);
        struct ks_luatab *n = ks_luatab_find(x.profile, rel);
        if (!n) {
            if (!f->def)
                report(&x, file, 0, rel, "missing");
            else if (f->def[0]) {
                struct ks_luatab *d = ks_luatab_new(rel, KS_LUATAB_STRING, "default");
                if (!d || !(d->s = strdup(f->def)))
                    x.oom = 1;
                else
                    convert(&x, f, d, rel);
                ks_luatab_free(d);
            }
            continue;
        }
        if (n->type == KS_LUATAB_TABLE)
            continue;
        convert(&x, f, n, rel);
    }
    return finish(&x, x.n_errors ? KS_EINVAL : KS_OK);
}

int ks_scenario_check_profile(const char *file, const char *lua_dirs, char *err, size_t len)
{
    struct ks_scenario scratch = {0}; // read whole, then dropped
    int st = read_profile(file, lua_dirs, &scratch, err, len);
    ks_scenario_platform_fini(&scratch.platform);
    return st;
}

int ks_scenario_read_profile(const char *file, const char *lua_dirs, struct ks_scenario_platform *out, char *err,
                             size_t len)
{
    struct ks_scenario s = {0};
    int st = read_profile(file, lua_dirs, &s, err, len);
    if (st != KS_OK)
        ks_scenario_platform_fini(&s.platform);
    *out = s.platform;
    return st;
}

// ---- showing -------------------------------------------------------------

static int emit(int (*fn)(const struct ks_scenario_item *, void *), void *ud, const char *path, const char *text,
                int is_number, double number, enum ks_unit unit, const struct ks_scenario_origin *o, int is_set)
{
    struct ks_scenario_item it = {.path = path, .text = text, .is_number = is_number, .is_set = is_set,
                                  .number = number, .unit = is_number ? ks_units_symbol(unit) : "", .origin = o};
    return fn(&it, ud);
}

static int emit_dist(const struct ks_dist *d, const char *path, const struct ks_scenario_origin *o,
                     int (*fn)(const struct ks_scenario_item *, void *), void *ud)
{
    char p[PATH_MAX_LEN], t[64];
    join(p, sizeof p, path, "kind");
    int rc = emit(fn, ud, p, dist_kinds[d->kind], 0, 0, CN, o, 1);
    struct {
        const char *key;
        double v;
        int show;
    } params[] = {
        {"value", d->value, d->kind == KS_DIST_CONSTANT},
        {"mu", d->mu, d->kind == KS_DIST_LOGNORMAL},
        {"sigma", d->sigma, d->kind == KS_DIST_LOGNORMAL},
        {"mean", d->mean, d->kind == KS_DIST_NORMAL},
        {"stddev", d->stddev, d->kind == KS_DIST_NORMAL},
        {"min", d->min, d->kind != KS_DIST_CONSTANT && d->kind != KS_DIST_TRACE},
        {"max", d->max, d->kind != KS_DIST_CONSTANT && d->kind != KS_DIST_TRACE},
    };
    for (size_t i = 0; !rc && i < sizeof params / sizeof params[0]; i++) {
        if (!params[i].show)
            continue;
        join(p, sizeof p, path, params[i].key);
        snprintf(t, sizeof t, "%.10g", params[i].v);
        rc = emit(fn, ud, p, t, 1, params[i].v, KS_UNIT_NUMBER, o, 1);
    }
    if (!rc && d->kind == KS_DIST_TRACE) {
        join(p, sizeof p, path, "file");
        rc = emit(fn, ud, p, d->file, 0, 0, CN, o, 1);
    }
    return rc;
}

int ks_scenario_foreach(const struct ks_scenario *s, int (*fn)(const struct ks_scenario_item *it, void *ud), void *ud)
{
    for (int i = 0; i < N_FIELDS; i++) {
        const struct field *f = &fields[i];
        const void *p = (const char *)s + f->off;
        const struct ks_scenario_origin *o = &s->origin[i];
        int set = !(o->from && strcmp(o->from, "not set") == 0);
        char t[128];
        int rc = 0;
        double v = 0;
        switch (f->type) {
        case T_STR:
        case T_PROFILE: {
            const char *str = *(char *const *)p;
            rc = emit(fn, ud, f->path, str ? str : "none", 0, 0, CN, o, str != NULL);
            break;
        }
        case T_CHOICE:
            rc = emit(fn, ud, f->path, f->choices[*(const int *)p], 0, 0, CN, o, 1);
            break;
        case T_U32:
        case T_U64:
        case T_REAL:
            if (f->type == T_U32)
                v = *(const uint32_t *)p;
            else if (f->type == T_U64)
                v = (double)*(const uint64_t *)p;
            else
                v = *(const double *)p;
            if (!set)
                snprintf(t, sizeof t, "none");
            else if (f->type == T_U64 && f->unit == KS_UNIT_COUNT)
                snprintf(t, sizeof t, "%" PRIu64, *(const uint64_t *)p);
            else
                ks_units_format(v, f->unit, t, sizeof t);
            rc = emit(fn, ud, f->path, t, set, v, f->unit, o, set);
            break;
        case T_AMOUNT: {
            const struct ks_scenario_amount *a = p;
            enum ks_unit u = a->is_share ? KS_UNIT_FRACTION : KS_UNIT_BYTES;
            ks_units_format(a->value, u, t, sizeof t);
            rc = emit(fn, ud, f->path, t, 1, a->value, u, o, 1);
            break;
        }
        case T_DIST:
            rc = emit_dist(p, f->path, o, fn, ud);
            break;
        }
        if (rc)
            return rc;
    }
    return 0;
}
