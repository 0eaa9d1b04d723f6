// locality.c - the "dsa" access model's calibration inputs and fit (see locality.h).
#include "locality.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luatab.h"
#include "status.h"

// The fit's measurement: enough selections that the overlap's sampling
// error (about 0.003 at 2 x 31 x 2048 selections) is far below the bands'
// widths, few enough that a fit takes seconds.
enum { FIT_STEPS = 32, FIT_REQUESTS = 2, FIT_ITERATIONS = 24 };
// The fit of lambda: every layer selects at each step, so 8 steps of 2
// requests compare 59 pairs of layers x 16 steps x 2048 entries, a sampling
// error of the mean adjacent overlap of about 0.002 (the layers' draws are
// correlated), each measurement a fraction of a second.
enum { CROSS_STEPS = 8, CROSS_REQUESTS = 2, CROSS_ITERATIONS = 20 };
#define FIT_SEED 1
#define RHO_STEP 0.1 // the fit lowers rho by this much until the profile holds across contexts

// A figure's number: the field itself or its `value`. NAN when absent.
static double number(const struct ks_luatab *t, const char *key)
{
    const struct ks_luatab *f = ks_luatab_get(t, key);
    if (f && f->type == KS_LUATAB_TABLE)
        f = ks_luatab_get(f, "value");
    return f && (f->type == KS_LUATAB_INT || f->type == KS_LUATAB_REAL) ? f->d : NAN;
}

int ks_locality_load(const char *path, struct ks_locality_inputs *in, char *err, size_t len)
{
    memset(in, 0, sizeof *in);
    struct ks_luatab *root = NULL;
    char why[1024];
    if (ks_luatab_load(path, NULL, &root, why, sizeof why) != KS_OK) {
        snprintf(err, len, "%s", why);
        return KS_EINVAL;
    }
    int st = KS_EINVAL;
    double layers = number(root, "layers"), top_k = number(root, "top_k"), context = number(root, "context");
    in->context_drift = number(root, "context_drift");
    in->rho = number(root, "rho");
    in->persistence = number(root, "persistence");
    in->new_share = number(root, "new_share");
    in->kept_share = number(root, "kept_share");
    const struct ks_luatab *adj = ks_luatab_get(root, "adjacent");
    in->adjacent_lo = adj ? number(adj, "lo") : NAN;
    in->adjacent_hi = adj ? number(adj, "hi") : NAN;
    const struct ks_luatab *bands = ks_luatab_get(root, "overlap");
    if (!(layers >= 1 && layers <= 4096 && top_k >= 1 && context > top_k && context < 1e9)) {
        snprintf(err, len, "%s: layers, top_k and context must be positive, context above top_k", path);
        goto out;
    }
    if (!(in->rho >= 0 && in->rho < 1) || !(in->context_drift >= 0)) {
        snprintf(err, len, "%s: rho must lie in [0, 1), context_drift be >= 0", path);
        goto out;
    }
    if (!(in->adjacent_lo >= 0 && in->adjacent_lo <= in->adjacent_hi && in->adjacent_hi <= 1)) {
        snprintf(err, len, "%s: adjacent needs lo and hi with 0 <= lo <= hi <= 1", path);
        goto out;
    }
    in->layers = (uint32_t)layers;
    in->top_k = (uint32_t)top_k;
    in->context = (uint32_t)context;
    uint32_t next = 0; // bands must cover 0 .. layers-1 in order
    for (const struct ks_luatab *b = bands ? bands->child : NULL; b; b = b->next) {
        double first = number(b, "first"), last = number(b, "last"), lo = number(b, "lo"), hi = number(b, "hi");
        if (in->n_bands == KS_LOCALITY_MAX_BANDS || first != next || !(last >= first && last < layers) ||
            !(lo >= 0 && lo <= hi && hi <= 1)) {
            snprintf(err, len, "%s: overlap band %u: bands follow each other from layer 0, 0 <= lo <= hi <= 1",
                     path, in->n_bands + 1);
            goto out;
        }
        in->band[in->n_bands++] = (struct ks_locality_band){(uint32_t)first, (uint32_t)last, lo, hi};
        next = (uint32_t)last + 1;
    }
    if (next != in->layers) {
        snprintf(err, len, "%s: the overlap bands must cover layers 0 .. %u", path, in->layers - 1);
        goto out;
    }
    st = KS_OK;
out:
    ks_luatab_free(root);
    return st;
}

const struct ks_locality_band *ks_locality_band_of(const struct ks_locality_inputs *in, uint32_t j)
{
    for (uint32_t b = 0; b < in->n_bands; b++)
        if (j >= in->band[b].first && j <= in->band[b].last)
            return &in->band[b];
    return NULL;
}

