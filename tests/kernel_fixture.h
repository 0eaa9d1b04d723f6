// kernel_fixture.h - the shared fixture of the kernel tests, included
// (not linked) by each tests/test_kernel_*.c, so that every helper stays
// static to its test.
//
// A fixture is a batch of sequences in a paged fp16 KV cache: pages in a
// shuffled order, spare pages and the token slots past each sequence's end
// poisoned with NaN, so a kernel that reads a slot it should not read turns
// its result into NaN and fails the comparison. Expected values come from
// plain double-precision attention written here, not from the kernels.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blockselect.h"
#include "decode.h"
#include "device.h"
#include "kernel.h"
#include "summary.h"

#define KFX_NAN16 ((uint16_t)0x7e00) // fp16 quiet NaN

// splitmix64: small, seedable, the same stream on every platform.
static uint64_t kfx_rng_state;

static inline void kfx_seed(uint64_t seed)
{
    kfx_rng_state = seed;
}

static inline uint64_t kfx_next(void)
{
    uint64_t z = (kfx_rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double kfx_unif(void) // [0, 1)
{
    return (double)(kfx_next() >> 11) * (1.0 / 9007199254740992.0);
}

static inline uint32_t kfx_below(uint32_t n)
{
    return (uint32_t)(kfx_unif() * n);
}

static inline double kfx_sym(void) // [-1, 1)
{
    return 2.0 * kfx_unif() - 1.0;
}

static inline void *kfx_alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    assert_non_null(p);
    return p;
}

struct kfx_cfg {
    uint32_t n_seqs, q_heads, kv_heads, head_dim, block_size;
    uint32_t spare_pages; // poisoned pages no block maps to
    const uint32_t *lens; // [n_seqs] tokens
    float q_amp;          // query amplitude: larger makes attention sharper
    uint64_t seed;
};

struct kfx {
    struct kfx_cfg c;
    uint32_t max_blocks, n_pages, max_sel;
    uint32_t *seq_len;     // [n_seqs]
    uint32_t *block_table; // [n_seqs][max_blocks]
    float *q;              // [n_seqs][q_heads][head_dim]
    uint16_t *k, *v;       // [n_pages][block_size][kv_heads][head_dim]
    uint8_t *resident;     // [n_seqs][max_blocks]
    uint32_t *sel;         // [n_seqs][max_sel]
    uint32_t *n_sel;       // [n_seqs]
    int8_t *k_i8, *v_i8;   // int8 copy, after kfx_quantize
    float *k_scale, *v_scale; // [n_pages][kv_heads]
};

static inline size_t kfx_page_elems(const struct kfx *f)
{
    return (size_t)f->c.block_size * f->c.kv_heads * f->c.head_dim;
}

static inline uint32_t kfx_nb(const struct kfx *f, uint32_t s)
{
    return (f->seq_len[s] + f->c.block_size - 1) / f->c.block_size;
}

// Tokens of logical block b of sequence s.
static inline uint32_t kfx_ntok(const struct kfx *f, uint32_t s, uint32_t b)
{
    uint32_t left = f->seq_len[s] - b * f->c.block_size;
    return left < f->c.block_size ? left : f->c.block_size;
}

static inline void kfx_init(struct kfx *f, const struct kfx_cfg *c)
{
    memset(f, 0, sizeof *f);
    f->c = *c;
    kfx_seed(c->seed);
    uint32_t used = 0;
    for (uint32_t s = 0; s < c->n_seqs; s++) {
        uint32_t nb = (c->lens[s] + c->block_size - 1) / c->block_size;
        used += nb;
        if (nb > f->max_blocks)
            f->max_blocks = nb;
    }
    f->max_blocks += 1; // a spare column, never mapped
    f->max_sel = f->max_blocks;
    f->n_pages = used + c->spare_pages;
    size_t pe = kfx_page_elems(f);
    f->seq_len = kfx_alloc(c->n_seqs * sizeof *f->seq_len);
    f->block_table = kfx_alloc((size_t)c->n_seqs * f->max_blocks * sizeof *f->block_table);
    f->q = kfx_alloc((size_t)c->n_seqs * c->q_heads * c->head_dim * sizeof *f->q);
    f->k = kfx_alloc(f->n_pages * pe * sizeof *f->k);
    f->v = kfx_alloc(f->n_pages * pe * sizeof *f->v);
    f->resident = kfx_alloc((size_t)c->n_seqs * f->max_blocks);
    f->sel = kfx_alloc((size_t)c->n_seqs * f->max_sel * sizeof *f->sel);
    f->n_sel = kfx_alloc(c->n_seqs * sizeof *f->n_sel);
    memcpy(f->seq_len, c->lens, c->n_seqs * sizeof *f->seq_len);
    for (size_t i = 0; i < f->n_pages * pe; i++) {
        f->k[i] = KFX_NAN16;
        f->v[i] = KFX_NAN16;
    }
    // Pages in shuffled order; unmapped table entries point past the cache.
    uint32_t *perm = kfx_alloc(f->n_pages * sizeof *perm);
    for (uint32_t i = 0; i < f->n_pages; i++)
        perm[i] = i;
    for (uint32_t i = f->n_pages; i > 1; i--) {
        uint32_t j = kfx_below(i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    uint32_t next = 0;
    const size_t row = (size_t)c->kv_heads * c->head_dim;
    for (uint32_t s = 0; s < c->n_seqs; s++) {
        for (uint32_t b = 0; b < f->max_blocks; b++)
            f->block_table[(size_t)s * f->max_blocks + b] = UINT32_MAX;
        for (uint32_t b = 0; b < kfx_nb(f, s); b++) {
            uint32_t pg = perm[next++];
            f->block_table[(size_t)s * f->max_blocks + b] = pg;
            f->resident[(size_t)s * f->max_blocks + b] = 1;
            for (uint32_t t = 0; t < kfx_ntok(f, s, b); t++)
                for (size_t e = 0; e < row; e++) {
                    f->k[pg * pe + t * row + e] = ks_half_from_float((float)kfx_sym());
                    f->v[pg * pe + t * row + e] = ks_half_from_float((float)kfx_sym());
                }
        }
    }
    free(perm);
    for (size_t i = 0; i < (size_t)c->n_seqs * c->q_heads * c->head_dim; i++)
        f->q[i] = c->q_amp * (float)kfx_sym();
}

static inline void kfx_fini(struct kfx *f)
{
    free(f->seq_len);
    free(f->block_table);
    free(f->q);
    free(f->k);
    free(f->v);
    free(f->resident);
    free(f->sel);
    free(f->n_sel);
    free(f->k_i8);
    free(f->v_i8);
    free(f->k_scale);
    free(f->v_scale);
}

// Decode parameters over the fixture's inputs; outputs and workspace unset.
static inline struct ks_decode_params kfx_params(const struct kfx *f)
{
    struct ks_decode_params p;
    memset(&p, 0, sizeof p);
    p.n_seqs = f->c.n_seqs;
    p.q_heads = f->c.q_heads;
    p.kv_heads = f->c.kv_heads;
    p.head_dim = f->c.head_dim;
    p.block_size = f->c.block_size;
    p.n_pages = f->n_pages;
    p.max_blocks = f->max_blocks;
    p.scale = 1.0f / sqrtf((float)f->c.head_dim);
    p.q = f->q;
    p.seq_len = f->seq_len;
    p.block_table = f->block_table;
    p.k = f->k;
    p.v = f->v;
    p.k_i8 = f->k_i8;
    p.v_i8 = f->v_i8;
    p.k_scale = f->k_scale;
    p.v_scale = f->v_scale;
    p.max_sel = f->max_sel;
    p.sel = f->sel;
    p.n_sel = f->n_sel;
    return p;
}

// Output buffers of one decode call, sized for the fixture.
struct kfx_out {
    float *out;
    uint32_t *acc_blocks, *n_acc, *missing, *n_missing;
    float *acc_mass;
    void *ws;
};

static inline void kfx_out_init(struct kfx_out *o, const struct kfx *f, struct ks_decode_params *p, int sparse)
{
    size_t cap = f->max_blocks; // >= max_sel
    o->out = kfx_alloc((size_t)f->c.n_seqs * f->c.q_heads * f->c.head_dim * sizeof(float));
    o->acc_blocks = kfx_alloc(f->c.n_seqs * cap * sizeof(uint32_t));
    o->acc_mass = kfx_alloc(f->c.n_seqs * cap * sizeof(float));
    o->missing = kfx_alloc(f->c.n_seqs * cap * sizeof(uint32_t));
    o->n_acc = kfx_alloc(f->c.n_seqs * sizeof(uint32_t));
    o->n_missing = kfx_alloc(f->c.n_seqs * sizeof(uint32_t));
    p->out = o->out;
    p->report_cap = (uint32_t)cap;
    p->acc_blocks = o->acc_blocks;
    p->acc_mass = o->acc_mass;
    p->n_acc = o->n_acc;
    p->missing = o->missing;
    p->n_missing = o->n_missing;
    p->workspace_bytes = ks_decode_workspace(p, sparse);
    o->ws = kfx_alloc(p->workspace_bytes);
    p->workspace = o->ws;
}

static inline void kfx_out_fini(struct kfx_out *o)
{
    free(o->out);
    free(o->acc_blocks);
    free(o->acc_mass);
    free(o->missing);
    free(o->n_acc);
    free(o->n_missing);
    free(o->ws);
}

static inline void kfx_select_all(struct kfx *f)
{
    for (uint32_t s = 0; s < f->c.n_seqs; s++) {
        f->n_sel[s] = kfx_nb(f, s);
        for (uint32_t b = 0; b < f->n_sel[s]; b++)
            f->sel[(size_t)s * f->max_sel + b] = b;
    }
}

// Each block kept with probability keep (ascending); at least one kept
// where the sequence has blocks.
static inline void kfx_select_random(struct kfx *f, double keep)
{
    for (uint32_t s = 0; s < f->c.n_seqs; s++) {
        uint32_t n = 0, nb = kfx_nb(f, s);
        for (uint32_t b = 0; b < nb; b++)
            if (kfx_unif() < keep)
                f->sel[(size_t)s * f->max_sel + n++] = b;
        if (n == 0 && nb)
            f->sel[(size_t)s * f->max_sel + n++] = kfx_below(nb);
        f->n_sel[s] = n;
    }
}

static inline void kfx_residency_random(struct kfx *f, double p_resident)
{
    for (uint32_t s = 0; s < f->c.n_seqs; s++)
        for (uint32_t b = 0; b < kfx_nb(f, s); b++)
            f->resident[(size_t)s * f->max_blocks + b] = kfx_unif() < p_resident;
}

// Poisons the K and V pages of every non-resident block.
static inline void kfx_poison_missing(struct kfx *f)
{
    size_t pe = kfx_page_elems(f);
    for (uint32_t s = 0; s < f->c.n_seqs; s++)
        for (uint32_t b = 0; b < kfx_nb(f, s); b++)
            if (!f->resident[(size_t)s * f->max_blocks + b]) {
                uint32_t pg = f->block_table[(size_t)s * f->max_blocks + b];
                for (size_t e = 0; e < pe; e++)
                    f->k[pg * pe + e] = f->v[pg * pe + e] = KFX_NAN16;
            }
}

// The int8 copy of the cache: every mapped page quantized over its tokens;
// unread slots hold 127 and spare pages a NaN scale, as poison.
static inline void kfx_quantize(struct kfx *f)
{
    size_t pe = kfx_page_elems(f);
    f->k_i8 = kfx_alloc(f->n_pages * pe);
    f->v_i8 = kfx_alloc(f->n_pages * pe);
    f->k_scale = kfx_alloc((size_t)f->n_pages * f->c.kv_heads * sizeof(float));
    f->v_scale = kfx_alloc((size_t)f->n_pages * f->c.kv_heads * sizeof(float));
    memset(f->k_i8, 127, f->n_pages * pe);
    memset(f->v_i8, 127, f->n_pages * pe);
    for (size_t i = 0; i < (size_t)f->n_pages * f->c.kv_heads; i++)
        f->k_scale[i] = f->v_scale[i] = NAN;
    const size_t row = (size_t)f->c.kv_heads * f->c.head_dim;
    for (uint32_t s = 0; s < f->c.n_seqs; s++)
        for (uint32_t b = 0; b < kfx_nb(f, s); b++) {
            uint32_t pg = f->block_table[(size_t)s * f->max_blocks + b], nt = kfx_ntok(f, s, b);
            assert_int_equal(ks_page_quantize_i8(f->k + pg * pe, f->c.block_size, f->c.kv_heads, f->c.head_dim, nt,
                                                 f->k_i8 + pg * pe, f->k_scale + (size_t)pg * f->c.kv_heads),
                             KS_KERNEL_OK);
            assert_int_equal(ks_page_quantize_i8(f->v + pg * pe, f->c.block_size, f->c.kv_heads, f->c.head_dim, nt,
                                                 f->v_i8 + pg * pe, f->v_scale + (size_t)pg * f->c.kv_heads),
                             KS_KERNEL_OK);
            memset(f->k_i8 + pg * pe + nt * row, 127, (f->c.block_size - nt) * row);
            memset(f->v_i8 + pg * pe + nt * row, 127, (f->c.block_size - nt) * row);
        }
}

static inline double kfx_kv(const struct kfx *f, int i8, int value, uint32_t pg, uint32_t t, uint32_t h, uint32_t d)
{
    size_t o = (((size_t)pg * f->c.block_size + t) * f->c.kv_heads + h) * f->c.head_dim + d;
    if (i8) {
        size_t so = (size_t)pg * f->c.kv_heads + h;
        return value ? (double)f->v_i8[o] * f->v_scale[so] : (double)f->k_i8[o] * f->k_scale[so];
    }
    return ks_half_to_float(value ? f->v[o] : f->k[o]);
}

// Double-precision attention of sequence s over the blocks of its selection
// (sparse) or all its blocks, leaving out non-resident ones when skip:
// out[q_heads][head_dim] and mass[entry] (averaged over heads).
static inline void kfx_attention(const struct kfx *f, uint32_t s, int sparse, int skip, int i8, double *out, double *mass)
{
    const uint32_t hd = f->c.head_dim, group = f->c.q_heads / f->c.kv_heads;
    const uint32_t n = sparse ? f->n_sel[s] : kfx_nb(f, s);
    const double scale = 1.0 / sqrt((double)hd);
    for (uint32_t i = 0; i < n; i++)
        mass[i] = 0.0;
    for (uint32_t h = 0; h < f->c.q_heads; h++) {
        const float *q = f->q + ((size_t)s * f->c.q_heads + h) * hd;
        double m = -INFINITY;
        for (int pass = 0; pass < 2; pass++) {
            double z = 0.0, *o = out + (size_t)h * hd, *bm = kfx_alloc(n * sizeof(double) + 1);
            for (uint32_t d = 0; d < hd; d++)
                o[d] = 0.0;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t b = sparse ? f->sel[(size_t)s * f->max_sel + i] : i;
                if (skip && !f->resident[(size_t)s * f->max_blocks + b])
                    continue;
                uint32_t pg = f->block_table[(size_t)s * f->max_blocks + b];
                for (uint32_t t = 0; t < kfx_ntok(f, s, b); t++) {
                    double l = 0.0;
                    for (uint32_t d = 0; d < hd; d++)
                        l += (double)q[d] * kfx_kv(f, i8, 0, pg, t, h / group, d);
                    l *= scale;
                    if (pass == 0) {
                        m = l > m ? l : m;
                        continue;
                    }
                    double e = exp(l - m);
                    z += e;
                    bm[i] += e;
                    for (uint32_t d = 0; d < hd; d++)
                        o[d] += e * kfx_kv(f, i8, 1, pg, t, h / group, d);
                }
            }
            if (pass == 1) {
                for (uint32_t d = 0; d < hd; d++)
                    o[d] = z > 0.0 ? o[d] / z : 0.0;
                for (uint32_t i = 0; i < n; i++)
                    mass[i] += z > 0.0 ? bm[i] / z / f->c.q_heads : 0.0;
            }
            free(bm);
        }
    }
}

// ||a - b|| / ||b|| (b = 0: ||a||); NaN anywhere gives NaN, which fails any bound.
static inline double kfx_nerr(const float *a, const double *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static inline double kfx_nerr_f(const float *a, const float *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

// Fails unless err <= bound (NaN fails).
#define KFX_BOUND(err, bound, what)                                                                                    \
    do {                                                                                                               \
        double e_ = (err);                                                                                             \
        if (!(e_ <= (bound)))                                                                                          \
            fail_msg("%s: normalised error %g exceeds %g", (what), e_, (double)(bound));                              \
    } while (0)
