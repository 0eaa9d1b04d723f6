// decode_cuda.cu - paged decode attention on the GPU (dense, sparse, int8).
//
// Two launches, split-K in the manner of flash-decoding:
//   attend_kernel   (or attend_wide_kernel, decode_wide_cuda.cu, where rows
//                   are whole 16-byte vectors: ks_decode_wide)
//                   one thread block per (split of the accessed blocks, KV
//                   head, sequence); the query heads of the KV head's group
//                   share each K/V load. Per block it writes the block's max
//                   logit and sum of exp per query head (for the report) and
//                   keeps a running softmax; it ends with an unnormalised
//                   partial output per query head and split.
//   combine_report_kernel  per (query head, sequence): merges the splits
//                   into the output and the head's final max and sum; the
//                   sequence's last head block to finish then writes its
//                   report: accessed blocks, their masses, the non-resident
//                   ones (a parallel compaction, in access order).
// Workspace layout: ks_decode_ws_layout in kernel_impl.h. fp32 throughout;
// KV converted as loaded (__half, or int8 times its page scale). attend_kernel
// reads one element per thread and load; it stays for head dims the wide
// kernel cannot cut into 16-byte vectors, and for misaligned caches.
#include "cuda_util.cuh"
#include "decode_wide.h"

#define ATTEND_THREADS 128
#define ATTEND_WARPS (ATTEND_THREADS / 32)
#define DIMS_PER_LANE (KS_KERNEL_MAX_HEAD_DIM / 32)       // K dims a lane holds for a logit
#define DIMS_PER_THREAD (KS_KERNEL_MAX_HEAD_DIM / ATTEND_THREADS) // V dims a thread accumulates

template <bool I8> struct kv_load;

template <> struct kv_load<false> {
    static __device__ __forceinline__ float k(const struct ks_decode_params &p, size_t at, size_t)
    {
        return ks_h2f(p.k[at]);
    }
    static __device__ __forceinline__ float v(const struct ks_decode_params &p, size_t at, size_t)
    {
        return ks_h2f(p.v[at]);
    }
};

template <> struct kv_load<true> {
    static __device__ __forceinline__ float k(const struct ks_decode_params &p, size_t at, size_t sc)
    {
        return (float)p.k_i8[at] * p.k_scale[sc];
    }
    static __device__ __forceinline__ float v(const struct ks_decode_params &p, size_t at, size_t sc)
    {
        return (float)p.v_i8[at] * p.v_scale[sc];
    }
};

// Entries the kernels walk for sequence s: the selection row, or every block.
static __device__ __forceinline__ uint32_t n_access(const struct ks_decode_params &p, bool sparse, uint32_t s)
{
    return sparse ? p.n_sel[s] : ks_ceil_div(p.seq_len[s], p.block_size);
}

static __device__ __forceinline__ bool is_missing(const struct ks_decode_params &p, uint32_t s, uint32_t b)
{
    return p.resident && !p.resident[(size_t)s * p.max_blocks + b];
}

// Launch: grid (n_split, kv_heads, n_seqs), block ATTEND_THREADS threads.
// Block (x, h, s) attends the group of query heads of KV head h of sequence s
// over accessed entries [x * per, (x + 1) * per), per =
// ks_decode_split_blocks(block_size). Warps take tokens for the logits;
// thread t owns output dims t, t + ATTEND_THREADS, ... of every head.
template <bool I8>
static __global__ void __launch_bounds__(ATTEND_THREADS)
    attend_kernel(struct ks_decode_params p, bool sparse, struct ks_decode_ws w)
