// active.c - the requests admitted to one GPU (see active.h).
#include "active.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hist.h"
#include "sizing.h"

// Blocks of all groups the request holds at its full length.
static uint64_t footprint(const struct ks_active_set *set, const struct ks_request_spec *sp)
{
    return (uint64_t)ks_step_blocks(set->p.s, (uint64_t)sp->prompt_tokens + sp->output_tokens) * set->p.groups;
}

static int fill(struct ks_active_set *set, uint32_t req, uint32_t from, uint32_t to, char *err, size_t len)
{
    const struct ks_active_hooks *h = &set->p.hooks;
    return h->fill && to > from ? h->fill(h->ctx, req, from, to, err, len) : KS_OK;
}

// A failed call's reason, "what: status", unless a hook gave its own.
static int failed(char *err, size_t len, const char *what, int st)
{
    if (!err[0])
        snprintf(err, len, "%s: %s", what, ks_status_str(st));
    return st;
}

void ks_active_init(struct ks_active_set *set, const struct ks_active_params *p)
{
    *set = (struct ks_active_set){.p = *p};
    memset(set->prefix_req, 0xff, sizeof set->prefix_req);
}

void ks_active_fini(struct ks_active_set *set)
{
    for (uint32_t i = 0; i < set->n; i++)
        ks_selection_close(set->a[i].sr);
    free(set->a);
    set->a = NULL;
    set->n = set->cap = 0;
}

// A request's TPOT as vLLM and Vidur define it: the time from its first
// token to its last over the tokens after the first; -1 with fewer than two.
static double request_tpot(const struct ks_active *a)
{
    return a->generated > 1 ? (a->last_token - a->first_token) / (a->generated - 1) : -1;
}

static void record(struct ks_active_set *set, const struct ks_active *a, int finished)
{
    ks_run_result_add_request(set->p.r, &(struct ks_request_record){
        .id = a->spec.id,
        .session = a->spec.session,
        .turn = a->spec.turn,
        .gpu = set->p.gpu,
        .prompt = a->spec.prompt_tokens,
        .output = a->spec.output_tokens,
        .generated = a->generated,
        .arrival = a->spec.arrival,
        .admitted = a->admitted,
        .first_token = a->generated ? a->first_token : -1,
        .finish = finished ? a->last_token : -1,
        .tpot = finished ? request_tpot(a) : -1,
        .e2el = finished ? a->last_token - a->spec.arrival : -1,
        .itl_max = a->itl_max,
    });
}

// Whether a finished request meets every per-request objective set, as
// vLLM's goodput counts them: a request of one token meets any TPOT.
static int good(const struct ks_scenario_slo *o, const struct ks_active *a)
{
    double tpot = request_tpot(a);
    return (o->ttft <= 0 || a->first_token - a->spec.arrival <= o->ttft) && (o->tpot <= 0 || tpot <= o->tpot) &&
           (o->e2el <= 0 || a->last_token - a->spec.arrival <= o->e2el);
}

// Places a's prompt: a shared prefix (whole blocks) from its group's prefix
// request, created by the group's first request, and the rest grown into
// `tier`. *cached receives the prompt tokens whose KV already existed (a
// prefix placed by an earlier request of the group): prefill skips them.
// *filling is set when the fill hook failed (a failure, not a full tier).
static int place_prompt(struct ks_active_set *set, struct ks_active *a, unsigned tier, uint32_t *cached,
                        int *filling, char *err, size_t len)
{
    const struct ks_scenario *s = set->p.s;
    struct ks_cache *c = set->p.cache;
    int st = ks_cache_req_new(c, &a->req);
    if (st != KS_OK)
        return st;
    uint32_t shared = 0;
    const struct ks_request_spec *sp = &a->spec;
    if (sp->prefix_group != KS_NONE && sp->prefix_group < KS_ACTIVE_PREFIX_GROUPS &&
        sp->prefix_tokens >= s->cache.block_size) {
        uint32_t pb = sp->prefix_tokens / s->cache.block_size;
        uint32_t *pr = &set->prefix_req[sp->prefix_group];
        int existed = *pr != KS_NONE;
        if (!existed) {
            if ((st = ks_cache_req_new(c, pr)) != KS_OK)
                return st;
            if ((st = ks_cache_req_grow(c, *pr, pb, tier, NULL)) != KS_OK) {
                ks_cache_req_free(c, *pr);
                *pr = KS_NONE;
                return st;
            }
            if ((st = fill(set, *pr, 0, pb, err, len)) != KS_OK) {
                *filling = 1;
                return st;
            }
        }
        if (ks_cache_req_len(c, *pr) >= pb && ks_cache_req_share(c, a->req, *pr, pb) == KS_OK) {
            shared = pb;
            if (existed)
                *cached = pb * s->cache.block_size;
        }
    }
    uint32_t want = ks_step_blocks(set->p.s, sp->prompt_tokens);
    if (want <= shared)
        return KS_OK;
    if ((st = ks_cache_req_grow(c, a->req, want - shared, tier, NULL)) != KS_OK)
        return st;
    if ((st = fill(set, a->req, shared, want, err, len)) != KS_OK)
        *filling = 1;
    return st;
}