double ks_locality_overlap(struct ks_dsa_layer lp, uint32_t top_k, uint32_t context, uint32_t steps,
                           uint32_t requests, uint64_t seed)
{
    struct ks_dsa_params p = {.seed = seed, .n_layers = 1, .top_k = top_k, .profile = &lp, .profile_layers = 1};
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    uint32_t n_max = context + steps;
    uint32_t *sel = malloc(top_k * sizeof *sel);
    float *mass = malloc(top_k * sizeof *mass);
    uint32_t *in_prev = calloc(n_max, sizeof *in_prev); // step + 1 of the unit's last selection
    double shared = 0, total = 0;
    int ok = d && sel && mass && in_prev;
    for (uint32_t r = 0; ok && r < requests; r++) {
        struct ks_dsa_req *q = ks_dsa_req_new(d, r);
        ok = q != NULL;
        memset(in_prev, 0, n_max * sizeof *in_prev);
        for (uint32_t t = 0; ok && t < steps; t++) {
            uint32_t k;
            ok = ks_dsa_select(q, 0, t, context + t, sel, mass, &k) == KS_OK;
            for (uint32_t i = 0; ok && i < k; i++) {
                if (t >= 1) {
                    shared += in_prev[sel[i]] == t; // selected at t - 1
                    total++;
                }
                in_prev[sel[i]] = t + 1;
            }
        }
        ks_dsa_req_free(q);
    }
    ks_dsa_free(d);
    free(sel);
    free(mass);
    free(in_prev);
    return ok && total > 0 ? shared / total : NAN;
}

double ks_locality_adjacent(const struct ks_dsa_layer *profile, uint32_t layers, float cross, uint32_t top_k,
                            uint32_t context, uint32_t steps, uint32_t requests, uint64_t seed, double *per_layer)
{
    struct ks_dsa_params p = {.seed = seed, .n_layers = layers, .top_k = top_k, .profile = profile,
                              .profile_layers = layers, .cross = cross};
    char err[128];
    struct ks_dsa *d = layers ? ks_dsa_new(&p, err, sizeof err) : NULL;
    uint32_t n_max = context + steps;
    uint32_t *sel = malloc(top_k * sizeof *sel);
    float *mass = malloc(top_k * sizeof *mass);
    uint32_t *below = calloc(n_max, sizeof *below); // 1 + the index of the last (step, layer) selecting the unit
    double *shared = calloc(layers ? layers : 1, sizeof *shared), *total = calloc(layers ? layers : 1, sizeof *total);
    int ok = d && sel && mass && below && shared && total;
    for (uint32_t r = 0; ok && r < requests; r++) {
        struct ks_dsa_req *q = ks_dsa_req_new(d, r);
        ok = q != NULL;
        memset(below, 0, n_max * sizeof *below);
        for (uint32_t t = 0; ok && t < steps; t++)
            for (uint32_t l = 0; ok && l < layers; l++) {
                uint32_t k, mark = (t * layers + l) + 1; // the layer below at this step marked mark - 1
                ok = ks_dsa_select(q, l, t, context + t, sel, mass, &k) == KS_OK;
                for (uint32_t i = 0; ok && i < k; i++) {
                    if (l >= 1) {
                        shared[l] += below[sel[i]] == mark - 1;
                        total[l]++;
                    }
                    below[sel[i]] = mark;
                }
            }
        ks_dsa_req_free(q);
    }
    double s = 0, n = 0;
    for (uint32_t l = 0; l < layers; l++) {
        if (per_layer)
            per_layer[l] = ok && total[l] > 0 ? shared[l] / total[l] : NAN;
        if (l >= KS_LOCALITY_ADJACENT_FIRST) {
            s += shared[l];
            n += total[l];
        }
    }
    ks_dsa_free(d);
    free(sel);
    free(mass);
    free(below);
    free(shared);
    free(total);
    return ok && n > 0 ? s / n : NAN;
}

static double measure_at(const struct ks_locality_inputs *in, struct ks_dsa_layer lp, uint32_t context)
{
    return ks_locality_overlap(lp, in->top_k, context, FIT_STEPS, FIT_REQUESTS, FIT_SEED);
}

static double measure(const struct ks_locality_inputs *in, float sigma, float rho)
{
    return measure_at(in, (struct ks_dsa_layer){sigma, rho}, in->context);
}

