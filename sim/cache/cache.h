// cache.h - the HiSparse cache manager: which KV block lives in which tier.
//
// One manager serves one GPU. It has no clock and no SimGrid: the caller says
// which step it is, reports what attention accessed, asks for a migration
// plan, executes the plan's batches however it moves bytes (the simulator as
// SimGrid transfers, the runtime as real copies) and confirms each batch. The
// same code therefore runs in simulation and on hardware.
//
// A step, as the caller drives it:
//   ks_cache_step(c, t)                       once per decode step, t increasing
//   ks_cache_access(c, req, group, ...)       per request and layer group:
//                                             hits per tier, misses; heat,
//                                             prefetch candidates
//   ks_cache_plan(c, budget, &plan)           misses + prefetches + evictions
//                                             -> batches
//   ks_cache_confirm(c, batch) / _abort       as each batch lands (or fails)
//
// Blocks: a request owns, per layer group, a sequence of logical blocks
// (ks_cache_req_grow appends); a shared prefix maps several requests' logical
// blocks onto one virtual block with a reference count (ks_cache_req_share).
// Eviction never frees a block: it demotes it to the next tier, so a block
// shared by several requests is never freed while shared. A block is freed
// only when the last request that maps it is freed.
//
// Device buffers (buffer_blocks > 0; the organisation SGLang's HiSparse ships).
// L1 is cut into buffers of buffer_blocks consecutive pages; each (request,
// group) sequence gets one when the request is created (KS_ENOSPC when too
// few are free: ks_cache_buffers_free says how many are) and gives it back
// when the request and its blocks are gone. A block enters L1 only in its
// own sequence's buffer, and a full buffer makes room by evicting one of its
// own blocks, by the policy, among those not accessed in the current step:
// LRU, FIFO (the buffer's pages in arrival order, those accessed this step
// skipped), random, Belady, LFU, heat or a callback. The host holds a copy
// of every block (the engine backs each new block up as it is written), so
// an eviction from L1 moves no bytes: the block drops to an L2 page at once
// (stats.dropped; the generation bumps, so readers of its L1 page revalidate).
// L2 must therefore be able to hold every block of every request: the
// caller admits requests by L2's pages. No prefix sharing (ks_cache_req_share
// refuses), no reserve (ks_cache_set_reserve is ignored): a new block takes
// its buffer's free page or evicts one of its own.
//
// Ordering of batches: a batch whose `after` is not KS_NONE moves blocks into
// pages that the batch `after` is vacating; confirm `after` first. Readers:
// ks_cache_validate refuses a read only once a migration of the block has
// been confirmed, so a caller that starts a dependent batch as soon as its
// `after` has landed (before confirming it) must not read a block in flight
// from its source page: read it at its destination once its batch has
// landed (the runtime's rule, kernels/runtime/runtime.h). A caller that starts
// dependent batches only after confirming `after` may read in-flight blocks
// at their source and validate (tests/runtime/test_stale_reads.c races exactly that).
#ifndef KS_CACHE_H
#define KS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "blocktab.h"
#include "status.h"

enum ks_evict_policy {
    KS_EVICT_HEAT = 0, // lowest decayed attention mass, recently used blocks protected
    KS_EVICT_LRU,      // least recently accessed
    KS_EVICT_LFU,      // fewest accesses, then least recent
    KS_EVICT_BELADY,   // farthest next use (offline optimum; needs next-use steps)
    KS_EVICT_CALLBACK, // lowest score from a caller's function
    KS_EVICT_FIFO,     // first in, first out: per-request device buffers only (buffer_blocks > 0)
    KS_EVICT_RANDOM,   // a uniformly drawn eligible block
};