int ks_active_admit(struct ks_active_set *set, const struct ks_request_spec *sp, double now, unsigned tier,
                    struct ks_active **out, char *err, size_t len)
{
    *out = NULL;
    uint64_t full = footprint(set, sp);
    if (set->n > 0 && set->blocks + full > set->p.admit_blocks)
        return KS_OK;
    // device buffers: one per group, or the request waits for one to finish
    if (set->n > 0 && set->p.s->cache.organisation == KS_ORG_PER_REQUEST &&
        ks_cache_buffers_free(set->p.cache) < set->p.groups)
        return KS_OK;
    if (ks_grow((void **)&set->a, &set->cap, set->n + 1, sizeof *set->a) != KS_OK)
        return failed(err, len, "admitting a request", KS_ENOMEM);
    struct ks_active *a = &set->a[set->n];
    *a = (struct ks_active){.req = KS_NONE, .spec = *sp, .ctx = sp->prompt_tokens, .admitted = now};
    uint32_t cached = 0;
    int filling = 0;
    int st = place_prompt(set, a, tier, &cached, &filling, err, len);
    const char *why = NULL; // what failed; NULL: the tiers are full, the request waits for others to finish
    if (st == KS_OK && !(a->sr = ks_selection_open(set->p.sparse, sp->id, sp->prompt_tokens))) {
        st = KS_ENOMEM;
        why = "admitting a request";
    } else if (st != KS_OK && filling) {
        why = "writing a prompt's KV";
    } else if (st != KS_OK && set->n == 0) {
        why = "placing a prompt in an empty GPU";
    }
    if (st != KS_OK) {
        if (a->req != KS_NONE)
            ks_cache_req_free(set->p.cache, a->req);
        return why ? failed(err, len, why, st) : KS_OK;
    }
    a->prefilled = cached;
    set->n++;
    set->blocks += full;
    set->p.r->admitted++;
    if (set->n > set->p.r->peak_batch)
        set->p.r->peak_batch = set->n;
    *out = a;
    return KS_OK;
}

double ks_active_prefill_chunk(struct ks_active_set *set,
                               double (*cost)(const struct ks_scenario *s, double tokens, double done),
                               uint32_t *tokens)
{
    const struct ks_scenario *s = set->p.s;
    return ks_active_prefill_budget(set, s->prefill.chunk ? s->prefill.chunk : UINT32_MAX, cost, tokens);
}

double ks_active_prefill_budget(struct ks_active_set *set, uint32_t budget,
                                double (*cost)(const struct ks_scenario *s, double tokens, double done),
                                uint32_t *tokens)
{
    const struct ks_scenario *s = set->p.s;
    uint32_t taken = 0;
    double t = 0;
    while (budget > 0) {
        struct ks_active *a = NULL;
        for (uint32_t i = 0; i < set->n; i++) {
            struct ks_active *x = &set->a[i];
            if (x->prefilled < x->spec.prompt_tokens && (!a || x->admitted < a->admitted))
                a = x;
        }
        if (!a)
            break;
        uint32_t take = a->spec.prompt_tokens - a->prefilled;
        if (take > budget)
            take = budget;
        if (cost)
            t += cost(s, take, a->prefilled);
        a->prefilled += take;
        budget -= take;
        taken += take;
    }
    if (tokens)
        *tokens = taken;
    return t;
}

