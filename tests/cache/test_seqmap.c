// test_seqmap.c - logical-to-virtual block maps (seqmap.h): own chunks,
// shared prefixes of any length, chains of shares; and the same through the
// manager (ks_cache_req_share, ks_cache_locate).
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blocktab.h"
#include "seqmap.h"
#include "status.h"
#include "unit_util.h"

// Appends n own blocks to s, taking chunk first ids from *next_chunk (a
// stride lets consecutive chunks be non-adjacent, so lookups cannot cheat).
static void append(struct ks_seq *s, uint32_t n, uint32_t *next_chunk, uint32_t stride)
{
    for (uint32_t k = 0; k < n; k++) {
        if (ks_seq_needs_chunk(s)) {
            assert_int_equal(ks_seq_add_chunk(s, *next_chunk), KS_OK);
            *next_chunk += stride;
        }
        s->n++;
    }
}

static void own_chunks(void **state)
{
    (void)state;
    struct ks_seq s;
    ks_seq_init(&s);
    assert_int_equal(s.n, 0);
    assert_true(ks_seq_needs_chunk(&s));
    uint32_t next = 320;
    append(&s, 200, &next, 96); // chunks at 320, 416, 512, ... (7 chunks)
    assert_int_equal(s.n_own, 7);
    assert_int_equal(s.n_prefix, 0);
    for (uint32_t j = 0; j < 200; j++)
        assert_int_equal(ks_seq_lookup(&s, j), 320 + 96 * (j / KS_CHUNK) + j % KS_CHUNK);
    // chunk boundaries
    assert_int_equal(ks_seq_lookup(&s, 31), 320 + 31);
    assert_int_equal(ks_seq_lookup(&s, 32), 416);
    assert_int_equal(ks_seq_lookup(&s, 63), 416 + 31);
    assert_int_equal(ks_seq_lookup(&s, 64), 512);
    assert_int_equal(ks_seq_lookup(&s, 199), 320 + 96 * 6 + 199 % 32);
    assert_false(ks_seq_needs_chunk(&s)); // 200 = 6 * 32 + 8
    append(&s, 24, &next, 96);
    assert_true(ks_seq_needs_chunk(&s)); // 224 = 7 * 32
    assert_true(ks_seq_bytes(&s) >= sizeof s + 7 * sizeof(uint32_t));
    ks_seq_fini(&s);
    assert_int_equal(s.n, 0);
    assert_null(s.own);
}

static void shared_prefix_and_chains(void **state)
{
    (void)state;
    uint32_t next = 0;
    struct ks_seq a, b, c, d, e;
    ks_seq_init(&a);
    ks_seq_init(&b);
    ks_seq_init(&c);
    ks_seq_init(&d);
    ks_seq_init(&e);
    append(&a, 100, &next, 64); // chunks 0, 64, 128, 192: never adjacent

    assert_int_equal(ks_seq_share(&b, &a, 45), KS_OK);
    assert_int_equal(b.n, 45);
    assert_int_equal(b.n_prefix, 45);
    for (uint32_t j = 0; j < 45; j++)
        assert_int_equal(ks_seq_lookup(&b, j), ks_seq_lookup(&a, j));
    // b's own blocks start a fresh chunk right after the prefix
    assert_true(ks_seq_needs_chunk(&b));
    uint32_t b_own = next;
    append(&b, 40, &next, 64);
    assert_int_equal(b.n, 85);
    assert_int_equal(b.n_own, 2);
    for (uint32_t j = 45; j < 85; j++)
        assert_int_equal(ks_seq_lookup(&b, j), b_own + 64 * ((j - 45) / KS_CHUNK) + (j - 45) % KS_CHUNK);

    // c shares from b, which itself shares: 45 from a, 25 of b's own
    assert_int_equal(ks_seq_share(&c, &b, 70), KS_OK);
    for (uint32_t j = 0; j < 70; j++)
        assert_int_equal(ks_seq_lookup(&c, j), ks_seq_lookup(&b, j));
    for (uint32_t j = 0; j < 45; j++)
        assert_int_equal(ks_seq_lookup(&c, j), ks_seq_lookup(&a, j));
    append(&c, 33, &next, 64);
    assert_int_equal(c.n, 103);
    // d: one block of the chain's far end, then 80 of b, a cut inside b's
    // second own chunk (45 + 32 + 3)
    assert_int_equal(ks_seq_share(&d, &c, 1), KS_OK);
    assert_int_equal(ks_seq_lookup(&d, 0), ks_seq_lookup(&a, 0));
    ks_seq_fini(&d);
    ks_seq_init(&d);
    assert_int_equal(ks_seq_share(&d, &b, 80), KS_OK);
    for (uint32_t j = 0; j < 80; j++)
        assert_int_equal(ks_seq_lookup(&d, j), ks_seq_lookup(&b, j));
    assert_int_equal(ks_seq_share(&e, &c, 103), KS_OK); // everything, own blocks included
    for (uint32_t j = 0; j < 103; j++)
        assert_int_equal(ks_seq_lookup(&e, j), ks_seq_lookup(&c, j));
    append(&e, 1, &next, 64);
    assert_int_equal(ks_seq_lookup(&e, 103), next - 64);

    // refused: a non-empty destination, more than the source holds
    struct ks_seq f;
    ks_seq_init(&f);
    assert_int_equal(ks_seq_share(&b, &a, 10), KS_EINVAL);
    assert_int_equal(ks_seq_share(&f, &a, 101), KS_EINVAL);
    assert_int_equal(ks_seq_share(&f, &a, 0), KS_OK);
    assert_int_equal(f.n, 0);
    assert_int_equal(ks_seq_share(&f, &a, 100), KS_OK);
    for (uint32_t j = 0; j < 100; j++)
        assert_int_equal(ks_seq_lookup(&f, j), ks_seq_lookup(&a, j));
    ks_seq_fini(&a);
    ks_seq_fini(&b);
    ks_seq_fini(&c);
    ks_seq_fini(&d);
    ks_seq_fini(&e);
    ks_seq_fini(&f);
}

