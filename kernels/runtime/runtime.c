// runtime.c - a run of the real runtime: what it supports, its setup, the
// step driver run with the runtime's operations, its teardown (see
// runtime.h; the threads and what they share: runtime_impl.h).
#define _GNU_SOURCE // O_DIRECT

#include "runtime_impl.h"

double ks_rt_now(const struct rt *t)
{
    return ks_clock_mono() - t->t0 - t->paused;
}

void ks_rt_pause(struct rt *t)
{
    t->pause_at = ks_clock_mono();
}

void ks_rt_resume(struct rt *t)
{
    t->paused += ks_clock_mono() - t->pause_at;
}

int ks_rt_fail(struct rt *t, int st, const char *fmt, const char *what)
{
    if (!t->err[0])
        snprintf(t->err, sizeof t->err, fmt, what, ks_status_str(st));
    return st == KS_OK ? KS_EINVAL : st;
}

int ks_rt_cuda_fail(char *err, size_t len, const char *what, int st, const char *why)
{
    snprintf(err, len, "%s: %s (%s)", what, ks_kernel_status_str(st), why);
    return KS_EIO;
}

int ks_runtime_supports(const struct ks_scenario *s, char *why, size_t len)
{
    const char *no = NULL;
    if (s->platform.nodes * s->platform.gpus_per_node != 1)
        no = "platform: the runtime runs one node with one GPU (nodes = 1, gpus_per_node = 1)";
    else if (s->workload.arrival.kind != KS_ARRIVAL_CLOSED || s->workload.requests == 0)
        no = "workload: the runtime needs closed arrivals and a request count (workload.requests)";
    else if (s->workload.sessions.turns > 1)
        no = "workload.sessions: the runtime runs single-turn requests";
    else if (s->prefill.mode != KS_PREFILL_COLOCATED)
        no = "prefill.mode: the runtime prefills colocated";
    else if (s->model.attention != KS_ATTENTION_GQA || s->model.indexer.heads)
        no = "model: the runtime's kernels run grouped-query attention (model.attention = \"gqa\", no indexer)";
    else if (s->model.dtype != KS_DTYPE_FP16)
        no = "model.dtype: the runtime's kernels read fp16 KV";
    else if (s->cache.copy != KS_COPY_BATCH)
        no = "cache.copy: the runtime copies each batch as one (\"batch\")";
    else if (s->cache.layer_prefetch != KS_LAYER_PREFETCH_NONE)
        no = "cache.layer_prefetch: the runtime starts every copy of a step at once (\"none\")";
    else if (s->cache.organisation != KS_ORG_POOL)
        no = "cache.organisation: the runtime runs L1 as one pool per GPU (\"pool\")";
    else if (s->detail.layers && s->detail.layers != s->model.layers)
        no = "detail.layers: the runtime runs every layer (full detail)";
    else if (s->speculative.draft_tokens)
        no = "speculative.draft_tokens: the runtime's kernels decode one token a step";
    else if (s->scheduler.reserve != KS_RESERVE_FULL)
        no = "scheduler.reserve: the runtime reserves each request's whole output (\"full\"): it retracts none";
    else if (s->cache.compression != KS_COMPRESSION_NONE)
        no = "cache.compression: the runtime keeps fp16 blocks in every tier";
    else if (s->cache.l3 == KS_L3_REMOTE)
        no = "cache.l3: the runtime has no remote memory (ssd or none)";
    else if (s->cache.evict == KS_EVICT_BELADY || s->cache.evict == KS_EVICT_CALLBACK || s->cache.prefetch_lua)
        no = "cache: the runtime runs the built-in eviction (heat, lru, lfu, random) and prefetch window";
    else if (s->cache.l3 == KS_L3_SSD &&
             ((uint64_t)s->cache.block_size * s->model.kv_heads * s->model.head_dim * 2) % ALIGN != 0)
        no = "cache.block_size: with an SSD tier the K (or V) half of a block must be a multiple of 4096 bytes "
             "(block_size * kv_heads * head_dim * 2 bytes) for O_DIRECT";
    if (no)
        snprintf(why, len, "%s", no);
    return no == NULL;
}

