// device_cuda.cu - the device probe on the CUDA runtime.
//
// Linked against the static runtime, so a missing driver is an error code
// from cudaGetDeviceCount (insufficient driver, no device), never a loader
// failure. Every CUDA call goes through CUDA_CHECK, which records the call,
// file and line of a failure for ks_device_error instead of exiting.
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>

#include "device.h"

static char last_error[256];

static int cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return 1;
    const char *base = strrchr(file, '/');
    snprintf(last_error, sizeof last_error, "%s:%d: %s: %s", base ? base + 1 : file, line, call,
             cudaGetErrorString(err));
    // NOTE: the runtime keeps the last error for cudaGetLastError; take it so
    // that a later, unrelated check does not see this one again.
    (void)cudaGetLastError();
    return 0;
}

#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)

extern "C" int ks_device_count(void)
{
    int n = 0;
    if (!CUDA_CHECK(cudaGetDeviceCount(&n)))
        return 0;
    if (n <= 0) {
        snprintf(last_error, sizeof last_error, "cudaGetDeviceCount reported no device");
        return 0;
    }
    last_error[0] = '\0';
    return n;
}

extern "C" const char *ks_device_backend(void)
{
    return "cuda";
}

extern "C" const char *ks_device_error(void)
{
    return last_error;
}
