// tiers.c - the runtime's tiers: L1 and L2 arenas, the L3 file, and the
// KV a new block is written with (see runtime_impl.h).
#define _GNU_SOURCE // O_DIRECT

#include "runtime_impl.h"

// A new block's KV (see runtime_impl.h, kvtab): value i of the block (K
// then V, each [token][kv_head][dim]) is 13 bits v mapped one to one to an
// fp16 of magnitude in [1/16, 1), v = mul[i] * (n mod 8192) + add[i] + salt[i]
// * s(n / 8192) mod 8192, where n numbers the block by (request, layer, block)
// and mul[i] is odd. So two blocks whose numbers differ mod 8192 (every two
// blocks of a run of fewer than 8192 request-layer-blocks, e.g. runtime_tiny)
// differ in every value; others agree in a value with probability 2^-13.
static uint16_t kv_half(uint32_t v)
{
    // sign, then exponent 2^-4 .. 2^-1, then 10 bits of mantissa
    return (uint16_t)((v & 1u) << 15 | (11u + ((v >> 1) & 3u)) << 10 | (v >> 3 & 0x3ffu));
}

void ks_rt_kv_block(const struct rt *t, uint32_t req, uint32_t l, uint32_t b, uint16_t *dst)
{
    uint64_t n = ((uint64_t)req * t->s->model.layers + l) * t->cap_blocks + b;
    uint32_t lo = (uint32_t)(n & 8191u), hi = (uint32_t)(ks_rng_mix((n >> 13) ^ t->s->seed) & 8191u);
    size_t m = 2 * t->elems;
    const uint16_t *mul = t->kvtab, *add = t->kvtab + m, *salt = t->kvtab + 2 * m;
    for (size_t i = 0; i < m; i++)
        dst[i] = kv_half((mul[i] * lo + add[i] + salt[i] * hi) & 8191u);
}

