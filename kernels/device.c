// device.c - the device probe of a build without CUDA: never any device.
#include "device.h"

int ks_device_count(void)
{
    return 0;
}

const char *ks_device_backend(void)
{
    return "none";
}

const char *ks_device_error(void)
{
    return "CUDA kernels not compiled in";
}
