// scenario.h - a scenario file, validated and resolved into a plain C struct.
//
// A scenario is a Lua file that returns a table (see README.md "Scenarios"
// for every field, its unit and default). Loading runs the file (through
// luatab, the Lua binding), applies `--set path=value` overrides, merges the
// platform profile (a name under calib/profiles/ or an inline table; figures
// the scenario gives win over the profile's), fills defaults, validates
// everything, and fills a struct ks_scenario that holds no Lua state.
// Invariants of a loaded scenario: every field is in range and consistent
// with the others (the rules are in scenario.c, at check_consistency); each
// field records where its value came from (scenario line, --set, profile
// figure with its source, or default).
//
// Errors are reported as "FILE:LINE: field.path: reason" (or "FILE:
// field.path: reason" when the line is unknown; "--set: ..." for overrides),
// one per line, all of them up to a limit, and the load fails.
#ifndef KS_SCENARIO_H
#define KS_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

enum ks_dist_kind { KS_DIST_CONSTANT, KS_DIST_UNIFORM, KS_DIST_LOGNORMAL, KS_DIST_NORMAL, KS_DIST_TRACE };

// A token-count distribution; samples are rounded and clamped to [min, max].
struct ks_dist {
    enum ks_dist_kind kind;
    double value;        // constant: tokens
    double min, max;     // tokens; uniform: the range; lognormal, normal: the clamp (default 1, model.max_context)
    double mu, sigma;    // lognormal: mean and standard deviation of ln(tokens)
    double mean, stddev; // normal: tokens
    char *file;          // trace: one count per line; the path as resolved from the scenario's folder
};

enum ks_arrival_kind { KS_ARRIVAL_POISSON, KS_ARRIVAL_CLOSED, KS_ARRIVAL_TRACE };
enum ks_sparse_policy {
    KS_SPARSE_DENSE, KS_SPARSE_WINDOW, KS_SPARSE_STRIDE, KS_SPARSE_RANDOM, // rules over block positions
    KS_SPARSE_TOPK,      // sink + window + top-k by score from synthetic attention
    KS_SPARSE_RETRIEVAL, // top-k by score alone
    KS_SPARSE_MIXED,     // switches between window and top-k
    KS_SPARSE_TRACE,     // replays a trace
    KS_SPARSE_MODEL,     // an access model fitted to a trace
    KS_SPARSE_DSA,       // DSA-style top-k of importance plus per-layer noise (dsa.h)
};
enum ks_l3_kind { KS_L3_SSD, KS_L3_REMOTE, KS_L3_NONE };
enum ks_compression { KS_COMPRESSION_NONE, KS_COMPRESSION_INT8 };
// How L1 is organised (README "Scenarios", cache.organisation).
enum ks_organisation {
    KS_ORG_POOL,        // one pool per GPU shared by its requests, managed by the eviction policy
    KS_ORG_PER_REQUEST, // a device buffer per request and layer; the host holds every block
};
// How the cache manager counts accesses that change nothing but heat,
// recency and hits (cache.h, ks_cache_access_uniform).
enum ks_accounting {
    KS_ACCOUNT_AGGREGATE, // once per request and step where that gives the same figures
    KS_ACCOUNT_PER_BLOCK, // every block through ks_cache_access (slower; a check of the former)
};
// How a migration batch between HBM (L1) and host DRAM (L2) is copied.
enum ks_copy {
    KS_COPY_BATCH,    // one copy of the batch: copy_overhead, then its bytes over the link
    KS_COPY_PER_ITEM, // a copy per block through the copy engine: copy_item_* each, then the bytes
    KS_COPY_GATHER,   // a kernel reading pinned host memory: copy_overhead, then the bytes at gather_*_bw at most
};
// How a follower (detail.gpus) takes a sampled GPU's step (sim/step/follow.h).
enum ks_follow_mode {
    KS_FOLLOW_BATCHES, // its migration batches and reads outside L1, over the follower's own links
    KS_FOLLOW_TIME,    // its waits only: no copy, no traffic on any link
};
// When a layer's misses may start copying (cache.layer_prefetch).
enum ks_layer_prefetch {
    KS_LAYER_PREFETCH_NONE,     // when the layer's own selection is made (its start)
    KS_LAYER_PREFETCH_PREVIOUS, // those the previous layer's selection also chose: with that selection
};
enum ks_dtype { KS_DTYPE_FP16, KS_DTYPE_BF16, KS_DTYPE_FP8, KS_DTYPE_INT8, KS_DTYPE_FP32 };
enum ks_router { KS_ROUTER_ROUND_ROBIN, KS_ROUTER_LEAST_LOADED, KS_ROUTER_PREFIX_AFFINITY };
enum ks_prefill_mode {
    KS_PREFILL_COLOCATED,     // each decode GPU prefills its own requests (decode waits)
    KS_PREFILL_DISAGGREGATED, // a separate prefill pool; the KV crosses the network to the decode node
};
// Both are simulated as one non-blocking core (the NICs' bandwidth each way,
// every node at once): a single switch, or a full-bisection fat tree.
enum ks_topology { KS_TOPOLOGY_STAR, KS_TOPOLOGY_FAT_TREE };

