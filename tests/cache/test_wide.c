// test_wide.c - the cache manager's wide forms (AVX-512: the access report,
// access_wide.c; a device buffer's victim scan and a shared pool's sampling
// round, evict.c) against its plain forms. Each test runs two managers on the same randomized history, one told
// to take the plain forms (plain_forms), and requires the same results: every
// access's tier, every plan's batches block by block and page by page, every
// statistic, and block tables equal bit for bit (heat, recency, location).
// On a CPU without AVX-512 both managers would take the plain forms: the
// tests skip.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cache_impl.h" // the block tables compared; which forms this CPU runs
#include "rng.h"
#include "unit_util.h"

// The two managers' block tables, entry by entry.
static void compare_tables(const struct ks_cache *a, const struct ks_cache *b, uint32_t t)
{
    uint32_t n = ks_blocktab_ids_used(&a->tab);
    assert_int_equal(n, ks_blocktab_ids_used(&b->tab));
    for (uint32_t id = 0; id < n; id++) {
        const struct ks_block *x = &a->tab.blk[id], *y = &b->tab.blk[id];
        if (x->loc != y->loc || x->last != y->last || x->meta != y->meta)
            fail_msg("step %u block %u: loc %#x last %u meta %#llx (wide), loc %#x last %u meta %#llx (plain)", t, id,
                     x->loc, x->last, (unsigned long long)x->meta, y->loc, y->last, (unsigned long long)y->meta);
    }
}

static void compare_stats(const struct ks_cache *c0, const struct ks_cache *c1)
{
    const struct ks_cache_stats *a = ks_cache_stats(c0), *b = ks_cache_stats(c1);
    assert_int_equal(a->accesses, b->accesses);
    for (int t = 0; t < KS_TIERS; t++) {
        assert_int_equal(a->found[t], b->found[t]);
        assert_int_equal(a->evictions[t], b->evictions[t]);
    }
    assert_int_equal(a->found_inflight, b->found_inflight);
    assert_int_equal(a->dropped, b->dropped);
    assert_int_equal(a->aggregated, b->aggregated);
    assert_int_equal(a->batches, b->batches);
}

// Two managers of parameters p that check their invariants at every step
// (debug): c[0] takes the widest forms this CPU has, c[1] the plain ones.
static void pair(struct ks_cache_params *p, struct ks_cache *c[2])
{
    p->debug = 1;
    c[0] = ks_test_new(p);
    p->plain_forms = 1;
    c[1] = ks_test_new(p);
}

// The end of a run: statistics and tables compared, invariants checked, both freed.
static void finish(struct ks_cache *c[2], uint32_t t)
{
    compare_stats(c[0], c[1]);
    compare_tables(c[0], c[1], t);
    for (int m = 0; m < 2; m++) {
        ks_test_check(c[m]);
        ks_cache_free(c[m]);
    }
}

// Device buffers: both wide forms. Two managers take the same randomized
// history (selections that overlap from step to step, so that last uses tie
// by the hundred; a new block in every sequence each step; dense steps
// accounted in aggregate, in one case; batches confirmed, some aborted;
// requests ending and their buffers reused) and must agree on every access,
// every plan's batches, block by block and page by page, every statistic and
// every block table entry. Both check their invariants after each plan,
// confirm and abort (debug), the lru keys the wide scan reads among them.
enum { WR = 6, WG = 2, WK = 40, WT = 260 };

struct wide_req {
    uint32_t id, len, end; // manager's request, blocks per group, length at which it ends
    uint32_t sel[WG][WK], n[WG];
};

static void compare_plans(const struct ks_plan *a, const struct ks_plan *b, uint32_t t)
{
    if (a->n != b->n)
        fail_msg("step %u: %u batches planned with the wide scan, %u with the plain one", t, a->n, b->n);
    for (uint32_t i = 0; i < a->n; i++) {
        const struct ks_batch *x = a->batch[i], *y = b->batch[i];
        assert_int_equal(x->n, y->n);
        assert_int_equal(x->src, y->src);
        assert_int_equal(x->dst, y->dst);
        for (uint32_t k = 0; k < x->n; k++)
            if (x->blocks[k] != y->blocks[k] || x->src_pages[k] != y->src_pages[k] ||
                x->dst_pages[k] != y->dst_pages[k])
                fail_msg("step %u batch %u block %u: block %u page %u -> %u (wide), block %u page %u -> %u (plain)", t,
                         i, k, x->blocks[k], x->src_pages[k], x->dst_pages[k], y->blocks[k], y->src_pages[k],
                         y->dst_pages[k]);
    }
}

