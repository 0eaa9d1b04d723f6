// fs.h - folders on the file system: making a path of them (mkdir -p).
//
// A folder that already exists is success, whatever made it; a path that runs
// through or ends in something that is not a folder is an error. Nothing made
// on the way is removed after a failure (as mkdir -p).
#ifndef KS_FS_H
#define KS_FS_H

#include <stddef.h>

// Makes the folder path and the parents it lacks, each created with mode
// (less the umask). KS_OK; KS_EIO with "PATH: cannot create the folder (why)"
// in err (len bytes; err may be NULL) and errno telling why; KS_ENOMEM.
int ks_fs_mkdirs(const char *path, unsigned mode, char *err, size_t len);

#endif
