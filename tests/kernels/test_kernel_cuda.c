// test_kernel_cuda.c - every CUDA kernel against its C reference on the same
// random inputs; exits 77 (skipped) where no GPU answers, after checking that
// each `_cuda` entry point then says KS_KERNEL_ENODEV.
//
// Bounds (normalised error ||cuda - ref|| / ||ref||, per sequence):
//   summaries   min, max exact; mean within 1e-6 absolute (same order of sums)
//   scores      1e-5 of the sum of |terms|; selections equal as index sets,
//               except blocks whose ref score is within that tolerance of the
//               top-k threshold (a near tie may fall either way)
//   decode      outputs 1e-5; masses 1e-5 absolute; report lists exact
// The fp32 sums run in a different order (warp reductions, split-K), so the
// results differ in the last bits only; 1e-5 leaves two orders of margin.
// The decode runs on every shape of kfx_shape: the wide kernel
// (decode_wide_cuda.cu) where rows are whole 16-byte vectors, every group
// instantiation with fp16 and int8; the scalar one at head_dim 36 (and 40 in
// int8). Odd shapes run on a non-default stream.
#include "kernel_fixture.h"

#include "decode_wide.h"

// The reason the last failed kernel-library call wrote (the tests run on one thread).
static char reason[KS_KERNEL_ERR_LEN];

// Fails the test, with the reason, unless st is KS_KERNEL_OK.
static void expect_ok(int st, const char *what)
{
    if (st != KS_KERNEL_OK)
        fail_msg("%s: %s (%s)", what, ks_kernel_status_str(st), reason);
}

// A device copy of host memory (bytes may be 0); freed by the caller.
static void *dev_copy(const void *host, size_t bytes)
{
    void *d = NULL;
    expect_ok(ks_devbuf_alloc(&d, bytes, reason, sizeof reason), "ks_devbuf_alloc");
    if (host)
        expect_ok(ks_devbuf_upload(d, host, bytes, reason, sizeof reason), "ks_devbuf_upload");
    return d;
}

static void download(void *host, const void *dev, size_t bytes)
{
    expect_ok(ks_devbuf_download(host, dev, bytes, reason, sizeof reason), "ks_devbuf_download");
}


static void summaries(void **state)
{
    (void)state;
    for (int ci = 0; ci < KFX_N_SHAPES; ci++) {
        struct kfx_cfg c = kfx_shape(ci, 100 + ci);
        struct kfx f;
        kfx_init(&f, &c);
        uint32_t *pages = kfx_alloc(f.n_pages * sizeof(uint32_t)), n = 0;
        for (uint32_t s = 0; s < c.n_seqs; s++)
            for (uint32_t b = 0; b < f.seq_len[s] / c.block_size; b++)
                pages[n++] = f.block_table[s * f.max_blocks + b];
        const size_t se = (size_t)f.n_pages * c.kv_heads * c.head_dim, pe = kfx_page_elems(&f);
        float *h[6];
        for (int i = 0; i < 6; i++)
            h[i] = kfx_alloc(se * sizeof(float));
        struct ks_block_summary_params p = {.n = n, .block_size = c.block_size, .kv_heads = c.kv_heads,
                                            .head_dim = c.head_dim, .n_pages = f.n_pages, .n_slots = f.n_pages,
                                            .k = f.k, .page = pages, .slot = pages, .kmin = h[0], .kmax = h[1],
                                            .kmean = h[2]};
        assert_int_equal(ks_block_summary_ref(&p), KS_KERNEL_OK);
        struct ks_block_summary_params d = p;
        d.k = dev_copy(f.k, f.n_pages * pe * sizeof(uint16_t));
        d.page = d.slot = dev_copy(pages, n * sizeof(uint32_t));
        d.kmin = dev_copy(h[3], se * sizeof(float)); // zeros: slots not named stay so
        d.kmax = dev_copy(h[4], se * sizeof(float));
        d.kmean = dev_copy(h[5], se * sizeof(float));
        expect_ok(ks_block_summary_cuda(&d, NULL, reason, sizeof reason), "ks_block_summary_cuda");
        expect_ok(ks_devbuf_sync(reason, sizeof reason), "ks_devbuf_sync");
        download(h[3], d.kmin, se * sizeof(float));
        download(h[4], d.kmax, se * sizeof(float));
        download(h[5], d.kmean, se * sizeof(float));
        for (size_t i = 0; i < se; i++) {
            assert_true(h[3][i] == h[0][i] && h[4][i] == h[1][i]);
            assert_true(fabs(h[5][i] - h[2][i]) <= 1e-6);
        }
        ks_devbuf_free((void *)d.k);
        ks_devbuf_free((void *)d.page);
        ks_devbuf_free(d.kmin);
        ks_devbuf_free(d.kmax);
        ks_devbuf_free(d.kmean);
        for (int i = 0; i < 6; i++)
            free(h[i]);
        free(pages);
        kfx_fini(&f);
    }
}

