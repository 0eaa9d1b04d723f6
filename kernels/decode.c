// decode.c - paged decode attention, reference version (dense, sparse, int8).
//
// One routine serves the three kernels: dense walks blocks 0..nb-1, sparse
// the selection row, and the KV loader converts fp16 or int8 to fp32. Per
// sequence and query head it keeps every logit in the workspace, takes the
// exact maximum, then sums probabilities, the output and the per-block
// masses in fp32, in block and token order.
#include <math.h>

#include "kernel_impl.h"

int ks_decode_check(const struct ks_decode_params *p, int sparse, int i8)
{
    if (!p || p->kv_heads == 0 || p->q_heads == 0 || p->q_heads % p->kv_heads != 0 ||
        p->q_heads / p->kv_heads > KS_KERNEL_MAX_GROUP || p->head_dim == 0 || p->head_dim > KS_KERNEL_MAX_HEAD_DIM ||
        p->block_size == 0 || p->block_size > KS_KERNEL_MAX_BLOCK_SIZE || !(p->scale == p->scale))
        return KS_KERNEL_EINVAL;
    if (p->n_seqs == 0)
        return KS_KERNEL_OK;
    if (!p->q || !p->seq_len || !p->block_table || !p->out)
        return KS_KERNEL_EINVAL;
    if (i8 ? (!p->k_i8 || !p->v_i8 || !p->k_scale || !p->v_scale) : (!p->k || !p->v))
        return KS_KERNEL_EINVAL;
    if (sparse && (!p->sel || !p->n_sel))
        return KS_KERNEL_EINVAL;
    int report = p->acc_blocks || p->acc_mass || p->n_acc || p->missing || p->n_missing;
    if (report && p->report_cap < ks_decode_cap(p, sparse))
        return KS_KERNEL_EINVAL;
    size_t ws = ks_decode_workspace(p, sparse);
    if (p->workspace_bytes < ws || (ws && !p->workspace))
        return KS_KERNEL_EINVAL;
    return KS_KERNEL_OK;
}

size_t ks_decode_workspace(const struct ks_decode_params *p, int sparse)
{
    // ref: the logits of one (sequence, KV head)'s query heads and one mass
    // per accessed block and query head
    size_t cap = ks_decode_cap(p, sparse), group = p->kv_heads ? p->q_heads / p->kv_heads : 0;
    size_t ref = group * (cap * p->block_size + cap) * sizeof(float);
    size_t cuda = ks_decode_ws_layout(p, sparse).floats * sizeof(float);
    return ref > cuda ? ref : cuda;
}

// Deep checks of the ref: lengths, selection rows, pages.
static int check_entries(const struct ks_decode_params *p, int sparse)
{
    for (uint32_t s = 0; s < p->n_seqs; s++) {
        uint32_t nb = ks_ceil_div(p->seq_len[s], p->block_size);
        if (nb > p->max_blocks)
            return KS_KERNEL_EINVAL;
        const uint32_t *bt = p->block_table + (size_t)s * p->max_blocks;
        if (sparse) {
            const uint32_t *sel = p->sel + (size_t)s * p->max_sel;
            if (p->n_sel[s] > p->max_sel)
                return KS_KERNEL_EINVAL;
            for (uint32_t i = 0; i < p->n_sel[s]; i++)
                if (sel[i] >= nb || (i && sel[i] <= sel[i - 1]) || bt[sel[i]] >= p->n_pages)
                    return KS_KERNEL_EINVAL;
        } else {
            for (uint32_t b = 0; b < nb; b++)
                if (bt[b] >= p->n_pages)
                    return KS_KERNEL_EINVAL;
        }
    }
    return KS_KERNEL_OK;
}

// Token t of KV head h in page pg, as fp32, into dst[head_dim].
static void load_row(const struct ks_decode_params *p, int i8, int value, uint32_t pg, uint32_t t, uint32_t h,
                     float *dst)
{
    size_t o = (((size_t)pg * p->block_size + t) * p->kv_heads + h) * p->head_dim;
    if (i8) {
        const int8_t *src = (value ? p->v_i8 : p->k_i8) + o;
        float sc = (value ? p->v_scale : p->k_scale)[(size_t)pg * p->kv_heads + h];
        for (uint32_t d = 0; d < p->head_dim; d++)
            dst[d] = (float)src[d] * sc;
    } else {
        const uint16_t *src = (value ? p->v : p->k) + o;
        for (uint32_t d = 0; d < p->head_dim; d++)
            dst[d] = ks_half_to_float(src[d]);
    }
}