// Prefetch and migration priority classes, highest first. The lookahead
// window of an accessed block B is B+1 .. B+prefetch_window. Attention that
// enters a region (B missed, or B arrived by prefetch and is now used) opens
// B's window at SHARED/NEIGHBOR priority; a hit on B whose heat is rising
// (the region is warming) opens it at the lowest, HEAT. A hit on a block at a
// steady heat opens nothing: its neighbours had their chance when it came in.
enum ks_class {
    KS_CLASS_MISS = 0,     // accessed and not in L1: needed now
    KS_CLASS_WARM = 1,     // a miss of a request that sits out while its cold region warms up
                           // (ks_cache_defer): planned after the misses, within the budget
    KS_CLASS_SHARED = 2,   // a shared (refs > 1) block in the window of a block entering
    KS_CLASS_NEIGHBOR = 3, // an unshared block in the window of a block entering
    KS_CLASS_HEAT = 4,     // a block in the window of a hit whose heat is rising
    KS_CLASS_EVICT = 5,    // a demotion that makes room
    KS_CLASSES = 6,
};

// What an eviction callback sees of a block.
struct ks_block_view {
    uint32_t id;    // virtual block id
    uint32_t req;   // request that created the block
    uint32_t group; // its layer group
    uint32_t pos;   // its logical position in that request's sequence
    uint32_t tier;  // enum ks_tier_id
    uint32_t refs;  // requests mapping it
    uint32_t last;  // step of its last access (or arrival in L1)
    uint32_t now;   // current step
    double heat;    // decayed attention mass at the current step
};

// Returns a score; the block with the lowest score is evicted first.
typedef double (*ks_evict_score_fn)(void *ud, const struct ks_block_view *b);

// A prefetch rule: for an access that enters a block's region (a miss, or
// the first use of a prefetched block; entering = 1) or raises its heat
// (entering = 0), how many of the following blocks to prefetch (at most
// 1024). Replaces prefetch_window when set.
typedef uint32_t (*ks_prefetch_fn)(void *ud, const struct ks_block_view *b, int entering);

struct ks_cache;

// A step whose selection of one (request, group) was deferred
// (ks_cache_access_deferred).
struct ks_deferred {
    uint32_t step; // the cache's step
    uint32_t arg;  // the caller's (ks_cache_access_deferred's arg)
    double gain;   // the heat clock's gain in that step
};

// Brings deferred selections up to date: draws the selections of the n
// steps e[0 .. n) of request req's group `group`, oldest first, and hands
// each to ks_cache_access_past(c, req, group, &e[i], ...). KS_OK or a status.
typedef int (*ks_settle_fn)(void *ud, struct ks_cache *c, uint32_t req, uint32_t group, const struct ks_deferred *e,
                            uint32_t n);

struct ks_cache_params {
    uint32_t n_blocks;               // virtual block ids (table entries)
    uint32_t tier_blocks[KS_TIERS];  // pages per tier, blocks; 0 = tier absent (L1 required)
    uint32_t block_bytes[KS_TIERS];  // bytes per block in each tier (compression shrinks L2/L3)
    uint32_t groups;                 // layer groups per request (sequences per request)
    uint32_t heat_half_life;         // steps (default 256)
    uint32_t prefetch_window;        // blocks ahead of an accessed block (default 4; 0 = none)
    uint32_t migration_batch;        // blocks per batch (default 32)
    uint32_t warm_floor;             // blocks of warm-ups a plan admits whatever its budget
                                     // (0: migration_batch)
    uint32_t protect_steps;          // heat policy: blocks used this recently are evicted last (default 4)
    uint32_t evict_samples;          // blocks sampled per victim; 0 = exact scan (default 5;
                                     // belady is always exact)
    enum ks_evict_policy evict;
    ks_evict_score_fn evict_fn;      // KS_EVICT_CALLBACK only
    void *evict_ud;                  // passed to evict_fn
    ks_prefetch_fn prefetch_fn;      // NULL: prefetch_window blocks
    void *prefetch_ud;               // passed to prefetch_fn
    uint32_t buffer_blocks;          // 0: L1 is one pool shared by every request (the seed's
                                     // organisation). > 0: L1 is cut into device buffers of this
                                     // many pages, one per (request, group), and the host holds a
                                     // copy of every block (eager backup): see "Device buffers"
    int count_per_req;               // 1: each planned batch says its busiest request's blocks
                                     // (most_per_req, for a gather kernel's thread block per
                                     // request); 0: most_per_req stays 0, no counting
    uint64_t seed;                   // sampling randomness
    int plain_forms;                 // 1: access reports and a device buffer's victim scan take
                                     // their plain forms even where the CPU has AVX-512 (the forms
                                     // give the same results: tests compare them); 0 (default):
                                     // the widest form the CPU has
    int debug;                       // check every invariant after each plan, confirm and abort;
                                     // a broken one aborts the process with its message
    int tally;                       // 1: a tally (tally.c): blocks counted per request and tier,
                                     // with no entry; it places, frees and keeps L1's reserve but
                                     // takes no access (a follower of detail.gpus in time)
};

