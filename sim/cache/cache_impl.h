// cache_impl.h - the cache manager's private state, shared by its modules:
// cache.c (steps, access reports), request.c (requests), evict.c (victim
// choice), migrate.c (migration planning, confirm, abort), check.c
// (invariants). Nothing outside those files includes it.
#ifndef KS_CACHE_IMPL_H
#define KS_CACHE_IMPL_H

#include "blocktab.h"
#include "cache.h"
#include "fastdiv.h"
#include "grow.h"
#include "heat.h"
#include "rng.h"
#include "seqmap.h"
#include "tier.h"

// One step's accesses accounted in aggregate (aggregate.c): every block of
// the request's groups below `blocks` received `add` (mass * the clock's gain)
// at `step`, except the blocks of groups accounted block by block in it.
struct ks_agg_entry {
    uint32_t step, blocks;
    double add;
};

#define KS_AGG_LOG 32 // steps a request accumulates before its blocks are brought up to date

// A request's accesses accounted in aggregate and not yet applied to its
// blocks (aggregate.c): a block's true heat and recency are its entry's with
// the entries after its `last` applied, in order.
struct ks_agg {
    uint32_t n;        // entries pending
    uint32_t *settled; // [groups] leading blocks known to be in L1 and not prefetched
    uint32_t *touched; // [groups] 1 + the step the group was last accessed block by block, or 0
    uint32_t *accounted; // [groups] 1 + the step the group was last accounted in aggregate, or 0
    struct ks_agg_entry e[KS_AGG_LOG];
    // selections deferred (defer.c): the steps, oldest first; group g's
    // are def[def_from[g] .. n_def), none when def_from[g] is KS_NONE
    struct ks_deferred *def;
    uint32_t n_def, cap_def;
    uint32_t *def_from; // [groups]
    uint32_t def_groups; // groups with deferred steps
};

struct ks_req {
    struct ks_seq *seq; // [groups]
    uint32_t *buf;      // [groups] device buffer of each sequence (buffer_blocks > 0), else NULL
    struct ks_agg *agg; // accesses accounted in aggregate (from the first one), else NULL
    uint8_t live;
};

enum { KS_BUF_FREE = 0, KS_BUF_OWNED = 1, KS_BUF_ORPHAN = 2 };

// A device buffer (buffer_blocks > 0): L1 pages [i * buffer_blocks, (i + 1) *
// buffer_blocks) for one (request, group) sequence.
struct ks_buf {
    uint32_t req;   // owning request (KS_BUF_OWNED)
    uint32_t used;  // its pages in use: blocks there or arriving
    uint32_t hint;  // offset where the search for a free page starts
    uint32_t need;  // planning scratch: admitted blocks bound for it
    uint32_t spare;  // the next victim a plan's scan found beyond its need (a new block's), or KS_NONE
    uint32_t spare_step; // 1 + the step of that scan
    uint32_t barren; // 1 + the step in which a scan found no victim (none can appear later in that
                     // step: blocks only get used or arrive, both ineligible until the next), or 0
    uint16_t group; // owning sequence's group
    uint8_t state;  // KS_BUF_FREE: on the free stack; KS_BUF_ORPHAN: its request
                    // has gone but a block in flight still holds a page
};

// A block the step wants moved up to L1.
struct ks_cand {
    uint32_t id;    // virtual block id
    uint32_t req;   // request whose access produced it (fairness key)
    uint32_t rank;  // k-th candidate of that request in its class (set by plan)
    uint32_t klass; // enum ks_class (32 bits: a key of the plan's radix sort)
    uint8_t dead;   // the block was freed; drop it
    uint8_t early;  // a miss every accessor chose `ahead` (struct ks_access)
};

// One planned block move, before batches are formed.
struct ks_rec {
    uint32_t id;
    uint32_t src_page, dst_page;
    uint32_t dep;     // record that vacates dst_page, or KS_NONE
    uint32_t handoff; // block that takes src_page when this move lands, or KS_NONE
    uint32_t batch;   // batch slot it went to
    uint16_t group;   // the layer group whose batch carries it (migrate.c, order_records)
    uint8_t src, dst, klass, depth;
    uint8_t early;    // a miss planned from an `early` candidate (batches keep them apart)
};

