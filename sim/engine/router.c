// router.c - the router: releases the workload's requests to the GPUs at
// their arrival times, holds a session's turns until the previous one
// finished, and the closer that ends idle waits at the duration (see
// engine_impl.h).
#include "engine_impl.h"
#include "engine.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <stdlib.h>
#include <string.h>

#define KS_AFFINITY_SLACK 4 // requests: how much busier a prefix's home GPU may be

static struct gpu *least_loaded(struct sim *m)
{
    struct gpu *best = &m->gpu[0];
    for (uint32_t i = 1; i < m->n_gpu; i++)
        if (ks_engine_load(&m->gpu[i]) < ks_engine_load(best))
            best = &m->gpu[i];
    return best;
}

// The GPU a request goes to: in turn; the least loaded (active + queued
// requests); or, for a request with a shared prefix, the GPU its prefix
// group went to first (where the prefix's blocks are, so its prefill is
// skipped) unless that GPU is much busier than the least loaded one.
static struct gpu *route(struct sim *m, const struct ks_request_spec *sp)
{
    switch (m->s->router) {
    case KS_ROUTER_ROUND_ROBIN:
        break;
    case KS_ROUTER_LEAST_LOADED:
        return least_loaded(m);
    case KS_ROUTER_PREFIX_AFFINITY: {
        struct gpu *low = least_loaded(m);
        if (sp->prefix_group == KS_NONE || sp->prefix_group >= 64)
            return low;
        uint32_t *home = &m->prefix_home[sp->prefix_group];
        if (*home == KS_NONE)
            *home = low->index;
        struct gpu *h = &m->gpu[*home];
        // affinity yields to load: a home more than KS_AFFINITY_SLACK requests
        // busier than the least loaded GPU sends the request there instead
        if (ks_engine_load(h) > ks_engine_load(low) + KS_AFFINITY_SLACK)
            return low;
        return h;
    }
    }
    return &m->gpu[m->rr_turn++ % m->n_gpu];
}

// Routes a request and queues it on its GPU (or in the prefill pool).
static int release(struct sim *m, const struct ks_request_spec *spec)
{
    struct gpu *g = route(m, spec);
    int st = m->s->prefill.mode == KS_PREFILL_DISAGGREGATED ? ks_engine_pool_push(m, g, spec) : ks_engine_queue(g, spec, -1);
    if (st != KS_OK)
        return st;
    m->r->arrived++;
    m->in_flight++;
    return KS_OK;
}

static struct session *session_of(struct sim *m, uint64_t id)
{
    if (id >= m->n_sess) {
        size_t n = m->n_sess ? m->n_sess : 256;
        while (n <= id)
            n *= 2;
        struct session *p = realloc(m->sess, n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + m->n_sess, 0, (n - m->n_sess) * sizeof *p);
        m->sess = p;
        m->n_sess = n;
    }
    return &m->sess[id];
}

struct timed_turn {
    struct sim *m;
    struct ks_request_spec spec;
    double at; // seconds
};

// A short-lived actor: releases one turn at its time (if the run lasts that long).
static void turn_actor(int argc, char **argv)
{
    (void)argc;
    struct timed_turn *t = (struct timed_turn *)(uintptr_t)strtoull(argv[1], NULL, 16);
    struct sim *m = t->m;
    double until = t->at < m->s->duration ? t->at : m->s->duration;
    if (until > simgrid_get_clock())
        sg_actor_sleep_until(until);
    if (simgrid_get_clock() < m->s->duration) {
        t->spec.arrival = simgrid_get_clock();
        int st = release(m, &t->spec);
        ks_engine_flush(m);
        if (st != KS_OK)
            ks_engine_fail(m, "queueing a request", st);
    }
    m->waiting--;
    free(t);
    if (m->router_done && m->waiting == 0)
        ks_engine_wake_decoders(m);
}

// Releases a held turn at time `at`; the caller counted it in m->waiting.
static void release_at(struct sim *m, const struct ks_request_spec *spec, double at)
{
    struct timed_turn *t = malloc(sizeof *t);
    if (!t) {
        ks_engine_fail(m, "holding a session's turn", KS_ENOMEM);
        m->waiting--;
        return;
    }
    *t = (struct timed_turn){.m = m, .spec = *spec, .at = at};
    ks_engine_spawn("turn", m->gpu[0].cpu, turn_actor, t, 0); // not a daemon: it ends by the duration and frees t
}

