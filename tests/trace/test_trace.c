// test_trace.c - access traces: what is written reads back; the writer and
// the reader refuse what breaks the schema's rules, naming the record.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <hdf5.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "status.h"
#include "trace.h"

static char dir[64], path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ks-trace-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/t.h5", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static const struct ks_trace_meta meta = {.block_size = 32, .layers = 2, .kv_heads = 8, .q_heads = 32,
                                          .head_dim = 128, .dtype = "fp16", .source = "test"};

// Two requests: request 0 has 3 steps, request 1 has 1; 2 layers each. The
// selection of (r, s, l) is blocks {0, s + l + 1} (context 200 + s tokens, 7
// blocks), mass 0.25 and 0.75.
static void write_good(void)
{
    char err[256] = "";
    struct ks_trace_writer *w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_non_null(w);
    uint32_t steps[2] = {3, 1};
    for (uint32_t r = 0; r < 2; r++)
        for (uint32_t s = 0; s < steps[r]; s++)
            for (uint32_t l = 0; l < 2; l++) {
                uint32_t b[2] = {0, s + l + 1};
                float m[2] = {0.25f, 0.75f};
                assert_int_equal(ks_trace_writer_add(w, r, s, l, 200 + s, b, m, 2, r == 0 ? 1e-5 * (s + 1) : -1),
                                 KS_OK);
            }
    if (ks_trace_writer_commit(w) != KS_OK)
        fail_msg("commit: %s", err);
}

static void round_trip(void **state)
{
    (void)state;
    write_good();
    char err[256] = "";
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (!t)
        fail_msg("%s", err);
    assert_int_equal(t->meta.block_size, 32);
    assert_int_equal(t->meta.layers, 2);
    assert_int_equal(t->meta.q_heads, 32);
    assert_string_equal(t->meta.dtype, "fp16");
    assert_string_equal(t->meta.source, "test");
    assert_int_equal(t->n_requests, 2);
    assert_int_equal(t->req_steps[0], 3);
    assert_int_equal(t->req_steps[1], 1);
    assert_int_equal(t->n_steps, 8);
    assert_int_equal(t->n_sel, 16);
    const struct ks_trace_step *s = ks_trace_at(t, 0, 2, 1);
    assert_non_null(s);
    assert_int_equal(s->context, 202);
    assert_int_equal(s->n, 2);
    assert_int_equal(t->sel[s->first].block, 0);
    assert_int_equal(t->sel[s->first + 1].block, 4);
    assert_true(t->sel[s->first + 1].mass == 0.75f);
    assert_true(s->kernel_time == 1e-5 * 3); // as written
    s = ks_trace_at(t, 1, 0, 0);
    assert_non_null(s);
    assert_int_equal(s->request, 1);
    assert_true(s->kernel_time < 0);
    assert_null(ks_trace_at(t, 1, 1, 0)); // request 1 has one step
    assert_null(ks_trace_at(t, 2, 0, 0));
    assert_null(ks_trace_at(t, 0, 0, 2));
    ks_trace_free(t);
}

static void writer_refuses(void **state)
{
    (void)state;
    char err[256] = "";
    uint32_t b[2] = {0, 1}, dup[2] = {1, 1}, far[1] = {4};
    float m[2] = {0.5f, 0.5f}, neg[2] = {0.5f, -0.1f};
    struct ks_trace_writer *w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 1, 100, b, m, 2, -1), KS_EINVAL); // must start at layer 0
    assert_non_null(strstr(err, "not 0 0 0"));
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, b, m, 2, -1), KS_OK);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 1, 100, dup, m, 2, -1), KS_EINVAL);
    assert_non_null(strstr(err, "twice"));
    ks_trace_writer_abort(w);
    assert_int_equal(access(path, F_OK), -1); // nothing half-written

    w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, far, m, 1, -1), KS_EINVAL); // 100 tokens: blocks 0..3
    assert_non_null(strstr(err, "past the 4 blocks"));
    ks_trace_writer_abort(w);

    w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, b, neg, 2, -1), KS_EINVAL);
    assert_non_null(strstr(err, "mass"));
    ks_trace_writer_abort(w);

    w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, b, m, 2, -1), KS_OK);
    assert_int_equal(ks_trace_writer_add(w, 0, 1, 0, 101, b, m, 2, -1), KS_EINVAL); // layer 1 of step 0 missing
    assert_int_equal(ks_trace_writer_commit(w), KS_EINVAL);         // and the last step is short
    assert_non_null(strstr(err, "last step"));
    assert_int_equal(access(path, F_OK), -1);
}

// Rewrites one field of one /steps record in place with HDF5.
static void poke_step(size_t row, const char *field, uint32_t value)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/steps", H5P_DEFAULT);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(uint32_t));
    H5Tinsert(mt, field, 0, H5T_NATIVE_UINT32);
    hid_t fs = H5Dget_space(d);
    hsize_t start = row, count = 1;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    assert_true(H5Dwrite(d, mt, ms, fs, H5P_DEFAULT, &value) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
    H5Dclose(d);
    H5Fclose(f);
}

static void expect_refused(const char *needle)
{
    char err[512] = "";
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (t) {
        ks_trace_free(t);
        fail_msg("a malformed trace was accepted (expected: %s)", needle);
    }
    if (!strstr(err, needle) || !strstr(err, path))
        fail_msg("error '%s' lacks '%s' or the file name", err, needle);
}

