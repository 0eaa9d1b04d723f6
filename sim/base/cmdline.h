// cmdline.h - a command line as one line of text, for records of how a file
// was made (profile sources, reports).
//
// The words are joined with single spaces as given, unquoted: the text is for
// a reader, not for a shell. A line longer than the buffer is cut, and the
// buffer always ends in a NUL.
#ifndef KS_CMDLINE_H
#define KS_CMDLINE_H

#include <stddef.h>

// head (a printf format with its arguments, e.g. "kvstrata %s" and the
// command's name) followed by " ARG" for each of argv[0 .. argc), in buf
// (len >= 1).
void ks_cmdline_format(char *buf, size_t len, int argc, char *const *argv, const char *head, ...)
    __attribute__((format(printf, 5, 6)));

#endif