// A batch and what the manager needs to finish it.
struct ks_batch_rec {
    struct ks_batch b;   // what the caller sees
    uint32_t *handoff;   // [cap] block that takes each source page, or KS_NONE
    uint8_t *klass;      // [cap] class of each block
    uint32_t cap;        // blocks the arrays hold
    uint32_t after_slot; // slot of b.after, or KS_NONE
    uint32_t slot;       // its own slot
    uint8_t live;
};

// An eviction candidate: its key and block id.
struct kv {
    uint64_t key;
    uint32_t id;
};

#define KS_SPAN 64 // L1 pages of one entry of l1_least (evict.c)
#define KS_EVICT_POOL 16 // runners-up kept per tier between eviction rounds

// Loops over lists of blocks (candidates, records, victims, a batch's
// blocks) read each block's entry, which lies anywhere in the block table:
// they fetch the entry KS_AHEAD items before its use, so that the misses
// overlap. NOTE: written in the loops, not in a helper: GCC takes a function
// that only prefetches for one without effect and drops its calls (GCC 12).
#define KS_AHEAD 16

struct ks_evict_pool {
    struct kv e[KS_EVICT_POOL];
    uint32_t n;
};

struct ks_cache {
    struct ks_cache_params p;
    struct ks_blocktab tab;
    struct ks_tier tier[KS_TIERS];
    struct ks_heat_clock clk;
    struct ks_rng rng;
    uint32_t now;
    uint32_t reserve; // L1 pages kept free for new blocks (ks_cache_set_reserve)
    uint8_t started;
    uint8_t wide;        // a device buffer's scan may take its AVX-512 form (evict.c)
    uint8_t wide_access; // access reports may take their AVX-512 form (access_wide.c)
    uint8_t lower[KS_TIERS]; // next present tier down, or KS_TIER_NONE

    uint32_t *lfu;  // [ids] access counts (KS_EVICT_LFU only)
    uint32_t *next; // [ids] next-use steps (KS_EVICT_BELADY only)

    struct ks_req *req;  // [reqs.cap]
    struct ks_ids reqs;  // requests ever made (reqs.n) and the freed ones

    // candidates of the current step, and id -> candidate index
    struct ks_cand *cand, *cand_tmp; // cand_tmp: the plan's sort's scratch
    uint32_t n_cand, cap_cand, cap_cand_tmp;
    uint32_t *hkey, *hval, *hstamp;
    uint32_t hcap, stamp;

    // planning scratch
    struct ks_rec *rec;
    uint32_t n_rec, cap_rec;
    struct ks_rec *rec_tmp; // records ordered by layer group (migrate.c)
    uint32_t cap_rec_tmp;
    uint32_t *group_count;  // [groups + 2] counting sort of the records by group
    struct ks_cand *adm; // admitted candidates of the plan in progress
    uint32_t *adm_id;
    uint8_t *adm_src, *adm_klass;
    uint32_t cap_adm;
    uint32_t *samp;    // sampled pages (evict.c)
    uint32_t cap_samp;
    uint32_t *turn_pages; // a growth's turn of pages, block by block, group by group (request.c)
    uint32_t cap_turn_pages;
    uint32_t *early;   // the plan's early misses, sorted (migrate.c)
    uint32_t cap_early;
    struct kv *heap;   // lowest keys seen (evict.c)
    struct ks_evict_pool pool[KS_TIERS];
    struct kv *bel[KS_TIERS]; // Belady: max-heaps of (next use, id) per tier (evict.c)
    uint32_t n_bel[KS_TIERS], cap_bel[KS_TIERS];
    uint8_t bel_lost;         // a push failed: rebuild before trusting the heaps
    uint32_t cap_heap;
    uint32_t *vict[KS_TIERS]; // victims chosen in each tier (migrate.c)
    uint32_t cap_vict[KS_TIERS];
    uint32_t *turn;    // [reqs.n * KS_CLASSES + 1] per-request counters
    uint32_t cap_turn;
    uint32_t *req_mark; // [cap_req_mark] per request: 1 + the plan's batch last counted, its blocks there
    uint32_t *req_count;
    uint32_t cap_req_mark;