// One layer's parameters for `target`.
static int fit_one(const struct ks_locality_inputs *in, float rho, double target, struct ks_dsa_layer *out,
                   double *got)
{
    double at_max = measure(in, KS_LOCALITY_SIGMA_MAX, rho);
    if (isnan(at_max))
        return KS_ENOMEM;
    if (at_max <= target) { // sigma alone reaches it: overlap falls as sigma grows
        float lo = 0, hi = KS_LOCALITY_SIGMA_MAX;
        for (int i = 0; i < FIT_ITERATIONS; i++) {
            float mid = 0.5f * (lo + hi);
            double o = measure(in, mid, rho);
            if (isnan(o))
                return KS_ENOMEM;
            if (o > target)
                lo = mid;
            else
                hi = mid;
        }
        *out = (struct ks_dsa_layer){0.5f * (lo + hi), rho};
    } else { // the largest sigma; a fresher noise (lower rho) lowers the overlap further
        float lo = 0, hi = rho;
        for (int i = 0; i < FIT_ITERATIONS; i++) {
            float mid = 0.5f * (lo + hi);
            double o = measure(in, KS_LOCALITY_SIGMA_MAX, mid);
            if (isnan(o))
                return KS_ENOMEM;
            if (o > target)
                hi = mid;
            else
                lo = mid;
        }
        *out = (struct ks_dsa_layer){KS_LOCALITY_SIGMA_MAX, 0.5f * (lo + hi)};
    }
    *got = measure(in, out->sigma, out->rho);
    return isnan(*got) ? KS_ENOMEM : KS_OK;
}

// Fits every band with noise correlation rho; the largest change of a
// band's overlap between context / 2 and 2 context into *drift (bands at the
// random-selection floor left out).
static int fit_bands(const struct ks_locality_inputs *in, float rho, struct ks_dsa_layer *out, double *achieved,
                     double *drift)
{
    *drift = 0;
    for (uint32_t b = 0; b < in->n_bands; b++) { // layers of one band share a target: fitted once
        const struct ks_locality_band *band = &in->band[b];
        struct ks_dsa_layer lp;
        double got;
        int st = fit_one(in, rho, 0.5 * (band->lo + band->hi), &lp, &got);
        if (st != KS_OK)
            return st;
        for (uint32_t j = band->first; j <= band->last; j++) {
            out[j] = lp;
            if (achieved)
                achieved[j] = got;
        }
        if (band->lo < (double)in->top_k / (in->context / 2))
            continue;
        double a = measure_at(in, lp, in->context / 2), c = measure_at(in, lp, 2 * in->context);
        if (isnan(a) || isnan(c))
            return KS_ENOMEM;
        *drift = fmax(*drift, fabs(a - c));
    }
    return KS_OK;
}

int ks_locality_fit(const struct ks_locality_inputs *in, struct ks_dsa_layer *out, double *achieved, double *drift)
{
    double d = 0;
    for (int i = 0;; i++) {
        float rho = (float)fmax(0.0, in->rho - RHO_STEP * i);
        int st = fit_bands(in, rho, out, achieved, &d);
        if (st != KS_OK)
            return st;
        if (d <= in->context_drift / 2 || rho == 0)
            break;
    }
    if (drift)
        *drift = d;
    return KS_OK;
}

static double adjacent(const struct ks_locality_inputs *in, const struct ks_dsa_layer *profile, float cross,
                       double *per_layer)
{
    return ks_locality_adjacent(profile, in->layers, cross, in->top_k, in->context, CROSS_STEPS, CROSS_REQUESTS,
                                FIT_SEED, per_layer);
}

int ks_locality_fit_cross(const struct ks_locality_inputs *in, const struct ks_dsa_layer *profile, float *cross,
                          double *achieved, double *per_layer)
{
    double target = 0.5 * (in->adjacent_lo + in->adjacent_hi);
    double at0 = adjacent(in, profile, 0, NULL), at_max = adjacent(in, profile, KS_LOCALITY_CROSS_MAX, NULL);
    if (isnan(at0) || isnan(at_max))
        return KS_ENOMEM;
    float lambda;
    if (at0 >= target) { // independent layers already overlap enough
        lambda = 0;
    } else if (at_max <= target) { // the most lambda can do
        lambda = KS_LOCALITY_CROSS_MAX;
    } else { // overlap grows with lambda
        float lo = 0, hi = KS_LOCALITY_CROSS_MAX;
        for (int i = 0; i < CROSS_ITERATIONS; i++) {
            float mid = 0.5f * (lo + hi);
            double o = adjacent(in, profile, mid, NULL);
            if (isnan(o))
                return KS_ENOMEM;
            if (o < target)
                lo = mid;
            else
                hi = mid;
        }
        lambda = 0.5f * (lo + hi);
    }
    double got = adjacent(in, profile, lambda, per_layer);
    if (isnan(got))
        return KS_ENOMEM;
    *cross = lambda;
    if (achieved)
        *achieved = got;
    return KS_OK;
}