static void teardown(struct rt *t)
{
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->work);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < KS_STEP_LANES; i++) {
        if (t->lanes[i].started)
            pthread_join(t->lanes[i].th, NULL);
        if (t->lanes[i].ring_ok)
            io_uring_queue_exit(&t->lanes[i].ring);
        ks_stream_free(t->lanes[i].stream);
        ks_pinned_free(t->lanes[i].stage);
        free(t->lanes[i].cdst);
        free(t->lanes[i].csrc);
        free(t->lanes[i].csize);
    }
    for (uint32_t i = 0; i < t->cap_jev; i++)
        ks_event_free(t->jev[i].ev);
    free(t->jev);
    free(t->pend);
    ks_rt_free_device_buffers(t);
    ks_rt_free_host_buffers(t);
    ks_stream_free(t->ds);
    ks_event_free(t->k0);
    ks_event_free(t->k1);
    ks_pinned_free(t->dstage);
    if (t->d_ok) {
        for (uint32_t i = 0; i < t->d.act.n; i++)
            ks_rt_free_selbuf(t->d.act.a[i].user);
        ks_step_fini(&t->d);
    }
    free(t->jobs);
    free(t->job_of);
    free(t->locs);
    free(t->step_kernel);
    if (t->gpu) {
        ks_devbuf_free(t->l1k);
        ks_devbuf_free(t->l1v);
        ks_pinned_free(t->l2);
        ks_pinned_free(t->stamp);
    } else {
        free(t->l1k);
        free(t->l1v);
        free(t->l2);
        free(t->stamp);
    }
    free(t->kvtab);
    free(t->kvcheck);
    free(t->tshadow);
    free(t->tshadow_ok);
    if (t->l3fd >= 0) {
        close(t->l3fd);
        unlink(t->l3path);
    }
    ks_cache_free(t->c);
    ks_workload_free(t->wl);
    ks_selection_free(t->sp);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->done);
}

void ks_runtime_extra_fini(struct ks_runtime_extra *x)
{
    if (x) {
        free(x->step_kernel);
        free(x->launches);
        free(x->out_rows);
        free(x->row_req);
        x->step_kernel = NULL;
        x->n_step_kernel = 0;
        x->launches = NULL;
        x->out_rows = NULL;
        x->row_req = NULL;
        x->n_launches = x->n_rows = 0;
    }
}

// ||b - a|| / ||a|| over m values; INFINITY for a NaN, or a zero a against
// a non-zero b.
static double row_err(const float *a, const float *b, size_t m)
{
    double d = 0, n = 0;
    for (size_t i = 0; i < m; i++) {
        double e = (double)b[i] - a[i];
        d += e * e;
        n += (double)a[i] * a[i];
    }
    if (isnan(d) || isnan(n))
        return INFINITY;
    return n > 0 ? sqrt(d / n) : d > 0 ? INFINITY : 0;
}

uint64_t ks_runtime_compare(const struct ks_runtime_extra *a, const struct ks_runtime_extra *b, double tol,
                            struct ks_runtime_diff *d)
{
    *d = (struct ks_runtime_diff){.first = -1};
    d->launches = a->n_launches < b->n_launches ? a->n_launches : b->n_launches;
    for (uint64_t i = 0; i < d->launches; i++) {
        const struct ks_runtime_launch *la = &a->launches[i], *lb = &b->launches[i];
        int shape = la->step != lb->step || la->layer != lb->layer || la->part != lb->part ||
                    la->n_seqs != lb->n_seqs || a->row_elems != b->row_elems;
        for (uint32_t s = 0; !shape && s < la->n_seqs; s++)
            shape = a->row_req[la->row + s] != b->row_req[lb->row + s];
        double worst = shape ? INFINITY : 0;
        uint32_t at = 0;
        for (uint32_t s = 0; !shape && s < la->n_seqs; s++) {
            double e = row_err(a->out_rows + (la->row + s) * a->row_elems,
                               b->out_rows + (lb->row + s) * b->row_elems, a->row_elems);
            d->max_err = e > d->max_err ? e : d->max_err;
            if (e > tol && worst <= tol) {
                worst = e;
                at = s;
            }
        }
        if (!(worst > tol))
            continue;
        if (d->differing++ == 0) {
            d->first = (int64_t)i;
            d->step = la->step, d->layer = la->layer, d->part = la->part;
            d->seq = at, d->req = la->n_seqs ? a->row_req[la->row + at] : 0;
            d->err = worst;
        }
    }
    return d->differing;
}

