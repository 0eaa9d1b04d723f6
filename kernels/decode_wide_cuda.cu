// decode_wide_cuda.cu - the attention pass of the CUDA decode, built for bandwidth.
//
// The same job, grid and workspace as attend_kernel in decode_cuda.cu (whose
// combine-and-report launch follows either), taken when ks_decode_wide(p)
// holds (decode_wide.h): rows of whole 16-byte vectors. What it does to keep
// HBM busy:
//   - K and V rows are read as 16-byte vectors (ld.global.nc.v4), four threads
//     per token row, 32 token slots per chunk; every K and V load of a chunk
//     is issued into registers before the first one is used;
//   - the pages, token counts and int8 scales of the split's entries are read
//     once, before the first chunk, so no chunk waits on sel -> block_table;
//   - G (the group, rounded up to a power of two; heads past the real group
//     are masked) and NVL (vectors per thread per row) are template
//     parameters: registers and shared memory are sized for them, not for
//     the limits;
//   - V goes through shared memory, converted to fp32 once by the thread that
//     loaded it, so that a thread accumulates HPT heads x VEC dims of the
//     output (not a token's worth of every head) and no element is converted
//     once per head group.
// The arithmetic (vector conversion, chunk walk, online softmax) is in
// decode_wide.h, where the host test test_kernel_wide.c runs it.
#include "cuda_util.cuh"
#include "decode_wide.h"

#define WIDE_THREADS 128
#define WIDE_WARPS (WIDE_THREADS / 32)
#define WIDE_MAX_ENTRIES 256 // entries per split, ks_decode_split_blocks(1)

static_assert(WIDE_THREADS == KS_WIDE_LANES * KS_WIDE_SLOTS, "one thread per (slot, lane) in the K step");
static_assert(KS_WIDE_SLOTS == 32, "the softmax step gives each slot a lane of a warp");

// The shape of one instantiation: G query heads per KV head (a power of two,
// <= 16), I8 for the int8 cache, NVL 16-byte vectors per thread per row.
template <int G, bool I8, int NVL> struct wide_shape {
    static constexpr int VEC = I8 ? 16 : 8;          // values per vector
    static constexpr int COLS = KS_WIDE_LANES * NVL; // vectors per row there is room for
    static constexpr int HDC = COLS * VEC;           // head_dim capacity
    static constexpr int ROWS = WIDE_THREADS / COLS; // V step: threads per column...
    static constexpr int RG = G < ROWS ? G : ROWS;   // ...split into RG head groups
    static constexpr int HPT = G / RG;               // of HPT heads each
    static constexpr int RT = ROWS / RG;             // and RT token phases
    static constexpr int SPT = KS_WIDE_SLOTS / RT;   // of SPT consecutive slots
    static constexpr int WV = SPT < 4 ? SPT : 4;     // weights read at once
    static constexpr int HB = G < 8 ? G : 8;         // K step: heads per pass
    // A V row in shared memory: fp32, float4 q of vector c at (q * COLS + c)
    // * 4, so that a quarter-warp's 16-byte reads and writes are contiguous;
    // 16 floats of padding make rows 64 bytes off a multiple of 128, so the
    // two rows a quarter-warp writes fall on disjoint banks.
    static constexpr int VROW = HDC + 16;
    static constexpr int V_FLOATS = KS_WIDE_SLOTS * VROW;
    static constexpr int RED_FLOATS = RT * G * HDC; // the token phases' partial outputs, at the end
    static constexpr int BUF = V_FLOATS > RED_FLOATS ? V_FLOATS : RED_FLOATS;
    // Thread blocks per SM the registers must allow: 4 (<= 128 registers)
    // keep 64 KB of chunks per SM where a chunk is 16 KB, over twice what DRAM
    // latency needs in flight (README, "The wide decode kernel"); 2 where a
    // chunk is 32 KB (head_dim 256, fp16)
    static constexpr int CHUNK_BYTES = KS_WIDE_SLOTS * 2 * HDC * (I8 ? 1 : 2);
    static constexpr int MIN_BLOCKS = CHUNK_BYTES > 16384 ? 2 : 4;
};

// The kernel's dynamic shared memory (the V rows can take 35 KB, past the
// 48 KB a kernel's static shared memory may hold with q at head_dim 256).
extern __shared__ float4 wide_dyn[];

