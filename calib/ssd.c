// ssd.c - the O_DIRECT io_uring benchmark of ssd.h (liburing).
#define _GNU_SOURCE // O_DIRECT, mkostemp

#include "ssd.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

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
    char path[4096];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

// Queues one request at a random aligned offset, into (or from) slot `slot`
// of buf (qd slots of p->bytes).
static void queue_one(struct ks_ssd *s, struct io_uring *ring, const struct ks_ssd_point *p, unsigned char *base,
                      unsigned slot)
{
    void *buf = base + (size_t)slot * p->bytes;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    KS_ASSERT(sqe); // the ring has an entry per request in flight
    uint64_t slots = s->bytes / p->bytes;
    uint64_t off = (uint64_t)ks_rng_below(&s->rng, (uint32_t)(slots > UINT32_MAX ? UINT32_MAX : slots)) * p->bytes;
    if (p->op == KS_SSD_READ)
        io_uring_prep_read(sqe, s->fd, buf, (unsigned)p->bytes, off);
    else
        io_uring_prep_write(sqe, s->fd, buf, (unsigned)p->bytes, off);
    io_uring_sqe_set_data64(sqe, slot);
}

static int run_ring(struct ks_ssd *s, struct io_uring *ring, const struct ks_ssd_point *p, unsigned char *buf,
                    struct ks_ssd_result *r, char *err, size_t len)
{
    unsigned freed[KS_SSD_MAX_QD]; // slots whose request completed in this batch
    for (unsigned i = 0; i < p->qd; i++)
        queue_one(s, ring, p, buf, i);
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
        double now = now_s();
        unsigned seen = 0;
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
                t0 = now;
            } else if (timing && !stopped) {
                counted++;
                if (now >= t0 + p->seconds) {
                    stopped = 1;
                    t1 = now;
                }
            }
        } while (seen < p->qd && io_uring_peek_cqe(ring, &cqe) == 0);
        inflight -= seen;
        if (stopped || bad)
            continue;
        for (unsigned i = 0; i < seen; i++)
            queue_one(s, ring, p, buf, freed[i]);
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
    // NOTE: a buffer per request in flight, as fio and a real runtime have: reads
    // that all land in one buffer find it in the CPU cache, which a virtual
    // disk served from the host's page cache turns into a faster "drive"
    unsigned char *buf = aligned_alloc(ALIGN, (size_t)p->qd * p->bytes);
    if (!buf) {
        snprintf(err, len, "out of memory");
        return KS_EIO;
    }
    if (p->op == KS_SSD_WRITE)
        fill_random(&s->rng, buf, (size_t)p->qd * p->bytes);
    struct io_uring ring;
    int rc = io_uring_queue_init(p->qd, &ring, 0);
    if (rc < 0) {
        snprintf(err, len, "io_uring_queue_init: %s%s", strerror(-rc),
                 rc == -EPERM || rc == -ENOSYS ? " (io_uring is disabled on this system)" : "");
        free(buf);
        return KS_EIO;
    }
    int st = run_ring(s, &ring, p, buf, r, err, len);
    io_uring_queue_exit(&ring); // waits for requests still in flight before buf goes
    free(buf);
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
