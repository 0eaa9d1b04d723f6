// cache.c - the cache manager's front: parameters, steps, access reports
// (heat, recency, hit and miss statistics), readers' generation checks,
// statistics.
//
// Requests and their block sequences (new, shared, grown, freed) are in
// request.c, the step's candidates and prefetch in prefetch.c, migration
// planning in migrate.c, victim choice in evict.c, the invariant checker in
// check.c; they share struct ks_cache through cache_impl.h.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "prefetch.h"

void ks_cache_params_default(struct ks_cache_params *p)
{
    memset(p, 0, sizeof *p);
    p->groups = 1;
    p->heat_half_life = 256;
    p->prefetch_window = 4;
    p->migration_batch = 32;
    p->protect_steps = 4;
    p->evict_samples = 5;
    p->evict = KS_EVICT_HEAT;
    p->seed = 1;
}

int ks_cache_params_check(const struct ks_cache_params *p, char *err, size_t len)
{
#define BAD(...) do { if (err) snprintf(err, len, __VA_ARGS__); return KS_EINVAL; } while (0)
    if (p->n_blocks == 0)
        BAD("n_blocks must be positive");
    if (p->n_blocks > (UINT32_C(1) << 31) - KS_CHUNK)
        BAD("n_blocks %u exceeds %u", p->n_blocks, (UINT32_C(1) << 31) - KS_CHUNK);
    if (p->tier_blocks[KS_L1] == 0)
        BAD("tier_blocks[L1] must be positive: L1 is required");
    for (int t = 0; t < KS_TIERS; t++) {
        if (p->tier_blocks[t] > KS_PAGE_MAX)
            BAD("tier_blocks[L%d] = %u exceeds %u pages", t + 1, p->tier_blocks[t], KS_PAGE_MAX);
        if (p->tier_blocks[t] && p->block_bytes[t] == 0)
            BAD("block_bytes[L%d] must be positive", t + 1);
    }
    if (p->groups == 0 || p->groups > UINT16_MAX)
        BAD("groups must be in 1..%u", UINT16_MAX);
    if (p->heat_half_life == 0)
        BAD("heat_half_life must be positive");
    if (p->migration_batch == 0)
        BAD("migration_batch must be positive");
    if (p->prefetch_window > 1024)
        BAD("prefetch_window %u exceeds 1024", p->prefetch_window);
    if ((unsigned)p->evict > KS_EVICT_RANDOM)
        BAD("unknown eviction policy %d", (int)p->evict);
    if (p->evict == KS_EVICT_FIFO && !p->buffer_blocks)
        BAD("KS_EVICT_FIFO orders a device buffer's arrivals: it needs buffer_blocks > 0");
    if (p->buffer_blocks) {
        if (p->buffer_blocks > p->tier_blocks[KS_L1])
            BAD("a device buffer of %u pages is larger than L1's %u pages", p->buffer_blocks, p->tier_blocks[KS_L1]);
        if (!p->tier_blocks[KS_L2] && !p->tier_blocks[KS_L3])
            BAD("device buffers need a tier below L1 to hold every block");
    }
    if (p->evict == KS_EVICT_CALLBACK && !p->evict_fn)
        BAD("KS_EVICT_CALLBACK needs evict_fn");
    if (p->tally && p->buffer_blocks)
        BAD("a tally keeps no device buffers (buffer_blocks must be 0)");
    return KS_OK;
#undef BAD
}

