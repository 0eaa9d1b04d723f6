// selection.c - a run's sparse-attention policy (see selection.h).
//
// Invariant: a request's synthetic-attention state (its step and the cached
// selection of each computed layer) only moves forward; a computed layer's
// selection of step s is computed once and shared by the layers mapped to it.
#include "selection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accessmodel.h"
#include "attention.h"
#include "blockselect.h"
#include "dsa.h"
#include "positional.h"
#include "prefetch.h"
#include "status.h"
#include "synth.h"
#include "trace.h"

static const char *const preset_names[] = {"stable", "drifting", "noisy"};

struct ks_selection {
    const struct ks_scenario *s;
    enum ks_sparse_policy policy;
    uint32_t layers, computed; // model layers; layers with synthetic attention computed
    struct ks_attention_params ap;
    struct ks_synth *syn;      // topk, retrieval, mixed
    struct ks_trace *trace;    // trace
    struct ks_accessmodel *model; // model
    struct ks_dsa *dsa;        // dsa
    uint32_t model_layers;
    uint32_t *dist;            // trace: [n_sel] steps until the row's block is selected again (wrapping)
    uint32_t **first;          // trace: [request * layers + layer][block] first step selecting it
    uint32_t *first_n;         // trace: [request * layers + layer] blocks in first[...]
    uint32_t cap;              // selection capacity of the score-driven policies
};

struct computed {
    struct ks_attention_seq *seq;
    uint32_t step; // step of the cached selection; UINT32_MAX: none
    uint32_t n;
    uint32_t *blocks;
    float *mass;
};

struct ks_selection_req {
    struct ks_selection *sp;
    uint64_t id;
    uint32_t prompt;
    struct ks_positional rule; // the position rules (and mixed's window)
    struct ks_synth_step st; // synthetic attention at step `st.step`
    int started;
    struct computed *c;      // [computed]
    struct ks_accessmodel_stream **streams; // model: [layers], made at a layer's first draw
    struct ks_dsa_req *dsa;  // dsa
    const struct ks_trace_step *last; // trace: the record the last selection came from
    uint32_t last_nb;        // trace: the context (blocks) of the last selection
    uint32_t mode_step;      // mixed: the last step seen (UINT32_MAX: none yet)
    int topk;                // mixed: 1 while top-k is in force (it starts with the window)
};

// For each (request, layer) stream of the trace: the first step selecting
// each block, and for each row the steps until its block is selected again
// (after the stream's last step, the count wraps to the first).
static int index_reuse(struct ks_selection *sp)
{
    const struct ks_trace *t = sp->trace;
    uint32_t L = t->meta.layers;
    sp->dist = malloc((t->n_sel ? t->n_sel : 1) * sizeof *sp->dist);
    sp->first = calloc((size_t)t->n_requests * L, sizeof *sp->first);
    sp->first_n = calloc((size_t)t->n_requests * L, sizeof *sp->first_n);
    if (!sp->dist || !sp->first || !sp->first_n)
        return KS_ENOMEM;
    uint64_t *last = NULL; // [blocks] scratch
    size_t cap = 0;
    int st = KS_OK;
    for (uint32_t r = 0; st == KS_OK && r < t->n_requests; r++) {
        uint32_t S = t->req_steps[r];
        uint32_t ctx = 0; // the largest context of the request (contexts need not grow)
        for (size_t i = t->req_first[r]; i < t->req_first[r] + (size_t)S * L; i++)
            if (t->steps[i].context > ctx)
                ctx = t->steps[i].context;
        uint32_t nb = (uint32_t)ks_trace_blocks(&t->meta, ctx);
        if (nb > cap) {
            uint64_t *p = realloc(last, nb * sizeof *p);
            if (!p) {
                st = KS_ENOMEM;
                break;
            }
            last = p;
            cap = nb;
        }
        for (uint32_t l = 0; l < L; l++) {
            uint32_t *first = malloc((nb ? nb : 1) * sizeof *first);
            if (!first) {
                st = KS_ENOMEM;
                break;
            }
            sp->first[(size_t)r * L + l] = first;
            sp->first_n[(size_t)r * L + l] = nb;
            for (uint32_t b = 0; b < nb; b++) {
                first[b] = KS_SELECTION_NEVER;
                last[b] = UINT64_MAX; // here: the step of the block's next selection
            }
            for (uint32_t s = 0; s < S; s++) {
                const struct ks_trace_step *rec = ks_trace_at(t, r, s, l);
                for (uint32_t i = 0; i < rec->n; i++)
                    if (first[t->sel[rec->first + i].block] == KS_SELECTION_NEVER)
                        first[t->sel[rec->first + i].block] = s;
            }
            // backward: each row's distance to the next selection of its block
            for (uint32_t s = S; s-- > 0;) {
                const struct ks_trace_step *rec = ks_trace_at(t, r, s, l);
                for (uint32_t i = 0; i < rec->n; i++) {
                    uint64_t row = rec->first + i;
                    uint32_t b = t->sel[row].block;
                    // next selection after s: the later one seen in this backward walk, or
                    // the stream's first one after wrapping
                    sp->dist[row] = last[b] != UINT64_MAX ? (uint32_t)last[b] - s : S - s + first[b];
                    last[b] = s;
                }
            }
        }
    }
    free(last);
    return st;
}

