// wake.c - the wake-up benchmark of wake.h, on POSIX threads.
//
// Two threads share one mutex and one condition variable. `asleep` (atomic)
// carries the waiter's announcements to the spinning caller without the
// mutex, so that the caller's polling never makes the waiter wait for the
// mutex on its way into pthread_cond_wait; everything else (the round
// signalled, the stored time, the samples) is written under the mutex.
#define _POSIX_C_SOURCE 200809L // sched_yield

#include "wake.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "status.h"

struct bench {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned samples;
    atomic_uint asleep; // the round the waiter waits for (1-based); 0: none yet
    unsigned signalled; // under mu: the last round signalled
    double t_signal;    // under mu: when it was signalled, seconds
    double *lat;        // under mu: samples entries, seconds
};

static void *waiter(void *arg)
{
    struct bench *b = arg;
    pthread_mutex_lock(&b->mu);
    for (unsigned k = 1; k <= b->samples; k++) {
        // announced under mu: the caller's next lock of mu finds us inside the wait
        atomic_store_explicit(&b->asleep, k, memory_order_release);
        while (b->signalled < k)
            pthread_cond_wait(&b->cv, &b->mu);
        double t = ks_clock_mono();
        b->lat[k - 1] = t - b->t_signal;
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

static void spin(double seconds)
{
    double t0 = ks_clock_mono();
    while (ks_clock_mono() - t0 < seconds)
        ;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The q-quantile of n sorted values, interpolated between neighbours.
static double quantile(const double *v, unsigned n, double q)
{
    double h = q * (double)(n - 1);
    unsigned lo = (unsigned)floor(h);
    if (lo + 1 >= n)
        return v[n - 1];
    // clamped: rounding must not carry it past the next value
    return fmin(v[lo + 1], v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]));
}

int ks_wake_run(const struct ks_wake_params *p, struct ks_wake_result *r)
{
    memset(r, 0, sizeof *r);
    if (!p || !(p->idle > 0) || !(p->idle <= KS_WAKE_MAX_IDLE) || p->samples == 0 ||
        p->samples > KS_WAKE_MAX_SAMPLES)
        return KS_EINVAL;
    struct bench b = {.samples = p->samples};
    atomic_init(&b.asleep, 0);
    b.lat = malloc(p->samples * sizeof *b.lat);
    if (!b.lat)
        return KS_ENOMEM;
    int st = KS_EIO;
    if (pthread_mutex_init(&b.mu, NULL) != 0)
        goto out;
    if (pthread_cond_init(&b.cv, NULL) != 0)
        goto out_mu;
    pthread_t tid;
    if (pthread_create(&tid, NULL, waiter, &b) != 0)
        goto out_cv;
    for (unsigned k = 1; k <= p->samples; k++) {
        // NOTE: the yield lets the waiter run where it shares our CPU (one
        // vCPU, or a loaded machine); it is not in the timed part
        while (atomic_load_explicit(&b.asleep, memory_order_acquire) != k)
            sched_yield();
        pthread_mutex_lock(&b.mu);
        pthread_mutex_unlock(&b.mu);
        spin(p->idle);
        pthread_mutex_lock(&b.mu);
        b.t_signal = ks_clock_mono();
        b.signalled = k;
        pthread_cond_broadcast(&b.cv);
        pthread_mutex_unlock(&b.mu);
    }
    pthread_join(tid, NULL);
    qsort(b.lat, p->samples, sizeof *b.lat, cmp_double);
    r->samples = p->samples;
    r->min = b.lat[0];
    r->max = b.lat[p->samples - 1];
    r->p10 = quantile(b.lat, p->samples, 0.1);
    r->median = quantile(b.lat, p->samples, 0.5);
    r->p90 = quantile(b.lat, p->samples, 0.9);
    st = KS_OK;
out_cv:
    pthread_cond_destroy(&b.cv);
out_mu:
    pthread_mutex_destroy(&b.mu);
out:
    free(b.lat);
    return st;
}