struct ks_cache *ks_cache_new(const struct ks_cache_params *p, char *err, size_t errlen)
{
    if (ks_cache_params_check(p, err, errlen) != KS_OK)
        return NULL;
    struct ks_cache *c = calloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->p = *p;
    c->wide = !p->plain_forms && ks_evict_wide_available();
    c->wide_access = !p->plain_forms && ks_access_wide_available();
    if (ks_blocktab_init(&c->tab, p->n_blocks) != KS_OK)
        goto oom;
    for (int t = 0; t < KS_TIERS; t++)
        if (ks_tier_init(&c->tier[t], p->tier_blocks[t], p->block_bytes[t]) != KS_OK)
            goto oom;
    for (int t = 0; t < KS_TIERS; t++) {
        c->lower[t] = KS_TIER_NONE;
        for (int u = t + 1; u < KS_TIERS; u++)
            if (p->tier_blocks[u]) {
                c->lower[t] = (uint8_t)u;
                break;
            }
    }
    if (p->tally && ks_tally_init(c) != KS_OK)
        goto oom;
    size_t ids = (size_t)c->tab.n_chunks * KS_CHUNK;
    if (p->evict == KS_EVICT_LFU && !p->tally && !(c->lfu = calloc(ids, sizeof *c->lfu)))
        goto oom;
    if (p->evict == KS_EVICT_BELADY && !p->tally) {
        if (!(c->next = malloc(ids * sizeof *c->next)))
            goto oom;
        memset(c->next, 0xff, ids * sizeof *c->next);
    }
    if (p->buffer_blocks && ks_buffer_init(c) != KS_OK)
        goto oom;
    ks_heat_clock_init(&c->clk, p->heat_half_life, 0);
    ks_rng_seed(&c->rng, p->seed);
    return c;
oom:
    if (err)
        snprintf(err, errlen, "out of memory");
    ks_cache_free(c);
    return NULL;
}

void ks_cache_free(struct ks_cache *c)
{
    if (!c)
        return;
    for (uint32_t r = 0; r < c->reqs.n; r++) {
        if (!c->req[r].live)
            continue;
        for (uint32_t g = 0; g < c->p.groups; g++)
            ks_seq_fini(&c->req[r].seq[g]);
        ks_agg_free(c, &c->req[r]);
        free(c->req[r].seq);
        free(c->req[r].buf);
    }
    free(c->req);
    ks_tally_free(c);
    ks_buffer_fini(c);
    free(c->rec_tmp);
    free(c->group_count);
    ks_ids_fini(&c->reqs);
    for (uint32_t s = 0; s < c->n_slot; s++)
        ks_batch_rec_free(c->slot[s]);
    free(c->slot);
    free(c->free_slot);
    free(c->slot_by_addr);
    free(c->plan_out);
    free(c->cand);
    free(c->cand_tmp);
    free(c->hkey);
    free(c->hval);
    free(c->hstamp);
    free(c->rec);
    free(c->adm);
    free(c->adm_id);
    free(c->adm_src);
    free(c->adm_klass);
    free(c->turn);
    free(c->req_mark);
    free(c->req_count);
    free(c->samp);
    free(c->turn_pages);
    free(c->early);
    for (int t = 0; t < KS_TIERS; t++)
        free(c->bel[t]);
    for (int t = 0; t < KS_TIERS; t++)
        free(c->vict[t]);
    free(c->heap);
    free(c->lfu);
    free(c->next);
    for (int t = 0; t < KS_TIERS; t++)
        ks_tier_fini(&c->tier[t]);
    ks_blocktab_fini(&c->tab);
    free(c);
}

// ---- steps and access reports -------------------------------------------

