// recorder.c - access traces from synthetic attention run through the
// kernels (recorder.h).
//
// One layer's cache lives at a time; a request's selections are buffered
// and written in (step, layer) order.
//
// Backends: ref runs the C references on host memory; cuda keeps the cache,
// summaries, selection and report in device memory (the keys and values are
// made on the host and uploaded as tokens arrive) and downloads the report,
// so the trace holds what the CUDA kernels returned. kernel_time is the
// decode kernel's call alone, one sequence and one layer: on the monotonic
// clock around ks_sparse_decode_ref, or around ks_sparse_decode_cuda between
// two waits for the device (ks_devbuf_sync), so it includes the launch.
// NOTE: bench kernels times calls back to back, which hides the launch; a
// trace's time is that of one call, as a replay charges it per request.

#include "recorder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockselect.h"
#include "clock.h"
#include "decode.h"
#include "kernel.h"
#include "rng.h"
#include "selection.h"
#include "status.h"
#include "summary.h"
#include "synth.h"
#include "trace.h"
#include "workload.h"

const char *const ks_recorder_presets[] = {"stable", "drifting", "noisy", NULL};

// The cuda backend's buffers, in device memory: the host buffers' shapes.
struct dev {
    uint32_t pages;             // pages the page-sized buffers hold
    uint16_t *k, *v;
    float *kmin, *kmax, *kmean;
    uint32_t *table;
    float *q, *out, *mass;
    uint32_t *len, *sel, *n_sel, *acc, *n_acc; // len, n_sel, n_acc: one each
    void *sel_ws, *dec_ws;
    size_t sel_ws_bytes, dec_ws_bytes;
};

struct ks_recorder {
    struct ks_recorder_params p; // preset resolved
    int ran;                     // ks_recorder_run was called (once per recorder)
    const struct ks_scenario *sc;
    int cuda;                  // 1: the `_cuda` kernels on r->d
    struct dev d;
    struct ks_synth *syn;
    struct ks_synth_params spar;
    struct ks_workload *wl;
    struct ks_trace_writer *w;
    uint32_t bs, layers, kv, qh, hd, n_sink, n_window, top_k, max_sel;
    uint32_t pages;            // pages of the current request's cache
    uint16_t *k, *v;           // [pages][bs][kv][hd] fp16
    float *kmin, *kmax, *kmean; // [pages][kv][hd] summaries, slot = logical block
    uint32_t *table;           // [pages] identity block table and summary table
    float *q, *out, *keys;
    uint32_t *sel, *acc;       // [max_sel]
    float *mass;               // [max_sel]
    void *sel_ws, *dec_ws;
    size_t sel_ws_bytes, dec_ws_bytes;
    // a request's selections: [layers][steps][max_sel] and counts [layers][steps]
    uint32_t *buf_blocks, *buf_n;
    float *buf_mass;
    double *buf_time;          // [layers][steps] seconds of the decode kernel
    uint64_t records, selected;
    double kernel_seconds;     // summed over the records
    char err[512];
};

static int fail_at(struct ks_recorder *r, const char *what)
{
    snprintf(r->err, sizeof r->err, "%s", what);
    return KS_EINVAL;
}

// A kernel or device-buffer status as the recorder's: KS_OK, or KS_EINVAL
// with what failed and, on the device, the CUDA call at fault: why, the
// reason the kernel library wrote (kernel.h), read for ENODEV and ECUDA only.
static int kernel_status(struct ks_recorder *r, int st, const char *what, const char *why)
{
    if (st == KS_KERNEL_OK)
        return KS_OK;
    if (st == KS_KERNEL_EINVAL)
        snprintf(r->err, sizeof r->err, "%s: refused its input", what);
    else
        snprintf(r->err, sizeof r->err, "%s: %s %s", what, ks_kernel_status_str(st), why);
    return KS_EINVAL;
}