static void reader_refuses(void **state)
{
    (void)state;
    write_good();
    poke_step(3, "layer", 0); // request 0 step 1 holds layer 0 twice
    expect_refused("/steps record 3");
    write_good();
    poke_step(2, "context", 40); // 40 tokens: blocks 0..1, but block 2 is selected
    expect_refused("past the 2 blocks");
    write_good();
    poke_step(6, "request", 3); // requests must follow each other
    expect_refused("cannot follow");
    write_good();
    poke_step(7, "n", 9); // rows past the end of /selected
    expect_refused("past the 16 rows");

    char err[512] = "";
    FILE *f = fopen(path, "w");
    fputs("not hdf5\n", f);
    fclose(f);
    assert_null(ks_trace_load(path, err, sizeof err));
    assert_non_null(strstr(err, "HDF5"));
    unlink(path);
    assert_null(ks_trace_load(path, err, sizeof err)); // said before HDF5 is tried
    if (!strstr(err, path) || !strstr(err, "No such file"))
        fail_msg("a missing trace gives '%s'", err);
    assert_null(ks_trace_load(dir, err, sizeof err));
    if (!strstr(err, "Is a directory"))
        fail_msg("a directory gives '%s'", err);
}

// Replaces the root attribute `name` of the trace with a scalar string of
// the given kind (h5py writes Python strings as variable-length UTF-8 and
// numpy bytes as fixed-length, null-padded ASCII).
static void set_str_attr(const char *name, const char *value, int vlen, H5T_cset_t cset, H5T_str_t pad)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    if (H5Aexists(f, name) > 0)
        assert_true(H5Adelete(f, name) >= 0);
    hid_t t = H5Tcopy(H5T_C_S1);
    assert_true(H5Tset_size(t, vlen ? H5T_VARIABLE : strlen(value)) >= 0);
    assert_true(H5Tset_cset(t, cset) >= 0);
    assert_true(H5Tset_strpad(t, pad) >= 0);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, vlen ? (const void *)&value : (const void *)value) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
}

// Replaces a root attribute with an integer (n_strings 0), an array of
// n_strings strings, or nothing (n_strings < 0).
static void set_other_attr(const char *name, int n_strings)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete(f, name) >= 0);
    if (n_strings > 0) {
        const char *v[2] = {"kvstrata-trace", "kvstrata-trace"};
        hsize_t dims = (hsize_t)n_strings;
        assert_true(n_strings <= 2);
        hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate_simple(1, &dims, NULL);
        H5Tset_size(t, H5T_VARIABLE);
        hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(H5Awrite(a, t, v) >= 0);
        H5Aclose(a);
        H5Sclose(sp);
        H5Tclose(t);
    } else if (n_strings == 0) {
        int v = 1;
        hid_t sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0);
        H5Aclose(a);
        H5Sclose(sp);
    }
    H5Fclose(f);
}

static struct ks_trace *load_or_fail(void)
{
    char err[512] = "";
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (!t)
        fail_msg("%s", err);
    return t;
}

static void string_attrs(void **state)
{
    (void)state;
    // variable-length UTF-8 throughout, as h5py writes str attributes
    write_good();
    set_str_attr("format", "kvstrata-trace", 1, H5T_CSET_UTF8, H5T_STR_NULLTERM);
    set_str_attr("dtype", "fp16", 1, H5T_CSET_UTF8, H5T_STR_NULLTERM);
    set_str_attr("source", "serveur \xc3\xa9t\xc3\xa9, 2026", 1, H5T_CSET_UTF8, H5T_STR_NULLTERM);
    struct ks_trace *t = load_or_fail();
    assert_string_equal(t->meta.dtype, "fp16");
    assert_string_equal(t->meta.source, "serveur \xc3\xa9t\xc3\xa9, 2026");
    assert_int_equal(t->n_steps, 8);
    ks_trace_free(t);

    // fixed-length ASCII filling every byte (no terminator), null- and space-padded
    write_good();
    set_str_attr("format", "kvstrata-trace", 0, H5T_CSET_ASCII, H5T_STR_NULLPAD);
    set_str_attr("dtype", "int8", 0, H5T_CSET_ASCII, H5T_STR_SPACEPAD);
    set_str_attr("source", "ascii source", 0, H5T_CSET_ASCII, H5T_STR_NULLTERM);
    t = load_or_fail();
    assert_string_equal(t->meta.dtype, "int8");
    assert_string_equal(t->meta.source, "ascii source");
    ks_trace_free(t);

    // fixed-length UTF-8 and variable-length ASCII
    write_good();
    set_str_attr("format", "kvstrata-trace", 0, H5T_CSET_UTF8, H5T_STR_NULLPAD);
    set_str_attr("source", "vlen ascii", 1, H5T_CSET_ASCII, H5T_STR_NULLTERM);
    t = load_or_fail();
    assert_string_equal(t->meta.source, "vlen ascii");
    ks_trace_free(t);

    // a format that is read but wrong, missing, not a string, not one string
    write_good();
    set_str_attr("format", "other-trace", 1, H5T_CSET_UTF8, H5T_STR_NULLTERM);
    expect_refused("attribute /format is \"other-trace\", not \"kvstrata-trace\"");
    write_good();
    set_other_attr("format", -1);
    expect_refused("attribute /format is missing");
    write_good();
    set_other_attr("format", 0);
    expect_refused("attribute /format is not a string");
    write_good();
    set_other_attr("format", 2);
    expect_refused("attribute /format holds 2 values");
    write_good();
    set_other_attr("source", 0);
    expect_refused("attribute /source is not a string");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(reader_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(string_attrs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
