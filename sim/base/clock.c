// clock.c - the monotonic clock in seconds (see clock.h).
#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "clock.h"

#include <time.h>

double ks_clock_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