// Copies tokens [t0, t1) of the host cache to the device (cuda only).
static int upload_tokens(struct ks_recorder *r, uint32_t t0, uint32_t t1)
{
    if (!r->cuda || t1 <= t0)
        return KS_OK;
    size_t at = (size_t)t0 * r->kv * r->hd, n = (size_t)(t1 - t0) * r->kv * r->hd * sizeof *r->k;
    char why[KS_KERNEL_ERR_LEN];
    int st = ks_devbuf_upload(r->d.k + at, r->k + at, n, why, sizeof why);
    if (st == KS_KERNEL_OK)
        st = ks_devbuf_upload(r->d.v + at, r->v + at, n, why, sizeof why);
    return kernel_status(r, st, "uploading keys and values", why);
}

// Writes the keys and values of tokens [t0, t1) of (req, layer) into the cache.
static int fill(struct ks_recorder *r, uint64_t req, uint32_t prompt, uint32_t layer, uint32_t t0, uint32_t t1)
{
    for (uint32_t h = 0; h < r->kv; h++)
        for (uint32_t a = t0; a < t1;) {
            uint32_t b = a - a % r->bs + r->bs; // to the end of a's block
            if (b > t1)
                b = t1;
            if (ks_synth_keys(r->syn, req, prompt, layer, h, a, b, r->keys) != KS_OK)
                return fail_at(r, "synthetic keys out of range");
            for (uint32_t t = a; t < b; t++)
                for (uint32_t d = 0; d < r->hd; d++)
                    r->k[((size_t)t * r->kv + h) * r->hd + d] = ks_half_from_float(r->keys[(size_t)(t - a) * r->hd + d]);
            a = b;
        }
    // values: they do not change what is selected nor its mass; deterministic noise
    struct ks_rng g;
    ks_rng_seed(&g, r->sc->seed ^ (req * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)layer << 40) ^ t0);
    for (size_t i = (size_t)t0 * r->kv * r->hd; i < (size_t)t1 * r->kv * r->hd; i++)
        r->v[i] = ks_half_from_float((float)(2 * ks_rng_unit(&g) - 1));
    return upload_tokens(r, t0, t1);
}

static int summarise(struct ks_recorder *r, uint32_t from, uint32_t to) // full blocks [from, to)
{
    if (to <= from)
        return KS_OK;
    struct ks_block_summary_params p = {.n = to - from, .block_size = r->bs, .kv_heads = r->kv, .head_dim = r->hd,
                                        .n_pages = r->pages, .n_slots = r->pages, .k = r->k,
                                        .page = r->table + from, .slot = r->table + from,
                                        .kmin = r->kmin, .kmax = r->kmax, .kmean = r->kmean};
    if (!r->cuda)
        return kernel_status(r, ks_block_summary_ref(&p), "block summary kernel", "");
    p.k = r->d.k;
    p.page = p.slot = r->d.table + from;
    p.kmin = r->d.kmin;
    p.kmax = r->d.kmax;
    p.kmean = r->d.kmean;
    char why[KS_KERNEL_ERR_LEN];
    int st = ks_block_summary_cuda(&p, NULL, why, sizeof why);
    return kernel_status(r, st, "block summary kernel (CUDA)", why);
}

