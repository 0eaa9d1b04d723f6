// ops.c - the step driver's operations in the runtime: its router, the
// requests' selection buffers, the lanes' jobs and waits, the layers'
// kernels, each step's kernel speed (see runtime_impl.h).
#define _GNU_SOURCE // O_DIRECT

#include "runtime_impl.h"

// The router of closed arrivals: releases requests while fewer than the
// concurrency are in flight (the simulator's router, run where the simulator's
// decode actor would let it run).
static int release(struct rt *t)
{
    const struct ks_scenario *s = t->s;
    while (!t->wl_done && t->in_flight < s->workload.arrival.concurrency) {
        if (!t->have_drawn) {
            int st = ks_workload_next(t->wl, &t->drawn);
            if (st < 0)
                return ks_rt_fail(t, st, "%s: %s", "reading the workload");
            if (st == 0) {
                t->wl_done = 1;
                break;
            }
            t->have_drawn = 1;
        }
        t->drawn.arrival = ks_rt_now(t);
        if (ks_step_push(&t->d, &t->drawn, -1) != KS_OK)
            return ks_rt_fail(t, KS_ENOMEM, "%s: %s", "queueing a request");
        t->have_drawn = 0;
        t->r->arrived++;
        t->in_flight++;
    }
    return KS_OK;
}

void ks_rt_free_selbuf(struct selbuf *b)
{
    if (b) {
        free(b->sel);
        free(b->mass);
        free(b->n_sel);
        free(b->ent);
        free(b);
    }
}

static struct selbuf *new_selbuf(const struct rt *t)
{
    size_t n = (size_t)t->s->model.layers * t->cap_blocks;
    struct selbuf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->sel = malloc(n * sizeof *b->sel);
    b->mass = malloc(n * sizeof *b->mass);
    b->n_sel = calloc(t->s->model.layers, sizeof *b->n_sel);
    b->ent = malloc(n * sizeof *b->ent);
    if (b->sel && b->mass && b->n_sel && b->ent) {
        for (size_t i = 0; i < n; i++)
            b->ent[i] = (struct ks_loc){.id = NO_ENTRY};
        return b;
    }
    ks_rt_free_selbuf(b);
    return NULL;
}

// ks_active_set's hooks: a new block's KV is written to its page; a
// finished request's buffers are freed.
static int fill_hook(void *ctx, uint32_t req, uint32_t from, uint32_t to, char *err, size_t len)
{
    struct rt *t = ctx;
    int st = ks_rt_fill_new(t, req, from, to);
    if (st != KS_OK)
        snprintf(err, len, "%s", t->err);
    return st;
}

static void finished_hook(void *ctx, struct ks_active *a)
{
    struct rt *t = ctx;
    ks_rt_free_selbuf(a->user);
    a->user = NULL;
    t->in_flight--;
    // a closed-loop client sends its next request as this one finishes: it is
    // queued before the next admission, as the simulator's router queues it
    int st = release(t);
    if (st != KS_OK && t->release_st == KS_OK)
        t->release_st = st; // reported by the next iteration
}

// The step driver admitted request a: its selection buffers.
static int op_admitted(void *ctx, struct ks_active *a, char *err, size_t len)
{
    struct rt *t = ctx;
    if ((a->user = new_selbuf(t)))
        return KS_OK;
    snprintf(err, len, "admitting a request: %s", ks_status_str(KS_ENOMEM));
    return KS_ENOMEM;
}

// a's selection in layer l, kept for the layer's kernel launch.
static void op_selected(void *ctx, struct ks_active *a, uint32_t l, const uint32_t *sel, const float *mass,
                        uint32_t k)
{
    struct rt *t = ctx;
    struct selbuf *sb = a->user;
    memcpy(sb->sel + (size_t)l * t->cap_blocks, sel, k * sizeof *sel);
    memcpy(sb->mass + (size_t)l * t->cap_blocks, mass, k * sizeof *mass);
    sb->n_sel[l] = k;
}

