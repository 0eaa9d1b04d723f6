// test_kernel_int8.c - the int8 compression option: page quantization and
// the int8 sparse decode.
//
// Bounds: quantization error per element <= scale / 2 (+ fp32 rounding of
// x / scale, 1e-6 relative); the int8 kernel within normalised error 1e-5 of
// double attention over the dequantized cache (the kernel itself is exact to
// fp32), and within INT8_BOUND of the fp16 kernel on the same selection (the
// compression error: keys and values in [-1, 1], about 1/254 relative error
// per element; measured 5e-3 to 6e-3 here, bound with margin).
#include "kernel_fixture.h"

#define INT8_BOUND 1.5e-2
#define INT8_MASS_BOUND 5e-3

static void quantize_within_half_step(void **state)
{
    (void)state;
    enum { BS = 16, KVH = 3, HD = 40 };
    static uint16_t src[BS * KVH * HD];
    static int8_t dst[BS * KVH * HD];
    float scale[KVH];
    kfx_seed(41);
    for (uint32_t nt = 1; nt <= BS; nt += 5) {
        for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
            src[i] = i < (size_t)nt * KVH * HD ? ks_half_from_float((float)(kfx_sym() * (1 + i % 3)))
                                                : KFX_NAN16; // garbage past n_tokens
        for (size_t i = 0; i < (size_t)nt * HD; i++) // head 2 all zero
            src[(i / HD) * KVH * HD + 2 * HD + i % HD] = 0;
        assert_int_equal(ks_page_quantize_i8(src, BS, KVH, HD, nt, dst, scale), KS_KERNEL_OK);
        assert_true(scale[2] == 0.0f);
        for (uint32_t h = 0; h < KVH; h++) {
            double amax = 0.0;
            for (uint32_t t = 0; t < nt; t++)
                for (uint32_t d = 0; d < HD; d++)
                    amax = fmax(amax, fabs(ks_half_to_float(src[(t * KVH + h) * HD + d])));
            assert_true(fabs(scale[h] - amax / 127.0) <= 1e-6 * amax);
            for (uint32_t t = 0; t < BS; t++)
                for (uint32_t d = 0; d < HD; d++) {
                    size_t o = (t * KVH + h) * HD + d;
                    if (t >= nt) {
                        assert_int_equal(dst[o], 0);
                        continue;
                    }
                    double x = ks_half_to_float(src[o]);
                    assert_true(dst[o] >= -127 && dst[o] <= 127);
                    assert_true(fabs(x - (double)dst[o] * scale[h]) <= scale[h] * (0.5 + 1e-6));
                }
        }
    }
    src[5] = KFX_NAN16; // a non-finite value among the tokens read
    assert_int_equal(ks_page_quantize_i8(src, BS, KVH, HD, BS, dst, scale), KS_KERNEL_EINVAL);
    assert_int_equal(ks_page_quantize_i8(src, BS, KVH, HD, BS + 1, dst, scale), KS_KERNEL_EINVAL);
}

static const uint32_t lens[] = {1, 16, 100, 333, 47};

static void int8_decode(void **state)
{
    (void)state;
    for (uint64_t seed = 42; seed <= 44; seed++) {
        struct kfx_cfg c = {.n_seqs = 5, .q_heads = 8, .kv_heads = 2, .head_dim = 64, .block_size = 16,
                            .spare_pages = 3, .lens = lens, .q_amp = 3.0f, .seed = seed};
        struct kfx f;
        kfx_init(&f, &c);
        kfx_quantize(&f);
        kfx_select_random(&f, 0.5);
        kfx_residency_random(&f, 0.8);
        struct ks_decode_params p8 = kfx_params(&f), p16 = kfx_params(&f);
        p8.resident = p16.resident = f.resident;
        struct kfx_out o8, o16;
        kfx_out_init(&o8, &f, &p8, 1);
        kfx_out_init(&o16, &f, &p16, 1);
        assert_int_equal(ks_sparse_decode_i8_ref(&p8), KS_KERNEL_OK);
        assert_int_equal(ks_sparse_decode_ref(&p16), KS_KERNEL_OK);
        const size_t hd = c.head_dim, qh = c.q_heads;
        double *out = kfx_alloc(qh * hd * sizeof(double)), *mass = kfx_alloc(f.max_blocks * sizeof(double));
        double worst = 0.0;
        for (uint32_t s = 0; s < c.n_seqs; s++) {
            kfx_attention(&f, s, 1, 0, 1, out, mass); // over the dequantized cache
            KFX_BOUND(kfx_nerr(o8.out + s * qh * hd, out, qh * hd), 1e-5, "int8 vs double");
            double e = kfx_nerr_f(o8.out + s * qh * hd, o16.out + s * qh * hd, qh * hd);
            KFX_BOUND(e, INT8_BOUND, "int8 vs fp16");
            worst = fmax(worst, e);
            double sum = 0.0;
            assert_int_equal(o8.n_acc[s], f.n_sel[s]);
            for (uint32_t i = 0; i < o8.n_acc[s]; i++) {
                size_t at = s * f.max_blocks + i;
                assert_true(fabs(o8.acc_mass[at] - mass[i]) <= 1e-5);
                assert_true(fabs(o8.acc_mass[at] - o16.acc_mass[at]) <= INT8_MASS_BOUND);
                sum += o8.acc_mass[at];
            }
            assert_true(fabs(sum - 1.0) <= 1e-5);
            assert_int_equal(o8.n_missing[s], o16.n_missing[s]);
            for (uint32_t i = 0; i < o8.n_missing[s]; i++)
                assert_int_equal(o8.missing[s * f.max_blocks + i], o16.missing[s * f.max_blocks + i]);
        }
        print_message("seed %llu: int8 vs fp16 worst normalised error %.3g\n", (unsigned long long)seed, worst);
        free(out);
        free(mass);
        kfx_out_fini(&o8);
        kfx_out_fini(&o16);
        kfx_fini(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantize_within_half_step),
        cmocka_unit_test(int8_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
