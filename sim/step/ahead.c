// ahead.c - the next decode step's selections, drawn on a worker (see ahead.h).
//
// The list and the draws' results live in one growing arena each; the
// worker writes them, the driver reads them only after ks_step_ahead_wait.
// An entry's draws are consecutive in `draw`, its layers in order.
#define _POSIX_C_SOURCE 200809L // strdup

#include "ahead.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sizing.h"
#include "status.h"

struct entry {
    struct ks_selection_req *sr;
    uint64_t id;
    uint32_t step, nb;
    uint32_t draws; // draws made (all of them unless one failed: then the failed one is the last)
    int st;         // KS_OK, or the failed draw's status
    char *why;      // the failed draw's reason (malloc'd)
};

struct draw {
    size_t off; // into sel and mass
    uint32_t k;
};

struct ks_step_ahead {
    struct ks_pool *pool;
    struct ks_pool_job job;
    int started; // job queued since the last wait
    uint32_t per_request; // draws per request: groups, or 1
    int per_layer;        // the selections differ by layer: draw g is layer ks_step_layer_of(scale, g), else 0
    uint32_t scale;       // model layers per group
    struct entry *e;
    uint32_t n, cap_e;
    struct draw *draw; // [n * per_request]
    uint32_t cap_draw;
    uint32_t *sel;
    float *mass;
    size_t used, cap_blk;
    uint32_t hint; // the entry after the last one taken: the active set's order mostly holds
};

// Room for n more blocks in sel and mass. KS_OK or KS_ENOMEM.
static int room(struct ks_step_ahead *x, size_t n)
{
    if (x->used + n <= x->cap_blk)
        return KS_OK;
    size_t cap = x->cap_blk ? x->cap_blk : 1024;
    while (cap < x->used + n)
        cap *= 2;
    uint32_t *sel = realloc(x->sel, cap * sizeof *sel);
    if (!sel)
        return KS_ENOMEM;
    x->sel = sel;
    float *mass = realloc(x->mass, cap * sizeof *mass);
    if (!mass)
        return KS_ENOMEM;
    x->mass = mass;
    x->cap_blk = cap;
    return KS_OK;
}

// Draw d's layer (d counts the list's draws in order).
static uint32_t layer_of(const struct ks_step_ahead *x, size_t d)
{
    return x->per_layer ? ks_step_layer_of(x->scale, (uint32_t)(d % x->per_request), x->e[d / x->per_request].id)
                        : 0;
}

enum { WARM = 3 }; // ks_selection_warm's stages: draw d is warmed over the WARM draws before it

static void warm(const struct ks_step_ahead *x, size_t d, size_t total, int stage)
{
    if (d < total)
        ks_selection_warm(x->e[d / x->per_request].sr, layer_of(x, d), stage);
}

void ks_step_warm_request(const struct ks_selection_req *sr, uint64_t id, uint32_t scale, uint32_t groups,
                          uint32_t g)
{
    for (int stage = 0; stage < WARM; stage++) {
        uint32_t from = g == 0 ? 0 : WARM - (uint32_t)stage; // at g == 0 also the first draws, which nothing warmed
        for (uint32_t d = g + from; d <= g + WARM - (uint32_t)stage && d < groups; d++)
            ks_selection_warm(sr, ks_step_layer_of(scale, d, id), stage);
    }
}

// The job: every listed request's draws, in list order, each request's in
// layer order (as the step would make them).
// NOTE: each draw's state is fetched into the cache in ks_selection_warm's
// stages while the draws before it run: a loaded GPU's access-model streams
// (36 requests x 32 layers, each with its per-block state) outgrow the CPU's
// caches, and a draw's first reads of its own state were a fifth of its time
// (perf, cluster_64x8_loaded.lua at detail.nodes=1 detail.layers=8,
// 2026-12-04: the worker's stall on them gone, the run's CPU time x0.96; its
// wall time barely moves, the simulation's thread being the longer).
static void draw_all(void *arg)
{
    struct ks_step_ahead *x = arg;
    size_t total = (size_t)x->n * x->per_request;
    x->used = 0;
    for (size_t d = 0; d < WARM; d++) // the first draws' stages, in order
        for (int stage = 0; stage < WARM - (int)d; stage++)
            warm(x, d, total, stage);
    for (uint32_t i = 0; i < x->n; i++) {
        struct entry *e = &x->e[i];
        for (uint32_t l = 0; l < x->per_request; l++) {
            size_t at = (size_t)i * x->per_request + l;
            for (int stage = 0; stage < WARM; stage++)
                warm(x, at + WARM - stage, total, stage);
            struct draw *d = &x->draw[at];
            e->draws = l + 1;
            char err[256] = "";
            int st = room(x, e->nb);
            if (st == KS_OK)
                st = ks_selection_get(e->sr, e->step, layer_of(x, at), e->nb,
                                      NULL, x->sel + x->used, x->mass + x->used, &d->k,
                                      err, sizeof err);
            if (st != KS_OK) {
                e->st = st;
                if (!err[0])
                    snprintf(err, sizeof err, "drawing a selection: %s", ks_status_str(st));
                e->why = strdup(err);
                break;
            }
            d->off = x->used;
            x->used += d->k;
        }
    }
}

