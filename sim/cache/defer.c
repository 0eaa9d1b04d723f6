// defer.c - selections deferred (ks_cache_access_deferred).
//
// A step's selection of a (request, group) whose blocks are all in L1
// (none arrived by a prefetch still unused, none mapped by another request)
// changes nothing but their heat and recency, as aggregate.c argues for
// dense steps: every access is a hit, no prefetch candidate can follow,
// and under a policy that reads no more than heat and recency (not LFU, not
// Belady, no prefetch function) nothing else is kept. So where the caller
// knows a selection's size before drawing it (the access model), the draw
// can wait until something reads those blocks' heat or recency: the step is
// logged per request (its step, the clock's gain, the caller's argument), the
// hits counted, and the group's deferred steps are drawn by the caller's
// settle_fn and applied in order, each as ks_cache_access would have applied
// it in its step (the same heat sum at that step's gain; recency that
// step), when:
// - a victim is chosen in L1 (evict.c, buffer.c), which reads keys; every
//   request's deferred steps are settled first;
// - the heat clock rebases (cache.c) by a factor that is not a power of two:
//   the gains logged are the old epoch's. By a power of two 2^-k (the
//   rebase of a clock that moves a step at a time: 64 half-lives) they are
//   scaled by it instead and keep waiting (ks_defer_rebase): a block's
//   stored ref goes through the same sums scaled by 2^-k, and scaling by a
//   power of two commutes with every rounding on the way (a double's sum, a
//   38-bit code's) while no value leaves the codes' range (2^-510 to 2^512:
//   a ref that small is below a deferred add's half unit in the last place,
//   mass >= 2^-149 times gain >= 1 times 2^-64, and is absorbed by either
//   sum; refs reach about 2^78 at most, gain 2^64 times the mass of 64
//   half-lives);
// - another request maps the request's blocks (ks_agg_shared);
// - the caller asks (ks_cache_settle: a request retracted keeps its
//   generator, which must stand where it would have).
// A request freed drops its deferred steps: its blocks go with it, and no
// other reads them (none is shared or in flight while deferred). The blocks
// are not read in between: a block leaves L1 only as a victim, and a
// group's next step accessed block by block follows its settling (contract).
// The gain logged is the clock's in the step, so the sums are bit for bit
// the ones a block-by-block access makes (ks_heat_access at that gain).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "prefetch.h"

void ks_defer_free(struct ks_agg *a)
{
    free(a->def);
    a->def = NULL;
    a->n_def = a->cap_def = 0;
}

uint64_t ks_defer_bytes(const struct ks_agg *a)
{
    return (uint64_t)a->cap_def * sizeof *a->def;
}

void ks_cache_set_settle(struct ks_cache *c, ks_settle_fn fn, void *ud)
{
    c->settle_fn = fn;
    c->settle_ud = ud;
}

int ks_cache_access_deferred(struct ks_cache *c, uint32_t req, uint32_t group, uint32_t n, uint32_t arg, int *done,
                             struct ks_access_report *rep)
{
    *done = 0;
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || group >= c->p.groups)
        return KS_EINVAL;
    if (!c->started)
        return KS_ESTATE;
    const struct ks_seq *s = &q->seq[group];
    if (!c->settle_fn || !ks_agg_policy_allows(c) || s->n_prefix > 0 || n > s->n)
        return KS_OK; // every access matters to the policy, or blocks are shared
    struct ks_agg *a = ks_agg_get(c, q);
    if (!a)
        return KS_ENOMEM;
    if (a->n > 0 || a->touched[group] == c->now + 1u || a->accounted[group] == c->now + 1u)
        return KS_OK; // dense steps pending in aggregate, or accessed already in this step
    const struct ks_deferred *e = a->n_def ? &a->def[a->n_def - 1] : NULL;
    int have = e && e->step == c->now;
    if ((have && e->arg != arg) || !ks_agg_in_l1(c, q, a, group))
        return KS_OK;
    if (!have) {
        if (ks_grow((void **)&a->def, &a->cap_def, a->n_def + 1, sizeof *a->def) != KS_OK)
            return KS_ENOMEM;
        a->def[a->n_def++] = (struct ks_deferred){.step = c->now, .arg = arg, .gain = c->clk.gain};
    }
    if (a->def_from[group] == KS_NONE) {
        a->def_from[group] = a->n_def - 1;
        if (a->def_groups++ == 0)
            c->def_pending++;
    }
    a->accounted[group] = c->now + 1u;
    c->st.accesses += n;
    c->st.found[KS_L1] += n;
    c->st.aggregated += n;
    if (rep)
        *rep = (struct ks_access_report){.found = {n, 0, 0}};
    *done = 1;
    return KS_OK;
}

// Group g's deferred steps: the log's from def_from[g] on, but for the
// current step's when another group logged it and g has not been accounted
// in it (yet).
static uint32_t group_deferred(const struct ks_cache *c, const struct ks_agg *a, uint32_t g)
{
    if (a->def_from[g] == KS_NONE)
        return 0;
    uint32_t n = a->n_def - a->def_from[g];
    return a->def[a->n_def - 1].step == c->now && a->accounted[g] != c->now + 1u ? n - 1 : n;
}

