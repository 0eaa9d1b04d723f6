// status.c - names of status codes and the always-on assertion.
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *ks_status_str(int status)
{
    switch (status) {
    case KS_OK: return "ok";
    case KS_EINVAL: return "invalid argument";
    case KS_ENOSPC: return "no free page in any tier";
    case KS_ESTALE: return "stale migration generation";
    case KS_ESTATE: return "operation not allowed in this state";
    case KS_ENOMEM: return "out of memory";
    case KS_ECORRUPT: return "invariant broken";
    case KS_EIO: return "input/output error";
    default: return "unknown status";
    }
}

int ks_corrupt(char *msg, size_t len, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return KS_ECORRUPT;
}

void ks_assert_fail(const char *expr, const char *file, int line)
{
    fflush(stdout);
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}