// A capacity given either in bytes or as a share of something else.
struct ks_scenario_amount {
    int is_share; // 1: value is a fraction (1 = 100%); 0: value is bytes
    double value; // bytes or fraction
};

struct ks_scenario_ssd {
    uint32_t count;  // drives per node
    double read_bw;  // bytes/s per drive
    double write_bw; // bytes/s per drive
    double lat;      // seconds per request
    uint64_t bytes;  // capacity per drive; 0: not given (L3 then holds what the admitted requests need)
    double read_op_time;  // seconds of device time each read holds besides its bytes (calib/fit.h); 0: none
    double write_op_time; // the same for writes
};

struct ks_scenario_network {
    enum ks_topology topology;
    double bw;  // bytes/s per node link
    double lat; // seconds per hop
};

struct ks_scenario_remote {
    int present;    // 0: no remote memory pool
    double bw;      // bytes/s per node link to the pool
    double lat;     // seconds
    uint64_t bytes; // pool capacity, bytes
};

// Measured decode attention time (kvstrata bench kernels --profile): one
// layer of the sparse kernel for a batch of `batch` sequences that each
// select blocks[i] blocks takes seconds[i]. blocks strictly increasing.
struct ks_kernel_time {
    uint32_t n;        // points; 0: no table (step time from HBM bandwidth)
    uint32_t batch;    // sequences per measured launch
    uint32_t *blocks;  // [n] selected blocks per sequence
    double *seconds;   // [n] seconds per layer for the whole batch
    char *source;      // where the table comes from
    // set by `kvstrata validate` only, to replay a runtime run: decode step i
    // (0-based, per GPU) charges steps[i] seconds per block read (NaN: the
    // table); NULL: the table for every step
    const double *steps;
    uint32_t n_steps;
};

// How long a host thread that sat idle takes to run once signalled (a
// condition variable: `kvstrata calib host` measures it): idle[i] seconds of
// idleness cost seconds[i]; between points linear in log(idle), clamped at
// the ends. A migration lane pays it when a step's batches wake it, the
// decode loop when a landing ends its wait. idle strictly increasing.
struct ks_host_wake {
    uint32_t n;      // points; 0: none (waking costs nothing)
    double *idle;    // [n] seconds idle before the signal
    double *seconds; // [n] seconds from the signal to the thread running
    char *source;    // where the table comes from
};

struct ks_scenario_platform {
    uint32_t nodes;          // nodes in the cluster
    uint32_t gpus_per_node;  // GPUs per node
    int gpudirect;           // platform.rdma = "gpudirect": GPU memory reaches the NIC over the GPU's own PCIe link
    char *profile;           // profile name, or "inline"
    char *profile_file;      // the profile's file; NULL when inline
    char *profile_cpu;       // the CPU the profile was measured on (its `cpu`, /proc/cpuinfo's model); NULL: not said
    uint64_t hbm_bytes;      // bytes of HBM per GPU
    double hbm_bw;           // bytes/s per GPU
    double pcie_bw;          // bytes/s per GPU host link, per direction
    double pcie_lat;         // seconds per transfer
    double copy_overhead;    // seconds, fixed cost of each copy
    double copy_item_h2d, copy_item_d2h; // seconds per item copied on its own (cache.copy = "per_item"), by direction
    double gather_h2d_bw, gather_d2h_bw; // bytes/s of a gather kernel over pinned host memory (cache.copy = "gather")
    double host_read_lat;    // seconds a GPU load from pinned host memory takes to return (cache.gather_warps)
    double nvlink_bw;        // bytes/s per GPU, per direction
    uint32_t gpus_per_switch; // GPUs sharing one PCIe switch uplink (capped at gpus_per_node)
    uint64_t l2;             // bytes of host DRAM per node
    double dram_bw;          // bytes/s of host DRAM per node
    struct ks_scenario_ssd ssd;
    struct ks_scenario_network network;
    struct ks_scenario_remote remote;
    double flops;            // FLOP/s per GPU (dense bf16)
    double flops_fp8;        // FLOP/s per GPU of FP8 matrix work (dense); 0: as flops (no FP8 units)
    double sched_overhead;   // seconds of host work per decode step (batch scheduling)
    double table_rebuild;    // seconds per rebuild of the resident-block pointer table
    double prefill_efficiency; // share of flops that prefill achieves (0, 1]
    struct ks_kernel_time kernel_time; // measured attention kernel time; n = 0: none
    struct ks_host_wake host_wake;     // measured thread wake-up time; n = 0: none
};

