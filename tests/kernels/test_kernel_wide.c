// test_kernel_wide.c - the wide decode kernel's arithmetic (decode_wide.h) on
// the host, where no GPU is needed: vector conversions exact, the chunk walk
// covering every token once, and a host model of attend_wide_kernel (its
// chunks, online softmax and report pairs, then the combine and report
// steps of decode_cuda.cu, its missing list compacted as the GPU does) against ks_*_decode_ref within the CUDA test's
// bounds (outputs 1e-5 normalised, masses 1e-5 absolute). What only a GPU
// shows (warp shuffles, barriers, the thread mapping) is test_kernel_cuda.c's.
#include "kernel_fixture.h"

#include "decode_wide.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// Every 16-bit pattern in every position, against ks_half_to_float, bit for bit.
static void f16_vectors(void **state)
{
    (void)state;
    kfx_seed(1);
    for (uint32_t h = 0; h < 65536; h++) {
        for (int pos = 0; pos < 8; pos++) {
            uint32_t w[4];
            for (int i = 0; i < 4; i++)
                w[i] = (uint32_t)kfx_next();
            w[pos / 2] = (w[pos / 2] & ~(0xffffu << (16 * (pos % 2)))) | h << (16 * (pos % 2));
            float x[8];
            ks_wide_f16x8(w, x);
            for (int k = 0; k < 8; k++) {
                const float want = ks_half_to_float((uint16_t)(w[k / 2] >> (16 * (k % 2))));
                if (bits_of(x[k]) != bits_of(want))
                    fail_msg("word %08x element %d: %a, want %a", w[k / 2], k, (double)x[k], (double)want);
            }
        }
    }
}

// Every int8 value in every position converts exactly.
static void i8_vectors(void **state)
{
    (void)state;
    kfx_seed(2);
    for (int v = -128; v < 128; v++)
        for (int pos = 0; pos < 16; pos++) {
            int8_t b[16];
            for (int k = 0; k < 16; k++)
                b[k] = (int8_t)(kfx_next() & 0xff);
            b[pos] = (int8_t)v;
            uint32_t w[4];
            memcpy(w, b, sizeof w); // little-endian: the lowest byte of w[0] is b[0]
            float x[16];
            ks_wide_i8x16(w, x);
            for (int k = 0; k < 16; k++)
                if (x[k] != (float)b[k])
                    fail_msg("byte %d of %d: %g, want %d", k, v, (double)x[k], b[k]);
        }
}

// Closed forms of the running-softmax move.
static void rescale(void **state)
{
    (void)state;
    float m = -INFINITY, l = 0.0f;
    assert_true(ks_wide_rescale(&m, &l, 2.0f) == 0.0f && m == 2.0f && l == 0.0f);
    m = -INFINITY;
    assert_true(ks_wide_rescale(&m, &l, -INFINITY) == 0.0f && l == 0.0f); // nothing seen, empty chunk
    m = 1.0f;
    l = 2.0f;
    const float a = ks_wide_rescale(&m, &l, 3.0f);
    assert_true(a == expf(-2.0f) && l == 2.0f * expf(-2.0f) && m == 3.0f);
    assert_true(ks_wide_rescale(&m, &l, 3.0f) == 1.0f && l == 2.0f * expf(-2.0f));
    assert_true(ks_wide_pow2(1) == 1 && ks_wide_pow2(3) == 4 && ks_wide_pow2(6) == 8 && ks_wide_pow2(16) == 16);
}