// Fills p with the defaults above (the seed's HiSparse defaults), sizes zero.
void ks_cache_params_default(struct ks_cache_params *p);

struct ks_cache;

// KS_OK when p describes a manager ks_cache_new can make; else KS_EINVAL
// with the reason in err (if given).
int ks_cache_params_check(const struct ks_cache_params *p, char *err, size_t len);

// Creates a manager; returns NULL when the parameters are invalid (message in
// err if given) or memory runs out. The caller owns it and frees it with
// ks_cache_free (NULL is a no-op).
struct ks_cache *ks_cache_new(const struct ks_cache_params *p, char *err, size_t errlen);
void ks_cache_free(struct ks_cache *c);

// ---- requests ----------------------------------------------------------

// A new request with empty sequences in every group; *req receives its id.
int ks_cache_req_new(struct ks_cache *c, uint32_t *req);

// Maps the first n logical blocks of every group of src onto req (empty).
int ks_cache_req_share(struct ks_cache *c, uint32_t req, uint32_t src, uint32_t n);

// Appends n blocks to every group of req, placed in `tier` or, when it is
// full, in the next tier down that has room. `placed` (may be NULL) counts
// blocks per tier. All or nothing: KS_ENOSPC, and nothing appended, when the
// tiers from `tier` down cannot take n blocks for every group. A new block
// counts as used in the current step: it is not evicted before the next.
int ks_cache_req_grow(struct ks_cache *c, uint32_t req, uint32_t n, unsigned tier,
                      uint32_t placed[KS_TIERS]);

// Drops req's references; blocks nobody else maps are freed (blocks in flight
// are freed when their batch is confirmed or aborted).
int ks_cache_req_free(struct ks_cache *c, uint32_t req);

uint32_t ks_cache_req_len(const struct ks_cache *c, uint32_t req); // logical blocks per group

// Device buffers (buffer_blocks > 0): buffers free now; a request takes one
// per group. 0 in the shared organisation.
uint32_t ks_cache_buffers_free(const struct ks_cache *c);

// ---- steps and access reports ------------------------------------------

// Starts step `step` (not below the previous one). Clears the previous step's
// unplanned candidates (counted in stats.unplanned).
int ks_cache_step(struct ks_cache *c, uint32_t step);

struct ks_access {
    uint32_t block; // logical block index in the request's group
    float mass;     // attention mass it received
    uint32_t next;  // step of its next access, KS_NONE if none; read by KS_EVICT_BELADY only
    // 1: a selection made earlier in the step (the previous layer's) chose
    // it too, so a copy of it may start with that selection (a miss's batch
    // then says `early`); 0: its copy starts with this access's layer
    uint8_t ahead;
};

enum ks_where {
    KS_AT_L1 = KS_L1, // hit
    KS_AT_L2 = KS_L2,
    KS_AT_L3 = KS_L3,
    KS_AT_INFLIGHT = 4, // already being moved up; wait for its batch
};

struct ks_access_report {
    uint32_t found[KS_TIERS]; // blocks found in each tier (found[KS_L1] are hits)
    uint32_t inflight;        // blocks found migrating up
    uint32_t misses;          // n - found[KS_L1]
};