// Seconds a host thread idle for `idle` seconds takes to run once signalled
// (0 without a table).
double ks_host_wake_time(const struct ks_host_wake *w, double idle);

enum ks_attention {
    KS_ATTENTION_GQA, // grouped-query (MHA when kv_heads = q_heads): K and V per KV head
    KS_ATTENTION_MLA, // multi-head latent: one latent vector and its rope part per token
};

// What the architecture gives (sim/scenario/arch.h derives it when the
// scenario loads). Parameters count weights; bytes are in the weight dtype.
struct ks_arch {
    double params;           // every weight
    double active_params;    // weights one token uses: all but the routed experts it is not sent to
    double weight_bytes;     // bytes of every weight (model.weight_bytes when the scenario gives it)
    double fixed_read_bytes; // weight bytes a decode iteration reads whatever its batch: all but the
                             // routed experts and an untied embedding table (only its batch's rows)
    double expert_bytes;     // one routed expert of one layer
    double token_flops;      // flops of one prompt token through the weights (2 x parameters used,
                             // without the embedding lookup and the output head)
    double head_flops;       // flops of the output head for one token (logits)
    double pair_flops;       // attention flops of one (query, key) pair in one layer (QK and PV)
    double index_pair_flops; // the sparse indexer's flops of one (query, key) pair in one layer
    double decode_pair_flops; // decode attention flops of one selected token in one layer (MLA with
                              // its projections absorbed: the query meets the latent itself)
    uint64_t kv_token_bytes;    // KV bytes of one token in one layer
    uint64_t index_token_bytes; // index-key bytes of one token in one layer (0: no indexer)
    double summary_token_bytes; // page-summary bytes per token in one layer on one GPU (sparse.summaries;
                                // set by the scenario loader, which knows cache.block_size)
    uint32_t moe_layers;     // layers whose FFN is routed experts
    // One GPU's share under parallelism (parallel.*): a replica spans tp GPUs,
    // its dp_attention ranks each batch their own requests on attn_tp = tp /
    // dp_attention GPUs; the other weights span dense_tp GPUs (tp unless
    // parallel.dense_tp), the routed experts moe_gpus: tp, or ep when an
    // expert group spans moe_gpus / tp replicas, whose moe_ranks attention
    // ranks' tokens reach them.
    uint32_t tp, dp, attn_tp, dense_tp, moe_gpus, moe_ranks;
    double gpu_weight_bytes;       // weights one GPU holds
    double gpu_fixed_read_bytes;   // of them, read by every decode iteration (fixed_read_bytes' share)
    uint64_t gpu_kv_token_bytes;   // KV of one token in one layer on one GPU of its rank (GQA: its heads;
                                   // MLA: the whole latent, on each GPU of the rank)
    double comm_attn_bytes;        // bytes one GPU sends per layer per token of its rank: attention's
    double comm_ffn_bytes;         // all-reduce (attn_tp > 1); a dense FFN's all-gather and reduce-scatter
    double comm_moe_bytes;         // over dense_tp; an MoE layer's (all-to-all dispatch and combine with ep > 1)
    double moe_remote_share;       // of an MoE layer's all-to-all, the share bound for other nodes
};

// Bytes of one token in one layer that stay in HBM beside its KV and that
// every decode step scans to select: an indexer's key, Quest's page summaries.
static inline double ks_arch_scan_bytes(const struct ks_arch *a)
{
    return (double)a->index_token_bytes + a->summary_token_bytes;
}