// p: device pointers, shaped as in decode.h; w: offsets into p.workspace
{
    __shared__ float q_s[KS_KERNEL_MAX_GROUP][KS_KERNEL_MAX_HEAD_DIM];
    __shared__ float p_s[KS_KERNEL_MAX_GROUP][KS_KERNEL_MAX_BLOCK_SIZE]; // logits, then exp
    __shared__ float bm_s[KS_KERNEL_MAX_GROUP], bl_s[KS_KERNEL_MAX_GROUP]; // this block's max, sum
    __shared__ float m_s[KS_KERNEL_MAX_GROUP], l_s[KS_KERNEL_MAX_GROUP];   // running max, sum

    const uint32_t split = blockIdx.x, kvh = blockIdx.y, s = blockIdx.z;
    const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const uint32_t group = p.q_heads / p.kv_heads, hd = p.head_dim, bs = p.block_size;
    const uint32_t h0 = kvh * group, len = p.seq_len[s];
    const uint32_t cap = ks_decode_cap(&p, sparse), per = ks_decode_split_blocks(bs);
    const uint32_t n = n_access(p, sparse, s);
    const uint32_t i0 = split * per, i1 = min(n, i0 + per);
    float *ws = (float *)p.workspace;
    if (split == 0 && kvh == 0 && tid == 0)
        ((uint32_t *)ws)[w.arrived + s] = 0; // combine_report_kernel counts on it

    for (uint32_t j = tid; j < group * hd; j += ATTEND_THREADS)
        q_s[j / hd][j % hd] = p.q[((size_t)s * p.q_heads + h0 + j / hd) * hd + j % hd];
    if (tid < group) {
        m_s[tid] = -INFINITY;
        l_s[tid] = 0.0f;
    }
    float acc[KS_KERNEL_MAX_GROUP][DIMS_PER_THREAD];
#pragma unroll
    for (int g = 0; g < KS_KERNEL_MAX_GROUP; g++)
#pragma unroll
        for (int j = 0; j < DIMS_PER_THREAD; j++)
            acc[g][j] = 0.0f;
    __syncthreads();

    for (uint32_t i = i0; i < i1; i++) {
        const uint32_t b = sparse ? p.sel[(size_t)s * p.max_sel + i] : i;
        float *blk_ml = ws + w.blk_ml + (((size_t)s * p.q_heads + h0) * cap + i) * 2; // + g * cap * 2
        if (b * bs >= len || (p.skip_missing && is_missing(p, s, b))) {
            if (tid < group) {
                blk_ml[(size_t)tid * cap * 2] = -INFINITY;
                blk_ml[(size_t)tid * cap * 2 + 1] = 0.0f;
            }
            continue; // uniform over the thread block: b is
        }
        const uint32_t page = p.block_table[(size_t)s * p.max_blocks + b];
        const uint32_t ntok = min(bs, len - b * bs);
        const size_t sc_at = (size_t)page * p.kv_heads + kvh;
        const size_t base = ((size_t)page * bs * p.kv_heads + kvh) * hd; // token 0 of this head

        for (uint32_t t = warp; t < ntok; t += ATTEND_WARPS) {
            float kr[DIMS_PER_LANE];
#pragma unroll
            for (int j = 0; j < DIMS_PER_LANE; j++) {
                uint32_t d = lane + 32 * j;
                kr[j] = d < hd ? kv_load<I8>::k(p, base + (size_t)t * p.kv_heads * hd + d, sc_at) : 0.0f;
            }
            for (uint32_t g = 0; g < group; g++) {
                float part = 0.0f;
#pragma unroll
                for (int j = 0; j < DIMS_PER_LANE; j++) {
                    uint32_t d = lane + 32 * j;
                    if (d < hd)
                        part += q_s[g][d] * kr[j];
                }
                float dot = ks_warp_sum(part);
                if (lane == 0)
                    p_s[g][t] = dot * p.scale;
            }
        }
        __syncthreads();

        for (uint32_t g = warp; g < group; g += ATTEND_WARPS) {
            float m = -INFINITY;
            for (uint32_t t = lane; t < ntok; t += 32)
                m = fmaxf(m, p_s[g][t]);
            m = ks_warp_max(m);
            float l = 0.0f;
            for (uint32_t t = lane; t < ntok; t += 32) {
                float e = ks_exp_from(p_s[g][t], m);
                p_s[g][t] = e;
                l += e;
            }
            l = ks_warp_sum(l);
            if (lane == 0) {
                bm_s[g] = m;
                bl_s[g] = l;
                blk_ml[(size_t)g * cap * 2] = m;
                blk_ml[(size_t)g * cap * 2 + 1] = l;
            }
        }
        __syncthreads();

        float pv[KS_KERNEL_MAX_GROUP][DIMS_PER_THREAD];
#pragma unroll
        for (int g = 0; g < KS_KERNEL_MAX_GROUP; g++)
#pragma unroll
            for (int j = 0; j < DIMS_PER_THREAD; j++)
                pv[g][j] = 0.0f;
        for (uint32_t t = 0; t < ntok; t++) {
#pragma unroll
            for (int j = 0; j < DIMS_PER_THREAD; j++) {
                uint32_t d = tid + ATTEND_THREADS * j;
                if (d >= hd)
                    continue;
                float v = kv_load<I8>::v(p, base + (size_t)t * p.kv_heads * hd + d, sc_at);
#pragma unroll
                for (int g = 0; g < KS_KERNEL_MAX_GROUP; g++)
                    if (g < (int)group)
                        pv[g][j] += p_s[g][t] * v;
            }
        }
#pragma unroll
        for (int g = 0; g < KS_KERNEL_MAX_GROUP; g++) {
            if (g >= (int)group)
                break;
            float m_new = fmaxf(m_s[g], bm_s[g]);
            float alpha = ks_exp_from(m_s[g], m_new), beta = ks_exp_from(bm_s[g], m_new);
#pragma unroll
            for (int j = 0; j < DIMS_PER_THREAD; j++)
                acc[g][j] = acc[g][j] * alpha + beta * pv[g][j];
        }
        __syncthreads(); // every thread has read m_s before it moves
        if (tid < group) {
            float m_new = fmaxf(m_s[tid], bm_s[tid]);
            l_s[tid] = l_s[tid] * ks_exp_from(m_s[tid], m_new) + bl_s[tid] * ks_exp_from(bm_s[tid], m_new);
            m_s[tid] = m_new;
        }
        __syncthreads();
    }

#pragma unroll
    for (int g = 0; g < KS_KERNEL_MAX_GROUP; g++) {
        if (g >= (int)group)
            break;
        size_t sh = ((size_t)s * p.q_heads + h0 + g) * w.n_split + split;
#pragma unroll
        for (int j = 0; j < DIMS_PER_THREAD; j++) {
            uint32_t d = tid + ATTEND_THREADS * j;
            if (d < hd)
                ws[w.part_acc + sh * hd + d] = acc[g][j];
        }
        if (tid == 0) {
            ws[w.part_ml + sh * 2] = m_s[g];
            ws[w.part_ml + sh * 2 + 1] = l_s[g];
        }
    }
}