// step's selection and decode on the device: sp and dp as made for the
// references, pointed here at the device buffers (q and ctx uploaded first).
static int step_cuda(struct ks_recorder *r, struct ks_block_select_params *sp, struct ks_decode_params *dp,
                     uint32_t ctx, uint32_t *blocks, float *mass, uint32_t *n, double *seconds)
{
    struct dev *d = &r->d;
    char why[KS_KERNEL_ERR_LEN];
    int ks = ks_devbuf_upload(d->q, r->q, (size_t)r->qh * r->hd * sizeof *r->q, why, sizeof why);
    if (ks == KS_KERNEL_OK)
        ks = ks_devbuf_upload(d->len, &ctx, sizeof ctx, why, sizeof why);
    if ((ks = kernel_status(r, ks, "uploading the query", why)) != KS_OK)
        return ks;
    sp->q = dp->q = d->q;
    sp->seq_len = dp->seq_len = d->len;
    sp->sum_table = dp->block_table = d->table;
    sp->kmin = d->kmin;
    sp->kmax = d->kmax;
    sp->kmean = d->kmean;
    sp->sel = d->sel;
    dp->sel = d->sel;
    sp->n_sel = d->n_sel;
    dp->n_sel = d->n_sel;
    sp->workspace = d->sel_ws;
    sp->workspace_bytes = d->sel_ws_bytes;
    dp->k = d->k;
    dp->v = d->v;
    dp->out = d->out;
    dp->acc_blocks = d->acc;
    dp->acc_mass = d->mass;
    dp->n_acc = d->n_acc;
    dp->workspace = d->dec_ws;
    dp->workspace_bytes = d->dec_ws_bytes;
    ks = ks_block_select_cuda(sp, NULL, why, sizeof why);
    if (ks == KS_KERNEL_OK)
        ks = ks_devbuf_sync(why, sizeof why); // the decode's clock starts on an idle device
    if ((ks = kernel_status(r, ks, "block selection kernel (CUDA)", why)) != KS_OK)
        return ks;
    double t0 = ks_clock_mono();
    ks = ks_sparse_decode_cuda(dp, NULL, why, sizeof why);
    if (ks == KS_KERNEL_OK)
        ks = ks_devbuf_sync(why, sizeof why);
    *seconds = ks_clock_mono() - t0;
    if ((ks = kernel_status(r, ks, "sparse decode kernel (CUDA)", why)) != KS_OK)
        return ks;
    uint32_t n_acc = 0;
    ks = ks_devbuf_download(&n_acc, d->n_acc, sizeof n_acc, why, sizeof why);
    if (ks == KS_KERNEL_OK && n_acc > r->max_sel)
        return fail_at(r, "sparse decode kernel (CUDA): a report longer than the selection");
    if (ks == KS_KERNEL_OK)
        ks = ks_devbuf_download(blocks, d->acc, n_acc * sizeof *blocks, why, sizeof why);
    if (ks == KS_KERNEL_OK)
        ks = ks_devbuf_download(mass, d->mass, n_acc * sizeof *mass, why, sizeof why);
    *n = n_acc;
    return kernel_status(r, ks, "downloading the access report", why);
}

// One decode step of one layer: select, attend (timed into *seconds), keep
// the access report.
static int step(struct ks_recorder *r, const struct ks_synth_step *st, uint32_t layer, uint32_t ctx, uint32_t *blocks,
                float *mass, uint32_t *n, double *seconds)
{
    for (uint32_t h = 0; h < r->qh; h++)
        if (ks_synth_query(r->syn, st, layer, h, r->q + (size_t)h * r->hd) != KS_OK)
            return fail_at(r, "synthetic query out of range");
    uint32_t n_sel = 0, n_acc = 0;
    struct ks_block_select_params sp = {
        .n_seqs = 1, .q_heads = r->qh, .kv_heads = r->kv, .head_dim = r->hd, .block_size = r->bs,
        .max_blocks = r->pages, .n_slots = r->pages, .n_sink = r->n_sink, .n_window = r->n_window,
        .top_k = r->top_k, .max_sel = r->max_sel, .score_kind = KS_SCORE_QUEST, .reduce = KS_REDUCE_MAX,
        .mode = KS_SELECT_SEQ, .q = r->q, .seq_len = &ctx, .sum_table = r->table, .kmin = r->kmin, .kmax = r->kmax,
        .kmean = r->kmean, .sel = r->sel, .n_sel = &n_sel, .workspace = r->sel_ws,
        .workspace_bytes = r->sel_ws_bytes};
    struct ks_decode_params dp = {
        .n_seqs = 1, .q_heads = r->qh, .kv_heads = r->kv, .head_dim = r->hd, .block_size = r->bs,
        .n_pages = r->pages, .max_blocks = r->pages, .scale = (float)(1.0 / sqrt((double)r->hd)), .q = r->q,
        .seq_len = &ctx, .block_table = r->table, .k = r->k, .v = r->v, .max_sel = r->max_sel, .sel = r->sel,
        .n_sel = &n_sel, .out = r->out, .report_cap = r->max_sel, .acc_blocks = r->acc, .acc_mass = r->mass,
        .n_acc = &n_acc, .workspace = r->dec_ws, .workspace_bytes = r->dec_ws_bytes};
    if (r->cuda)
        return step_cuda(r, &sp, &dp, ctx, blocks, mass, n, seconds);
    int ks = kernel_status(r, ks_block_select_ref(&sp), "block selection kernel", "");
    if (ks != KS_OK)
        return ks;
    double t0 = ks_clock_mono();
    int dst = ks_sparse_decode_ref(&dp);
    *seconds = ks_clock_mono() - t0;
    if ((ks = kernel_status(r, dst, "sparse decode kernel", "")) != KS_OK)
        return ks;
    memcpy(blocks, r->acc, n_acc * sizeof *blocks);
    memcpy(mass, r->mass, n_acc * sizeof *mass);
    *n = n_acc;
    return KS_OK;
}

