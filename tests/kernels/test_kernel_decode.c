// test_kernel_decode.c - reference decode attention (dense and sparse, fp16)
// against plain double-precision attention, and its access report.
//
// Bounds: outputs within normalised error 1e-5 of double attention (fp32
// softmax and sums over at most a few thousand terms of magnitude ~1, where
// the error is ~1e-7); masses within 1e-5 absolute, and summing to 1 within
// 1e-5 per sequence.
#include "kernel_fixture.h"

#define OUT_BOUND 1e-5
#define MASS_BOUND 1e-5

static const uint32_t lens_a[] = {1, 16, 100, 333, 47};
static const uint32_t lens_b[] = {64, 7, 250};

static struct kfx_cfg cfg_a(uint64_t seed)
{
    // GQA group 4, head_dim a multiple of 32, partial last blocks
    return (struct kfx_cfg){.n_seqs = 5, .q_heads = 8, .kv_heads = 2, .head_dim = 64, .block_size = 16,
                            .spare_pages = 3, .lens = lens_a, .q_amp = 3.0f, .seed = seed};
}

static struct kfx_cfg cfg_b(uint64_t seed)
{
    // no GQA, odd head_dim and block size
    return (struct kfx_cfg){.n_seqs = 3, .q_heads = 3, .kv_heads = 3, .head_dim = 40, .block_size = 7,
                            .spare_pages = 2, .lens = lens_b, .q_amp = 4.0f, .seed = seed};
}

// Compares a decode result with double attention, sequence by sequence,
// including the report (blocks, masses summing to 1, missing list).
static void expect_matches(const struct kfx *f, const struct kfx_out *o, int sparse, int skip, int i8)
{
    const uint32_t hd = f->c.head_dim, qh = f->c.q_heads;
    double *out = kfx_alloc((size_t)qh * hd * sizeof(double));
    double *mass = kfx_alloc(f->max_blocks * sizeof(double));
    for (uint32_t s = 0; s < f->c.n_seqs; s++) {
        kfx_attention(f, s, sparse, skip, i8, out, mass);
        char what[64];
        snprintf(what, sizeof what, "seq %u output", s);
        KFX_BOUND(kfx_nerr(o->out + (size_t)s * qh * hd, out, (size_t)qh * hd), OUT_BOUND, what);
        uint32_t n = sparse ? f->n_sel[s] : kfx_nb(f, s);
        assert_int_equal(o->n_acc[s], n);
        double sum = 0.0, want_sum = 0.0;
        uint32_t miss = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t b = sparse ? f->sel[(size_t)s * f->max_sel + i] : i;
            const size_t at = (size_t)s * f->max_blocks + i;
            assert_int_equal(o->acc_blocks[at], b);
            if (!(fabs(o->acc_mass[at] - mass[i]) <= MASS_BOUND))
                fail_msg("seq %u block %u: mass %g, want %g", s, b, o->acc_mass[at], mass[i]);
            sum += o->acc_mass[at];
            want_sum += mass[i];
            if (!f->resident[(size_t)s * f->max_blocks + b]) {
                assert_true(miss < o->n_missing[s]);
                assert_int_equal(o->missing[(size_t)s * f->max_blocks + miss], b);
                miss++;
            }
        }
        assert_int_equal(o->n_missing[s], miss);
        if (want_sum > 0.5) // something attended: a distribution
            assert_true(fabs(sum - 1.0) <= MASS_BOUND);
        else
            assert_true(sum == 0.0);
    }
    free(out);
    free(mass);
}

static void dense_matches_double(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct kfx f;
        struct kfx_cfg c = seed == 2 ? cfg_b(seed) : cfg_a(seed);
        kfx_init(&f, &c);
        struct ks_decode_params p = kfx_params(&f);
        struct kfx_out o;
        kfx_out_init(&o, &f, &p, 0);
        assert_int_equal(ks_dense_decode_ref(&p), KS_KERNEL_OK);
        expect_matches(&f, &o, 0, 0, 0);
        kfx_out_fini(&o);
        kfx_fini(&f);
    }
}

