// cachebench.h - the cache manager's speed and memory: one cache driven by a
// synthetic access stream and timed (`kvstrata bench cache`).
//
// Setup: one request with one layer group of N blocks, created with
// ks_cache_req_grow into L1, then L2, then L3. The tiers hold round(l1 * N),
// round(l2 * N) and round(l3 * N) pages (ks_cachebench_pages). All tiers use
// 131072-byte blocks. The stream is generated whole before the clock starts
// (cachebench.c describes it), so that the timed loop is the manager alone;
// each timed step is ks_cache_step, one ks_cache_access, ks_cache_plan with
// an unlimited budget, and ks_cache_confirm of every batch in plan order.
#ifndef KS_CACHEBENCH_H
#define KS_CACHEBENCH_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "luapolicy.h"

struct ks_cachebench_params {
    uint32_t blocks;            // blocks in the request (N)
    uint32_t topk;              // attention slots per step (K), at most blocks
    uint32_t steps;             // decode steps
    uint32_t samples;           // blocks sampled per eviction victim; 0 = exact scan
    uint32_t window;            // prefetch window, blocks after an accessed block
    uint64_t seed;              // of the stream and (mixed) of eviction sampling
    double l1, l2, l3;          // tier sizes, fractions of the blocks
    enum ks_evict_policy evict; // the built-in policy, unless lua is set
    const char *lua;            // NULL, or a Lua file whose table's `evict` function is the policy
    int check;                  // 1: check the manager's invariants every 1000 steps and at the end
    // NULL, or called before the first step (done 0) and then every 64 steps
    // with the seconds since the clock started
    void (*progress)(void *ud, uint32_t done, uint32_t total, double elapsed);
    void *ud;
};

// The pages of L1, L2 and L3: round(fraction x blocks), unchecked. A caller
// checks them before ks_cachebench_run: L1 at least 1, the three together
// at least the blocks, none above KS_PAGE_MAX.
void ks_cachebench_pages(const struct ks_cachebench_params *p, double pages[KS_TIERS]);

// A finished benchmark. Caller storage: ks_cachebench_run fills it (also on
// failure), ks_cachebench_fini empties it.
struct ks_cachebench {
    struct ks_cache *cache;   // the manager after the run, for its statistics and memory
    uint64_t accesses;        // block accesses in the stream
    double wall;              // seconds in the timed step loop
    struct ks_luapolicy lua;  // the Lua policy, when params.lua is set
    char lua_err[1024];       // why it failed (its reason buffer)
};

// Builds the cache and the stream, runs the timed loop, and checks that the
// manager counted every access and that the Lua policy never failed. KS_OK;
// otherwise a negative status with the reason in err ("ks_cache_plan at step
// 12: ...", "invariant check after step 999: ...").
int ks_cachebench_run(struct ks_cachebench *b, const struct ks_cachebench_params *p, char *err, size_t len);
void ks_cachebench_fini(struct ks_cachebench *b);

#endif