// The chunk walk visits every token of every entry exactly once, claims no
// slot past an entry's tokens, gives entries without tokens no chunk of their
// own when blocks are longer than a chunk, and puts each token's slot in its
// entry's report segment.
static void chunk_walk(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 2, 7, 8, 16, 31, 32, 33, 64, 100, 256};
    kfx_seed(3);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const uint32_t bs = sizes[si];
        for (int trial = 0; trial < 50; trial++) {
            const uint32_t n_e = kfx_below(ks_decode_split_blocks(bs) + 1);
            uint32_t ntok[256], seen[256];
            for (uint32_t e = 0; e < n_e; e++) {
                const double u = kfx_unif();
                ntok[e] = u < 0.2 ? 0 : u < 0.6 ? bs : 1 + kfx_below(bs);
                seen[e] = 0;
            }
            uint32_t e0, t0, chunks = 0;
            for (ks_wide_first(bs, ntok, n_e, &e0, &t0); e0 < n_e; ks_wide_next(bs, ntok, n_e, &e0, &t0)) {
                if (bs > KS_WIDE_SLOTS)
                    assert_true(ntok[e0] > 0 && t0 < ntok[e0]);
                for (uint32_t r = 0; r < KS_WIDE_SLOTS; r++) {
                    uint32_t e, t;
                    if (!ks_wide_slot(bs, ntok, n_e, e0, t0, r, &e, &t))
                        continue;
                    assert_true(e < n_e && t < ntok[e]);
                    assert_int_equal(t, seen[e]); // in order, once
                    seen[e]++;
                    // slot r's report segment starts at a slot of the same
                    // entry that holds a token (where its sum lands)
                    const uint32_t start = bs > KS_WIDE_SLOTS ? 0 : r - t, end = ks_wide_seg_end(bs, r);
                    assert_true(r < end && end <= KS_WIDE_SLOTS && end - start <= (bs < 32 ? bs : 32));
                    uint32_t se, st;
                    assert_true(ks_wide_slot(bs, ntok, n_e, e0, t0, start, &se, &st) && se == e);
                }
                assert_true(++chunks <= 256 * 8);
            }
            for (uint32_t e = 0; e < n_e; e++)
                assert_int_equal(seen[e], ntok[e]);
        }
    }
}

// 16 bytes of row `row_at` (bytes from the cache's start), vector c.
static void load_vec(const void *base, size_t row_at, uint32_t c, uint32_t w[4])
{
    memcpy(w, (const char *)base + row_at + (size_t)c * 16, 16);
}

// The missing list of combine_report_kernel's report (decode_cuda.cu) for
// one sequence of n entries, its threads played one chunk of `threads` at a
// time: ballots per warp, counts, ks_report_slot. Returns the count.
static uint32_t missing_model(const struct ks_decode_params *p, int sparse, uint32_t s, uint32_t n, uint32_t threads,
                              uint32_t *missing)
{
    uint32_t base = 0, counts[KS_COMBINE_THREADS / 32 * 4];
    assert_true(threads % 32 == 0 && threads / 32 <= sizeof counts / sizeof counts[0]);
    for (uint32_t i0 = 0; i0 < n; i0 += threads) {
        uint32_t ballot[sizeof counts / sizeof counts[0]] = {0};
        for (uint32_t t = 0; t < threads; t++) {
            const uint32_t i = i0 + t, b = i < n ? (sparse ? p->sel[(size_t)s * p->max_sel + i] : i) : 0;
            if (i < n && p->resident && !p->resident[(size_t)s * p->max_blocks + b])
                ballot[t / 32] |= 1u << (t % 32);
        }
        for (uint32_t x = 0; x < threads / 32; x++)
            counts[x] = (uint32_t)__builtin_popcount(ballot[x]);
        for (uint32_t t = 0; t < threads; t++)
            if (ballot[t / 32] >> (t % 32) & 1u) {
                const uint32_t i = i0 + t;
                missing[(size_t)s * p->report_cap + base + ks_report_slot(ballot[t / 32], t % 32, counts, t / 32)] =
                    sparse ? p->sel[(size_t)s * p->max_sel + i] : i;
            }
        for (uint32_t x = 0; x < threads / 32; x++)
            base += counts[x];
    }
    return base;
}

