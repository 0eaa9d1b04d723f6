// device.c - the device probe of a build without CUDA: never any device.
#include "device.h"

#include <stdio.h>

int ks_device_count(char *err, size_t len)
{
    if (err && len)
        snprintf(err, len, "CUDA kernels not compiled in");
    return 0;
}

const char *ks_device_backend(void)
{
    return "none";
}
