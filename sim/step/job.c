// job.c - a decode step's migration batches as its lanes see them (see job.h).
#include "job.h"

uint32_t ks_step_job_after(const struct ks_step_job *jobs, uint32_t n, uint32_t i)
{
    uint32_t after = jobs[i].b->after, back = jobs[i].b->id - after, part = jobs[i].part;
    if (after == KS_NONE)
        return KS_NONE;
    uint32_t k = back <= i ? i - back : n;
    if (k < n && jobs[k].b->id == after && jobs[k].part == part)
        return k;
    for (k = 0; k < n; k++)
        if (jobs[k].b->id == after && jobs[k].part == part)
            return k;
    return KS_NONE;
}

// Whether the batch job i waits for is still on its way.
static int after_unlanded(const struct ks_step_job *jobs, uint32_t n, uint32_t i)
{
    uint32_t k = ks_step_job_after(jobs, n, i);
    return k != KS_NONE && !jobs[k].landed;
}

int ks_step_next_job(const struct ks_step_job *jobs, uint32_t n, uint32_t from, uint32_t layer_now)
{
    // NOTE: one pass. A needed job carries misses (ks_step_job_of), the most
    // urgent class, so the first one that may start is the answer whatever
    // the bulk; another job is the answer only if the bulk, counted over the
    // whole list, leaves it a lane.
    uint32_t bulk = 0; // lanes holding a job no layer waits for
    int best = -1;
    for (uint32_t i = from; i < n; i++) { // landed jobs count for nothing: those before `from` are
        const struct ks_step_job *j = &jobs[i];
        if (j->running || j->landed) {
            bulk += !j->landed && !j->needed; // running
            continue;
        }
        if ((j->needed && layer_now != KS_NONE && j->start > layer_now) ||
            (!j->needed && (bulk >= KS_STEP_LANES - 1 || (best >= 0 && j->b->klass >= jobs[best].b->klass))) ||
            (j->b->after != KS_NONE && after_unlanded(jobs, n, i)))
            continue;
        if (j->needed)
            return (int)i;
        best = (int)i;
    }
    return bulk >= KS_STEP_LANES - 1 ? -1 : best;
}

int ks_step_needed_unlanded(const struct ks_step_job *jobs, uint32_t n, uint32_t layer)
{
    for (uint32_t i = 0; i < n; i++)
        if (jobs[i].needed && !jobs[i].landed && jobs[i].layer <= layer)
            return 1;
    return 0;
}

uint32_t ks_step_ready_layers(const struct ks_step_job *jobs, uint32_t n, uint32_t layer, uint32_t layers)
{
    // one pass: the run ends at the first layer an unlanded needed job holds
    // up (at least one layer, the caller's), else at the last layer
    uint32_t first = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (jobs[i].needed && !jobs[i].landed && jobs[i].layer < first)
            first = jobs[i].layer;
    if (first == UINT32_MAX)
        return layers - layer;
    if (layer + 1 >= layers || first <= layer + 1)
        return 1;
    return (first < layers ? first : layers) - layer;
}

int ks_step_all_landed(const struct ks_step_job *jobs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!jobs[i].landed)
            return 0;
    return 1;
}

struct ks_step_job ks_step_job_of(struct ks_batch *b)
{
    int needed = b->klass == KS_CLASS_MISS;
    uint32_t layer = needed ? b->group : 0;
    return (struct ks_step_job){.b = b, .bytes = b->bytes, .needed = (uint8_t)needed, .layer = layer,
                                .start = b->early && layer > 0 ? layer - 1 : layer};
}

void ks_step_job_split(const struct ks_step_job *jobs, uint32_t n, uint32_t parts, struct ks_step_job *out)
{
    for (uint32_t i = 0, run; i < n; i += run) {
        for (run = 1; i + run < n && jobs[i + run].b->group == jobs[i].b->group; run++)
            ;
        for (uint32_t p = 0; p < parts; p++)
            for (uint32_t k = i; k < i + run; k++) {
                const struct ks_step_job *j = &jobs[k];
                struct ks_step_job *o = out++;
                uint64_t share = j->bytes / parts;
                *o = *j;
                o->part = (uint16_t)p;
                o->bytes = p + 1 < parts ? share : j->bytes - share * (parts - 1);
                if (j->needed) {
                    o->layer = j->layer * parts + p;
                    o->start = j->b->early && o->layer > 0 ? o->layer - 1 : o->layer;
                }
            }
    }
}
