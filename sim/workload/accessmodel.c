// accessmodel.c - fitting the access model to a trace, and its readers
// (see accessmodel.h; generation is accessstream.c).
//
// Fitting reads each (request, layer) stream once with per-block arrays
// (last selected step + 1, consecutive-selection age), exactly as
// tracestats.c defines reuse distance, so that the fitted stay and gap
// shares are the decomposition of the trace's reuse fractions.
#include "accessmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accessmodel_impl.h"
#include "status.h"

void ks_accessmodel_params_default(struct ks_accessmodel_params *p)
{
    p->always = 0.95;
    p->max_edge = 64;
    p->horizon = 512;
    p->near = 16;
}

// ---- fitting -------------------------------------------------------------------

struct fit_work {
    size_t max_blocks, max_sel;
    uint32_t *last, *age;      // [max_blocks] step + 1 of the last selection (0: never); consecutive steps
    uint32_t *cur;             // [max_blocks] step + 1 when in the current record
    unsigned char *mark;       // [max_blocks] in the record (edge pass)
    uint64_t *edge_num[2], *edge_den[2]; // [max_edge] sinks by index, window by offset from the end
    uint64_t *count;           // [max_blocks + 1] unsaturated records by free count
    double *mass_sum[3];       // sink [max_edge], window [max_edge], free rank [max_sel]
    uint64_t *mass_n[3];
    float *fm;                 // [max_sel] one record's free masses
};

static void fit_work_free(struct fit_work *w)
{
    free(w->last);
    free(w->age);
    free(w->cur);
    free(w->mark);
    for (int i = 0; i < 2; i++) {
        free(w->edge_num[i]);
        free(w->edge_den[i]);
    }
    free(w->count);
    for (int i = 0; i < 3; i++) {
        free(w->mass_sum[i]);
        free(w->mass_n[i]);
    }
    free(w->fm);
}

static int fit_work_init(struct fit_work *w, size_t max_blocks, size_t max_sel, uint32_t max_edge)
{
    memset(w, 0, sizeof *w);
    w->max_blocks = max_blocks = max_blocks ? max_blocks : 1;
    w->max_sel = max_sel = max_sel ? max_sel : 1;
    w->last = malloc(max_blocks * sizeof *w->last);
    w->age = malloc(max_blocks * sizeof *w->age);
    w->cur = malloc(max_blocks * sizeof *w->cur);
    w->mark = calloc(max_blocks, 1);
    int ok = w->last && w->age && w->cur && w->mark;
    for (int i = 0; i < 2; i++) {
        w->edge_num[i] = malloc(max_edge * sizeof *w->edge_num[i]);
        w->edge_den[i] = malloc(max_edge * sizeof *w->edge_den[i]);
        ok = ok && w->edge_num[i] && w->edge_den[i];
    }
    w->count = malloc((max_blocks + 1) * sizeof *w->count);
    size_t n_mass[3] = {max_edge, max_edge, max_sel};
    for (int i = 0; i < 3; i++) {
        w->mass_sum[i] = malloc(n_mass[i] * sizeof *w->mass_sum[i]);
        w->mass_n[i] = malloc(n_mass[i] * sizeof *w->mass_n[i]);
        ok = ok && w->mass_sum[i] && w->mass_n[i];
    }
    w->fm = malloc(max_sel * sizeof *w->fm);
    if (!ok || !w->count || !w->fm) {
        fit_work_free(w);
        return KS_ENOMEM;
    }
    return KS_OK;
}

static int by_float_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

