// fuzz_util.h - what the libFuzzer targets of tests/fuzz/ share: the
// readers under test take file paths, so each input goes to a file.
//
// One folder per process (mkdtemp under $TMPDIR, else /tmp), made on first
// use and removed with everything in it at exit; each input is written to a
// fresh mkstemps file in it and unlinked by the target once read. A target
// that cannot write its input aborts: a fuzz run that tests nothing must not
// pass.
#ifndef KS_FUZZ_UTIL_H
#define KS_FUZZ_UTIL_H

#define _XOPEN_SOURCE 700 // mkdtemp, mkstemps (with _DEFAULT_SOURCE), nftw
#define _DEFAULT_SOURCE

#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[4096];

static int fuzz_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void fuzz_cleanup(void)
{
    if (fuzz_dir[0])
        nftw(fuzz_dir, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

// The process's folder, made once.
static const char *fuzz_folder(void)
{
    if (!fuzz_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/ks_fuzz.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

// Writes data to a new file FOLDER/inXXXXXX<suffix>; its path goes to path.
static void fuzz_write(const uint8_t *data, size_t size, const char *suffix, char *path, size_t len)
{
    snprintf(path, len, "%s/inXXXXXX%s", fuzz_folder(), suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
        perror("fuzz: mkstemps");
        abort();
    }
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            perror("fuzz: write");
            abort();
        }
        off += (size_t)w;
    }
    close(fd);
}

#endif