    // batches: slots reused through a free stack
    struct ks_batch_rec **slot;
    uint32_t n_slot, cap_slot;
    uint32_t *free_slot;
    // [cap_slot] the slots' records in address order: a batch handed back
    // is found among them by bisection (migrate.c, rec_of)
    struct ks_batch_rec **slot_by_addr;
    uint32_t cap_side; // entries free_slot and slot_by_addr have room for (cap_slot once grown)
    uint32_t n_free_slot;
    uint32_t n_live_batches;
    uint32_t next_batch_id;
    struct ks_batch **plan_out;
    uint32_t cap_plan_out;

    // device buffers (buffer_blocks > 0, buffer.c)
    struct ks_buf *bufs;     // [n_bufs]
    uint32_t n_bufs;
    uint64_t buf_magic;      // ks_fastdiv_magic(buffer_blocks), for ks_buf_of_page
    uint32_t *free_bufs;     // stack of free buffers
    uint32_t n_free_bufs;
    uint32_t *touched;       // [n_bufs] planning scratch: buffers with a need
    uint32_t *arrival;       // [L1 pages] KS_EVICT_FIFO: order of the page's block's arrival
    uint32_t arrivals;       // arrivals so far (wraps after 2^32: FIFO order then holds within 2^32)
    uint32_t *l1_last;       // [L1 pages] device buffers under KS_EVICT_LRU: for a used page, its
                             // block's last use when the block is resident there, else KS_NONE
                             // (arriving): the lru scan's keys, read in page order (evict.c)
    uint32_t *l1_least;      // [L1 pages / KS_SPAN] with l1_last when buffers are whole spans: at
                             // most the least l1_last of each span's used pages (evict.c)

    uint32_t agg_pending;        // requests with aggregate entries not yet applied (aggregate.c)
    uint32_t agg_reqs;           // requests with aggregate state (aggregate.c)
    ks_settle_fn settle_fn;      // draws deferred selections (defer.c); NULL: none is deferred
    void *settle_ud;
    uint32_t def_pending;        // requests with deferred selections not settled (defer.c)
    int def_status;              // KS_OK, or the status of a settling that failed (defer.c)

    uint64_t placed[KS_TIERS];   // blocks created in each tier (ks_cache_req_grow)
    uint64_t released[KS_TIERS]; // blocks freed from each tier
    struct ks_cache_stats st;
    struct ks_tally *tally;      // p.tally: the counts that stand for the blocks (tally.c), else NULL
};

// A tally's request (tally.c): its blocks per group and the pages it holds
// in each tier, every group's together.
struct ks_tally_req {
    uint32_t len, prefix;  // blocks per group; of them, mapped from src's (shared)
    uint32_t n[KS_TIERS];  // pages it owns in each tier
    uint32_t gen;          // bumped when it is freed: its runs die
    uint32_t src;          // the request whose prefix it maps, or KS_NONE
    uint32_t sharers;      // live requests mapping its prefix
    uint8_t live, held;    // held: freed, its blocks kept for its sharers
};

// Pages of one request that arrived in a tier together; a tier's runs are
// in order of arrival, the oldest first.
struct ks_tally_run {
    uint32_t req, gen, n;
};

struct ks_tally_fifo {
    struct ks_tally_run *run;
    uint32_t head, n, cap;
};

struct ks_tally {
    struct ks_tally_req *req; // [reqs.cap]
    struct ks_ids reqs;       // requests ever made (reqs.n) and the freed ones
    struct ks_tally_fifo fifo[KS_TIERS];
    // the plan's demotions until they land (ks_cache_land, or the next call that changes the
    // tally): out[t][d] blocks left t for d, hand[d] of them took pages
    // that d's own demotions vacate
    uint64_t out[KS_TIERS][KS_TIERS], hand[KS_TIERS];
    uint64_t chunks; // block table chunks a per-block manager would hold
};

