// lanes.c - the runtime's migration lanes: threads that move a step's
// batches between arenas and the L3 file (memcpy, io_uring; CUDA copies in
// GPU mode) and mark them landed (see runtime_impl.h).
#define _GNU_SOURCE // O_DIRECT

#include "runtime_impl.h"

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
    char why[KS_KERNEL_ERR_LEN];
    int st = ks_copy_batch_async(ln->cdst, ln->csrc, ln->csize, ln->n_copies, ln->stream, why, sizeof why);
    return st == KS_KERNEL_OK ? KS_OK : ks_rt_cuda_fail(err, len, what, st, why);
}

// GPU mode: moves a batch with the lane's stream, one batched copy (both
// halves of every block) per batch, or per RING_DEPTH blocks through the
// lane's pinned stage for an L3 block (O_DIRECT file I/O there). It returns
// with the last copies enqueued, not done: the lane records the slot's
// event after them. L2 <-> L3 (host memory on both sides) is KS_ENOSYS_.
static int copy_batch_gpu(struct lane *ln, const struct ks_batch *b, char *err, size_t len)
{
    struct rt *t = ln->rt;
    char why[KS_KERNEL_ERR_LEN];
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
            if ((st = ks_stream_sync(ln->stream, why, sizeof why)) != KS_KERNEL_OK)
                return ks_rt_cuda_fail(err, len, "copying blocks out of L1", st, why);
        } else if (i > 0 && (st = ks_stream_sync(ln->stream, why, sizeof why)) != KS_KERNEL_OK) {
            // the previous group's copies out of the stage are done before it is refilled
            return ks_rt_cuda_fail(err, len, "copying blocks into L1", st, why);
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
    char why[KS_KERNEL_ERR_LEN];
    int st = ks_event_record(ev, ln->stream, why, sizeof why);
    if (st != KS_KERNEL_OK)
        return ks_rt_cuda_fail(err, len, "recording a batch's event", st, why);
    pthread_mutex_lock(&t->mu);
    t->jev[k].enqueued = 1;
    pthread_cond_broadcast(&t->done);
    pthread_mutex_unlock(&t->mu);
    st = ks_event_sync(ev, why, sizeof why);
    return st == KS_KERNEL_OK ? KS_OK : ks_rt_cuda_fail(err, len, "a migration batch", st, why);
}

static void *lane_main(void *arg)
{
    struct lane *ln = arg;
    struct rt *t = ln->rt;
    char err[256];
    // a query-dependent selection is made layer by layer, as the step runs:
    // the copies of a layer's misses start when its layer does (as the simulator's)
    int gated = ks_selection_per_layer(t->sp);
    pthread_mutex_lock(&t->mu);
    for (;;) {
        int k = -1;
        while (!t->quit && (k = ks_step_next_job(t->jobs, t->n_jobs, 0, gated ? t->layer_reached : KS_NONE)) < 0)
            pthread_cond_wait(&t->work, &t->mu);
        if (t->quit)
            break;
        t->jobs[k].running = 1;
        t->x->copies_ahead += t->jobs[k].needed && t->jobs[k].start > t->layer_reached;
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

// The migration lanes: a ring each for the L3 file, a stream and a pinned
// stage each in GPU mode, and their threads.
int ks_rt_start_lanes(struct rt *t, char *err, size_t len)
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
            char why[KS_KERNEL_ERR_LEN];
            int cs = ks_stream_new(&ln->stream, why, sizeof why);
            if (cs != KS_KERNEL_OK)
                return ks_rt_cuda_fail(err, len, "GPU mode: a lane's stream", cs, why);
            // the stage meets the L3 file through O_DIRECT
            if (t->l3fd >= 0 && ks_rt_pinned((void **)&ln->stage, (size_t)RING_DEPTH * 2 * t->half, 1,
                                             "GPU mode: a lane's stage", err, len) != KS_OK)
                return KS_EIO;
        }
        if (pthread_create(&ln->th, NULL, lane_main, ln) != 0) {
            snprintf(err, len, "cannot start a migration lane");
            return KS_ENOMEM;
        }
        ln->started = 1;
    }
    return KS_OK;
}