struct ks_step_ahead *ks_step_ahead_new(struct ks_pool *pool, uint32_t groups, uint32_t scale, int per_layer)
{
    struct ks_step_ahead *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->pool = pool;
    x->job = (struct ks_pool_job){.fn = draw_all, .arg = x};
    x->per_request = per_layer && groups ? groups : 1;
    x->per_layer = per_layer && groups;
    x->scale = scale ? scale : 1;
    return x;
}

void ks_step_ahead_free(struct ks_step_ahead *x)
{
    if (!x)
        return;
    ks_step_ahead_wait(x);
    ks_step_ahead_clear(x);
    free(x->e);
    free(x->draw);
    free(x->sel);
    free(x->mass);
    free(x);
}

void ks_step_ahead_clear(struct ks_step_ahead *x)
{
    KS_ASSERT(!x->started);
    for (uint32_t i = 0; i < x->n; i++)
        free(x->e[i].why);
    x->n = 0;
    x->used = 0;
    x->hint = 0;
}

int ks_step_ahead_add(struct ks_step_ahead *x, struct ks_selection_req *sr, uint64_t id, uint32_t step, uint32_t nb)
{
    KS_ASSERT(!x->started);
    if (ks_grow((void **)&x->e, &x->cap_e, x->n + 1, sizeof *x->e) != KS_OK ||
        ks_grow((void **)&x->draw, &x->cap_draw, (x->n + 1) * x->per_request, sizeof *x->draw) != KS_OK)
        return KS_ENOMEM;
    x->e[x->n++] = (struct entry){.sr = sr, .id = id, .step = step, .nb = nb};
    return KS_OK;
}

void ks_step_ahead_start(struct ks_step_ahead *x)
{
    KS_ASSERT(!x->started);
    if (x->n == 0)
        return;
    x->started = 1;
    ks_pool_submit(x->pool, &x->job);
}

void ks_step_ahead_wait(struct ks_step_ahead *x)
{
    if (!x->started)
        return;
    ks_pool_wait(x->pool, &x->job);
    x->started = 0;
}

// The entry listing request id, searched from the hint (the active set's
// order mostly holds); x->n when none does.
static uint32_t find(const struct ks_step_ahead *x, uint64_t id)
{
    for (uint32_t t = 0; t < x->n; t++) {
        uint32_t i = (x->hint + t) % x->n;
        if (x->e[i].id == id)
            return i;
    }
    return x->n;
}

int ks_step_ahead_peek(const struct ks_step_ahead *x, uint64_t id, uint32_t layer, const uint32_t **sel, uint32_t *k)
{
    uint32_t i = x->started || layer >= x->per_request ? x->n : find(x, id);
    if (i >= x->n)
        return 0;
    const struct entry *e = &x->e[i];
    if (layer >= e->draws || (layer + 1 == e->draws && e->st != KS_OK))
        return 0;
    const struct draw *d = &x->draw[(size_t)i * x->per_request + layer];
    *sel = x->sel + d->off;
    *k = d->k;
    return 1;
}

int ks_step_ahead_take(struct ks_step_ahead *x, uint64_t id, uint32_t step, uint32_t layer, uint32_t nb,
                       const uint32_t **sel, const float **mass, uint32_t *k, char *err, size_t len)
{
    KS_ASSERT(!x->started);
    uint32_t i = find(x, id);
    if (i >= x->n)
        return 0;
    const struct entry *e = &x->e[i];
    // drawn for another step or context: the driver's forecast is wrong and
    // the request's streams are a step ahead; nothing after this is right
    KS_ASSERT(e->step == step && e->nb == nb);
    if (layer >= x->per_request)
        layer = 0;
    x->hint = layer + 1 == x->per_request ? i + 1 : i;
    if (layer + 1 == e->draws && e->st != KS_OK) {
        snprintf(err, len, "%s", e->why ? e->why : ks_status_str(e->st));
        return e->st;
    }
    KS_ASSERT(layer < e->draws);
    const struct draw *d = &x->draw[(size_t)i * x->per_request + layer];
    *sel = x->sel + d->off;
    *mass = x->mass + d->off;
    *k = d->k;
    return 1;
}
