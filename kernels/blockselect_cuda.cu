// blockselect_cuda.cu - block scoring and top-k selection on the GPU.
//
// Two launches: score_kernel writes the score of every full block into the
// workspace, then topk_kernel finds, per sequence and output, the top_k-th
// largest score key by a 4-pass radix select (8 bits a pass, histogram in
// shared memory) and writes the kept blocks in ascending order with block-wide
// prefix sums; ties at the threshold go to the lower indices, as in the
// reference.
#include "cuda_util.cuh"

#define SCORE_WARPS 4
#define TOPK_THREADS 256

// Launch: grid (ceil(max_blocks / SCORE_WARPS), n_seqs), block 32 *
// SCORE_WARPS threads; each warp scores one logical block b of sequence s
// for every output (lanes split the head dimension).
static __global__ void score_kernel(struct ks_block_select_params p, float *__restrict__ ws_score)
// ws_score: [n_seqs][n_out][max_blocks]; p's pointers are device pointers, shaped as in blockselect.h
{
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t s = blockIdx.y, b = blockIdx.x * SCORE_WARPS + warp;
    if (b >= p.seq_len[s] / p.block_size) // not full: no summary
        return;
    const uint32_t group = p.q_heads / p.kv_heads, outs = ks_select_outs(&p), hd = p.head_dim;
    const uint32_t slot = p.sum_table[(size_t)s * p.max_blocks + b];
    const float *q = p.q + (size_t)s * p.q_heads * hd;
    float acc = 0.0f;
    for (uint32_t h = 0; h < p.q_heads; h++) {
        const size_t o = ((size_t)slot * p.kv_heads + h / group) * hd;
        float part = 0.0f;
        for (uint32_t d = lane; d < hd; d += 32) {
            float qd = q[(size_t)h * hd + d];
            if (p.score_kind == KS_SCORE_QUEST) {
                float lo = qd * p.kmin[o + d], hi = qd * p.kmax[o + d];
                part += lo > hi ? lo : hi;
            } else {
                part += qd * p.kmean[o + d];
            }
        }
        float x = ks_warp_sum(part);
        bool first = p.mode == KS_SELECT_HEAD ? h % group == 0 : h == 0;
        bool last = p.mode == KS_SELECT_HEAD ? h % group == group - 1 : h == p.q_heads - 1;
        acc = first ? x : p.reduce == KS_REDUCE_SUM ? acc + x : (x > acc ? x : acc);
        if (last && lane == 0) {
            uint32_t out = p.mode == KS_SELECT_HEAD ? h / group : 0;
            size_t at = ((size_t)s * outs + out) * p.max_blocks + b;
            ws_score[at] = acc;
            if (p.score)
                p.score[at] = acc;
        }
    }
}

// Exclusive prefix sum of v over the thread block (TOPK_THREADS threads, all
// calling); *total receives the sum. sh: [32] shared scratch.
static __device__ uint32_t block_scan(uint32_t v, uint32_t *total, uint32_t *sh)
{
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = TOPK_THREADS / 32;
    uint32_t x = v;
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= (uint32_t)o)
            x += y;
    }
    if (lane == 31)
        sh[warp] = x;
    __syncthreads();
    if (warp == 0) {
        uint32_t w = lane < warps ? sh[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            uint32_t y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= (uint32_t)o)
                w += y;
        }
        __syncwarp();
        sh[lane] = w;
    }
    __syncthreads();
    uint32_t excl = x - v + (warp ? sh[warp - 1] : 0);
    *total = sh[warps - 1];
    __syncthreads(); // sh is reused by the next call
    return excl;
}

// Launch: grid (n_out, n_seqs), block TOPK_THREADS threads; block (o, s)
// writes sel row (s, o) and its n_sel entry.
static __global__ void __launch_bounds__(TOPK_THREADS)
    topk_kernel(struct ks_block_select_params p, const float *__restrict__ ws_score)