struct ks_scenario_model {
    uint32_t layers;
    enum ks_attention attention;
    uint32_t kv_heads;     // gqa
    uint32_t q_heads;      // query heads (gqa: a multiple of kv_heads; mla too)
    uint32_t head_dim;     // gqa
    uint32_t q_lora_rank;  // mla: rank of the query's low-rank projection (0: a full projection)
    uint32_t kv_lora_rank; // mla: the latent vector's size
    uint32_t qk_nope_dim;  // mla: per head, the query/key part without rotary embedding
    uint32_t qk_rope_dim;  // mla: per head (and in the cache), the rotary part
    uint32_t v_head_dim;   // mla: per head, the value's size
    uint32_t hidden;       // hidden size
    uint32_t vocab;        // vocabulary
    uint32_t intermediate; // a dense layer's FFN (gated: gate, up, down)
    int tied_embeddings;   // 1: the output head is the embedding table
    enum ks_dtype dtype;   // of the KV cache
    enum ks_dtype weight_dtype;
    uint64_t weight_bytes;   // as the scenario gives it (weights_given); arch.weight_bytes is what counts
    int weights_given;       // model.weight_bytes set: every weight is read each iteration, no experts
    uint64_t kv_token_bytes; // as given (0: derived); arch.kv_token_bytes is what counts
    struct {
        uint32_t heads, dim;  // 0 heads: no indexer
        enum ks_dtype dtype;
        uint64_t token_bytes; // as given (0: derived)
    } indexer;               // a sparse indexer's keys: resident in L1, scanned every decode step
    struct {
        uint32_t experts;      // routed experts per MoE layer (0: every layer dense)
        uint32_t active;       // routed experts per token
        uint32_t shared;       // shared experts per MoE layer (every token uses them)
        uint32_t intermediate; // one expert's FFN
        uint32_t first_dense;  // dense layers before the MoE layers
    } moe;
    uint32_t max_context;  // tokens, prompt + output
    struct ks_arch arch;   // derived (arch.h)
};

enum ks_sched_kind {
    KS_SCHED_FUSED,  // decode tokens and prefill chunks in one iteration under a token budget
    KS_SCHED_SERIAL, // one admission per iteration; a prefill chunk's time, then the decode step's
};

// What admission reserves for a request's output (sim/step/active.h).
enum ks_reserve {
    KS_RESERVE_FULL,     // its whole output: a request admitted never runs out of room
    KS_RESERVE_ESTIMATE, // SGLang's: new_token_ratio x its output left (clipped); retracted on overflow
};

// The serving engine's scheduler (README "Scenarios", scheduler).
struct ks_scenario_scheduler {
    enum ks_sched_kind kind;
    uint32_t max_batched_tokens;   // fused: tokens per iteration, decode and prefill (0: no limit)
    uint32_t max_running_requests; // requests admitted at once per attention rank (0: memory decides)
    double mem_fraction;           // HBM for weights and the KV pool (0: cache.l1 decides)
    enum ks_reserve reserve;       // what admission reserves for the output
    double new_token_ratio;        // estimate: the ratio's initial value
    uint32_t reserve_clip;         // estimate: output tokens left counted at most
    double layer_overhead;         // seconds each layer of a forward pass adds (launches, syncs, collectives)
};

// How one model replica spans GPUs within a node (README "Scenarios", parallel).
enum ks_overlap {
    KS_OVERLAP_NONE,      // a layer's collectives after its compute
    KS_OVERLAP_TWO_BATCH, // two micro-batches: one's collectives beside the other's compute
};

// How the attention ranks of an expert group step (parallel.ranks).
enum ks_ranks {
    KS_RANKS_INDEPENDENT, // each rank steps on its own
    KS_RANKS_LOCKSTEP,    // the ranks begin each iteration together and meet at every MoE layer
};

struct ks_scenario_parallel {
    uint32_t tp;           // GPUs per replica: weights split across them
    uint32_t dp_attention; // attention ranks per replica, each with its own batch (divides tp)
    uint32_t ep;           // expert parallelism: 1 (experts split like any weight), or whole experts per GPU
                           // over tp GPUs or over ep / tp replicas (an expert group of whole nodes)
    uint32_t dense_tp;     // GPUs the weights outside attention and the routed experts split over; 0: tp
    enum ks_overlap overlap; // the collectives beside the compute (two-batch overlap) or after it
    enum ks_dtype comm_dtype; // activations' type in the collectives
    int dispatch_dtype;    // an all-to-all dispatch's activations: 0 as comm_dtype, else enum ks_dtype + 1
    enum ks_ranks ranks;   // the ranks of an expert group step on their own or together
};