// Counts outwards from each edge while a position is selected in more
// than p->always of the layer's records that have it.
static void fit_edges(const struct ks_trace *t, uint32_t l, const struct ks_accessmodel_params *p, struct fit_work *w,
                      struct ks_accessmodel_layer *ml)
{
    for (int e = 0; e < 2; e++) {
        memset(w->edge_num[e], 0, p->max_edge * sizeof *w->edge_num[e]);
        memset(w->edge_den[e], 0, p->max_edge * sizeof *w->edge_den[e]);
    }
    for (size_t i = l; i < t->n_steps; i += t->meta.layers) {
        const struct ks_trace_step *rec = &t->steps[i];
        const struct ks_trace_sel *sel = t->sel + rec->first;
        size_t nb = ks_trace_blocks(&t->meta, rec->context), reach = nb < p->max_edge ? nb : p->max_edge;
        for (uint32_t j = 0; j < rec->n; j++)
            w->mark[sel[j].block] = 1;
        for (size_t j = 0; j < reach; j++) {
            w->edge_den[0][j]++;
            w->edge_num[0][j] += w->mark[j];
            w->edge_den[1][j]++;
            w->edge_num[1][j] += w->mark[nb - 1 - j];
        }
        for (uint32_t j = 0; j < rec->n; j++)
            w->mark[sel[j].block] = 0;
    }
    uint32_t n[2] = {0, 0};
    for (int e = 0; e < 2; e++)
        while (n[e] < p->max_edge && w->edge_den[e][n[e]] &&
               (double)w->edge_num[e][n[e]] > p->always * (double)w->edge_den[e][n[e]])
            n[e]++;
    ml->n_sink = n[0];
    ml->n_window = n[1];
}

struct fit_acc {
    uint64_t trials[KS_ACCESSMODEL_AGES], stays[KS_ACCESSMODEL_AGES];
    uint64_t gap[KS_ACCESSMODEL_GAPS], far, adjacent, near, entering, ret_adjacent;
    uint64_t class_gap[KS_ACCESSMODEL_GAPS][KS_ACCESSMODEL_GAPS]; // by step class, then gap bucket
    uint64_t class_entering[KS_ACCESSMODEL_GAPS];
    uint32_t max_step;
};

// Is block x (of a context of nb) in the previous or the current selection?
static int in_either(const struct fit_work *w, int64_t x, size_t nb, uint32_t step)
{
    return x >= 0 && (size_t)x < nb && (w->cur[x] == step + 1 || (step > 0 && w->last[x] == step));
}

