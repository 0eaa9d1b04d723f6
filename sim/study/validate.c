// validate.c - the runtime and the simulator side by side (validate.h).
//
// The runtime runs first, alone; then the simulator, with its two reruns
// (the kernel charged the runtime's speed) forked just before it so that
// they work beside it. A rerun answers its parent with one fixed-size
// message on a pipe; a child that dies without one is reported, not fatal.
#define _POSIX_C_SOURCE 200809L // fork, pipe, waitpid

#include "validate.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "machine.h"
#include "runfile.h"
#include "status.h"

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

double ks_validate_rel(double sim, double real)
{
    if (real == 0)
        return sim == 0 ? 0 : INFINITY;
    return (sim - real) / real;
}

// Puts "what: " before the message in err (the message cut to fit len).
static void prefix(char *err, size_t len, const char *what)
{
    size_t w = strlen(what) + 2, m = strlen(err);
    if (len <= w) {
        snprintf(err, len, "%s", what);
        return;
    }
    if (m > len - 1 - w)
        m = len - 1 - w;
    memmove(err + w, err, m);
    err[w + m] = '\0';
    memcpy(err, what, w - 2);
    memcpy(err + w - 2, ": ", 2);
}

int ks_validate_kernels_plan(const struct ks_scenario *sc, struct ks_validate_kernels *k, char *err, size_t len)
{
    const struct ks_kernel_time *kt = &sc->platform.kernel_time;
    static const uint32_t def[] = {4, 8, 16, 32, 64, 128};
    uint32_t ctx_blocks = sc->model.max_context / sc->cache.block_size;
    size_t n = 0;
    const uint32_t *from = kt->n ? kt->blocks : def;
    size_t from_n = kt->n ? kt->n : sizeof def / sizeof def[0];
    for (size_t i = 0; i < from_n && n < KS_VALIDATE_MAX_BLOCKS; i++)
        if (from[i] >= 1 && from[i] <= ctx_blocks)
            k->blocks[n++] = from[i];
    if (n < 2) {
        snprintf(err, len, "model.max_context holds fewer than two of the table's block counts");
        return KS_EINVAL;
    }
    k->n = n;
    k->kv_heads = sc->model.kv_heads;
    k->q_heads = sc->model.q_heads;
    k->head_dim = sc->model.head_dim;
    k->block_size = sc->cache.block_size;
    k->context = ctx_blocks * sc->cache.block_size;
    k->batch = kt->n ? kt->batch : 8;
    k->repeat = 9;
    k->seed = sc->seed;
    return KS_OK;
}

