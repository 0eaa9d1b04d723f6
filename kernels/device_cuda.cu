// device_cuda.cu - the device probe on the CUDA runtime.
//
// Linked against the static runtime, so a missing driver is an error code
// from cudaGetDeviceCount (insufficient driver, no device), never a loader
// failure. Every CUDA call goes through CUDA_CHECK, which writes the call,
// file and line of a failure into the caller's err instead of exiting.
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>

#include "device.h"

static int cuda_check(cudaError_t e, const char *call, const char *file, int line, char *err, size_t len)
{
    if (e == cudaSuccess)
        return 1;
    const char *base = strrchr(file, '/');
    if (err && len)
        snprintf(err, len, "%s:%d: %s: %s", base ? base + 1 : file, line, call, cudaGetErrorString(e));
    // NOTE: the runtime keeps the last error for cudaGetLastError; take it so
    // that a later, unrelated check does not see this one again.
    (void)cudaGetLastError();
    return 0;
}

#define CUDA_CHECK(call, err, len) cuda_check((call), #call, __FILE__, __LINE__, (err), (len))

extern "C" int ks_device_count(char *err, size_t len)
{
    int n = 0;
    if (!CUDA_CHECK(cudaGetDeviceCount(&n), err, len))
        return 0;
    if (n <= 0) {
        if (err && len)
            snprintf(err, len, "cudaGetDeviceCount reported no device");
        return 0;
    }
    return n;
}

extern "C" const char *ks_device_backend(void)
{
    return "cuda";
}
