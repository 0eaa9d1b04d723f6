// runtime.c - the real runtime, CPU mode and GPU mode (see runtime.h).
//
// Threads: the decode thread (the caller) owns the cache manager; every call
// into it is made there. Lanes only copy bytes: they take a batch, move its
// blocks between arenas and the L3 file, and mark it landed. In GPU mode a
// lane first enqueues the batch's copies on its stream, records the job
// slot's event and marks the job enqueued, then waits for the event and
// marks it landed; the decode thread waits on the host only until a batch it
// needs is enqueued, and makes the decode stream wait for its event. The job
// list, its flags (enqueued included) and the error string are guarded by
// rt.mu.
#define _GNU_SOURCE // O_DIRECT

#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "decode.h"
#include "hist.h"
#include "kernel.h"
#include "rng.h"
#include "selection.h"
#include "step.h"
#include "workload.h"

#define ALIGN 4096
#define RING_DEPTH 64 // io_uring entries per lane
#define KS_ENOSYS_ 1  // copy_batch_gpu: not a GPU copy (L2 <-> L3), take the CPU path

// An admitted request's selection buffers (its ks_active's user state).
// ent is the request's resident-pointer table: per layer and block, where
// the block was when the kernel last read it (page, tier, generation); an
// entry is checked against the block's generation before every read and
// located afresh only when the block has moved since (NO_ENTRY: never read).
struct selbuf {
    uint32_t *sel;      // [layers][cap_blocks] this step's selection per layer (layer 0 only when shared)
    float *mass;        // [layers][cap_blocks]
    uint32_t *n_sel;    // [layers]
    struct ks_loc *ent; // [layers][cap_blocks]
};

#define NO_ENTRY UINT32_MAX

struct rt;

struct lane {
    struct rt *rt;
    pthread_t th;
    struct io_uring ring;
    int ring_ok, started;
    struct iovec iov[RING_DEPTH][2];
    struct CUstream_st *stream; // GPU mode: the lane's copies
    unsigned char *stage;       // GPU mode: pinned, RING_DEPTH blocks between the L3 file and L1
    // GPU mode: the arrays of one batched copy (two halves per block), grown
    // by the lane to the largest batch it has moved
    void **cdst;
    const void **csrc;
    size_t *csize;
    size_t n_copies, cap_copies;
};

// GPU mode: a job slot's event, made once for the slot and recorded by the
// lane that takes the slot's batch, after it has enqueued the copies.
struct job_event {
    struct CUevent_st *ev;
    uint8_t enqueued; // this step's batch in the slot: copies enqueued, event recorded (rt.mu)
    uint8_t waited;   // decode thread: the decode stream waits for it (or will, at the next launch)
};

struct rt {
    const struct ks_scenario *s;
    struct ks_run_result *r;
    struct ks_runtime_extra *x;
    struct ks_step_sizing z;
    struct ks_cache *c;
    struct ks_workload *wl;
    struct ks_selection *sp;
    struct ks_step d;      // the requests, iterations and decode steps (the decode thread's)
    int d_ok;              // d initialised
    // memory
    size_t half;           // bytes of K (or V) of one block
    size_t elems;          // fp16 elements of K (or V) of one block
    uint32_t l1p, scratch; // L1 pages; scratch pages after them
    uint16_t *l1k, *l1v;   // [l1p + scratch][elems]
    unsigned char *l2;     // [l2 pages][2 * half]
    int l3fd;
    char l3path[4096];
    unsigned char *stamp;  // a new block's data: one block of random fp16 that stamp_block
                           // marks per block; 4096-aligned for O_DIRECT
    int gpu;               // GPU mode: L1 and the kernel buffers on the device, L2 pinned
    int skip_gen_check;    // tests only: trust the table's entries unchecked (a negative control)
    int progress;          // a progress line on stderr
    uint64_t shown;        // requests finished when the progress line was last drawn
    struct CUstream_st *ds; // GPU mode: the decode stream
    unsigned char *dstage; // GPU mode: pinned, one block read from the L3 file for a scratch page
    // lanes and jobs
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int quit, lane_failed;
    char lane_err[256];
    struct lane lanes[KS_STEP_LANES];
    struct ks_step_job *jobs;
    uint32_t n_jobs, cap_jobs;
    uint32_t *job_of; // [n_blocks] this step's job of a block in flight + 1; 0: none
    uint32_t n_ids;
    struct job_event *jev; // GPU mode: [cap_jev] per job slot
    uint32_t cap_jev;
    uint32_t *pend;        // GPU mode: [cap_jev] job slots the next launch makes the decode stream wait for
    uint32_t n_pend;
    // requests
    struct ks_request_spec drawn; // the workload's next request, drawn
    int have_drawn, wl_done;
    uint64_t in_flight;
    uint32_t cap_blocks;
    // kernel buffers, for up to cap_seqs sequences
    uint32_t cap_seqs;
    float *q, *out, *acc_mass;
    uint32_t *seq_len, *table, *ksel, *kn_sel, *acc_blocks, *n_acc, *missing, *n_missing;
    void *ws;
    size_t ws_bytes;
    // GPU mode: device copies of the kernel buffers (the host ones are built, then uploaded);
    // d_table holds a block table per layer, [layers][cap_seqs][cap_blocks], and tshadow what
    // it holds (rows whose tshadow_ok is 0 hold nothing uploaded since it was allocated)
    float *d_q, *d_out, *d_acc_mass;
    uint32_t *d_seq_len, *d_table, *d_ksel, *d_kn_sel, *d_acc_blocks, *d_n_acc, *d_missing, *d_n_missing;
    void *d_ws;
    uint32_t *tshadow;     // [layers][cap_seqs][cap_blocks]
    uint8_t *tshadow_ok;   // [layers][cap_seqs]
    struct ks_loc *locs;   // [cap_locs] a launch's located reads, validated after it
    size_t cap_locs;
    double *step_kernel;   // [n_steps] each step's kernel seconds per block read
    size_t n_steps, cap_steps;
    double kernel0;        // kernel seconds when the current step's plan was queued
    uint64_t reads0;       // block reads then
    // clock
    double t0, paused, pause_at;
    char err[1024];
};

static double rt_now(const struct rt *t)
{
    return ks_clock_mono() - t->t0 - t->paused;
}

static void pause_clock(struct rt *t)
{
    t->pause_at = ks_clock_mono();
}

static void resume_clock(struct rt *t)
{
    t->paused += ks_clock_mono() - t->pause_at;
}

static int fail(struct rt *t, int st, const char *fmt, const char *what)
{
    if (!t->err[0])
        snprintf(t->err, sizeof t->err, fmt, what, ks_status_str(st));
    return st == KS_OK ? KS_EINVAL : st;
}

