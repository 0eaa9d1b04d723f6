// prefill.c - the disaggregated prefill pool: workers that prefill requests
// in arrival order and send their KV to the decode node (see engine_impl.h).
#include "engine_impl.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <stdlib.h>

#include "cost.h"

int ks_engine_pool_push(struct sim *m, struct gpu *g, const struct ks_request_spec *spec)
{
    if (m->pool_n == m->pool_cap) {
        size_t cap = m->pool_cap ? 2 * m->pool_cap : 64;
        struct incoming *p = malloc(cap * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        for (size_t i = 0; i < m->pool_n; i++) // unwrap the ring
            p[i] = m->pool[(m->pool_head + i) % m->pool_cap];
        free(m->pool);
        m->pool = p;
        m->pool_head = 0;
        m->pool_cap = cap;
    }
    m->pool[(m->pool_head + m->pool_n++) % m->pool_cap] = (struct incoming){.spec = *spec, .g = g};
    g->incoming++;
    sg_cond_notify_one(m->pool_work);
    return KS_OK;
}

// One GPU of the prefill pool: prefills the oldest waiting request, sends its
// KV to the decode node's host DRAM, and queues it on its decode GPU with
// its first token already produced.
void ks_engine_prefill(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    for (;;) {
        sg_mutex_lock(m->mu);
        while (m->pool_n == 0)
            sg_cond_wait(m->pool_work, m->mu);
        struct incoming in = m->pool[m->pool_head];
        m->pool_head = (m->pool_head + 1) % m->pool_cap;
        m->pool_n--;
        sg_mutex_unlock(m->mu);
        double t = ks_cost_prefill(m->s, in.spec.prompt_tokens, 0) + ks_cost_pass_overhead(m->s);
        sg_actor_sleep_for(t);
        m->r->prefill_time += t;
        // the prompt's KV, and its index keys or page summaries
        double per_token = (double)m->z.token_bytes + ks_arch_scan_bytes(&m->s->model.arch) * m->s->model.layers;
        double bytes = (double)in.spec.prompt_tokens * per_token;
        ks_engine_transfer(m, &in.g->routes[POOL][KS_L2], m->pool_host, in.g->cpu, bytes, 0);
        m->r->kv_sent += (uint64_t)bytes;
        in.g->incoming--;
        if (ks_engine_push(in.g, &in.spec, simgrid_get_clock()) != KS_OK) {
            ks_engine_fail(m, "queueing a request", KS_ENOMEM);
            in.g->failed = 1;
        }
    }
}
