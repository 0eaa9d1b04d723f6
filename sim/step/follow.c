// follow.c - the level of detail `detail.gpus` (see follow.h).
#include "follow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "status.h"

// The ring of steps with n decoding requests: one each up to
// KS_FOLLOW_EXACT, then one per power of two.
static uint32_t bucket(uint32_t n)
{
    if (n <= KS_FOLLOW_EXACT)
        return n;
    uint32_t log = 31 - (uint32_t)__builtin_clz(n); // >= 6
    return KS_FOLLOW_EXACT + log - 5;
}

int ks_follow_init(struct ks_follow *f, uint32_t groups)
{
    *f = (struct ks_follow){.groups = groups};
    return KS_OK;
}

static void shape_free(struct ks_follow_shape *sh)
{
    free(sh->batch);
    free(sh->outside);
}

void ks_follow_fini(struct ks_follow *f)
{
    for (uint32_t y = 0; y <= KS_FOLLOW_YOUNG_MAX; y++)
        for (uint32_t a = 0; a < KS_FOLLOW_AGES; a++)
            for (uint32_t b = 0; b < KS_FOLLOW_BUCKETS; b++) {
                struct ks_follow_ring *r = &f->ring[y][a][b];
                for (uint32_t i = 0; r->shape && i < KS_FOLLOW_RING; i++)
                    shape_free(&r->shape[i]);
                free(r->shape);
            }
    *f = (struct ks_follow){0};
}

int ks_follow_publish(struct ks_follow *f, const struct ks_follow_shape *numbers, const struct ks_step_job *jobs,
                      uint32_t n_jobs, const uint32_t (*outside)[KS_TIERS])
{
    uint32_t y = numbers->n_young < KS_FOLLOW_YOUNG_MAX ? numbers->n_young : KS_FOLLOW_YOUNG_MAX;
    uint32_t a = numbers->age < KS_FOLLOW_AGES ? numbers->age : KS_FOLLOW_AGES - 1;
    struct ks_follow_ring *r = &f->ring[y][a][bucket(numbers->n_dec)];
    if (!r->shape && !(r->shape = calloc(KS_FOLLOW_RING, sizeof *r->shape)))
        return KS_ENOMEM;
    struct ks_follow_shape *sh = &r->shape[r->next];
    if (!sh->outside && !(sh->outside = malloc(f->groups * sizeof *sh->outside)))
        return KS_ENOMEM;
    if (ks_grow((void **)&sh->batch, &sh->cap_batch, n_jobs, sizeof *sh->batch) != KS_OK)
        return KS_ENOMEM;
    struct ks_follow_batch *batch = sh->batch;
    uint32_t cap = sh->cap_batch;
    uint32_t (*out)[KS_TIERS] = sh->outside;
    *sh = *numbers;
    sh->batch = batch;
    sh->cap_batch = cap;
    sh->outside = out;
    sh->n_batch = n_jobs;
    sh->promotes = 0;
    memcpy(out, outside, f->groups * sizeof *out);
    for (uint32_t i = 0; i < n_jobs; i++) {
        const struct ks_step_job *j = &jobs[i];
        const struct ks_batch *b = j->b;
        batch[i] = (struct ks_follow_batch){.bytes = b->bytes, .n = b->n, .most_per_req = b->most_per_req, .group = b->group,
                                            .after = ks_step_job_after(jobs, n_jobs, i), .layer = j->layer, .start = j->start, .src = b->src,
                                            .dst = b->dst, .klass = b->klass, .early = b->early, .needed = j->needed};
        sh->promotes |= b->dst == KS_L1;
    }
    r->next = (r->next + 1) % KS_FOLLOW_RING;
    if (r->n < KS_FOLLOW_RING)
        r->n++;
    f->published++;
    f->published_young += numbers->n_young > 0;
    return KS_OK;
}

int ks_follow_ready(const struct ks_follow *f)
{
    return f->published_young > 0 && f->published > f->published_young;
}

// The nearest ring to `at` with a shape among rings[], NULL: none.
static const struct ks_follow_ring *nearest(const struct ks_follow_ring *rings, int at)
{
    for (int d = 0; d < KS_FOLLOW_BUCKETS; d++) {
        int near[2] = {at - d, at + d}; // fewer requests first: its shape scales up
        for (int k = 0; k < (d ? 2 : 1); k++) {
            int b = near[k];
            if (b >= 1 && b < KS_FOLLOW_BUCKETS && rings[b].n > 0)
                return &rings[b];
        }
    }
    return NULL;
}