static void new_wide_req(struct ks_cache *c[2], struct wide_req *q, struct ks_rng *rng, uint32_t B)
{
    uint32_t id[2] = {ks_test_req(c[0]), ks_test_req(c[1])};
    assert_int_equal(id[0], id[1]);
    q->id = id[0];
    q->len = B / 2 + ks_rng_below(rng, B);
    q->end = q->len + 40 + ks_rng_below(rng, 120);
    for (int m = 0; m < 2; m++)
        ks_test_grow(c[m], q->id, q->len, KS_L1);
    memset(q->n, 0, sizeof q->n);
}

static void run_wide(enum ks_evict_policy pol, uint32_t B, int dense_steps)
{
    struct ks_cache_params p = ks_test_params((WR + 2) * WG * B, 4096, 0);
    p.n_blocks = 16384;
    p.buffer_blocks = B;
    p.groups = WG;
    p.evict = pol;
    p.migration_batch = 16;
    struct ks_cache *c[2];
    pair(&p, c);
    struct ks_rng rng;
    ks_rng_seed(&rng, 11 + pol + B);
    struct wide_req q[WR];
    for (uint32_t r = 0; r < WR; r++)
        new_wide_req(c, &q[r], &rng, B);
    uint64_t aborted = 0, dense = 0;
    for (uint32_t t = 1; t <= WT; t++) {
        for (int m = 0; m < 2; m++)
            assert_int_equal(ks_cache_step(c[m], t), KS_OK);
        for (uint32_t r = 0; r < WR; r++) {
            struct wide_req *w = &q[r];
            if (dense_steps && (t + r) % 9 == 0) { // dense: every block of every group, in aggregate if it may be
                for (uint32_t g = 0; g < WG; g++) {
                    int done[2];
                    for (int m = 0; m < 2; m++)
                        assert_int_equal(ks_cache_access_uniform(c[m], w->id, g, 0.01f, &done[m], NULL), KS_OK);
                    assert_int_equal(done[0], done[1]);
                    dense += (uint64_t)done[0];
                    if (done[0])
                        continue;
                    struct ks_access a[512];
                    assert_true(w->len <= 512);
                    for (uint32_t j = 0; j < w->len; j++)
                        a[j] = (struct ks_access){.block = j, .mass = 0.01f, .next = KS_NONE};
                    for (int m = 0; m < 2; m++)
                        assert_int_equal(ks_cache_access(c[m], w->id, g, a, w->len, NULL, NULL), KS_OK);
                }
                continue;
            }
            for (uint32_t g = 0; g < WG; g++) { // keep 70% of the last selection, draw the rest
                uint8_t taken[512] = {0};
                uint32_t n = 0;
                for (uint32_t i = 0; i < w->n[g]; i++)
                    if (ks_rng_unit(&rng) < 0.7 && !taken[w->sel[g][i]]) {
                        taken[w->sel[g][i]] = 1;
                        w->sel[g][n++] = w->sel[g][i];
                    }
                while (n < WK) {
                    uint32_t j = ks_rng_below(&rng, w->len);
                    if (!taken[j]) {
                        taken[j] = 1;
                        w->sel[g][n++] = j;
                    }
                }
                w->n[g] = n;
                struct ks_access a[WK];
                for (uint32_t i = 0; i < n; i++)
                    a[i] = (struct ks_access){.block = w->sel[g][i], .mass = (float)(1.0 - ks_rng_unit(&rng)),
                                              .next = KS_NONE};
                uint8_t where[2][WK];
                struct ks_access_report rep[2];
                for (int m = 0; m < 2; m++)
                    assert_int_equal(ks_cache_access(c[m], w->id, g, a, n, where[m], &rep[m]), KS_OK);
                if (memcmp(where[0], where[1], n) != 0)
                    fail_msg("step %u request %u group %u: the accesses found their blocks in different tiers", t,
                             w->id, g);
            }
        }
        struct ks_plan plan[2];
        for (int m = 0; m < 2; m++)
            assert_int_equal(ks_cache_plan(c[m], UINT64_MAX, &plan[m]), KS_OK);
        compare_plans(&plan[0], &plan[1], t);
        compare_tables(c[0], c[1], t);
        for (uint32_t i = 0; i < plan[0].n; i++) // every 13th batch aborted: its pages freed, its blocks stay
            for (int m = 0; m < 2; m++) {
                if ((t + i) % 13 == 0)
                    assert_int_equal(ks_cache_abort(c[m], plan[m].batch[i]), KS_OK);
                else
                    assert_int_equal(ks_cache_confirm(c[m], plan[m].batch[i]), KS_OK);
                aborted += m == 0 && (t + i) % 13 == 0;
            }
        for (uint32_t r = 0; r < WR; r++) { // each request writes a token: a block in each full buffer
            struct wide_req *w = &q[r];
            for (int m = 0; m < 2; m++)
                ks_test_grow(c[m], w->id, 1, KS_L1);
            if (++w->len == w->end) {
                for (int m = 0; m < 2; m++)
                    assert_int_equal(ks_cache_req_free(c[m], w->id), KS_OK);
                new_wide_req(c, w, &rng, B);
            }
            for (uint32_t g = 0; g < WG; g++)
                if (ks_test_tier(c[0], w->id, g, w->len - 1) != ks_test_tier(c[1], w->id, g, w->len - 1))
                    fail_msg("step %u request %u group %u: the new block went to different tiers", t, w->id, g);
        }
    }
    const struct ks_cache_stats *a = ks_cache_stats(c[0]);
    assert_true(a->dropped > 1000); // the scans had victims to choose, many of them
    assert_true(aborted > 10);
    assert_true(a->found[KS_L2] > 1000);
    if (dense_steps) // a dense step of a request that fits its buffer is accounted in aggregate
        assert_true(dense > 0);
    finish(c, WT);
}

