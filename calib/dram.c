// dram.c - the DRAM copy benchmark of dram.h, on POSIX threads.
//
// Every job (faulting the regions in, one timed window) runs on threads
// created for it and joined at its end: a window costs a few thread starts
// (tens of microseconds, against windows of 10 ms and more), and no thread
// outlives a call. The threads wait for a start signal until all of them
// exist, so that they copy at the same time; when one cannot be created
// the others are told to leave without working.
#define _POSIX_C_SOURCE 200809L // popen

#include "dram.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "status.h"

#define PAGE 4096

struct worker {
    struct ks_dram *d;
    unsigned char *src, *dst; // region bytes each
    size_t pos;               // offset of the thread's next copy, kept from window to window
    double elapsed;           // seconds, this window
    unsigned long long copies;
};

struct ks_dram {
    unsigned threads;
    size_t max_bytes, pool;
    size_t region;            // bytes per region, max(pool, 2 * max_bytes) rounded up to a page
    struct worker *w;         // threads entries
    pthread_t *tid;
    // the job under way: what each thread runs, and the window's point
    void (*job)(struct worker *);
    struct ks_dram_point pt;
    size_t span;              // bytes of each region this window walks, a multiple of pt.bytes
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;                   // 0: wait; 1: run the job; -1: leave without it
    int sync;                 // mu and cv were initialised
};

static void *thread_main(void *arg)
{
    struct worker *w = arg;
    struct ks_dram *d = w->d;
    pthread_mutex_lock(&d->mu);
    while (d->go == 0)
        pthread_cond_wait(&d->cv, &d->mu);
    int go = d->go;
    pthread_mutex_unlock(&d->mu);
    if (go > 0)
        d->job(w);
    return NULL;
}

// Runs d->job on the first n workers, one thread each. KS_OK, or KS_EIO when
// a thread could not be created (then no worker ran the job).
static int run_threads(struct ks_dram *d, unsigned n)
{
    d->go = 0; // no thread of d exists here: the previous job's were joined
    unsigned started = 0;
    while (started < n && pthread_create(&d->tid[started], NULL, thread_main, &d->w[started]) == 0)
        started++;
    pthread_mutex_lock(&d->mu);
    d->go = started == n ? 1 : -1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(d->tid[i], NULL);
    return started == n ? KS_OK : KS_EIO;
}

// Writes every page of the worker's regions, so that no window pays for a
// page fault; all workers at once, as writing gigabytes on one thread takes
// seconds.
static void fault_in(struct worker *w)
{
    memset(w->src, 0x5a, w->d->region);
    memset(w->dst, 0xa5, w->d->region);
}

static void copy_window(struct worker *w)
{
    const struct ks_dram *d = w->d;
    size_t b = d->pt.bytes, span = d->span;
    // copies stay aligned to their size, as a pool of blocks of that size is
    size_t off = (w->pos + b - 1) / b * b;
    if (off + b > span)
        off = 0;
    double t0 = ks_clock_mono(), deadline = t0 + d->pt.seconds, t = t0;
    unsigned long long n = 0;
    // NOTE: at least two copies, so that one slow first copy is not the point
    while (t < deadline || n < 2) {
        memcpy(w->dst + off, w->src + off, b);
        off += b;
        if (off + b > span)
            off = 0;
        n++;
        t = ks_clock_mono();
    }
    w->pos = off;
    w->elapsed = t - t0;
    w->copies = n;
    // the copies must be observable, or the compiler could drop them
    __asm__ volatile("" : : "r"(w->dst) : "memory");
}

void ks_dram_free(struct ks_dram *d)
{
    if (!d)
        return;
    for (unsigned i = 0; d->w && i < d->threads; i++) {
        free(d->w[i].src);
        free(d->w[i].dst);
    }
    if (d->sync) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
    }
    free(d->w);
    free(d->tid);
    free(d);
}

struct ks_dram *ks_dram_new(const struct ks_dram_params *p)
{
    // the bounds keep max(pool, 2 * max_bytes) + PAGE from overflowing
    if (!p || p->threads == 0 || p->threads > KS_DRAM_MAX_THREADS || p->max_bytes == 0 ||
        p->max_bytes > SIZE_MAX / 4 || p->pool > SIZE_MAX / 2)
        return NULL;
    struct ks_dram *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->threads = p->threads;
    d->max_bytes = p->max_bytes;
    d->pool = p->pool;
    size_t region = p->pool > 2 * p->max_bytes ? p->pool : 2 * p->max_bytes;
    d->region = (region + PAGE - 1) / PAGE * PAGE;
    d->w = calloc(p->threads, sizeof *d->w);
    d->tid = calloc(p->threads, sizeof *d->tid);
    if (!d->w || !d->tid)
        goto fail;
    if (pthread_mutex_init(&d->mu, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&d->cv, NULL) != 0) {
        pthread_mutex_destroy(&d->mu);
        goto fail;
    }
    d->sync = 1;
    for (unsigned i = 0; i < p->threads; i++) {
        d->w[i].d = d;
        d->w[i].src = aligned_alloc(PAGE, d->region);
        d->w[i].dst = aligned_alloc(PAGE, d->region);
        if (!d->w[i].src || !d->w[i].dst)
            goto fail;
    }
    d->job = fault_in;
    if (run_threads(d, p->threads) != KS_OK)
        goto fail;
    return d;
fail:
    ks_dram_free(d);
    return NULL;
}

int ks_dram_run(struct ks_dram *d, const struct ks_dram_point *p, struct ks_dram_result *r)
{
    memset(r, 0, sizeof *r);
    if (!d || !p || p->bytes == 0 || p->bytes > d->max_bytes || p->threads == 0 || p->threads > d->threads ||
        !(p->seconds > 0))
        return KS_EINVAL;
    d->pt = *p;
    d->span = d->pool > 2 * p->bytes ? d->pool : 2 * p->bytes;
    d->span -= d->span % p->bytes;
    for (unsigned i = 0; i < p->threads; i++) {
        d->w[i].elapsed = 0;
        d->w[i].copies = 0;
    }
    d->job = copy_window;
    int st = run_threads(d, p->threads);
    if (st != KS_OK)
        return st;
    double t = 0;
    for (unsigned i = 0; i < p->threads; i++) {
        t += d->w[i].elapsed / (double)d->w[i].copies;
        r->copies += d->w[i].copies;
    }
    r->t = t / p->threads;
    r->bytes_per_s = (double)p->threads * (double)p->bytes / r->t;
    return KS_OK;
}

size_t ks_dram_nt_threshold(void)
{
#if defined(__x86_64__) && defined(__GLIBC__)
    FILE *f = popen("/lib64/ld-linux-x86-64.so.2 --list-tunables 2>/dev/null", "r");
    if (!f)
        return 0;
    char line[512];
    unsigned long long v = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "glibc.cpu.x86_non_temporal_threshold: %llx", &v) == 1)
            break;
    while (fgets(line, sizeof line, f)) // drain: the loader must not die of a broken pipe
        ;
    pclose(f);
    return (size_t)v;
#else
    return 0;
#endif
}

double ks_dram_moved_per_copied(size_t bytes, size_t nt_threshold)
{
    return nt_threshold > 0 && bytes < nt_threshold ? 3.0 : 2.0;
}