// Writes one block ([K|V], 2 * half bytes at src) into page `page` of
// `tier`. On the GPU the copies are enqueued on the decode stream from
// pinned memory: src must stay until the stream has passed them.
static int fill_page(struct rt *t, unsigned tier, uint32_t page, const unsigned char *src)
{
    if (tier == KS_L1 && t->gpu) {
        char why[KS_KERNEL_ERR_LEN];
        int st = ks_copy_async(page_k(t, page), src, t->half, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(page_v(t, page), src + t->half, t->half, t->ds, why, sizeof why);
        if (st != KS_KERNEL_OK)
            return ks_rt_cuda_fail(t->err, sizeof t->err, "writing a new block to L1", st, why);
    } else if (tier == KS_L1) {
        memcpy(page_k(t, page), src, t->half);
        memcpy(page_v(t, page), src + t->half, t->half);
    } else if (tier == KS_L2) {
        memcpy(page_l2(t, page), src, 2 * t->half);
    } else {
        ssize_t n = pwrite(t->l3fd, src, 2 * t->half, page_l3(t, page));
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
// move the block, or the kernel read it, right after. The blocks are made
// in the stamp's slots in turn (pinned in GPU mode); the decode stream is
// synchronised before a slot is made again.
int ks_rt_fill_new(struct rt *t, uint32_t req, uint32_t from, uint32_t to)
{
    char why[KS_KERNEL_ERR_LEN];
    int st = KS_KERNEL_OK;
    uint32_t slot = 0;
    for (uint32_t l = 0; l < t->s->model.layers; l++)
        for (uint32_t b = from; b < to; b++) {
            struct ks_loc loc;
            int cs = ks_cache_locate(t->c, req, l, b, &loc);
            if (cs != KS_OK)
                return ks_rt_fail(t, cs, "%s: %s", "locating a new block");
            if (slot == t->stamp_slots) {
                if (t->gpu && (st = ks_stream_sync(t->ds, why, sizeof why)) != KS_KERNEL_OK)
                    return ks_rt_cuda_fail(t->err, sizeof t->err, "writing new blocks to L1", st, why);
                slot = 0;
            }
            unsigned char *src = t->stamp + (size_t)slot++ * 2 * t->half;
            ks_rt_kv_block(t, req, l, b, (uint16_t *)src);
            if ((cs = fill_page(t, loc.tier, loc.page, src)) != KS_OK)
                return cs;
        }
    st = t->gpu ? ks_stream_sync(t->ds, why, sizeof why) : KS_KERNEL_OK;
    return st == KS_KERNEL_OK ? KS_OK : ks_rt_cuda_fail(t->err, sizeof t->err, "writing new blocks to L1", st, why);
}

// Pinned host memory (GPU mode) for what: with direct, a buffer the L3 file
// reads or writes with O_DIRECT, which must start on an ALIGN boundary (the
// runtime's O_DIRECT unit; cudaHostAlloc gives page-aligned memory, which is
// checked here rather than assumed). KS_OK, or KS_EIO with the reason in err.
int ks_rt_pinned(void **p, size_t bytes, int direct, const char *what, char *err, size_t len)
{
    char why[KS_KERNEL_ERR_LEN];
    int st = ks_pinned_alloc(p, bytes, why, sizeof why);
    if (st != KS_KERNEL_OK)
        return ks_rt_cuda_fail(err, len, what, st, why);
    return direct ? ks_rt_direct_aligned(*p, what, err, len) : KS_OK;
}

int ks_rt_direct_aligned(const void *p, const char *what, char *err, size_t len)
{
    if ((uintptr_t)p % ALIGN == 0)
        return KS_OK;
    snprintf(err, len, "%s: pinned memory at %p is not aligned to %d bytes, which O_DIRECT on the L3 file needs",
             what, p, ALIGN);
    return KS_EIO;
}

// Host memory the kernel's inputs and outputs travel through: pinned in GPU
// mode (the copies to and from the device are then asynchronous: the decode
// stream is synchronised before the host touches it again), else malloc.
// NULL on failure (GPU mode: the reason in t->err).
void *ks_rt_host_alloc(struct rt *t, size_t bytes)
{
    if (!t->gpu)
        return malloc(bytes ? bytes : 1);
    void *p = NULL;
    return ks_rt_pinned(&p, bytes, 0, "the kernel's pinned host buffers", t->err, sizeof t->err) == KS_OK ? p : NULL;
}

void ks_rt_host_free(struct rt *t, void *p)
{
    if (t->gpu)
        ks_pinned_free(p);
    else
        free(p);
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
            cs = ks_stream_new(&t->ds, why, sizeof why);
        if (cs == KS_KERNEL_OK)
            cs = ks_event_new_timing(&t->k0, why, sizeof why);
        if (cs == KS_KERNEL_OK)
            cs = ks_event_new_timing(&t->k1, why, sizeof why);
        if (cs != KS_KERNEL_OK)
            return ks_rt_cuda_fail(err, len, "GPU mode: the tiers", cs, why);
        // L2 pages, the scratch stage and the stamp meet the L3 file (O_DIRECT)
        t->stamp_slots = STAMP_SLOTS;
        int st = ks_rt_pinned((void **)&t->l2, l2, 1, "GPU mode: L2", err, len);
        if (st == KS_OK)
            st = ks_rt_pinned((void **)&t->dstage, 2 * t->half, 1, "GPU mode: the scratch stage", err, len);
        if (st == KS_OK)
            st = ks_rt_pinned((void **)&t->stamp, t->stamp_slots * 2 * t->half, 1, "GPU mode: the new-block stage",
                              err, len);
        if (st != KS_OK)
            return st;
    } else {
        t->l1k = aligned(l1);
        t->l1v = aligned(l1);
        t->l2 = aligned(l2);
        t->stamp_slots = 1;
        t->stamp = aligned(2 * t->half);
    }
    t->kvtab = malloc(3 * 2 * t->elems * sizeof *t->kvtab);
    t->kvcheck = malloc(2 * t->elems * sizeof *t->kvcheck);
    t->job_of = calloc(t->n_ids, sizeof *t->job_of);
    if (!t->l1k || !t->l1v || !t->l2 || !t->stamp || !t->kvtab || !t->kvcheck || !t->job_of) {
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
    memset(t->stamp, 0, t->stamp_slots * 2 * t->half);
    // the new blocks' KV: per value an odd multiplier and two offsets
    struct ks_rng g;
    ks_rng_seed(&g, t->s->seed + 77);
    size_t m = 2 * t->elems;
    for (size_t i = 0; i < 3 * m; i++)
        t->kvtab[i] = (uint16_t)((ks_rng_next(&g) >> 51) | (i < m)); // 13 bits
    return KS_OK;
}