#define COMBINE_WARPS (KS_COMBINE_THREADS / 32)
// Heads whose final max and sum report() holds in shared memory at a time.
#define REPORT_HEADS 256

// The access report of sequence s, by one thread block: the accessed blocks,
// their masses (from the heads' final max and sum, written by the other
// combine blocks: read past L1), the missing ones compacted in access order
// KS_COMBINE_THREADS at a time (ks_report_slot).
static __device__ void report(const struct ks_decode_params &p, bool sparse, const struct ks_decode_ws &w, uint32_t s)
{
    __shared__ uint32_t counts[COMBINE_WARPS];
    __shared__ float2 head[REPORT_HEADS];
    const uint32_t cap = ks_decode_cap(&p, sparse), n = n_access(p, sparse, s);
    const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const float *ws = (const float *)p.workspace;
    uint32_t base = 0;
    for (uint32_t i0 = 0; i0 < n; i0 += KS_COMBINE_THREADS) {
        const uint32_t i = i0 + tid;
        const uint32_t b = i < n ? (sparse ? p.sel[(size_t)s * p.max_sel + i] : i) : 0;
        if (i < n && p.acc_blocks)
            p.acc_blocks[(size_t)s * p.report_cap + i] = b;
        if (p.acc_mass) {
            // NOTE: the heads' max and sum go to shared memory first, REPORT_HEADS
            // at a time, and the per-head loop is unrolled, so that each
            // thread's loads of its block's figures are in flight together:
            // one after the other (each an L2 round trip) this pass took
            // 24 us on an H200 whatever the batch (ncu, 2026-12-04)
            float mass = 0.0f;
            for (uint32_t h0 = 0; h0 < p.q_heads; h0 += REPORT_HEADS) {
                const uint32_t nh = p.q_heads - h0 < REPORT_HEADS ? p.q_heads - h0 : REPORT_HEADS;
                __syncthreads(); // the last group's heads are read by every thread
                for (uint32_t h = tid; h < nh; h += KS_COMBINE_THREADS) {
                    const size_t sh = (size_t)s * p.q_heads + h0 + h;
                    head[h] = make_float2(__ldcg(ws + w.head_ml + sh * 2), __ldcg(ws + w.head_ml + sh * 2 + 1));
                }
                __syncthreads();
                if (i < n) {
#pragma unroll 8
                    for (uint32_t h = 0; h < nh; h++) {
                        const size_t at = w.blk_ml + (((size_t)s * p.q_heads + h0 + h) * cap + i) * 2;
                        const float bm = ws[at], bl = ws[at + 1];
                        if (head[h].y != 0.0f)
                            mass += bl * ks_exp_from(bm, head[h].x) / head[h].y;
                    }
                }
            }
            if (i < n)
                p.acc_mass[(size_t)s * p.report_cap + i] = mass / (float)p.q_heads;
        }
        const bool miss = i < n && is_missing(p, s, b);
        const uint32_t ballot = __ballot_sync(0xffffffffu, miss);
        if (lane == 0)
            counts[warp] = __popc(ballot);
        __syncthreads();
        if (miss && p.missing)
            p.missing[(size_t)s * p.report_cap + base + ks_report_slot(ballot, lane, counts, warp)] = b;
        for (uint32_t x = 0; x < COMBINE_WARPS; x++)
            base += counts[x];
        __syncthreads(); // every thread has read counts before the next chunk writes them
    }
    if (tid == 0) {
        if (p.n_acc)
            p.n_acc[s] = n;
        if (p.n_missing)
            p.n_missing[s] = base;
    }
}