struct ks_scenario_arrival {
    enum ks_arrival_kind kind;
    double rate;          // poisson: requests/s
    uint32_t concurrency; // closed: requests in flight
    char *file;           // trace: arrival times, resolved from the scenario's folder
};

struct ks_scenario_prefix {
    uint32_t tokens;  // shared prefix length, tokens (0 = none)
    uint32_t groups;  // distinct prefixes
    double fraction;  // share of requests that carry a prefix
};

struct ks_scenario_sessions {
    uint32_t turns;    // requests per session (1 = single-turn)
    double think_time; // seconds between a reply and the next turn
};

struct ks_scenario_workload {
    struct ks_scenario_arrival arrival;
    struct ks_dist prompt_tokens; // tokens per request prompt
    struct ks_dist output_tokens; // tokens per request output
    struct ks_scenario_prefix shared_prefix;
    struct ks_scenario_sessions sessions;
    uint64_t requests; // requests to run until they finish, duration a limit (0 = until duration)
    uint32_t keep_one_in; // derived, not a field (ks_scenario_sampled): a trace's arrival rows and its
                          // counts in file order are kept one in this many, at random (0 or 1: all)
};

struct ks_scenario_sparse {
    enum ks_sparse_policy policy;
    uint32_t budget_tokens; // tokens the policy selects per step beyond sink and window
    uint32_t sink_blocks;   // first blocks always selected
    uint32_t window_blocks; // most recent blocks always selected
    uint32_t stride;        // stride: every stride-th block
    char *file;             // trace: the trace to replay
    char *fit;              // model: the trace the access model is fitted to
    int preset;             // topk, retrieval, mixed: synthetic attention preset (0 stable, 1 drifting, 2 noisy)
    uint32_t attention_layers; // topk, retrieval, mixed: layers whose attention is computed (the rest share)
    double switch_prob;     // mixed: chance per step of switching between window and top-k
    double topic_switch;    // topk, retrieval, mixed: chance per step that the query's topic changes
                            // (synth.h); NAN: the preset's
    double retrieval_prob;  // topk, retrieval, mixed: chance per step that a long-range retrieval
                            // starts (synth.h); NAN: the preset's
    int summaries;          // KS_SUMMARIES_NONE, or KS_SUMMARIES_MINMAX: Quest's page summaries, a
                            // block's per-channel min and max key for each KV head, in HBM for every
                            // block and read by every decode step to score the blocks
    int kernel_time;        // where attention time comes from: KS_KERNEL_TIME_PROFILE (the profile's
                            // kernel_time table, else selected KV over HBM) or KS_KERNEL_TIME_TRACE
                            // (trace: each record's measured kernel_time, the profile's where < 0)
};
enum { KS_KERNEL_TIME_PROFILE = 0, KS_KERNEL_TIME_TRACE = 1 };
enum { KS_SUMMARIES_NONE = 0, KS_SUMMARIES_MINMAX = 1 };

struct ks_scenario_cache {
    uint32_t block_size;             // tokens per block
    struct ks_scenario_amount l1;    // bytes per GPU, or share of the batch's active blocks
    struct ks_scenario_amount l2;    // bytes per node, or share of platform.l2
    enum ks_l3_kind l3;
    enum ks_evict_policy evict;
    uint32_t heat_half_life;         // steps
    uint32_t prefetch_window;        // blocks (0 when prefetch_lua)
    int prefetch_lua;                // cache.prefetch_window is a Lua function (the engine calls it)
    uint32_t migration_batch;        // blocks per batch
    enum ks_compression compression; // of blocks in L2 and L3
    enum ks_copy copy;               // how a batch between HBM and host DRAM is copied
    enum ks_layer_prefetch layer_prefetch; // when a layer's misses may start copying
    uint32_t gather_warps;           // gather: warps the kernel gives each request's blocks (0: no limit)
    uint32_t gather_load_bytes;      // gather: bytes one lane loads at a time (a warp's round trip: 32 of them)
    enum ks_organisation organisation; // L1 as one pool, or a device buffer per request (HiSparse)
    uint32_t device_buffer_size;     // per_request: tokens of each request's buffer in each layer
    double host_to_device_ratio;     // per_request: the host pool in device pools (0: cache.l2 sizes it)
    double cold_share;               // a request missing more than this share of a step's selected blocks
                                     // sits the step out while they warm up (0: never)
    enum ks_accounting accounting;   // dense steps with every block in L1: in aggregate or block by block
};