// The host model of one decode call through attend_wide_kernel, then
// combine_report_kernel, over p's host buffers: out and acc_mass.
static void wide_model(const struct ks_decode_params *p, int sparse, int i8, float *out, float *acc_mass)
{
    const uint32_t group = p->q_heads / p->kv_heads, hd = p->head_dim, bs = p->block_size;
    const uint32_t vec = i8 ? 16 : 8, per = ks_decode_split_blocks(bs), cap = ks_decode_cap(p, sparse);
    const uint32_t n_split = ks_decode_ws_layout(p, sparse).n_split;
    const size_t row_bytes = (size_t)hd * (i8 ? 1 : 2);
    const void *kb = i8 ? (const void *)p->k_i8 : (const void *)p->k;
    const void *vb = i8 ? (const void *)p->v_i8 : (const void *)p->v;
    float *part_acc = kfx_alloc((size_t)group * n_split * hd * sizeof(float));
    float *part_ml = kfx_alloc((size_t)group * n_split * 2 * sizeof(float));
    float *blk_ml = kfx_alloc((size_t)p->q_heads * (cap + 1) * 2 * sizeof(float)); // one sequence
    float *head_ml = kfx_alloc((size_t)p->q_heads * 2 * sizeof(float));
    float *vrow = kfx_alloc((size_t)KS_WIDE_SLOTS * hd * sizeof(float));
    for (uint32_t s = 0; s < p->n_seqs; s++) {
        const uint32_t len = p->seq_len[s], n = sparse ? p->n_sel[s] : ks_ceil_div(len, bs);
        for (uint32_t kvh = 0; kvh < p->kv_heads; kvh++) {
            const uint32_t h0 = kvh * group;
            for (uint32_t split = 0; split < n_split; split++) {
                const uint32_t i0 = split * per, n_e = n > i0 ? (n - i0 < per ? n - i0 : per) : 0;
                uint32_t page[256], ntok[256];
                float ksc[256], vsc[256];
                for (uint32_t e = 0; e < n_e; e++) {
                    const uint32_t b = sparse ? p->sel[(size_t)s * p->max_sel + i0 + e] : i0 + e;
                    const int skip = p->skip_missing && p->resident && !p->resident[(size_t)s * p->max_blocks + b];
                    ntok[e] = 0;
                    if (b * bs < len && !skip) {
                        page[e] = p->block_table[(size_t)s * p->max_blocks + b];
                        ntok[e] = len - b * bs < bs ? len - b * bs : bs;
                        if (i8) {
                            ksc[e] = p->k_scale[(size_t)page[e] * p->kv_heads + kvh] * p->scale;
                            vsc[e] = p->v_scale[(size_t)page[e] * p->kv_heads + kvh];
                        }
                    } else {
                        for (uint32_t g = 0; g < group; g++) {
                            blk_ml[((size_t)(h0 + g) * cap + i0 + e) * 2] = -INFINITY;
                            blk_ml[((size_t)(h0 + g) * cap + i0 + e) * 2 + 1] = 0.0f;
                        }
                    }
                }
                float m_run[KS_KERNEL_MAX_GROUP], l_run[KS_KERNEL_MAX_GROUP], rep_m[KS_KERNEL_MAX_GROUP],
                    rep_l[KS_KERNEL_MAX_GROUP];
                float *acc = part_acc + (size_t)split * group * hd; // [g][hd]
                for (uint32_t g = 0; g < group; g++) {
                    m_run[g] = rep_m[g] = -INFINITY;
                    l_run[g] = rep_l[g] = 0.0f;
                    for (uint32_t d = 0; d < hd; d++)
                        acc[(size_t)g * hd + d] = 0.0f;
                }
                uint32_t e0, t0;
                for (ks_wide_first(bs, ntok, n_e, &e0, &t0); e0 < n_e; ks_wide_next(bs, ntok, n_e, &e0, &t0)) {
                    float logit[KS_KERNEL_MAX_GROUP][KS_WIDE_SLOTS];
                    int has[KS_WIDE_SLOTS];
                    uint32_t se[KS_WIDE_SLOTS];
                    for (uint32_t r = 0; r < KS_WIDE_SLOTS; r++) {
                        uint32_t t;
                        has[r] = ks_wide_slot(bs, ntok, n_e, e0, t0, r, &se[r], &t);
                        for (uint32_t d = 0; d < hd; d++)
                            vrow[r * hd + d] = 0.0f;
                        for (uint32_t g = 0; g < group; g++)
                            logit[g][r] = -INFINITY;
                        if (!has[r])
                            continue;
                        const size_t at = (((size_t)page[se[r]] * bs + t) * p->kv_heads + kvh) * row_bytes;
                        float dot[KS_KERNEL_MAX_GROUP] = {0};
                        for (uint32_t c = 0; c < hd / vec; c++) {
                            uint32_t w[4];
                            float x[16];
                            load_vec(kb, at, c, w);
                            if (i8)
                                ks_wide_i8x16(w, x);
                            else
                                ks_wide_f16x8(w, x);
                            for (uint32_t g = 0; g < group; g++)
                                for (uint32_t k = 0; k < vec; k++)
                                    dot[g] += p->q[((size_t)s * p->q_heads + h0 + g) * hd + c * vec + k] * x[k];
                            load_vec(vb, at, c, w);
                            if (i8)
                                ks_wide_i8x16(w, vrow + r * hd + c * vec);
                            else
                                ks_wide_f16x8(w, vrow + r * hd + c * vec);
                        }
                        for (uint32_t g = 0; g < group; g++)
                            logit[g][r] = dot[g] * (i8 ? ksc[se[r]] : p->scale);
                    }
                    for (uint32_t g = 0; g < group; g++) {
                        float mc = -INFINITY, wt[KS_WIDE_SLOTS], sum = 0.0f;
                        for (uint32_t r = 0; r < KS_WIDE_SLOTS; r++)
                            mc = fmaxf(mc, logit[g][r]);
                        const float alpha = ks_wide_rescale(&m_run[g], &l_run[g], fmaxf(m_run[g], mc));
                        for (uint32_t r = 0; r < KS_WIDE_SLOTS; r++)
                            sum += wt[r] = ks_wide_exp_from(logit[g][r], m_run[g]);
                        l_run[g] += sum;
                        float *bm = blk_ml + (size_t)(h0 + g) * cap * 2;
                        for (uint32_t r = 0; r < KS_WIDE_SLOTS; r++) {
                            const int start = bs > KS_WIDE_SLOTS ? r == 0 : r % bs == 0;
                            if (!start || !has[r])
                                continue;
                            float seg = 0.0f;
                            for (uint32_t q = r; q < ks_wide_seg_end(bs, r); q++)
                                seg += wt[q];
                            if (bs <= KS_WIDE_SLOTS) {
                                bm[(i0 + se[r]) * 2] = m_run[g];
                                bm[(i0 + se[r]) * 2 + 1] = seg;
                                continue;
                            }
                            if (t0 == 0) {
                                rep_m[g] = -INFINITY;
                                rep_l[g] = 0.0f;
                            }
                            ks_wide_rescale(&rep_m[g], &rep_l[g], m_run[g]);
                            rep_l[g] += seg;
                            if (t0 + KS_WIDE_SLOTS >= ntok[e0]) {
                                bm[(i0 + e0) * 2] = rep_m[g];
                                bm[(i0 + e0) * 2 + 1] = rep_l[g];
                            }
                        }
                        float *a = acc + (size_t)g * hd;
                        for (uint32_t d = 0; d < hd; d++)
                            a[d] *= alpha;
                        for (uint32_t r = 0; r < KS_WIDE_SLOTS; r++) {
                            const float w = i8 ? wt[r] * (has[r] ? vsc[se[r]] : 0.0f) : wt[r];
                            for (uint32_t d = 0; d < hd; d++)
                                a[d] += w * vrow[r * hd + d];
                        }
                    }
                }
                for (uint32_t g = 0; g < group; g++) {
                    part_ml[((size_t)g * n_split + split) * 2] = m_run[g];
                    part_ml[((size_t)g * n_split + split) * 2 + 1] = l_run[g];
                }
            }
            // combine_report_kernel: the splits into out and the head's max and sum
            for (uint32_t g = 0; g < group; g++) {
                const float *ml = part_ml + (size_t)g * n_split * 2;
                float m = -INFINITY, l = 0.0f;
                for (uint32_t x = 0; x < n_split; x++)
                    m = fmaxf(m, ml[x * 2]);
                for (uint32_t x = 0; x < n_split; x++)
                    l += ml[x * 2 + 1] * ks_wide_exp_from(ml[x * 2], m);
                for (uint32_t d = 0; d < hd; d++) {
                    float o = 0.0f;
                    for (uint32_t x = 0; x < n_split; x++)
                        o += part_acc[((size_t)x * group + g) * hd + d] * ks_wide_exp_from(ml[x * 2], m);
                    out[((size_t)s * p->q_heads + h0 + g) * hd + d] = l != 0.0f ? o / l : 0.0f;
                }
                head_ml[(h0 + g) * 2] = m;
                head_ml[(h0 + g) * 2 + 1] = l;
            }
        }
        // then the report: each entry's mass, averaged over the query heads
        for (uint32_t i = 0; i < n; i++) {
            float mass = 0.0f;
            for (uint32_t h = 0; h < p->q_heads; h++) {
                const float m = head_ml[h * 2], l = head_ml[h * 2 + 1];
                const float bm = blk_ml[((size_t)h * cap + i) * 2], bl = blk_ml[((size_t)h * cap + i) * 2 + 1];
                if (l != 0.0f)
                    mass += bl * ks_wide_exp_from(bm, m) / l;
            }
            acc_mass[(size_t)s * p->report_cap + i] = mass / (float)p->q_heads;
        }
    }
    free(part_acc);
    free(part_ml);
    free(blk_ml);
    free(head_ml);
    free(vrow);
}