// A failed CUDA call: its reason (ks_kernel_error) into err. KS_EIO.
static int cuda_fail(char *err, size_t len, const char *what, int st)
{
    snprintf(err, len, "%s: %s (%s)", what, ks_kernel_status_str(st), ks_kernel_error());
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
    else if (s->model.dtype != KS_DTYPE_FP16)
        no = "model.dtype: the runtime's kernels read fp16 KV";
    else if (s->cache.compression != KS_COMPRESSION_NONE)
        no = "cache.compression: the runtime keeps fp16 blocks in every tier";
    else if (s->cache.l3 == KS_L3_REMOTE)
        no = "cache.l3: the runtime has no remote memory (ssd or none)";
    else if (s->cache.evict == KS_EVICT_BELADY || s->cache.evict == KS_EVICT_CALLBACK || s->cache.prefetch_lua)
        no = "cache: the runtime runs the built-in eviction (heat, lru, lfu) and prefetch window";
    else if (s->cache.l3 == KS_L3_SSD &&
             ((uint64_t)s->cache.block_size * s->model.kv_heads * s->model.head_dim * 2) % ALIGN != 0)
        no = "cache.block_size: with an SSD tier the K (or V) half of a block must be a multiple of 4096 bytes "
             "(block_size * kv_heads * head_dim * 2 bytes) for O_DIRECT";
    if (no)
        snprintf(why, len, "%s", no);
    return no == NULL;
}

// ---- pages -------------------------------------------------------------------

static uint16_t *page_k(const struct rt *t, uint32_t page)
{
    return t->l1k + (size_t)page * t->elems;
}

static uint16_t *page_v(const struct rt *t, uint32_t page)
{
    return t->l1v + (size_t)page * t->elems;
}

static unsigned char *page_l2(const struct rt *t, uint32_t page)
{
    return t->l2 + (size_t)page * 2 * t->half;
}

static off_t page_l3(const struct rt *t, uint32_t page)
{
    return (off_t)page * (off_t)(2 * t->half);
}

static int full_io(ssize_t got, size_t want, const char *what, char *err, size_t len)
{
    if (got == (ssize_t)want)
        return KS_OK;
    snprintf(err, len, "%s: %s", what, got < 0 ? strerror(errno) : "short transfer");
    return KS_EIO;
}