int ks_validate_kernels_install(struct ks_scenario *sc, const struct ks_validate_kernels *k, char *err, size_t len)
{
    struct ks_kernel_time *kt = &sc->platform.kernel_time;
    size_t n = k->n;
    uint32_t *b = malloc(n * sizeof *b);
    double *t = malloc(n * sizeof *t);
    char *src = malloc(256);
    if (!b || !t || !src) {
        free(b);
        free(t);
        free(src);
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    memcpy(b, k->blocks, n * sizeof *b);
    memcpy(t, k->seconds, n * sizeof *t);
    snprintf(src, 256, "kvstrata validate --measure-kernels: the reference sparse kernel timed just before the run "
                       "(batch %u, median of 9 samples)", k->batch);
    free(kt->blocks);
    free(kt->seconds);
    free(kt->source);
    *kt = (struct ks_kernel_time){.n = (uint32_t)n, .batch = k->batch, .blocks = b, .seconds = t, .source = src};
    return KS_OK;
}

// What the second simulation (below) sends back.
struct in_run {
    int ok;
    double itl_mean, itl_p50, itl_p99, stall_fraction, decode_seconds;
    char err[256];
};

// The simulator once more, charging the attention kernel what the runtime's
// kernel took in this very run: its kernel seconds over the blocks it read,
// per block read (a one-point kernel_time table: c * k per sequence and
// layer), instead of the profile's table. On a machine whose speed drifts
// between the profile's measurement and the run this separates the error of
// the kernel-time figure from the error of the rest of the model (copies,
// overlap, stall, the runtime's other work, the step's structure): the
// simulator's total kernel time then equals the runtime's by construction.
// With `steps` (n of them) it charges each decode step what the runtime's
// kernel took per block read in that same step (validate's third
// comparison): the machine's speed changes within a run too, and this
// separates those changes from the rest of the model. SimGrid runs once per
// process, so this runs in a child process, started before the parent's
// own simulation; *child is its pid and *fd the pipe it answers on.
static int in_run_start(const struct ks_scenario *sc, double per_block, const double *steps, size_t n, pid_t *child,
                        int *fd)
{
    int p[2];
    if (pipe(p) != 0)
        return KS_EIO;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return KS_EIO;
    }
    if (pid > 0) {
        close(p[1]);
        *child = pid;
        *fd = p[0];
        return KS_OK;
    }
    close(p[0]);
    struct in_run r = {0};
    struct ks_scenario *s = (struct ks_scenario *)sc; // the child's own copy of the parent's memory
    struct ks_kernel_time *kt = &s->platform.kernel_time;
    static uint32_t one = 1;
    static double sec;
    static char src[] = "kvstrata validate: the runtime's kernel seconds per block read, this run";
    sec = per_block;
    *kt = (struct ks_kernel_time){.n = 1, .batch = 1, .blocks = &one, .seconds = &sec, .source = src,
                                  .steps = steps, .n_steps = (uint32_t)n};
    struct ks_run_result res;
    if (ks_engine_run(s, 1, &res, r.err, sizeof r.err) == KS_OK) { // one thread: the parent runs beside it
        r.ok = 1;
        r.itl_mean = ks_hist_mean(res.itl);
        r.itl_p50 = ks_hist_quantile(res.itl, 0.5);
        r.itl_p99 = ks_hist_quantile(res.itl, 0.99);
        r.stall_fraction = ratio(res.stall, res.stall + res.busy);
        r.decode_seconds = res.sim_time;
    }
    ssize_t w = write(p[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
}

// The rows of a second or third simulation against the runtime's run (none
// when it did not run).
static void in_run_rows(const struct in_run *r, const struct ks_run_result *real, struct ks_validate_in_run *out)
{
    const struct ks_validate_row rows[KS_VALIDATE_IN_RUN_ROWS] = {
        {"itl_mean", r->itl_mean, ks_hist_mean(real->itl), 0, 0},
        {"itl_p50", r->itl_p50, ks_hist_quantile(real->itl, 0.5), 0, KS_VALIDATE_GOAL_P50},
        {"itl_p99", r->itl_p99, ks_hist_quantile(real->itl, 0.99), 0, KS_VALIDATE_GOAL_P99},
        {"stall_fraction", r->stall_fraction, ratio(real->stall, real->stall + real->busy), 0, 0},
        {"decode_seconds", r->decode_seconds, real->sim_time, 0, 0},
    };
    memcpy(out->rows, rows, sizeof rows);
    out->n_rows = r->ok ? KS_VALIDATE_IN_RUN_ROWS : 0;
    out->ok = r->ok;
    memcpy(out->err, r->err, sizeof out->err);
}

// The child's answer; KS_OK with *r filled, else a status with r->err set.
static int in_run_finish(pid_t child, int fd, struct in_run *r)
{
    memset(r, 0, sizeof *r);
    ssize_t got = 0, n;
    while (got < (ssize_t)sizeof *r && (n = read(fd, (char *)r + got, sizeof *r - (size_t)got)) > 0)
        got += n;
    close(fd);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof *r) {
        snprintf(r->err, sizeof r->err, "the second simulation ended without an answer (exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        r->ok = 0;
    }
    return r->ok ? KS_OK : KS_EIO;
}

// The main comparison's rows, and whether the exact ones are identical.
static void compare(struct ks_validate *v)
{
    const struct ks_run_result *sim = &v->sim, *real = &v->real;
    const struct ks_cache_stats *a = &sim->cache, *b = &real->cache;
    double acc_a = (double)a->accesses, acc_b = (double)b->accesses;
    const struct ks_validate_row rows[KS_VALIDATE_ROWS] = {
        {"accesses", acc_a, acc_b, 1, 0},
        {"hit_rate_l1", ratio((double)a->found[KS_L1], acc_a), ratio((double)b->found[KS_L1], acc_b), 1, 0},
        {"hit_rate_l2", ratio((double)a->found[KS_L2], acc_a), ratio((double)b->found[KS_L2], acc_b), 1, 0},
        {"hit_rate_l3", ratio((double)a->found[KS_L3], acc_a), ratio((double)b->found[KS_L3], acc_b), 1, 0},
        {"migrated_bytes_l1_l2", (double)a->mig_bytes[KS_L1][KS_L2], (double)b->mig_bytes[KS_L1][KS_L2], 1, 0},
        {"migrated_bytes_l2_l1", (double)a->mig_bytes[KS_L2][KS_L1], (double)b->mig_bytes[KS_L2][KS_L1], 1, 0},
        {"migrated_bytes_l2_l3", (double)a->mig_bytes[KS_L2][KS_L3], (double)b->mig_bytes[KS_L2][KS_L3], 1, 0},
        {"migrated_bytes_l3_l1", (double)a->mig_bytes[KS_L3][KS_L1], (double)b->mig_bytes[KS_L3][KS_L1], 1, 0},
        {"steps", (double)sim->steps, (double)real->steps, 1, 0},
        {"table_rebuilds", (double)sim->table_rebuilds, (double)real->table_rebuilds, 1, 0},
        {"outside_reads", (double)sim->outside_reads, (double)real->outside_reads, 1, 0},
        {"tokens", (double)sim->tokens, (double)real->tokens, 1, 0},
        {"itl_mean", ks_hist_mean(sim->itl), ks_hist_mean(real->itl), 0, 0},
        {"itl_p50", ks_hist_quantile(sim->itl, 0.5), ks_hist_quantile(real->itl, 0.5), 0, KS_VALIDATE_GOAL_P50},
        {"itl_p99", ks_hist_quantile(sim->itl, 0.99), ks_hist_quantile(real->itl, 0.99), 0,
         KS_VALIDATE_GOAL_P99},
        {"stall_fraction", ratio(sim->stall, sim->stall + sim->busy), ratio(real->stall, real->stall + real->busy), 0,
         0},
        {"copy_bandwidth", ratio((double)sim->copy_bytes, sim->copy_seconds),
         ratio((double)real->copy_bytes, real->copy_seconds), 0, 0},
        {"decode_seconds", sim->sim_time, real->sim_time, 0, 0},
    };
    memcpy(v->rows, rows, sizeof rows);
    v->n_rows = KS_VALIDATE_ROWS;
    v->same = 1;
    for (size_t i = 0; i < v->n_rows; i++)
        if (v->rows[i].exact && v->rows[i].sim != v->rows[i].real)
            v->same = 0;
}

int ks_validate_run(const struct ks_scenario *sc, const struct ks_validate_params *p, struct ks_validate *v,
                    char *err, size_t len)
{
    memset(v, 0, sizeof *v);
    // the runtime first, on a quiet process; then the simulator
    struct ks_runtime_params rp = {.dir = p->dir, .progress = p->progress, .gpu = p->gpu};
    int st = ks_runtime_run(sc, &rp, &v->real, &v->x, err, len);
    if (st != KS_OK) {
        ks_runtime_extra_fini(&v->x);
        prefix(err, len, "runtime");
        return st;
    }
    // the second and third simulations (in_run_start) work beside the first
    const struct ks_runtime_extra *x = &v->x;
    pid_t child = -1, child_steps = -1;
    int fd = -1, fd_steps = -1;
    double per_block = x->reads ? x->kernel_seconds / (double)x->reads : 0;
    if (per_block > 0 && in_run_start(sc, per_block, NULL, 0, &child, &fd) != KS_OK)
        child = -1;
    if (per_block > 0 &&
        in_run_start(sc, per_block, x->step_kernel, x->n_step_kernel, &child_steps, &fd_steps) != KS_OK)
        child_steps = -1;
    st = ks_engine_run(sc, 1, &v->sim, err, len); // one thread: the runtime may be running beside it
    struct in_run ir = {.ok = 0, .err = "the runtime read no block"}, is = ir;
    if (child > 0)
        in_run_finish(child, fd, &ir);
    else if (per_block > 0)
        snprintf(ir.err, sizeof ir.err, "cannot start a second process");
    if (child_steps > 0)
        in_run_finish(child_steps, fd_steps, &is);
    else if (per_block > 0)
        snprintf(is.err, sizeof is.err, "cannot start a third process");
    ks_runtime_extra_fini(&v->x);
    if (st != KS_OK) {
        ks_run_result_fini(&v->real);
        ks_run_result_fini(&v->sim);
        prefix(err, len, "simulator");
        return st;
    }
    v->per_block = per_block;
    compare(v);
    in_run_rows(&ir, &v->real, &v->in_run);
    in_run_rows(&is, &v->real, &v->in_steps);
    return KS_OK;
}

void ks_validate_fini(struct ks_validate *v)
{
    ks_run_result_fini(&v->real);
    ks_run_result_fini(&v->sim);
    ks_runtime_extra_fini(&v->x);
}

int ks_validate_write(const char *dir, const struct ks_scenario *sc, const struct ks_validate *v, char *err,
                      size_t len)
{
    char path[4096];
    const struct ks_run_result *rs[2] = {&v->sim, &v->real};
    const char *tag[2] = {"sim", "runtime"};
    for (int i = 0; i < 2; i++) {
        struct ks_run_summary s = {.fig = json_object(), .notes = json_object()};
        snprintf(path, sizeof path, "%s/%s_%s.h5", dir, sc->name, tag[i]);
        if (s.fig && s.notes)
            ks_run_summarise(&s, sc, rs[i]);
        int made = s.fig && s.notes && !s.err;
        if (!made && len > 0)
            err[0] = '\0';
        int st = made ? ks_run_write(path, &s, sc, rs[i], err, len) : KS_ENOMEM;
        json_decref(s.fig);
        json_decref(s.notes);
        if (st != KS_OK && len > 0 && !err[0])
            snprintf(err, len, "cannot write the results");
        if (st != KS_OK)
            return st;
    }
    return KS_OK;
}

int ks_validate_other_machine(const struct ks_scenario *sc, char *host_cpu, size_t len)
{
    struct ks_machine m;
    ks_machine_init(&m);
    snprintf(host_cpu, len, "%s", m.cpu);
    if (!sc->platform.profile_cpu)
        return -1;
    return strcmp(sc->platform.profile_cpu, m.cpu) != 0;
}
