// active.c - the requests admitted to one GPU (see active.h).
#include "active.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hist.h"
#include "sizing.h"

// SGLang's constants (python/sglang/srt/global_config.py, later environ.py):
// the ratio's minimum as a share of its initial value, the decode steps it
// takes to fall there, the tokens a retraction leaves room for per request.
#define RATIO_MIN_FACTOR 0.14
#define RATIO_DECAY_STEPS 600
#define RETRACT_STEPS 20

static int estimate(const struct ks_active_set *set)
{
    return set->p.s->scheduler.reserve == KS_RESERVE_ESTIMATE;
}

// Blocks of all groups admission reserves for a request holding ctx tokens
// with `left` output tokens to come (see active.h).
static uint64_t reservation(const struct ks_active_set *set, uint32_t ctx, uint32_t left)
{
    const struct ks_scenario_scheduler *o = &set->p.s->scheduler;
    uint64_t more = left;
    if (estimate(set))
        more = (uint64_t)ceil(set->ratio * (left < o->reserve_clip ? left : o->reserve_clip));
    return (uint64_t)ks_step_blocks(set->p.s, ctx + more) * set->p.groups;
}

uint64_t ks_active_reserved(const struct ks_active_set *set)
{
    uint64_t held = 0;
    for (uint32_t i = 0; i < set->n; i++) {
        const struct ks_active *a = &set->a[i];
        held += reservation(set, a->ctx, a->spec.output_tokens - a->generated);
    }
    return held;
}

// Whether a request reserving `blocks` may join the set: its reservation
// fits beside the others' (always into an empty set), and with device
// buffers one is free for each group.
static int fits(const struct ks_active_set *set, uint64_t blocks)
{
    return set->n == 0 ||
           (ks_active_reserved(set) + blocks <= set->p.admit_blocks &&
            (set->p.s->cache.organisation != KS_ORG_PER_REQUEST || ks_cache_buffers_free(set->p.cache) >= set->p.groups));
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
    *set = (struct ks_active_set){.p = *p, .ratio = p->s->scheduler.new_token_ratio};
    memset(set->prefix_req, 0xff, sizeof set->prefix_req);
}