static void selections(void **state)
{
    (void)state;
    static const uint32_t shapes[][3] = {{1, 2, 4}, {0, 0, 37}, {2, 1, 0}, {4, 8, 300}, {1, 1, 200}};
    for (int ci = 0; ci < KFX_N_SHAPES; ci++) {
        struct kfx_cfg c = kfx_shape(ci, 200 + ci);
        struct kfx f;
        kfx_init(&f, &c);
        // summaries on the host (the reference; tested above), slot = page
        const size_t se = (size_t)f.n_pages * c.kv_heads * c.head_dim;
        float *mn = kfx_alloc(se * 4), *mx = kfx_alloc(se * 4), *mean = kfx_alloc(se * 4);
        uint32_t *pages = kfx_alloc(f.n_pages * sizeof(uint32_t)), n = 0;
        for (uint32_t s = 0; s < c.n_seqs; s++)
            for (uint32_t b = 0; b < f.seq_len[s] / c.block_size; b++)
                pages[n++] = f.block_table[s * f.max_blocks + b];
        struct ks_block_summary_params sp = {.n = n, .block_size = c.block_size, .kv_heads = c.kv_heads,
                                             .head_dim = c.head_dim, .n_pages = f.n_pages, .n_slots = f.n_pages,
                                             .k = f.k, .page = pages, .slot = pages, .kmin = mn, .kmax = mx,
                                             .kmean = mean};
        assert_int_equal(ks_block_summary_ref(&sp), KS_KERNEL_OK);
        float *d_mn = dev_copy(mn, se * 4), *d_mx = dev_copy(mx, se * 4), *d_mean = dev_copy(mean, se * 4);
        float *d_q = dev_copy(f.q, (size_t)c.n_seqs * c.q_heads * c.head_dim * 4);
        uint32_t *d_len = dev_copy(f.seq_len, c.n_seqs * 4);
        uint32_t *d_bt = dev_copy(f.block_table, (size_t)c.n_seqs * f.max_blocks * 4);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (uint32_t mode = 0; mode <= KS_SELECT_HEAD; mode++)
                for (uint32_t kind = 0; kind <= KS_SCORE_MEAN; kind++) {
                    uint32_t reduce = (uint32_t)(si + kind) % 2;
                    struct ks_block_select_params p = {
                        .n_seqs = c.n_seqs, .q_heads = c.q_heads, .kv_heads = c.kv_heads, .head_dim = c.head_dim,
                        .block_size = c.block_size, .max_blocks = f.max_blocks, .n_slots = f.n_pages,
                        .n_sink = shapes[si][0], .n_window = shapes[si][1], .top_k = shapes[si][2],
                        .max_sel = f.max_blocks, .score_kind = kind, .reduce = reduce, .mode = mode, .q = f.q,
                        .seq_len = f.seq_len, .sum_table = f.block_table, .kmin = mn, .kmax = mx, .kmean = mean};
                    const uint32_t outs = mode == KS_SELECT_HEAD ? c.kv_heads : 1;
                    const size_t rows = (size_t)c.n_seqs * outs;
                    uint32_t *sel[2], *nsel[2];
                    float *score[2];
                    for (int i = 0; i < 2; i++) {
                        sel[i] = kfx_alloc(rows * p.max_sel * 4);
                        nsel[i] = kfx_alloc(rows * 4);
                        score[i] = kfx_alloc(rows * p.max_blocks * 4);
                    }
                    p.workspace_bytes = ks_block_select_workspace(&p);
                    p.workspace = kfx_alloc(p.workspace_bytes);
                    p.sel = sel[0];
                    p.n_sel = nsel[0];
                    p.score = score[0];
                    assert_int_equal(ks_block_select_ref(&p), KS_KERNEL_OK);
                    struct ks_block_select_params d = p;
                    d.q = d_q;
                    d.seq_len = d_len;
                    d.sum_table = d_bt;
                    d.kmin = d_mn;
                    d.kmax = d_mx;
                    d.kmean = d_mean;
                    d.sel = dev_copy(NULL, rows * p.max_sel * 4);
                    d.n_sel = dev_copy(NULL, rows * 4);
                    d.score = dev_copy(score[1], rows * p.max_blocks * 4);
                    d.workspace = dev_copy(NULL, p.workspace_bytes);
                    expect_ok(ks_block_select_cuda(&d, NULL, reason, sizeof reason), "ks_block_select_cuda");
                    expect_ok(ks_devbuf_sync(reason, sizeof reason), "ks_devbuf_sync");
                    download(sel[1], d.sel, rows * p.max_sel * 4);
                    download(nsel[1], d.n_sel, rows * 4);
                    download(score[1], d.score, rows * p.max_blocks * 4);
                    uint8_t *flag = kfx_alloc(f.max_blocks);
                    for (uint32_t s = 0; s < c.n_seqs; s++)
                        for (uint32_t o = 0; o < outs; o++) {
                            const size_t r = (size_t)s * outs + o;
                            const uint32_t full = f.seq_len[s] / c.block_size;
                            const float *rs = score[0] + r * p.max_blocks, *cs = score[1] + r * p.max_blocks;
                            double mag = 0.0;
                            for (uint32_t b = 0; b < full; b++)
                                mag = fmax(mag, fabs(rs[b]));
                            for (uint32_t b = 0; b < full; b++)
                                if (!(fabs(cs[b] - rs[b]) <= 1e-5 * (mag + 1.0)))
                                    fail_msg("cfg %d seq %u block %u: score %g, ref %g", ci, s, b, cs[b], rs[b]);
                            assert_int_equal(nsel[1][r], nsel[0][r]);
                            // sets: +1 for ref, +2 for cuda; threshold = lowest kept ref score
                            memset(flag, 0, f.max_blocks);
                            double thr = INFINITY;
                            for (uint32_t i = 0; i < nsel[0][r]; i++) {
                                uint32_t b = sel[0][r * p.max_sel + i];
                                flag[b] |= 1;
                                if (b < full)
                                    thr = fmin(thr, rs[b]);
                            }
                            for (uint32_t i = 0; i < nsel[1][r]; i++) {
                                uint32_t b = sel[1][r * p.max_sel + i];
                                assert_true(b < f.max_blocks && !(flag[b] & 2));
                                flag[b] |= 2;
                                if (i)
                                    assert_true(b > sel[1][r * p.max_sel + i - 1]);
                            }
                            for (uint32_t b = 0; b < f.max_blocks; b++)
                                if ((flag[b] == 1 || flag[b] == 2) && !(fabs(rs[b] - thr) <= 2e-5 * (mag + 1.0)))
                                    fail_msg("cfg %d seq %u out %u: block %u in one selection only (score %g, "
                                             "threshold %g)",
                                             ci, s, o, b, rs[b], thr);
                        }
                    free(flag);
                    ks_devbuf_free(d.sel);
                    ks_devbuf_free(d.n_sel);
                    ks_devbuf_free(d.score);
                    ks_devbuf_free(d.workspace);
                    free(p.workspace);
                    for (int i = 0; i < 2; i++) {
                        free(sel[i]);
                        free(nsel[i]);
                        free(score[i]);
                    }
                }
        ks_devbuf_free(d_mn);
        ks_devbuf_free(d_mx);
        ks_devbuf_free(d_mean);
        ks_devbuf_free(d_q);
        ks_devbuf_free(d_len);
        ks_devbuf_free(d_bt);
        free(mn);
        free(mx);
        free(mean);
        free(pages);
        kfx_fini(&f);
    }
}