static int decode(const struct ks_decode_params *p, int sparse, int i8)
{
    int st = ks_decode_check(p, sparse, i8);
    if (st == KS_KERNEL_OK)
        st = check_entries(p, sparse);
    if (st != KS_KERNEL_OK)
        return st;
    const uint32_t group = p->q_heads / p->kv_heads, hd = p->head_dim, bs = p->block_size;
    const size_t cap = ks_decode_cap(p, sparse);
    float *logit = p->workspace;                 // [group][cap * block_size]
    float *bmass = logit + (size_t)group * cap * bs; // [group][cap]
    float row[KS_KERNEL_MAX_HEAD_DIM], acc[KS_KERNEL_MAX_GROUP * KS_KERNEL_MAX_HEAD_DIM];
    for (uint32_t s = 0; s < p->n_seqs; s++) {
        const uint32_t len = p->seq_len[s];
        const uint32_t n = sparse ? p->n_sel[s] : ks_ceil_div(len, bs);
        const uint32_t *sel = sparse ? p->sel + (size_t)s * p->max_sel : NULL;
        const uint32_t *bt = p->block_table + (size_t)s * p->max_blocks;
        const uint8_t *res = p->resident ? p->resident + (size_t)s * p->max_blocks : NULL;
        float *mass = p->acc_mass ? p->acc_mass + (size_t)s * p->report_cap : NULL;
        uint32_t n_miss = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t b = sel ? sel[i] : i;
            if (p->acc_blocks)
                p->acc_blocks[(size_t)s * p->report_cap + i] = b;
            if (mass)
                mass[i] = 0.0f;
            if (res && !res[b]) {
                if (p->missing)
                    p->missing[(size_t)s * p->report_cap + n_miss] = b;
                n_miss++;
            }
        }
        if (p->n_acc)
            p->n_acc[s] = n;
        if (p->n_missing)
            p->n_missing[s] = n_miss;
        // one KV head at a time: each K and V row is converted once and
        // serves the group's query heads; per head, the arithmetic runs in
        // the same order as one head alone would (results do not depend on
        // the grouping)
        for (uint32_t kvh = 0; kvh < p->kv_heads; kvh++) {
            const uint32_t h0 = kvh * group;
            float m[KS_KERNEL_MAX_GROUP], z[KS_KERNEL_MAX_GROUP];
            for (uint32_t g = 0; g < group; g++)
                m[g] = -INFINITY;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t b = sel ? sel[i] : i;
                uint32_t ntok = len - b * bs < bs ? len - b * bs : bs;
                if (p->skip_missing && res && !res[b])
                    continue;
                for (uint32_t t = 0; t < ntok; t++) {
                    load_row(p, i8, 0, bt[b], t, kvh, row);
                    for (uint32_t g = 0; g < group; g++) {
                        const float *q = p->q + ((size_t)s * p->q_heads + h0 + g) * hd;
                        float dot = 0.0f;
                        for (uint32_t d = 0; d < hd; d++)
                            dot += q[d] * row[d];
                        logit[((size_t)g * cap + i) * bs + t] = dot * p->scale;
                        m[g] = fmaxf(m[g], dot * p->scale);
                    }
                }
            }
            for (uint32_t g = 0; g < group; g++) {
                z[g] = 0.0f;
                for (uint32_t d = 0; d < hd; d++)
                    acc[(size_t)g * hd + d] = 0.0f;
            }
            for (uint32_t i = 0; i < n; i++) {
                uint32_t b = sel ? sel[i] : i;
                uint32_t ntok = len - b * bs < bs ? len - b * bs : bs;
                for (uint32_t g = 0; g < group; g++)
                    bmass[(size_t)g * cap + i] = 0.0f;
                if (p->skip_missing && res && !res[b])
                    continue;
                for (uint32_t t = 0; t < ntok; t++) {
                    load_row(p, i8, 1, bt[b], t, kvh, row);
                    for (uint32_t g = 0; g < group; g++) {
                        float e = expf(logit[((size_t)g * cap + i) * bs + t] - m[g]);
                        bmass[(size_t)g * cap + i] += e;
                        float *a = acc + (size_t)g * hd;
                        for (uint32_t d = 0; d < hd; d++)
                            a[d] += e * row[d];
                    }
                }
                for (uint32_t g = 0; g < group; g++)
                    z[g] += bmass[(size_t)g * cap + i];
            }
            for (uint32_t g = 0; g < group; g++) {
                float *out = p->out + ((size_t)s * p->q_heads + h0 + g) * hd;
                for (uint32_t d = 0; d < hd; d++)
                    out[d] = z[g] != 0.0f ? acc[(size_t)g * hd + d] / z[g] : 0.0f; // a NaN z (poison read) stays NaN
                if (mass && z[g] != 0.0f)
                    for (uint32_t i = 0; i < n; i++)
                        mass[i] += bmass[(size_t)g * cap + i] / z[g] / (float)p->q_heads;
            }
        }
    }
    return KS_KERNEL_OK;
}

int ks_dense_decode_ref(const struct ks_decode_params *p)
{
    return decode(p, 0, 0);
}

int ks_sparse_decode_ref(const struct ks_decode_params *p)
{
    return decode(p, 1, 0);
}

int ks_sparse_decode_i8_ref(const struct ks_decode_params *p)
{
    return decode(p, 1, 1);
}

int ks_page_quantize_i8(const uint16_t *src, uint32_t block_size, uint32_t kv_heads, uint32_t head_dim,
                        uint32_t n_tokens, int8_t *dst, float *scale)
{
    if (!src || !dst || !scale || block_size == 0 || kv_heads == 0 || head_dim == 0 || n_tokens > block_size)
        return KS_KERNEL_EINVAL;
    const size_t row = (size_t)kv_heads * head_dim;
    for (uint32_t h = 0; h < kv_heads; h++) {
        float amax = 0.0f;
        for (uint32_t t = 0; t < n_tokens; t++)
            for (uint32_t d = 0; d < head_dim; d++) {
                float x = ks_half_to_float(src[t * row + (size_t)h * head_dim + d]);
                if (!isfinite(x))
                    return KS_KERNEL_EINVAL;
                amax = fmaxf(amax, fabsf(x));
            }
        float sc = amax / 127.0f;
        scale[h] = sc;
        for (uint32_t t = 0; t < block_size; t++)
            for (uint32_t d = 0; d < head_dim; d++) {
                size_t o = t * row + (size_t)h * head_dim + d;
                long v = 0;
                if (t < n_tokens && sc > 0.0f) {
                    v = lroundf(ks_half_to_float(src[o]) / sc);
                    v = v > 127 ? 127 : v < -127 ? -127 : v;
                }
                dst[o] = (int8_t)v;
            }
    }
    return KS_KERNEL_OK;
}
