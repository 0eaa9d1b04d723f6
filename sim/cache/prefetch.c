// prefetch.c - the step's candidates (blocks to bring into L1: misses and
// prefetches, each with its class) and the prefetch rule that adds them.
//
// Candidates live in an array indexed by block id through an open-addressing
// hash whose entries are valid only while their stamp is the current one, so
// emptying the set at each step is a stamp increment, not a clear. A block is
// a candidate at most once per step, with the most urgent class it was
// wanted for. After an access that enters a block's region (a miss, a block
// in flight up, the first use of a prefetched block) or raises its heat, the
// next `w` blocks of its sequence not already in L1 become candidates:
// neighbours (or shared-prefix blocks) when attention entered, heat-rising
// ones otherwise; w is the prefetch window, or what a prefetch function
// answers for that block (kept for the following accesses of the report).
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

uint32_t ks_cache_cand_find(const struct ks_cache *c, uint32_t id)
{
    if (c->hcap == 0 || c->n_cand == 0) // no candidate: nothing to find
        return KS_NONE;
    uint32_t mask = c->hcap - 1;
    for (uint32_t h = ks_cand_hash(id) & mask;; h = (h + 1) & mask) {
        if (c->hstamp[h] != c->stamp)
            return KS_NONE;
        if (c->hkey[h] == id)
            return c->hval[h];
    }
}

static void hash_put(struct ks_cache *c, uint32_t id, uint32_t idx)
{
    uint32_t mask = c->hcap - 1;
    uint32_t h = ks_cand_hash(id) & mask;
    while (c->hstamp[h] == c->stamp && c->hkey[h] != id)
        h = (h + 1) & mask;
    c->hstamp[h] = c->stamp;
    c->hkey[h] = id;
    c->hval[h] = idx;
}

// Re-indexes the candidate array (after it was compacted or grew past half
// the hash's capacity).
int ks_cache_cand_rebuild(struct ks_cache *c)
{
    uint32_t need = 64;
    while (need < 2 * c->n_cand + 2)
        need *= 2;
    if (need > c->hcap) {
        uint32_t *k = realloc(c->hkey, need * sizeof *k);
        if (k) c->hkey = k;
        uint32_t *v = realloc(c->hval, need * sizeof *v);
        if (v) c->hval = v;
        uint32_t *s = realloc(c->hstamp, need * sizeof *s);
        if (s) c->hstamp = s;
        if (!k || !v || !s)
            return KS_ENOMEM;
        memset(c->hstamp, 0, need * sizeof *c->hstamp);
        c->hcap = need;
        c->stamp = 0;
    }
    if (++c->stamp == 0) { // stamps wrapped: clear for real
        memset(c->hstamp, 0, c->hcap * sizeof *c->hstamp);
        c->stamp = 1;
    }
    for (uint32_t i = 0; i < c->n_cand; i++)
        hash_put(c, c->cand[i].id, i);
    return KS_OK;
}

int ks_cache_cand_add(struct ks_cache *c, uint32_t id, uint32_t req, unsigned klass, int early)
{
    early = early && klass == KS_CLASS_MISS;
    uint32_t i = ks_cache_cand_find(c, id);
    if (i != KS_NONE && c->cand[i].dead) { // the id was freed and reused: a new candidate
        c->cand[i].dead = 0;
        c->cand[i].klass = klass;
        c->cand[i].req = req;
        c->cand[i].early = (uint8_t)early;
        return KS_OK;
    }
    if (i != KS_NONE) {
        if (klass < c->cand[i].klass) { // the same block wanted more urgently
            c->cand[i].klass = klass;
            c->cand[i].req = req;
            c->cand[i].early = (uint8_t)early;
        } else if (klass == c->cand[i].klass) { // early only if every access of its class is
            c->cand[i].early &= (uint8_t)early;
        }
        return KS_OK;
    }
    if (ks_grow((void **)&c->cand, &c->cap_cand, c->n_cand + 1, sizeof *c->cand) != KS_OK)
        return KS_ENOMEM;
    i = c->n_cand++;
    c->cand[i] = (struct ks_cand){.id = id, .req = req, .klass = klass, .early = (uint8_t)early};
    if (2 * c->n_cand + 2 > c->hcap)
        return ks_cache_cand_rebuild(c);
    hash_put(c, id, i);
    return KS_OK;
}

// Adds blocks from..to-1 of the sequence as prefetch candidates.
static int lookahead(struct ks_cache *c, const struct ks_seq *s, uint32_t req, uint32_t from, uint32_t to,
                     int heat_class)
{
    if (to > s->n)
        to = s->n;
    for (uint32_t j = from; j < to; j++) {
        uint32_t id = ks_seq_lookup(s, j);
        const struct ks_block *b = ks_blocktab_get(&c->tab, id);
        if (ks_blk_tier(b) == KS_L1 || ks_blk_state(b) != KS_BLK_RESIDENT)
            continue;
        unsigned k = heat_class ? KS_CLASS_HEAT : ks_blk_refs(b) > 1 ? KS_CLASS_SHARED : KS_CLASS_NEIGHBOR;
        if (ks_cache_cand_add(c, id, req, k, 0) != KS_OK)
            return KS_ENOMEM;
    }
    return KS_OK;
}

int ks_prefetch_after(struct ks_cache *c, const struct ks_seq *s, uint32_t req, uint32_t id, uint32_t j, int entering,
                      uint32_t *w)
{
    if (c->p.prefetch_fn) {
        struct ks_block_view v;
        ks_evict_view(c, id, &v);
        *w = c->p.prefetch_fn(c->p.prefetch_ud, &v, entering);
        if (*w > 1024)
            *w = 1024;
    }
    return *w ? lookahead(c, s, req, j + 1, j + 1 + *w, !entering) : KS_OK;
}

uint32_t ks_cache_defer(struct ks_cache *c, uint32_t req)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_cand; i++) {
        struct ks_cand *cd = &c->cand[i];
        if (cd->req == req && cd->klass == KS_CLASS_MISS && !cd->dead) {
            cd->klass = KS_CLASS_WARM;
            cd->early = 0;
            n++;
        }
    }
    c->st.deferred += n;
    return n;
}
