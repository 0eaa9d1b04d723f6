// dsa.c - DSA-style sparse attention as importance plus AR(1) noise (see dsa.h).
//
// Invariants: a request's g[0 .. gn) never changes once drawn; a layer's
// z[0 .. n) holds the noise of its last step `step`; with lambda > 0, w[0 ..
// wn) holds the fresh normals layer wlayer drew for every unit it had at its
// step wstep (the draws the next layer up leans on); the Gaussian table is
// built once per model and only read afterwards. Normal draws come from a
// 4096-entry table of normal quantiles indexed by the top 12 bits of a hash
// (tails to about +-3.5; scaled to unit variance), so a unit's draw costs
// one hash and one load, no logarithm. A draw that leans on the layer below
// adds one multiply-add; at lambda = 0 none does (w is the table's value, as
// before lambda existed).
#include "dsa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsa_pass.h"
#include "rng.h"
#include "status.h"

#define QN (1u << KS_DSA_QBITS)

struct ks_dsa {
    struct ks_dsa_params p;
    struct ks_dsa_layer *profile; // [p.profile_layers], owned
    float normal[QN];             // normal quantiles at (j + 1/2) / QN, unit variance
    enum ks_dsa_isa isa;          // the passes' instructions (dsa_pass.h): the widest this CPU has
};

struct layer_state {
    float *z;      // [cap] noise of units 0 .. n at step `step`
    uint32_t n, cap;
    uint32_t step;
    int live;      // 0: never asked
};

struct ks_dsa_req {
    const struct ks_dsa *d;
    uint64_t id;
    float *g;          // [gcap] log-importance of units 0 .. gn
    uint32_t gn, gcap;
    float *score, *tmp; // [scap], [tcap] workspace
    uint32_t scap, tcap;
    struct layer_state *lay; // [n_layers]
    float *w;                // [wcap] lambda > 0: layer wlayer's fresh normals at step wstep, units 0 .. wn
    uint32_t wn, wcap, wstep, wlayer;
    int wlive;               // 0: no layer drew yet
};

// Key of one stream of draws; a unit's draw is ks_rng_mix(key + unit * KS_DSA_GOLDEN)
// (dsa_pass.h).
enum { TAG_IMPORTANCE = 1, TAG_STEP, TAG_RESTART, TAG_JOIN };
static uint64_t key(const struct ks_dsa_req *r, int tag, uint32_t layer, uint32_t step)
{
    uint64_t k = ks_rng_mix(r->d->p.seed ^ ks_rng_mix(r->id + KS_DSA_GOLDEN));
    return ks_rng_mix(k ^ ks_rng_mix(((uint64_t)tag << 60) ^ ((uint64_t)layer << 32) ^ step));
}