int ks_cache_step(struct ks_cache *c, uint32_t step)
{
    if (c->tally)
        return ks_tally_step(c, step);
    if (c->started && step < c->now)
        return KS_EINVAL;
    for (uint32_t i = 0; i < c->n_cand; i++) {
        if (c->cand[i].dead)
            continue;
        if (c->cand[i].klass == KS_CLASS_MISS)
            c->st.unplanned++;
        else if (c->cand[i].klass != KS_CLASS_WARM) // a warm-up is asked for again while the request sits out
            c->st.pf_dropped++;
    }
    c->n_cand = 0;
    if (ks_cache_cand_rebuild(c) != KS_OK)
        return KS_ENOMEM;
    c->started = 1;
    c->now = step;
    double factor = ks_heat_clock_advance(&c->clk, step);
    if (factor != 1.0) {
        c->st.rebases++;
        ks_agg_flush_all(c);    // pending adds are in the old epoch's units
        ks_defer_rebase(c, factor); // and the deferred steps' gains: scaled, or settled
        for (uint32_t k = 0; k < c->tab.hwm; k++) { // the rest were never used
            struct ks_compact *x = ks_blocktab_compact(&c->tab, k);
            if (x) { // one heat for its live blocks
                if (x->live)
                    x->heat = ks_heat_rescale(x->heat, factor);
                continue;
            }
            for (uint32_t id = k * KS_CHUNK; id < (k + 1) * KS_CHUNK; id++) {
                struct ks_block *b = ks_blocktab_entry(&c->tab, id);
                if (ks_blk_state(b) != KS_BLK_FREE)
                    ks_blk_set_heat(b, ks_heat_rescale(ks_blk_heat(b), factor));
            }
        }
    }
    return c->def_status; // a deferred selection's settling failed (defer.c)
}