// A new block's KV: the random fp16 block made at setup, with its first KV
// row's first elements of K and of V replaced by values of (request, layer,
// block), so that a block
// read from the wrong page, or never written, changes the kernel's output
// (the output checksum of struct ks_runtime_extra). Into t->stamp, whose
// other elements stay as set up.
static void stamp_block(struct rt *t, uint32_t req, uint32_t l, uint32_t b)
{
    uint16_t *h = (uint16_t *)t->stamp;
    uint64_t x = ((uint64_t)req << 40) ^ ((uint64_t)l << 32) ^ b ^ t->s->seed;
    size_t per_half = t->half / sizeof *h, n = t->s->model.head_dim < 8 ? t->s->model.head_dim : 8;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        float v = (float)((double)(x >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1;
        h[i] = ks_half_from_float(v);
        h[per_half + i] = ks_half_from_float(-v);
    }
}

// Writes t->stamp into page `page` of `tier`. On the GPU the copy is
// enqueued on the decode stream: fill_new waits for it.
static int fill_page(struct rt *t, unsigned tier, uint32_t page)
{
    if (tier == KS_L1 && t->gpu) {
        int st = ks_copy_async(page_k(t, page), t->stamp, t->half, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(page_v(t, page), t->stamp + t->half, t->half, t->ds);
        if (st != KS_KERNEL_OK)
            return cuda_fail(t->err, sizeof t->err, "writing a new block to L1", st);
    } else if (tier == KS_L1) {
        memcpy(page_k(t, page), t->stamp, t->half);
        memcpy(page_v(t, page), t->stamp + t->half, t->half);
    } else if (tier == KS_L2) {
        memcpy(page_l2(t, page), t->stamp, 2 * t->half);
    } else {
        ssize_t n = pwrite(t->l3fd, t->stamp, 2 * t->half, page_l3(t, page));
        char msg[256];
        if (full_io(n, 2 * t->half, "writing a new block to the L3 file", msg, sizeof msg) != KS_OK) {
            snprintf(t->err, sizeof t->err, "%s", msg);
            return KS_EIO;
        }
    }
    return KS_OK;
}

// Fills blocks [from, to) of every layer of req: they were just created.
// On the GPU it returns once every copy into L1 has completed: a lane may
// move the block, or the kernel read it, right after.
static int fill_new(struct rt *t, uint32_t req, uint32_t from, uint32_t to)
{
    for (uint32_t l = 0; l < t->s->model.layers; l++)
        for (uint32_t b = from; b < to; b++) {
            struct ks_loc loc;
            int st = ks_cache_locate(t->c, req, l, b, &loc);
            if (st != KS_OK)
                return fail(t, st, "%s: %s", "locating a new block");
            stamp_block(t, req, l, b);
            if ((st = fill_page(t, loc.tier, loc.page)) != KS_OK)
                return st;
            // pageable source: the copy has left t->stamp when it returns
        }
    int st = t->gpu ? ks_stream_sync(t->ds) : KS_KERNEL_OK;
    return st == KS_KERNEL_OK ? KS_OK : cuda_fail(t->err, sizeof t->err, "writing new blocks to L1", st);
}

// ---- lanes -------------------------------------------------------------------

// Reads or writes one block between memory (two halves, or one L2 page) and
// the L3 file through the lane's ring.
static void prep_file(struct lane *ln, struct io_uring_sqe *sqe, int write, unsigned slot, void *a, void *b,
                      size_t half, off_t off)
{
    struct rt *t = ln->rt;
    struct iovec *iov = ln->iov[slot];
    iov[0] = (struct iovec){.iov_base = a, .iov_len = half};
    iov[1] = (struct iovec){.iov_base = b, .iov_len = half};
    if (write)
        io_uring_prep_writev(sqe, t->l3fd, iov, 2, (unsigned long long)off);
    else
        io_uring_prep_readv(sqe, t->l3fd, iov, 2, (unsigned long long)off);
}

// The two halves of block i's page in a memory tier.
static void halves(const struct rt *t, unsigned tier, uint32_t page, void **k, void **v)
{
    if (tier == KS_L1) {
        *k = page_k(t, page);
        *v = page_v(t, page);
    } else {
        *k = page_l2(t, page);
        *v = page_l2(t, page) + t->half;
    }
}

// Submits the k block requests prepared on the lane's ring and waits for
// all of them; each must move a whole block. KS_OK or KS_EIO.
static int ring_run(struct lane *ln, unsigned k, int write, char *err, size_t len)
{
    int n = io_uring_submit_and_wait(&ln->ring, k);
    if (n < 0) {
        snprintf(err, len, "io_uring submit: %s", strerror(-n));
        return KS_EIO;
    }
    for (unsigned d = 0; d < k; d++) {
        struct io_uring_cqe *cqe;
        int w = io_uring_wait_cqe(&ln->ring, &cqe);
        if (w < 0) {
            snprintf(err, len, "io_uring wait: %s", strerror(-w));
            return KS_EIO;
        }
        int res = cqe->res;
        io_uring_cqe_seen(&ln->ring, cqe);
        if (res != (int)(2 * ln->rt->half)) {
            snprintf(err, len, "%s the L3 file: %s", write ? "writing" : "reading",
                     res < 0 ? strerror(-res) : "short transfer");
            return KS_EIO;
        }
    }
    return KS_OK;
}

// GPU mode: room for n copies in the lane's batched-copy arrays, emptied.
static int copies_reset(struct lane *ln, size_t n, char *err, size_t len)
{
    ln->n_copies = 0;
    if (n <= ln->cap_copies)
        return KS_OK;
    free(ln->cdst);
    free(ln->csrc);
    free(ln->csize);
    ln->cdst = malloc(n * sizeof *ln->cdst);
    ln->csrc = malloc(n * sizeof *ln->csrc);
    ln->csize = malloc(n * sizeof *ln->csize);
    ln->cap_copies = ln->cdst && ln->csrc && ln->csize ? n : 0;
    if (ln->cap_copies)
        return KS_OK;
    snprintf(err, len, "out of memory for a batch's copies (%zu)", n);
    return KS_ENOMEM;
}

static void copies_add(struct lane *ln, void *dst, const void *src)
{
    KS_ASSERT(ln->n_copies < ln->cap_copies);
    ln->cdst[ln->n_copies] = dst;
    ln->csrc[ln->n_copies] = src;
    ln->csize[ln->n_copies++] = ln->rt->half;
}

// Enqueues the copies gathered in the lane's arrays as one batched copy.
static int copies_run(struct lane *ln, const char *what, char *err, size_t len)
{
    int st = ks_copy_batch_async(ln->cdst, ln->csrc, ln->csize, ln->n_copies, ln->stream);
    return st == KS_KERNEL_OK ? KS_OK : cuda_fail(err, len, what, st);
}

// GPU mode: moves a batch with the lane's stream, one batched copy (both
// halves of every block) per batch, or per RING_DEPTH blocks through the
// lane's pinned stage for an L3 block (O_DIRECT file I/O there). It returns
// with the last copies enqueued, not done: the lane records the slot's
// event after them. L2 <-> L3 (host memory on both sides) is KS_ENOSYS_.
static int copy_batch_gpu(struct lane *ln, const struct ks_batch *b, char *err, size_t len)
{
    struct rt *t = ln->rt;
    int st;
    if (b->src != KS_L3 && b->dst != KS_L3) {
        if ((st = copies_reset(ln, 2 * (size_t)b->n, err, len)) != KS_OK)
            return st;
        for (uint32_t i = 0; i < b->n; i++) {
            void *sk, *sv, *dk, *dv;
            halves(t, b->src, b->src_pages[i], &sk, &sv);
            halves(t, b->dst, b->dst_pages[i], &dk, &dv);
            copies_add(ln, dk, sk);
            copies_add(ln, dv, sv);
        }
        return copies_run(ln, "a migration batch", err, len);
    }
    if (b->src == KS_L2 || b->dst == KS_L2)
        return KS_ENOSYS_;
    int write = b->dst == KS_L3;
    size_t bb = 2 * t->half;
    if ((st = copies_reset(ln, 2 * (size_t)(b->n < RING_DEPTH ? b->n : RING_DEPTH), err, len)) != KS_OK)
        return st;
    for (uint32_t i = 0; i < b->n; i += RING_DEPTH) {
        uint32_t k = b->n - i < RING_DEPTH ? b->n - i : RING_DEPTH;
        if (write) { // L1 -> stage, done before the file write reads the stage
            ln->n_copies = 0;
            for (uint32_t j = 0; j < k; j++) {
                copies_add(ln, ln->stage + j * bb, page_k(t, b->src_pages[i + j]));
                copies_add(ln, ln->stage + j * bb + t->half, page_v(t, b->src_pages[i + j]));
            }
            if ((st = copies_run(ln, "copying blocks out of L1", err, len)) != KS_OK)
                return st;
            if ((st = ks_stream_sync(ln->stream)) != KS_KERNEL_OK)
                return cuda_fail(err, len, "copying blocks out of L1", st);
        } else if (i > 0 && (st = ks_stream_sync(ln->stream)) != KS_KERNEL_OK) {
            // the previous group's copies out of the stage are done before it is refilled
            return cuda_fail(err, len, "copying blocks into L1", st);
        }
        for (uint32_t j = 0; j < k; j++) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ln->ring);
            if (!sqe) {
                snprintf(err, len, "io_uring: no submission entry");
                return KS_EIO;
            }
            uint32_t fp = write ? b->dst_pages[i + j] : b->src_pages[i + j];
            prep_file(ln, sqe, write, j, ln->stage + j * bb, ln->stage + j * bb + t->half, t->half, page_l3(t, fp));
        }
        if (ring_run(ln, k, write, err, len) != KS_OK)
            return KS_EIO;
        if (!write) { // stage -> L1
            ln->n_copies = 0;
            for (uint32_t j = 0; j < k; j++) {
                copies_add(ln, page_k(t, b->dst_pages[i + j]), ln->stage + j * bb);
                copies_add(ln, page_v(t, b->dst_pages[i + j]), ln->stage + j * bb + t->half);
            }
            if ((st = copies_run(ln, "copying blocks into L1", err, len)) != KS_OK)
                return st;
        }
    }
    return KS_OK;
}

static int copy_batch(struct lane *ln, const struct ks_batch *b, char *err, size_t len)
{
    struct rt *t = ln->rt;
    if (t->gpu) {
        int st = copy_batch_gpu(ln, b, err, len);
        if (st != KS_ENOSYS_)
            return st;
    }
    if (b->src != KS_L3 && b->dst != KS_L3) {
        for (uint32_t i = 0; i < b->n; i++) {
            void *sk, *sv, *dk, *dv;
            halves(t, b->src, b->src_pages[i], &sk, &sv);
            halves(t, b->dst, b->dst_pages[i], &dk, &dv);
            memcpy(dk, sk, t->half);
            memcpy(dv, sv, t->half);
        }
        return KS_OK;
    }
    if (!ln->ring_ok) {
        snprintf(err, len, "no io_uring for the L3 file");
        return KS_EIO;
    }
    int write = b->dst == KS_L3;
    unsigned mem = write ? b->src : b->dst;
    for (uint32_t i = 0; i < b->n;) {
        unsigned k = 0;
        for (; k < RING_DEPTH && i + k < b->n; k++) {
            uint32_t mp = write ? b->src_pages[i + k] : b->dst_pages[i + k];
            uint32_t fp = write ? b->dst_pages[i + k] : b->src_pages[i + k];
            void *a, *c;
            halves(t, mem, mp, &a, &c);
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ln->ring);
            if (!sqe) {
                snprintf(err, len, "io_uring: no submission entry");
                return KS_EIO;
            }
            prep_file(ln, sqe, write, k, a, c, t->half, page_l3(t, fp));
        }
        if (ring_run(ln, k, write, err, len) != KS_OK)
            return KS_EIO;
        i += k;
    }
    return KS_OK;
}