enum { DENSE, SPARSE, SPARSE_SKIP, SPARSE_I8 };

// One decode kernel on the GPU and on the host, compared.
static void decode_case(int ci, int kind, uint64_t seed)
{
    struct kfx_cfg c = kfx_shape(ci, seed);
    struct kfx f;
    kfx_init(&f, &c);
    if (kind == DENSE)
        kfx_select_all(&f);
    else
        kfx_select_random(&f, 0.3);
    kfx_residency_random(&f, 0.75);
    if (kind == SPARSE_SKIP)
        kfx_poison_missing(&f);
    if (kind == SPARSE_I8)
        kfx_quantize(&f);
    const int sparse = kind != DENSE;
    struct ks_decode_params p = kfx_params(&f);
    p.resident = f.resident;
    p.skip_missing = kind == SPARSE_SKIP;
    struct kfx_out ref, got;
    kfx_out_init(&ref, &f, &p, sparse);
    struct ks_decode_params h = p; // host buffers for the downloads
    kfx_out_init(&got, &f, &h, sparse);
    int (*run_ref)(const struct ks_decode_params *) =
        kind == DENSE ? ks_dense_decode_ref : kind == SPARSE_I8 ? ks_sparse_decode_i8_ref : ks_sparse_decode_ref;
    int (*run_cuda)(const struct ks_decode_params *, struct CUstream_st *, char *, size_t) =
        kind == DENSE ? ks_dense_decode_cuda : kind == SPARSE_I8 ? ks_sparse_decode_i8_cuda : ks_sparse_decode_cuda;
    assert_int_equal(run_ref(&p), KS_KERNEL_OK);

    const size_t pe = kfx_page_elems(&f), S = c.n_seqs, cap = p.report_cap;
    const size_t n_out = S * c.q_heads * c.head_dim;
    struct ks_decode_params d = p;
    d.q = dev_copy(f.q, n_out * 4);
    d.seq_len = dev_copy(f.seq_len, S * 4);
    d.block_table = dev_copy(f.block_table, S * f.max_blocks * 4);
    d.k = kind == SPARSE_I8 ? NULL : dev_copy(f.k, f.n_pages * pe * 2);
    d.v = kind == SPARSE_I8 ? NULL : dev_copy(f.v, f.n_pages * pe * 2);
    d.k_i8 = kind == SPARSE_I8 ? dev_copy(f.k_i8, f.n_pages * pe) : NULL;
    d.v_i8 = kind == SPARSE_I8 ? dev_copy(f.v_i8, f.n_pages * pe) : NULL;
    d.k_scale = kind == SPARSE_I8 ? dev_copy(f.k_scale, (size_t)f.n_pages * c.kv_heads * 4) : NULL;
    d.v_scale = kind == SPARSE_I8 ? dev_copy(f.v_scale, (size_t)f.n_pages * c.kv_heads * 4) : NULL;
    d.sel = dev_copy(f.sel, S * f.max_sel * 4);
    d.n_sel = dev_copy(f.n_sel, S * 4);
    d.resident = dev_copy(f.resident, S * f.max_blocks);
    d.out = dev_copy(NULL, n_out * 4);
    d.acc_blocks = dev_copy(NULL, S * cap * 4);
    d.acc_mass = dev_copy(NULL, S * cap * 4);
    d.n_acc = dev_copy(NULL, S * 4);
    d.missing = dev_copy(NULL, S * cap * 4);
    d.n_missing = dev_copy(NULL, S * 4);
    d.workspace = dev_copy(NULL, d.workspace_bytes);
    // the wide kernel takes every shape whose rows are whole 16-byte vectors
    // (device memory is aligned); test_kernel_wide.c lists which shapes those are
    assert_int_equal(ks_decode_wide(&d, kind == SPARSE_I8), c.head_dim % (kind == SPARSE_I8 ? 16 : 8) == 0);
    // odd shapes run on a stream of their own (non-blocking: it does not wait
    // for the default stream, so the uploads are synchronised first)
    struct CUstream_st *stream = NULL;
    if (ci % 2) {
        expect_ok(ks_devbuf_sync(reason, sizeof reason), "sync before the stream");
        expect_ok(ks_stream_new(&stream, reason, sizeof reason), "ks_stream_new");
    }
    expect_ok(run_cuda(&d, stream, reason, sizeof reason), "decode kernel");
    if ((stream ? ks_stream_sync(stream, reason, sizeof reason) : ks_devbuf_sync(reason, sizeof reason)) !=
        KS_KERNEL_OK)
        fail_msg("cfg %d kind %d: %s", ci, kind, reason);
    ks_stream_free(stream);
    download(got.out, d.out, n_out * 4);
    download(got.acc_blocks, d.acc_blocks, S * cap * 4);
    download(got.acc_mass, d.acc_mass, S * cap * 4);
    download(got.n_acc, d.n_acc, S * 4);
    download(got.missing, d.missing, S * cap * 4);
    download(got.n_missing, d.n_missing, S * 4);
    const size_t per = (size_t)c.q_heads * c.head_dim;
    for (uint32_t s = 0; s < S; s++) {
        char what[64];
        snprintf(what, sizeof what, "cfg %d kind %d seq %u output", ci, kind, s);
        KFX_BOUND(kfx_nerr_f(got.out + s * per, ref.out + s * per, per), 1e-5, what);
        assert_int_equal(got.n_acc[s], ref.n_acc[s]);
        assert_int_equal(got.n_missing[s], ref.n_missing[s]);
        double sum = 0.0;
        for (uint32_t i = 0; i < ref.n_acc[s]; i++) {
            assert_int_equal(got.acc_blocks[s * cap + i], ref.acc_blocks[s * cap + i]);
            if (!(fabs(got.acc_mass[s * cap + i] - ref.acc_mass[s * cap + i]) <= 1e-5))
                fail_msg("%s: mass of entry %u: %g, ref %g", what, i, got.acc_mass[s * cap + i],
                         ref.acc_mass[s * cap + i]);
            sum += got.acc_mass[s * cap + i];
        }
        assert_true(sum == 0.0 || fabs(sum - 1.0) <= 1e-5);
        for (uint32_t i = 0; i < ref.n_missing[s]; i++)
            assert_int_equal(got.missing[s * cap + i], ref.missing[s * cap + i]);
    }
    const void *bufs[] = {d.q, d.seq_len, d.block_table, d.k, d.v, d.k_i8, d.v_i8, d.k_scale, d.v_scale, d.sel,
                          d.n_sel, d.resident, d.out, d.acc_blocks, d.acc_mass, d.n_acc, d.missing, d.n_missing,
                          d.workspace};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ks_devbuf_free((void *)bufs[i]);
    kfx_out_fini(&ref);
    kfx_out_fini(&got);
    kfx_fini(&f);
}