KS_PREFETCH_FN void ks_cache_warm_access(const struct ks_cache *c, uint32_t req, uint32_t group, const uint32_t *blocks,
                                         uint32_t n, int stage)
{
    if (req >= c->reqs.n || group >= c->p.groups || !c->req[req].live)
        return;
    const struct ks_seq *s = &c->req[req].seq[group];
    if (stage == 0) {
        ks_prefetch_lines(s->own, s->n_own * sizeof *s->own);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (blocks[i] >= s->n_prefix && blocks[i] < s->n) // a shared prefix's lookup searches: not fetched
            __builtin_prefetch(ks_blocktab_slot(&c->tab, ks_seq_lookup(s, blocks[i])));
}

// Writes out sequence s's compact chunks and those written aside
// (blocktab.h): its blocks are about to be read and written one by one, the
// wide forms gathering their entries from the table.
static void expand_seq(struct ks_cache *c, const struct ks_seq *s)
{
    for (uint32_t k = 0; k < s->n_own; k++)
        if (ks_blocktab_compact(&c->tab, s->own[k] / KS_CHUNK) || ks_blocktab_aside(&c->tab, s->own[k] / KS_CHUNK))
            ks_blocktab_expand(&c->tab, s->own[k] / KS_CHUNK);
}

int ks_cache_access(struct ks_cache *c, uint32_t req, uint32_t group, const struct ks_access *acc, uint32_t n,
                    uint8_t *where, struct ks_access_report *rep)
{
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || group >= c->p.groups || !c->started)
        return q && group < c->p.groups ? KS_ESTATE : KS_EINVAL;
    const struct ks_seq *s = &q->seq[group];
    for (uint32_t i = 0; i < n; i++)
        if (acc[i].block >= s->n)
            return KS_EINVAL;
    struct ks_access_report r = {0};
    uint32_t w = c->p.prefetch_window;
    if (q->agg && q->agg->def_from[group] != KS_NONE)
        return KS_ESTATE; // deferred selections not settled (contract: ks_cache_settle first)
    ks_agg_touch(c, q, group);
    if (c->tab.n_compact || c->tab.n_aside)
        expand_seq(c, s);
    int settle = c->agg_pending != 0; // blocks with aggregate accesses pending get them first
    // NOTE: 32, not 8: on a loaded node (cluster_64x8_loaded.lua, detail.nodes=1
    // detail.layers=8) the entry's first read was still half of this function
    // at 8; 32 took the run to 0.89 of its wall time (64: the same), 2026-12-04
    enum { AHEAD = 32 }; // entries fetched ahead of their use: their misses overlap
    for (uint32_t i = 0; i < n && i < AHEAD; i++)
        __builtin_prefetch(ks_blocktab_slot(&c->tab, ks_seq_lookup(s, acc[i].block)));
    // the wide form (access_wide.c), where an access reads and writes no state
    // but its entry's and the candidates', takes groups of eight; this loop
    // the rest, and a group the wide form leaves
    int wide = c->wide_access && !settle && !c->lfu && !c->next && !c->p.prefetch_fn && s->n_prefix == 0;
    for (uint32_t i = 0; i < n;) {
        if (wide) {
            int err = KS_OK;
            i += ks_access_wide(c, s, req, acc + i, n - i, w, where ? where + i : NULL, &r, &err);
            if (err != KS_OK)
                return err;
        }
        for (uint32_t stop = wide && n - i > 8 ? i + 8 : n; i < stop; i++) {
            if (i + AHEAD < n) {
                uint32_t ahead = ks_seq_lookup(s, acc[i + AHEAD].block);
                __builtin_prefetch(ks_blocktab_slot(&c->tab, ahead));
                if (c->hcap) // where its candidate is looked for, should it miss
                    __builtin_prefetch(&c->hstamp[ks_cand_hash(ahead) & (c->hcap - 1)]);
            }
            uint32_t j = acc[i].block;
            uint32_t id = ks_seq_lookup(s, j);
            struct ks_block *b = ks_blocktab_get(&c->tab, id);
            if (settle)
                ks_agg_settle_block(c, id);
            unsigned tier = ks_blk_tier(b), state = ks_blk_state(b);
            unsigned at;
            int entering = 0; // attention moves into this block's region
            if (tier == KS_L1) {
                at = KS_AT_L1;
                if (ks_blk_prefetched(b)) {
                    c->st.pf_used++;
                    ks_blk_set_prefetched(b, 0);
                    entering = 1;
                }
            } else if (state == KS_BLK_MIG_UP) {
                at = KS_AT_INFLIGHT;
                entering = 1;
                if (ks_blk_prefetched(b)) { // the prefetch was late but not useless
                    c->st.pf_used++;
                    ks_blk_set_prefetched(b, 0);
                }
            } else {
                at = tier;
                entering = 1;
            }
            if (where)
                where[i] = (uint8_t)at;
            if (at == KS_AT_INFLIGHT)
                r.inflight++;
            else
                r.found[at]++;

            double mass = acc[i].mass > 0 ? acc[i].mass : 0.0;
            int rising;
            ks_blk_set_heat(b, ks_heat_access(&c->clk, ks_blk_heat(b), mass, &rising));
            b->last = c->now;
            ks_l1_last_note(c, b);
            if (c->lfu && c->lfu[id] != UINT32_MAX)
                c->lfu[id]++;
            if (c->next && c->next[id] != acc[i].next) {
                c->next[id] = acc[i].next;
                ks_evict_note(c, id);
            }

            if (at != KS_AT_L1 && at != KS_AT_INFLIGHT &&
                ks_cache_cand_add(c, id, req, KS_CLASS_MISS, acc[i].ahead) != KS_OK)
                return KS_ENOMEM;
            if ((entering || rising) && ks_prefetch_after(c, s, req, id, j, entering, &w) != KS_OK)
                return KS_ENOMEM;
        }
    }
    r.misses = n - r.found[KS_L1];
    c->st.accesses += n;
    for (int t = 0; t < KS_TIERS; t++)
        c->st.found[t] += r.found[t];
    c->st.found_inflight += r.inflight;
    if (rep)
        *rep = r;
    return KS_OK;
}

int ks_cache_set_next_use(struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block, uint32_t step)
{
    const struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || group >= c->p.groups || block >= q->seq[group].n)
        return KS_EINVAL;
    if (!c->next)
        return KS_ESTATE;
    uint32_t id = ks_seq_lookup(&q->seq[group], block);
    c->next[id] = step;
    ks_evict_note(c, id);
    return KS_OK;
}

// ---- readers -----------------------------------------------------------