// Every block selected: the sparse kernel is the dense kernel, bit for bit.
static void sparse_all_equals_dense(void **state)
{
    (void)state;
    for (uint64_t seed = 4; seed <= 5; seed++) {
        struct kfx f;
        struct kfx_cfg c = seed == 5 ? cfg_b(seed) : cfg_a(seed);
        kfx_init(&f, &c);
        kfx_select_all(&f);
        struct ks_decode_params pd = kfx_params(&f), ps = kfx_params(&f);
        struct kfx_out od, os;
        kfx_out_init(&od, &f, &pd, 0);
        kfx_out_init(&os, &f, &ps, 1);
        assert_int_equal(ks_dense_decode_ref(&pd), KS_KERNEL_OK);
        assert_int_equal(ks_sparse_decode_ref(&ps), KS_KERNEL_OK);
        size_t n = (size_t)f.c.n_seqs * f.c.q_heads * f.c.head_dim;
        assert_memory_equal(od.out, os.out, n * sizeof(float));
        for (uint32_t s = 0; s < f.c.n_seqs; s++) {
            assert_int_equal(od.n_acc[s], os.n_acc[s]);
            for (uint32_t i = 0; i < od.n_acc[s]; i++) {
                assert_int_equal(od.acc_blocks[s * f.max_blocks + i], os.acc_blocks[s * f.max_blocks + i]);
                assert_true(od.acc_mass[s * f.max_blocks + i] == os.acc_mass[s * f.max_blocks + i]);
            }
        }
        expect_matches(&f, &os, 1, 0, 0);
        kfx_out_fini(&od);
        kfx_out_fini(&os);
        kfx_fini(&f);
    }
}

static void sparse_subset_matches_double(void **state)
{
    (void)state;
    for (uint64_t seed = 6; seed <= 8; seed++) {
        struct kfx f;
        struct kfx_cfg c = seed == 7 ? cfg_b(seed) : cfg_a(seed);
        kfx_init(&f, &c);
        kfx_select_random(&f, 0.4);
        struct ks_decode_params p = kfx_params(&f);
        struct kfx_out o;
        kfx_out_init(&o, &f, &p, 1);
        assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_OK);
        expect_matches(&f, &o, 1, 0, 0);
        kfx_out_fini(&o);
        kfx_fini(&f);
    }
}

// Residency: the report lists exactly the non-resident selected blocks; with
// skip_missing their (poisoned) pages are never read and get mass 0.
static void residency_report(void **state)
{
    (void)state;
    for (uint64_t seed = 9; seed <= 11; seed++) {
        struct kfx f;
        struct kfx_cfg c = seed == 10 ? cfg_b(seed) : cfg_a(seed);
        kfx_init(&f, &c);
        kfx_select_random(&f, 0.6);
        kfx_residency_random(&f, 0.7);
        struct ks_decode_params p = kfx_params(&f);
        p.resident = f.resident;
        struct kfx_out o;
        kfx_out_init(&o, &f, &p, 1);
        assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_OK);
        expect_matches(&f, &o, 1, 0, 0); // attends over all, reports the missing

        kfx_poison_missing(&f);
        p.skip_missing = 1;
        assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_OK);
        expect_matches(&f, &o, 1, 1, 0);
        uint32_t seen = 0;
        for (uint32_t s = 0; s < f.c.n_seqs; s++)
            for (uint32_t i = 0; i < o.n_acc[s]; i++)
                if (!f.resident[s * f.max_blocks + o.acc_blocks[s * f.max_blocks + i]]) {
                    assert_true(o.acc_mass[s * f.max_blocks + i] == 0.0f);
                    seen++;
                }
        assert_true(seen > 0); // the seed exercises the case
        kfx_out_fini(&o);
        kfx_fini(&f);
    }
}

