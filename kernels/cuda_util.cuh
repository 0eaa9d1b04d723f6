// cuda_util.cuh - what the CUDA kernels share: the checked-call macro, fp16
// loads and warp / block reductions. Internal to kernels/.
//
// KS_CUDA_CHECK(call, err, len) writes "file:line: call: message" into the
// caller's err (kernel.h) and returns the status from the enclosing
// function; a missing device or driver is KS_KERNEL_ENODEV, any other
// failure KS_KERNEL_ECUDA.
#ifndef KS_CUDA_UTIL_CUH
#define KS_CUDA_UTIL_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernel_impl.h"

// The status of the failed call `call` (its source text) at file:line, its
// reason into err.
int ks_cuda_fail(cudaError_t e, const char *call, const char *file, int line, char *err, size_t len);

#define KS_CUDA_CHECK(call, err, len)                                                                                  \
    do {                                                                                                               \
        cudaError_t ks_err_ = (call);                                                                                  \
        if (ks_err_ != cudaSuccess)                                                                                    \
            return ks_cuda_fail(ks_err_, #call, __FILE__, __LINE__, (err), (len));                                     \
    } while (0)

// A launch is checked through the error it leaves behind.
#define KS_CUDA_CHECK_LAUNCH(err, len) KS_CUDA_CHECK(cudaGetLastError(), err, len)

static __device__ __forceinline__ float ks_h2f(uint16_t bits)
{
    return __half2float(__ushort_as_half(bits));
}

static __device__ __forceinline__ float ks_warp_sum(float x)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

static __device__ __forceinline__ float ks_warp_max(float x)
{
    for (int o = 16; o > 0; o >>= 1)
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

// exp(a - m), 0 when a is -inf (an empty block or split), even if m is too.
static __device__ __forceinline__ float ks_exp_from(float a, float m)
{
    return a == -INFINITY ? 0.0f : expf(a - m);
}

#endif