static void dev_free(struct dev *d)
{
    ks_devbuf_free(d->k);
    ks_devbuf_free(d->v);
    ks_devbuf_free(d->kmin);
    ks_devbuf_free(d->kmax);
    ks_devbuf_free(d->kmean);
    ks_devbuf_free(d->table);
    ks_devbuf_free(d->q);
    ks_devbuf_free(d->out);
    ks_devbuf_free(d->mass);
    ks_devbuf_free(d->len);
    ks_devbuf_free(d->sel);
    ks_devbuf_free(d->n_sel);
    ks_devbuf_free(d->acc);
    ks_devbuf_free(d->n_acc);
    ks_devbuf_free(d->sel_ws);
    ks_devbuf_free(d->dec_ws);
    *d = (struct dev){0};
}

// `bytes` of device memory; NULL, with the status in *st and the reason in
// why, on failure, and nothing done when *st already says one happened.
static void *dev_alloc(size_t bytes, int *st, char *why, size_t len)
{
    void *p = NULL;
    if (*st == KS_KERNEL_OK)
        *st = ks_devbuf_alloc(&p, bytes, why, len);
    return *st == KS_KERNEL_OK ? p : NULL;
}

// Sizes the device buffers for the current request (r->pages pages and the
// workspaces the host ones have) and uploads its identity block table.
static int dev_prepare(struct ks_recorder *r)
{
    struct dev *d = &r->d;
    int st = KS_KERNEL_OK;
    char why[KS_KERNEL_ERR_LEN];
    if (!d->n_acc) { // the buffers of one step, made once
        size_t qb = (size_t)r->qh * r->hd * sizeof(float), sb = r->max_sel * sizeof(uint32_t);
        d->q = dev_alloc(qb, &st, why, sizeof why);
        d->out = dev_alloc(qb, &st, why, sizeof why);
        d->mass = dev_alloc(r->max_sel * sizeof(float), &st, why, sizeof why);
        d->sel = dev_alloc(sb, &st, why, sizeof why);
        d->acc = dev_alloc(sb, &st, why, sizeof why);
        d->len = dev_alloc(sizeof(uint32_t), &st, why, sizeof why);
        d->n_sel = dev_alloc(sizeof(uint32_t), &st, why, sizeof why);
        d->n_acc = dev_alloc(sizeof(uint32_t), &st, why, sizeof why);
    }
    if (st == KS_KERNEL_OK && r->pages > d->pages) {
        ks_devbuf_free(d->k);
        ks_devbuf_free(d->v);
        ks_devbuf_free(d->kmin);
        ks_devbuf_free(d->kmax);
        ks_devbuf_free(d->kmean);
        ks_devbuf_free(d->table);
        size_t tok = (size_t)r->pages * r->bs * r->kv * r->hd * sizeof(uint16_t),
               sum = (size_t)r->pages * r->kv * r->hd * sizeof(float);
        d->k = dev_alloc(tok, &st, why, sizeof why);
        d->v = dev_alloc(tok, &st, why, sizeof why);
        d->kmin = dev_alloc(sum, &st, why, sizeof why);
        d->kmax = dev_alloc(sum, &st, why, sizeof why);
        d->kmean = dev_alloc(sum, &st, why, sizeof why);
        d->table = dev_alloc(r->pages * sizeof(uint32_t), &st, why, sizeof why);
        d->pages = st == KS_KERNEL_OK ? r->pages : 0;
    }
    if (st == KS_KERNEL_OK && r->sel_ws_bytes > d->sel_ws_bytes) {
        ks_devbuf_free(d->sel_ws);
        d->sel_ws = dev_alloc(r->sel_ws_bytes, &st, why, sizeof why);
        d->sel_ws_bytes = st == KS_KERNEL_OK ? r->sel_ws_bytes : 0;
    }
    if (st == KS_KERNEL_OK && r->dec_ws_bytes > d->dec_ws_bytes) {
        ks_devbuf_free(d->dec_ws);
        d->dec_ws = dev_alloc(r->dec_ws_bytes, &st, why, sizeof why);
        d->dec_ws_bytes = st == KS_KERNEL_OK ? r->dec_ws_bytes : 0;
    }
    if (st == KS_KERNEL_OK)
        st = ks_devbuf_upload(d->table, r->table, r->pages * sizeof *r->table, why, sizeof why);
    return kernel_status(r, st, "device buffers", why);
}