// The poison works: a selected block mapped to a spare (NaN) page makes the
// result NaN, so a kernel reading unused slots cannot pass these tests.
static void poison_is_detected(void **state)
{
    (void)state;
    struct kfx f;
    struct kfx_cfg c = cfg_a(12);
    kfx_init(&f, &c);
    kfx_select_all(&f);
    // the spare pages are those no block maps to
    uint8_t *mapped = kfx_alloc(f.n_pages);
    for (size_t i = 0; i < (size_t)f.c.n_seqs * f.max_blocks; i++)
        if (f.block_table[i] != UINT32_MAX)
            mapped[f.block_table[i]] = 1;
    uint32_t spare = 0;
    while (mapped[spare])
        spare++;
    free(mapped);
    f.block_table[3 * f.max_blocks + 2] = spare;
    struct ks_decode_params p = kfx_params(&f);
    struct kfx_out o;
    kfx_out_init(&o, &f, &p, 1);
    assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_OK);
    assert_true(isnan(o.out[(size_t)3 * f.c.q_heads * f.c.head_dim]));
    assert_false(isnan(o.out[(size_t)2 * f.c.q_heads * f.c.head_dim])); // other sequences unharmed
    kfx_out_fini(&o);
    kfx_fini(&f);
}

static void bad_parameters(void **state)
{
    (void)state;
    struct kfx f;
    struct kfx_cfg c = cfg_a(13);
    kfx_init(&f, &c);
    kfx_select_all(&f);
    struct ks_decode_params p = kfx_params(&f);
    struct kfx_out o;
    kfx_out_init(&o, &f, &p, 1);
    assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_OK);

    struct ks_decode_params b = p;
    b.workspace_bytes--;
    assert_int_equal(ks_sparse_decode_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.q_heads = 7; // not a multiple of kv_heads
    assert_int_equal(ks_sparse_decode_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.head_dim = KS_KERNEL_MAX_HEAD_DIM + 1;
    assert_int_equal(ks_dense_decode_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.report_cap = f.max_sel - 1;
    assert_int_equal(ks_sparse_decode_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.k_i8 = NULL; // the int8 kernel needs its cache
    assert_int_equal(ks_sparse_decode_i8_ref(&b), KS_KERNEL_EINVAL);

    uint32_t *row = f.sel + 3 * f.max_sel; // sequence 3 has 21 blocks
    uint32_t keep = row[1];
    row[1] = row[2]; // not strictly ascending
    assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_EINVAL);
    row[1] = keep;
    f.n_sel[3] = f.max_sel + 1;
    assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_EINVAL);
    f.n_sel[3] = kfx_nb(&f, 3);
    f.block_table[3 * f.max_blocks + 4] = f.n_pages; // page out of range
    assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_EINVAL);
    assert_int_equal(ks_dense_decode_ref(&p), KS_KERNEL_EINVAL);
    kfx_out_fini(&o);
    kfx_fini(&f);
}

// An empty sequence and a selection of nothing: output 0, no report entries.
static void empty_sequences(void **state)
{
    (void)state;
    static const uint32_t lens[] = {0, 40};
    struct kfx_cfg c = {.n_seqs = 2, .q_heads = 4, .kv_heads = 2, .head_dim = 32, .block_size = 16,
                        .spare_pages = 1, .lens = lens, .q_amp = 1.0f, .seed = 14};
    struct kfx f;
    kfx_init(&f, &c);
    kfx_select_all(&f);
    f.n_sel[1] = 0;
    struct ks_decode_params p = kfx_params(&f);
    struct kfx_out o;
    kfx_out_init(&o, &f, &p, 1);
    assert_int_equal(ks_sparse_decode_ref(&p), KS_KERNEL_OK);
    for (size_t i = 0; i < (size_t)2 * 4 * 32; i++)
        assert_true(o.out[i] == 0.0f);
    assert_int_equal(o.n_acc[0], 0);
    assert_int_equal(o.n_acc[1], 0);
    assert_int_equal(o.n_missing[1], 0);
    kfx_out_fini(&o);
    kfx_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dense_matches_double),   cmocka_unit_test(sparse_all_equals_dense),
        cmocka_unit_test(sparse_subset_matches_double), cmocka_unit_test(residency_report),
        cmocka_unit_test(poison_is_detected),     cmocka_unit_test(bad_parameters),
        cmocka_unit_test(empty_sequences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
