// test_kernel_select.c - block scoring and top-k selection, reference version:
// scores against double precision (normalised by the sum of |terms|, bound
// 1e-5), selections against a brute-force ranking as index sets (order
// ignored; ascending order checked separately), the Quest score as an upper
// bound of every q . k in its block, and ties going to the lower index.
#include "kernel_fixture.h"

static const uint32_t lens[] = {16 * 20, 16 * 9 + 5, 16 * 3, 7, 16 * 31 + 1};

struct sums {
    float *mn, *mx, *mean; // [n_pages][kv_heads][head_dim], slot = page
};

static void sums_init(struct sums *u, const struct kfx *f)
{
    size_t n = (size_t)f->n_pages * f->c.kv_heads * f->c.head_dim;
    u->mn = kfx_alloc(n * sizeof(float));
    u->mx = kfx_alloc(n * sizeof(float));
    u->mean = kfx_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        u->mn[i] = u->mx[i] = u->mean[i] = NAN; // unsummarised slots are poison
    uint32_t *pages = kfx_alloc(f->n_pages * sizeof(uint32_t)), n_full = 0;
    for (uint32_t s = 0; s < f->c.n_seqs; s++)
        for (uint32_t b = 0; b < f->seq_len[s] / f->c.block_size; b++)
            pages[n_full++] = f->block_table[s * f->max_blocks + b];
    struct ks_block_summary_params p = {.n = n_full, .block_size = f->c.block_size, .kv_heads = f->c.kv_heads,
                                        .head_dim = f->c.head_dim, .n_pages = f->n_pages, .n_slots = f->n_pages,
                                        .k = f->k, .page = pages, .slot = pages, .kmin = u->mn, .kmax = u->mx,
                                        .kmean = u->mean};
    assert_int_equal(ks_block_summary_ref(&p), KS_KERNEL_OK);
    free(pages);
}

static void sums_fini(struct sums *u)
{
    free(u->mn);
    free(u->mx);
    free(u->mean);
}

struct sel_out {
    uint32_t *sel, *n_sel;
    float *score;
    void *ws;
};

static struct ks_block_select_params sel_params(const struct kfx *f, const struct sums *u, struct sel_out *o,
                                                uint32_t sink, uint32_t window, uint32_t top_k, uint32_t kind,
                                                uint32_t reduce, uint32_t mode)
{
    struct ks_block_select_params p = {
        .n_seqs = f->c.n_seqs, .q_heads = f->c.q_heads, .kv_heads = f->c.kv_heads, .head_dim = f->c.head_dim,
        .block_size = f->c.block_size, .max_blocks = f->max_blocks, .n_slots = f->n_pages, .n_sink = sink,
        .n_window = window, .top_k = top_k, .max_sel = f->max_blocks, .score_kind = kind, .reduce = reduce,
        .mode = mode, .q = f->q, .seq_len = f->seq_len, .sum_table = f->block_table, .kmin = u->mn,
        .kmax = u->mx, .kmean = u->mean};
    uint32_t outs = mode == KS_SELECT_HEAD ? f->c.kv_heads : 1;
    size_t rows = (size_t)f->c.n_seqs * outs;
    o->sel = kfx_alloc(rows * p.max_sel * sizeof(uint32_t));
    o->n_sel = kfx_alloc(rows * sizeof(uint32_t));
    o->score = kfx_alloc(rows * p.max_blocks * sizeof(float));
    p.workspace_bytes = ks_block_select_workspace(&p);
    o->ws = kfx_alloc(p.workspace_bytes);
    p.sel = o->sel;
    p.n_sel = o->n_sel;
    p.score = o->score;
    p.workspace = o->ws;
    return p;
}

static void sel_out_fini(struct sel_out *o)
{
    free(o->sel);
    free(o->n_sel);
    free(o->score);
    free(o->ws);
}

