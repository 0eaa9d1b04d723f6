// bench.c - the kernel timing of bench.h.
//
// Inputs, made once from the seed before any clock starts, in the backend's
// memory (host for ref, device for cuda):
//   - a page pool of max(batch) * context / block_size pages of random fp16
//     K and V (and an int8 copy with per-page scales when sparse_i8 runs);
//   - LAYERS block tables, each a random permutation of the pool: every
//     sequence owns context / block_size pages, scattered. Successive calls
//     take successive tables, as successive decode layers read different KV,
//     so a small point does not find its pages in a cache warmed by the last
//     call;
//   - when summary or select runs, the summaries of every page (slot = page),
//     made by the backend's own summary kernel.
// Per point (kernel, batch, blocks) the queries, selections, outputs and the
// workspace are allocated before the clock starts and freed after; kernels
// never allocate. What a point times:
//   summary   : the summaries of the first `blocks` blocks of each sequence;
//   select    : Quest scores of the whole context, top-k = blocks, no sink or
//               window (KS_SELECT_SEQ, KS_REDUCE_MAX);
//   sparse    : fp16 decode over `blocks` random blocks of the context
//               (uniform without replacement, ascending), access report on;
//   sparse_i8 : the same over the int8 cache;
//   dense     : fp16 decode over a context of exactly `blocks` blocks, which
//               reads as many bytes as the sparse point.
// Timing: one untimed call, then one call timed alone fixes `inner`, the
// calls per sample that make a sample last at least KS_BENCH_MIN_SAMPLE_S;
// each of `repeat` samples is `inner` calls back to back between two waits for the
// device (ks_devbuf_sync; none needed on the CPU), read on the monotonic
// clock. A point's time is the median over the samples of sample / inner.
// NOTE: back-to-back calls are what a decode step does, layer after layer;
// it hides the launch and the wait, which timing one call alone would add.
#define _POSIX_C_SOURCE 200809L // gethostname, gmtime_r

#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomicfile.h"
#include "blockselect.h"
#include "clock.h"
#include "copybench.h"
#include "decode.h"
#include "device.h"
#include "kernel.h"
#include "machine.h"
#include "rng.h"
#include "status.h"
#include "summary.h"

enum {
    MAX_INNER = 100000, // calls per sample
    COPY_REPEAT = 10,   // timed device copies
};
#define COPY_BYTES (1ull << 30) // bytes per timed device copy
#define LAYERS KS_BENCH_LAYERS

const char *const ks_bench_kernel_names[KS_BENCH_N_KERNELS] = {"summary", "select", "sparse", "sparse_i8", "dense"};

// What is shared by every point, in the backend's memory.
struct pool {
    int cuda;            // 1: device memory and `_cuda` kernels
    uint32_t ctx_blocks; // blocks per sequence (context / block_size)
    uint32_t max_batch;
    uint32_t n_pages;    // max_batch * ctx_blocks
    uint16_t *k, *v;     // [n_pages][block_size][kv_heads][head_dim] fp16
    int8_t *k8, *v8;     // the same shape, int8
    float *ks, *vs;      // [n_pages][kv_heads] int8 scales
    float *kmin, *kmax, *kmean; // [n_pages][kv_heads][head_dim] summaries, slot = page
    uint32_t *tables;    // [LAYERS][max_batch][ctx_blocks] pages
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// ---- backend memory -------------------------------------------------------

// *p receives `bytes` of backend memory. KS_KERNEL_OK, or a kernel status
// (EINVAL stands for host memory running out). The functions here that
// return a kernel status take err, len for the reason of a device failure
// (kernel.h); a host one writes none.
static int buf_alloc(int cuda, void **p, size_t bytes, char *err, size_t len)
{
    if (cuda)
        return ks_devbuf_alloc(p, bytes, err, len);
    *p = malloc(bytes ? bytes : 1);
    return *p ? KS_KERNEL_OK : KS_KERNEL_EINVAL;
}

static void buf_free(int cuda, void *p)
{
    if (cuda)
        ks_devbuf_free(p);
    else
        free(p);
}

// Host memory to fill for the backend buffer buf: buf itself on the CPU, a
// staging copy for the device (NULL when memory runs out).
static void *stage(int cuda, void *buf, size_t bytes)
{
    return cuda ? malloc(bytes ? bytes : 1) : buf;
}

// Moves a staging copy into its device buffer and frees it (nothing on the CPU).
static int unstage(int cuda, void *buf, void *host, size_t bytes, char *err, size_t len)
{
    if (!cuda)
        return KS_KERNEL_OK;
    int st = ks_devbuf_upload(buf, host, bytes, err, len);
    free(host);
    return st;
}

static int sync_backend(int cuda, char *err, size_t len)
{
    return cuda ? ks_devbuf_sync(err, len) : KS_KERNEL_OK;
}

// ---- random inputs -------------------------------------------------------

// fp16 values of magnitude [1/8, 1/2) with random sign: sign, exponent 12 or
// 13 and mantissa taken from random bits, four per draw.
static void fill_half(struct ks_rng *r, uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        uint64_t x = ks_rng_next(r);
        for (size_t j = 0; j < 4 && i + j < n; j++, x >>= 16)
            h[i + j] = (uint16_t)((x & 0x87ffu) | 0x3000u);
    }
}

