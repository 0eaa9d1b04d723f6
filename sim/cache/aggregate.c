// aggregate.c - accesses accounted in aggregate (ks_cache_access_uniform;
// the request state it keeps also holds the selections defer.c defers).
//
// When every block of a sequence is in L1 (and none arrived by prefetch
// unused) and the step reads them all with one mass, what block-by-block
// accounting would do reduces to: count n hits, and for each block add
// mass * gain to its heat and set its recency to the step. No prefetch
// candidate can follow (a block's lookahead skips blocks in L1) and no
// policy state besides heat and recency changes (LFU's counts, Belady's
// next uses and a prefetch function are excluded: the caller goes block by
// block for them).
//
// So the step is logged once per request, (step, blocks, add), and applied
// to a block only when something reads it: an eviction policy's key, a
// migration, a reader, the heat clock's rebase, or the request's end; or
// when KS_AGG_LOG steps have gathered. Applying replays the same sums in the
// same order (entries after the block's `last`, for positions below the
// entry's block count), so heat and recency are bit for bit what
// ks_cache_access would have stored; a run of blocks with equal heat and
// recency (a prompt's blocks, which every step reads alike) is computed once.
//
// A block's pending entries are found through its chunk's owner, whose
// sequence must still map it there (a request slot reused by another
// request does not lend it its entries). Blocks another request maps are
// accounted block by block (that request may read them in the same step,
// before the owner), and so are sequences that map another's prefix.
//
// Contract (cache.h): a request any of whose groups is accounted in
// aggregate in a step has every block of every group accessed in that step,
// in aggregate or through ks_cache_access, and a group accessed through
// ks_cache_access in a step is not accounted in aggregate after it.
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

// The request whose aggregate entries concern block id, with the block's
// group and position; NULL when there is none (pending: only one with
// entries not yet applied).
static struct ks_req *owner(const struct ks_cache *c, uint32_t id, int pending, uint32_t *g, uint32_t *pos)
{
    const struct ks_chunk *ch = &c->tab.chunk[id / KS_CHUNK];
    if (ch->req >= c->reqs.n)
        return NULL;
    struct ks_req *q = &c->req[ch->req];
    if (!q->live || !q->agg || (pending && q->agg->n == 0))
        return NULL;
    uint32_t p = ch->pos + id % KS_CHUNK;
    const struct ks_seq *s = &q->seq[ch->group];
    if (p >= s->n || p < s->n_prefix || ks_seq_lookup(s, p) != id)
        return NULL;
    *g = ch->group;
    *pos = p;
    return q;
}

// The entries of a that concern a block of group g at position pos last
// used at *last, applied to *heat and *last. An entry of the current step
// concerns only the groups already accounted in it (the others' turn may
// still come, in aggregate or block by block).
static void apply(const struct ks_cache *c, const struct ks_agg *a, uint32_t g, uint32_t pos, uint64_t *heat,
                  uint32_t *last)
{
    uint64_t h = *heat;
    uint32_t l = *last;
    uint32_t now = a->accounted[g] == c->now + 1u ? UINT32_MAX : c->now; // entries from `now` on wait
    for (uint32_t i = 0; i < a->n; i++) {
        const struct ks_agg_entry *e = &a->e[i];
        if (e->step > l && pos < e->blocks && e->step < now) {
            h = ks_heat_encode(ks_heat_decode(h) + e->add);
            l = e->step;
        }
    }
    *heat = h;
    *last = l;
}

void ks_agg_current(const struct ks_cache *c, uint32_t id, uint64_t *heat, uint32_t *last)
{
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    *heat = ks_blk_heat(b);
    *last = b->last;
    uint32_t g, pos;
    const struct ks_req *q = owner(c, id, 1, &g, &pos);
    if (q)
        apply(c, q->agg, g, pos, heat, last);
}

void ks_agg_settle(struct ks_cache *c, uint32_t id)
{
    uint32_t g, pos;
    const struct ks_req *q = owner(c, id, 1, &g, &pos);
    if (!q)
        return;
    struct ks_block *b = ks_blocktab_get(&c->tab, id);
    uint64_t h = ks_blk_heat(b);
    uint32_t l = b->last;
    apply(c, q->agg, g, pos, &h, &l);
    ks_blk_set_heat(b, h);
    b->last = l;
    ks_l1_last_note(c, b);
}