static void fit_stream(const struct ks_trace *t, uint32_t r, uint32_t l, const struct ks_accessmodel_params *p,
                       struct fit_work *w, const struct ks_accessmodel_layer *ml, struct fit_acc *a)
{
    const uint32_t L = t->meta.layers, T = t->req_steps[r];
    memset(w->last, 0, w->max_blocks * sizeof *w->last);
    memset(w->age, 0, w->max_blocks * sizeof *w->age);
    memset(w->cur, 0, w->max_blocks * sizeof *w->cur);
    if (T > 0 && T - 1 > a->max_step)
        a->max_step = T - 1;
    const struct ks_trace_step *prev = NULL;
    for (uint32_t step = 0; step < T; step++) {
        const struct ks_trace_step *rec = &t->steps[t->req_first[r] + (size_t)step * L + l];
        const struct ks_trace_sel *sel = t->sel + rec->first;
        size_t nb = ks_trace_blocks(&t->meta, rec->context);
        uint32_t fs, fe, m = 0, nf = 0;
        free_range(ml, (uint32_t)nb, &fs, &fe);
        for (uint32_t i = 0; i < rec->n; i++) {
            uint32_t b = sel[i].block;
            w->cur[b] = step + 1;
            m += b >= fs && b < fe;
        }
        if (m < fe - fs)
            w->count[m]++;
        if (prev) // stays: last[] and age[] still describe the previous step
            for (uint32_t i = 0; i < prev->n; i++) {
                uint32_t b = t->sel[prev->first + i].block;
                if (b < fs || b >= fe)
                    continue;
                unsigned k = log_bucket(w->age[b], KS_ACCESSMODEL_AGES);
                a->trials[k]++;
                a->stays[k] += w->cur[b] == step + 1;
            }
        for (uint32_t i = 0; i < rec->n; i++) {
            uint32_t b = sel[i].block;
            float mass = sel[i].mass;
            if (b < fs) {
                w->mass_sum[0][b] += mass;
                w->mass_n[0][b]++;
                continue;
            }
            if (b >= fe) {
                w->mass_sum[1][nb - 1 - b] += mass;
                w->mass_n[1][nb - 1 - b]++;
                continue;
            }
            w->fm[nf++] = mass;
            if (step > 0 && w->last[b] == step)
                continue; // stayed
            unsigned c = log_bucket(step, KS_ACCESSMODEL_GAPS);
            a->entering++;
            a->class_entering[c]++;
            uint64_t d = w->last[b] ? step + 1 - w->last[b] : UINT64_MAX;
            int adjacent = in_either(w, (int64_t)b - 1, nb, step) || in_either(w, (int64_t)b + 1, nb, step);
            if (d <= p->horizon) {
                a->gap[log_bucket(d, KS_ACCESSMODEL_GAPS)]++;
                a->class_gap[c][log_bucket(d, KS_ACCESSMODEL_GAPS)]++;
                a->ret_adjacent += adjacent;
                continue;
            }
            a->far++;
            if (adjacent) {
                a->adjacent++;
                continue;
            }
            for (uint32_t o = 2; o <= p->near; o++)
                if (in_either(w, (int64_t)b - o, nb, step) || in_either(w, (int64_t)b + o, nb, step)) {
                    a->near++;
                    break;
                }
        }
        qsort(w->fm, nf, sizeof *w->fm, by_float_desc);
        for (uint32_t i = 0; i < nf; i++) {
            w->mass_sum[2][i] += w->fm[i];
            w->mass_n[2][i]++;
        }
        for (uint32_t i = 0; i < rec->n; i++) {
            uint32_t b = sel[i].block;
            w->age[b] = step > 0 && w->last[b] == step ? w->age[b] + 1 : 1;
            w->last[b] = step + 1;
        }
        prev = rec;
    }
}

static float *mean_profile(const double *sum, const uint64_t *n, uint32_t len)
{
    float *v = malloc((len ? len : 1) * sizeof *v);
    if (v)
        for (uint32_t i = 0; i < len; i++)
            v[i] = n[i] ? (float)(sum[i] / (double)n[i]) : 0.0f;
    return v;
}

// The count's quantile search starts at a table of 2^bits buckets of the
// uniform (at least 4 a count, at most 2^16): bucket b holds the first count
// m with cdf[m] > b / 2^bits, and KS_ACCESSMODEL_GUIDE_ONLY where that count is the answer
// for every uniform of the bucket (cdf[m] >= (b + 1) / 2^bits). Every bound
// is a dyadic fraction, exact in a double, so the search (accessstream.c)
// answers as a scan of the whole cdf does; a count's buckets outnumber the
// counts four times, so at most a quarter of the uniforms read the cdf.
static int make_guide(struct ks_accessmodel_layer *ml)
{
    uint32_t bits = 2;
    while (bits < 16 && (UINT32_C(1) << bits) < 4 * ((uint64_t)ml->max_free + 1))
        bits++;
    uint32_t n = UINT32_C(1) << bits;
    if (!(ml->count_guide = malloc(n * sizeof *ml->count_guide)))
        return KS_ENOMEM;
    ml->guide_bits = bits;
    uint32_t m = 0;
    for (uint32_t b = 0; b < n; b++) {
        double lo = (double)b / n, hi = (double)(b + 1) / n; // exact: n is a power of two
        while (!(ml->count_cdf[m] > lo)) // stops at max_free: cdf[max_free] is 1
            m++;
        ml->count_guide[b] = m | (ml->count_cdf[m] >= hi ? KS_ACCESSMODEL_GUIDE_ONLY : 0);
    }
    return KS_OK;
}