// Adjacent chunks merge into one segment; lookups do not change.
static void adjacent_chunks_merge(void **state)
{
    (void)state;
    uint32_t next = 32;
    struct ks_seq a, b;
    ks_seq_init(&a);
    ks_seq_init(&b);
    append(&a, 96, &next, 32); // chunks 32, 64, 96: one run of ids
    assert_int_equal(ks_seq_share(&b, &a, 90), KS_OK);
    assert_int_equal(b.n_seg, 1);
    for (uint32_t j = 0; j < 90; j++)
        assert_int_equal(ks_seq_lookup(&b, j), 32 + j);
    ks_seq_fini(&a);
    ks_seq_fini(&b);
}

// The same through the manager, with several groups.
static void manager_share_chain(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(64, 512, 0);
    p.groups = 3;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c), d = ks_test_req(c);
    ks_test_grow(c, a, 77, KS_L2);
    assert_int_equal(ks_cache_req_share(c, b, a, 37), KS_OK);
    assert_int_equal(ks_cache_req_len(c, b), 37);
    ks_test_grow(c, b, 30, KS_L2);
    assert_int_equal(ks_cache_req_share(c, d, b, 50), KS_OK);
    ks_test_grow(c, d, 5, KS_L1);
    for (uint32_t g = 0; g < 3; g++) {
        for (uint32_t j = 0; j < 37; j++) {
            assert_int_equal(ks_test_id(c, b, g, j), ks_test_id(c, a, g, j));
            assert_int_equal(ks_test_id(c, d, g, j), ks_test_id(c, a, g, j));
        }
        for (uint32_t j = 37; j < 50; j++) {
            assert_int_equal(ks_test_id(c, d, g, j), ks_test_id(c, b, g, j));
            assert_int_not_equal(ks_test_id(c, b, g, j), ks_test_id(c, a, g, j));
        }
        for (uint32_t j = 50; j < 55; j++)
            assert_int_equal(ks_test_tier(c, d, g, j), KS_L1);
    }
    // groups map to distinct ids
    assert_int_not_equal(ks_test_id(c, a, 0, 5), ks_test_id(c, a, 1, 5));
    // refused shares leave the request empty
    uint32_t e = ks_test_req(c);
    assert_int_equal(ks_cache_req_share(c, e, a, 78), KS_EINVAL);
    assert_int_equal(ks_cache_req_share(c, e, e, 0), KS_EINVAL);
    assert_int_equal(ks_cache_req_share(c, b, a, 1), KS_EINVAL); // b is not empty
    assert_int_equal(ks_cache_req_len(c, e), 0);
    ks_test_check(c);
    // freeing the middle of the chain keeps the others' mappings
    uint32_t id40 = ks_test_id(c, b, 2, 40);
    assert_int_equal(ks_cache_req_free(c, b), KS_OK);
    assert_int_equal(ks_test_id(c, d, 2, 40), id40);
    assert_int_equal(ks_test_loc(c, d, 2, 40).state, KS_BLK_RESIDENT);
    ks_test_check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(own_chunks),
        cmocka_unit_test(shared_prefix_and_chains),
        cmocka_unit_test(adjacent_chunks_merge),
        cmocka_unit_test(manager_share_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