// Prepares a coming ks_cache_access of request req and group `group` for a
// caller that knows the blocks ahead: fetches into the CPU's cache stage 0
// the group's map of blocks to ids (blocks may be NULL), 1 the entries of
// blocks[0 .. n) (they read the map: make stage 0 a call or more before).
// It changes nothing.
void ks_cache_warm_access(const struct ks_cache *c, uint32_t req, uint32_t group, const uint32_t *blocks, uint32_t n,
                          int stage);

// Records the accesses of one request and group in the current step: heat,
// recency, hit/miss statistics, prefetch candidates. where (may be NULL)
// receives one enum ks_where per access; rep (may be NULL) the totals.
int ks_cache_access(struct ks_cache *c, uint32_t req, uint32_t group, const struct ks_access *acc,
                    uint32_t n, uint8_t *where, struct ks_access_report *rep);

// Every block of one request's group accessed with the same mass (dense
// attention), accounted in aggregate where that changes nothing: when all
// the group's blocks are in L1, none arrived by prefetch unused, the policy
// reads nothing but heat and recency (not LFU, not Belady, no prefetch
// function) and no other request maps any of them. Then *done = 1: the hits
// are counted and the heat and recency updates are logged once for the
// request and applied to a block when something reads it, bit for bit what
// ks_cache_access would have stored (aggregate.c). Otherwise *done = 0 and
// nothing is recorded: the caller accesses the group with ks_cache_access.
// Contract: in a step in which any group of a request is accounted so, every
// block of every group of the request is accessed (one way or the other),
// and a group accessed through ks_cache_access is not accounted so after it.
int ks_cache_access_uniform(struct ks_cache *c, uint32_t req, uint32_t group, float mass, int *done,
                            struct ks_access_report *rep);

// Lets selections be deferred (ks_cache_access_deferred), settle_fn drawing
// them (NULL: none is; the default).
void ks_cache_set_settle(struct ks_cache *c, ks_settle_fn fn, void *ud);

// A selection not drawn yet of n blocks of one request's group, all hits
// (a generator's whose size is known before its draws: the access model's),
// accounted without its blocks where nothing can tell which they are: the
// conditions of ks_cache_access_uniform, no dense step of the request
// pending in aggregate, and a settle_fn set (ks_cache_set_settle). Then
// *done = 1: the n hits are counted and the step is logged with `arg` (the
// caller's, the same for every group of the request in a step); the blocks'
// heat and recency are brought up to date when something may read them (a
// victim is chosen in L1, the heat clock rebases, another request maps the
// request's blocks, ks_cache_settle): the cache calls settle_fn with the
// group's deferred steps, and each selection then drawn is applied as
// ks_cache_access would have applied it in its step (defer.c). Otherwise
// *done = 0 and nothing is recorded. A request freed with deferred steps
// drops them. Contract: as ks_cache_access_uniform's; and a group with
// deferred steps is settled (ks_cache_settle) before ks_cache_access reads it.
int ks_cache_access_deferred(struct ks_cache *c, uint32_t req, uint32_t group, uint32_t n, uint32_t arg, int *done,
                             struct ks_access_report *rep);

// The deferred steps of request req's group not settled yet.
uint32_t ks_cache_deferred(const struct ks_cache *c, uint32_t req, uint32_t group);

// Prepares request req for a caller that visits many requests in turn (a
// step's emissions, its deferred selections): fetches into the CPU's cache
// what ks_cache_req_len, ks_cache_deferred and ks_cache_access_deferred read,
// stage 0 the request's record, 1 its groups' sequences and aggregate state,
// 2 that state's arrays, each stage made for every request before the next
// (each needs the lines of the one before). It changes nothing.
void ks_cache_warm_req(const struct ks_cache *c, uint32_t req, int stage);

// Whether request req's next selections may be deferred: the policy
// allows it, and it has steps deferred not settled or every block of every
// group is in L1 as ks_cache_access_deferred needs.
int ks_cache_deferrable(struct ks_cache *c, uint32_t req);