// Objectives, in seconds; 0 = none. On the run's figures (slo_met): TTFT
// (arrival to first token), TPOT (per finished request: first token to last
// over the tokens after the first), ITL (every gap between two consecutive
// tokens) and E2EL (per finished request: arrival to last token). Per
// request (goodput: the finished requests that meet every one set): ttft,
// tpot, e2el.
struct ks_scenario_slo {
    double tpot_p99, tpot_mean;
    double ttft_p99, ttft_mean;
    double itl_p99, itl_mean;
    double e2el_p99, e2el_mean;
    double ttft, tpot, e2el;
};

struct ks_scenario_origin {
    char *from;   // "FILE:LINE", "--set", "profile NAME", "default", "not set"
    char *source; // profile figures: where the figure was read; else NULL
    char *kind;   // profile figures: "datasheet", "measured (published)", ...; else NULL
};

struct ks_scenario {
    char *file;     // the scenario file as given
    char **included; // the files it ran with include "FILE.lua", as opened
    size_t n_included;
    char *name;     // default: the file's name without folder and .lua
    uint64_t seed;
    double duration; // seconds of simulated time
    enum ks_router router; // how requests are spread over the GPUs
    struct ks_scenario_platform platform;
    struct ks_scenario_model model;
    struct ks_scenario_parallel parallel;
    struct ks_scenario_scheduler scheduler;
    struct ks_scenario_workload workload;
    struct ks_scenario_sparse sparse;
    struct ks_scenario_cache cache;
    struct {
        enum ks_prefill_mode mode;
        uint32_t gpus;  // disaggregated: GPUs in the prefill pool (same profile)
        uint32_t chunk; // colocated: prompt tokens prefilled per iteration (0: a whole prompt)
    } prefill;
    // Level of detail: the cache and selections of `layers` evenly spaced
    // layers are simulated, each standing for model.layers / layers layers
    // (0: every layer, full detail). Simulator only.
    // `gpus` of the decode GPUs (evenly spaced) simulate their caches in
    // full, the others follow them (sim/step/follow.h; 0: every GPU).
    // `nodes` of platform.nodes (a divisor) are simulated with their share
    // of the workload, each standing for platform.nodes / nodes nodes
    // (ks_scenario_sampled; 0: every node). gpus counts GPUs of those.
    // `follow`: what a follower takes of a sampled step (enum
    // ks_follow_mode); with KS_FOLLOW_TIME the sampled GPUs are the first
    // `gpus`, whole nodes.
    struct {
        uint32_t layers;
        uint32_t gpus;
        uint32_t nodes;
        enum ks_follow_mode follow;
    } detail;
    // Speculative decoding (multi-token prediction): each decode step of a
    // request verifies 1 + draft_tokens tokens (their matrix work, attention
    // and collectives) after draft_tokens passes of draft_layers layers, and
    // keeps accept_length tokens on average (README "Scenarios", speculative).
    struct ks_scenario_speculative {
        uint32_t draft_tokens; // 0: off, one token per step
        double accept_length;  // mean tokens kept per step, 1 .. 1 + draft_tokens, three decimals
        uint32_t draft_layers; // layers of the draft model (an MTP module: 1), timed as the model's
        uint32_t accept_milli; // accept_length x 1000, exact (derived)
    } speculative;
    struct ks_scenario_slo slo;
    struct ks_scenario_origin *origin; // one per schema field, in schema order
};

struct ks_scenario_params {
    const char *const *sets;  // "path=value" overrides, applied in order
    size_t n_sets;
    const char *lua_dirs;     // ';'-separated folders for require "kvstrata"; NULL = the built-in ones
    const char *profile_dirs; // ';'-separated folders of profiles; NULL = the built-in ones
    int max_errors;           // errors reported before giving up; 0 = 20
    int no_kernel_time;       // leave platform.kernel_time out, unread (a caller that measures
                              // its own table for the scenario's shape: validate --measure-kernels)
};

// The folders `require` searches from a scenario (the source tree's lua/,
// then the installed one), ';'-separated.
const char *ks_scenario_lua_dirs(void);