static int fit_layer(const struct ks_trace *t, uint32_t l, const struct ks_accessmodel_params *p, struct fit_work *w,
                     struct ks_accessmodel_layer *ml)
{
    fit_edges(t, l, p, w, ml);
    memset(w->count, 0, (w->max_blocks + 1) * sizeof *w->count);
    size_t n_mass[3] = {p->max_edge, p->max_edge, w->max_sel};
    for (int i = 0; i < 3; i++) {
        memset(w->mass_sum[i], 0, n_mass[i] * sizeof *w->mass_sum[i]);
        memset(w->mass_n[i], 0, n_mass[i] * sizeof *w->mass_n[i]);
    }
    struct fit_acc a;
    memset(&a, 0, sizeof a);
    for (uint32_t r = 0; r < t->n_requests; r++)
        fit_stream(t, r, l, p, w, ml, &a);

    uint64_t trials = 0, stays = 0;
    for (int k = 0; k < KS_ACCESSMODEL_AGES; k++) {
        trials += a.trials[k];
        stays += a.stays[k];
    }
    double overall = trials ? (double)stays / (double)trials : 0.0;
    for (int k = 0; k < KS_ACCESSMODEL_AGES; k++) {
        ml->stay_trials[k] = a.trials[k];
        ml->stay[k] = a.trials[k] ? (double)a.stays[k] / (double)a.trials[k] : overall;
    }
    // NOTE: a layer without entering blocks gets far = 1, so that a
    // generated step that must fill still has a way to.
    for (int k = 0; k < KS_ACCESSMODEL_GAPS; k++)
        ml->gap[k] = a.entering ? (double)a.gap[k] / (double)a.entering : 0.0;
    ml->far = a.entering ? (double)a.far / (double)a.entering : 1.0;
    ml->far_adjacent = a.far ? (double)a.adjacent / (double)a.far : 0.0;
    ml->return_adjacent = a.entering > a.far ? (double)a.ret_adjacent / (double)(a.entering - a.far) : 0.0;
    ml->far_near = a.far ? (double)a.near / (double)a.far : 0.0;
    // by step class: early steps cannot return from far back, so their
    // shares differ; a class without entering blocks takes the pooled shares
    ml->n_classes = log_bucket(a.max_step, KS_ACCESSMODEL_GAPS) + 1;
    ml->class_gap = malloc((size_t)ml->n_classes * KS_ACCESSMODEL_GAPS * sizeof *ml->class_gap);
    if (!ml->class_gap)
        return KS_ENOMEM;
    for (uint32_t c = 0; c < ml->n_classes; c++)
        for (int k = 0; k < KS_ACCESSMODEL_GAPS; k++)
            ml->class_gap[(size_t)c * KS_ACCESSMODEL_GAPS + k] =
                a.class_entering[c] ? (double)a.class_gap[c][k] / (double)a.class_entering[c] : ml->gap[k];

    uint64_t unsat = 0;
    ml->max_free = 0;
    for (size_t m = 0; m <= w->max_blocks; m++)
        if (w->count[m]) {
            unsat += w->count[m];
            ml->max_free = (uint32_t)m;
        }
    if (unsat) {
        ml->count_cdf = malloc(((size_t)ml->max_free + 1) * sizeof *ml->count_cdf);
        if (!ml->count_cdf)
            return KS_ENOMEM;
        uint64_t acc = 0;
        for (uint32_t m = 0; m <= ml->max_free; m++) {
            acc += w->count[m];
            ml->count_cdf[m] = (double)acc / (double)unsat;
        }
        ml->count_cdf[ml->max_free] = 1.0; // exact, whatever the rounding
        if (make_guide(ml) != KS_OK)
            return KS_ENOMEM;
    }
    ml->n_mass_free = 0;
    for (size_t i = 0; i < w->max_sel; i++)
        if (w->mass_n[2][i])
            ml->n_mass_free = (uint32_t)i + 1;
    ml->mass_sink = mean_profile(w->mass_sum[0], w->mass_n[0], ml->n_sink);
    ml->mass_window = mean_profile(w->mass_sum[1], w->mass_n[1], ml->n_window);
    ml->mass_free = mean_profile(w->mass_sum[2], w->mass_n[2], ml->n_mass_free);
    return ml->mass_sink && ml->mass_window && ml->mass_free ? KS_OK : KS_ENOMEM;
}