// Checks scores against double precision and the selection against a
// brute-force ranking of the kernel's own scores.
static void check_selection(const struct kfx *f, const struct sums *u, const struct ks_block_select_params *p)
{
    const uint32_t outs = p->mode == KS_SELECT_HEAD ? p->kv_heads : 1, group = p->q_heads / p->kv_heads;
    const uint32_t hd = p->head_dim, bs = p->block_size;
    uint8_t *keep = kfx_alloc(p->max_blocks);
    for (uint32_t s = 0; s < p->n_seqs; s++) {
        const uint32_t len = f->seq_len[s], nb = (len + bs - 1) / bs, full = len / bs;
        for (uint32_t o = 0; o < outs; o++) {
            const size_t row = (size_t)s * outs + o;
            const float *sc = p->score + row * p->max_blocks;
            uint32_t h0 = p->mode == KS_SELECT_HEAD ? o * group : 0;
            uint32_t h1 = p->mode == KS_SELECT_HEAD ? h0 + group : p->q_heads;
            for (uint32_t b = 0; b < full; b++) {
                uint32_t slot = f->block_table[s * f->max_blocks + b];
                double want = 0.0, mag = 0.0;
                for (uint32_t h = h0; h < h1; h++) {
                    const float *q = f->q + ((size_t)s * p->q_heads + h) * hd;
                    size_t at = ((size_t)slot * p->kv_heads + h / group) * hd;
                    double x = 0.0;
                    for (uint32_t d = 0; d < hd; d++) {
                        double t = p->score_kind == KS_SCORE_QUEST
                                       ? fmax((double)q[d] * u->mn[at + d], (double)q[d] * u->mx[at + d])
                                       : (double)q[d] * u->mean[at + d];
                        x += t;
                        mag += fabs(t);
                    }
                    want = h == h0 ? x : p->reduce == KS_REDUCE_SUM ? want + x : fmax(want, x);
                }
                if (!(fabs(sc[b] - want) <= 1e-5 * mag))
                    fail_msg("seq %u out %u block %u: score %g, want %g", s, o, b, sc[b], want);
            }
            // brute force: forced blocks, then rank candidates by (score desc, index asc)
            memset(keep, 0, p->max_blocks);
            uint32_t want_n = 0;
            for (uint32_t b = 0; b < nb; b++) {
                int forced = b < p->n_sink || b + p->n_window >= nb || b >= full;
                uint32_t rank = 0;
                if (!forced)
                    for (uint32_t c = p->n_sink; c < nb; c++) {
                        int cand = !(c + p->n_window >= nb || c >= full);
                        if (cand && (sc[c] > sc[b] || (sc[c] == sc[b] && c < b)))
                            rank++;
                    }
                keep[b] = forced || rank < p->top_k;
                want_n += keep[b];
            }
            const uint32_t *sel = p->sel + row * p->max_sel;
            assert_int_equal(p->n_sel[row], want_n);
            for (uint32_t i = 0; i < p->n_sel[row]; i++) {
                if (sel[i] >= nb || !keep[sel[i]])
                    fail_msg("seq %u out %u: block %u selected, not in the expected set", s, o, sel[i]);
                keep[sel[i]] = 0; // a duplicate would fail here
                if (i)
                    assert_true(sel[i] > sel[i - 1]);
            }
            assert_true(p->n_sel[row] <= p->n_sink + p->n_window + 1 + p->top_k);
        }
    }
    free(keep);
}