// GPU mode, once a batch's copies are enqueued on the lane's stream: records
// job slot k's event after them, marks the job enqueued (the decode thread
// may make its stream wait for the event from now on), then waits for the
// event. KS_OK when the copies are done.
static int publish_and_wait(struct lane *ln, uint32_t k, struct CUevent_st *ev, char *err, size_t len)
{
    struct rt *t = ln->rt;
    int st = ks_event_record(ev, ln->stream);
    if (st != KS_KERNEL_OK)
        return cuda_fail(err, len, "recording a batch's event", st);
    pthread_mutex_lock(&t->mu);
    t->jev[k].enqueued = 1;
    pthread_cond_broadcast(&t->done);
    pthread_mutex_unlock(&t->mu);
    st = ks_event_sync(ev);
    return st == KS_KERNEL_OK ? KS_OK : cuda_fail(err, len, "a migration batch", st);
}

static void *lane_main(void *arg)
{
    struct lane *ln = arg;
    struct rt *t = ln->rt;
    char err[256];
    pthread_mutex_lock(&t->mu);
    for (;;) {
        int k = -1;
        while (!t->quit && (k = ks_step_next_job(t->jobs, t->n_jobs)) < 0)
            pthread_cond_wait(&t->work, &t->mu);
        if (t->quit)
            break;
        t->jobs[k].running = 1;
        const struct ks_batch *b = t->jobs[k].b;
        struct CUevent_st *ev = t->gpu ? t->jev[k].ev : NULL;
        pthread_mutex_unlock(&t->mu);
        double t0 = ks_clock_mono();
        err[0] = '\0';
        int st = copy_batch(ln, b, err, sizeof err);
        if (t->gpu && st == KS_OK) // a batch copied on the host (L2 <-> L3) is done already: its event too
            st = publish_and_wait(ln, (uint32_t)k, ev, err, sizeof err);
        double dt = ks_clock_mono() - t0;
        pthread_mutex_lock(&t->mu);
        t->x->copy_seconds += dt;
        t->x->copy_bytes += (uint64_t)b->n * 2 * t->half;
        for (uint32_t i = 0; i < t->n_jobs; i++)
            if (t->jobs[i].b == b)
                t->jobs[i].landed = 1;
        if (st != KS_OK && !t->lane_failed) {
            t->lane_failed = 1;
            snprintf(t->lane_err, sizeof t->lane_err, "%s", err);
        }
        pthread_cond_broadcast(&t->done);
        pthread_cond_broadcast(&t->work);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

// ---- requests ----------------------------------------------------------------

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
                return fail(t, st, "%s: %s", "reading the workload");
            if (st == 0) {
                t->wl_done = 1;
                break;
            }
            t->have_drawn = 1;
        }
        t->drawn.arrival = rt_now(t);
        if (ks_step_push(&t->d, &t->drawn, -1) != KS_OK)
            return fail(t, KS_ENOMEM, "%s: %s", "queueing a request");
        t->have_drawn = 0;
        t->r->arrived++;
        t->in_flight++;
    }
    return KS_OK;
}

static void free_selbuf(struct selbuf *b)
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
    free_selbuf(b);
    return NULL;
}

// ks_active_set's hooks: a new block's KV is written to its page; a
// finished request's buffers are freed.
static int fill_hook(void *ctx, uint32_t req, uint32_t from, uint32_t to, char *err, size_t len)
{
    struct rt *t = ctx;
    int st = fill_new(t, req, from, to);
    if (st != KS_OK)
        snprintf(err, len, "%s", t->err);
    return st;
}

