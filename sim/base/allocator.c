// allocator.c - which malloc this process runs on (see allocator.h).
#include "allocator.h"

#include <stdio.h>

// jemalloc's control interface, present only where jemalloc is: a weak
// reference is NULL otherwise.
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) __attribute__((weak));

const char *ks_allocator(char *buf, size_t len)
{
    const char *version = NULL;
    size_t sz = sizeof version;
    if (mallctl && mallctl("version", &version, &sz, NULL, 0) == 0 && version)
        snprintf(buf, len, "jemalloc %s", version);
    else
        snprintf(buf, len, "C library");
    return buf;
}