// ws_score: [n_seqs][n_out][max_blocks], from score_kernel
{
    __shared__ uint32_t hist[256];
    __shared__ uint32_t scan_sh[32];
    __shared__ uint32_t pick[2]; // digit, remaining
    const uint32_t o = blockIdx.x, s = blockIdx.y, outs = ks_select_outs(&p), tid = threadIdx.x;
    const size_t row = (size_t)s * outs + o;
    const float *sc = ws_score + row * p.max_blocks;
    uint32_t nb, lo, hi;
    ks_select_range(p.seq_len[s], p.block_size, p.n_sink, p.n_window, &nb, &lo, &hi);
    const bool all = hi - lo <= p.top_k;
    // Keep keys > thr and the first take_eq keys == thr in index order.
    uint32_t thr = 0, take_eq = 0;
    if (!all && p.top_k == 0) {
        thr = 0xffffffffu; // above every key (NaN is 0, +inf is 0xff800000)
    } else if (!all) {
        uint32_t prefix = 0, mask = 0, remaining = p.top_k;
        for (int shift = 24; shift >= 0; shift -= 8) {
            hist[tid] = 0;
            __syncthreads();
            for (uint32_t b = lo + tid; b < hi; b += TOPK_THREADS) {
                uint32_t key = ks_score_key(sc[b]);
                if ((key & mask) == prefix)
                    atomicAdd(&hist[(key >> shift) & 255u], 1u);
            }
            __syncthreads();
            if (tid == 0) {
                uint32_t above = 0, d = 255;
                for (;; d--) { // the digit whose bucket holds the remaining-th largest key
                    if (above + hist[d] >= remaining || d == 0)
                        break;
                    above += hist[d];
                }
                pick[0] = d;
                pick[1] = remaining - above;
            }
            __syncthreads();
            prefix |= pick[0] << shift;
            mask |= 255u << shift;
            remaining = pick[1];
            __syncthreads(); // pick and hist are rewritten by the next pass
        }
        thr = prefix;
        take_eq = remaining;
    }
    uint32_t *sel = p.sel + row * p.max_sel;
    uint32_t base_out = 0, base_eq = 0, total;
    for (uint32_t c = 0; c < nb; c += TOPK_THREADS) {
        const uint32_t b = c + tid;
        const bool cand = b < nb && b >= lo && b < hi;
        const uint32_t key = cand && !all ? ks_score_key(sc[b]) : 0;
        const bool eq = cand && !all && key == thr;
        const uint32_t eq_rank = base_eq + block_scan(eq, &total, scan_sh);
        base_eq += total;
        const bool keep = b < nb && (!cand || all || key > thr || (eq && eq_rank < take_eq));
        const uint32_t pos = base_out + block_scan(keep, &total, scan_sh);
        base_out += total;
        if (keep)
            sel[pos] = b;
    }
    if (tid == 0)
        p.n_sel[row] = base_out;
}

extern "C" int ks_block_select_cuda(const struct ks_block_select_params *p, struct CUstream_st *stream, char *err,
                                    size_t len)
{
    if (ks_block_select_check(p) != KS_KERNEL_OK)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_block_select_cuda: parameters out of range");
    if (p->n_seqs == 0)
        return KS_KERNEL_OK;
    if (p->n_seqs > 65535)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_block_select_cuda: n_seqs above 65535 (grid)");
    float *ws_score = (float *)p->workspace;
    if (p->max_blocks) {
        dim3 grid((p->max_blocks + SCORE_WARPS - 1) / SCORE_WARPS, p->n_seqs);
        score_kernel<<<grid, 32 * SCORE_WARPS, 0, stream>>>(*p, ws_score);
        KS_CUDA_CHECK_LAUNCH(err, len);
    }
    topk_kernel<<<dim3(ks_select_outs(p), p->n_seqs), TOPK_THREADS, 0, stream>>>(*p, ws_score);
    KS_CUDA_CHECK_LAUNCH(err, len);
    return KS_KERNEL_OK;
}