uint32_t ks_active_decoding_count(const struct ks_active_set *set)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < set->n; i++)
        n += set->a[i].generated > 0;
    return n;
}

int ks_active_grow(struct ks_active_set *set, struct ks_active *a, char *err, size_t len)
{
    struct ks_cache *c = set->p.cache;
    uint32_t have = ks_cache_req_len(c, a->req), need = ks_step_blocks(set->p.s, a->ctx);
    if (need <= have)
        return KS_OK;
    if (ks_cache_req_grow(c, a->req, need - have, KS_L1, NULL) != KS_OK) {
        set->p.r->unplanned++; // no room for the new block anywhere: counted, decoding goes on
        return KS_OK;
    }
    int st = fill(set, a->req, have, need, err, len);
    return st == KS_OK ? KS_OK : failed(err, len, "writing a new block's KV", st);
}

void ks_active_finish(struct ks_active_set *set, uint32_t i)
{
    struct ks_active *a = &set->a[i];
    struct ks_run_result *r = set->p.r;
    record(set, a, 1);
    r->finished++;
    if (a->generated > 1)
        ks_hist_add(r->tpot, request_tpot(a));
    ks_hist_add(r->e2el, a->last_token - a->spec.arrival);
    r->good += good(&set->p.s->slo, a);
    if (set->p.hooks.finished)
        set->p.hooks.finished(set->p.hooks.ctx, a);
    set->blocks -= footprint(set, &a->spec);
    ks_cache_req_free(set->p.cache, a->req);
    ks_selection_close(a->sr);
    set->a[i] = set->a[--set->n];
}

void ks_active_first_token(struct ks_active_set *set, struct ks_active *a, double at)
{
    a->first_token = at;
    ks_hist_add(set->p.r->ttft, at - a->spec.arrival);
    set->p.r->prompt_tokens += a->spec.prompt_tokens;
}

uint32_t ks_active_kept(const struct ks_active_set *set, const struct ks_active *a)
{
    uint64_t m = set->p.s->speculative.accept_milli, n = a->steps;
    if (m <= 1000) // one token a step (also a scenario built by hand, whose milli is 0)
        return 1;
    uint64_t kept = ((n + 1) * m) / 1000 - (n * m) / 1000;
    uint32_t left = a->spec.output_tokens - a->generated;
    return kept < left ? (uint32_t)kept : left;
}

int ks_active_emit(struct ks_active_set *set, double now, int from_prefill, char *err, size_t len)
{
    struct ks_run_result *r = set->p.r;
    for (uint32_t i = 0; i < set->n;) {
        struct ks_active *a = &set->a[i];
        if (from_prefill != (a->generated == 0) || a->prefilled < a->spec.prompt_tokens) {
            i++;
            continue;
        }
        if (a->sitting) { // it sat this step out: no token
            a->sitting = 0;
            i++;
            continue;
        }
        uint32_t kept = 1;
        if (a->generated == 0) {
            ks_active_first_token(set, a, now);
        } else {
            kept = ks_active_kept(set, a);
            a->steps++;
            double d = now - a->last_token;
            ks_hist_add(r->itl, d);
            if (d > a->itl_max)
                a->itl_max = d;
        }
        // the new tokens are the next step's input: their K and V join what that step reads
        a->ctx += kept;
        int st = ks_active_grow(set, a, err, len);
        if (st != KS_OK)
            return st;
        a->generated += kept;
        a->last_token = now;
        r->tokens += kept;
        if (a->generated >= a->spec.output_tokens)
            ks_active_finish(set, i);
        else
            i++;
    }
    return KS_OK;
}

void ks_active_record_rest(struct ks_active_set *set)
{
    for (uint32_t i = 0; i < set->n; i++)
        record(set, &set->a[i], 0);
}