// Records one request: every layer over `steps` decode steps, then writes
// its records in (step, layer) order.
static int record_request(struct ks_recorder *r, uint32_t id, uint64_t req, uint32_t prompt, uint32_t steps)
{
    uint32_t total = prompt + steps; // the last step attends over prompt + steps tokens
    r->pages = (total + r->bs - 1) / r->bs;
    size_t tok = (size_t)r->pages * r->bs * r->kv * r->hd, sum = (size_t)r->pages * r->kv * r->hd;
    uint16_t *k = realloc(r->k, tok * sizeof *k);
    r->k = k ? k : r->k;
    uint16_t *v = realloc(r->v, tok * sizeof *v);
    r->v = v ? v : r->v;
    float *a = realloc(r->kmin, sum * sizeof *a), *b = a ? realloc(r->kmax, sum * sizeof *b) : NULL,
          *c = b ? realloc(r->kmean, sum * sizeof *c) : NULL;
    if (a)
        r->kmin = a;
    if (b)
        r->kmax = b;
    if (c)
        r->kmean = c;
    uint32_t *t = realloc(r->table, r->pages * sizeof *t);
    r->table = t ? t : r->table;
    size_t per = (size_t)r->layers * steps;
    uint32_t *bb = realloc(r->buf_blocks, per * r->max_sel * sizeof *bb), *bn = realloc(r->buf_n, per * sizeof *bn);
    r->buf_blocks = bb ? bb : r->buf_blocks;
    r->buf_n = bn ? bn : r->buf_n;
    float *bm = realloc(r->buf_mass, per * r->max_sel * sizeof *bm);
    r->buf_mass = bm ? bm : r->buf_mass;
    double *bt = realloc(r->buf_time, per * sizeof *bt);
    r->buf_time = bt ? bt : r->buf_time;
    if (!k || !v || !a || !b || !c || !t || !bb || !bn || !bm || !bt)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < r->pages; i++)
        r->table[i] = i;
    struct ks_block_select_params sp = {.n_seqs = 1, .q_heads = r->qh, .kv_heads = r->kv, .head_dim = r->hd,
                                        .block_size = r->bs, .max_blocks = r->pages, .max_sel = r->max_sel,
                                        .top_k = r->top_k, .mode = KS_SELECT_SEQ};
    struct ks_decode_params dp = {.n_seqs = 1, .q_heads = r->qh, .kv_heads = r->kv, .head_dim = r->hd,
                                  .block_size = r->bs, .max_blocks = r->pages, .max_sel = r->max_sel};
    size_t sw = ks_block_select_workspace(&sp), dw = ks_decode_workspace(&dp, 1);
    if (sw > r->sel_ws_bytes) {
        void *p = realloc(r->sel_ws, sw);
        if (!p)
            return KS_ENOMEM;
        r->sel_ws = p;
        r->sel_ws_bytes = sw;
    }
    if (dw > r->dec_ws_bytes) {
        void *p = realloc(r->dec_ws, dw);
        if (!p)
            return KS_ENOMEM;
        r->dec_ws = p;
        r->dec_ws_bytes = dw;
    }
    if (r->cuda) {
        int st = dev_prepare(r);
        if (st != KS_OK)
            return st;
    }
    for (uint32_t l = 0; l < r->layers; l++) {
        int st = fill(r, req, prompt, l, 0, prompt);
        uint32_t done = prompt / r->bs;
        if (st == KS_OK)
            st = summarise(r, 0, done);
        struct ks_synth_step ss;
        ks_synth_step_at(r->syn, req, prompt, 0, &ss);
        for (uint32_t s = 0; st == KS_OK && s < steps; s++) {
            uint32_t ctx = prompt + s + 1; // the step's own token included
            st = fill(r, req, prompt, l, ctx - 1, ctx);
            if (st == KS_OK && ctx / r->bs > done) {
                st = summarise(r, done, ctx / r->bs);
                done = ctx / r->bs;
            }
            size_t at = (size_t)l * steps + s;
            if (st == KS_OK)
                st = step(r, &ss, l, ctx, r->buf_blocks + at * r->max_sel, r->buf_mass + at * r->max_sel,
                          &r->buf_n[at], &r->buf_time[at]);
            ks_synth_step_next(r->syn, &ss);
        }
        if (st != KS_OK)
            return st;
        if (r->p.stop && r->p.stop(r->p.arg))
            return KS_ESTATE; // asked to stop: the request's layers so far are dropped
    }
    for (uint32_t s = 0; s < steps; s++)
        for (uint32_t l = 0; l < r->layers; l++) {
            size_t at = (size_t)l * steps + s;
            int st = ks_trace_writer_add(r->w, id, s, l, prompt + s + 1, r->buf_blocks + at * r->max_sel,
                                         r->buf_mass + at * r->max_sel, r->buf_n[at], r->buf_time[at]);
            if (st != KS_OK) { // the writer's reason is in r->err
                char why[sizeof r->err];
                memcpy(why, r->err, sizeof why);
                snprintf(r->err, sizeof r->err, "writing the trace: %.400s", why);
                return st;
            }
            r->records++;
            r->selected += r->buf_n[at];
            r->kernel_seconds += r->buf_time[at];
        }
    return KS_OK;
}