static double op_now(void *ctx)
{
    return ks_rt_now(ctx);
}

static void op_hold(void *ctx, int on)
{
    if (on)
        ks_rt_pause(ctx);
    else
        ks_rt_resume(ctx);
}

// No request admitted: the router releases what the concurrency allows. 0
// when nothing is left to release.
static int op_idle(void *ctx, char *err, size_t len)
{
    struct rt *t = ctx;
    if (t->wl_done && !t->have_drawn && t->d.n_pending == 0)
        return 0;
    uint64_t before = t->r->arrived;
    int st = release(t);
    if (st != KS_OK) {
        snprintf(err, len, "%s", t->err);
        return st;
    }
    return t->r->arrived == before && t->d.n_pending == 0 ? 0 : 1;
}

// The requests released since the last admission (none after a finish,
// which releases at once) join the queue behind this iteration's admission.
static int op_iteration(void *ctx, char *err, size_t len)
{
    struct rt *t = ctx;
    int st = t->release_st != KS_OK ? t->release_st : release(t);
    if (st != KS_OK) {
        snprintf(err, len, "%s", t->err);
        return st;
    }
    if (t->progress && t->r->finished != t->shown) {
        t->shown = t->r->finished;
        fprintf(stderr, "\rruntime: %llu of %llu requests finished, %llu tokens, %.1fs ",
                (unsigned long long)t->shown, (unsigned long long)t->s->workload.requests,
                (unsigned long long)t->r->tokens, ks_rt_now(t));
        fflush(stderr);
    }
    return KS_OK;
}

// The plan's batches become the lanes' jobs (GPU mode: with their slots'
// events made and reset); the kernel buffers grow to the decoding requests.
static int op_queue(void *ctx, const struct ks_plan *plan, char *err, size_t len)
{
    struct rt *t = ctx;
    uint32_t decoding = 0;
    for (uint32_t i = 0; i < t->d.act.n; i++)
        decoding += t->d.act.a[i].generated > 0;
    t->kernel0 = t->x->kernel_seconds;
    t->reads0 = t->x->reads;
    if (decoding > t->cap_seqs && ks_rt_grow_seqs(t, decoding + 16) != KS_OK) {
        snprintf(err, len, "kernel buffers: %s", t->err[0] ? t->err : ks_status_str(KS_ENOMEM));
        return KS_ENOMEM;
    }
    int st = KS_OK;
    pthread_mutex_lock(&t->mu);
    if (plan->n > t->cap_jobs) {
        struct ks_step_job *p = realloc(t->jobs, plan->n * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&t->mu);
            snprintf(err, len, "queueing migration batches: %s", ks_status_str(KS_ENOMEM));
            return KS_ENOMEM;
        }
        t->jobs = p;
        t->cap_jobs = plan->n;
    }
    if (t->gpu && (st = ks_rt_grow_events(t, plan->n)) != KS_OK) {
        pthread_mutex_unlock(&t->mu);
        snprintf(err, len, "%s", t->err);
        return st;
    }
    t->n_pend = 0;
    for (uint32_t i = 0; i < plan->n; i++) {
        struct ks_batch *b = plan->batch[i];
        t->jobs[i] = ks_step_job_of(b);
        if (t->gpu)
            t->jev[i] = (struct job_event){.ev = t->jev[i].ev};
        for (uint32_t j = 0; j < b->n; j++)
            if (b->blocks[j] < t->n_ids)
                t->job_of[b->blocks[j]] = i + 1;
    }
    t->n_jobs = plan->n;
    t->layer_reached = 0;
    pthread_cond_broadcast(&t->work);
    pthread_mutex_unlock(&t->mu);
    return KS_OK;
}

// Layer `layer` starts: its selection is made now, so the copies that wait
// for it may go (the lanes are woken where some wait). Called with t->mu held.
static void layer_starts(struct rt *t, uint32_t layer)
{
    if (t->layer_reached != KS_NONE && layer > t->layer_reached) {
        t->layer_reached = layer;
        if (ks_selection_per_layer(t->sp))
            pthread_cond_broadcast(&t->work);
    }
}