void ks_agg_flush(struct ks_cache *c, struct ks_req *q)
{
    struct ks_agg *a = q->agg;
    if (!a || a->n == 0)
        return;
    // one block's result serves the next ones with the same heat and
    // recency as long as they lie below every entry that concerns them; a
    // compact chunk's blocks (blocktab.h) take one result, unless some lie
    // at or past such an entry's end: then it is written out
    uint64_t h0 = 0, h1 = 0;
    uint32_t l0 = 0, l1 = 0, below = 0;
    for (uint32_t g = 0; g < c->p.groups; g++) {
        const struct ks_seq *s = &q->seq[g];
        h0 = l0 = below = 0; // the current step's entry may concern this group and not the last
        for (uint32_t p = s->n_prefix; p < s->n; p++) {
            uint32_t id = ks_seq_lookup(s, p);
            struct ks_compact *x = ks_blocktab_compact(&c->tab, id / KS_CHUNK);
            struct ks_block *b = NULL;
            uint64_t h;
            uint32_t l, top = p; // the last position the result is for
            if (x) { // its live blocks are the sequence's, from the chunk's first on
                h = x->heat;
                l = x->last;
                top = p - id % KS_CHUNK + (31u - (uint32_t)__builtin_clz(x->live));
            } else {
                b = ks_blocktab_get(&c->tab, id);
                h = ks_blk_heat(b);
                l = b->last;
            }
            if (top >= below || h != h0 || l != l0) {
                h0 = h1 = h;
                l0 = l1 = l;
                below = UINT32_MAX;
                for (uint32_t i = 0; i < a->n; i++)
                    if (a->e[i].step > l && a->e[i].blocks < below)
                        below = a->e[i].blocks;
                apply(c, a, g, p, &h1, &l1);
            }
            if (x && top >= below) { // position p's result is h1, l1; the next ones' may differ
                ks_blocktab_expand(&c->tab, id / KS_CHUNK);
                x = NULL;
                b = ks_blocktab_get(&c->tab, id);
            }
            if (x) {
                x->heat = h1;
                x->last = l1;
                p = top;
                continue;
            }
            ks_blk_set_heat(b, h1);
            b->last = l1;
            ks_l1_last_note(c, b);
        }
    }
    a->n = 0;
    c->agg_pending--;
}

void ks_agg_flush_all(struct ks_cache *c)
{
    for (uint32_t r = 0; r < c->reqs.n && c->agg_pending; r++)
        if (c->req[r].live)
            ks_agg_flush(c, &c->req[r]);
}

void ks_agg_leave(struct ks_cache *c, uint32_t id)
{
    uint32_t g, pos;
    struct ks_req *q = owner(c, id, 0, &g, &pos);
    if (q && q->agg->settled[g] > pos)
        q->agg->settled[g] = pos;
}

void ks_agg_shared(struct ks_cache *c, struct ks_req *q)
{
    // the sharer reads the blocks block by block: deferred selections first
    if (q->agg && q->agg->def_groups)
        ks_defer_settle_kept(c, (uint32_t)(q - c->req));
    if (q->agg)
        memset(q->agg->settled, 0, c->p.groups * sizeof *q->agg->settled);
}

struct ks_agg *ks_agg_get(struct ks_cache *c, struct ks_req *q)
{
    if (q->agg)
        return q->agg;
    struct ks_agg *a = calloc(1, sizeof *a);
    uint32_t *settled = calloc(c->p.groups, sizeof *settled), *touched = calloc(c->p.groups, sizeof *touched),
             *accounted = calloc(c->p.groups, sizeof *accounted), *def_from = malloc(c->p.groups * sizeof *def_from);
    if (!a || !settled || !touched || !accounted || !def_from) {
        free(a);
        free(settled);
        free(touched);
        free(accounted);
        free(def_from);
        return NULL;
    }
    for (uint32_t g = 0; g < c->p.groups; g++)
        def_from[g] = KS_NONE;
    a->settled = settled;
    a->touched = touched;
    a->accounted = accounted;
    a->def_from = def_from;
    q->agg = a;
    c->agg_reqs++;
    return a;
}

int ks_agg_in_l1(const struct ks_cache *c, const struct ks_req *q, struct ks_agg *a, uint32_t group)
{
    const struct ks_seq *s = &q->seq[group];
    for (uint32_t p = a->settled[group]; p < s->n; p++) { // the blocks not yet known to be in L1: are they?
        struct ks_block tmp;
        const struct ks_block *b = ks_blocktab_peek(&c->tab, ks_seq_lookup(s, p), &tmp);
        if (ks_blk_tier(b) != KS_L1 || ks_blk_prefetched(b) || ks_blk_refs(b) != 1) {
            a->settled[group] = p;
            return 0;
        }
    }
    a->settled[group] = s->n;
    return 1;
}