static void finished_hook(void *ctx, struct ks_active *a)
{
    struct rt *t = ctx;
    free_selbuf(a->user);
    a->user = NULL;
    t->in_flight--;
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

// ---- decode --------------------------------------------------------------------

// Waits (mu held) until no needed batch for layers <= layer is on its way,
// or job j (>= 0) has landed. Returns KS_EIO when a lane failed.
static int wait_landed(struct rt *t, uint32_t layer, int j)
{
    for (;;) {
        if (t->lane_failed)
            return KS_EIO;
        int busy = j >= 0 ? !t->jobs[j].landed : ks_step_needed_unlanded(t->jobs, t->n_jobs, layer);
        if (!busy)
            return KS_OK;
        pthread_cond_wait(&t->done, &t->mu);
    }
}

// GPU mode: job slot j's event, for the next launch to make the decode
// stream wait for (once per step: a stream wait holds for all later work).
static void note_wait(struct rt *t, uint32_t j)
{
    if (!t->jev[j].waited) {
        t->jev[j].waited = 1;
        t->pend[t->n_pend++] = j;
    }
}

// GPU mode's wait_landed (mu held): waits until every needed batch for
// layers <= layer, or job j (>= 0), has landed or at least been enqueued;
// those not landed yet are noted for the next launch, whose kernel waits for
// them on the device. Returns KS_EIO when a lane failed.
static int wait_enqueued(struct rt *t, uint32_t layer, int j)
{
    for (;;) {
        if (t->lane_failed)
            return KS_EIO;
        int busy = 0;
        for (uint32_t i = 0; !busy && i < t->n_jobs; i++) {
            const struct ks_step_job *jb = &t->jobs[i];
            int want = j >= 0 ? i == (uint32_t)j : jb->needed && jb->layer <= layer;
            busy = want && !jb->landed && !t->jev[i].enqueued;
        }
        if (!busy)
            break;
        pthread_cond_wait(&t->done, &t->mu);
    }
    for (uint32_t i = 0; i < t->n_jobs; i++) {
        const struct ks_step_job *jb = &t->jobs[i];
        int want = j >= 0 ? i == (uint32_t)j : jb->needed && jb->layer <= layer;
        if (want && !jb->landed)
            note_wait(t, i);
    }
    return KS_OK;
}

// GPU mode (mu held, no job running): an event for each of n job slots,
// made once per slot.
static int grow_events(struct rt *t, uint32_t n)
{
    if (n <= t->cap_jev)
        return KS_OK;
    struct job_event *e = realloc(t->jev, n * sizeof *e);
    if (!e)
        return fail(t, KS_ENOMEM, "%s: %s", "job events");
    t->jev = e;
    memset(e + t->cap_jev, 0, (n - t->cap_jev) * sizeof *e);
    uint32_t from = t->cap_jev;
    t->cap_jev = n; // every slot freed at teardown, made or not
    uint32_t *p = realloc(t->pend, n * sizeof *p);
    if (!p)
        return fail(t, KS_ENOMEM, "%s: %s", "job events");
    t->pend = p;
    for (uint32_t i = from; i < n; i++) {
        int st = ks_event_new(&e[i].ev);
        if (st != KS_KERNEL_OK)
            return cuda_fail(t->err, sizeof t->err, "a job slot's event", st);
    }
    return KS_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void free_device_buffers(struct rt *t)
{
    void *d[] = {t->d_q, t->d_out, t->d_acc_mass, t->d_seq_len, t->d_table, t->d_ksel, t->d_kn_sel,
                 t->d_acc_blocks, t->d_n_acc, t->d_missing, t->d_n_missing, t->d_ws};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        ks_devbuf_free(d[i]);
    t->d_q = t->d_out = t->d_acc_mass = NULL;
    t->d_seq_len = t->d_table = t->d_ksel = t->d_kn_sel = t->d_acc_blocks = t->d_n_acc = NULL;
    t->d_missing = t->d_n_missing = NULL;
    t->d_ws = NULL;
}

// (Re)sizes the kernel buffers for n sequences (host, and device in GPU mode).
static int grow_seqs(struct rt *t, uint32_t n)
{
    if (n <= t->cap_seqs)
        return KS_OK;
    const struct ks_scenario *s = t->s;
    size_t qe = (size_t)s->model.q_heads * s->model.head_dim, mb = t->cap_blocks;
    free(t->q); free(t->out); free(t->acc_mass); free(t->seq_len); free(t->table); free(t->ksel);
    free(t->kn_sel); free(t->acc_blocks); free(t->n_acc); free(t->missing); free(t->n_missing); free(t->ws);
    t->q = malloc(n * qe * sizeof *t->q);
    t->out = malloc(n * qe * sizeof *t->out);
    t->acc_mass = malloc(n * mb * sizeof *t->acc_mass);
    t->seq_len = malloc(n * sizeof *t->seq_len);
    t->table = malloc(n * mb * sizeof *t->table);
    t->ksel = malloc(n * mb * sizeof *t->ksel);
    t->kn_sel = malloc(n * sizeof *t->kn_sel);
    t->acc_blocks = malloc(n * mb * sizeof *t->acc_blocks);
    t->n_acc = malloc(n * sizeof *t->n_acc);
    t->missing = malloc(n * mb * sizeof *t->missing);
    t->n_missing = malloc(n * sizeof *t->n_missing);
    struct ks_decode_params p = {.n_seqs = n, .q_heads = s->model.q_heads, .kv_heads = s->model.kv_heads,
                                 .head_dim = s->model.head_dim, .block_size = s->cache.block_size,
                                 .max_blocks = t->cap_blocks, .max_sel = t->cap_blocks, .report_cap = t->cap_blocks};
    t->ws_bytes = ks_decode_workspace(&p, 1);
    t->ws = malloc(t->ws_bytes ? t->ws_bytes : 1);
    t->cap_seqs = n;
    if (!t->q || !t->out || !t->acc_mass || !t->seq_len || !t->table || !t->ksel || !t->kn_sel ||
        !t->acc_blocks || !t->n_acc || !t->missing || !t->n_missing || !t->ws)
        return KS_ENOMEM;
    struct ks_rng r;
    ks_rng_seed(&r, t->s->seed ^ 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < n * qe; i++)
        t->q[i] = (float)(2 * ks_rng_unit(&r) - 1);
    if (!t->gpu)
        return KS_OK;
    free_device_buffers(t);
    // the device's tables: nothing uploaded yet (the host table is zeroed so
    // that a row's unread entries, uploaded with it, are defined)
    size_t tables = (size_t)s->model.layers * n * mb;
    memset(t->table, 0, n * mb * sizeof *t->table);
    free(t->tshadow);
    free(t->tshadow_ok);
    t->tshadow = malloc(tables * sizeof *t->tshadow);
    t->tshadow_ok = calloc((size_t)s->model.layers * n, 1);
    if (!t->tshadow || !t->tshadow_ok)
        return KS_ENOMEM;
    int st = KS_KERNEL_OK;
#define DEV(ptr, bytes) do { if (st == KS_KERNEL_OK) st = ks_devbuf_alloc((void **)&(ptr), (bytes)); } while (0)
    DEV(t->d_q, n * qe * sizeof *t->q);
    DEV(t->d_out, n * qe * sizeof *t->out);
    DEV(t->d_acc_mass, n * mb * sizeof *t->acc_mass);
    DEV(t->d_seq_len, n * sizeof *t->seq_len);
    DEV(t->d_table, tables * sizeof *t->table);
    DEV(t->d_ksel, n * mb * sizeof *t->ksel);
    DEV(t->d_kn_sel, n * sizeof *t->kn_sel);
    DEV(t->d_acc_blocks, n * mb * sizeof *t->acc_blocks);
    DEV(t->d_n_acc, n * sizeof *t->n_acc);
    DEV(t->d_missing, n * mb * sizeof *t->missing);
    DEV(t->d_n_missing, n * sizeof *t->n_missing);
    DEV(t->d_ws, t->ws_bytes ? t->ws_bytes : 1);
#undef DEV
    // on the decode stream, which the kernel runs on (a plain upload of
    // pageable memory may return before the copy is done)
    if (st == KS_KERNEL_OK)
        st = ks_copy_async(t->d_q, t->q, n * qe * sizeof *t->q, t->ds);
    if (st == KS_KERNEL_OK)
        st = ks_stream_sync(t->ds);
    return st == KS_KERNEL_OK ? KS_OK : cuda_fail(t->err, sizeof t->err, "the kernel's device buffers", st);
}

// Where the kernel reads block b of request a in layer l: its L1 page, or a
// scratch page it is copied into (*scratch counts the scratch pages used).
// The page comes from the request's table entry e once its generation check
// has passed; a block that moved since is located afresh (counted), and so
// is a block in this step's batches, whose state (in flight) decides. A
// block in flight is read at its destination once its batch has landed.
// *loc is what was read, for the check after the launch.
static int page_for(struct rt *t, struct ks_loc *e, const struct ks_active *a, uint32_t l, uint32_t b,
                    uint32_t *scratch, uint32_t *page, struct ks_loc *loc)
{
    int st = KS_OK, kept = e->id != NO_ENTRY;
    int moving = kept && e->id < t->n_ids && t->job_of[e->id];
    if (!kept || moving || (!t->skip_gen_check && !ks_cache_current(t->c, e))) {
        if (kept && !moving)
            t->x->table_refreshed++;
        if ((st = ks_cache_locate(t->c, a->req, l, b, e)) != KS_OK)
            return st;
    }
    *loc = *e;
    unsigned tier = loc->tier;
    uint32_t pg = loc->page;
    uint32_t j = loc->id < t->n_ids ? t->job_of[loc->id] : 0;
    if (j && loc->state != KS_BLK_RESIDENT) {
        const struct ks_batch *bt = t->jobs[j - 1].b;
        pthread_mutex_lock(&t->mu);
        // GPU mode: a block landing in L1 is read by a kernel that waits for
        // its batch's event; one landing elsewhere goes to a scratch page
        // from its destination, once landed
        if (t->gpu && bt->dst == KS_L1)
            st = wait_enqueued(t, 0, (int)(j - 1));
        else
            st = wait_landed(t, 0, (int)(j - 1));
        pthread_mutex_unlock(&t->mu);
        if (st != KS_OK)
            return st;
        for (uint32_t i = 0; i < bt->n; i++)
            if (bt->blocks[i] == loc->id) {
                tier = bt->dst;
                pg = bt->dst_pages[i];
            }
        t->x->reads_inflight++;
    }
    t->x->reads++;
    if (tier == KS_L1) {
        *page = pg;
        return KS_OK;
    }
    // not in L1: into a scratch page of the L1 arrays
    uint32_t sp = t->l1p + (*scratch)++;
    t->x->reads_scratch++;
    t->r->outside_reads++;
    if (t->gpu) {
        const unsigned char *src = tier == KS_L2 ? page_l2(t, pg) : t->dstage;
        if (tier == KS_L3) {
            char msg[256];
            if (full_io(pread(t->l3fd, t->dstage, 2 * t->half, page_l3(t, pg)), 2 * t->half,
                        "reading a block from the L3 file", msg, sizeof msg) != KS_OK) {
                snprintf(t->err, sizeof t->err, "%s", msg);
                return KS_EIO;
            }
        }
        st = ks_copy_async(page_k(t, sp), src, t->half, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(page_v(t, sp), src + t->half, t->half, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_stream_sync(t->ds);
        if (st != KS_KERNEL_OK)
            return cuda_fail(t->err, sizeof t->err, "copying a block into a scratch page", st);
        *page = sp;
        return KS_OK;
    }
    if (tier == KS_L2) {
        memcpy(page_k(t, sp), page_l2(t, pg), t->half);
        memcpy(page_v(t, sp), page_l2(t, pg) + t->half, t->half);
    } else {
        struct iovec iov[2] = {{page_k(t, sp), t->half}, {page_v(t, sp), t->half}};
        char msg[256];
        if (full_io(preadv(t->l3fd, iov, 2, page_l3(t, pg)), 2 * t->half, "reading a block from the L3 file", msg,
                    sizeof msg) != KS_OK) {
            snprintf(t->err, sizeof t->err, "%s", msg);
            return KS_EIO;
        }
    }
    *page = sp;
    return KS_OK;
}

// GPU mode: brings layer l's device table (dtab) up to date for the n
// sequences packed in the kernel buffers: the span of rows from the first to
// the last whose entries this launch reads (its selection's) differ from what
// the device holds, or that hold nothing yet, in one copy on the decode
// stream; none when all match (the device reads no other entry).
static int upload_table(struct rt *t, uint32_t n, uint32_t l, uint32_t *dtab)
{
    size_t mb = t->cap_blocks;
    uint32_t *sh = t->tshadow + (size_t)l * t->cap_seqs * mb;
    uint8_t *ok = t->tshadow_ok + (size_t)l * t->cap_seqs;
    uint32_t lo = n, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *row = t->table + i * mb, *sel = t->ksel + i * mb;
        int changed = !ok[i];
        for (uint32_t j = 0; !changed && j < t->kn_sel[i]; j++)
            changed = sh[i * mb + sel[j]] != row[sel[j]];
        if (changed) {
            lo = lo < i ? lo : i;
            hi = i;
        }
    }
    if (lo == n) {
        t->x->table_uploads_skipped++;
        return KS_KERNEL_OK;
    }
    size_t at = lo * mb, count = (size_t)(hi - lo + 1) * mb;
    memcpy(sh + at, t->table + at, count * sizeof *sh);
    memset(ok + lo, 1, hi - lo + 1);
    t->x->table_uploads++;
    return ks_copy_async(dtab + at, t->table + at, count * sizeof *dtab, t->ds);
}

// Runs the sparse kernel in layer l over the n sequences packed in the
// kernel buffers.
static int launch(struct rt *t, uint32_t n, uint32_t l)
{
    const struct ks_scenario *s = t->s;
    struct ks_decode_params p = {
        .n_seqs = n, .q_heads = s->model.q_heads, .kv_heads = s->model.kv_heads, .head_dim = s->model.head_dim,
        .block_size = s->cache.block_size, .n_pages = t->l1p + t->scratch, .max_blocks = t->cap_blocks,
        .scale = 1.0f / sqrtf((float)s->model.head_dim), .q = t->q, .seq_len = t->seq_len,
        .block_table = t->table, .k = t->l1k, .v = t->l1v, .max_sel = t->cap_blocks, .sel = t->ksel,
        .n_sel = t->kn_sel, .out = t->out, .report_cap = t->cap_blocks, .acc_blocks = t->acc_blocks,
        .acc_mass = t->acc_mass, .n_acc = t->n_acc, .missing = t->missing, .n_missing = t->n_missing,
        .workspace = t->ws, .workspace_bytes = t->ws_bytes};
    double t0 = ks_clock_mono();
    int st;
    if (t->gpu) {
        // the step's inputs up, the kernel on the decode stream, the report's counts down
        size_t rows = (size_t)n * t->cap_blocks * sizeof(uint32_t);
        st = ks_copy_async(t->d_seq_len, t->seq_len, n * sizeof *t->seq_len, t->ds);
        uint32_t *dtab = t->d_table + (size_t)l * t->cap_seqs * t->cap_blocks;
        if (st == KS_KERNEL_OK)
            st = upload_table(t, n, l, dtab);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->d_ksel, t->ksel, rows, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->d_kn_sel, t->kn_sel, n * sizeof *t->kn_sel, t->ds);
        // then the batches carrying blocks it reads: the kernel waits for
        // their copies on the device (after the uploads, which may wait on
        // the host for the stream to reach them: their sources are pageable)
        for (uint32_t i = 0; st == KS_KERNEL_OK && i < t->n_pend; i++)
            st = ks_event_stream_wait(t->ds, t->jev[t->pend[i]].ev);
        t->n_pend = 0;
        p.q = t->d_q, p.seq_len = t->d_seq_len, p.block_table = dtab, p.sel = t->d_ksel;
        p.n_sel = t->d_kn_sel, p.out = t->d_out, p.acc_blocks = t->d_acc_blocks, p.acc_mass = t->d_acc_mass;
        p.n_acc = t->d_n_acc, p.missing = t->d_missing, p.n_missing = t->d_n_missing, p.workspace = t->d_ws;
        if (st == KS_KERNEL_OK)
            st = ks_sparse_decode_cuda(&p, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->n_acc, t->d_n_acc, n * sizeof *t->n_acc, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->n_missing, t->d_n_missing, n * sizeof *t->n_missing, t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->out, t->d_out, (size_t)n * s->model.q_heads * s->model.head_dim * sizeof *t->out,
                               t->ds);
        if (st == KS_KERNEL_OK)
            st = ks_stream_sync(t->ds);
        if (st != KS_KERNEL_OK && st != KS_KERNEL_EINVAL) {
            t->x->kernel_seconds += ks_clock_mono() - t0;
            return cuda_fail(t->err, sizeof t->err, "the CUDA sparse decode kernel", st);
        }
    } else {
        st = ks_sparse_decode_ref(&p);
    }
    t->x->kernel_seconds += ks_clock_mono() - t0;
    if (st != KS_KERNEL_OK) {
        snprintf(t->err, sizeof t->err, "the sparse decode kernel refused layer %u: %s", l, ks_kernel_status_str(st));
        return KS_EINVAL;
    }
    t->x->kernel_launches++;
    for (size_t i = 0; i < (size_t)n * s->model.q_heads * s->model.head_dim; i++) {
        t->x->out_checksum += t->out[i];
        t->x->out_magnitude += fabs(t->out[i]);
    }
    for (uint32_t i = 0; i < n; i++)
        if (t->n_acc[i] != t->kn_sel[i] || t->n_missing[i] != 0) {
            snprintf(t->err, sizeof t->err, "the kernel's access report disagrees with the selection (layer %u)", l);
            return KS_EINVAL;
        }
    return KS_OK;
}

// One layer's attention for every decoding request, in as few launches as
// the scratch pages allow.
static int attend(struct rt *t, uint32_t l, int per_layer)
{
    uint32_t n = 0, scratch = 0;
    struct ks_loc *locs = t->locs;
    size_t n_locs = 0;
    int st = KS_OK;
    const struct ks_active_set *act = &t->d.act;
    for (uint32_t i = 0; st == KS_OK && i <= act->n; i++) {
        const struct ks_active *a = i < act->n ? &act->a[i] : NULL;
        if (a && a->generated == 0)
            continue;
        const struct selbuf *sb = a ? a->user : NULL;
        uint32_t k = a ? sb->n_sel[per_layer ? l : 0] : 0;
        // launch what is packed when the batch ends or this request could
        // overflow the scratch pages
        if (n > 0 && (!a || scratch + k > t->scratch)) {
            if ((st = launch(t, n, l)) != KS_OK)
                break;
            for (size_t v = 0; v < n_locs; v++)
                if (ks_cache_validate(t->c, &locs[v]) != KS_OK)
                    t->x->stale_refused++;
            n = 0;
            scratch = 0;
            n_locs = 0;
        }
        if (!a)
            break;
        const uint32_t *sel = sb->sel + (size_t)(per_layer ? l : 0) * t->cap_blocks;
        uint32_t *ks = t->ksel + (size_t)n * t->cap_blocks;
        memcpy(ks, sel, k * sizeof *ks);
        qsort(ks, k, sizeof *ks, cmp_u32); // the kernel reads its selection in ascending order
        if (n_locs + k > t->cap_locs) {
            size_t cap = t->cap_locs ? 2 * t->cap_locs : 1024;
            while (cap < n_locs + k)
                cap *= 2;
            struct ks_loc *p = realloc(locs, cap * sizeof *p);
            if (!p) {
                st = fail(t, KS_ENOMEM, "%s: %s", "a layer's reads");
                break;
            }
            locs = t->locs = p;
            t->cap_locs = cap;
        }
        uint32_t *row = t->table + (size_t)n * t->cap_blocks;
        struct ks_loc *ent = sb->ent + (size_t)l * t->cap_blocks;
        for (uint32_t j = 0; st == KS_OK && j < k; j++)
            st = page_for(t, &ent[ks[j]], a, l, ks[j], &scratch, &row[ks[j]], &locs[n_locs++]);
        t->seq_len[n] = a->ctx;
        t->kn_sel[n] = k;
        n++;
    }
    if (st != KS_OK && !t->err[0])
        fail(t, st, "%s: %s", "reading a layer's blocks");
    return st;
}

static int note_step(struct rt *t, double per_block)
{
    if (t->n_steps == t->cap_steps) {
        size_t cap = t->cap_steps ? 2 * t->cap_steps : 256;
        double *p = realloc(t->step_kernel, cap * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        t->step_kernel = p;
        t->cap_steps = cap;
    }
    t->step_kernel[t->n_steps++] = per_block;
    return KS_OK;
}

// ---- the step driver's operations ----------------------------------------------

static double op_now(void *ctx)
{
    return rt_now(ctx);
}

static void op_hold(void *ctx, int on)
{
    if (on)
        pause_clock(ctx);
    else
        resume_clock(ctx);
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

// The router runs once the decoder yields in an iteration: the requests it
// releases join the queue behind this iteration's admission.
static int op_iteration(void *ctx, char *err, size_t len)
{
    struct rt *t = ctx;
    int st = release(t);
    if (st != KS_OK) {
        snprintf(err, len, "%s", t->err);
        return st;
    }
    if (t->progress && t->r->finished != t->shown) {
        t->shown = t->r->finished;
        fprintf(stderr, "\rruntime: %llu of %llu requests finished, %llu tokens, %.1fs ",
                (unsigned long long)t->shown, (unsigned long long)t->s->workload.requests,
                (unsigned long long)t->r->tokens, rt_now(t));
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
    if (decoding > t->cap_seqs && grow_seqs(t, decoding + 16) != KS_OK) {
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
    if (t->gpu && (st = grow_events(t, plan->n)) != KS_OK) {
        pthread_mutex_unlock(&t->mu);
        snprintf(err, len, "%s", t->err);
        return st;
    }
    t->n_pend = 0;
    for (uint32_t i = 0; i < plan->n; i++) {
        struct ks_batch *b = plan->batch[i];
        t->jobs[i] = ks_step_job_of(t->c, b);
        if (t->gpu)
            t->jev[i] = (struct job_event){.ev = t->jev[i].ev};
        for (uint32_t j = 0; j < b->n; j++)
            if (b->blocks[j] < t->n_ids)
                t->job_of[b->blocks[j]] = i + 1;
    }
    t->n_jobs = plan->n;
    pthread_cond_broadcast(&t->work);
    pthread_mutex_unlock(&t->mu);
    return KS_OK;
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
    int st = t->gpu ? wait_enqueued(t, layer, -1) : wait_landed(t, layer, -1);
    *ready = t->gpu || st != KS_OK ? 1 : ks_step_ready_layers(t->jobs, t->n_jobs, layer, t->s->model.layers);
    pthread_mutex_unlock(&t->mu);
    return st == KS_OK ? KS_OK : lane_failure(t, err, len);
}

static int op_layers(void *ctx, uint32_t from, uint32_t n, double *extra, char *err, size_t len)
{
    struct rt *t = ctx;
    *extra = 0; // the step's busy time is measured whole
    int per_layer = ks_selection_per_layer(t->sp);
    for (uint32_t l = from; l < from + n; l++) {
        int st = attend(t, l, per_layer);
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
    if (note_step(t, reads ? (t->x->kernel_seconds - t->kernel0) / (double)reads : NAN) == KS_OK)
        return KS_OK;
    snprintf(err, len, "recording a step: %s", ks_status_str(KS_ENOMEM));
    return KS_ENOMEM;
}

// ---- setup ---------------------------------------------------------------------

static int open_l3(struct rt *t, const char *dir, uint32_t pages, char *err, size_t len)
{
    snprintf(t->l3path, sizeof t->l3path, "%s/ks_runtime_l3_XXXXXX", dir);
    int fd = mkostemp(t->l3path, O_DIRECT);
    if (fd < 0) {
        snprintf(err, len, "%s: cannot create the L3 file: %s", dir, strerror(errno));
        t->l3path[0] = '\0';
        return KS_EIO;
    }
    t->l3fd = fd;
    if (ftruncate(fd, (off_t)pages * (off_t)(2 * t->half)) != 0) {
        snprintf(err, len, "%s: cannot size the L3 file: %s", t->l3path, strerror(errno));
        return KS_EIO;
    }
    // O_DIRECT must work here: one aligned write of a block
    ssize_t w = pwrite(fd, t->stamp, 2 * t->half, 0);
    if (full_io(w, 2 * t->half, "the L3 file refuses O_DIRECT", err, len) != KS_OK)
        return KS_EIO;
    return KS_OK;
}

static void *aligned(size_t bytes)
{
    void *p = NULL;
    size_t n = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    return posix_memalign(&p, ALIGN, n ? n : ALIGN) == 0 ? p : NULL;
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
    free_device_buffers(t);
    ks_stream_free(t->ds);
    ks_pinned_free(t->dstage);
    if (t->d_ok) {
        for (uint32_t i = 0; i < t->d.act.n; i++)
            free_selbuf(t->d.act.a[i].user);
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
    } else {
        free(t->l1k);
        free(t->l1v);
        free(t->l2);
    }
    free(t->stamp);
    free(t->q); free(t->out); free(t->acc_mass); free(t->seq_len); free(t->table); free(t->ksel);
    free(t->kn_sel); free(t->acc_blocks); free(t->n_acc); free(t->missing); free(t->n_missing); free(t->ws);
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
        x->step_kernel = NULL;
        x->n_step_kernel = 0;
    }
}

// The tiers' memory: L1 and L2 arenas (a device pool and pinned memory in
// GPU mode), each allocated once and touched, and the new-block stamp.
static int alloc_tiers(struct rt *t, const struct ks_cache_params *cp, char *err, size_t len)
{
    size_t l1 = (size_t)(t->l1p + t->scratch) * t->half, l2 = (size_t)cp->tier_blocks[KS_L2] * 2 * t->half;
    if (t->gpu) {
        int cs = ks_devbuf_alloc((void **)&t->l1k, l1);
        if (cs == KS_KERNEL_OK)
            cs = ks_devbuf_alloc((void **)&t->l1v, l1);
        if (cs == KS_KERNEL_OK)
            cs = ks_pinned_alloc((void **)&t->l2, l2);
        if (cs == KS_KERNEL_OK)
            cs = ks_pinned_alloc((void **)&t->dstage, 2 * t->half);
        if (cs == KS_KERNEL_OK)
            cs = ks_stream_new(&t->ds);
        if (cs != KS_KERNEL_OK)
            return cuda_fail(err, len, "GPU mode: the tiers", cs);
    } else {
        t->l1k = aligned(l1);
        t->l1v = aligned(l1);
        t->l2 = aligned(l2);
    }
    t->stamp = aligned(2 * t->half);
    t->job_of = calloc(t->n_ids, sizeof *t->job_of);
    if (!t->l1k || !t->l1v || !t->l2 || !t->stamp || !t->job_of) {
        snprintf(err, len, "out of memory for the tiers (L1 %u pages, L2 %u pages of %zu bytes)", t->l1p,
                 cp->tier_blocks[KS_L2], 2 * t->half);
        return KS_ENOMEM;
    }
    // touch every page now, so page faults do not land in decode steps
    // (device memory needs no touching; every block is written when made)
    if (!t->gpu) {
        memset(t->l1k, 0, l1);
        memset(t->l1v, 0, l1);
    }
    memset(t->l2, 0, l2);
    struct ks_rng g;
    ks_rng_seed(&g, t->s->seed + 77);
    uint16_t *h = (uint16_t *)t->stamp;
    for (size_t i = 0; i < t->half; i++) // K then V: 2 * half bytes of fp16
        h[i] = ks_half_from_float((float)(2 * ks_rng_unit(&g) - 1));
    return KS_OK;
}

// The migration lanes: a ring each for the L3 file, a stream and a pinned
// stage each in GPU mode, and their threads.
static int start_lanes(struct rt *t, char *err, size_t len)
{
    for (int i = 0; i < KS_STEP_LANES; i++) {
        struct lane *ln = &t->lanes[i];
        ln->rt = t;
        if (t->l3fd >= 0) {
            int e = io_uring_queue_init(RING_DEPTH, &ln->ring, 0);
            if (e < 0) {
                snprintf(err, len, "io_uring_queue_init: %s", strerror(-e));
                return KS_EIO;
            }
            ln->ring_ok = 1;
        }
        if (t->gpu) {
            int cs = ks_stream_new(&ln->stream);
            if (cs == KS_KERNEL_OK && t->l3fd >= 0)
                cs = ks_pinned_alloc((void **)&ln->stage, (size_t)RING_DEPTH * 2 * t->half);
            if (cs != KS_KERNEL_OK)
                return cuda_fail(err, len, "GPU mode: a lane's stream and stage", cs);
        }
        if (pthread_create(&ln->th, NULL, lane_main, ln) != 0) {
            snprintf(err, len, "cannot start a migration lane");
            return KS_ENOMEM;
        }
        ln->started = 1;
    }
    return KS_OK;
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
    if (!(t->c = ks_cache_new(&cp, err, len)) || !(t->wl = ks_workload_new(s, err, len)) ||
        !(t->sp = ks_selection_new(s, err, len)))
        return KS_EINVAL;
    struct ks_step_ops ops = {
        .ctx = t, .now = op_now, .hold = op_hold, .idle = op_idle, .iteration = op_iteration,
        .admitted = op_admitted, .selected = op_selected, .fill = fill_hook, .finished = finished_hook,
        .queue = op_queue, .wait_layer = op_wait_layer, .layers = op_layers, .wait_all = op_wait_all,
        .stepped = op_stepped};
    st = ks_step_init(&t->d, &(struct ks_step_params){
        .s = s, .cache = t->c, .sparse = t->sp, .r = t->r, .z = t->z, .gpu = 0, .ops = ops});
    t->d_ok = 1;
    if (st != KS_OK) {
        snprintf(err, len, "out of memory for the step's buffers");
        return st;
    }
    if ((st = alloc_tiers(t, &cp, err, len)) != KS_OK)
        return st;
    if (s->cache.l3 == KS_L3_SSD && cp.tier_blocks[KS_L3] > 0 &&
        (st = open_l3(t, p && p->dir ? p->dir : "/var/tmp", cp.tier_blocks[KS_L3], err, len)) != KS_OK)
        return st;
    if (grow_seqs(t, 16) != KS_OK) {
        snprintf(err, len, "%s", t->err[0] ? t->err : "out of memory for the kernel's buffers");
        return KS_ENOMEM;
    }
    return start_lanes(t, err, len);
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
    r->sim_time = rt_now(t);
    r->wall_s = ks_clock_mono() - w0;
    x->paused = t->paused;
    r->copy_seconds = x->copy_seconds;
    r->copy_bytes = x->copy_bytes;
    step_speeds(t, x, keep);
    r->tiers = calloc(KS_TIERS, sizeof *r->tiers);
    ks_run_result_add_tiers(r, t->c, 0, t->z.block_bytes);
    r->unplanned += r->cache.unplanned;
    if (st != KS_OK)
        snprintf(err, len, "%s", msg[0] ? msg : t->err[0] ? t->err : ks_status_str(st));
    teardown(t);
    free(t);
    return st;
}
