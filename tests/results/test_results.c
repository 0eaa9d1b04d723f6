// test_results.c - HDF5 results: what is written reads back; nothing half-written.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <hdf5.h>
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

#include "tmpdir.h"

#include "results.h"
#include "status.h"

struct rec {
    uint32_t req;
    uint8_t gpu;
    double ttft; // seconds
    uint64_t tokens;
    float hit;
};

static const struct ks_field fields[] = {
    {"req", KS_F_U32, offsetof(struct rec, req), "request id"},
    {"gpu", KS_F_U8, offsetof(struct rec, gpu), NULL},
    {"ttft", KS_F_F64, offsetof(struct rec, ttft), "time to first token, seconds"},
    {"tokens", KS_F_U64, offsetof(struct rec, tokens), NULL},
    {"hit", KS_F_F32, offsetof(struct rec, hit), NULL},
};

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return ks_tmpdir_make(dir, sizeof dir, "ks-results");
}

static int teardown(void **state)
{
    (void)state;
    return ks_tmpdir_remove(dir);
}

static int files_in_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void round_trip(void **state)
{
    (void)state;
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/run.h5", dir);
    struct ks_results *r = ks_results_open(path, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(ks_results_attr_num(r, "/summary", "itl_p99", 0.0123), KS_OK);
    assert_int_equal(ks_results_attr_int(r, "/summary", "requests", 5000), KS_OK);
    assert_int_equal(ks_results_attr_str(r, "/summary", "name", "seed defaults"), KS_OK);
    assert_int_equal(ks_results_attr_num(r, "/summary", "itl_p99", 0.0125), KS_OK); // replaced
    struct ks_table *t = ks_results_table(r, "/requests", fields, 5, sizeof(struct rec), 1000);
    assert_non_null(t);
    enum { N = 12345 };
    struct rec *in = calloc(N, sizeof *in);
    for (uint32_t i = 0; i < N; i++)
        in[i] = (struct rec){.req = i, .gpu = (uint8_t)(i % 8), .ttft = i * 1e-3, .tokens = 1000 + i, .hit = 0.5f};
    assert_int_equal(ks_results_append(t, in, 7), KS_OK); // uneven batches
    assert_int_equal(ks_results_append(t, in + 7, N - 7), KS_OK);
    assert_non_null(ks_results_table(r, "/tiers/l1", fields, 5, sizeof(struct rec), 0)); // nested, empty
    assert_int_equal(files_in_dir(), 1);         // only the partial file so far
    assert_int_equal(access(path, F_OK), -1);    // not under the final name yet
    assert_int_equal(ks_results_commit(r), KS_OK);
    assert_int_equal(files_in_dir(), 1);
    assert_int_equal(access(path, F_OK), 0);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "/summary", H5P_DEFAULT);
    double p99 = 0;
    hid_t a = H5Aopen(g, "itl_p99", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_DOUBLE, &p99);
    H5Aclose(a);
    assert_true(p99 == 0.0125);
    int64_t nreq = 0;
    a = H5Aopen(g, "requests", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &nreq);
    H5Aclose(a);
    assert_int_equal(nreq, 5000);
    H5Gclose(g);

    hid_t d = H5Dopen2(f, "/requests", H5P_DEFAULT);
    hid_t sp = H5Dget_space(d);
    hsize_t rows = 0;
    H5Sget_simple_extent_dims(sp, &rows, NULL);
    assert_int_equal(rows, N);
    hid_t dcpl = H5Dget_create_plist(d);
    assert_int_equal(H5Pget_nfilters(dcpl), 2); // shuffle + deflate
    H5Pclose(dcpl);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(struct rec));
    H5Tinsert(mt, "req", offsetof(struct rec, req), H5T_NATIVE_UINT32);
    H5Tinsert(mt, "ttft", offsetof(struct rec, ttft), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "tokens", offsetof(struct rec, tokens), H5T_NATIVE_UINT64);
    struct rec *out = calloc(N, sizeof *out);
    assert_true(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(out[i].req, i);
        assert_true(out[i].ttft == i * 1e-3);
        assert_int_equal(out[i].tokens, 1000 + i);
    }
    assert_true(H5Aexists(d, "ttft.desc") > 0);
    H5Tclose(mt);
    H5Sclose(sp);
    H5Dclose(d);
    assert_true(H5Lexists(f, "/tiers/l1", H5P_DEFAULT) > 0);
    H5Fclose(f);
    free(in);
    free(out);
}

static void abort_leaves_nothing(void **state)
{
    (void)state;
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/failed.h5", dir);
    struct ks_results *r = ks_results_open(path, err, sizeof err);
    assert_non_null(r);
    struct ks_table *t = ks_results_table(r, "/steps", fields, 5, sizeof(struct rec), 16);
    struct rec x = {.req = 1};
    for (int i = 0; i < 100; i++)
        assert_int_equal(ks_results_append(t, &x, 1), KS_OK);
    ks_results_abort(r);
    assert_int_equal(files_in_dir(), 0);
}

static void bad_input_refused(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(ks_results_open("/nonexistent-dir/x.h5", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent-dir/x.h5"));
    char path[128];
    snprintf(path, sizeof path, "%s/bad.h5", dir);
    struct ks_results *r = ks_results_open(path, err, sizeof err);
    assert_non_null(r);
    assert_null(ks_results_table(r, "requests", fields, 5, sizeof(struct rec), 0)); // not absolute
    assert_null(ks_results_table(r, "/requests", fields, 5, 4, 0));                // record too small
    assert_non_null(strstr(err, "outside"));
    ks_results_abort(r);
    assert_int_equal(files_in_dir(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(abort_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