// A session's turn finished at `now`: its next turn, if it waits, comes
// think_time later.
void ks_engine_turn_finished(struct sim *m, const struct ks_request_spec *sp, double now)
{
    struct session *x = session_of(m, sp->session);
    if (!x) {
        ks_engine_fail(m, "tracking a session", KS_ENOMEM);
        return;
    }
    x->finished = 1;
    x->done = now;
    x->turn_done = sp->turn;
    if (x->parked && x->next.turn == sp->turn + 1) {
        x->parked = 0;
        release_at(m, &x->next, now + m->s->workload.sessions.think_time);
    }
}

// A request the workload drew: a later turn of a session waits for its
// previous turn (plus think_time), anything else is routed and queued now.
// KS_OK, or a status after ks_engine_fail.
static int dispatch(struct sim *m, struct ks_request_spec *spec)
{
    if (spec->turn > 0 && spec->prev_id != KS_WORKLOAD_NO_ID) {
        struct session *x = session_of(m, spec->session);
        if (!x) {
            ks_engine_fail(m, "tracking a session", KS_ENOMEM);
            return KS_ENOMEM;
        }
        m->waiting++;
        if (x->finished && x->turn_done + 1 == spec->turn) {
            release_at(m, spec, x->done + m->s->workload.sessions.think_time);
        } else {
            x->next = *spec;
            x->parked = 1;
        }
        return KS_OK;
    }
    int st = release(m, spec);
    if (st != KS_OK)
        ks_engine_fail(m, "queueing a request", st);
    return st;
}

// The router stops drawing (st: 0 the workload has no more requests, < 0 it
// failed, 1 the run's end came first): idle decoders may end.
static void workload_done(struct sim *m, int st)
{
    if (st < 0)
        ks_engine_fail(m, "reading the workload", st);
    m->exhausted = st == 0;
    m->router_done = 1;
    ks_engine_wake_decoders(m);
}

void ks_engine_release_closed(struct sim *m)
{
    const struct ks_scenario *s = m->s;
    while (!m->router_done && m->in_flight < s->workload.arrival.concurrency && m->decoders > 0 &&
           simgrid_get_clock() < s->duration && !ks_engine_stopped()) {
        struct ks_request_spec spec;
        int st = ks_workload_next(m->wl, &spec);
        if (st != 1) {
            workload_done(m, st);
            break;
        }
        m->handed++;
        spec.arrival = simgrid_get_clock();
        if (dispatch(m, &spec) != KS_OK)
            break;
    }
    ks_engine_flush(m);
}

void ks_engine_router(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    const struct ks_scenario *s = m->s;
    if (s->workload.arrival.kind == KS_ARRIVAL_CLOSED) {
        // the first `concurrency` requests now; each later one as a request
        // finishes (decode.c), in the decoder's own step, before its next
        // admission (the runtime does the same)
        ks_engine_release_closed(m);
        return;
    }
    struct ks_request_spec spec;
    int st;
    while ((st = ks_workload_next(m->wl, &spec)) == 1) {
        m->handed++;
        if (spec.arrival > simgrid_get_clock()) {
            ks_engine_flush(m);
            if (spec.arrival >= s->duration)
                break;
            sg_actor_sleep_until(spec.arrival);
        }
        if (simgrid_get_clock() >= s->duration || dispatch(m, &spec) != KS_OK)
            break;
    }
    ks_engine_flush(m);
    workload_done(m, st);
}

void ks_engine_wake_decoders(struct sim *m)
{
    for (uint32_t i = 0; i < m->n_gpu; i++)
        sg_cond_notify_all(m->gpu[i].arrive);
}

// A daemon that ends the waits of idle decoders when the run reaches its
// duration (a session's turn may still be held then).
void ks_engine_closer(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    sg_actor_sleep_until(m->s->duration);
    m->closing = 1;
    ks_engine_wake_decoders(m);
    if (m->follow) { // followers in time waiting for a sampled step to follow stop waiting
        sg_mutex_lock(m->mu);
        sg_cond_notify_all(m->sampled_ended);
        sg_mutex_unlock(m->mu);
    }
}