// A case of run_wide: its policy, buffer size and whether dense steps come.
struct buffer_case {
    enum ks_evict_policy pol;
    uint32_t B;
    int dense_steps;
};

static void buffers(void **state)
{
    const struct buffer_case *k = *state;
    if (!ks_evict_wide_available() || !ks_access_wide_available())
        skip(); // both managers would take the plain forms
    run_wide(k->pol, k->B, k->dense_steps);
}

// One pool shared by every request (no buffers): the access report's and the
// sampling round's wide forms under heat and lru, without prefetch and with a
// window of 4 (candidates of every class, in order). Calls of 1 to 70 accesses, so
// that groups of eight and tails mix; a block twice in some calls (the wide
// form leaves that group to the plain one); masses of every kind (zero,
// negative and NaN count as zero; tiny and large ones round); a tier below
// with misses, migrations in flight and their blocks accessed.
static void run_pool(enum ks_evict_policy pol, uint32_t window)
{
    struct ks_cache_params p = ks_test_params(600, 1200, 4000);
    p.n_blocks = 8192;
    p.groups = 3;
    p.evict = pol;
    p.evict_samples = 5;
    p.prefetch_window = window;
    p.migration_batch = 16;
    struct ks_cache *c[2];
    pair(&p, c);
    enum { RQ = 4, LEN = 400, T = 300 };
    uint32_t req[RQ];
    for (uint32_t r = 0; r < RQ; r++) {
        for (int m = 0; m < 2; m++) {
            req[r] = ks_test_req(c[m]);
            ks_test_grow(c[m], req[r], LEN, KS_L1);
        }
    }
    struct ks_rng rng;
    ks_rng_seed(&rng, 5 + pol);
    const float special[] = {0.0f, -1.0f, NAN, 1e-30f, 3e38f, 1.0f};
    struct ks_plan held[2] = {{0}};
    uint64_t twice = 0;
    for (uint32_t t = 1; t <= T; t++) {
        for (int m = 0; m < 2; m++)
            assert_int_equal(ks_cache_step(c[m], t), KS_OK);
        for (uint32_t r = 0; r < RQ; r++)
            for (uint32_t g = 0; g < p.groups; g++) {
                struct ks_access a[70];
                uint32_t n = 1 + ks_rng_below(&rng, 70), centre = ks_rng_below(&rng, LEN);
                for (uint32_t i = 0; i < n; i++) {
                    uint32_t j = (centre + ks_rng_below(&rng, 160)) % LEN;
                    float mass = ks_rng_below(&rng, 40) == 0 ? special[ks_rng_below(&rng, 6)]
                                                             : (float)ks_rng_unit(&rng);
                    a[i] = (struct ks_access){.block = j, .mass = mass, .next = KS_NONE,
                                              .ahead = (uint8_t)(i % 3 == 0)};
                }
                if (n > 9 && t % 5 == 0) { // a block twice in one call
                    a[n - 1].block = a[n - 4].block;
                    twice++;
                }
                uint8_t where[2][70];
                struct ks_access_report rep[2];
                for (int m = 0; m < 2; m++)
                    assert_int_equal(ks_cache_access(c[m], req[r], g, a, n, where[m], &rep[m]), KS_OK);
                if (memcmp(where[0], where[1], n) != 0 || memcmp(&rep[0], &rep[1], sizeof rep[0]) != 0)
                    fail_msg("step %u request %u group %u: the reports differ", t, r, g);
            }
        // the previous step's batches land now, so that some accesses found their blocks in flight
        for (int m = 0; m < 2; m++) {
            ks_test_confirm_all(c[m], &held[m]);
            assert_int_equal(ks_cache_plan(c[m], 256 * 4096, &held[m]), KS_OK);
        }
        compare_plans(&held[0], &held[1], t);
        compare_tables(c[0], c[1], t);
    }
    for (int m = 0; m < 2; m++)
        ks_test_confirm_all(c[m], &held[m]);
    const struct ks_cache_stats *st = ks_cache_stats(c[0]);
    assert_true(st->found[KS_L2] + st->found[KS_L3] > 1000); // misses, many
    assert_true(st->found_inflight > 0);
    assert_true(twice > 10);
    if (window)
        assert_true(st->pf_issued > 500 && st->pf_used > 100);
    finish(c, T);
}

