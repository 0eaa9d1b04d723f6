// test_atomicfile.c - files written whole or not at all (sim/base/atomicfile.h):
// nothing under the name until commit, then the full content; abandon and
// every failed commit leave the old file (or none) and no temporary.
#define _POSIX_C_SOURCE 200809L // mkdtemp, umask, getpid

#include <dirent.h>
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

#include "atomicfile.h"
#include "status.h"

static char dir[512];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/atomicfile_XXXXXX", KS_TEST_BINARY_DIR);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    char p[1024];
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) != 0)
                rmdir(p);
        }
    if (d)
        closedir(d);
    return rmdir(dir);
}

// Entries of the test folder.
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

// The whole of a file (NUL-terminated), or NULL when there is none.
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void commit_gives_the_whole_file(void **state)
{
    (void)state;
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    struct ks_atomicfile a;
    assert_int_equal(ks_atomicfile_open(&a, path, &(struct ks_atomicfile_params){.sync = 1}, err, sizeof err), KS_OK);
    for (int i = 0; i < 5000; i++) // past any stdio buffer
        fprintf(a.f, "line %d\n", i);
    assert_false(exists(path)); // nothing under the name yet
    assert_true(exists(a.tmp));
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", a.tmp);
    assert_int_equal(ks_atomicfile_commit(&a, err, sizeof err), KS_OK);
    assert_false(exists(tmp));
    assert_null(a.tmp);
    const char *got = slurp(path);
    assert_non_null(got);
    size_t off = 0;
    for (int i = 0; i < 5000; i++) {
        char want[32];
        int k = snprintf(want, sizeof want, "line %d\n", i);
        assert_memory_equal(got + off, want, (size_t)k);
        off += (size_t)k;
    }
    assert_int_equal(strlen(got), off);
    assert_int_equal(entries(), 1);
    ks_atomicfile_abandon(&a); // emptied by the commit: a no-op
    assert_int_equal(strlen(slurp(path)), off);
}

static void abandon_leaves_the_old_file(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/keep.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
    struct ks_atomicfile a;
    assert_int_equal(ks_atomicfile_open(&a, path, NULL, NULL, 0), KS_OK);
    fputs("new and longer\n", a.f);
    fflush(a.f);
    assert_string_equal(slurp(path), "old\n");
    ks_atomicfile_abandon(&a);
    assert_string_equal(slurp(path), "old\n");
    assert_int_equal(entries(), 1);
    // a commit replaces it
    assert_int_equal(ks_atomicfile_open(&a, path, NULL, NULL, 0), KS_OK);
    fputs("new\n", a.f);
    assert_int_equal(ks_atomicfile_commit(&a, NULL, 0), KS_OK);
    assert_string_equal(slurp(path), "new\n");
    assert_int_equal(entries(), 1);
}

static void abandon_leaves_no_file(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/never.txt", dir);
    struct ks_atomicfile a;
    assert_int_equal(ks_atomicfile_open(&a, path, NULL, NULL, 0), KS_OK);
    fputs("x", a.f);
    assert_int_equal(ks_atomicfile_finish(&a, NULL, 0), KS_OK); // finished, checked, then dropped
    assert_string_equal(slurp(a.tmp), "x");
    ks_atomicfile_abandon(&a);
    assert_false(exists(path));
    assert_int_equal(entries(), 0);
}

// A rename that cannot happen (a folder holds the name) fails and cleans up.
static void failed_commit_leaves_nothing(void **state)
{
    (void)state;
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/taken", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    struct ks_atomicfile a;
    assert_int_equal(ks_atomicfile_open(&a, path, NULL, NULL, 0), KS_OK);
    fputs("x", a.f);
    err[0] = '\0';
    assert_int_equal(ks_atomicfile_commit(&a, err, sizeof err), KS_EIO);
    assert_non_null(strstr(err, "cannot rename"));
    assert_int_equal(entries(), 1); // the folder alone
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

static void open_in_a_missing_folder_fails(void **state)
{
    (void)state;
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/nosuch/out.txt", dir);
    struct ks_atomicfile a;
    assert_int_equal(ks_atomicfile_open(&a, path, NULL, err, sizeof err), KS_EIO);
    assert_non_null(strstr(err, "nosuch/out.txt.part-"));
    assert_non_null(strstr(err, "cannot create"));
    assert_null(a.f);
    ks_atomicfile_abandon(&a);
    assert_int_equal(entries(), 0);
}

static void modes(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/mode.sh", dir);
    mode_t old = umask(022);
    struct ks_atomicfile a;
    struct stat st;
    assert_int_equal(ks_atomicfile_open(&a, path, NULL, NULL, 0), KS_OK);
    assert_int_equal(ks_atomicfile_commit(&a, NULL, 0), KS_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644); // as fopen: 0666 less the umask
    umask(077);
    assert_int_equal(ks_atomicfile_open(&a, path, &(struct ks_atomicfile_params){.mode = 0755}, NULL, 0), KS_OK);
    assert_int_equal(ks_atomicfile_commit(&a, NULL, 0), KS_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755); // as given, the umask aside
    umask(old);
}

static void names(void **state)
{
    (void)state;
    char buf[64], want[64];
    snprintf(want, sizeof want, "a/b.h5.part-%ld", (long)getpid());
    assert_int_equal(ks_atomicfile_tmpname("a/b.h5", buf, sizeof buf), KS_OK);
    assert_string_equal(buf, want);
    assert_int_equal(ks_atomicfile_tmpname("a/b.h5", buf, strlen(want)), KS_EINVAL); // no room for the NUL
    // a rename that fails removes the temporary
    char tmp[1024], path[1024], err[512];
    snprintf(tmp, sizeof tmp, "%s/t.part", dir);
    snprintf(path, sizeof path, "%s/nosuch/t", dir);
    fclose(fopen(tmp, "w"));
    assert_int_equal(ks_atomicfile_rename(tmp, path, err, sizeof err), KS_EIO);
    assert_false(exists(tmp));
    snprintf(path, sizeof path, "%s/t", dir);
    fclose(fopen(tmp, "w"));
    assert_int_equal(ks_atomicfile_rename(tmp, path, err, sizeof err), KS_OK);
    assert_false(exists(tmp));
    assert_true(exists(path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(commit_gives_the_whole_file, setup, teardown),
        cmocka_unit_test_setup_teardown(abandon_leaves_the_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(abandon_leaves_no_file, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_commit_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(open_in_a_missing_folder_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(modes, setup, teardown),
        cmocka_unit_test_setup_teardown(names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
