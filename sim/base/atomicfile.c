// atomicfile.c - write a temporary sibling, then rename (see atomicfile.h).
//
// NOTE: the temporary is named after the process, not made unique with
// mkstemp: a sweep removes what a killed point left by that name
// (sweep_cmd.c), and HDF5 must create its file by name. One process writes
// a given path once at a time, so the name cannot collide.
#define _POSIX_C_SOURCE 200809L // fdopen, fsync, fchmod, strdup

#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status.h"

static int failed(char *err, size_t len, int st, const char *what, const char *path, int why)
{
    if (err)
        snprintf(err, len, "%s: %s (%s)", path, what, strerror(why));
    return st;
}

int ks_atomicfile_tmpname(const char *path, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s.part-%ld", path, (long)getpid());
    return n >= 0 && (size_t)n < len ? KS_OK : KS_EINVAL;
}

int ks_atomicfile_rename(const char *tmp, const char *path, char *err, size_t len)
{
    if (rename(tmp, path) == 0)
        return KS_OK;
    int why = errno;
    unlink(tmp);
    if (err)
        snprintf(err, len, "%s: cannot rename to %s (%s)", tmp, path, strerror(why));
    return KS_EIO;
}

static void empty(struct ks_atomicfile *a)
{
    free(a->tmp);
    free(a->path);
    *a = (struct ks_atomicfile){0};
}

int ks_atomicfile_open(struct ks_atomicfile *a, const char *path, const struct ks_atomicfile_params *p, char *err,
                       size_t len)
{
    *a = (struct ks_atomicfile){.sync = p && p->sync};
    size_t n = strlen(path) + 32;
    if (!(a->path = strdup(path)) || !(a->tmp = malloc(n))) {
        empty(a);
        if (err)
            snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    ks_atomicfile_tmpname(path, a->tmp, n); // fits: 32 bytes hold ".part-" and any pid
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int ok = fd >= 0 && (!p || !p->mode || fchmod(fd, (mode_t)p->mode) == 0) && (a->f = fdopen(fd, "w"));
    if (!ok) {
        int why = errno;
        if (fd >= 0) {
            close(fd);
            unlink(a->tmp);
        }
        failed(err, len, KS_EIO, "cannot create", a->tmp, why);
        empty(a);
        return KS_EIO;
    }
    return KS_OK;
}

int ks_atomicfile_finish(struct ks_atomicfile *a, char *err, size_t len)
{
    if (!a->f)
        return KS_OK;
    int why = 0; // an error a write met earlier left no errno to trust: EIO
    if (fflush(a->f) != 0)
        why = errno;
    else if (ferror(a->f))
        why = EIO;
    else if (a->sync && fsync(fileno(a->f)) != 0)
        why = errno;
    if (fclose(a->f) != 0 && !why)
        why = errno;
    a->f = NULL;
    return why ? failed(err, len, KS_EIO, "cannot write", a->tmp, why) : KS_OK;
}

int ks_atomicfile_commit(struct ks_atomicfile *a, char *err, size_t len)
{
    int st = ks_atomicfile_finish(a, err, len);
    if (st == KS_OK)
        st = ks_atomicfile_rename(a->tmp, a->path, err, len);
    else
        unlink(a->tmp);
    empty(a);
    return st;
}

void ks_atomicfile_abandon(struct ks_atomicfile *a)
{
    if (!a->tmp)
        return;
    if (a->f)
        fclose(a->f);
    unlink(a->tmp);
    empty(a);
}