// Everything a run needs before its first step: the cache manager, the
// workload, the selection policy, the step driver, the tiers, the L3 file,
// the kernel's buffers and the lanes.
static int setup(struct rt *t, const struct ks_runtime_params *p, char *err, size_t len)
{
    const struct ks_scenario *s = t->s;
    struct ks_cache_params cp;
    int st = ks_step_size(s, &cp, &t->z, err, len);
    if (st != KS_OK)
        return st;
    t->half = (size_t)t->z.block_bytes[KS_L1] / 2;
    t->elems = t->half / 2;
    t->l1p = cp.tier_blocks[KS_L1];
    t->cap_blocks = ks_step_blocks(s, s->model.max_context) + 1;
    t->scratch = t->cap_blocks;
    t->n_ids = cp.n_blocks;
    t->gpu = p && p->gpu;
    t->skip_gen_check = p && p->skip_gen_check;
    t->keep_rows = p ? p->keep_rows : 0;
    t->stale_limited = t->skip_gen_check && p->stale_reads > 0;
    t->stale_left = t->stale_limited ? p->stale_reads : 0;
    if (!(t->c = ks_cache_new(&cp, err, len)) || !(t->wl = ks_workload_new(s, err, len)) ||
        !(t->sp = ks_selection_new(s, err, len)))
        return KS_EINVAL;
    st = ks_step_init(&t->d, &(struct ks_step_params){
        .s = s, .cache = t->c, .sparse = t->sp, .r = t->r, .z = t->z, .gpu = 0, .ops = ks_rt_step_ops(t)});
    t->d_ok = 1;
    if (st != KS_OK) {
        snprintf(err, len, "out of memory for the step's buffers");
        return st;
    }
    if ((st = ks_rt_alloc_tiers(t, &cp, err, len)) != KS_OK)
        return st;
    if (s->cache.l3 == KS_L3_SSD && cp.tier_blocks[KS_L3] > 0 &&
        (st = ks_rt_open_l3(t, p && p->dir ? p->dir : "/var/tmp", cp.tier_blocks[KS_L3], err, len)) != KS_OK)
        return st;
    if (ks_rt_grow_seqs(t, 16) != KS_OK) {
        snprintf(err, len, "%s", t->err[0] ? t->err : "out of memory for the kernel's buffers");
        return KS_ENOMEM;
    }
    return ks_rt_start_lanes(t, err, len);
}

// The kernel's speed step by step: its quantiles (over the steps that read:
// ks_hist_add refuses NaN), and the steps themselves when x is the caller's.
static void step_speeds(struct rt *t, struct ks_runtime_extra *x, int keep)
{
    struct ks_hist *h = malloc(sizeof *h);
    if (h) {
        ks_hist_init(h);
        for (size_t i = 0; i < t->n_steps; i++)
            ks_hist_add(h, t->step_kernel[i]);
        x->step_kernel_p10 = ks_hist_quantile(h, 0.10);
        x->step_kernel_p50 = ks_hist_quantile(h, 0.50);
        x->step_kernel_p90 = ks_hist_quantile(h, 0.90);
        x->step_kernel_p99 = ks_hist_quantile(h, 0.99);
        free(h);
    }
    if (keep) {
        x->step_kernel = t->step_kernel;
        x->n_step_kernel = t->n_steps;
        t->step_kernel = NULL;
    }
}

int ks_runtime_run(const struct ks_scenario *s, const struct ks_runtime_params *p, struct ks_run_result *r,
                   struct ks_runtime_extra *x, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    struct ks_runtime_extra xs;
    int keep = x != NULL; // the caller's: the steps go with it
    if (!x)
        x = &xs;
    memset(x, 0, sizeof *x);
    if (!ks_runtime_supports(s, err, len))
        return KS_EINVAL;
    struct rt *t = calloc(1, sizeof *t);
    if (!t || ks_run_result_init(r) != KS_OK) {
        free(t);
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    *t = (struct rt){.s = s, .r = r, .x = x, .l3fd = -1, .progress = p && p->progress};
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->done, NULL);
    int st = setup(t, p, err, len);
    if (st != KS_OK) {
        teardown(t);
        free(t);
        ks_run_result_fini(r);
        return st;
    }
    double w0 = ks_clock_mono();
    t->t0 = w0;
    char msg[1024] = "";
    st = ks_step_run(&t->d, msg, sizeof msg);
    if (t->progress)
        fputs("\r\033[K", stderr);
    r->sim_time = ks_rt_now(t);
    r->truncated = !(t->wl_done && t->in_flight == 0); // the duration ended it (it runs workload.requests)
    r->wall_s = ks_clock_mono() - w0;
    x->paused = t->paused;
    r->copy_seconds = x->copy_seconds;
    r->copy_bytes = x->copy_bytes;
    step_speeds(t, x, keep);
    r->tiers = calloc(KS_TIERS, sizeof *r->tiers);
    ks_run_result_add_tiers(r, t->c, 0, t->z.block_bytes, 1);
    r->unplanned += r->cache.unplanned;
    if (st != KS_OK)
        snprintf(err, len, "%s", msg[0] ? msg : t->err[0] ? t->err : ks_status_str(st));
    teardown(t);
    free(t);
    if (!keep)
        ks_runtime_extra_fini(x); // the launch log, nobody's
    return st;
}
