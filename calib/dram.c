// dram.c - the DRAM copy benchmark of dram.h, on POSIX threads.
#define _POSIX_C_SOURCE 200809L // clock_gettime, pthread_barrier, popen

#include "dram.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "status.h"

struct worker {
    const struct ks_dram_params *p;
    pthread_barrier_t *go;
    unsigned char *src, *dst;
    size_t region;
    double elapsed;
    unsigned long long copies;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    size_t b = w->p->bytes, slots = w->region / b, k = 0;
    memset(w->src, 0x5a, w->region); // fault every page in before the clock
    memset(w->dst, 0xa5, w->region);
    pthread_barrier_wait(w->go);
    double t0 = now_s(), deadline = t0 + w->p->seconds, t = t0;
    unsigned long long n = 0;
    // NOTE: at least two copies, so that one slow first copy is not the point
    while (t < deadline || n < 2) {
        memcpy(w->dst + k * b, w->src + k * b, b);
        k = k + 1 < slots ? k + 1 : 0;
        n++;
        t = now_s();
    }
    w->elapsed = t - t0;
    w->copies = n;
    // the copies must be observable, or the compiler could drop them
    __asm__ volatile("" : : "r"(w->dst) : "memory");
    return NULL;
}

int ks_dram_bench(const struct ks_dram_params *p, struct ks_dram_result *r)
{
    memset(r, 0, sizeof *r);
    if (p->bytes == 0 || p->threads == 0 || p->threads > 1024 || !(p->seconds > 0))
        return KS_EINVAL;
    size_t region = p->pool > 2 * p->bytes ? p->pool : 2 * p->bytes;
    region -= region % p->bytes;
    struct worker *w = calloc(p->threads, sizeof *w);
    pthread_t *tid = calloc(p->threads, sizeof *tid);
    pthread_barrier_t go;
    int st = w && tid ? KS_OK : KS_ENOMEM;
    unsigned started = 0;
    if (st == KS_OK && pthread_barrier_init(&go, NULL, p->threads) != 0)
        st = KS_ENOMEM;
    int have_barrier = st == KS_OK;
    for (unsigned i = 0; st == KS_OK && i < p->threads; i++) {
        w[i] = (struct worker){.p = p, .go = &go, .region = region};
        w[i].src = aligned_alloc(4096, region);
        w[i].dst = aligned_alloc(4096, region);
        if (!w[i].src || !w[i].dst)
            st = KS_ENOMEM;
    }
    for (unsigned i = 0; st == KS_OK && i < p->threads; i++) {
        if (pthread_create(&tid[i], NULL, work, &w[i]) != 0) {
            st = KS_EIO;
            break;
        }
        started++;
    }
    if (st != KS_OK && started) {
        // the barrier waits for every thread: the ones started cannot pass it
        // NOTE: never reached in practice; abort rather than hang
        KS_ASSERT(!"a copy thread could not start");
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (st == KS_OK) {
        double t = 0;
        for (unsigned i = 0; i < p->threads; i++) {
            t += w[i].elapsed / (double)w[i].copies;
            r->copies += w[i].copies;
        }
        r->t = t / p->threads;
        r->bytes_per_s = (double)p->threads * (double)p->bytes / r->t;
    }
    if (have_barrier)
        pthread_barrier_destroy(&go);
    for (unsigned i = 0; w && i < p->threads; i++) {
        free(w[i].src);
        free(w[i].dst);
    }
    free(w);
    free(tid);
    return st;
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