// What a loaded Lua file's table is by its top-level keys, so that a file
// given to the wrong command is told so: a plan names its scenario as base
// and has a search, a sweep names it and has axes or points, a scenario
// describes a platform, a model or a workload itself. KS_FILE_OTHER: none.
enum ks_file_kind { KS_FILE_OTHER, KS_FILE_SCENARIO, KS_FILE_PLAN, KS_FILE_SWEEP };
struct ks_luatab;
enum ks_file_kind ks_scenario_file_kind(const struct ks_luatab *root);

// Loads, validates and resolves `file` into *out (freed with
// ks_scenario_free). Returns KS_OK; KS_EINVAL with every error, one per line,
// in err; or KS_ENOMEM. params may be NULL.
int ks_scenario_load(const char *file, const struct ks_scenario_params *params, struct ks_scenario **out,
                     char *err, size_t len);

void ks_scenario_free(struct ks_scenario *s);

// Loads and validates one profile file on its own (every figure needs its
// source and kind). Returns KS_OK, or KS_EINVAL with the errors in err.
int ks_scenario_check_profile(const char *file, const char *lua_dirs, char *err, size_t len);

// The one reader of a profile file on its own (calib check reads through it):
// loads and validates it as ks_scenario_check_profile does, and fills *out
// with its figures in base units (a figure it leaves out takes its default,
// 0 when it has none) and its host_wake table; the rest of *out is zero
// (kernel_time is read against a scenario's shape, by ks_scenario_load).
// KS_OK, or KS_EINVAL / KS_ENOMEM with the errors in err (*out zero then).
// *out is the caller's storage, emptied with ks_scenario_platform_fini.
int ks_scenario_read_profile(const char *file, const char *lua_dirs, struct ks_scenario_platform *out, char *err,
                             size_t len);

// Frees what p holds (its strings and tables) and zeroes it.
void ks_scenario_platform_fini(struct ks_scenario_platform *p);

// Bytes of one element of a KV cache of type d.
uint64_t ks_dtype_bytes(enum ks_dtype d);

// Bytes of one block of one layer on one GPU: block_size tokens of the
// GPU's share of a token's KV (model.arch.gpu_kv_token_bytes).
uint64_t ks_scenario_block_bytes(const struct ks_scenario *s);

// detail.nodes: the scenario the simulation runs, detail.nodes of the
// cluster's nodes with their share of the workload (the arrival rate, the
// closed loop's requests in flight, workload.requests, the prefill pool's
// GPUs and the remote pool's bytes, each times detail.nodes /
// platform.nodes, the loader checking that they divide; a trace's arrivals
// and its counts handed out in file order thinned at random to that share,
// workload.keep_one_in), into *out, which shares s's strings and tables (s
// outlives it; never freed on its own). Returns the nodes each simulated
// node stands for (1: every node simulated, *out a copy of s).
uint32_t ks_scenario_sampled(const struct ks_scenario *s, struct ks_scenario *out);

// The decode units: GPUs, or attention ranks of model.arch.attn_tp GPUs each.
uint32_t ks_scenario_decode_units(const struct ks_scenario *s);

// Bytes of one GPU's HBM the KV cache may use: what scheduler.mem_fraction
// of it leaves after the GPU's weights when set, else all it leaves (cache.l1
// as a share is a share of this).
double ks_scenario_kv_room(const struct ks_scenario *s);

// Blocks one step of one request needs resident in L1, all layers together
// (the rule is documented at check_consistency in scenario.c).
uint64_t ks_scenario_step_blocks(const struct ks_scenario *s);

// One resolved field, as ks_scenario_foreach shows it.
struct ks_scenario_item {
    const char *path;   // "cache.l1", "workload.prompt_tokens.mu"
    const char *text;   // the value with its unit, readable and parseable again ("85%", "25GBps")
    int is_number;      // 1: number holds the value in base units; 0: text is the value
    int is_set;         // 0: an optional field left out (text "none")
    double number;
    const char *unit;   // the base unit of number ("B", "B/s", "s", "fraction", "" for counts)
    const struct ks_scenario_origin *origin;
};

// Calls fn on every field in schema order; stops at and returns fn's first
// non-zero result.
int ks_scenario_foreach(const struct ks_scenario *s, int (*fn)(const struct ks_scenario_item *it, void *ud),
                        void *ud);

#endif
