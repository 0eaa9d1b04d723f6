// progress.c - the progress callback of progress.h.

#include "progress.h"

#include <stdarg.h>
#include <stdio.h>

enum { LINE_LEN = 8192 }; // a line names a directory: room for a long path

void ks_progress_say(const struct ks_progress *p, const char *fmt, ...)
{
    if (!p || !p->fn)
        return;
    char line[LINE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->fn(p->ctx, line);
}

void ks_progress_done(const struct ks_progress *p)
{
    if (p && p->fn)
        p->fn(p->ctx, NULL);
}