const struct ks_follow_shape *ks_follow_pick(const struct ks_follow *f, uint32_t n_dec, uint32_t n_young,
                                             uint32_t age, uint64_t draw)
{
    int y = n_young < KS_FOLLOW_YOUNG_MAX ? (int)n_young : KS_FOLLOW_YOUNG_MAX;
    int a = age < KS_FOLLOW_AGES ? (int)age : KS_FOLLOW_AGES - 1;
    for (int dy = 0; dy <= KS_FOLLOW_YOUNG_MAX; dy++)
        for (int ky = 0; ky < (dy ? 2 : 1); ky++) {
            int yy = ky ? y + dy : y - dy;
            if (yy < 0 || yy > KS_FOLLOW_YOUNG_MAX)
                continue;
            for (int da = 0; da < KS_FOLLOW_AGES; da++)
                for (int ka = 0; ka < (da ? 2 : 1); ka++) {
                    int aa = ka ? a + da : a - da;
                    if (aa < 0 || aa >= KS_FOLLOW_AGES)
                        continue;
                    const struct ks_follow_ring *r = nearest(f->ring[yy][aa], (int)bucket(n_dec));
                    if (r)
                        return &r->shape[draw % r->n];
                }
        }
    return NULL;
}

int ks_follow_out_init(struct ks_follow_out *o, uint32_t groups)
{
    *o = (struct ks_follow_out){0};
    o->carry_outside = calloc((size_t)groups * KS_TIERS, sizeof *o->carry_outside);
    return o->carry_outside ? KS_OK : KS_ENOMEM;
}

void ks_follow_out_fini(struct ks_follow_out *o)
{
    free(o->batch);
    free(o->job);
    free(o->carry_outside);
    *o = (struct ks_follow_out){0};
}

// x scaled, rounded down with *carry's fraction added first, the rest carried.
static uint32_t scaled(double x, double scale, double *carry)
{
    double want = x * scale + *carry, got = floor(want);
    *carry = want - got;
    return (uint32_t)got;
}

int ks_follow_jobs(struct ks_follow_out *o, const struct ks_follow_shape *sh, double scale)
{
    uint32_t n = sh->n_batch ? scaled(sh->n_batch, scale, &o->carry_batch) : 0;
    if (n > o->cap) {
        struct ks_batch *b = realloc(o->batch, n * sizeof *b);
        if (!b)
            return KS_ENOMEM;
        o->batch = b;
        struct ks_step_job *j = realloc(o->job, n * sizeof *j);
        if (!j)
            return KS_ENOMEM;
        o->job = j;
        o->cap = n;
    }
    uint32_t first = o->next_id;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t round = i / sh->n_batch, k = i % sh->n_batch;
        const struct ks_follow_batch *x = &sh->batch[k];
        // ids stay clear of KS_NONE and of the backup's (KS_NONE - 1)
        uint32_t after = x->after == KS_NONE ? KS_NONE : (first + round * sh->n_batch + x->after) % (KS_NONE - 1);
        o->batch[i] = (struct ks_batch){.id = (first + i) % (KS_NONE - 1), .after = after, .src = x->src,
                                        .dst = x->dst, .klass = x->klass, .early = x->early, .n = x->n,
                                        .most_per_req = x->most_per_req, .group = x->group, .bytes = x->bytes};
        o->job[i] = (struct ks_step_job){.b = &o->batch[i], .bytes = x->bytes, .layer = x->layer, .start = x->start,
                                         .needed = x->needed};
    }
    o->next_id = (first + n) % (KS_NONE - 1);
    o->n = n;
    return KS_OK;
}

void ks_follow_outside(struct ks_follow_out *o, const struct ks_follow_shape *sh, double scale, uint32_t groups,
                       uint32_t (*outside)[KS_TIERS])
{
    for (uint32_t l = 0; l < groups; l++)
        for (unsigned t = 0; t < KS_TIERS; t++)
            outside[l][t] = scaled(sh->outside[l][t], scale, &o->carry_outside[l * KS_TIERS + t]);
}