static void recorder_fini(struct ks_recorder *r)
{
    free(r->k);
    free(r->v);
    free(r->kmin);
    free(r->kmax);
    free(r->kmean);
    free(r->table);
    free(r->q);
    free(r->out);
    free(r->keys);
    free(r->sel);
    free(r->acc);
    free(r->mass);
    free(r->sel_ws);
    free(r->dec_ws);
    free(r->buf_blocks);
    free(r->buf_n);
    free(r->buf_mass);
    free(r->buf_time);
    dev_free(&r->d);
}

struct ks_recorder *ks_recorder_new(const struct ks_recorder_params *p, char *err, size_t len)
{
    const struct ks_scenario *sc = p->sc;
    struct ks_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    r->p = *p;
    if (r->p.preset < 0)
        r->p.preset = sc->sparse.preset; // same order as ks_recorder_presets[]
    r->sc = sc;
    r->cuda = p->cuda;
    const struct ks_scenario_model *mo = &sc->model;
    r->bs = sc->cache.block_size;
    r->layers = mo->layers;
    r->kv = mo->kv_heads;
    r->qh = mo->q_heads;
    r->hd = mo->head_dim;
    r->n_sink = sc->sparse.sink_blocks;
    r->n_window = sc->sparse.window_blocks;
    r->top_k = (sc->sparse.budget_tokens + r->bs - 1) / r->bs;
    r->max_sel = r->n_sink + r->n_window + 1 + r->top_k;
    ks_selection_synth_params(sc, r->p.preset, &r->spar);
    if (r->bs > KS_KERNEL_MAX_BLOCK_SIZE || r->hd > KS_KERNEL_MAX_HEAD_DIM || r->spar.group > KS_KERNEL_MAX_GROUP)
        snprintf(err, len, "the kernels take block_size <= %d, head_dim <= %d and q_heads / kv_heads <= %d",
                 KS_KERNEL_MAX_BLOCK_SIZE, KS_KERNEL_MAX_HEAD_DIM, KS_KERNEL_MAX_GROUP);
    else if (!(r->syn = ks_synth_new(&r->spar, err, len)))
        ;
    else
        r->wl = ks_workload_new(sc, err, len);
    if (!r->wl) {
        ks_recorder_free(r);
        return NULL;
    }
    return r;
}

void ks_recorder_free(struct ks_recorder *r)
{
    if (!r)
        return;
    recorder_fini(r);
    ks_workload_free(r->wl);
    ks_synth_free(r->syn);
    free(r);
}