int ks_cache_locate(const struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block, struct ks_loc *loc)
{
    const struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || group >= c->p.groups || block >= q->seq[group].n)
        return KS_EINVAL;
    uint32_t id = ks_seq_lookup(&q->seq[group], block);
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    *loc = (struct ks_loc){.id = id,
                           .page = ks_blk_page(b),
                           .tier = (uint8_t)ks_blk_tier(b),
                           .state = (uint8_t)ks_blk_state(b),
                           .gen = (uint16_t)ks_blk_gen(b)};
    return KS_OK;
}

void ks_cache_locate_ahead(const struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block)
{
    const struct ks_req *q = ks_cache_req_of(c, req);
    if (q && group < c->p.groups && block < q->seq[group].n)
        __builtin_prefetch(ks_blocktab_slot(&c->tab, ks_seq_lookup(&q->seq[group], block)));
}

int ks_cache_current(const struct ks_cache *c, const struct ks_loc *loc)
{
    if (loc->id >= c->tab.n_chunks * KS_CHUNK)
        return 0;
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, loc->id, &tmp);
    return ks_blk_state(b) != KS_BLK_FREE && ks_blk_gen(b) == loc->gen && ks_blk_tier(b) == loc->tier &&
           ks_blk_page(b) == loc->page;
}

int ks_cache_validate(struct ks_cache *c, const struct ks_loc *loc)
{
    if (loc->id >= c->tab.n_chunks * KS_CHUNK)
        return KS_EINVAL;
    if (!ks_cache_current(c, loc)) {
        c->st.stale_refused++;
        return KS_ESTALE;
    }
    return KS_OK;
}

void ks_cache_set_reserve(struct ks_cache *c, uint32_t pages)
{
    c->reserve = pages;
}

uint32_t ks_cache_block_group(const struct ks_cache *c, uint32_t id)
{
    KS_ASSERT(id < c->tab.n_chunks * KS_CHUNK);
    return c->tab.chunk[id / KS_CHUNK].group;
}

double ks_cache_heat(const struct ks_cache *c, uint32_t req, uint32_t group, uint32_t block)
{
    const struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || group >= c->p.groups || block >= q->seq[group].n)
        return 0.0;
    uint64_t heat;
    uint32_t last;
    ks_blk_key_fields(c, ks_seq_lookup(&q->seq[group], block), &heat, &last);
    return ks_heat_value(&c->clk, heat);
}

// ---- statistics and memory -------------------------------------------------

const struct ks_cache_stats *ks_cache_stats(const struct ks_cache *c)
{
    return &c->st;
}

void ks_cache_stats_add(struct ks_cache_stats *sum, const struct ks_cache_stats *s)
{
    sum->accesses += s->accesses;
    for (int t = 0; t < KS_TIERS; t++) {
        sum->found[t] += s->found[t];
        sum->evictions[t] += s->evictions[t];
        for (int u = 0; u < KS_TIERS; u++) {
            sum->migrations[t][u] += s->migrations[t][u];
            sum->mig_bytes[t][u] += s->mig_bytes[t][u];
        }
    }
    sum->found_inflight += s->found_inflight;
    sum->demotions_shared += s->demotions_shared;
    sum->batches += s->batches;
    sum->aborted += s->aborted;
    sum->pf_issued += s->pf_issued;
    sum->pf_used += s->pf_used;
    sum->pf_dropped += s->pf_dropped;
    sum->pf_wasted += s->pf_wasted;
    sum->unplanned += s->unplanned;
    sum->stale_refused += s->stale_refused;
    sum->dropped += s->dropped;
    sum->deferred += s->deferred;
    sum->warmed += s->warmed;
    sum->rebases += s->rebases;
    sum->aggregated += s->aggregated;
}

void ks_cache_stats_scale(struct ks_cache_stats *s, double f)
{
    // every field is a uint64_t counter (ks_cache_stats_add adds each)
    _Static_assert(sizeof *s % sizeof(uint64_t) == 0, "struct ks_cache_stats holds uint64_t counters only");
    uint64_t *x = (uint64_t *)s;
    for (size_t i = 0; i < sizeof *s / sizeof *x; i++)
        x[i] = (uint64_t)llround((double)x[i] * f);
}

