// fs.c - making a path of folders (see fs.h).
//
// Every prefix ending before a '/' is made in turn and EEXIST is passed
// over, since that is also what mkdir answers for an existing file: the
// mkdir below it then fails with ENOTDIR, and the last component is checked
// with stat.
#define _POSIX_C_SOURCE 200809L // mkdir, strdup

#include "fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "status.h"

static int failed(const char *path, int why, char *err, size_t len)
{
    if (err)
        snprintf(err, len, "%s: cannot create the folder (%s)", path, strerror(why));
    errno = why;
    return KS_EIO;
}

int ks_fs_mkdirs(const char *path, unsigned mode, char *err, size_t len)
{
    if (!*path)
        return failed(path, ENOENT, err, len);
    char *p = strdup(path);
    if (!p) {
        if (err)
            snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    for (char *c = p + 1;; c++) { // from p + 1: a leading '/' is the root
        if (*c != '/' && *c != '\0')
            continue;
        char was = *c;
        *c = '\0';
        if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
            int why = errno;
            free(p);
            return failed(path, why, err, len);
        }
        if (!(*c = was))
            break;
    }
    free(p);
    struct stat st;
    if (stat(path, &st) != 0)
        return failed(path, errno, err, len);
    if (!S_ISDIR(st.st_mode))
        return failed(path, ENOTDIR, err, len);
    return KS_OK;
}