// For settle_fn: deferred step e's selection of request req's group, its
// n accesses applied to heat and recency as in e's step. KS_OK or KS_EINVAL.
int ks_cache_access_past(struct ks_cache *c, uint32_t req, uint32_t group, const struct ks_deferred *e,
                         const struct ks_access *acc, uint32_t n);

// Settles request req's deferred steps (every group's): settle_fn draws
// them. KS_OK or settle_fn's status.
int ks_cache_settle(struct ks_cache *c, uint32_t req);

// Request req sits this step out (its cold region warms up): its misses of
// the step so far become KS_CLASS_WARM candidates, moved after every other
// request's misses and only within the plan's budget, so that no step waits
// for them. Returns how many it deferred (stats.deferred).
uint32_t ks_cache_defer(struct ks_cache *c, uint32_t req);

// KS_EVICT_BELADY only: the step at which a block will next be accessed, for
// blocks not accessed yet (later accesses carry it in ks_access.next).
int ks_cache_set_next_use(struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block, uint32_t step);

// Asks plans to keep `pages` L1 pages free (counting those that batches in
// flight will free) by demoting victims, so that the blocks the caller creates
// next (a decode step's new KV) find room in L1. 0 (the default) keeps none.
void ks_cache_set_reserve(struct ks_cache *c, uint32_t pages);

// ---- migration ----------------------------------------------------------

struct ks_batch {
    uint32_t id;
    uint32_t after;    // batch that must be confirmed first, or KS_NONE
    uint8_t src, dst;  // tiers
    uint8_t klass;     // enum ks_class of its highest-priority block
    uint8_t early;     // 1: misses only, each accessed `ahead` (struct ks_access) by every request that missed it
    uint32_t n;        // blocks
    uint32_t most_per_req; // the most blocks one request has in it (params count_per_req; else 0)
    uint32_t group;    // the layer group whose blocks it carries (a demotion: the group of the moves that
                       // take its pages; groups: a demotion that keeps L1's reserve)
    uint64_t bytes;    // bytes moved: n * the smaller of the two tiers' block bytes
    uint32_t *blocks;  // [n] virtual ids
    uint32_t *src_pages; // [n] pages read in src
    uint32_t *dst_pages; // [n] pages written in dst
    const uint8_t *block_klass; // [n] enum ks_class of each block: a miss's batch may carry prefetches
};

struct ks_plan {
    struct ks_batch **batch; // [n], in an order that respects `after`
    uint32_t n;
    uint64_t bytes;          // total of the batches
};

// Turns the step's candidates into batches. Misses are always planned;
// prefetches are planned in class order while their bytes fit in
// budget_bytes (after the misses' bytes), the rest are dropped. Within a
// class, requests take turns. Evictions make room in L1 (demoting to L2,
// and L2 to L3 when L2 is full). A candidate that finds no page stays
// pending for a later plan in the same step. The plan's array stays valid
// until the next ks_cache_plan; each batch until it is confirmed or aborted.
int ks_cache_plan(struct ks_cache *c, uint64_t budget_bytes, struct ks_plan *plan);

// The batch has landed: blocks move, generations bump, source pages free.
int ks_cache_confirm(struct ks_cache *c, struct ks_batch *b);
// Every batch of the last plan has landed (and been confirmed): a tally's
// moves, which carry no batch, land now (tally.c); block by block, nothing.
void ks_cache_land(struct ks_cache *c);
// The batch failed: blocks stay where they were, destination pages free.
// Batches that depend on it must be aborted first.
int ks_cache_abort(struct ks_cache *c, struct ks_batch *b);

uint32_t ks_cache_inflight_batches(const struct ks_cache *c);

// ---- readers and generations ---------------------------------------------

struct ks_loc {
    uint32_t id;    // virtual block id
    uint32_t page;  // page in its tier
    uint8_t tier;   // enum ks_tier_id
    uint8_t state;  // enum ks_blk_state
    uint16_t gen;   // migration generation the reader must present
};

int ks_cache_locate(const struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block,
                    struct ks_loc *loc);

// A hint that ks_cache_locate will be asked for this block soon: its entry
// is fetched meanwhile (a loop over many blocks calls it some blocks ahead).
// Nothing for a block it would refuse.
void ks_cache_locate_ahead(const struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block);