enum { DENSE, SPARSE, SPARSE_SKIP, SPARSE_I8 };

// The model against the reference on every decode shape of the CUDA test
// whose rows are whole vectors; and which of those shapes the CUDA test
// sends through the wide kernel: every group instantiation, fp16 and int8,
// and the scalar kernel for some.
static void model_vs_ref(void **state)
{
    (void)state;
    int wide[2][5] = {{0}}, scalar[2] = {0};
    for (int ci = 0; ci < KFX_N_DECODE_SHAPES; ci++)
        for (int kind = DENSE; kind <= SPARSE_I8; kind++) {
            const int i8 = kind == SPARSE_I8, sparse = kind != DENSE;
            struct kfx_cfg c = kfx_shape(ci, 700 + 10 * ci + kind);
            if (c.head_dim % (i8 ? 16 : 8)) {
                scalar[i8] = 1;
                continue;
            }
            uint32_t g = ks_wide_pow2(c.q_heads / c.kv_heads), lg = 0;
            while ((1u << lg) < g)
                lg++;
            wide[i8][lg] = 1;
            struct kfx f;
            kfx_init(&f, &c);
            if (kind == DENSE)
                kfx_select_all(&f);
            else
                kfx_select_random(&f, 0.3);
            kfx_residency_random(&f, 0.75);
            if (kind == SPARSE_SKIP)
                kfx_poison_missing(&f);
            if (i8)
                kfx_quantize(&f);
            struct ks_decode_params p = kfx_params(&f);
            p.resident = f.resident;
            p.skip_missing = kind == SPARSE_SKIP;
            struct kfx_out ref;
            kfx_out_init(&ref, &f, &p, sparse);
            int (*run_ref)(const struct ks_decode_params *) =
                kind == DENSE ? ks_dense_decode_ref : i8 ? ks_sparse_decode_i8_ref : ks_sparse_decode_ref;
            assert_int_equal(run_ref(&p), KS_KERNEL_OK);
            const size_t per = (size_t)c.q_heads * c.head_dim;
            float *out = kfx_alloc(c.n_seqs * per * sizeof(float));
            float *mass = kfx_alloc((size_t)c.n_seqs * p.report_cap * sizeof(float));
            uint32_t *missing = kfx_alloc((size_t)c.n_seqs * p.report_cap * sizeof(uint32_t));
            wide_model(&p, sparse, i8, out, mass);
            for (uint32_t s = 0; s < c.n_seqs; s++) {
                char what[64];
                snprintf(what, sizeof what, "shape %d kind %d seq %u output", ci, kind, s);
                KFX_BOUND(kfx_nerr_f(out + s * per, ref.out + s * per, per), 1e-5, what);
                double sum = 0.0;
                for (uint32_t i = 0; i < ref.n_acc[s]; i++) {
                    const float got = mass[s * p.report_cap + i], want = ref.acc_mass[s * p.report_cap + i];
                    if (!(fabs(got - want) <= 1e-5))
                        fail_msg("%s: mass of entry %u: %g, ref %g", what, i, got, want);
                    sum += got;
                }
                assert_true(sum == 0.0 || fabs(sum - 1.0) <= 1e-5);
                // the missing list, in access order, whatever the block's width
                const uint32_t n = ref.n_acc[s];
                for (uint32_t threads = 32; threads <= KS_COMBINE_THREADS * 4; threads *= 2) {
                    memset(missing + s * p.report_cap, 0xff, p.report_cap * sizeof(uint32_t));
                    assert_int_equal(missing_model(&p, sparse, s, n, threads, missing), ref.n_missing[s]);
                    for (uint32_t i = 0; i < ref.n_missing[s]; i++)
                        assert_int_equal(missing[s * p.report_cap + i], ref.missing[s * p.report_cap + i]);
                }
            }
            free(out);
            free(mass);
            free(missing);
            kfx_out_fini(&ref);
            kfx_fini(&f);
        }
    for (int i8 = 0; i8 < 2; i8++) {
        for (int lg = 0; lg < 5; lg++)
            if (!wide[i8][lg])
                fail_msg("no shape sends %s group %d through the wide kernel", i8 ? "int8" : "fp16", 1 << lg);
        if (!scalar[i8])
            fail_msg("no shape sends %s through the scalar kernel", i8 ? "int8" : "fp16");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f16_vectors), cmocka_unit_test(i8_vectors),   cmocka_unit_test(rescale),
        cmocka_unit_test(chunk_walk),  cmocka_unit_test(model_vs_ref),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