static void selections_match_brute_force(void **state)
{
    (void)state;
    struct kfx_cfg c = {.n_seqs = 5, .q_heads = 8, .kv_heads = 2, .head_dim = 64, .block_size = 16,
                        .spare_pages = 3, .lens = lens, .q_amp = 1.0f, .seed = 31};
    struct kfx f;
    kfx_init(&f, &c);
    struct sums u;
    sums_init(&u, &f);
    static const uint32_t shapes[][3] = {{1, 2, 4}, {0, 0, 3}, {2, 1, 0}, {1, 4, 100}, {0, 1, 1}, {4, 4, 8}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (uint32_t kind = 0; kind <= KS_SCORE_MEAN; kind++)
            for (uint32_t reduce = 0; reduce <= KS_REDUCE_SUM; reduce++)
                for (uint32_t mode = 0; mode <= KS_SELECT_HEAD; mode++) {
                    struct sel_out o;
                    struct ks_block_select_params p =
                        sel_params(&f, &u, &o, shapes[i][0], shapes[i][1], shapes[i][2], kind, reduce, mode);
                    assert_int_equal(ks_block_select_ref(&p), KS_KERNEL_OK);
                    check_selection(&f, &u, &p);
                    sel_out_fini(&o);
                }
    sums_fini(&u);
    kfx_fini(&f);
}

// Quest: per head (group 1), the score bounds q . k of every key in the block,
// and equals it where every key of the block is the same.
static void quest_bounds_every_key(void **state)
{
    (void)state;
    struct kfx_cfg c = {.n_seqs = 5, .q_heads = 4, .kv_heads = 4, .head_dim = 32, .block_size = 16,
                        .spare_pages = 1, .lens = lens, .q_amp = 2.0f, .seed = 32};
    struct kfx f;
    kfx_init(&f, &c);
    const size_t row = (size_t)c.kv_heads * c.head_dim, pe = c.block_size * row;
    // block 0 of sequence 0 holds one key 16 times: there the bound is exact
    const uint32_t pg0 = f.block_table[0];
    for (uint32_t t = 1; t < c.block_size; t++)
        memcpy(f.k + pg0 * pe + t * row, f.k + pg0 * pe, row * sizeof(uint16_t));
    struct sums u;
    sums_init(&u, &f);
    struct sel_out o;
    struct ks_block_select_params p = sel_params(&f, &u, &o, 0, 0, 4, KS_SCORE_QUEST, KS_REDUCE_MAX, KS_SELECT_HEAD);
    assert_int_equal(ks_block_select_ref(&p), KS_KERNEL_OK);
    for (uint32_t s = 0; s < c.n_seqs; s++)
        for (uint32_t b = 0; b < f.seq_len[s] / c.block_size; b++)
            for (uint32_t h = 0; h < c.q_heads; h++) {
                const float *q = f.q + ((size_t)s * c.q_heads + h) * c.head_dim;
                uint32_t pg = f.block_table[s * f.max_blocks + b];
                double best = -INFINITY;
                for (uint32_t t = 0; t < c.block_size; t++) {
                    double x = 0.0;
                    for (uint32_t d = 0; d < c.head_dim; d++)
                        x += q[d] * (double)ks_half_to_float(f.k[pg * pe + t * row + h * c.head_dim + d]);
                    best = fmax(best, x);
                }
                float sc = o.score[((size_t)s * c.kv_heads + h) * f.max_blocks + b];
                assert_true(sc >= best - 1e-5 * (fabs(best) + 1.0));
                if (s == 0 && b == 0)
                    assert_true(fabs(sc - best) <= 1e-5 * (fabs(best) + 1.0));
            }
    sel_out_fini(&o);
    sums_fini(&u);
    kfx_fini(&f);
}

// Equal scores: the lower block indices win.
static void ties_go_to_lower_index(void **state)
{
    (void)state;
    struct kfx_cfg c = {.n_seqs = 5, .q_heads = 2, .kv_heads = 1, .head_dim = 8, .block_size = 16,
                        .spare_pages = 0, .lens = lens, .q_amp = 1.0f, .seed = 33};
    struct kfx f;
    kfx_init(&f, &c);
    struct sums u;
    sums_init(&u, &f);
    for (size_t i = 0; i < (size_t)f.n_pages * c.head_dim; i++) // every block alike
        u.mn[i] = -0.5f, u.mx[i] = 0.5f, u.mean[i] = 0.0f;
    struct sel_out o;
    struct ks_block_select_params p = sel_params(&f, &u, &o, 1, 1, 3, KS_SCORE_QUEST, KS_REDUCE_SUM, KS_SELECT_SEQ);
    assert_int_equal(ks_block_select_ref(&p), KS_KERNEL_OK);
    // sequence 0: 20 full blocks: sink 0, candidates 1..3 by index, window 19
    assert_int_equal(o.n_sel[0], 5);
    const uint32_t want[] = {0, 1, 2, 3, 19};
    for (int i = 0; i < 5; i++)
        assert_int_equal(o.sel[i], want[i]);
    // sequence 1: 9 full blocks and a partial one, kept as the window
    const uint32_t want1[] = {0, 1, 2, 3, 9};
    assert_int_equal(o.n_sel[1], 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(o.sel[p.max_sel + i], want1[i]);
    check_selection(&f, &u, &p);
    sel_out_fini(&o);
    sums_fini(&u);
    kfx_fini(&f);
}

static void bad_parameters(void **state)
{
    (void)state;
    struct kfx_cfg c = {.n_seqs = 5, .q_heads = 4, .kv_heads = 2, .head_dim = 8, .block_size = 16,
                        .spare_pages = 0, .lens = lens, .q_amp = 1.0f, .seed = 34};
    struct kfx f;
    kfx_init(&f, &c);
    struct sums u;
    sums_init(&u, &f);
    struct sel_out o;
    struct ks_block_select_params p = sel_params(&f, &u, &o, 1, 1, 3, KS_SCORE_QUEST, KS_REDUCE_MAX, KS_SELECT_SEQ);
    assert_int_equal(ks_block_select_ref(&p), KS_KERNEL_OK);
    struct ks_block_select_params b = p;
    b.max_sel = 5; // < sink + window + 1 + top_k
    assert_int_equal(ks_block_select_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.workspace_bytes--;
    assert_int_equal(ks_block_select_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.reduce = 7;
    assert_int_equal(ks_block_select_ref(&b), KS_KERNEL_EINVAL);
    b = p;
    b.n_slots = 1; // summary slots out of range
    assert_int_equal(ks_block_select_ref(&b), KS_KERNEL_EINVAL);
    sel_out_fini(&o);
    sums_fini(&u);
    kfx_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(selections_match_brute_force),
        cmocka_unit_test(quest_bounds_every_key),
        cmocka_unit_test(ties_go_to_lower_index),
        cmocka_unit_test(bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