void ks_agg_free(struct ks_cache *c, struct ks_req *q)
{
    if (!q->agg)
        return;
    ks_agg_flush(c, q);
    if (q->agg->def_groups)
        c->def_pending--;
    ks_defer_free(q->agg);
    free(q->agg->settled);
    free(q->agg->touched);
    free(q->agg->accounted);
    free(q->agg->def_from);
    free(q->agg);
    q->agg = NULL;
    c->agg_reqs--;
}

uint64_t ks_agg_bytes(const struct ks_cache *c, const struct ks_req *q)
{
    return q->agg ? sizeof *q->agg + 4 * (uint64_t)c->p.groups * sizeof(uint32_t) + ks_defer_bytes(q->agg) : 0;
}

// Block b's access of mass m in this step, applied now when b was used
// already in it (last == now); returns whether it was.
static int heat_now(struct ks_cache *c, struct ks_block *b, double m)
{
    if (b->last != c->now)
        return 0;
    int rising;
    ks_blk_set_heat(b, ks_heat_access(&c->clk, ks_blk_heat(b), m, &rising));
    return 1;
}

// The same for every block of compact chunk x (they share heat and recency).
static int heat_now_compact(struct ks_cache *c, struct ks_compact *x, double m)
{
    if (x->last != c->now)
        return 0;
    int rising;
    x->heat = ks_heat_access(&c->clk, x->heat, m, &rising);
    return 1;
}

int ks_cache_access_uniform(struct ks_cache *c, uint32_t req, uint32_t group, float mass, int *done,
                            struct ks_access_report *rep)
{
    *done = 0;
    if (req >= c->reqs.n || !c->req[req].live || group >= c->p.groups)
        return KS_EINVAL;
    if (!c->started)
        return KS_ESTATE;
    struct ks_req *q = &c->req[req];
    const struct ks_seq *s = &q->seq[group];
    if (!ks_agg_policy_allows(c) || s->n_prefix > 0)
        return KS_OK; // every access matters to the policy, or blocks are shared
    struct ks_agg *a = ks_agg_get(c, q);
    if (!a)
        return KS_ENOMEM;
    if (a->touched[group] == c->now + 1u || a->accounted[group] == c->now + 1u || a->def_groups)
        return KS_OK; // accessed already in this step, or selections deferred (defer.c)
    double add = (double)(mass > 0 ? mass : 0.0f) * c->clk.gain;
    struct ks_agg_entry *e = a->n ? &a->e[a->n - 1] : NULL;
    int have = e && e->step == c->now;
    if (have && (e->add != add || e->blocks != s->n))
        return KS_OK; // another group of the step read another mass or length
    uint32_t from = a->settled[group];
    if (!ks_agg_in_l1(c, q, a, group))
        return KS_OK;
    if (!have && a->n == KS_AGG_LOG)
        ks_agg_flush(c, q);
    // a block used already in this step (created, or arrived in L1) is
    // accounted now: an entry applies only after a block's recency. Those
    // arrived lie from `from` on (a block leaving L1 lowered it); those
    // created are the sequence's last ones, and ks_cache_req_grow may have
    // known them in L1 at once (below `from`): the run of them before it.
    // A compact chunk's blocks share their recency: all of them are used
    // already, or none; a chunk reaching below `from` is done with those
    // above it (the backward pass would come to it and go through it).
    double m = mass > 0 ? mass : 0.0;
    uint32_t lo = from;
    for (uint32_t p = from; p < s->n; p++) {
        uint32_t id = ks_seq_lookup(s, p);
        struct ks_compact *x = ks_blocktab_compact(&c->tab, id / KS_CHUNK);
        if (!x) {
            heat_now(c, ks_blocktab_get(&c->tab, id), m);
            continue;
        }
        uint32_t first = p - id % KS_CHUNK;
        if (heat_now_compact(c, x, m) && first < lo)
            lo = first;
        p = first + KS_CHUNK - 1;
    }
    for (uint32_t p = lo; p > 0; p--) {
        uint32_t id = ks_seq_lookup(s, p - 1);
        struct ks_compact *x = ks_blocktab_compact(&c->tab, id / KS_CHUNK);
        if (x ? !heat_now_compact(c, x, m) : !heat_now(c, ks_blocktab_get(&c->tab, id), m))
            break;
        if (x)
            p -= id % KS_CHUNK; // past the chunk's first block
    }
    a->accounted[group] = c->now + 1u;
    if (!have) {
        if (a->n == 0)
            c->agg_pending++;
        a->e[a->n++] = (struct ks_agg_entry){.step = c->now, .blocks = s->n, .add = add};
    }
    c->st.accesses += s->n;
    c->st.found[KS_L1] += s->n;
    c->st.aggregated += s->n;
    if (rep)
        *rep = (struct ks_access_report){.found = {s->n, 0, 0}};
    *done = 1;
    return KS_OK;
}