uint32_t ks_cache_deferred(const struct ks_cache *c, uint32_t req, uint32_t group)
{
    const struct ks_req *q = ks_cache_req_of(c, req);
    return q && group < c->p.groups && q->agg ? group_deferred(c, q->agg, group) : 0;
}

KS_PREFETCH_FN void ks_cache_warm_req(const struct ks_cache *c, uint32_t req, int stage)
{
    if (req >= c->reqs.n)
        return;
    const struct ks_req *q = &c->req[req];
    if (stage == 0) {
        __builtin_prefetch(q);
        return;
    }
    if (!q->live)
        return;
    uint32_t groups = c->p.groups;
    const struct ks_agg *a = q->agg;
    if (stage == 1) {
        ks_prefetch_lines(q->seq, groups * sizeof *q->seq);
        if (a) {
            __builtin_prefetch(a);
            __builtin_prefetch(&a->def);
        }
    } else if (a) {
        ks_prefetch_lines(a->settled, groups * sizeof *a->settled);
        ks_prefetch_lines(a->touched, groups * sizeof *a->touched);
        ks_prefetch_lines(a->accounted, groups * sizeof *a->accounted);
        ks_prefetch_lines(a->def_from, groups * sizeof *a->def_from);
        if (a->n_def)
            __builtin_prefetch(&a->def[a->n_def - 1]);
    }
}

int ks_cache_deferrable(struct ks_cache *c, uint32_t req)
{
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || !c->settle_fn || !ks_agg_policy_allows(c))
        return 0;
    if (q->agg && q->agg->def_groups)
        return 1; // steps deferred: the next ones wait behind them
    struct ks_agg *a = ks_agg_get(c, q);
    for (uint32_t g = 0; a && g < c->p.groups; g++)
        if (q->seq[g].n_prefix > 0 || !ks_agg_in_l1(c, q, a, g))
            return 0;
    return a != NULL;
}

int ks_cache_access_past(struct ks_cache *c, uint32_t req, uint32_t group, const struct ks_deferred *e,
                         const struct ks_access *acc, uint32_t n)
{
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || group >= c->p.groups)
        return KS_EINVAL;
    const struct ks_seq *s = &q->seq[group];
    struct ks_heat_clock then = c->clk;
    then.gain = e->gain;
    for (uint32_t i = 0; i < n; i++) {
        if (acc[i].block >= s->n)
            return KS_EINVAL;
        struct ks_block *b = ks_blocktab_get(&c->tab, ks_seq_lookup(s, acc[i].block));
        int rising; // a hit whose heat rises opens a window of blocks all in L1 then: nothing
        ks_blk_set_heat(b, ks_heat_access(&then, ks_blk_heat(b), acc[i].mass > 0 ? acc[i].mass : 0.0, &rising));
        b->last = e->step;
        ks_l1_last_note(c, b);
    }
    return KS_OK;
}

int ks_cache_settle(struct ks_cache *c, uint32_t req)
{
    if (c->tally) // nothing is deferred: a tally takes no access
        return ks_tally_req_of(c->tally, req) ? KS_OK : KS_EINVAL;
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q)
        return KS_EINVAL;
    struct ks_agg *a = q->agg;
    if (!a || a->def_groups == 0)
        return KS_OK;
    for (uint32_t g = 0; g < c->p.groups; g++) {
        uint32_t from = a->def_from[g];
        if (from == KS_NONE)
            continue;
        int st = c->settle_fn(c->settle_ud, c, req, g, a->def + from, group_deferred(c, a, g));
        if (st != KS_OK)
            return st;
        a->def_from[g] = KS_NONE;
        a->def_groups--;
    }
    a->n_def = 0;
    c->def_pending--;
    return KS_OK;
}

void ks_defer_settle_buffer(struct ks_cache *c, uint32_t buf)
{
    const struct ks_buf *bf = &c->bufs[buf];
    if (c->def_pending && bf->state == KS_BUF_OWNED)
        ks_defer_settle_kept(c, bf->req);
}

void ks_defer_settle_kept(struct ks_cache *c, uint32_t req)
{
    int st = ks_cache_settle(c, req);
    if (st != KS_OK && c->def_status == KS_OK)
        c->def_status = st;
}

void ks_defer_rebase(struct ks_cache *c, double factor)
{
    int exp;
    if (frexp(factor, &exp) != 0.5) { // not a power of two
        ks_defer_settle_all(c);
        return;
    }
    for (uint32_t r = 0; r < c->reqs.n && c->def_pending; r++) {
        struct ks_agg *a = c->req[r].live ? c->req[r].agg : NULL;
        for (uint32_t i = 0; a && i < a->n_def; i++)
            a->def[i].gain *= factor;
    }
}

int ks_defer_settle_all(struct ks_cache *c)
{
    for (uint32_t r = 0; r < c->reqs.n && c->def_pending && c->def_status == KS_OK; r++)
        if (c->req[r].live)
            ks_defer_settle_kept(c, r);
    return c->def_status;
}