static int lane_failure(struct rt *t, char *err, size_t len)
{
    snprintf(err, len, "a migration lane failed: %s", t->lane_err);
    return KS_EIO;
}

// CPU mode: until the layer's needed batches have landed (then as many
// layers as nothing else holds up); GPU mode: until they are enqueued, their
// events noted for the launch (one layer at a time).
static int op_wait_layer(void *ctx, uint32_t layer, uint32_t *ready, char *err, size_t len)
{
    struct rt *t = ctx;
    pthread_mutex_lock(&t->mu);
    layer_starts(t, layer);
    int st = t->gpu ? ks_rt_wait_enqueued(t, layer, -1) : ks_rt_wait_landed(t, layer, -1);
    *ready = t->gpu || st != KS_OK ? 1 : ks_step_ready_layers(t->jobs, t->n_jobs, layer, t->s->model.layers);
    pthread_mutex_unlock(&t->mu);
    return st == KS_OK ? KS_OK : lane_failure(t, err, len);
}

static int op_layers(void *ctx, uint32_t from, uint32_t n, double *extra, char *err, size_t len)
{
    struct rt *t = ctx;
    *extra = 0; // the step's busy time is measured whole
    int per_layer = ks_selection_per_layer(t->sp);
    int mark = t->s->cache.layer_prefetch != KS_LAYER_PREFETCH_NONE; // a layer's start lets the next one's copies go
    for (uint32_t l = from; l < from + n; l++) {
        if (mark && l > from) {
            pthread_mutex_lock(&t->mu);
            layer_starts(t, l);
            pthread_mutex_unlock(&t->mu);
        }
        int st = ks_rt_attend(t, l, per_layer);
        if (st != KS_OK) {
            snprintf(err, len, "%s", t->err);
            return st;
        }
    }
    return KS_OK;
}

// Every batch landed; the blocks no longer in flight.
static int op_wait_all(void *ctx, char *err, size_t len)
{
    struct rt *t = ctx;
    pthread_mutex_lock(&t->mu);
    if (t->layer_reached != KS_NONE) { // every layer has run: whatever is left may start
        t->layer_reached = KS_NONE;
        pthread_cond_broadcast(&t->work);
    }
    while (!ks_step_all_landed(t->jobs, t->n_jobs) && !t->lane_failed)
        pthread_cond_wait(&t->done, &t->mu);
    int lane_failed = t->lane_failed;
    for (uint32_t i = 0; i < t->n_jobs; i++) {
        const struct ks_batch *b = t->jobs[i].b;
        for (uint32_t j = 0; j < b->n; j++)
            if (b->blocks[j] < t->n_ids)
                t->job_of[b->blocks[j]] = 0;
    }
    if (!lane_failed)
        t->n_jobs = 0;
    pthread_mutex_unlock(&t->mu);
    return lane_failed ? lane_failure(t, err, len) : KS_OK;
}

// The kernel's speed in the step that ended: its seconds per block read.
static int op_stepped(void *ctx, char *err, size_t len)
{
    struct rt *t = ctx;
    uint64_t reads = t->x->reads - t->reads0;
    if (ks_rt_note_step(t, reads ? (t->x->kernel_seconds - t->kernel0) / (double)reads : NAN) == KS_OK)
        return KS_OK;
    snprintf(err, len, "recording a step: %s", ks_status_str(KS_ENOMEM));
    return KS_ENOMEM;
}

struct ks_step_ops ks_rt_step_ops(struct rt *t)
{
    return (struct ks_step_ops){
        .ctx = t, .now = op_now, .hold = op_hold, .idle = op_idle, .iteration = op_iteration,
        .admitted = op_admitted, .selected = op_selected, .fill = fill_hook, .finished = finished_hook,
        .queue = op_queue, .wait_layer = op_wait_layer, .layers = op_layers, .wait_all = op_wait_all,
        .stepped = op_stepped};
}
