// test_pool.c - the worker pool (sim/base/pool.h): every job runs once,
// whether a worker or the waiter runs it; a pool of no workers runs jobs in
// ks_pool_wait; a waiter whose job a worker runs runs the queued jobs
// meanwhile; a job's data is the waiter's again once it returns (TSan
// checks that in the tsan pass, label tsan).
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pool.h"

enum { JOBS = 64, ROUNDS = 50 };

struct work {
    struct ks_pool_job job;
    uint64_t seed, out;
    int runs;
};

// Enough arithmetic that a worker is often still at it when it is waited for.
static void churn(void *arg)
{
    struct work *w = arg;
    uint64_t x = w->seed;
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    w->out = x;
    w->runs++;
}

static uint64_t expected(uint64_t seed)
{
    struct work w = {.seed = seed};
    churn(&w);
    return w.out;
}

static void run_rounds(unsigned workers)
{
    struct ks_pool *p = ks_pool_new(workers);
    assert_non_null(p);
    assert_int_equal(ks_pool_workers(p), workers);
    static struct work w[JOBS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < JOBS; i++) {
            w[i] = (struct work){.job = {.fn = churn, .arg = &w[i]}, .seed = (uint64_t)r * JOBS + (uint64_t)i};
            ks_pool_submit(p, &w[i].job);
        }
        // waited for out of order: some run here, some are running, some are done
        for (int i = JOBS - 1; i >= 0; i -= 2)
            ks_pool_wait(p, &w[i].job);
        for (int i = 0; i < JOBS; i += 2)
            ks_pool_wait(p, &w[i].job);
        for (int i = 0; i < JOBS; i++) {
            assert_int_equal(w[i].runs, 1);
            assert_true(w[i].out == expected(w[i].seed));
        }
    }
    ks_pool_free(p);
}

static void no_workers_runs_in_wait(void **state)
{
    (void)state;
    struct ks_pool *p = ks_pool_new(0);
    assert_non_null(p);
    struct work w = {.job = {.fn = churn, .arg = &w}, .seed = 7};
    ks_pool_submit(p, &w.job);
    assert_int_equal(w.runs, 0); // nobody runs it before the wait
    ks_pool_wait(p, &w.job);
    assert_int_equal(w.runs, 1);
    ks_pool_wait(p, &w.job); // done: returns at once
    assert_int_equal(w.runs, 1);
    ks_pool_submit(p, &w.job); // and may be queued again
    ks_pool_wait(p, &w.job);
    assert_int_equal(w.runs, 2);
    ks_pool_free(p);
}

// A job that starts, then waits until `go` is posted; `started` tells its
// start. Its partner posts `go` and notes the thread it ran on.
struct gate {
    struct ks_pool_job job;
    sem_t *started, *go;
    pthread_t ran_on;
    int runs;
};

static void held(void *arg)
{
    struct gate *g = arg;
    sem_post(g->started);
    sem_wait(g->go);
    g->runs++;
}

static void opener(void *arg)
{
    struct gate *g = arg;
    g->ran_on = pthread_self();
    sem_post(g->go);
    g->runs++;
}

// The only worker runs a job that waits for one queued behind it: only the
// waiter, running the queued one, lets it end (without that the test hangs
// until ctest's timeout).
static void waiter_runs_queued(void **state)
{
    (void)state;
    sem_t started, go;
    assert_int_equal(sem_init(&started, 0, 0), 0);
    assert_int_equal(sem_init(&go, 0, 0), 0);
    struct ks_pool *p = ks_pool_new(1);
    assert_non_null(p);
    struct gate a = {.job = {.fn = held, .arg = &a}, .started = &started, .go = &go};
    struct gate b = {.job = {.fn = opener, .arg = &b}, .started = &started, .go = &go};
    ks_pool_submit(p, &a.job);
    sem_wait(&started); // the worker runs a
    ks_pool_submit(p, &b.job);
    ks_pool_wait(p, &a.job);
    assert_int_equal(a.runs, 1);
    assert_int_equal(b.runs, 1);
    assert_true(pthread_equal(b.ran_on, pthread_self()));
    ks_pool_wait(p, &b.job); // done: returns at once
    assert_int_equal(b.runs, 1);
    ks_pool_free(p);
    sem_destroy(&started);
    sem_destroy(&go);
}

static void one_worker(void **state)
{
    (void)state;
    run_rounds(1);
}

static void three_workers(void **state)
{
    (void)state;
    run_rounds(3);
}

static void free_null(void **state)
{
    (void)state;
    ks_pool_free(NULL);
    assert_int_equal(ks_pool_workers(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_workers_runs_in_wait),
        cmocka_unit_test(waiter_runs_queued),
        cmocka_unit_test(one_worker),
        cmocka_unit_test(three_workers),
        cmocka_unit_test(free_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
