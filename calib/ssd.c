// ssd.c - the O_DIRECT io_uring benchmark of ssd.h (liburing).
#define _GNU_SOURCE // O_DIRECT, mkostemp

#include "ssd.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "rng.h"
#include "status.h"

#define ALIGN 4096
#define FILL_CHUNK (4u << 20)   // bytes per write while filling the file
#define TMPFS_MAGIC_ 0x01021994 // statfs f_type of tmpfs (linux/magic.h)
#define RAMFS_MAGIC_ 0x858458f6

struct ks_ssd {
    int fd;
    uint64_t bytes;
    struct ks_rng rng;
    unsigned char *pool; // the requests' pages (see scatter), kept for the next point
    size_t pool_len;
    struct iovec *iov;   // each request's pieces, qd x pieces
    size_t iov_cap;
    char path[4096];
};

const char *ks_ssd_path(const struct ks_ssd *s)
{
    return s->path;
}

static void fill_random(struct ks_rng *r, unsigned char *b, size_t n)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t x = ks_rng_next(r);
        memcpy(b + i, &x, 8);
    }
}

static struct ks_ssd *fail_open(struct ks_ssd *s, void *buf)
{
    free(buf);
    if (s->fd >= 0) {
        close(s->fd);
        unlink(s->path);
    }
    free(s);
    return NULL;
}

int ks_ssd_check_dir(const char *dir, char *err, size_t len)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, len, "%s: %s", dir, strerror(errno));
        return KS_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, len, "%s: not a directory", dir);
        return KS_EINVAL;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, len, "%s: %s", dir, strerror(errno));
        return KS_EIO;
    }
    return KS_OK;
}

struct ks_ssd *ks_ssd_open(const char *dir, uint64_t file_bytes, uint64_t seed, char *err, size_t len)
{
    struct stat st;
    struct statfs fs;
    if (file_bytes < FILL_CHUNK || file_bytes % FILL_CHUNK) {
        snprintf(err, len, "the file size must be a multiple of 4 MiB");
        return NULL;
    }
    if (stat(dir, &st) != 0) {
        snprintf(err, len, "%s: %s", dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, len, "%s: not a directory", dir);
        return NULL;
    }
    if (statfs(dir, &fs) == 0 && (fs.f_type == TMPFS_MAGIC_ || fs.f_type == RAMFS_MAGIC_)) {
        snprintf(err, len, "%s is on %s, which is memory, not a disk: tmpfs refuses O_DIRECT (newer kernels "
                 "accept it without reaching any device); name a directory on a disk", dir,
                 fs.f_type == TMPFS_MAGIC_ ? "tmpfs" : "ramfs");
        return NULL;
    }
    struct ks_ssd *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    s->fd = -1;
    s->bytes = file_bytes;
    ks_rng_seed(&s->rng, seed);
    if ((size_t)snprintf(s->path, sizeof s->path, "%s/ks_calib_XXXXXX", dir) >= sizeof s->path) {
        snprintf(err, len, "%s: path too long", dir);
        return fail_open(s, NULL);
    }
    s->fd = mkostemp(s->path, O_DIRECT);
    if (s->fd < 0) {
        int e = errno;
        if (e == EINVAL)
            snprintf(err, len, "%s: the filesystem refuses O_DIRECT (as tmpfs does); name a directory on a disk",
                     dir);
        else
            snprintf(err, len, "cannot create a file in %s: %s", dir, strerror(e));
        return fail_open(s, NULL);
    }
    unsigned char *buf = aligned_alloc(ALIGN, FILL_CHUNK);
    if (!buf) {
        snprintf(err, len, "out of memory");
        return fail_open(s, NULL);
    }
    for (uint64_t off = 0; off < file_bytes; off += FILL_CHUNK) {
        fill_random(&s->rng, buf, FILL_CHUNK);
        ssize_t n = pwrite(s->fd, buf, FILL_CHUNK, (off_t)off);
        if (n != (ssize_t)FILL_CHUNK) {
            int e = n < 0 ? errno : ENOSPC;
            if (e == EINVAL)
                snprintf(err, len, "%s: an O_DIRECT write was refused (EINVAL): the filesystem does not support "
                         "O_DIRECT", dir);
            else
                snprintf(err, len, "writing %s: %s", s->path, strerror(e));
            return fail_open(s, buf);
        }
    }
    if (fdatasync(s->fd) != 0) {
        snprintf(err, len, "syncing %s: %s", s->path, strerror(errno));
        return fail_open(s, buf);
    }
    free(buf);
    return s;
}