static void fill_i8(struct ks_rng *r, int8_t *q, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x = ks_rng_next(r);
        for (size_t j = 0; j < 8 && i + j < n; j++, x >>= 8)
            q[i + j] = (int8_t)((int)(x & 0xffu) % 255 - 127);
    }
}

static void fill_unit(struct ks_rng *r, float *f, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++)
        f[i] = (float)(lo + (hi - lo) * ks_rng_unit(r));
}

// A random permutation of 0..n-1 (Fisher-Yates).
static void fill_perm(struct ks_rng *r, uint32_t *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        a[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = ks_rng_below(r, i), t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

// k of 0..n-1 uniformly without replacement, ascending (selection sampling).
static void fill_choice(struct ks_rng *r, uint32_t *out, uint32_t k, uint32_t n)
{
    uint32_t got = 0;
    for (uint32_t i = 0; i < n && got < k; i++)
        if ((double)(n - i) * ks_rng_unit(r) < (double)(k - got))
            out[got++] = i;
}

// ---- the shared pool -----------------------------------------------------

static void pool_free(struct pool *p)
{
    void *bufs[] = {p->k, p->v, p->k8, p->v8, p->ks, p->vs, p->kmin, p->kmax, p->kmean, p->tables};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        buf_free(p->cuda, bufs[i]);
    memset(p, 0, sizeof *p);
}

enum fill { FILL_HALF, FILL_I8, FILL_SCALE, FILL_TABLES };

// Allocates *buf, n elements of `size` bytes, and fills it as `how` says.
// Kernel status; *buf is the pool's to free, even on failure.
static int pool_buf(struct pool *p, struct ks_rng *r, void **buf, size_t n, size_t size, enum fill how, char *err,
                    size_t len)
{
    int st = buf_alloc(p->cuda, buf, n * size, err, len);
    if (st != KS_KERNEL_OK)
        return st;
    void *h = stage(p->cuda, *buf, n * size);
    if (!h)
        return KS_KERNEL_EINVAL;
    switch (how) {
    case FILL_HALF:
        fill_half(r, h, n);
        break;
    case FILL_I8:
        fill_i8(r, h, n);
        break;
    case FILL_SCALE: // |x| < 1/2 in the fp16 cache: scales of that order
        fill_unit(r, h, n, 0.25 / 127, 0.5 / 127);
        break;
    case FILL_TABLES:
        for (size_t l = 0; l < LAYERS; l++)
            fill_perm(r, (uint32_t *)h + l * p->n_pages, p->n_pages);
        break;
    }
    return unstage(p->cuda, *buf, h, n * size, err, len);
}

// Summaries of every page, by the backend's summary kernel. Kernel status.
static int pool_summarise(struct pool *p, const struct ks_bench_params *o, char *err, size_t len)
{
    size_t n = p->n_pages;
    uint32_t *idx = NULL;
    int st = buf_alloc(p->cuda, (void **)&idx, n * sizeof *idx, err, len);
    uint32_t *h = st == KS_KERNEL_OK ? stage(p->cuda, idx, n * sizeof *idx) : NULL;
    if (st == KS_KERNEL_OK && !h)
        st = KS_KERNEL_EINVAL;
    if (st == KS_KERNEL_OK) {
        for (size_t i = 0; i < n; i++)
            h[i] = (uint32_t)i;
        st = unstage(p->cuda, idx, h, n * sizeof *idx, err, len);
    }
    if (st == KS_KERNEL_OK) {
        struct ks_block_summary_params sp = {
            .n = p->n_pages, .block_size = o->block_size, .kv_heads = o->kv_heads, .head_dim = o->head_dim,
            .n_pages = p->n_pages, .n_slots = p->n_pages, .k = p->k, .page = idx, .slot = idx,
            .kmin = p->kmin, .kmax = p->kmax, .kmean = p->kmean};
        st = p->cuda ? ks_block_summary_cuda(&sp, NULL, err, len) : ks_block_summary_ref(&sp);
    }
    if (st == KS_KERNEL_OK)
        st = sync_backend(p->cuda, err, len);
    buf_free(p->cuda, idx);
    return st;
}

// Makes the pool the chosen kernels need. Kernel status.
static int pool_init(struct pool *p, const struct ks_bench_params *o, int cuda, char *err, size_t len)
{
    memset(p, 0, sizeof *p);
    p->cuda = cuda;
    p->ctx_blocks = o->context / o->block_size;
    p->max_batch = o->batch[o->n_batch - 1];
    p->n_pages = p->max_batch * p->ctx_blocks;
    struct ks_rng r;
    ks_rng_seed(&r, o->seed);
    size_t page = (size_t)o->block_size * o->kv_heads * o->head_dim; // elements
    size_t cache = page * p->n_pages, heads = (size_t)p->n_pages * o->kv_heads;
    int fp16 = o->run[KS_BENCH_SUMMARY] || o->run[KS_BENCH_SELECT] || o->run[KS_BENCH_SPARSE] || o->run[KS_BENCH_DENSE];
    int st = pool_buf(p, &r, (void **)&p->tables, (size_t)LAYERS * p->n_pages, sizeof *p->tables, FILL_TABLES,
                      err, len);
    if (st == KS_KERNEL_OK && fp16)
        st = pool_buf(p, &r, (void **)&p->k, cache, sizeof *p->k, FILL_HALF, err, len);
    if (st == KS_KERNEL_OK && fp16)
        st = pool_buf(p, &r, (void **)&p->v, cache, sizeof *p->v, FILL_HALF, err, len);
    if (st == KS_KERNEL_OK && o->run[KS_BENCH_SPARSE_I8]) {
        st = pool_buf(p, &r, (void **)&p->k8, cache, sizeof *p->k8, FILL_I8, err, len);
        if (st == KS_KERNEL_OK)
            st = pool_buf(p, &r, (void **)&p->v8, cache, sizeof *p->v8, FILL_I8, err, len);
        if (st == KS_KERNEL_OK)
            st = pool_buf(p, &r, (void **)&p->ks, heads, sizeof *p->ks, FILL_SCALE, err, len);
        if (st == KS_KERNEL_OK)
            st = pool_buf(p, &r, (void **)&p->vs, heads, sizeof *p->vs, FILL_SCALE, err, len);
    }
    if (st == KS_KERNEL_OK && (o->run[KS_BENCH_SUMMARY] || o->run[KS_BENCH_SELECT])) {
        size_t sum = heads * o->head_dim * sizeof(float);
        st = buf_alloc(cuda, (void **)&p->kmin, sum, err, len);
        if (st == KS_KERNEL_OK)
            st = buf_alloc(cuda, (void **)&p->kmax, sum, err, len);
        if (st == KS_KERNEL_OK)
            st = buf_alloc(cuda, (void **)&p->kmean, sum, err, len);
        if (st == KS_KERNEL_OK)
            st = pool_summarise(p, o, err, len);
    }
    return st;
}

// ---- one point -----------------------------------------------------------

enum { MAX_BUFS = 12 };

struct point {
    enum ks_bench_kernel kernel;
    const struct pool *pool;
    uint32_t n; // entries per layer in pages (summary)
    uint32_t *pages; // [LAYERS][n] summary: the pages (and slots) to summarise
    struct ks_block_summary_params sum;
    struct ks_block_select_params sel;
    struct ks_decode_params dec;
    void *bufs[MAX_BUFS]; // backend memory owned by the point
    int n_bufs;
};

static void point_free(struct point *pt)
{
    for (int i = 0; i < pt->n_bufs; i++)
        buf_free(pt->pool->cuda, pt->bufs[i]);
    pt->n_bufs = 0;
}

// A point buffer of `bytes`, filled by the host function fill (or left
// unset when fill is NULL: an output). Kernel status.
static int point_buf(struct point *pt, void **out, size_t bytes, struct ks_rng *r,
                     void (*fill)(struct ks_rng *r, void *h, size_t bytes, const void *ctx), const void *ctx,
                     char *err, size_t len)
{
    int cuda = pt->pool->cuda;
    int st = buf_alloc(cuda, out, bytes, err, len);
    if (st != KS_KERNEL_OK)
        return st;
    pt->bufs[pt->n_bufs++] = *out;
    if (!fill)
        return KS_KERNEL_OK;
    void *h = stage(cuda, *out, bytes);
    if (!h)
        return KS_KERNEL_EINVAL;
    fill(r, h, bytes, ctx);
    return unstage(cuda, *out, h, bytes, err, len);
}

static void fill_query(struct ks_rng *r, void *h, size_t bytes, const void *ctx)
{
    (void)ctx;
    fill_unit(r, h, bytes / sizeof(float), -1, 1);
}

static void fill_len(struct ks_rng *r, void *h, size_t bytes, const void *ctx)
{
    (void)r;
    for (size_t i = 0; i < bytes / sizeof(uint32_t); i++)
        ((uint32_t *)h)[i] = *(const uint32_t *)ctx;
}

struct sel_ctx {
    uint32_t k, n; // k of n blocks per row
};

static void fill_sel(struct ks_rng *r, void *h, size_t bytes, const void *ctx)
{
    const struct sel_ctx *c = ctx;
    for (size_t row = 0; row < bytes / sizeof(uint32_t) / c->k; row++)
        fill_choice(r, (uint32_t *)h + row * c->k, c->k, c->n);
}

struct pages_ctx {
    const uint32_t *tables; // host copy of the pool's tables
    uint32_t batch, blocks, ctx_blocks, n_pages;
};

static void fill_pages(struct ks_rng *r, void *h, size_t bytes, const void *ctx)
{
    (void)r, (void)bytes;
    const struct pages_ctx *c = ctx;
    uint32_t *out = h;
    for (uint32_t l = 0; l < LAYERS; l++)
        for (uint32_t s = 0; s < c->batch; s++)
            for (uint32_t b = 0; b < c->blocks; b++)
                *out++ = c->tables[(size_t)l * c->n_pages + (size_t)s * c->ctx_blocks + b];
}

// Sets up point pt for kernel k at (batch, blocks). host_tables is a host
// copy of the pool's tables (summary only). Kernel status.
static int point_init(struct point *pt, const struct pool *pool, const struct ks_bench_params *o,
                      enum ks_bench_kernel k, uint32_t batch, uint32_t blocks, const uint32_t *host_tables,
                      struct ks_rng *r, char *err, size_t len)
{
    memset(pt, 0, sizeof *pt);
    pt->kernel = k;
    pt->pool = pool;
    const uint32_t ctx_tokens = pool->ctx_blocks * o->block_size, dense_tokens = blocks * o->block_size;
    const size_t qn = (size_t)batch * o->q_heads * o->head_dim;
    int st = KS_KERNEL_OK;
#define BUF(ptr, bytes, fill, ctx) \
    do { if (st == KS_KERNEL_OK) st = point_buf(pt, (void **)&(ptr), (bytes), r, (fill), (ctx), err, len); } while (0)
    if (k == KS_BENCH_SUMMARY) {
        struct pages_ctx c = {host_tables, batch, blocks, pool->ctx_blocks, pool->n_pages};
        pt->n = batch * blocks;
        BUF(pt->pages, (size_t)LAYERS * pt->n * sizeof(uint32_t), fill_pages, &c);
        pt->sum = (struct ks_block_summary_params){
            .n = pt->n, .block_size = o->block_size, .kv_heads = o->kv_heads, .head_dim = o->head_dim,
            .n_pages = pool->n_pages, .n_slots = pool->n_pages, .k = pool->k,
            .kmin = pool->kmin, .kmax = pool->kmax, .kmean = pool->kmean};
    } else if (k == KS_BENCH_SELECT) {
        struct ks_block_select_params *p = &pt->sel;
        *p = (struct ks_block_select_params){
            .n_seqs = batch, .q_heads = o->q_heads, .kv_heads = o->kv_heads, .head_dim = o->head_dim,
            .block_size = o->block_size, .max_blocks = pool->ctx_blocks, .n_slots = pool->n_pages,
            .top_k = blocks, .max_sel = blocks < pool->ctx_blocks ? blocks + 1 : pool->ctx_blocks,
            .score_kind = KS_SCORE_QUEST, .reduce = KS_REDUCE_MAX, .mode = KS_SELECT_SEQ,
            .kmin = pool->kmin, .kmax = pool->kmax, .kmean = pool->kmean};
        p->workspace_bytes = ks_block_select_workspace(p);
        BUF(p->q, qn * sizeof(float), fill_query, NULL);
        BUF(p->seq_len, batch * sizeof(uint32_t), fill_len, &ctx_tokens);
        BUF(p->sel, (size_t)batch * p->max_sel * sizeof(uint32_t), NULL, NULL);
        BUF(p->n_sel, batch * sizeof(uint32_t), NULL, NULL);
        BUF(p->workspace, p->workspace_bytes, NULL, NULL);
    } else {
        struct ks_decode_params *p = &pt->dec;
        int sparse = k != KS_BENCH_DENSE;
        *p = (struct ks_decode_params){
            .n_seqs = batch, .q_heads = o->q_heads, .kv_heads = o->kv_heads, .head_dim = o->head_dim,
            .block_size = o->block_size, .n_pages = pool->n_pages, .max_blocks = pool->ctx_blocks,
            .scale = 1.0f / sqrtf((float)o->head_dim), .k = pool->k, .v = pool->v, .k_i8 = pool->k8,
            .v_i8 = pool->v8, .k_scale = pool->ks, .v_scale = pool->vs, .max_sel = sparse ? blocks : 0,
            .report_cap = sparse ? blocks : pool->ctx_blocks};
        p->workspace_bytes = ks_decode_workspace(p, sparse);
        struct sel_ctx sc = {blocks, pool->ctx_blocks};
        BUF(p->q, qn * sizeof(float), fill_query, NULL);
        BUF(p->seq_len, batch * sizeof(uint32_t), fill_len, sparse ? &ctx_tokens : &dense_tokens);
        if (sparse) {
            BUF(p->sel, (size_t)batch * blocks * sizeof(uint32_t), fill_sel, &sc);
            BUF(p->n_sel, batch * sizeof(uint32_t), fill_len, &blocks);
        }
        BUF(p->out, qn * sizeof(float), NULL, NULL);
        BUF(p->acc_blocks, (size_t)batch * p->report_cap * sizeof(uint32_t), NULL, NULL);
        BUF(p->acc_mass, (size_t)batch * p->report_cap * sizeof(float), NULL, NULL);
        BUF(p->n_acc, batch * sizeof(uint32_t), NULL, NULL);
        BUF(p->workspace, p->workspace_bytes, NULL, NULL);
    }
#undef BUF
    if (st == KS_KERNEL_OK)
        st = sync_backend(pool->cuda, err, len);
    return st;
}

// One call of the point's kernel on layer l's pages. Kernel status.
static int point_call(struct point *pt, uint32_t l, char *err, size_t len)
{
    int cuda = pt->pool->cuda;
    const uint32_t *table = pt->pool->tables + (size_t)l * pt->pool->n_pages;
    switch (pt->kernel) {
    case KS_BENCH_SUMMARY:
        pt->sum.page = pt->sum.slot = pt->pages + (size_t)l * pt->n;
        return cuda ? ks_block_summary_cuda(&pt->sum, NULL, err, len) : ks_block_summary_ref(&pt->sum);
    case KS_BENCH_SELECT:
        pt->sel.sum_table = table; // slot = page
        return cuda ? ks_block_select_cuda(&pt->sel, NULL, err, len) : ks_block_select_ref(&pt->sel);
    case KS_BENCH_SPARSE:
        pt->dec.block_table = table;
        return cuda ? ks_sparse_decode_cuda(&pt->dec, NULL, err, len) : ks_sparse_decode_ref(&pt->dec);
    case KS_BENCH_SPARSE_I8:
        pt->dec.block_table = table;
        return cuda ? ks_sparse_decode_i8_cuda(&pt->dec, NULL, err, len) : ks_sparse_decode_i8_ref(&pt->dec);
    case KS_BENCH_DENSE:
        pt->dec.block_table = table;
        return cuda ? ks_dense_decode_cuda(&pt->dec, NULL, err, len) : ks_dense_decode_ref(&pt->dec);
    case KS_BENCH_N_KERNELS:
        break;
    }
    return KS_KERNEL_EINVAL;
}

// `inner` calls back to back, from layer *l on; *seconds the wall time
// until the device is idle again. Kernel status.
static int sample(struct point *pt, uint32_t inner, uint32_t *l, double *seconds, char *err, size_t len)
{
    int cuda = pt->pool->cuda, st = sync_backend(cuda, err, len);
    double t0 = ks_clock_mono();
    for (uint32_t i = 0; st == KS_KERNEL_OK && i < inner; i++, *l = (*l + 1) % LAYERS)
        st = point_call(pt, *l, err, len);
    if (st == KS_KERNEL_OK)
        st = sync_backend(cuda, err, len);
    *seconds = ks_clock_mono() - t0;
    return st;
}

// Times the point as the file's header says. Kernel status.
static int point_time(struct point *pt, uint32_t repeat, double *times, struct ks_bench_result *res, char *err,
                      size_t len)
{
    uint32_t l = 0, inner = 1;
    double t;
    int st = sample(pt, 1, &l, &t, err, len); // untimed: first touch
    if (st == KS_KERNEL_OK)
        st = sample(pt, 1, &l, &t, err, len);
    if (st != KS_KERNEL_OK)
        return st;
    if (t < KS_BENCH_MIN_SAMPLE_S)
        inner = t > 0 && KS_BENCH_MIN_SAMPLE_S / t < MAX_INNER ? (uint32_t)ceil(KS_BENCH_MIN_SAMPLE_S / t) : MAX_INNER;
    for (uint32_t r = 0; r < repeat && st == KS_KERNEL_OK; r++) {
        st = sample(pt, inner, &l, &t, err, len);
        times[r] = t / inner;
    }
    if (st != KS_KERNEL_OK)
        return st;
    qsort(times, repeat, sizeof *times, cmp_double);
    res->inner = inner;
    res->min = times[0];
    res->median = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
    return KS_KERNEL_OK;
}

// KV bytes a decode point reads: K and V of every selected token.
static double kv_bytes(const struct ks_bench_params *o, enum ks_bench_kernel k, uint32_t batch, uint32_t blocks)
{
    if (k != KS_BENCH_SPARSE && k != KS_BENCH_SPARSE_I8 && k != KS_BENCH_DENSE)
        return 0;
    double elem = k == KS_BENCH_SPARSE_I8 ? 1 : 2;
    return (double)blocks * o->block_size * o->kv_heads * o->head_dim * 2 * elem * batch;
}


// ---- the machine ---------------------------------------------------------

void ks_bench_machine_init(struct ks_bench_machine *m, int cuda)
{
    struct ks_machine h;
    ks_machine_init(&h);
    snprintf(m->host, sizeof m->host, "%s", h.host);
    snprintf(m->date, sizeof m->date, "%s", h.date);
    snprintf(m->device, sizeof m->device, "%s", h.cpu);
    if (cuda && (ks_copy_bench_device_name(m->device, sizeof m->device, NULL, 0) != KS_KERNEL_OK || !m->device[0]))
        snprintf(m->device, sizeof m->device, "unknown GPU");
    for (char *c = m->device; *c; c++) // as ks_machine_init makes the CPU's printable
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

// ---- the profile ---------------------------------------------------------

// s as a Lua string literal.
static void lua_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\%03u", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int ks_bench_profile_dir_ok(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return access(".", W_OK | X_OK);
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (!dir)
        return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    int rc = access(dir, W_OK | X_OK);
    free(dir);
    return rc;
}

int ks_bench_write_profile(const char *path, const struct ks_bench_params *o, const struct ks_bench_machine *m,
                           const struct ks_bench_result *res, size_t n_res, const char *cmdline)
{
    uint32_t batch = o->batch[o->n_batch - 1];
    struct ks_atomicfile a;
    int st = ks_atomicfile_open(&a, path, &(struct ks_atomicfile_params){.sync = 1}, NULL, 0);
    if (st != KS_OK)
        return st;
    FILE *f = a.f;
    char source[4096];
    snprintf(source, sizeof source, "%s on %s (%s), %s", cmdline, m->host, m->device, m->date);
    fprintf(f, "-- written by kvstrata bench kernels on %s, %s\n", m->host, m->date);
    fprintf(f, "return {\n  kernel_time = {\n    source = ");
    lua_string(f, source);
    fprintf(f, ",\n    kind = \"measured\",\n    backend = \"%s\",\n", o->cuda ? "cuda" : "ref");
    fprintf(f,
            "    batch = %" PRIu32 ", kv_heads = %" PRIu32 ", q_heads = %" PRIu32 ", head_dim = %" PRIu32
            ", block_size = %" PRIu32 ", dtype = \"fp16\",\n",
            batch, o->kv_heads, o->q_heads, o->head_dim, o->block_size);
    fprintf(f, "    blocks = {");
    for (size_t i = 0, k = 0; i < n_res; i++)
        if (res[i].kernel == KS_BENCH_SPARSE && res[i].batch == batch)
            fprintf(f, "%s%" PRIu32, k++ ? ", " : "", res[i].blocks);
    fprintf(f, "}, -- selected blocks per sequence\n    seconds = {");
    for (size_t i = 0, k = 0; i < n_res; i++)
        if (res[i].kernel == KS_BENCH_SPARSE && res[i].batch == batch)
            fprintf(f, "%s%.6g", k++ ? ", " : "", res[i].median);
    fprintf(f, "}, -- one decode layer for the whole batch\n  },\n}\n");
    return ks_atomicfile_commit(&a, NULL, 0);
}

// ---- the copy yardstick and the goal --------------------------------------

void ks_bench_copy_measure(int cuda, struct ks_bench_copy *c)
{
    c->bytes_per_s = 0;
    if (!cuda) {
        snprintf(c->note, sizeof c->note, "%s", ks_device_count(NULL, 0) > 0 ? "ref backend: not compared" : "no GPU");
        return;
    }
    char why[KS_KERNEL_ERR_LEN] = "";
    int st = ks_copy_bench_d2d(COPY_BYTES, COPY_REPEAT, &c->bytes_per_s, why, sizeof why);
    if (st == KS_KERNEL_OK)
        snprintf(c->note, sizeof c->note, "cudaMemcpy device to device of %llu MiB, read + write, median of %d",
                 COPY_BYTES >> 20, COPY_REPEAT);
    else
        snprintf(c->note, sizeof c->note, "device copy failed: %s %s", ks_kernel_status_str(st), why);
}

double ks_bench_goal_ratio(const struct ks_bench_result *res, size_t n, const struct ks_bench_copy *c)
{
    double worst = NAN;
    for (size_t i = 0; c->bytes_per_s > 0 && i < n; i++)
        if (res[i].kernel == KS_BENCH_SPARSE && res[i].blocks >= KS_BENCH_GOAL_BLOCKS &&
            res[i].batch == KS_BENCH_GOAL_BATCH) {
            double r = res[i].bytes / res[i].median / c->bytes_per_s;
            worst = isnan(worst) || r < worst ? r : worst;
        }
    return worst;
}


// ---- sweeps ----------------------------------------------------------------

void ks_bench_params_default(struct ks_bench_params *p)
{
    *p = (struct ks_bench_params){.kv_heads = 8, .q_heads = 32, .head_dim = 128, .block_size = 32, .context = 8192,
                                  .repeat = 5, .seed = 1};
}

int ks_bench_run(const struct ks_bench_params *o, const struct ks_bench_progress *pr, struct ks_bench_result **out,
                 size_t *n_out, char *err, size_t len)
{
    int cuda = o->cuda;
    *out = NULL;
    *n_out = 0;
    struct pool pool;
    char why[KS_KERNEL_ERR_LEN] = ""; // a device failure's reason
    int st = pool_init(&pool, o, cuda, why, sizeof why);
    if (st != KS_KERNEL_OK) {
        pool_free(&pool);
        snprintf(err, len, "making the inputs: %s%s%s", st == KS_KERNEL_EINVAL ? "out of memory" :
                 ks_kernel_status_str(st), cuda ? " " : "", cuda ? why : "");
        return st;
    }
    // the summary points need the pages of each table on the host
    uint32_t *host_tables = NULL;
    if (o->run[KS_BENCH_SUMMARY]) {
        size_t bytes = (size_t)LAYERS * pool.n_pages * sizeof *host_tables;
        host_tables = cuda ? malloc(bytes) : pool.tables;
        st = !host_tables ? KS_KERNEL_EINVAL
             : cuda      ? ks_devbuf_download(host_tables, pool.tables, bytes, why, sizeof why)
                         : KS_KERNEL_OK;
    }
    size_t n_res = 0, cap = (size_t)KS_BENCH_N_KERNELS * o->n_batch * o->n_blocks;
    struct ks_bench_result *res = malloc(cap * sizeof *res);
    double *times = malloc(o->repeat * sizeof *times);
    struct ks_rng rng;
    ks_rng_seed(&rng, o->seed ^ UINT64_C(0x5851f42d4c957f2d)); // not the pool's sequence
    if (st != KS_KERNEL_OK || !res || !times) {
        snprintf(err, len, "out of memory");
        st = st != KS_KERNEL_OK ? st : KS_KERNEL_EINVAL;
    }
    for (int k = 0; st == KS_KERNEL_OK && k < KS_BENCH_N_KERNELS; k++)
        for (size_t b = 0; st == KS_KERNEL_OK && o->run[k] && b < o->n_batch; b++)
            for (size_t s = 0; st == KS_KERNEL_OK && s < o->n_blocks; s++) {
                uint32_t batch = o->batch[b], blocks = o->blocks[s];
                if (pr && pr->fn)
                    pr->fn(pr->ctx, (enum ks_bench_kernel)k, batch, blocks);
                struct point pt;
                struct ks_bench_result *r = res + n_res;
                *r = (struct ks_bench_result){.kernel = k, .blocks = blocks, .batch = batch,
                                              .bytes = kv_bytes(o, k, batch, blocks)};
                st = point_init(&pt, &pool, o, k, batch, blocks, host_tables, &rng, why, sizeof why);
                if (st == KS_KERNEL_OK)
                    st = point_time(&pt, o->repeat, times, r, why, sizeof why);
                point_free(&pt);
                if (st != KS_KERNEL_OK)
                    snprintf(err, len, "%s at batch %" PRIu32 ", %" PRIu32 " blocks: %s%s%s",
                             ks_bench_kernel_names[k], batch, blocks, ks_kernel_status_str(st), cuda ? " " : "",
                             cuda ? why : "");
                n_res++;
            }
    if (host_tables != pool.tables)
        free(host_tables);
    pool_free(&pool);
    free(times);
    if (st != KS_KERNEL_OK) {
        free(res);
        return st;
    }
    *out = res;
    *n_out = n_res;
    return KS_KERNEL_OK;
}

int ks_bench_kernel_table(const struct ks_bench_shape *sh, const uint32_t *blocks, size_t n, double *seconds,
                          char *err, size_t len)
{
    struct ks_bench_params o = {.kv_heads = sh->kv_heads, .q_heads = sh->q_heads, .head_dim = sh->head_dim,
                                .block_size = sh->block_size, .context = sh->context, .repeat = sh->repeat,
                                .seed = sh->seed, .n_batch = 1, .n_blocks = n};
    _Static_assert(KS_BENCH_MAX_BLOCKS <= KS_BENCH_MAX_LIST, "a table's block counts fit a sweep's list");
    if (n == 0 || n > KS_BENCH_MAX_BLOCKS || sh->repeat == 0 || sh->context % sh->block_size ||
        blocks[n - 1] > sh->context / sh->block_size) {
        snprintf(err, len, "kernel table: 1 to %d block counts, each at most context / block_size",
                 KS_BENCH_MAX_LIST);
        return KS_KERNEL_EINVAL;
    }
    o.run[KS_BENCH_SPARSE] = 1;
    o.batch[0] = sh->batch;
    memcpy(o.blocks, blocks, n * sizeof *blocks);
    struct pool pool;
    char why[KS_KERNEL_ERR_LEN] = ""; // a device failure's reason
    int st = pool_init(&pool, &o, sh->cuda != 0, why, sizeof why);
    double *times = malloc(o.repeat * sizeof *times);
    struct ks_rng rng;
    ks_rng_seed(&rng, o.seed ^ UINT64_C(0x5851f42d4c957f2d));
    for (size_t i = 0; st == KS_KERNEL_OK && i < n; i++) {
        struct point pt = {0};
        struct ks_bench_result r = {.kernel = KS_BENCH_SPARSE, .blocks = blocks[i], .batch = sh->batch};
        if (!times)
            st = KS_KERNEL_EINVAL;
        if (st == KS_KERNEL_OK)
            st = point_init(&pt, &pool, &o, KS_BENCH_SPARSE, sh->batch, blocks[i], NULL, &rng, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = point_time(&pt, o.repeat, times, &r, why, sizeof why);
        point_free(&pt);
        seconds[i] = r.median;
    }
    if (st != KS_KERNEL_OK)
        snprintf(err, len, "timing the sparse decode kernel: %s%s%s", ks_kernel_status_str(st),
                 sh->cuda ? " " : "", sh->cuda ? why : "");
    pool_free(&pool);
    free(times);
    return st;
}

// A default list (KS_BENCH_DEFAULT_*): numbers separated by commas, ascending.
static void default_list(const char *text, uint32_t *v, size_t *n)
{
    *n = 0;
    for (const char *s = text; *s; s += *s == ',') {
        char *end;
        unsigned long x = strtoul(s, &end, 10);
        KS_ASSERT(end != s && *n < KS_BENCH_MAX_LIST && (*n == 0 || x > v[*n - 1]));
        v[(*n)++] = (uint32_t)x;
        s = end;
    }
}

void ks_bench_kernel_defaults(struct ks_bench_shape *sh, uint32_t *blocks, size_t *n)
{
    struct ks_bench_params o;
    ks_bench_params_default(&o);
    default_list(KS_BENCH_DEFAULT_BLOCKS, o.blocks, &o.n_blocks);
    default_list(KS_BENCH_DEFAULT_BATCH, o.batch, &o.n_batch);
    KS_ASSERT(o.n_blocks <= KS_BENCH_MAX_BLOCKS);
    *sh = (struct ks_bench_shape){.kv_heads = o.kv_heads, .q_heads = o.q_heads, .head_dim = o.head_dim,
                                  .block_size = o.block_size, .context = o.context,
                                  .batch = o.batch[o.n_batch - 1], .repeat = o.repeat, .seed = o.seed};
    memcpy(blocks, o.blocks, o.n_blocks * sizeof *blocks);
    *n = o.n_blocks;
}