static void decodes(void **state)
{
    (void)state;
    for (int ci = 0; ci < KFX_N_DECODE_SHAPES; ci++)
        for (int kind = DENSE; kind <= SPARSE_I8; kind++)
            decode_case(ci, kind, 300 + 10 * ci + kind);
}

// Without a device every `_cuda` entry point answers ENODEV (the parameters
// are valid; the pointers are host memory and must not be touched), and
// says why in the caller's err.
static int expect_enodev(void)
{
    static const uint32_t lens[] = {40};
    struct kfx_cfg c = {.n_seqs = 1, .q_heads = 2, .kv_heads = 1, .head_dim = 32, .block_size = 16,
                        .spare_pages = 0, .lens = lens, .q_amp = 1.0f, .seed = 1};
    struct kfx f;
    kfx_init(&f, &c);
    kfx_quantize(&f);
    kfx_select_all(&f);
    struct ks_decode_params p = kfx_params(&f);
    struct kfx_out o;
    kfx_out_init(&o, &f, &p, 1);
    float sums[3 * 32 * 4];
    uint32_t page = 0, sel[8], n_sel;
    struct ks_block_summary_params sp = {.n = 1, .block_size = 16, .kv_heads = 1, .head_dim = 32,
                                         .n_pages = f.n_pages, .n_slots = 1, .k = f.k, .page = &page,
                                         .slot = &page, .kmin = sums, .kmax = sums + 32, .kmean = sums + 64};
    struct ks_block_select_params bp = {.n_seqs = 1, .q_heads = 2, .kv_heads = 1, .head_dim = 32,
                                        .block_size = 16, .max_blocks = f.max_blocks, .n_slots = 1,
                                        .top_k = 1, .max_sel = 4, .q = f.q, .seq_len = f.seq_len,
                                        .sum_table = f.block_table, .kmin = sums, .kmax = sums + 32,
                                        .sel = sel, .n_sel = &n_sel, .workspace = sums,
                                        .workspace_bytes = sizeof sums};
    char why[6][KS_KERNEL_ERR_LEN] = {""};
    int st[] = {ks_block_summary_cuda(&sp, NULL, why[0], sizeof why[0]),
                ks_block_select_cuda(&bp, NULL, why[1], sizeof why[1]),
                ks_dense_decode_cuda(&p, NULL, why[2], sizeof why[2]),
                ks_sparse_decode_cuda(&p, NULL, why[3], sizeof why[3]),
                ks_sparse_decode_i8_cuda(&p, NULL, why[4], sizeof why[4])};
    int bad = 0;
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        if (st[i] != KS_KERNEL_ENODEV || !why[i][0]) {
            fprintf(stderr, "entry %zu: %s (%s), want KS_KERNEL_ENODEV with a reason\n", i,
                    ks_kernel_status_str(st[i]), why[i]);
            bad = 1;
        }
    void *dummy = &bad;
    if (ks_devbuf_alloc(&dummy, 16, why[5], sizeof why[5]) != KS_KERNEL_ENODEV || dummy != NULL || !why[5][0]) {
        fprintf(stderr, "ks_devbuf_alloc without a device: want KS_KERNEL_ENODEV, NULL and a reason\n");
        bad = 1;
    }
    // no reason wanted: NULL, 0 is accepted
    if (ks_devbuf_sync(NULL, 0) != KS_KERNEL_ENODEV) {
        fprintf(stderr, "ks_devbuf_sync(NULL, 0) without a device: want KS_KERNEL_ENODEV\n");
        bad = 1;
    }
    kfx_out_fini(&o);
    kfx_fini(&f);
    return bad;
}

int main(void)
{
    char why[KS_KERNEL_ERR_LEN] = "";
    if (ks_device_count(why, sizeof why) == 0) {
        fprintf(stderr, "kernel_cuda: no GPU (%s, backend %s): skipped\n", why, ks_device_backend());
        return expect_enodev() ? 1 : KS_TEST_SKIP_CODE;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summaries),
        cmocka_unit_test(selections),
        cmocka_unit_test(decodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