// The requests, one by one, into the open trace r->w.
static int record_all(struct ks_recorder *r, double t0, char *err, size_t len)
{
    const struct ks_scenario_model *mo = &r->sc->model;
    uint32_t requests = r->p.requests, steps = r->p.steps;
    int st = KS_OK;
    for (uint32_t i = 0; st == KS_OK && i < requests; i++) {
        struct ks_request_spec spec;
        int got = ks_workload_next(r->wl, &spec);
        if (got != 1) {
            snprintf(err, len, "the workload gave %u requests, not %u", i, requests);
            st = KS_EINVAL;
            break;
        }
        uint32_t prompt = spec.prompt_tokens;
        if ((uint64_t)prompt + steps > mo->max_context)
            prompt = mo->max_context > steps ? mo->max_context - steps : 1;
        st = record_request(r, i, spec.id, prompt, steps);
        if (st == KS_ESTATE) {
            snprintf(err, len, "interrupted in request %u of %u", i + 1, requests);
            break;
        }
        if (st != KS_OK)
            snprintf(err, len, "request %u (%u prompt tokens): %s", i, prompt,
                     st == KS_ENOMEM ? "out of memory" : r->err);
        if (r->p.progress)
            r->p.progress(r->p.arg, i + 1, requests, ks_clock_mono() - t0);
        if (st == KS_OK && r->p.stop && r->p.stop(r->p.arg)) {
            snprintf(err, len, "interrupted after %u of %u requests", i + 1, requests);
            st = KS_ESTATE;
        }
    }
    return st;
}

int ks_recorder_run(struct ks_recorder *r, struct ks_recorder_stats *out, char *err, size_t len)
{
    KS_ASSERT(!r->ran);
    r->ran = 1;
    if (len > 0)
        err[0] = '\0';
    r->q = malloc((size_t)r->qh * r->hd * sizeof *r->q);
    r->out = malloc((size_t)r->qh * r->hd * sizeof *r->out);
    r->keys = malloc((size_t)r->bs * r->hd * sizeof *r->keys);
    r->sel = malloc(r->max_sel * sizeof *r->sel);
    r->acc = malloc(r->max_sel * sizeof *r->acc);
    r->mass = malloc(r->max_sel * sizeof *r->mass);
    struct ks_trace_meta meta = {.block_size = r->bs, .layers = r->layers, .kv_heads = r->kv, .q_heads = r->qh,
                                 .head_dim = r->hd};
    snprintf(meta.dtype, sizeof meta.dtype, "fp16");
    snprintf(meta.source, sizeof meta.source,
             "kvstrata trace record: synthetic %s (topic_switch %g, retrieval_prob %g; seed %llu), %s",
             ks_recorder_presets[r->p.preset], r->spar.topic_switch, r->spar.retrieval_prob,
             (unsigned long long)r->sc->seed, r->cuda ? "CUDA kernels" : "C reference kernels");
    int st = r->q && r->out && r->keys && r->sel && r->acc && r->mass ? KS_OK : KS_ENOMEM;
    // the writer's failures go into r->err, where the recorder's own go
    if (st == KS_OK && !(r->w = ks_trace_writer_open(r->p.path, &meta, r->err, sizeof r->err))) {
        snprintf(err, len, "%s", r->err);
        st = KS_EIO;
    }
    double t0 = ks_clock_mono();
    if (st == KS_OK)
        st = record_all(r, t0, err, len);
    if (st == KS_OK) {
        if ((st = ks_trace_writer_commit(r->w)) != KS_OK)
            snprintf(err, len, "%s", r->err);
    } else {
        ks_trace_writer_abort(r->w);
        if (!err[0])
            snprintf(err, len, "%s", ks_status_str(st));
    }
    r->w = NULL;
    double wall = ks_clock_mono() - t0;
    if (st != KS_OK)
        return st;
    *out = (struct ks_recorder_stats){.layers = meta.layers, .records = r->records, .selected = r->selected,
                                      .kernel_seconds = r->kernel_seconds, .wall_s = wall};
    snprintf(out->source, sizeof out->source, "%s", meta.source);
    return KS_OK;
}