// tally.c: a tally's forms of the calls (c->tally set)
int ks_tally_init(struct ks_cache *c);
void ks_tally_free(struct ks_cache *c);
int ks_tally_req_new(struct ks_cache *c, uint32_t *req);
int ks_tally_req_share(struct ks_cache *c, uint32_t req, uint32_t src, uint32_t n);
int ks_tally_req_grow(struct ks_cache *c, uint32_t req, uint32_t n, unsigned tier, uint32_t placed[KS_TIERS]);
int ks_tally_req_free(struct ks_cache *c, uint32_t req);
uint32_t ks_tally_req_len(const struct ks_cache *c, uint32_t req);
int ks_tally_step(struct ks_cache *c, uint32_t step);
int ks_tally_plan(struct ks_cache *c, struct ks_plan *plan);
void ks_tally_land(struct ks_cache *c);
uint64_t ks_tally_bytes(const struct ks_cache *c);
int ks_tally_check(const struct ks_cache *c, char *msg, size_t len);
// Live request req of a tally, or NULL.
static inline struct ks_tally_req *ks_tally_req_of(const struct ks_tally *y, uint32_t req)
{
    return req < y->reqs.n && y->req[req].live ? &y->req[req] : NULL;
}

// request.c
void ks_cache_release_block(struct ks_cache *c, uint32_t id);
// Live request req, or NULL.
static inline struct ks_req *ks_cache_req_of(const struct ks_cache *c, uint32_t req)
{
    return req < c->reqs.n && c->req[req].live ? &c->req[req] : NULL;
}

// buffer.c: the device buffers (cache.h, "Device buffers")
int ks_buffer_init(struct ks_cache *c);
void ks_buffer_fini(struct ks_cache *c);
uint64_t ks_buffer_bytes(const struct ks_cache *c);
// Gives request q a buffer per group. KS_OK, KS_ENOSPC or KS_ENOMEM.
int ks_buffer_assign(struct ks_cache *c, struct ks_req *q, uint32_t req);
// Gives q's buffers back (those still holding pages when their last page goes).
void ks_buffer_release(struct ks_cache *c, struct ks_req *q);
// Frees a page of tier t (every page freed goes through here).
void ks_cache_page_free(struct ks_cache *c, unsigned t, uint32_t page);
// A page in the buffer of block id's sequence for id, evicting one of the
// buffer's blocks when it is full; KS_NONE when none can be had.
uint32_t ks_buffer_place(struct ks_cache *c, uint32_t id);
// Pages for the plan's n admitted blocks (c->adm..., migrate.c): records
// their moves at depth 0, evicting in their buffers. Reorders the admitted
// arrays so that the ones placed come first; returns how many.
uint32_t ks_buffer_room(struct ks_cache *c, uint32_t n, int *err);
// The buffers' invariants (check.c). KS_OK or KS_ECORRUPT with msg.
int ks_buffer_check(const struct ks_cache *c, char *msg, size_t len);