void ks_active_fini(struct ks_active_set *set)
{
    for (uint32_t i = 0; i < set->n; i++)
        ks_selection_close(set->a[i].sr);
    for (uint32_t i = 0; i < set->n_out; i++)
        ks_selection_close(set->out[i].sr);
    free(set->a);
    free(set->out);
    set->a = set->out = NULL;
    set->n = set->cap = set->n_out = set->cap_out = 0;
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

// Takes a's place in the set (a copy) and counts the batch's peak.
static struct ks_active *join(struct ks_active_set *set, const struct ks_active *a)
{
    struct ks_active *x = &set->a[set->n++];
    *x = *a;
    if (set->n > set->p.r->peak_batch)
        set->p.r->peak_batch = set->n;
    return x;
}

int ks_active_admit(struct ks_active_set *set, const struct ks_request_spec *sp, double now, unsigned tier,
                    struct ks_active **out, char *err, size_t len)
{
    *out = NULL;
    if (set->n == 0 && set->n_out == 0)
        set->ratio = set->p.s->scheduler.new_token_ratio; // idle: SGLang starts the ratio again
    if (!fits(set, reservation(set, sp->prompt_tokens, sp->output_tokens)))
        return KS_OK;
    if (ks_grow((void **)&set->a, &set->cap, set->n + 1, sizeof *set->a) != KS_OK)
        return failed(err, len, "admitting a request", KS_ENOMEM);
    struct ks_active a = {.req = KS_NONE, .spec = *sp, .ctx = sp->prompt_tokens, .prompt = sp->prompt_tokens,
                          .admitted = now};
    uint32_t cached = 0;
    int filling = 0;
    int st = place_prompt(set, &a, tier, &cached, &filling, err, len);
    const char *why = NULL; // what failed; NULL: the tiers are full, the request waits for others to finish
    if (st == KS_OK && !(a.sr = ks_selection_open(set->p.sparse, sp->id, sp->prompt_tokens))) {
        st = KS_ENOMEM;
        why = "admitting a request";
    } else if (st != KS_OK && filling) {
        why = "writing a prompt's KV";
    } else if (st != KS_OK && set->n == 0) {
        why = "placing a prompt in an empty GPU";
    }
    if (st != KS_OK) {
        if (a.req != KS_NONE)
            ks_cache_req_free(set->p.cache, a.req);
        return why ? failed(err, len, why, st) : KS_OK;
    }
    a.prefilled = cached;
    set->p.r->admitted++;
    *out = join(set, &a);
    return KS_OK;
}

int ks_active_resume(struct ks_active_set *set, struct ks_active **out, char *err, size_t len)
{
    *out = NULL;
    if (set->n_out == 0)
        return KS_OK;
    struct ks_active a = set->out[0];
    if (!fits(set, reservation(set, a.ctx, a.spec.output_tokens - a.generated)))
        return KS_OK;
    if (ks_grow((void **)&set->a, &set->cap, set->n + 1, sizeof *set->a) != KS_OK)
        return failed(err, len, "readmitting a retracted request", KS_ENOMEM);
    struct ks_cache *c = set->p.cache;
    uint32_t nb = ks_step_blocks(set->p.s, a.ctx);
    int st = ks_cache_req_new(c, &a.req);
    if (st == KS_OK && (st = ks_cache_req_grow(c, a.req, nb, KS_L1, NULL)) == KS_OK &&
        (st = fill(set, a.req, 0, nb, err, len)) != KS_OK) {
        ks_cache_req_free(c, a.req);
        return failed(err, len, "writing a retracted request's KV", st);
    }
    if (st != KS_OK) {
        if (a.req != KS_NONE)
            ks_cache_req_free(c, a.req);
        return set->n == 0 ? failed(err, len, "placing a retracted request in an empty GPU", st) : KS_OK;
    }
    a.prompt = a.ctx;
    a.prefilled = 0;
    a.resumed = 1;
    memmove(set->out, set->out + 1, (set->n_out - 1) * sizeof *set->out);
    set->n_out--;
    *out = join(set, &a);
    return KS_OK;
}

// Whether a is a better victim than b (SGLang's order: fewest tokens
// generated, then the longest prompt; then the latest arrival).
static int before(const struct ks_active *a, const struct ks_active *b)
{
    if (a->generated != b->generated)
        return a->generated < b->generated;
    if (a->spec.prompt_tokens != b->spec.prompt_tokens)
        return a->spec.prompt_tokens > b->spec.prompt_tokens;
    if (a->spec.arrival != b->spec.arrival)
        return a->spec.arrival > b->spec.arrival;
    return a->spec.id > b->spec.id;
}

// Moves request i to the retracted, in arrival order; its blocks are freed
// (its deferred selections settled first: its streams go on). KS_OK or a status.
static int retract(struct ks_active_set *set, uint32_t i)
{
    if (ks_grow((void **)&set->out, &set->cap_out, set->n_out + 1, sizeof *set->out) != KS_OK)
        return KS_ENOMEM;
    struct ks_active *a = &set->a[i];
    int st = ks_cache_settle(set->p.cache, a->req);
    if (st != KS_OK)
        return st;
    ks_cache_req_free(set->p.cache, a->req);
    a->req = KS_NONE;
    a->sitting = 0;
    uint32_t at = set->n_out;
    while (at > 0 && (set->out[at - 1].spec.arrival > a->spec.arrival ||
                      (set->out[at - 1].spec.arrival == a->spec.arrival && set->out[at - 1].spec.id > a->spec.id)))
        at--;
    memmove(set->out + at + 1, set->out + at, (set->n_out - at) * sizeof *set->out);
    set->out[at] = *a;
    set->n_out++;
    set->a[i] = set->a[--set->n];
    set->p.r->retracted++;
    return KS_OK;
}

int ks_active_make_room(struct ks_active_set *set)
{
    if (!estimate(set))
        return KS_OK;
    const struct ks_scenario *s = set->p.s;
    uint64_t held = 0, opened = 0, groups = set->p.groups;
    uint32_t decoding = 0;
    for (uint32_t i = 0; i < set->n; i++) {
        const struct ks_active *a = &set->a[i];
        uint32_t nb = ks_step_blocks(s, a->ctx);
        held += (uint64_t)nb * groups;
        if (ks_active_decodes(a)) {
            opened += (uint64_t)(ks_step_blocks(s, (uint64_t)a->ctx + ks_active_kept(set, a)) - nb) * groups;
            decoding++;
        }
    }
    double init = s->scheduler.new_token_ratio, least = init * RATIO_MIN_FACTOR;
    if (held + opened <= set->p.admit_blocks) {
        set->ratio = fmax(set->ratio - (init - least) / RATIO_DECAY_STEPS, least);
        return KS_OK;
    }
    // retract until RETRACT_STEPS tokens of each decoding request left fit
    for (;;) {
        uint64_t free_tokens = held < set->p.admit_blocks ? (set->p.admit_blocks - held) / groups * s->cache.block_size
                                                          : 0;
        if (decoding <= 1 || free_tokens >= (uint64_t)RETRACT_STEPS * decoding)
            break;
        uint32_t v = UINT32_MAX;
        for (uint32_t i = 0; i < set->n; i++)
            if (ks_active_decodes(&set->a[i]) && (v == UINT32_MAX || before(&set->a[i], &set->a[v])))
                v = i;
        held -= (uint64_t)ks_step_blocks(s, set->a[v].ctx) * groups;
        int st = retract(set, v);
        if (st != KS_OK)
            return st;
        decoding--;
    }
    uint64_t made = 0, asked = 0;
    for (uint32_t i = 0; i < set->n; i++) {
        const struct ks_active *a = &set->a[i];
        if (ks_active_decodes(a)) {
            made += a->generated;
            asked += a->spec.output_tokens;
        }
    }
    set->ratio = fmin(1.0, (double)(made + (uint64_t)RETRACT_STEPS * decoding) / (double)(asked + 1));
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
            if (x->prefilled < x->prompt && (!a || x->admitted < a->admitted))
                a = x;
        }
        if (!a)
            break;
        uint32_t take = a->prompt - a->prefilled;
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
        n += ks_active_decodes(&set->a[i]);
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
    // out of the set before the hook, which may release a closed-loop
    // client's next request: a router then sees this GPU without it
    struct ks_active done = *a;
    set->a[i] = set->a[--set->n];
    ks_cache_req_free(set->p.cache, done.req);
    if (set->p.hooks.finished)
        set->p.hooks.finished(set->p.hooks.ctx, &done);
    ks_selection_close(done.sr);
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

// Whether request a takes part in this emission (ks_active_emit): one from
// its prefill or from a decode step, as asked, with its prompt all in.
static int emitting(const struct ks_active *a, int from_prefill)
{
    return from_prefill == !ks_active_decodes(a) && a->prefilled >= a->prompt;
}

int ks_active_emit(struct ks_active_set *set, double now, int from_prefill, char *err, size_t len)
{
    struct ks_run_result *r = set->p.r;
    // each emission reads its request's length in the cache (ks_active_grow),
    // cold again after the step's layers on a large cluster: fetched first,
    // so that the misses overlap
    for (int stage = 0; stage < 2; stage++)
        for (uint32_t i = 0; i < set->n; i++)
            if (emitting(&set->a[i], from_prefill) && !set->a[i].sitting)
                ks_cache_warm_req(set->p.cache, set->a[i].req, stage);
    for (uint32_t i = 0; i < set->n;) {
        struct ks_active *a = &set->a[i];
        if (!emitting(a, from_prefill)) {
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
            if (from_prefill) // a resumed request's recomputed context gives its next token
                a->resumed = 0;
            else
                kept = ks_active_kept(set, a);
            a->steps += !from_prefill;
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
        set->tokens += kept;
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
    for (uint32_t i = 0; i < set->n_out; i++)
        record(set, &set->out[i], 0);
}
