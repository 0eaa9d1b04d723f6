// tiers.c - the runtime's tiers: L1 and L2 arenas, the L3 file, and the
// KV a new block is written with (see runtime_impl.h).
#define _GNU_SOURCE // O_DIRECT

#include "runtime_impl.h"

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
        char why[KS_KERNEL_ERR_LEN];
        int st = ks_copy_async(page_k(t, page), t->stamp, t->half, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(page_v(t, page), t->stamp + t->half, t->half, t->ds, why, sizeof why);
        if (st != KS_KERNEL_OK)
            return ks_rt_cuda_fail(t->err, sizeof t->err, "writing a new block to L1", st, why);
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
int ks_rt_fill_new(struct rt *t, uint32_t req, uint32_t from, uint32_t to)
{
    for (uint32_t l = 0; l < t->s->model.layers; l++)
        for (uint32_t b = from; b < to; b++) {
            struct ks_loc loc;
            int st = ks_cache_locate(t->c, req, l, b, &loc);
            if (st != KS_OK)
                return ks_rt_fail(t, st, "%s: %s", "locating a new block");
            stamp_block(t, req, l, b);
            if ((st = fill_page(t, loc.tier, loc.page)) != KS_OK)
                return st;
            // pageable source: the copy has left t->stamp when it returns
        }
    char why[KS_KERNEL_ERR_LEN];
    int st = t->gpu ? ks_stream_sync(t->ds, why, sizeof why) : KS_KERNEL_OK;
    return st == KS_KERNEL_OK ? KS_OK : ks_rt_cuda_fail(t->err, sizeof t->err, "writing new blocks to L1", st, why);
}

int ks_rt_open_l3(struct rt *t, const char *dir, uint32_t pages, char *err, size_t len)
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

// The tiers' memory: L1 and L2 arenas (a device pool and pinned memory in
// GPU mode), each allocated once and touched, and the new-block stamp.
int ks_rt_alloc_tiers(struct rt *t, const struct ks_cache_params *cp, char *err, size_t len)
{
    size_t l1 = (size_t)(t->l1p + t->scratch) * t->half, l2 = (size_t)cp->tier_blocks[KS_L2] * 2 * t->half;
    if (t->gpu) {
        char why[KS_KERNEL_ERR_LEN];
        int cs = ks_devbuf_alloc((void **)&t->l1k, l1, why, sizeof why);
        if (cs == KS_KERNEL_OK)
            cs = ks_devbuf_alloc((void **)&t->l1v, l1, why, sizeof why);
        if (cs == KS_KERNEL_OK)
            cs = ks_pinned_alloc((void **)&t->l2, l2, why, sizeof why);
        if (cs == KS_KERNEL_OK)
            cs = ks_pinned_alloc((void **)&t->dstage, 2 * t->half, why, sizeof why);
        if (cs == KS_KERNEL_OK)
            cs = ks_stream_new(&t->ds, why, sizeof why);
        if (cs != KS_KERNEL_OK)
            return ks_rt_cuda_fail(err, len, "GPU mode: the tiers", cs, why);
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