// aggregate.c: accesses accounted in aggregate (ks_cache_access_uniform)
// Block id's heat code and recency with its pending aggregate accesses
// applied (what block-by-block accounting would have stored), writing nothing.
void ks_agg_current(const struct ks_cache *c, uint32_t id, uint64_t *heat, uint32_t *last);
// Applies block id's pending aggregate accesses to its entry.
void ks_agg_settle(struct ks_cache *c, uint32_t id);
static inline void ks_agg_settle_block(struct ks_cache *c, uint32_t id)
{
    if (c->agg_pending) // the common case, in line: nothing pending anywhere
        ks_agg_settle(c, id);
}
// Applies every pending aggregate access of request q (or of every request).
void ks_agg_flush(struct ks_cache *c, struct ks_req *q);
void ks_agg_flush_all(struct ks_cache *c);
// Block id leaves L1: its sequence is no longer known to be all in L1.
void ks_agg_leave(struct ks_cache *c, uint32_t id);
static inline void ks_agg_left_l1(struct ks_cache *c, uint32_t id)
{
    if (c->agg_reqs)
        ks_agg_leave(c, id);
}
// Another request now maps some of q's blocks: they are checked again.
void ks_agg_shared(struct ks_cache *c, struct ks_req *q);
// Request q is accessed block by block in group g this step.
static inline void ks_agg_touch(struct ks_cache *c, struct ks_req *q, uint32_t g)
{
    if (q->agg)
        q->agg->touched[g] = c->now + 1u;
}
// Whether the policy reads nothing of an access but heat and recency (not
// LFU, not Belady, no prefetch function): then accesses of blocks all in L1
// may be accounted in aggregate or deferred.
static inline int ks_agg_policy_allows(const struct ks_cache *c)
{
    return !c->lfu && !c->next && !c->p.prefetch_fn;
}
// q's aggregate state, made on first use; NULL when out of memory.
struct ks_agg *ks_agg_get(struct ks_cache *c, struct ks_req *q);
// q's state for a growth: its own, or made now where the cache accounts in
// aggregate (some request holds state); NULL otherwise or out of memory (the
// blocks are then checked at the first access).
static inline struct ks_agg *ks_agg_growing(struct ks_cache *c, struct ks_req *q)
{
    if (q->agg || !c->agg_reqs || !ks_agg_policy_allows(c))
        return q->agg;
    return ks_agg_get(c, q);
}
// Group g's block at position pos was just placed in tier t: in L1 behind
// blocks known to be there, it is known at once (a may be NULL).
static inline void ks_agg_grown(struct ks_agg *a, uint32_t g, uint32_t pos, unsigned t)
{
    if (a && t == KS_L1 && a->settled[g] == pos)
        a->settled[g] = pos + 1;
}
// Group g's n blocks from position pos were just placed in L1, as n calls
// of ks_agg_grown in turn would have it.
static inline void ks_agg_grown_l1(struct ks_agg *a, uint32_t g, uint32_t pos, uint32_t n)
{
    if (a && a->settled[g] == pos)
        a->settled[g] = pos + n;
}
// Whether every block of q's group is in L1, not arrived by a prefetch still
// unused, and mapped by q alone (a->settled[group] moved past those known).
int ks_agg_in_l1(const struct ks_cache *c, const struct ks_req *q, struct ks_agg *a, uint32_t group);
// Frees q's aggregate state (its entries applied first, its deferred
// selections dropped).
void ks_agg_free(struct ks_cache *c, struct ks_req *q);
uint64_t ks_agg_bytes(const struct ks_cache *c, const struct ks_req *q);

// defer.c: selections deferred (ks_cache_access_deferred)
// Settles every request's deferred selections, before anything reads the
// heat or recency of a block in L1 (a victim's choice): in line, the common
// case of none pending. A failure is kept in c->def_status (ks_cache_plan
// and ks_cache_step return it).
int ks_defer_settle_all(struct ks_cache *c);
static inline void ks_defer_settle_l1(struct ks_cache *c)
{
    if (c->def_pending)
        ks_defer_settle_all(c);
}
// The heat clock rebased (every stored ref times factor): the deferred
// selections keep waiting, their logged gains times factor, where factor is
// a power of two; otherwise they are settled first (defer.c says why that
// is exact).
void ks_defer_rebase(struct ks_cache *c, double factor);
// The same before a victim is chosen in device buffer `buf`, whose pages
// hold its owner's blocks only: that request's.
void ks_defer_settle_buffer(struct ks_cache *c, uint32_t buf);
// Settles request req's deferred selections where a caller cannot report a
// failure: it is kept in c->def_status.
void ks_defer_settle_kept(struct ks_cache *c, uint32_t req);
// Frees q's deferred selections (dropped).
void ks_defer_free(struct ks_agg *a);
uint64_t ks_defer_bytes(const struct ks_agg *a);

// The heat code and recency an eviction policy reads (pending aggregate
// accesses applied).
static inline void ks_blk_key_fields(const struct ks_cache *c, uint32_t id, uint64_t *heat, uint32_t *last)
{
    if (c->agg_pending) {
        ks_agg_current(c, id, heat, last);
        return;
    }
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    *heat = ks_blk_heat(b);
    *last = b->last;
}

// Block b's last use or residency changed (it was accessed, arrived in L1,
// or its aggregate accesses were applied): c->l1_last follows. NOTE: every
// write of a resident L1 block's `last` goes through here; the invariant
// check (ks_buffer_check) compares the two.
static inline void ks_l1_last_note(struct ks_cache *c, const struct ks_block *b)
{
    if (!c->l1_last || ks_blk_tier(b) != KS_L1)
        return;
    uint32_t p = ks_blk_page(b), v = ks_blk_state(b) == KS_BLK_RESIDENT ? b->last : KS_NONE;
    c->l1_last[p] = v;
    if (c->l1_least && c->l1_least[p / KS_SPAN] > v)
        c->l1_least[p / KS_SPAN] = v;
}