struct ks_accessmodel *ks_accessmodel_fit(const struct ks_trace *t, const struct ks_accessmodel_params *p, char *err,
                                          size_t len)
{
    struct ks_accessmodel_params d;
    if (!p) {
        ks_accessmodel_params_default(&d);
        p = &d;
    }
    if (!(p->always >= 0 && p->always < 1) || p->max_edge == 0 || p->horizon < 2 || p->near < 2) {
        snprintf(err, len, "access model: always must lie in [0, 1), max_edge >= 1, horizon >= 2 and near >= 2");
        return NULL;
    }
    if (t->n_steps == 0) {
        snprintf(err, len, "access model: the trace has no records to fit");
        return NULL;
    }
    size_t max_blocks = 0, max_sel = 0;
    for (size_t i = 0; i < t->n_steps; i++) {
        size_t nb = ks_trace_blocks(&t->meta, t->steps[i].context);
        max_blocks = nb > max_blocks ? nb : max_blocks;
        max_sel = t->steps[i].n > max_sel ? t->steps[i].n : max_sel;
    }
    struct ks_accessmodel *m = calloc(1, sizeof *m);
    struct fit_work w;
    if (!m || !(m->layer = calloc(t->meta.layers, sizeof *m->layer)) ||
        fit_work_init(&w, max_blocks, max_sel, p->max_edge) != KS_OK) {
        ks_accessmodel_free(m);
        snprintf(err, len, "access model: out of memory");
        return NULL;
    }
    m->layers = t->meta.layers;
    m->p = *p;
    int st = KS_OK;
    for (uint32_t l = 0; l < m->layers && st == KS_OK; l++)
        st = fit_layer(t, l, p, &w, &m->layer[l]);
    fit_work_free(&w);
    if (st != KS_OK) {
        ks_accessmodel_free(m);
        snprintf(err, len, "access model: out of memory");
        return NULL;
    }
    return m;
}

void ks_accessmodel_free(struct ks_accessmodel *m)
{
    if (!m)
        return;
    for (uint32_t l = 0; m->layer && l < m->layers; l++) {
        free(m->layer[l].count_cdf);
        free(m->layer[l].count_guide);
        free(m->layer[l].class_gap);
        free(m->layer[l].mass_sink);
        free(m->layer[l].mass_window);
        free(m->layer[l].mass_free);
    }
    free(m->layer);
    free(m);
}

uint32_t ks_accessmodel_layers(const struct ks_accessmodel *m)
{
    return m->layers;
}

const struct ks_accessmodel_layer *ks_accessmodel_layer(const struct ks_accessmodel *m, uint32_t layer)
{
    return layer < m->layers ? &m->layer[layer] : NULL;
}

int ks_accessmodel_selects_last(const struct ks_accessmodel *m, uint32_t layer, uint32_t context_blocks)
{
    if (layer >= m->layers || context_blocks == 0)
        return 0;
    uint32_t fs, fe;
    free_range(&m->layer[layer], context_blocks, &fs, &fe);
    return fe < context_blocks || fs == context_blocks;
}

uint32_t ks_accessmodel_max_selected(const struct ks_accessmodel *m, uint32_t layer, uint32_t context_blocks)
{
    if (layer >= m->layers)
        return 0;
    const struct ks_accessmodel_layer *ml = &m->layer[layer];
    uint32_t fs, fe;
    free_range(ml, context_blocks, &fs, &fe);
    uint32_t span = fe - fs, free_n = ml->count_cdf && ml->max_free < span ? ml->max_free : span;
    return context_blocks - span + free_n;
}
