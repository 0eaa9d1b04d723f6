// summary_cuda.cu - block summaries on the GPU: one thread per (block, KV
// head, dimension), walking the block's tokens in order as the reference
// does, so the results match it to the last bit (no contraction applies to
// min, max and a sum).
#include "cuda_util.cuh"

// Launch: grid (n, kv_heads), block 32 * ceil(head_dim / 32) threads; thread
// d of block (i, h) summarises dimension d of KV head h of block i.
static __global__ void summary_kernel(const uint16_t *__restrict__ k, // [n_pages][block_size][kv_heads][head_dim]
                                      const uint32_t *__restrict__ page, // [n]
                                      const uint32_t *__restrict__ slot, // [n]
                                      float *__restrict__ kmin,  // [n_slots][kv_heads][head_dim]
                                      float *__restrict__ kmax,  // [n_slots][kv_heads][head_dim]
                                      float *__restrict__ kmean, // [n_slots][kv_heads][head_dim]
                                      uint32_t block_size, uint32_t kv_heads, uint32_t head_dim)
{
    const uint32_t i = blockIdx.x, h = blockIdx.y, d = threadIdx.x;
    if (d >= head_dim)
        return;
    const size_t row = (size_t)kv_heads * head_dim;
    const uint16_t *src = k + (size_t)page[i] * block_size * row + (size_t)h * head_dim + d;
    float x = ks_h2f(src[0]);
    float mn = x, mx = x, sum = x;
    for (uint32_t t = 1; t < block_size; t++) {
        x = ks_h2f(src[t * row]);
        mn = fminf(mn, x);
        mx = fmaxf(mx, x);
        sum = __fadd_rn(sum, x);
    }
    const size_t o = ((size_t)slot[i] * kv_heads + h) * head_dim + d;
    kmin[o] = mn;
    kmax[o] = mx;
    kmean[o] = __fdiv_rn(sum, (float)block_size);
}

extern "C" int ks_block_summary_cuda(const struct ks_block_summary_params *p, struct CUstream_st *stream, char *err,
                                     size_t len)
{
    if (ks_block_summary_check(p) != KS_KERNEL_OK)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_block_summary_cuda: parameters out of range");
    if (p->n == 0)
        return KS_KERNEL_OK;
    if (p->kv_heads > 65535)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_block_summary_cuda: kv_heads above 65535 (grid)");
    dim3 grid(p->n, p->kv_heads);
    unsigned threads = (p->head_dim + 31) / 32 * 32;
    summary_kernel<<<grid, threads, 0, stream>>>(p->k, p->page, p->slot, p->kmin, p->kmax, p->kmean, p->block_size,
                                                 p->kv_heads, p->head_dim);
    KS_CUDA_CHECK_LAUNCH(err, len);
    return KS_KERNEL_OK;
}