// The device buffer of L1 page `page`: page / buffer_blocks (fastdiv.h's
// NOTE: freeing a page waited on a division).
static inline uint32_t ks_buf_of_page(const struct ks_cache *c, uint32_t page)
{
    return ks_fastdiv(c->buf_magic, page);
}

static inline uint32_t ks_blk_last(const struct ks_cache *c, uint32_t id)
{
    uint64_t h;
    uint32_t last;
    ks_blk_key_fields(c, id, &h, &last);
    return last;
}

// access_wide.c
// Whether this CPU runs the access report's AVX-512 form.
int ks_access_wide_available(void);
// The accesses acc[0..n) of request req in sequence s, eight at a time, as
// ks_cache_access takes them where it may (no aggregate pending, no prefetch
// function, neither lfu nor belady, no shared prefix; `window` blocks of
// prefetch after an access): where[] (may be NULL) and r as it fills them,
// the candidates added in its order. Stops before a group of eight with a
// block twice or one that arrived by prefetch, or fewer than eight left;
// returns how many it took. *err = KS_ENOMEM when a candidate could not be
// added.
uint32_t ks_access_wide(struct ks_cache *c, const struct ks_seq *s, uint32_t req, const struct ks_access *acc,
                        uint32_t n, uint32_t window, uint8_t *where, struct ks_access_report *r, int *err);

// prefetch.c
// The slot where the candidate hash's probe for block id starts (mod hcap).
static inline uint32_t ks_cand_hash(uint32_t id)
{
    return id * UINT32_C(0x9e3779b1);
}
// The candidate index of block id in this step, or KS_NONE.
uint32_t ks_cache_cand_find(const struct ks_cache *c, uint32_t id);
// Re-indexes the candidate array (after it was emptied, compacted or grew).
int ks_cache_cand_rebuild(struct ks_cache *c);
// Makes block id a candidate of class klass for request req (or raises its
// class). early: the access chose it `ahead` (misses only; a candidate stays
// early while every access of its class says so). KS_OK or KS_ENOMEM.
int ks_cache_cand_add(struct ks_cache *c, uint32_t id, uint32_t req, unsigned klass, int early);
// After an access to block j (id) of sequence s that entered its region or
// raised its heat: the next *w blocks become prefetch candidates, *w first
// answered by the prefetch function when there is one. KS_OK or KS_ENOMEM.
int ks_prefetch_after(struct ks_cache *c, const struct ks_seq *s, uint32_t req, uint32_t id, uint32_t j, int entering,
                      uint32_t *w);

// migrate.c
// A new planned move at the end of the list, for the caller to fill in place;
// NULL when memory runs out. NOTE: filled in place, not built aside and
// copied in: the copy read back as 16 bytes what was just stored as 8, a
// store-forwarding stall (a fifth of ks_cache_plan's time on hs_one: perf,
// 2026-12-05).
struct ks_rec *ks_plan_rec_new(struct ks_cache *c);
void ks_batch_rec_free(struct ks_batch_rec *br); // NULL is a no-op

// evict.c
// Orders blocks for eviction in a tier: the lower key goes first.
uint64_t ks_evict_key(const struct ks_cache *c, uint32_t id);
// Chooses up to n victims in tier t, marks them KS_BLK_MIG_DOWN and writes
// their ids to out. Returns how many it found.
uint32_t ks_evict_select(struct ks_cache *c, unsigned t, uint32_t n, uint32_t *out);
void ks_evict_view(const struct ks_cache *c, uint32_t id, struct ks_block_view *v);
// Chooses up to n victims among the blocks of device buffer `buf` (exact),
// in order of their keys; marks nothing. Returns how many it found. *next
// (may be NULL) receives the block that would come after them, or KS_NONE.
uint32_t ks_evict_select_buffer(struct ks_cache *c, uint32_t buf, uint32_t n, uint32_t *out, uint32_t *next);
// Whether this CPU runs the buffer scan's AVX-512 form.
int ks_evict_wide_available(void);
// Tells the policy that a block's key may have changed or that it arrived in
// a tier (Belady keeps an ordered heap; the other policies need nothing).
void ks_evict_note(struct ks_cache *c, uint32_t id);

#endif
