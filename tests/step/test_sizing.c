// test_sizing.c - a decode step's L1 reserve (sim/step/sizing.h,
// ks_step_reserve) on a GPU sized by ks_step_size: README "A reserve for new
// blocks": "the simulator asks for one page per active request and layer, at
// most a quarter of L1".
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sizing.h"

#define LAYERS 32
#define BS 32            // tokens per block
#define TOKEN_BYTES 256  // KV bytes of one token in one layer
#define L1_PAGES 4000    // a quarter: 1000 pages

// One GPU of 32 layers, full detail, L1 of exactly L1_PAGES blocks (in
// bytes), no L2, no L3, no speculative decoding.
static void sized(struct ks_scenario *s, struct ks_step_sizing *z, uint32_t l1_pages)
{
    *s = (struct ks_scenario){0};
    s->model.layers = LAYERS;
    s->model.arch.gpu_kv_token_bytes = TOKEN_BYTES;
    s->cache.block_size = BS;
    s->cache.l1 = (struct ks_scenario_amount){.is_share = 0, .value = (double)l1_pages * BS * TOKEN_BYTES};
    s->cache.l2 = (struct ks_scenario_amount){.is_share = 0, .value = 0};
    s->cache.l3 = KS_L3_NONE;
    s->platform.gpus_per_node = 1;
    struct ks_cache_params cp;
    char err[256] = "";
    assert_int_equal(ks_step_size(s, &cp, z, err, sizeof err), KS_OK);
    assert_int_equal(z->groups, LAYERS);
    assert_int_equal(z->l1_pages, l1_pages);
}

// "one page per active request and layer": 32 pages a request, while below
// a quarter of L1
static void page_per_request_and_layer(void **state)
{
    (void)state;
    struct ks_scenario s;
    struct ks_step_sizing z;
    sized(&s, &z, L1_PAGES);
    assert_int_equal(ks_step_reserve(&s, &z, 0), 0);
    assert_int_equal(ks_step_reserve(&s, &z, 1), LAYERS);
    assert_int_equal(ks_step_reserve(&s, &z, 2), 2 * LAYERS);
    assert_int_equal(ks_step_reserve(&s, &z, 31), 31 * LAYERS); // 992 < 1000
}

// "at most a quarter of L1": 32 requests would ask 1024 of 4000 pages; they
// get 1000, and so does any larger batch; a quarter rounds down (4003 pages:
// 1000) and is reached exactly (4096 pages: 32 requests ask 1024, a quarter)
static void at_most_a_quarter(void **state)
{
    (void)state;
    struct ks_scenario s;
    struct ks_step_sizing z;
    sized(&s, &z, L1_PAGES);
    assert_int_equal(ks_step_reserve(&s, &z, 32), L1_PAGES / 4);
    assert_int_equal(ks_step_reserve(&s, &z, 1000), L1_PAGES / 4);
    sized(&s, &z, 4003);
    assert_int_equal(ks_step_reserve(&s, &z, 32), 1000);
    sized(&s, &z, 4096);
    assert_int_equal(ks_step_reserve(&s, &z, 31), 992);
    assert_int_equal(ks_step_reserve(&s, &z, 32), 1024);
    assert_int_equal(ks_step_reserve(&s, &z, 33), 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(page_per_request_and_layer),
        cmocka_unit_test(at_most_a_quarter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