// Loads the trace a policy replays or fits (`key` names the scenario field)
// and checks it fits the run: blocks of cache.block_size, a request at least.
static struct ks_trace *load_trace(const struct ks_scenario *s, const char *key, const char *path, char *err,
                                   size_t len)
{
    char why[1024];
    struct ks_trace *t = ks_trace_load(path, why, sizeof why);
    if (!t) {
        snprintf(err, len, "%s: %s", key, why);
        return NULL;
    }
    if (t->meta.block_size != s->cache.block_size || t->n_requests == 0) {
        if (t->n_requests == 0)
            snprintf(err, len, "%s: %s: the trace holds no request", key, path);
        else
            snprintf(err, len, "%s: %s: its block size (%u tokens) differs from cache.block_size (%u)", key, path,
                     t->meta.block_size, s->cache.block_size);
        ks_trace_free(t);
        return NULL;
    }
    return t;
}

void ks_selection_synth_params(const struct ks_scenario *s, int preset, struct ks_synth_params *p)
{
    ks_synth_preset(preset_names[preset], p);
    if (!isnan(s->sparse.topic_switch))
        p->topic_switch = s->sparse.topic_switch;
    if (!isnan(s->sparse.retrieval_prob))
        p->retrieval_prob = s->sparse.retrieval_prob;
    p->seed = s->seed;
    p->n_layers = s->model.layers;
    p->n_kv_heads = s->model.kv_heads;
    p->group = s->model.q_heads / s->model.kv_heads;
    p->head_dim = s->model.head_dim;
}