// NOTE: each request reads into (writes from) 4 KiB pages no two of which are
// neighbours in physical memory. How many physically contiguous pieces a
// request's memory has decides how fast the development VM's virtual disk is:
// the host serves each piece (virtio descriptor) separately, and the same
// reads at the same moment ran at 0.5-0.7 GB/s into ordinary pages and at
// 2.7-3.9 GB/s into one 2 MiB huge page (calib/README.md). Buffers from
// malloc got whatever the guest's page allocator handed out, now scattered,
// now contiguous (runs of points in `calib host` read 2-3x faster than fio,
// which never happened again with scattered pages; fio's own 256 MiB buffer
// was found in runs of 3.3 pages, and fio then read 1.1 GB/s), so the figure
// depended on the allocator's state. Scattered pages on purpose
// are what fio's and a runtime's ordinary buffers mostly get, and the same on
// every run: a pool of twice the pages is faulted in order, and a request
// takes every other page of it, one iovec each (readv), so that no two of its
// pages were neighbours in the pool. Requests above 4 MiB (1024 iovecs, the
// kernel's limit) take the fewest pieces of whole pages that divide them.
#define MAX_PIECES 1024

static size_t piece_bytes(size_t bytes)
{
    size_t piece = ALIGN; // bytes is a multiple of ALIGN: piece = bytes ends the loop at the latest
    while (bytes / piece > MAX_PIECES || bytes % piece)
        piece += ALIGN;
    return piece;
}

static int scatter(struct ks_ssd *s, const struct ks_ssd_point *p)
{
    size_t piece = piece_bytes(p->bytes), pieces = p->bytes / piece, n = (size_t)p->qd * pieces;
    if (2 * n * piece > s->pool_len) {
        if (s->pool)
            munmap(s->pool, s->pool_len);
        s->pool_len = 0;
        s->pool = mmap(NULL, 2 * n * piece, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s->pool == MAP_FAILED) {
            s->pool = NULL;
            return -1;
        }
        s->pool_len = 2 * n * piece;
        (void)madvise(s->pool, s->pool_len, MADV_NOHUGEPAGE); // a huge page is one contiguous piece
        for (size_t off = 0; off < s->pool_len; off += ALIGN)
            s->pool[off] = 0; // fault in, in order
    }
    if (n > s->iov_cap) {
        struct iovec *v = realloc(s->iov, n * sizeof *v);
        if (!v)
            return -1;
        s->iov = v;
        s->iov_cap = n;
    }
    for (size_t i = 0; i < n; i++)
        s->iov[i] = (struct iovec){.iov_base = s->pool + 2 * i * piece, .iov_len = piece};
    return 0;
}

// Queues one request at a random aligned offset, into (or from) slot `slot`'s
// pieces (scatter).
static void queue_one(struct ks_ssd *s, struct io_uring *ring, const struct ks_ssd_point *p, unsigned slot)
{
    size_t pieces = p->bytes / piece_bytes(p->bytes);
    const struct iovec *v = s->iov + (size_t)slot * pieces;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    KS_ASSERT(sqe); // the ring has an entry per request in flight
    uint64_t slots = s->bytes / p->bytes;
    uint64_t off = (uint64_t)ks_rng_below(&s->rng, (uint32_t)(slots > UINT32_MAX ? UINT32_MAX : slots)) * p->bytes;
    if (p->op == KS_SSD_READ)
        io_uring_prep_readv(sqe, s->fd, v, (unsigned)pieces, off);
    else
        io_uring_prep_writev(sqe, s->fd, v, (unsigned)pieces, off);
    io_uring_sqe_set_data64(sqe, slot);
}

static int run_ring(struct ks_ssd *s, struct io_uring *ring, const struct ks_ssd_point *p, struct ks_ssd_result *r,
                    char *err, size_t len)
{
    unsigned freed[KS_SSD_MAX_QD]; // slots whose request completed in this batch
    for (unsigned i = 0; i < p->qd; i++)
        queue_one(s, ring, p, i);
    int rc = io_uring_submit(ring);
    if (rc < 0) {
        snprintf(err, len, "io_uring_submit: %s", strerror(-rc));
        return KS_EIO;
    }
    unsigned inflight = p->qd;
    unsigned long long done = 0, counted = 0;
    double t0 = 0, t1 = 0;
    int timing = 0, stopped = 0, bad = 0;
    while (inflight > 0) {
        struct io_uring_cqe *cqe;
        do
            rc = io_uring_wait_cqe(ring, &cqe);
        while (rc == -EINTR);
        if (rc < 0) {
            snprintf(err, len, "io_uring_wait_cqe: %s", strerror(-rc));
            return KS_EIO; // requests may still be in flight: the caller exits the ring
        }
        double now = ks_clock_mono();
        unsigned seen = 0;
        // NOTE: the window runs from one reaped batch to another and counts the
        // completions in (t0, t1]: the rest of the batch that ends the warm-up
        // was done by t0 and is not counted; the whole batch that closes the
        // window was done by t1 and is. The development VM's virtio disk
        // completes requests in batches (all qd at once at 4-64 KiB and QD 8-32;
        // up to 32 at once at 4 MiB x QD 64), so counting only the first
        // completion of the closing batch, as this loop once did, lost up to
        // qd - 1 requests of a window: little at 4 KiB (hundreds of batches a
        // window), up to half at 4 MiB x QD 64 (~26 requests in 0.15 s).
        int closes = 0;  // this batch closes the window
        int opened = 0;  // the window opened in this batch
        do { // every completion ready now
            if (cqe->res != (int)p->bytes && !bad) {
                bad = 1;
                if (cqe->res < 0)
                    snprintf(err, len, "%s of %zu bytes: %s", p->op == KS_SSD_READ ? "read" : "write", p->bytes,
                             strerror(-cqe->res));
                else
                    snprintf(err, len, "short %s: %d of %zu bytes", p->op == KS_SSD_READ ? "read" : "write",
                             cqe->res, p->bytes);
            }
            freed[seen] = (unsigned)io_uring_cqe_get_data64(cqe);
            io_uring_cqe_seen(ring, cqe);
            seen++;
            done++;
            if (!timing && done == p->qd) { // warm-up over: the window opens
                timing = 1;
                opened = 1;
                t0 = now;
            } else if (timing && !stopped && !opened) {
                counted++;
                // at least `seconds` and at least qd completions: every request
                // slot turned over once, or a window shorter than one request's
                // time (4 MiB x QD 64 takes ~0.45 s here) measures its phase
                if (now >= t0 + p->seconds && counted >= p->qd)
                    closes = 1;
            }
        } while (seen < p->qd && io_uring_peek_cqe(ring, &cqe) == 0);
        if (closes) {
            stopped = 1;
            t1 = now;
        }
        inflight -= seen;
        if (stopped || bad)
            continue;
        for (unsigned i = 0; i < seen; i++)
            queue_one(s, ring, p, freed[i]);
        rc = io_uring_submit(ring);
        if (rc < 0) {
            snprintf(err, len, "io_uring_submit: %s", strerror(-rc));
            return KS_EIO;
        }
        inflight += seen;
    }
    if (bad)
        return KS_EIO;
    r->requests = counted;
    r->elapsed = t1 - t0;
    r->t = (double)p->qd * r->elapsed / (double)counted;
    r->bytes_per_s = (double)counted * (double)p->bytes / r->elapsed;
    return KS_OK;
}