// Launch: grid (q_heads, n_seqs), block KS_COMBINE_THREADS threads. Block (h, s)
// merges the n_split partials of head h into out and stores the head's max
// and sum; the last of sequence s's q_heads blocks to finish (counted in
// w.arrived, which the attention pass zeroed) then writes its access report.
static __global__ void __launch_bounds__(KS_COMBINE_THREADS)
    combine_report_kernel(struct ks_decode_params p, bool sparse, struct ks_decode_ws w)
{
    __shared__ bool last;
    const uint32_t h = blockIdx.x, s = blockIdx.y;
    float *ws = (float *)p.workspace;
    const size_t sh = ((size_t)s * p.q_heads + h) * w.n_split;
    float m = -INFINITY, l = 0.0f;
    for (uint32_t x = 0; x < w.n_split; x++)
        m = fmaxf(m, ws[w.part_ml + (sh + x) * 2]);
    for (uint32_t x = 0; x < w.n_split; x++)
        l += ws[w.part_ml + (sh + x) * 2 + 1] * ks_exp_from(ws[w.part_ml + (sh + x) * 2], m);
    float *out = p.out + ((size_t)s * p.q_heads + h) * p.head_dim;
    for (uint32_t d = threadIdx.x; d < p.head_dim; d += blockDim.x) {
        float o = 0.0f;
        for (uint32_t x = 0; x < w.n_split; x++)
            o += ws[w.part_acc + (sh + x) * p.head_dim + d] * ks_exp_from(ws[w.part_ml + (sh + x) * 2], m);
        out[d] = l != 0.0f ? o / l : 0.0f; // NaN (a poison read) stays NaN
    }
    if (threadIdx.x == 0) {
        float *hm = ws + w.head_ml + ((size_t)s * p.q_heads + h) * 2;
        hm[0] = m;
        hm[1] = l;
        __threadfence(); // the head's max and sum are visible before this block counts as arrived
        last = atomicAdd((uint32_t *)ws + w.arrived + s, 1u) == p.q_heads - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence(); // the other heads' max and sum, fenced before their arrival, are read after ours
    report(p, sparse, w, s);
}

static int decode_cuda(const struct ks_decode_params *p, bool sparse, bool i8, cudaStream_t stream, const char *name,
                       char *err, size_t len)
{
    if (ks_decode_check(p, sparse, i8) != KS_KERNEL_OK)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "%s: parameters out of range", name);
    if (p->n_seqs == 0)
        return KS_KERNEL_OK;
    if (p->n_seqs > 65535 || p->kv_heads > 65535 || p->q_heads > 65535)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "%s: n_seqs, kv_heads or q_heads above 65535 (grid)",
                              name);
    const struct ks_decode_ws w = ks_decode_ws_layout(p, sparse);
    dim3 grid(w.n_split, p->kv_heads, p->n_seqs);
    if (ks_decode_wide(p, i8))
        KS_CUDA_CHECK(ks_decode_wide_launch(p, sparse, i8, &w, stream), err, len);
    else if (i8)
        attend_kernel<true><<<grid, ATTEND_THREADS, 0, stream>>>(*p, sparse, w);
    else
        attend_kernel<false><<<grid, ATTEND_THREADS, 0, stream>>>(*p, sparse, w);
    KS_CUDA_CHECK_LAUNCH(err, len);
    combine_report_kernel<<<dim3(p->q_heads, p->n_seqs), KS_COMBINE_THREADS, 0, stream>>>(*p, sparse, w);
    KS_CUDA_CHECK_LAUNCH(err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_dense_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err,
                                    size_t len)
{
    return decode_cuda(p, false, false, stream, "ks_dense_decode_cuda", err, len);
}

extern "C" int ks_sparse_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err,
                                     size_t len)
{
    return decode_cuda(p, true, false, stream, "ks_sparse_decode_cuda", err, len);
}

extern "C" int ks_sparse_decode_i8_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err,
                                        size_t len)
{
    return decode_cuda(p, true, true, stream, "ks_sparse_decode_i8_cuda", err, len);
}