void ks_cache_tier_view(const struct ks_cache *c, unsigned tier, struct ks_tier_view *v)
{
    memset(v, 0, sizeof *v);
    if (tier >= KS_TIERS)
        return;
    const struct ks_tier *t = &c->tier[tier];
    *v = (struct ks_tier_view){.cap = t->cap,
                               .used = t->used,
                               .peak = (uint32_t)t->st.peak_used,
                               .allocs = t->st.allocs,
                               .frees = t->st.frees,
                               .alloc_fails = t->st.alloc_fails,
                               .mig_in = t->st.mig_in,
                               .mig_out = t->st.mig_out};
}

uint64_t ks_cache_bytes(const struct ks_cache *c)
{
    if (c->tally)
        return ks_tally_bytes(c);
    uint64_t ids = (uint64_t)c->tab.n_chunks * KS_CHUNK;
    uint64_t n = sizeof *c + ks_blocktab_bytes(&c->tab);
    for (int t = 0; t < KS_TIERS; t++)
        n += ks_tier_bytes(&c->tier[t]);
    if (c->lfu)
        n += ids * sizeof *c->lfu;
    if (c->next)
        n += ids * sizeof *c->next;
    n += (uint64_t)c->reqs.cap * (sizeof *c->req + sizeof *c->reqs.free);
    for (uint32_t r = 0; r < c->reqs.n; r++)
        if (c->req[r].live)
            for (uint32_t g = 0; g < c->p.groups; g++)
                n += ks_seq_bytes(&c->req[r].seq[g]) + (g == 0 ? ks_agg_bytes(c, &c->req[r]) : 0);
    n += ((uint64_t)c->cap_cand + c->cap_cand_tmp) * sizeof *c->cand;
    n += (uint64_t)c->hcap * (sizeof *c->hkey + sizeof *c->hval + sizeof *c->hstamp);
    n += (uint64_t)c->cap_rec * sizeof *c->rec + (uint64_t)c->cap_rec_tmp * sizeof *c->rec_tmp;
    if (c->group_count)
        n += (c->p.groups + 2) * sizeof *c->group_count;
    n += (uint64_t)c->cap_adm * (sizeof *c->adm + sizeof *c->adm_id + 2);
    n += (uint64_t)c->cap_turn * sizeof *c->turn;
    for (int t = 0; t < KS_TIERS; t++)
        n += (uint64_t)c->cap_vict[t] * sizeof *c->vict[t] + (uint64_t)c->cap_bel[t] * sizeof *c->bel[t];
    n += (uint64_t)c->cap_samp * sizeof *c->samp + (uint64_t)c->cap_heap * sizeof *c->heap;
    n += (uint64_t)c->cap_turn_pages * sizeof *c->turn_pages;
    n += (uint64_t)c->cap_early * sizeof *c->early;
    n += (uint64_t)c->cap_slot * sizeof *c->slot + (uint64_t)c->cap_side * (sizeof *c->free_slot + sizeof *c->slot_by_addr);
    for (uint32_t s = 0; s < c->n_slot; s++)
        n += sizeof *c->slot[s] + (uint64_t)c->slot[s]->cap * (3 * sizeof(uint32_t) + sizeof(uint32_t) + 1);
    n += (uint64_t)c->cap_plan_out * sizeof *c->plan_out;
    if (c->p.buffer_blocks) {
        n += ks_buffer_bytes(c);
        for (uint32_t r = 0; r < c->reqs.n; r++)
            if (c->req[r].live)
                n += c->p.groups * sizeof *c->req[r].buf;
    }
    return n;
}

static const char *tier_name[KS_TIERS] = {"l1", "l2", "l3"};