// A case of run_pool: its policy and prefetch window.
struct pool_case {
    enum ks_evict_policy pol;
    uint32_t window;
};

static void pool(void **state)
{
    const struct pool_case *k = *state;
    if (!ks_access_wide_available())
        skip();
    run_pool(k->pol, k->window);
}

int main(void)
{
    // buffers of 128 pages hold two spans; of 100, none (and a tail of 4
    // pages); dense steps leave aggregate accesses pending (the scans are then
    // plain), and their application later moves the lru keys the wide form reads
    static struct buffer_case lru_spans = {KS_EVICT_LRU, 128, 0}, lru_dense = {KS_EVICT_LRU, 128, 1},
                              lru_no_spans = {KS_EVICT_LRU, 100, 0}, heat = {KS_EVICT_HEAT, 128, 0},
                              fifo = {KS_EVICT_FIFO, 100, 0};
    static struct pool_case pool_heat = {KS_EVICT_HEAT, 0}, pool_lru = {KS_EVICT_LRU, 0},
                            pool_heat_window = {KS_EVICT_HEAT, 4}, pool_lru_window = {KS_EVICT_LRU, 4};
#define CASE(fn, k) {#k, fn, NULL, NULL, &k} // cmocka_unit_test_prestate, named by the case
    const struct CMUnitTest tests[] = {
        CASE(buffers, lru_spans), CASE(buffers, lru_dense), CASE(buffers, lru_no_spans), CASE(buffers, heat),
        CASE(buffers, fifo),      CASE(pool, pool_heat),    CASE(pool, pool_lru),         CASE(pool, pool_heat_window),
        CASE(pool, pool_lru_window),
    };
#undef CASE
    return cmocka_run_group_tests(tests, NULL, NULL);
}
