// runresult.c - what one run measured (see runresult.h).
#include "runresult.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ks_run_result_init(struct ks_run_result *r)
{
    memset(r, 0, sizeof *r);
    struct ks_hist **h[] = {&r->ttft, &r->itl, &r->tpot, &r->e2el};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
        if (!(*h[i] = malloc(sizeof **h[i]))) {
            ks_run_result_fini(r);
            return KS_ENOMEM;
        }
        ks_hist_init(*h[i]);
    }
    return KS_OK;
}

void ks_run_result_fini(struct ks_run_result *r)
{
    free(r->ttft);
    free(r->itl);
    free(r->tpot);
    free(r->e2el);
    free(r->rec);
    free(r->samples);
    free(r->tiers);
    free(r->links);
    free(r->link_samples);
    memset(r, 0, sizeof *r);
}

void ks_run_result_scale(struct ks_run_result *r, uint32_t f)
{
    uint64_t *count[] = {&r->arrived, &r->admitted, &r->finished, &r->tokens, &r->steps, &r->unplanned,
                         &r->outside_reads, &r->prompt_tokens, &r->good, &r->table_rebuilds, &r->steps_followed, &r->kv_sent,
                         &r->copy_bytes, &r->sat_out, &r->retracted};
    double *sum[] = {&r->busy, &r->stall, &r->host_time, &r->prefill_time, &r->copy_seconds, &r->backup_bytes,
                     &r->weight_read_bytes, &r->index_read_bytes, &r->decode_flops, &r->compute_bound_time,
                     &r->comm_time, &r->draft_time, &r->sync_time};
    for (size_t i = 0; i < sizeof count / sizeof count[0]; i++)
        *count[i] *= f;
    for (size_t i = 0; i < sizeof sum / sizeof sum[0]; i++)
        *sum[i] *= f;
    ks_cache_stats_scale(&r->cache, f);
}

void ks_run_result_add_request(struct ks_run_result *r, const struct ks_request_record *rec)
{
    if (r->n_rec == r->cap_rec) {
        size_t cap = r->cap_rec ? 2 * r->cap_rec : 1024;
        struct ks_request_record *p = realloc(r->rec, cap * sizeof *p);
        if (!p)
            return;
        r->rec = p;
        r->cap_rec = cap;
    }
    r->rec[r->n_rec++] = *rec;
}

double ks_run_horizon(const struct ks_scenario *s, int *grows)
{
    *grows = s->workload.requests > 0;
    return *grows ? fmin(s->duration, KS_RUN_FIRST_HORIZON) : s->duration;
}

void ks_run_result_thin_steps(struct ks_run_result *r)
{
    double every = 2 * r->sample_every;
    r->sample_every = every;
    uint32_t gpus = 0;
    for (size_t i = 0; i < r->n_samples; i++)
        if (r->samples[i].gpu >= gpus)
            gpus = r->samples[i].gpu + 1;
    double *last = malloc((gpus ? gpus : 1) * sizeof *last); // each GPU's last interval kept
    if (!last)
        return;
    for (uint32_t g = 0; g < gpus; g++)
        last[g] = -INFINITY;
    size_t kept = 0;
    for (size_t i = 0; i < r->n_samples; i++) { // in time order: the first of each interval stays
        const struct ks_step_record *x = &r->samples[i];
        double slot = floor(x->t / every);
        if (slot > last[x->gpu]) {
            last[x->gpu] = slot;
            r->samples[kept++] = *x;
        }
    }
    r->n_samples = kept;
    free(last);
}

struct ks_step_record *ks_run_result_add_step(struct ks_run_result *r, const struct ks_cache *c)
{
    if (r->n_samples == r->cap_samples) {
        size_t cap = r->cap_samples ? 2 * r->cap_samples : 4096;
        struct ks_step_record *p = realloc(r->samples, cap * sizeof *p);
        if (!p)
            return NULL;
        r->samples = p;
        r->cap_samples = cap;
    }
    const struct ks_cache_stats *cs = ks_cache_stats(c);
    struct ks_step_record *x = &r->samples[r->n_samples++];
    *x = (struct ks_step_record){0};
    for (unsigned t = 0; t < KS_TIERS; t++) {
        struct ks_tier_view v;
        ks_cache_tier_view(c, t, &v);
        x->occupancy[t] = v.used;
        x->found[t] = cs->found[t];
        for (unsigned u = 0; u < KS_TIERS; u++) {
            if (u < t)
                x->bytes_up += cs->mig_bytes[t][u];
            else if (u > t)
                x->bytes_down += cs->mig_bytes[t][u];
        }
    }
    return x;
}

void ks_run_result_add_tiers(struct ks_run_result *r, const struct ks_cache *c, uint32_t gpu,
                             const uint64_t block_bytes[KS_TIERS], int stats)
{
    for (unsigned t = 0; r->tiers && t < KS_TIERS; t++) {
        struct ks_tier_view v;
        ks_cache_tier_view(c, t, &v);
        r->tiers[r->n_tiers++] = (struct ks_tier_record){
            .gpu = gpu, .tier = t, .capacity = v.cap, .used = v.used, .peak = v.peak,
            .block_bytes = block_bytes[t], .mig_in = v.mig_in, .mig_out = v.mig_out,
            .alloc_fails = v.alloc_fails};
    }
    if (stats)
        ks_cache_stats_add(&r->cache, ks_cache_stats(c));
}