void ks_cache_stats_visit(const struct ks_cache *c,
                          void (*fn)(void *ud, const char *name, const char *desc, double value), void *ud)
{
    const struct ks_cache_stats *s = &c->st;
    char name[64], desc[128];
    fn(ud, "accesses", "block accesses reported", (double)s->accesses);
    for (int t = 0; t < KS_TIERS; t++) {
        snprintf(name, sizeof name, "found_%s", tier_name[t]);
        snprintf(desc, sizeof desc, "accesses that found the block in %s", tier_name[t]);
        fn(ud, name, desc, (double)s->found[t]);
    }
    fn(ud, "found_inflight", "accesses that found the block migrating up", (double)s->found_inflight);
    fn(ud, "hit_rate_l1", "fraction of accesses that found the block in L1",
       s->accesses ? (double)s->found[KS_L1] / (double)s->accesses : 0.0);
    for (int t = 0; t < KS_TIERS; t++) {
        snprintf(name, sizeof name, "evictions_%s", tier_name[t]);
        snprintf(desc, sizeof desc, "victims chosen in %s (each demoted, never freed)", tier_name[t]);
        fn(ud, name, desc, (double)s->evictions[t]);
    }
    fn(ud, "demotions_shared", "demotions of blocks mapped by more than one request", (double)s->demotions_shared);
    fn(ud, "dropped_l1", "evictions from a device buffer that moved no bytes (the host held a copy)",
       (double)s->dropped);
    for (int a = 0; a < KS_TIERS; a++)
        for (int b = 0; b < KS_TIERS; b++) {
            if (a == b)
                continue;
            snprintf(name, sizeof name, "migrated_%s_%s", tier_name[a], tier_name[b]);
            snprintf(desc, sizeof desc, "blocks moved from %s to %s", tier_name[a], tier_name[b]);
            fn(ud, name, desc, (double)s->migrations[a][b]);
            snprintf(name, sizeof name, "migrated_bytes_%s_%s", tier_name[a], tier_name[b]);
            snprintf(desc, sizeof desc, "bytes moved from %s to %s", tier_name[a], tier_name[b]);
            fn(ud, name, desc, (double)s->mig_bytes[a][b]);
        }
    fn(ud, "batches", "migration batches confirmed", (double)s->batches);
    fn(ud, "batches_aborted", "migration batches aborted", (double)s->aborted);
    fn(ud, "prefetch_issued", "prefetched blocks planned", (double)s->pf_issued);
    fn(ud, "prefetch_used", "prefetched blocks accessed after being planned", (double)s->pf_used);
    fn(ud, "prefetch_dropped", "prefetch candidates dropped (over budget or no page)", (double)s->pf_dropped);
    fn(ud, "prefetch_wasted", "prefetched blocks evicted or freed before any access", (double)s->pf_wasted);
    fn(ud, "misses_unplanned", "misses that found no page before their step ended", (double)s->unplanned);
    fn(ud, "stale_refused", "reads refused for a stale migration generation", (double)s->stale_refused);
    fn(ud, "deferred", "misses of requests that sat a step out while their cold region warmed up", (double)s->deferred);
    fn(ud, "warmed", "deferred misses planned into L1 (after the others' misses, within the budget)",
       (double)s->warmed);
    for (int t = 0; t < KS_TIERS; t++) {
        const struct ks_tier *tr = &c->tier[t];
        snprintf(name, sizeof name, "alloc_fails_%s", tier_name[t]);
        snprintf(desc, sizeof desc, "page requests %s refused because it was full", tier_name[t]);
        fn(ud, name, desc, (double)tr->st.alloc_fails);
        snprintf(name, sizeof name, "occupancy_%s", tier_name[t]);
        snprintf(desc, sizeof desc, "pages of %s in use now", tier_name[t]);
        fn(ud, name, desc, (double)tr->used);
        snprintf(name, sizeof name, "capacity_%s", tier_name[t]);
        snprintf(desc, sizeof desc, "pages in %s", tier_name[t]);
        fn(ud, name, desc, (double)tr->cap);
    }
    fn(ud, "heat_rebases", "heat clock rebases", (double)s->rebases);
}
