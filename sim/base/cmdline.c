// cmdline.c - a command line as one line of text (see cmdline.h).
#include "cmdline.h"

#include <stdarg.h>
#include <stdio.h>

void ks_cmdline_format(char *buf, size_t len, int argc, char *const *argv, const char *head, ...)
{
    va_list ap;
    va_start(ap, head);
    int w = vsnprintf(buf, len, head, ap);
    va_end(ap);
    size_t n = w > 0 ? (size_t)w : 0; // may pass len: the text was cut, nothing more fits
    for (int i = 0; i < argc && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, " %s", argv[i]);
}
