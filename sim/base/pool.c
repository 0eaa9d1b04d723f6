// pool.c - worker threads running queued jobs (see pool.h).
//
// One mutex guards the queue and every job's state; workers sleep on `work`
// while the queue is empty, waiters on `done` until their job has run (a
// waiter whose job a worker runs takes the queued ones meanwhile). The
// queue is a singly linked FIFO: a waiter that takes its own job back
// unlinks it from wherever it sits (queues hold a few jobs per GPU at most).
// Workers block every signal: the process's signals (SIGINT, SIGTERM) reach
// the thread that created the pool, whose handlers and masks decide.
#define _POSIX_C_SOURCE 200809L // pthread_sigmask

#include "pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "status.h"

enum { QUEUED = 1, RUNNING, DONE };

struct ks_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct ks_pool_job *head, *tail;
    int stop;
    unsigned n;
    pthread_t *thread;
};

// The first queued job, unlinked; NULL when the queue is empty. Under mu.
static struct ks_pool_job *take_first(struct ks_pool *p)
{
    struct ks_pool_job *j = p->head;
    if (j) {
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        j->state = RUNNING;
    }
    return j;
}

// Runs job j (taken off the queue, RUNNING) outside mu: called and returns under it.
static void run(struct ks_pool *p, struct ks_pool_job *j)
{
    pthread_mutex_unlock(&p->mu);
    j->fn(j->arg);
    pthread_mutex_lock(&p->mu);
    j->state = DONE;
    pthread_cond_broadcast(&p->done);
}

static void *worker(void *arg)
{
    struct ks_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct ks_pool_job *j = take_first(p);
        if (!j) {
            if (p->stop)
                break;
            pthread_cond_wait(&p->work, &p->mu);
            continue;
        }
        run(p, j);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct ks_pool *ks_pool_new(unsigned workers)
{
    struct ks_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (workers && !(p->thread = calloc(workers, sizeof *p->thread))) {
        ks_pool_free(p);
        return NULL;
    }
    sigset_t all, prev; // the workers inherit the creator's mask while they start
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &prev);
    int ok = 1;
    for (; ok && p->n < workers; p->n++)
        if (pthread_create(&p->thread[p->n], NULL, worker, p) != 0)
            ok = 0;
    if (!ok)
        p->n--; // the slot that failed holds no thread
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (!ok) {
        ks_pool_free(p);
        return NULL;
    }
    return p;
}

void ks_pool_free(struct ks_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    KS_ASSERT(!p->head); // every job waited for
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n; i++)
        pthread_join(p->thread[i], NULL);
    free(p->thread);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}

unsigned ks_pool_workers(const struct ks_pool *p)
{
    return p ? p->n : 0;
}

void ks_pool_submit(struct ks_pool *p, struct ks_pool_job *j)
{
    pthread_mutex_lock(&p->mu);
    KS_ASSERT(j->state != QUEUED && j->state != RUNNING);
    j->state = QUEUED;
    j->next = NULL;
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    if (p->n)
        pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void ks_pool_wait(struct ks_pool *p, struct ks_pool_job *j)
{
    pthread_mutex_lock(&p->mu);
    if (j->state == QUEUED) { // not started: run it here
        struct ks_pool_job **at = &p->head, *prev = NULL;
        while (*at != j) {
            prev = *at;
            at = &(*at)->next;
        }
        *at = j->next;
        if (p->tail == j)
            p->tail = prev;
        j->state = RUNNING;
        run(p, j);
        pthread_mutex_unlock(&p->mu);
        return;
    }
    // a worker runs it: run the queued jobs meanwhile, else sleep until one ends
    while (j->state == RUNNING) {
        struct ks_pool_job *other = take_first(p);
        if (other)
            run(p, other);
        else
            pthread_cond_wait(&p->done, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}