static __device__ __forceinline__ void unpack(const uint4 &v, float *x, bool i8)
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    if (i8)
        ks_wide_i8x16(w, x);
    else
        ks_wide_f16x8(w, x);
}

// Launch: grid (n_split, kv_heads, n_seqs), block WIDE_THREADS threads, as
// attend_kernel. Block (x, h, s) attends the query heads of KV head h of
// sequence s over accessed entries [x * per, (x + 1) * per), per =
// ks_decode_split_blocks(block_size), and writes their report pairs (blk_ml),
// its partial output (part_acc) and its max and sum (part_ml).
// Thread roles: K step, thread t loads and dots vectors t % 4, t % 4 + 4, ...
// of slot t / 4's row; softmax step, warp w takes heads w, w + 4, ..., lane i
// slot i; V step, thread t owns column t % COLS (VEC dims) of HPT heads and
// the slots of one token phase.
template <int G, bool I8, int NVL>
static __global__ void __launch_bounds__(WIDE_THREADS, wide_shape<G, I8, NVL>::MIN_BLOCKS)
    attend_wide_kernel(struct ks_decode_params p, bool sparse, struct ks_decode_ws w)
// p: device pointers, shaped as in decode.h; w: offsets into p.workspace
{
    using S = wide_shape<G, I8, NVL>;
    __shared__ __align__(16) float q_s[G][S::HDC];     // zero past head_dim and the group
    __shared__ __align__(16) float p_s[G][KS_WIDE_SLOTS]; // logits, then weights
    __shared__ float alpha_s[G];                       // rescale of the running output
    __shared__ uint32_t e_page[WIDE_MAX_ENTRIES], e_ntok[WIDE_MAX_ENTRIES]; // ntok 0: not read
    __shared__ float e_ks[I8 ? WIDE_MAX_ENTRIES : 1];  // k_scale x p.scale
    __shared__ float e_vs[I8 ? WIDE_MAX_ENTRIES : 1];  // v_scale
    float *buf = reinterpret_cast<float *>(wide_dyn); // S::BUF floats: V rows [slot][VROW]; at the end, partial outputs

    const uint32_t split = blockIdx.x, kvh = blockIdx.y, s = blockIdx.z;
    const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const uint32_t group = p.q_heads / p.kv_heads, hd = p.head_dim, bs = p.block_size, len = p.seq_len[s];
    const uint32_t h0 = kvh * group, cap = ks_decode_cap(&p, sparse), per = ks_decode_split_blocks(bs);
    const uint32_t n = sparse ? p.n_sel[s] : ks_ceil_div(len, bs);
    const uint32_t i0 = split * per, n_e = n > i0 ? min(n - i0, per) : 0;
    float *ws = (float *)p.workspace;
    float *blk_ml = ws + w.blk_ml + (((size_t)s * p.q_heads + h0) * cap + i0) * 2; // [g * cap + e][2]
    if (split == 0 && kvh == 0 && tid == 0)
        ((uint32_t *)ws)[w.arrived + s] = 0; // combine_report_kernel (decode_cuda.cu) counts on it

    for (uint32_t e = tid; e < n_e; e += WIDE_THREADS) {
        const uint32_t b = sparse ? p.sel[(size_t)s * p.max_sel + i0 + e] : i0 + e;
        uint32_t ntok = 0;
        if (b * bs < len && !(p.skip_missing && p.resident && !p.resident[(size_t)s * p.max_blocks + b])) {
            const uint32_t page = p.block_table[(size_t)s * p.max_blocks + b];
            ntok = min(bs, len - b * bs);
            e_page[e] = page;
            if (I8) {
                e_ks[e] = p.k_scale[(size_t)page * p.kv_heads + kvh] * p.scale;
                e_vs[e] = p.v_scale[(size_t)page * p.kv_heads + kvh];
            }
        } else {
            for (uint32_t g = 0; g < group; g++) {
                blk_ml[((size_t)g * cap + e) * 2] = -INFINITY;
                blk_ml[((size_t)g * cap + e) * 2 + 1] = 0.0f;
            }
        }
        e_ntok[e] = ntok;
    }
    for (uint32_t j = tid; j < G * S::HDC; j += WIDE_THREADS) {
        const uint32_t g = j / S::HDC, d = j % S::HDC;
        q_s[g][d] = g < group && d < hd ? p.q[((size_t)s * p.q_heads + h0 + g) * hd + d] : 0.0f;
    }
    __syncthreads();

    // K step: vector lane kl of slot kr. Row bytes and vectors per row:
    const uint32_t kl = tid % KS_WIDE_LANES, kr = tid / KS_WIDE_LANES;
    const size_t row_bytes = (size_t)hd * (I8 ? 1 : 2), tok_bytes = row_bytes * p.kv_heads;
    const char *kbase = I8 ? (const char *)p.k_i8 : (const char *)p.k;
    const char *vbase = I8 ? (const char *)p.v_i8 : (const char *)p.v;
    // V step: column vc, head group vg, token phase vt
    const uint32_t vc = tid % S::COLS, vg = tid / S::COLS % S::RG, vt = tid / S::COLS / S::RG;

    float acc[S::HPT][S::VEC];
#pragma unroll
    for (int h = 0; h < S::HPT; h++)
#pragma unroll
        for (int k = 0; k < S::VEC; k++)
            acc[h][k] = 0.0f;
    constexpr int GW = (G + WIDE_WARPS - 1) / WIDE_WARPS; // heads per warp in the softmax step
    float m_run[GW], l_run[GW], rep_m[GW], rep_l[GW];     // running max and sum; report pair of a long block
#pragma unroll
    for (int i = 0; i < GW; i++) {
        m_run[i] = rep_m[i] = -INFINITY;
        l_run[i] = rep_l[i] = 0.0f;
    }

    uint32_t e0, t0;
    ks_wide_first(bs, e_ntok, n_e, &e0, &t0);
    while (e0 < n_e) { // uniform: every thread walks the same chunks
        uint32_t e, t;
        const bool valid = ks_wide_slot(bs, e_ntok, n_e, e0, t0, kr, &e, &t);
        uint4 kv[NVL], vv[NVL];
#pragma unroll
        for (int i = 0; i < NVL; i++)
            kv[i] = vv[i] = make_uint4(0, 0, 0, 0);
        if (valid) {
            const size_t at = ((size_t)e_page[e] * bs + t) * tok_bytes + kvh * row_bytes;
            const uint4 *kp = (const uint4 *)(kbase + at), *vp = (const uint4 *)(vbase + at);
            const uint32_t nv = hd / S::VEC;
#pragma unroll
            for (int i = 0; i < NVL; i++)
                if (kl + KS_WIDE_LANES * i < nv)
                    kv[i] = __ldg(kp + kl + KS_WIDE_LANES * i);
#pragma unroll
            for (int i = 0; i < NVL; i++)
                if (kl + KS_WIDE_LANES * i < nv)
                    vv[i] = __ldg(vp + kl + KS_WIDE_LANES * i);
        }
        __syncthreads(); // the previous chunk's V step is done with buf and p_s

        const float kscale = !valid ? 0.0f : I8 ? e_ks[e] : p.scale;
        // NOTE: heads in batches of HB: all G at once keeps G partial dots
        // and their q loads live (near 200 registers at G = 16, head_dim 128)
#pragma unroll 1
        for (uint32_t gb = 0; gb < G; gb += S::HB) {
            float part[S::HB];
#pragma unroll
            for (int g = 0; g < S::HB; g++)
                part[g] = 0.0f;
#pragma unroll
            for (int i = 0; i < NVL; i++) {
                const uint32_t c = kl + KS_WIDE_LANES * i;
                float x[S::VEC];
                unpack(kv[i], x, I8);
#pragma unroll
                for (int g = 0; g < S::HB; g++) {
                    const float4 *q4 = reinterpret_cast<const float4 *>(&q_s[gb + g][c * S::VEC]);
#pragma unroll
                    for (int k = 0; k < S::VEC / 4; k++) {
                        const float4 q = q4[k];
                        part[g] = fmaf(q.x, x[4 * k], part[g]);
                        part[g] = fmaf(q.y, x[4 * k + 1], part[g]);
                        part[g] = fmaf(q.z, x[4 * k + 2], part[g]);
                        part[g] = fmaf(q.w, x[4 * k + 3], part[g]);
                    }
                }
            }
#pragma unroll
            for (int g = 0; g < S::HB; g++) {
                part[g] += __shfl_xor_sync(0xffffffffu, part[g], 1);
                part[g] += __shfl_xor_sync(0xffffffffu, part[g], 2);
                if (g % KS_WIDE_LANES == (int)kl && gb + g < group)
                    p_s[gb + g][kr] = valid ? part[g] * kscale : -INFINITY;
            }
        }
#pragma unroll
        for (int i = 0; i < NVL; i++) { // zeros where nothing was loaded
            float x[S::VEC];
            unpack(vv[i], x, I8);
#pragma unroll
            for (int q = 0; q < S::VEC / 4; q++)
                *reinterpret_cast<float4 *>(&buf[kr * S::VROW + (q * S::COLS + kl + KS_WIDE_LANES * i) * 4]) =
                    make_float4(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
        }
        __syncthreads();

        // softmax step: warp `warp` takes heads warp + 4 gi, lane = slot
#pragma unroll
        for (int gi = 0; gi < GW; gi++) {
            const uint32_t g = warp + WIDE_WARPS * gi;
            if (g >= group)
                break;
            const float x = p_s[g][lane];
            const float alpha = ks_wide_rescale(&m_run[gi], &l_run[gi], fmaxf(m_run[gi], ks_warp_max(x)));
            float wt = ks_wide_exp_from(x, m_run[gi]);
            l_run[gi] += ks_warp_sum(wt);
            // the sum over each entry's slots lands on the entry's first slot
            float seg = wt;
            const uint32_t end = ks_wide_seg_end(bs, lane);
            for (uint32_t o = 1; o < KS_WIDE_SLOTS; o <<= 1) {
                const float y = __shfl_down_sync(0xffffffffu, seg, o);
                if (lane + o < end)
                    seg += y;
            }
            uint32_t se, st;
            const bool has = ks_wide_slot(bs, e_ntok, n_e, e0, t0, lane, &se, &st);
            if (bs <= KS_WIDE_SLOTS && lane % bs == 0 && has) {
                blk_ml[((size_t)g * cap + se) * 2] = m_run[gi];
                blk_ml[((size_t)g * cap + se) * 2 + 1] = seg;
            } else if (bs > KS_WIDE_SLOTS && lane == 0) { // one block over several chunks
                if (t0 == 0) {
                    rep_m[gi] = -INFINITY;
                    rep_l[gi] = 0.0f;
                }
                ks_wide_rescale(&rep_m[gi], &rep_l[gi], m_run[gi]);
                rep_l[gi] += seg;
                if (t0 + KS_WIDE_SLOTS >= e_ntok[e0]) {
                    blk_ml[((size_t)g * cap + e0) * 2] = rep_m[gi];
                    blk_ml[((size_t)g * cap + e0) * 2 + 1] = rep_l[gi];
                }
            }
            if (I8)
                wt *= has ? e_vs[se] : 0.0f; // V's page scale folded into the weight
            p_s[g][lane] = wt;
            if (lane == 0)
                alpha_s[g] = alpha;
        }
        __syncthreads();

        // V step
#pragma unroll
        for (int h = 0; h < S::HPT; h++) {
            const uint32_t g = vg * S::HPT + h;
            const float a = g < group ? alpha_s[g] : 0.0f;
#pragma unroll
            for (int k = 0; k < S::VEC; k++)
                acc[h][k] *= a;
        }
#pragma unroll 1
        for (int r0 = 0; r0 < S::SPT; r0 += S::WV) {
            const uint32_t r = vt * S::SPT + r0;
            float wt[S::HPT][S::WV];
#pragma unroll
            for (int h = 0; h < S::HPT; h++) {
                const uint32_t g = vg * S::HPT + h;
                if constexpr (S::WV == 4) {
                    const float4 f = g < group ? *reinterpret_cast<const float4 *>(&p_s[g][r])
                                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    wt[h][0] = f.x, wt[h][1] = f.y, wt[h][2] = f.z, wt[h][3] = f.w;
                } else {
#pragma unroll
                    for (int k = 0; k < S::WV; k++)
                        wt[h][k] = g < group ? p_s[g][r + k] : 0.0f;
                }
            }
#pragma unroll
            for (int k = 0; k < S::WV; k++)
#pragma unroll
                for (int q = 0; q < S::VEC / 4; q++) {
                    const float4 v =
                        *reinterpret_cast<const float4 *>(&buf[(r + k) * S::VROW + (q * S::COLS + vc) * 4]);
#pragma unroll
                    for (int h = 0; h < S::HPT; h++) {
                        acc[h][4 * q] += wt[h][k] * v.x;
                        acc[h][4 * q + 1] += wt[h][k] * v.y;
                        acc[h][4 * q + 2] += wt[h][k] * v.z;
                        acc[h][4 * q + 3] += wt[h][k] * v.w;
                    }
                }
        }
        ks_wide_next(bs, e_ntok, n_e, &e0, &t0);
    }

    // the token phases' partial outputs summed through shared memory
    __syncthreads(); // every V step is done with buf
    float *red = buf; // [RT][G][HDC]
#pragma unroll
    for (int h = 0; h < S::HPT; h++)
#pragma unroll
        for (int k = 0; k < S::VEC; k++)
            red[((size_t)vt * G + vg * S::HPT + h) * S::HDC + vc * S::VEC + k] = acc[h][k];
    __syncthreads();
    for (uint32_t j = tid; j < group * hd; j += WIDE_THREADS) {
        const uint32_t g = j / hd, d = j % hd;
        float o = 0.0f;
#pragma unroll
        for (int r = 0; r < S::RT; r++)
            o += red[((size_t)r * G + g) * S::HDC + d];
        ws[w.part_acc + (((size_t)s * p.q_heads + h0 + g) * w.n_split + split) * hd + d] = o;
    }
#pragma unroll
    for (int gi = 0; gi < GW; gi++) {
        const uint32_t g = warp + WIDE_WARPS * gi;
        if (g < group && lane == 0) {
            const size_t sh = ((size_t)s * p.q_heads + h0 + g) * w.n_split + split;
            ws[w.part_ml + sh * 2] = m_run[gi];
            ws[w.part_ml + sh * 2 + 1] = l_run[gi];
        }
    }
}

template <int G, bool I8, int NVL>
static cudaError_t launch(dim3 grid, cudaStream_t stream, const struct ks_decode_params *p, bool sparse,
                          const struct ks_decode_ws *w)
{
    const int bytes = wide_shape<G, I8, NVL>::BUF * (int)sizeof(float);
    // NOTE: set on every call, not once: it costs a host call, and a flag
    // kept between calls would be state shared by the caller's threads
    cudaError_t e = cudaFuncSetAttribute(attend_wide_kernel<G, I8, NVL>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
        return e;
    attend_wide_kernel<G, I8, NVL><<<grid, WIDE_THREADS, bytes, stream>>>(*p, sparse, *w);
    return cudaGetLastError();
}

template <bool I8, int NVL>
static cudaError_t launch_group(uint32_t g, dim3 grid, cudaStream_t stream, const struct ks_decode_params *p,
                                bool sparse, const struct ks_decode_ws *w)
{
    switch (g) {
    case 1:
        return launch<1, I8, NVL>(grid, stream, p, sparse, w);
    case 2:
        return launch<2, I8, NVL>(grid, stream, p, sparse, w);
    case 4:
        return launch<4, I8, NVL>(grid, stream, p, sparse, w);
    case 8:
        return launch<8, I8, NVL>(grid, stream, p, sparse, w);
    default:
        return launch<16, I8, NVL>(grid, stream, p, sparse, w);
    }
}

cudaError_t ks_decode_wide_launch(const struct ks_decode_params *p, bool sparse, bool i8,
                                  const struct ks_decode_ws *w, struct CUstream_st *stream)
{
    const uint32_t g = ks_wide_pow2(p->q_heads / p->kv_heads);
    const uint32_t nvl = ks_wide_pow2(ks_ceil_div(p->head_dim / (i8 ? 16 : 8), KS_WIDE_LANES));
    const dim3 grid(w->n_split, p->kv_heads, p->n_seqs);
    if (i8) {
        switch (nvl) {
        case 1:
            return launch_group<true, 1>(g, grid, stream, p, sparse, w);
        case 2:
            return launch_group<true, 2>(g, grid, stream, p, sparse, w);
        default:
            return launch_group<true, 4>(g, grid, stream, p, sparse, w);
        }
    }
    switch (nvl) {
    case 1:
        return launch_group<false, 1>(g, grid, stream, p, sparse, w);
    case 2:
        return launch_group<false, 2>(g, grid, stream, p, sparse, w);
    case 4:
        return launch_group<false, 4>(g, grid, stream, p, sparse, w);
    default:
        return launch_group<false, 8>(g, grid, stream, p, sparse, w);
    }
}
