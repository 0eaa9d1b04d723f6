// atomicfile.h - files that appear whole under their name, or not at all.
//
// A file is written to a temporary sibling, PATH.part-PID (same folder, so
// the rename cannot cross file systems), and renamed over PATH only once it
// is complete: a reader of PATH sees the old file or the new one, never half
// of one, and a failure or a crash leaves PATH as it was. Only a crash can
// leave a PATH.part-* behind; the process id in its name tells whose it was.
// Every way out (commit, abandon, a failed commit) removes the temporary.
#ifndef KS_ATOMICFILE_H
#define KS_ATOMICFILE_H

#include <stddef.h>
#include <stdio.h>

struct ks_atomicfile_params {
    int sync;      // 1: fsync before the rename, so the file survives a power loss once it has its name
    unsigned mode; // permission bits, set as given (no umask); 0: 0666 less the umask, as fopen gives
};

// Caller storage: _open fills it, _commit or _abandon empties it.
struct ks_atomicfile {
    FILE *f;    // the temporary file, for writing; NULL once finished
    char *tmp;  // its name
    char *path; // the name it gets on commit
    int sync;   // from the params
};

// The temporary sibling of path, for files another library writes itself
// (HDF5): "PATH.part-PID" in buf. KS_OK, or KS_EINVAL when it does not fit.
int ks_atomicfile_tmpname(const char *path, char *buf, size_t len);

// Renames the complete file tmp to path; on failure tmp is removed. KS_OK, or
// KS_EIO with the reason in err (len bytes; err may be NULL, here and below).
int ks_atomicfile_rename(const char *tmp, const char *path, char *err, size_t len);

// Creates (or truncates) the temporary sibling of path and opens it as a->f.
// p may be NULL (no sync, mode 0). KS_OK; KS_EIO or KS_ENOMEM with the reason
// in err, a left empty (abandoning it is a no-op).
int ks_atomicfile_open(struct ks_atomicfile *a, const char *path, const struct ks_atomicfile_params *p, char *err,
                       size_t len);

// Flushes (and syncs) the temporary and closes a->f, for a caller that checks
// the finished file by its name (a->tmp) before committing. KS_OK, or KS_EIO
// (a write failed at any point) with the reason in err; a is then still to be
// abandoned.
int ks_atomicfile_finish(struct ks_atomicfile *a, char *err, size_t len);

// Finishes the file unless done, and renames it to its path. KS_OK, or KS_EIO
// with the reason in err and no file left. Either way a is emptied.
int ks_atomicfile_commit(struct ks_atomicfile *a, char *err, size_t len);

// Closes and removes the temporary; a is emptied. An empty a is a no-op.
void ks_atomicfile_abandon(struct ks_atomicfile *a);

#endif
