// lockstep.c - the attention ranks of an expert group stepping together
// (parallel.ranks = "lockstep").
//
// With attention split into ranks (parallel.dp_attention) and the experts
// over GPUs (parallel.ep), every MoE layer's all-to-all takes tokens from
// every rank of the expert group and returns them to it: an engine runs the
// ranks' forward passes together (SGLang's DP attention), so the slowest
// rank of a layer sets when the others go on. Here a rank that has requests
// begins an iteration when every such rank of its group has begun it (that
// is, ended the one before), and waits at each MoE layer until each of them
// has reached that layer or begun a later iteration (an iteration of prefill
// alone meets them too, its time spread over its layers: op_prefill_pass,
// decode.c). A rank with no request is out of the group until
// it has one again; it then joins the iteration the others wait to begin, or
// one that began at this very instant (ranks admitted together start
// together), else the next.
//
// Each rank's progress is one integer, iteration << 16 | layers reached
// (0: the iteration began; MoE layer l reached: l + 1), and the group keeps
// the lowest over its ranks in the group (the floor): a rank waits until the
// floor is at least its own position. Waiting is counted as sync_time.
#include "engine_impl.h"

#include <simgrid/engine.h>
#include <stdlib.h>

#include "arch.h"

#define POS(iter, layers) ((uint64_t)(iter) << 16 | (uint64_t)(layers))
#define ITER(pos) ((pos) >> 16)

struct lockstep {
    uint32_t n;        // ranks of the group (their GPUs: first, first + 1, ...)
    struct gpu *first; // the group's first rank
    uint64_t floor;    // lowest position of a rank in the group; UINT64_MAX: none is
    uint64_t top;      // highest iteration a rank has begun
    uint64_t open;     // highest iteration every rank in the group has begun (it runs) ...
    double open_at;    // ... since this simulated time
    sg_mutex_t mu;
    sg_cond_t moved;   // the floor rose
};

int ks_lockstep_setup(struct sim *m)
{
    const struct ks_scenario *s = m->s;
    uint32_t k = s->model.arch.moe_ranks;
    if (s->parallel.ranks != KS_RANKS_LOCKSTEP || s->model.moe.experts == 0 || k < 2 || m->n_gpu < 2)
        return KS_OK;
    m->n_lockstep = (m->n_gpu + k - 1) / k;
    if (!(m->lockstep = calloc(m->n_lockstep, sizeof *m->lockstep)))
        return KS_ENOMEM;
    for (uint32_t i = 0; i < m->n_lockstep; i++) {
        struct lockstep *ls = &m->lockstep[i];
        ls->first = &m->gpu[i * k];
        ls->n = i * k + k <= m->n_gpu ? k : m->n_gpu - i * k;
        ls->floor = UINT64_MAX;
        ls->mu = sg_mutex_init();
        ls->moved = sg_cond_init();
    }
    for (uint32_t i = 0; i < m->n_gpu; i++)
        m->gpu[i].ls = &m->lockstep[i / k];
    return KS_OK;
}

void ks_lockstep_fini(struct sim *m)
{
    for (uint32_t i = 0; i < m->n_lockstep; i++) {
        sg_mutex_destroy(m->lockstep[i].mu);
        sg_cond_destroy(m->lockstep[i].moved);
    }
    free(m->lockstep);
    m->lockstep = NULL;
    m->n_lockstep = 0;
}

// The floor recomputed; the waiters woken when it rose.
static void settle(struct lockstep *ls)
{
    uint64_t floor = UINT64_MAX;
    for (uint32_t i = 0; i < ls->n; i++)
        if (ls->first[i].ls_in && ls->first[i].ls_pos < floor)
            floor = ls->first[i].ls_pos;
    int rose = floor > ls->floor;
    ls->floor = floor;
    if (floor != UINT64_MAX && ITER(floor) > ls->open) {
        ls->open = ITER(floor);
        ls->open_at = simgrid_get_clock();
    }
    if (rose)
        sg_cond_notify_all(ls->moved);
}

// g moves to pos and waits until every rank in the group is there or past.
// Returns the seconds it waited (added to sync_time).
static double reach(struct gpu *g, uint64_t pos)
{
    struct lockstep *ls = g->ls;
    g->ls_pos = pos;
    settle(ls);
    if (ls->floor >= pos)
        return 0;
    double t0 = simgrid_get_clock();
    sg_mutex_lock(ls->mu);
    while (ls->floor < pos)
        sg_cond_wait(ls->moved, ls->mu);
    sg_mutex_unlock(ls->mu);
    double waited = simgrid_get_clock() - t0;
    g->sim->r->sync_time += waited;
    return waited;
}

double ks_lockstep_begin(struct gpu *g)
{
    struct lockstep *ls = g->ls;
    if (!ls)
        return 0;
    uint64_t iter;
    if (g->ls_in) {
        iter = ITER(g->ls_pos) + 1;
    } else { // joining: the iteration the others wait to begin, or that began at this instant; else the next
        int late = ls->floor == UINT64_MAX ||
                   (ITER(ls->floor) >= ls->top && simgrid_get_clock() > ls->open_at);
        iter = ls->top + late;
        g->ls_in = 1;
    }
    if (iter > ls->top)
        ls->top = iter;
    return reach(g, POS(iter, 0));
}

double ks_lockstep_layer(struct gpu *g, uint32_t layer)
{
    if (!g->ls || !g->ls_in || layer < g->sim->s->model.moe.first_dense)
        return 0;
    return reach(g, POS(ITER(g->ls_pos), layer + 1));
}

void ks_lockstep_leave(struct gpu *g)
{
    if (!g->ls || !g->ls_in)
        return;
    g->ls_in = 0;
    settle(g->ls);
}

// In lockstep, g's own tokens and what each other rank of the group decodes
// now (ks_step_decode_tokens: every rank in the iteration has admitted its
// requests when it begins); ranks of the group the run does not hold
// (detail.nodes) count as the others on average, or as g when it is alone.
// Ranks on their own share no iteration: each counts every rank of its
// group with as many tokens as its own.
double ks_lockstep_moe_tokens(const struct gpu *g, double own)
{
    const struct lockstep *ls = g->ls;
    uint32_t k = g->sim->s->model.arch.moe_ranks;
    if (k <= 1 || !ls || ls->n < 2)
        return own * k;
    double others = 0;
    for (uint32_t i = 0; i < ls->n; i++)
        if (&ls->first[i] != g && ls->first[i].d_ok)
            others += ks_step_decode_tokens(&ls->first[i].d);
    return own + others * (k - 1) / (ls->n - 1);
}