int ks_ssd_run(struct ks_ssd *s, const struct ks_ssd_point *p, struct ks_ssd_result *r, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    if (p->bytes == 0 || p->bytes % ALIGN || p->bytes > s->bytes || p->bytes > (1u << 30) || p->qd == 0 ||
        p->qd > KS_SSD_MAX_QD || !(p->seconds > 0)) {
        snprintf(err, len, "bad point: %zu bytes, queue depth %u", p->bytes, p->qd);
        return KS_EINVAL;
    }
    // NOTE: a buffer per request in flight, as fio and a real runtime have: an
    // earlier version that read every request into one buffer ran up to 3x
    // faster than fio (a small buffer's few pages were more often contiguous:
    // scattered_alloc)
    if (scatter(s, p) != 0) {
        snprintf(err, len, "out of memory (%zu bytes of request buffers, twice)", (size_t)p->qd * p->bytes);
        return KS_EIO;
    }
    if (p->op == KS_SSD_WRITE) {
        size_t piece = piece_bytes(p->bytes);
        for (size_t i = 0; i < (size_t)p->qd * (p->bytes / piece); i++)
            fill_random(&s->rng, s->iov[i].iov_base, piece);
    }
    struct io_uring ring;
    int rc = io_uring_queue_init(p->qd, &ring, 0);
    if (rc < 0) {
        snprintf(err, len, "io_uring_queue_init: %s%s", strerror(-rc),
                 rc == -EPERM || rc == -ENOSYS ? " (io_uring is disabled on this system)" : "");
        return KS_EIO;
    }
    int st = run_ring(s, &ring, p, r, err, len);
    io_uring_queue_exit(&ring); // waits for requests still in flight: the pool is reused
    return st;
}

int ks_ssd_close(struct ks_ssd *s, char *err, size_t len)
{
    if (!s)
        return KS_OK;
    int st = KS_OK;
    if (fsync(s->fd) != 0) {
        snprintf(err, len, "syncing %s: %s", s->path, strerror(errno));
        st = KS_EIO;
    }
    close(s->fd);
    if (s->pool)
        munmap(s->pool, s->pool_len);
    free(s->iov);
    if (unlink(s->path) != 0 && st == KS_OK) {
        snprintf(err, len, "removing %s: %s", s->path, strerror(errno));
        st = KS_EIO;
    }
    free(s);
    return st;
}

void ks_ssd_describe_dir(const char *dir, char *buf, size_t len)
{
    struct stat st;
    char fstype[64] = "unknown", source[256] = "unknown";
    if (stat(dir, &st) == 0) {
        FILE *f = fopen("/proc/self/mountinfo", "r");
        char line[4096];
        // fields: id parent major:minor root mountpoint opts [optional...] - fstype source superopts
        while (f && fgets(line, sizeof line, f)) {
            unsigned ma, mi;
            if (sscanf(line, "%*d %*d %u:%u", &ma, &mi) != 2 || makedev(ma, mi) != st.st_dev)
                continue;
            const char *dash = strstr(line, " - ");
            if (dash && sscanf(dash + 3, "%63s %255s", fstype, source) == 2)
                break;
        }
        if (f)
            fclose(f);
    }
    snprintf(buf, len, "%s on %s", fstype, source);
}