struct ks_selection *ks_selection_new(const struct ks_scenario *s, char *err, size_t len)
{
    struct ks_selection *sp = calloc(1, sizeof *sp);
    if (!sp) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    sp->s = s;
    sp->policy = s->sparse.policy;
    sp->layers = s->model.layers;
    uint32_t bs = s->cache.block_size;
    switch (sp->policy) {
    case KS_SPARSE_TOPK:
    case KS_SPARSE_RETRIEVAL:
    case KS_SPARSE_MIXED: {
        struct ks_synth_params p;
        ks_selection_synth_params(s, s->sparse.preset, &p);
        if (!(sp->syn = ks_synth_new(&p, err, len))) {
            ks_selection_free(sp);
            return NULL;
        }
        int retrieval = sp->policy == KS_SPARSE_RETRIEVAL;
        sp->ap = (struct ks_attention_params){.block_size = bs,
                                              .n_sink = retrieval ? 0 : s->sparse.sink_blocks,
                                              .n_window = retrieval ? 0 : s->sparse.window_blocks,
                                              .top_k = (s->sparse.budget_tokens + bs - 1) / bs,
                                              .score = KS_SCORE_QUEST};
        sp->computed = s->sparse.attention_layers < sp->layers ? s->sparse.attention_layers : sp->layers;
        sp->cap = sp->ap.n_sink + sp->ap.n_window + 1 + sp->ap.top_k;
        break;
    }
    case KS_SPARSE_TRACE: {
        if (!(sp->trace = load_trace(s, "sparse.file", s->sparse.file, err, len))) {
            ks_selection_free(sp);
            return NULL;
        }
        for (size_t i = 0; i < sp->trace->n_steps; i++)
            if (sp->trace->steps[i].n > sp->cap)
                sp->cap = sp->trace->steps[i].n;
        if (index_reuse(sp) != KS_OK) {
            snprintf(err, len, "out of memory indexing the trace %s", s->sparse.file);
            ks_selection_free(sp);
            return NULL;
        }
        break;
    }
    case KS_SPARSE_MODEL: {
        // the model draws block indices: they mean the trace's blocks, so its block size must be the run's
        struct ks_trace *t = load_trace(s, "sparse.fit", s->sparse.fit, err, len);
        char why[256];
        if (t && !(sp->model = ks_accessmodel_fit(t, NULL, why, sizeof why)))
            snprintf(err, len, "sparse.fit: %s: %s", s->sparse.fit, why);
        ks_trace_free(t);
        if (!sp->model) {
            ks_selection_free(sp);
            return NULL;
        }
        sp->model_layers = ks_accessmodel_layers(sp->model);
        break;
    }
    case KS_SPARSE_DSA: { // units are the cache's blocks: top-k of ceil(budget_tokens / block_size)
        struct ks_dsa_params p;
        ks_dsa_params_default(&p, s->seed, sp->layers, (s->sparse.budget_tokens + bs - 1) / bs);
        if (!(sp->dsa = ks_dsa_new(&p, err, len))) {
            ks_selection_free(sp);
            return NULL;
        }
        break;
    }
    default:
        break;
    }
    return sp;
}

void ks_selection_free(struct ks_selection *sp)
{
    if (!sp)
        return;
    ks_synth_free(sp->syn);
    for (size_t i = 0; sp->first && i < (size_t)sp->trace->n_requests * sp->trace->meta.layers; i++)
        free(sp->first[i]);
    free(sp->first);
    free(sp->first_n);
    free(sp->dist);
    ks_trace_free(sp->trace);
    ks_accessmodel_free(sp->model);
    ks_dsa_free(sp->dsa);
    free(sp);
}

int ks_selection_per_layer(const struct ks_selection *sp)
{
    return sp->policy >= KS_SPARSE_TOPK;
}

int ks_selection_ahead(const struct ks_selection *sp)
{
    switch (sp->policy) {
    case KS_SPARSE_TOPK:
    case KS_SPARSE_RETRIEVAL:
    case KS_SPARSE_MODEL:
    case KS_SPARSE_DSA:
        return 1;
    default: // the random rules and mixed draw from the GPU's rng; trace keeps its last record
        return 0;
    }
}

struct ks_selection_req *ks_selection_open(struct ks_selection *sp, uint64_t id, uint32_t prompt)
{
    struct ks_selection_req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->sp = sp;
    r->id = id;
    r->prompt = prompt;
    ks_positional_init(&r->rule, &sp->s->sparse, sp->s->cache.block_size);
    r->mode_step = UINT32_MAX;
    if (sp->model && !(r->streams = calloc(sp->layers, sizeof *r->streams))) {
        ks_selection_close(r);
        return NULL;
    }
    if (sp->dsa && !(r->dsa = ks_dsa_req_new(sp->dsa, id))) {
        ks_selection_close(r);
        return NULL;
    }
    if (sp->computed) {
        r->c = calloc(sp->computed, sizeof *r->c);
        if (!r->c) {
            ks_selection_close(r);
            return NULL;
        }
        for (uint32_t i = 0; i < sp->computed; i++) {
            r->c[i].step = UINT32_MAX;
            r->c[i].blocks = malloc(sp->cap * sizeof *r->c[i].blocks);
            r->c[i].mass = malloc(sp->cap * sizeof *r->c[i].mass);
            if (!r->c[i].blocks || !r->c[i].mass) {
                ks_selection_close(r);
                return NULL;
            }
        }
    }
    return r;
}