// Inverse of the standard normal CDF by bisection (built once per model).
static double probit(double p)
{
    double lo = -10, hi = 10;
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

void ks_dsa_params_default(struct ks_dsa_params *p, uint64_t seed, uint32_t n_layers, uint32_t top_k)
{
    *p = (struct ks_dsa_params){.seed = seed,
                                .n_layers = n_layers,
                                .top_k = top_k,
                                .profile = ks_dsa_fitted,
                                .profile_layers = ks_dsa_fitted_layers,
                                .cross = ks_dsa_fitted_cross};
}

struct ks_dsa *ks_dsa_new(const struct ks_dsa_params *p, char *err, size_t len)
{
    if (p->n_layers == 0 || p->top_k == 0 || p->profile_layers == 0 || !p->profile) {
        snprintf(err, len, "dsa: layers, top_k and the profile's layers must be positive");
        return NULL;
    }
    for (uint32_t j = 0; j < p->profile_layers; j++)
        if (!(p->profile[j].sigma >= 0) || !isfinite(p->profile[j].sigma) || !(p->profile[j].rho >= 0) ||
            !(p->profile[j].rho < 1)) {
            snprintf(err, len, "dsa: profile layer %u: sigma must be finite and >= 0, rho in [0, 1)", j);
            return NULL;
        }
    if (!(p->cross >= 0 && p->cross < 1)) {
        snprintf(err, len, "dsa: cross (the layers' correlation) must lie in [0, 1)");
        return NULL;
    }
    struct ks_dsa *d = calloc(1, sizeof *d);
    if (d)
        d->profile = malloc(p->profile_layers * sizeof *d->profile);
    if (!d || !d->profile) {
        ks_dsa_free(d);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    d->p = *p;
    memcpy(d->profile, p->profile, p->profile_layers * sizeof *d->profile);
    d->p.profile = d->profile;
    double ss = 0;
    for (uint32_t j = 0; j < QN / 2; j++) { // symmetric: mean exactly 0
        double x = probit((j + 0.5) / QN);
        d->normal[j] = (float)x;
        d->normal[QN - 1 - j] = (float)-x;
        ss += 2 * x * x;
    }
    float scale = (float)(1 / sqrt(ss / QN));
    for (uint32_t j = 0; j < QN; j++)
        d->normal[j] *= scale;
    d->isa = ks_dsa_isa_best();
    return d;
}

void ks_dsa_free(struct ks_dsa *d)
{
    if (!d)
        return;
    free(d->profile);
    free(d);
}

struct ks_dsa_layer ks_dsa_layer_of(const struct ks_dsa *d, uint32_t layer)
{
    uint64_t j = ((uint64_t)2 * layer + 1) * d->p.profile_layers / ((uint64_t)2 * d->p.n_layers);
    return d->profile[j < d->p.profile_layers ? j : d->p.profile_layers - 1];
}

struct ks_dsa_req *ks_dsa_req_new(const struct ks_dsa *d, uint64_t id)
{
    struct ks_dsa_req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->d = d;
    r->id = id;
    if (!(r->lay = calloc(d->p.n_layers, sizeof *r->lay))) {
        free(r);
        return NULL;
    }
    return r;
}

void ks_dsa_req_free(struct ks_dsa_req *r)
{
    if (!r)
        return;
    for (uint32_t l = 0; r->lay && l < r->d->p.n_layers; l++)
        free(r->lay[l].z);
    free(r->lay);
    free(r->g);
    free(r->score);
    free(r->tmp);
    free(r->w);
    free(r);
}

size_t ks_dsa_req_bytes(const struct ks_dsa_req *r)
{
    size_t units = (size_t)r->gcap + r->scap + r->tcap + r->wcap;
    for (uint32_t l = 0; l < r->d->p.n_layers; l++)
        units += r->lay[l].cap;
    return units * sizeof(float);
}

// Grows *p to hold n floats (doubling), keeping its contents.
static int reserve(float **p, uint32_t *cap, uint32_t n)
{
    if (n <= *cap)
        return 0;
    uint64_t c = *cap ? *cap : 1024;
    while (c < n)
        c *= 2;
    if (c > UINT32_MAX)
        c = UINT32_MAX;
    float *q = realloc(*p, c * sizeof *q);
    if (!q)
        return -1;
    *p = q;
    *cap = (uint32_t)c;
    return 0;
}

// The value of rank m (ascending) of a[0 .. n), reordering a (Wirth's
// selection: expected O(n) on scores in random order).
static float rank_value(float *a, uint32_t n, uint32_t m)
{
    int64_t l = 0, h = (int64_t)n - 1;
    while (l < h) {
        float x = a[m];
        int64_t i = l, j = h;
        do {
            while (a[i] < x)
                i++;
            while (x < a[j])
                j--;
            if (i <= j) {
                float t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        } while (i <= j);
        if (j < m)
            l = i;
        if (m < i)
            h = j;
    }
    return a[m];
}

// The value of rank m (ascending) of src[0 .. n) and how many values are
// strictly larger, with tmp[0 .. n) as scratch (src may be tmp). Exact, the
// same value and count as a sort would give, for any order and ties: the
// values are spread over BUCKETS buckets by a monotone map of [min, max]
// (a larger value never falls in a lower bucket, so every value of a higher
// bucket is strictly larger), the bucket holding rank m is kept and spread
// again, until few values are left or all are equal; Wirth's selection
// then finishes. Each round is a pass that finds the range, one that counts
// and one that gathers (dsa_pass.c's, in the widest form the CPU has), with
// no data-dependent branch: on decode steps' scores about five times
// faster than selection alone (perf, glm_hisparse.lua at 4K tokens, its
// first 20 simulated s: 16.2K samples in rank_value, 3.3K here, 2026-12-05).
enum { BUCKETS = 2048, FEW = 256, ROUNDS = 8 };
_Static_assert(BUCKETS <= 4096, "the counts live on the stack");

static float rank_of(enum ks_dsa_isa isa, float *tmp, const float *src, uint32_t n, uint32_t m, uint32_t *above)
{
    const float top = (float)(BUCKETS - 1);
    uint32_t larger = 0;
    for (int round = 0; round < ROUNDS && n > FEW; round++) {
        float lo, hi;
        ks_dsa_range(isa, src, n, &lo, &hi);
        if (lo == hi) { // all equal (ranks m .. n - 1 among them)
            if (above)
                *above = larger;
            return lo;
        }
        float scale = (float)BUCKETS / (hi - lo); // (v - lo) * scale: monotone in v, 0 at lo, about BUCKETS at hi
        if (!(scale > 0 && scale < INFINITY && hi - lo < INFINITY))
            break; // infinities or a range too narrow to divide: selection alone
        uint32_t count[BUCKETS] = {0};
        ks_dsa_count_buckets(isa, src, n, lo, scale, top, count);
        uint32_t b = 0, below = 0;
        while (below + count[b] <= m)
            below += count[b++];
        larger += n - below - count[b];
        n = ks_dsa_in_bucket(isa, tmp, src, n, lo, scale, top, b); // in place when src is tmp
        src = tmp;
        m -= below;
    }
    if (src != tmp)
        memcpy(tmp, src, n * sizeof *src);
    float v = rank_value(tmp, n, m);
    if (above) // after the selection every value above it lies above place m
        for (uint32_t i = m + 1; i < n; i++)
            larger += tmp[i] > v;
    if (above)
        *above = larger;
    return v;
}

// On a long context a sample of 1024 scores gives a lower bound that keeps
// about 1.5 x want + 1% of them; the value is then selected among those,
// which hold every score at or above it (the same value as selecting among
// all, a tenth of the work). Where the bound keeps fewer than want, or the
// context is short, among all.
#define SAMPLE 1024u
float ks_dsa_top_value(float *tmp, const float *s, uint32_t n, uint32_t want, uint32_t *above)
{
    const enum ks_dsa_isa isa = ks_dsa_isa_best();
    if (n >= 8 * SAMPLE) {
        for (uint32_t j = 0; j < SAMPLE; j++)
            tmp[j] = s[(uint64_t)j * n / SAMPLE];
        uint64_t keep = ((uint64_t)want * SAMPLE * 3 / 2 + n - 1) / n + SAMPLE / 100; // sampled scores kept
        if (keep < SAMPLE) {
            float low = rank_of(isa, tmp, tmp, SAMPLE, (uint32_t)(SAMPLE - keep), NULL);
            uint32_t c = ks_dsa_at_least(isa, tmp, s, n, low);
            if (c >= want)
                return rank_of(isa, tmp, tmp, c, c - want, above);
        }
    }
    return rank_of(isa, tmp, s, n, n - want, above);
}

// How a layer's fresh normals lean on the layer below's: w_i = a w_below_i +
// c e_i for units i < m, w_i = e_i above (m = 0: every draw its own).
struct lean {
    float a, c;
    uint32_t m;
};

// The lean of `layer` at `step`: on the draws r->w holds when they are the
// step's and a layer below drew them.
static struct lean lean_of(const struct ks_dsa_req *r, uint32_t layer, uint32_t step)
{
    const float lambda = r->d->p.cross;
    if (!(lambda > 0) || !r->wlive || r->wstep != step || r->wlayer >= layer)
        return (struct lean){0, 1, 0};
    double a = pow(lambda, (double)(layer - r->wlayer));
    return (struct lean){(float)a, (float)sqrt(1 - a * a), r->wn};
}

// Brings the layer's noise to `step` over units [0, n) (the per-unit pass
// is dsa_pass.c's). A layer that draws every unit it has (a restart or a
// new step) leaves its draws in r->w for the layers above (lambda > 0); w_i
// is read before it is overwritten, unit by unit. Where it draws unit i < n
// it also writes its score, s_i = g_i + sigma z_i; *scored says whether
// every unit below n got one (else the caller scores them all).
// NOTE: the scores were a pass of their own over z after this one; fused,
// the drawing thread's samples on one 32K request of hisparse_missrate.lua
// fell 3% (perf, 3 runs each, 2026-12-05).
static int advance(struct ks_dsa_req *r, uint32_t layer, uint32_t step, uint32_t n, float rho, float sigma,
                   float *s, int *scored)
{
    *scored = 0;
    const struct ks_dsa *d = r->d;
    struct layer_state *L = &r->lay[layer];
    if (reserve(&L->z, &L->cap, n) != 0)
        return KS_ENOMEM;
    const int keep = d->p.cross > 0 && (!L->live || step != L->step); // draws every unit: the next layer's lean
    if (keep && reserve(&r->w, &r->wcap, L->live && L->n > n ? L->n : n) != 0)
        return KS_ENOMEM;
    struct lean x = lean_of(r, layer, step);
    const enum ks_dsa_isa isa = d->isa;
    struct ks_dsa_draw p = {.table = d->normal, .a = x.a, .c = x.c, .m = x.m, .lower = r->w, .stationary = 1,
                            .z = L->z, .g = r->g, .sigma = sigma, .s = s, .keep = keep ? r->w : NULL};
    if (!L->live || step < L->step) { // first use or a step back: stationary noise
        p.key = key(r, TAG_RESTART, layer, step);
        ks_dsa_draw(isa, &p, 0, n);
        L->n = n;
        L->step = step;
        L->live = 1;
        *scored = 1;
    } else {
        if (step > L->step) {
            // z(t) = a z(t-d) + c w with a = rho^d, c = sqrt(1 - rho^2d): one step exactly, a gap in law
            double a = pow(rho, (double)(step - L->step));
            struct ks_dsa_draw q = p;
            q.key = key(r, TAG_STEP, layer, step);
            q.stationary = 0;
            q.fa = (float)a;
            q.fc = (float)sqrt(1 - a * a);
            uint32_t m = L->n < n ? L->n : n; // units scored here; the rest below L->n only drawn
            ks_dsa_draw(isa, &q, 0, m);
            q.s = NULL;
            ks_dsa_draw(isa, &q, m, L->n);
            L->step = step;
            *scored = 1; // with the units that join below
        }
        if (n > L->n) { // units that joined the context: stationary noise of their own
            p.key = key(r, TAG_JOIN, layer, 0);
            ks_dsa_draw(isa, &p, L->n, n);
            L->n = n;
        }
    }
    if (keep) {
        r->wn = L->n;
        r->wstep = step;
        r->wlayer = layer;
        r->wlive = 1;
    }
    return KS_OK;
}

// The highest of the m kept scores s[out[i]] (none is NaN: ks_dsa_take),
// -INFINITY when m is 0, in four running maxima (a single one waited for
// each comparison). Of equal zeros one of either sign may come back: the
// masses, exp(s - top), are the same with either.
static float kept_max(const float *s, const uint32_t *out, uint32_t m)
{
    float t[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    uint32_t i = 0;
    for (; i + 4 <= m; i += 4)
        for (int j = 0; j < 4; j++)
            t[j] = s[out[i + j]] > t[j] ? s[out[i + j]] : t[j];
    for (; i < m; i++)
        t[0] = s[out[i]] > t[0] ? s[out[i]] : t[0];
    float a = t[0] > t[1] ? t[0] : t[1], b = t[2] > t[3] ? t[2] : t[3];
    return a > b ? a : b;
}

int ks_dsa_select(struct ks_dsa_req *r, uint32_t layer, uint32_t step, uint32_t n, uint32_t *out, float *mass,
                  uint32_t *k)
{
    const struct ks_dsa *d = r->d;
    *k = 0;
    if (layer >= d->p.n_layers)
        return KS_EINVAL;
    if (n == 0)
        return KS_OK;
    if (reserve(&r->g, &r->gcap, n) != 0 || reserve(&r->score, &r->scap, n) != 0 ||
        reserve(&r->tmp, &r->tcap, n) != 0)
        return KS_ENOMEM;
    if (n > r->gn) {
        uint64_t kg = key(r, TAG_IMPORTANCE, 0, 0);
        for (uint32_t i = r->gn; i < n; i++) // Exp(1) from 53 bits: -ln(1 - u), finite
            r->g[i] = (float)-log1p(-(double)(ks_rng_mix(kg + i * KS_DSA_GOLDEN) >> 11) * 0x1.0p-53);
        r->gn = n;
    }
    struct ks_dsa_layer p = ks_dsa_layer_of(d, layer);
    float *s = r->score;
    int scored;
    int st = advance(r, layer, step, n, p.rho, p.sigma, s, &scored);
    if (st != KS_OK)
        return st;
    if (!scored) { // the layer's noise was already at this step
        const float *g = r->g, *z = r->lay[layer].z;
        for (uint32_t i = 0; i < n; i++)
            s[i] = g[i] + p.sigma * z[i];
    }
    uint32_t want = n < d->p.top_k ? n : d->p.top_k;
    float thr = -INFINITY;
    uint32_t ties = want; // units equal to thr that may still join
    if (want < n) {
        uint32_t above;
        thr = ks_dsa_top_value(r->tmp, s, n, want, &above);
        ties = want - above;
    }
    uint32_t m = ks_dsa_take(d->isa, s, n, thr, ties, want, out);
    float top = kept_max(s, out, m);
    double sum = 0;
    for (uint32_t i = 0; i < m; i++)
        sum += (mass[i] = expf(s[out[i]] - top));
    ks_dsa_divide(d->isa, mass, m, sum);
    *k = m;
    return KS_OK;
}
