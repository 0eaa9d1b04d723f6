// test_fs.c - making a path of folders (sim/base/fs.h): nested folders
// appear, an existing one is fine, a path through or onto a regular file is
// refused with ENOTDIR.
#define _POSIX_C_SOURCE 200809L // mkdtemp, umask

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs.h"
#include "status.h"

static char dir[512];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/fs_XXXXXX", KS_TEST_BINARY_DIR);
    return mkdtemp(dir) ? 0 : -1;
}

// rm -rf of the test folder, through the shell: the test makes the folders
// it removes, under its own build folder.
static int teardown(void **state)
{
    (void)state;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void makes_nested_folders(void **state)
{
    (void)state;
    char p[1024], err[256];
    snprintf(p, sizeof p, "%s/a/b/c/d", dir);
    assert_int_equal(ks_fs_mkdirs(p, 0777, err, sizeof err), KS_OK);
    assert_true(is_dir(p));
    snprintf(p, sizeof p, "%s/a/b", dir);
    assert_true(is_dir(p));
    // again: it exists, which is fine
    snprintf(p, sizeof p, "%s/a/b/c/d", dir);
    assert_int_equal(ks_fs_mkdirs(p, 0777, err, sizeof err), KS_OK);
    // doubled and trailing slashes
    snprintf(p, sizeof p, "%s/x//y/", dir);
    assert_int_equal(ks_fs_mkdirs(p, 0777, NULL, 0), KS_OK);
    snprintf(p, sizeof p, "%s/x/y", dir);
    assert_true(is_dir(p));
}

static void refuses_a_path_through_a_file(void **state)
{
    (void)state;
    char f[1024], p[1024], err[512];
    snprintf(f, sizeof f, "%s/file", dir);
    FILE *fp = fopen(f, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(p, sizeof p, "%s/file/sub/deeper", dir);
    errno = 0;
    assert_int_equal(ks_fs_mkdirs(p, 0777, err, sizeof err), KS_EIO);
    assert_int_equal(errno, ENOTDIR);
    assert_non_null(strstr(err, p));
    // the file itself is no folder either
    errno = 0;
    assert_int_equal(ks_fs_mkdirs(f, 0777, err, sizeof err), KS_EIO);
    assert_int_equal(errno, ENOTDIR);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    // nothing either
    assert_int_equal(ks_fs_mkdirs("", 0777, NULL, 0), KS_EIO);
}

static void folders_get_the_mode(void **state)
{
    (void)state;
    char p[1024];
    mode_t old = umask(0);
    snprintf(p, sizeof p, "%s/m1/m2", dir);
    assert_int_equal(ks_fs_mkdirs(p, 0750, NULL, 0), KS_OK);
    umask(old);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0750);
    snprintf(p, sizeof p, "%s/m1", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0750);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(makes_nested_folders, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_path_through_a_file, setup, teardown),
        cmocka_unit_test_setup_teardown(folders_get_the_mode, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