// KS_OK while the page the reader located still holds the block (no
// migration of it has been confirmed since), KS_ESTALE otherwise (counted).
int ks_cache_validate(struct ks_cache *c, const struct ks_loc *loc);

// The same test, counting nothing: non-zero while loc (a location kept from
// an earlier ks_cache_locate, e.g. a resident-pointer table's entry) still
// names the block's page, tier and generation. A loc whose id is out of
// range is not current.
int ks_cache_current(const struct ks_cache *c, const struct ks_loc *loc);

// ---- statistics, memory, checking ---------------------------------------

struct ks_cache_stats {
    uint64_t accesses;                        // block accesses reported
    uint64_t found[KS_TIERS];                 // accesses that found the block in each tier
    uint64_t found_inflight;                  // accesses that found it migrating up
    uint64_t evictions[KS_TIERS];             // victims chosen in each tier
    uint64_t demotions_shared;                // demotions of blocks with refs > 1
    uint64_t migrations[KS_TIERS][KS_TIERS];  // blocks confirmed, [src][dst]
    uint64_t mig_bytes[KS_TIERS][KS_TIERS];   // bytes confirmed, [src][dst]
    uint64_t batches;                         // batches confirmed
    uint64_t aborted;                         // batches aborted
    uint64_t pf_issued;                       // prefetched blocks planned
    uint64_t pf_used;                         // prefetched blocks accessed after arriving
    uint64_t pf_dropped;                      // prefetch candidates over the budget
    uint64_t pf_wasted;                       // prefetched blocks evicted or freed unused
    uint64_t unplanned;                       // misses still without a page when their step ended
    uint64_t stale_refused;                   // ks_cache_validate calls refused
    uint64_t dropped;                         // device buffers: L1 copies dropped (the host holds the block)
    uint64_t deferred;                        // misses deferred to warm up (ks_cache_defer)
    uint64_t warmed;                          // deferred blocks planned into L1
    uint64_t rebases;                         // heat clock rebases
    uint64_t aggregated;                      // accesses accounted in aggregate (ks_cache_access_uniform)
};

const struct ks_cache_stats *ks_cache_stats(const struct ks_cache *c);

// Adds every counter of s to sum (statistics of several GPUs).
void ks_cache_stats_add(struct ks_cache_stats *sum, const struct ks_cache_stats *s);
// Multiplies every counter of s by f >= 0, rounded to the nearest (a
// sample's statistics standing for more GPUs: detail.gpus).
void ks_cache_stats_scale(struct ks_cache_stats *s, double f);

struct ks_tier_view {
    uint32_t cap, used, peak; // pages
    uint64_t allocs, frees, alloc_fails, mig_in, mig_out;
};
void ks_cache_tier_view(const struct ks_cache *c, unsigned tier, struct ks_tier_view *v);

// Heat of a block (attention mass, decayed to the current step); a
// deferred selection not settled (ks_cache_settle) is not in it.
double ks_cache_heat(const struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block);

// The layer group of a live block (the group of the request that created it).
uint32_t ks_cache_block_group(const struct ks_cache *c, uint32_t id);

// Bytes of memory the manager holds now, its block table and page arrays
// at the size they are reserved for (they commit memory only as far as
// they have been used: bigmem.h).
uint64_t ks_cache_bytes(const struct ks_cache *c);

// Checks every invariant (O(blocks)): each live block in exactly one tier or
// in flight, occupancy equal to the blocks counted in each tier, no page used
// twice, reference counts equal to the mappings, block counts conserved by
// migrations. KS_OK, or KS_ECORRUPT with the first broken invariant in msg.
int ks_cache_check(const struct ks_cache *c, char *msg, size_t len);

// Visits every statistic as (name, value); tiers are expanded by name.
void ks_cache_stats_visit(const struct ks_cache *c,
                          void (*fn)(void *ud, const char *name, const char *desc, double value),
                          void *ud);

#endif