void ks_selection_close(struct ks_selection_req *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; r->c && i < r->sp->computed; i++) {
        ks_attention_seq_free(r->c[i].seq);
        free(r->c[i].blocks);
        free(r->c[i].mass);
    }
    free(r->c);
    for (uint32_t l = 0; r->streams && l < r->sp->layers; l++)
        ks_accessmodel_stream_free(r->streams[l]);
    free(r->streams);
    ks_dsa_req_free(r->dsa);
    ks_positional_fini(&r->rule);
    free(r);
}

// Top-k from synthetic attention for `layer` at `step` into out, *k.
static int scored(struct ks_selection_req *r, uint32_t step, uint32_t layer, uint32_t nb, uint32_t *out, float *mass,
                  uint32_t *k, char *err, size_t len)
{
    struct ks_selection *sp = r->sp;
    if (!r->started || step < r->st.step) {
        ks_synth_step_at(sp->syn, r->id, r->prompt, step, &r->st);
        r->started = 1;
    }
    while (r->st.step < step)
        ks_synth_step_next(sp->syn, &r->st);
    uint32_t ci = (uint32_t)((uint64_t)layer * sp->computed / sp->layers);
    struct computed *c = &r->c[ci];
    if (c->step != step) {
        if (!c->seq) {
            uint32_t synth_layer = (uint32_t)((uint64_t)ci * sp->layers / sp->computed);
            if (!(c->seq = ks_attention_seq_new(&sp->ap, sp->syn, r->id, r->prompt, synth_layer, err, len)))
                return KS_ENOMEM;
        }
        int st = ks_attention_seq_select(c->seq, &r->st, c->blocks, c->mass, sp->cap, &c->n);
        if (st != KS_OK) {
            snprintf(err, len, "synthetic attention, step %u layer %u: %s", step, layer, ks_status_str(st));
            return st;
        }
        c->step = step;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->blocks[i] < nb) { // the engine's context is the attention's (prompt + step + 1 tokens)
            out[n] = c->blocks[i];
            mass[n++] = c->mass[i];
        }
    *k = n;
    return KS_OK;
}

static uint32_t replay(struct ks_selection_req *r, uint32_t step, uint32_t layer, uint32_t nb, uint32_t *out, float *mass)
{
    const struct ks_trace *t = r->sp->trace;
    uint32_t req = (uint32_t)(r->id % t->n_requests);
    const struct ks_trace_step *s = ks_trace_at(t, req, step % t->req_steps[req], layer % t->meta.layers);
    r->last = s;
    r->last_nb = nb;
    uint32_t k = 0;
    for (uint32_t i = 0; s && i < s->n; i++)
        if (t->sel[s->first + i].block < nb) {
            out[k] = t->sel[s->first + i].block;
            mass[k++] = t->sel[s->first + i].mass;
        }
    return k;
}

int ks_selection_next_uses(const struct ks_selection_req *r, uint32_t *dist)
{
    const struct ks_selection *sp = r->sp;
    if (sp->policy != KS_SPARSE_TRACE)
        return -1;
    const struct ks_trace *t = sp->trace;
    uint32_t k = 0;
    for (uint32_t i = 0; r->last && i < r->last->n; i++)
        if (t->sel[r->last->first + i].block < r->last_nb) // as ks_selection_get filtered them
            dist[k++] = sp->dist[r->last->first + i];
    return 0;
}

double ks_selection_kernel_time(const struct ks_selection_req *r)
{
    if (r->sp->policy != KS_SPARSE_TRACE || !r->last || !(r->last->kernel_time >= 0))
        return NAN;
    return r->last->kernel_time;
}

int ks_selection_first_use(const struct ks_selection_req *r, uint32_t layer, uint32_t block, uint32_t *step)
{
    const struct ks_selection *sp = r->sp;
    if (sp->policy != KS_SPARSE_TRACE)
        return -1;
    const struct ks_trace *t = sp->trace;
    size_t i = (size_t)(r->id % t->n_requests) * t->meta.layers + layer % t->meta.layers;
    *step = block < sp->first_n[i] ? sp->first[i][block] : KS_SELECTION_NEVER;
    return 0;
}

KS_PREFETCH_FN void ks_selection_warm(const struct ks_selection_req *r, uint32_t layer, int stage)
{
    if (r->sp->policy == KS_SPARSE_MODEL && r->streams[layer])
        ks_accessmodel_stream_warm(r->streams[layer], stage);
}

