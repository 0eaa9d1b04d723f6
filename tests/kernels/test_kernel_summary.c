// test_kernel_summary.c - block summaries against brute force: min and max
// exactly, the mean within 1e-6 relative to the keys' magnitude; slots not
// named stay untouched; poisoned (spare) pages are never read.
#include "kernel_fixture.h"

static const uint32_t lens[] = {64, 40, 100};

static void matches_brute_force(void **state)
{
    (void)state;
    struct kfx_cfg c = {.n_seqs = 3, .q_heads = 4, .kv_heads = 2, .head_dim = 48, .block_size = 16,
                        .spare_pages = 4, .lens = lens, .q_amp = 1.0f, .seed = 21};
    struct kfx f;
    kfx_init(&f, &c);
    // the full blocks, into slots in reverse order of discovery
    uint32_t page[32], slot[32], n = 0;
    for (uint32_t s = 0; s < c.n_seqs; s++)
        for (uint32_t b = 0; b < lens[s] / c.block_size; b++)
            page[n++] = f.block_table[s * f.max_blocks + b];
    const uint32_t n_slots = n + 2;
    for (uint32_t i = 0; i < n; i++)
        slot[i] = n_slots - 1 - i;
    const size_t se = (size_t)n_slots * c.kv_heads * c.head_dim;
    float *mn = kfx_alloc(se * sizeof(float)), *mx = kfx_alloc(se * sizeof(float)),
          *mean = kfx_alloc(se * sizeof(float));
    for (size_t i = 0; i < se; i++)
        mn[i] = mx[i] = mean[i] = 12345.0f;
    struct ks_block_summary_params p = {.n = n, .block_size = c.block_size, .kv_heads = c.kv_heads,
                                        .head_dim = c.head_dim, .n_pages = f.n_pages, .n_slots = n_slots,
                                        .k = f.k, .page = page, .slot = slot, .kmin = mn, .kmax = mx,
                                        .kmean = mean};
    assert_int_equal(ks_block_summary_ref(&p), KS_KERNEL_OK);
    const size_t row = (size_t)c.kv_heads * c.head_dim, pe = c.block_size * row;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t h = 0; h < c.kv_heads; h++)
            for (uint32_t d = 0; d < c.head_dim; d++) {
                double lo = INFINITY, hi = -INFINITY, sum = 0.0;
                for (uint32_t t = 0; t < c.block_size; t++) {
                    double x = ks_half_to_float(f.k[page[i] * pe + t * row + h * c.head_dim + d]);
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                    sum += x;
                }
                size_t o = ((size_t)slot[i] * c.kv_heads + h) * c.head_dim + d;
                assert_true(mn[o] == lo);
                assert_true(mx[o] == hi);
                assert_true(fabs(mean[o] - sum / c.block_size) <= 1e-6);
            }
    for (uint32_t s = 0; s < 2; s++) // slots 0 and 1 were not named
        for (size_t e = 0; e < row; e++)
            assert_true(mn[s * row + e] == 12345.0f && mx[s * row + e] == 12345.0f && mean[s * row + e] == 12345.0f);

    struct ks_block_summary_params b = p;
    page[3] = f.n_pages;
    assert_int_equal(ks_block_summary_ref(&b), KS_KERNEL_EINVAL);
    page[3] = 0;
    slot[2] = n_slots;
    assert_int_equal(ks_block_summary_ref(&b), KS_KERNEL_EINVAL);
    b.head_dim = 0;
    assert_int_equal(ks_block_summary_ref(&b), KS_KERNEL_EINVAL);
    free(mn);
    free(mx);
    free(mean);
    kfx_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(matches_brute_force)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
