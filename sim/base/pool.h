// pool.h - a fixed set of worker threads running jobs in the order queued.
//
// A job is a function and its argument in caller storage. Once queued it
// belongs to the pool until ks_pool_wait returns for it: the caller neither
// touches the job nor the data the job's function uses until then. A job
// that no worker has started when it is waited for runs on the waiting
// thread, and while a worker runs it the waiter runs the jobs still queued,
// so waiting never idles while work is queued (and a pool of 0 workers runs
// every job inside ks_pool_wait). Which thread runs a job is
// the only thing the number of workers changes: a job whose result depends
// only on its own data gives the same result for any count.
#ifndef KS_POOL_H
#define KS_POOL_H

struct ks_pool;

struct ks_pool_job {
    void (*fn)(void *arg);
    void *arg;
    // the pool's, set by ks_pool_submit
    int state;
    struct ks_pool_job *next;
};

// Starts `workers` threads (0: none, jobs run in ks_pool_wait). NULL when a
// thread cannot be started or memory runs out. Free with ks_pool_free (NULL:
// no-op), once every job queued has been waited for.
struct ks_pool *ks_pool_new(unsigned workers);
void ks_pool_free(struct ks_pool *p);

unsigned ks_pool_workers(const struct ks_pool *p);

// Queues job j (fn and arg set by the caller); a worker runs it when free.
void ks_pool_submit(struct ks_pool *p, struct ks_pool_job *j);

// Returns once j has run: at once if it has, after running it here if none
// has started it, else once the worker running it is done (running queued
// jobs here meanwhile). j may then be queued again.
void ks_pool_wait(struct ks_pool *p, struct ks_pool_job *j);

#endif