KS_PREFETCH_FN void ks_selection_warm_counts(const struct ks_selection_req *r, int stage)
{
    if (stage == 0) {
        __builtin_prefetch(r);
        __builtin_prefetch(&r->streams);
    } else if (r->sp->policy == KS_SPARSE_MODEL && r->streams) {
        ks_prefetch_lines(r->streams, r->sp->layers * sizeof *r->streams);
    }
}

// The seed of request r's access-model stream of `layer`.
static uint64_t model_seed(const struct ks_selection_req *r, uint32_t layer)
{
    return r->sp->s->seed ^ (r->id * 0x9e3779b97f4a7c15ULL) ^ layer;
}

int ks_selection_count(const struct ks_selection_req *r, uint32_t layer, uint32_t ahead, uint32_t nb, uint32_t *k)
{
    const struct ks_selection *sp = r->sp;
    if (sp->policy != KS_SPARSE_MODEL || !ks_accessmodel_selects_last(sp->model, layer % sp->model_layers, nb))
        return 0;
    // a stream is made at its first draw: the counts of the steps before it need none
    const struct ks_accessmodel_stream *st = r->streams[layer];
    uint32_t step = (st ? ks_accessmodel_stream_step(st) : 0) + ahead;
    *k = ks_accessmodel_count(sp->model, layer % sp->model_layers, model_seed(r, layer), step, nb);
    return 1;
}

int ks_selection_get(struct ks_selection_req *r, uint32_t step, uint32_t layer, uint32_t nb, struct ks_rng *rng,
                     uint32_t *out, float *mass, uint32_t *k, char *err, size_t len)
{
    struct ks_selection *sp = r->sp;
    *k = 0;
    switch (sp->policy) {
    case KS_SPARSE_TOPK:
    case KS_SPARSE_RETRIEVAL:
        return scored(r, step, layer, nb, out, mass, k, err, len);
    case KS_SPARSE_MIXED: {
        if (step != r->mode_step) { // a new step: switch or not
            if (r->mode_step != UINT32_MAX && ks_rng_unit(rng) < sp->s->sparse.switch_prob)
                r->topk = !r->topk;
            r->mode_step = step;
        }
        if (r->topk)
            return scored(r, step, layer, nb, out, mass, k, err, len);
        struct ks_scenario_sparse w = sp->s->sparse; // the window rule, for this call
        w.policy = KS_SPARSE_WINDOW;
        r->rule.sp = &w;
        *k = ks_positional_select(&r->rule, nb, rng, out, mass);
        r->rule.sp = &sp->s->sparse;
        return KS_OK;
    }
    case KS_SPARSE_TRACE:
        *k = replay(r, step, layer, nb, out, mass);
        return KS_OK;
    case KS_SPARSE_MODEL: {
        // one stream per layer, one draw per step (the engine asks each layer once a step, in order)
        struct ks_accessmodel_stream **st = &r->streams[layer];
        if (!*st && !(*st = ks_accessmodel_stream_new(sp->model, layer % sp->model_layers, model_seed(r, layer)))) {
            snprintf(err, len, "access model: out of memory");
            return KS_ENOMEM;
        }
        // the caller's buffers hold nb blocks; the model writes at most nb (distinct blocks)
        uint32_t cap = ks_accessmodel_max_selected(sp->model, layer % sp->model_layers, nb);
        int n = ks_accessmodel_next(sp->model, *st, nb, out, mass, cap);
        if (n < 0) {
            snprintf(err, len, "access model, step %u layer %u: %s", step, layer, ks_status_str(n));
            return n;
        }
        *k = (uint32_t)n;
        return KS_OK;
    }
    case KS_SPARSE_DSA: {
        int st = ks_dsa_select(r->dsa, layer, step, nb, out, mass, k);
        if (st != KS_OK)
            snprintf(err, len, "dsa model, step %u layer %u: %s", step, layer, ks_status_str(st));
        return st;
    }
    default:
        *k = ks_positional_select(&r->rule, nb, rng, out, mass);
        return KS_OK;
    }
}
