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
    if (ks_trace_writer_commit(w, err, sizeof err) != KS_OK)
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
    assert_non_null(strstr(ks_trace_writer_error(w), "not 0 0 0"));
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, b, m, 2, -1), KS_OK);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 1, 100, dup, m, 2, -1), KS_EINVAL);
    assert_non_null(strstr(ks_trace_writer_error(w), "twice"));
    ks_trace_writer_abort(w);
    assert_int_equal(access(path, F_OK), -1); // nothing half-written

    w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, far, m, 1, -1), KS_EINVAL); // 100 tokens: blocks 0..3
    assert_non_null(strstr(ks_trace_writer_error(w), "past the 4 blocks"));
    ks_trace_writer_abort(w);

    w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, b, neg, 2, -1), KS_EINVAL);
    assert_non_null(strstr(ks_trace_writer_error(w), "mass"));
    ks_trace_writer_abort(w);

    w = ks_trace_writer_open(path, &meta, err, sizeof err);
    assert_int_equal(ks_trace_writer_add(w, 0, 0, 0, 100, b, m, 2, -1), KS_OK);
    assert_int_equal(ks_trace_writer_add(w, 0, 1, 0, 101, b, m, 2, -1), KS_EINVAL); // layer 1 of step 0 missing
    assert_int_equal(ks_trace_writer_commit(w, err, sizeof err), KS_EINVAL);         // and the last step is short
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
    assert_null(ks_trace_load(path, err, sizeof err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(reader_refuses, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
