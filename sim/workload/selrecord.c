// selrecord.c - access traces of a selection model as a run's selection
// module returns them (selrecord.h).
//
// Invariant: records reach the writer in (request, step, layer) order, one at
// a time, so memory stays at one selection (ceil((prompt + steps) /
// block_size) blocks of capacity) whatever the trace's length.
#include "selrecord.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "rng.h"
#include "selection.h"
#include "status.h"
#include "trace.h"
#include "workload.h"

int ks_selrecord_supports(const struct ks_scenario *sc)
{
    return sc->sparse.policy == KS_SPARSE_DSA;
}

struct rec {
    const struct ks_selrecord_params *p;
    struct ks_selection *sel;
    struct ks_trace_writer *w;
    uint32_t *blocks; // [cap]
    float *mass;      // [cap]
    uint32_t cap;
    uint64_t records, selected;
    char werr[512];   // the writer's failures
};

// The trace's shape fields: MLA caches one latent (and its rope part) per
// token, which the trace says as one KV head of that width.
static void meta_of(const struct ks_scenario *sc, struct ks_trace_meta *m)
{
    static const char *const dtypes[] = {"fp16", "bf16", "fp8", "int8", "fp32"}; // enum ks_dtype's order
    const struct ks_scenario_model *mo = &sc->model;
    int mla = mo->attention == KS_ATTENTION_MLA;
    *m = (struct ks_trace_meta){.block_size = sc->cache.block_size, .layers = mo->layers,
                                .kv_heads = mla ? 1 : mo->kv_heads, .q_heads = mo->q_heads,
                                .head_dim = mla ? mo->kv_lora_rank + mo->qk_rope_dim : mo->head_dim};
    snprintf(m->dtype, sizeof m->dtype, "%s",
             (unsigned)mo->dtype < sizeof dtypes / sizeof dtypes[0] ? dtypes[mo->dtype] : "unknown");
    snprintf(m->source, sizeof m->source,
             "kvstrata trace record: sparse.policy dsa (budget_tokens %u, seed %llu), no kernels run",
             sc->sparse.budget_tokens, (unsigned long long)sc->seed);
}

// Request `req` of the trace (workload id `id`, `prompt` tokens): every
// step's layers, written as they come.
static int record_request(struct rec *r, uint32_t req, uint64_t id, uint32_t prompt, char *err, size_t len)
{
    const struct ks_scenario *sc = r->p->sc;
    uint32_t bs = sc->cache.block_size, layers = sc->model.layers;
    uint32_t need = (uint32_t)(((uint64_t)prompt + r->p->steps + bs - 1) / bs); // blocks at the last step
    if (need > r->cap) {
        uint32_t *b = realloc(r->blocks, (size_t)need * sizeof *b);
        if (b)
            r->blocks = b;
        float *m = b ? realloc(r->mass, (size_t)need * sizeof *m) : NULL;
        if (m)
            r->mass = m;
        if (!b || !m)
            return KS_ENOMEM;
        r->cap = need;
    }
    struct ks_selection_req *sr = ks_selection_open(r->sel, id, prompt);
    if (!sr)
        return KS_ENOMEM;
    struct ks_rng rng; // the random position rules' only; the model draws its own
    ks_rng_seed(&rng, sc->seed);
    int st = KS_OK;
    for (uint32_t s = 0; st == KS_OK && s < r->p->steps; s++) {
        uint32_t ctx = prompt + s + 1; // the step's own token included, as in a run
        uint32_t nb = (uint32_t)(((uint64_t)ctx + bs - 1) / bs);
        for (uint32_t l = 0; st == KS_OK && l < layers; l++) {
            uint32_t k = 0;
            st = ks_selection_get(sr, s, l, nb, &rng, r->blocks, r->mass, &k, err, len);
            if (st != KS_OK)
                break;
            st = ks_trace_writer_add(r->w, req, s, l, ctx, r->blocks, r->mass, k, -1.0);
            if (st != KS_OK) {
                snprintf(err, len, "writing the trace: %.400s", r->werr);
                break;
            }
            r->records++;
            r->selected += k;
        }
        if (st == KS_OK && r->p->stop && r->p->stop(r->p->arg))
            st = KS_ESTATE;
    }
    ks_selection_close(sr);
    return st;
}

// The requests, one by one, into the open trace r->w.
static int record_all(struct rec *r, struct ks_workload *wl, double t0, char *err, size_t len)
{
    const struct ks_selrecord_params *p = r->p;
    uint32_t max_context = p->sc->model.max_context;
    for (uint32_t i = 0; i < p->requests; i++) {
        struct ks_request_spec spec;
        if (ks_workload_next(wl, &spec) != 1) {
            snprintf(err, len, "the workload gave %u requests, not %u", i, p->requests);
            return KS_EINVAL;
        }
        uint32_t prompt = spec.prompt_tokens; // as recorder.c clamps it
        if ((uint64_t)prompt + p->steps > max_context)
            prompt = max_context > p->steps ? max_context - p->steps : 1;
        char why[512] = "";
        int st = record_request(r, i, spec.id, prompt, why, sizeof why);
        if (st == KS_ESTATE) {
            snprintf(err, len, "interrupted in request %u of %u", i + 1, p->requests);
            return st;
        }
        if (st != KS_OK) {
            snprintf(err, len, "request %u (%u prompt tokens): %s", i, prompt,
                     st == KS_ENOMEM && !why[0] ? "out of memory" : why);
            return st;
        }
        if (p->progress)
            p->progress(p->arg, i + 1, p->requests, ks_clock_mono() - t0);
    }
    return KS_OK;
}

int ks_selrecord_run(const struct ks_selrecord_params *p, struct ks_recorder_stats *out, char *err, size_t len)
{
    if (len > 0)
        err[0] = '\0';
    if (!ks_selrecord_supports(p->sc)) {
        snprintf(err, len, "sparse.policy: only dsa is recorded from the selection module");
        return KS_EINVAL;
    }
    struct rec r = {.p = p};
    struct ks_trace_meta meta;
    meta_of(p->sc, &meta);
    double t0 = ks_clock_mono();
    struct ks_workload *wl = NULL;
    int st = KS_OK;
    if (!(r.sel = ks_selection_new(p->sc, err, len)) || !(wl = ks_workload_new(p->sc, err, len)))
        st = KS_EINVAL;
    else if (!(r.w = ks_trace_writer_open(p->path, &meta, r.werr, sizeof r.werr))) {
        snprintf(err, len, "%s", r.werr);
        st = KS_EIO;
    }
    if (st == KS_OK)
        st = record_all(&r, wl, t0, err, len);
    if (st == KS_OK) {
        if ((st = ks_trace_writer_commit(r.w)) != KS_OK)
            snprintf(err, len, "%s", r.werr);
    } else {
        ks_trace_writer_abort(r.w);
        if (!err[0])
            snprintf(err, len, "%s", ks_status_str(st));
    }
    double wall = ks_clock_mono() - t0;
    ks_workload_free(wl);
    ks_selection_free(r.sel);
    free(r.blocks);
    free(r.mass);
    if (st != KS_OK)
        return st;
    *out = (struct ks_recorder_stats){.layers = meta.layers, .records = r.records, .selected = r.selected,
                                      .kernel_seconds = 0, .wall_s = wall};
    snprintf(out->source, sizeof out->source, "%s", meta.source);
    return KS_OK;
}
