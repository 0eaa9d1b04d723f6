// validate.h - the runtime (kernels/runtime/runtime.h) and the simulator on
// the same scenario, seed and profile, compared figure by figure.
//
// Both make the same cache-manager calls with the same accesses, so their
// hit rates and migrated blocks must be identical (the exact rows); times
// (ITL mean/P50/P99: the gaps between tokens; stall fraction) are the
// simulator's predictions against what the runtime measured, with relative
// errors and the goals (ITL P50 within 5%, P99 within 10%). The simulator runs twice more, each
// in a child process (SimGrid runs once per process), charging the kernel
// what the runtime's kernel took in this run: once per block read overall,
// once per block read step by step.
#ifndef KS_VALIDATE_H
#define KS_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "runresult.h"
#include "runtime.h"
#include "scenario.h"

#define KS_VALIDATE_GOAL_P50 0.05
#define KS_VALIDATE_GOAL_P99 0.10

enum {
    KS_VALIDATE_ROWS = 18,       // rows of the main comparison
    KS_VALIDATE_IN_RUN_ROWS = 5, // rows of a simulation with the runtime's kernel speed
    KS_VALIDATE_MAX_BLOCKS = 32, // block counts of a measured kernel-time table, at most
};

// One figure, simulator against runtime.
struct ks_validate_row {
    const char *key; // static text
    double sim, real;
    int exact;       // must be identical (same code, same accesses)
    double goal;     // largest |relative error| accepted; 0: reported only
};

// Relative error of the prediction: (sim - runtime) / runtime; 0 when both
// are 0, infinity when only the runtime's is.
double ks_validate_rel(double sim, double real);

// The simulator run again with the runtime's kernel speed (a child process).
struct ks_validate_in_run {
    int ok;                                              // 0: not run, or failed; err says why
    char err[256];
    struct ks_validate_row rows[KS_VALIDATE_IN_RUN_ROWS]; // n_rows of them (0 unless ok)
    size_t n_rows;
};

struct ks_validate_params {
    const char *dir; // folder of the runtime's L3 file (disk-backed; O_DIRECT)
    int gpu;         // 1: the runtime on the GPU (CUDA), 0: on this CPU
    int progress;    // 1: the runtime shows its progress on stderr
};

// What a validation found. sim and real are released by ks_validate_fini;
// x keeps the runtime's counters (its step_kernel array is already freed).
struct ks_validate {
    struct ks_run_result sim, real;
    struct ks_runtime_extra x;
    struct ks_validate_row rows[KS_VALIDATE_ROWS];
    size_t n_rows;
    int same;                           // 1: every exact row is identical
    double per_block;                   // seconds per block read the runtime's kernel took; 0: it read none
    struct ks_validate_in_run in_run;   // the kernel charged per_block
    struct ks_validate_in_run in_steps; // each step charged that step's speed
};

// Runs sc on the runtime first (on a quiet process), then the simulator,
// with its two reruns beside it. KS_OK with *v filled (release with
// ks_validate_fini); otherwise a status with "runtime: reason" or
// "simulator: reason" in err, and nothing left in *v to release. The
// simulator's reruns failing is not a failure: v->in_run and v->in_steps
// say why.
int ks_validate_run(const struct ks_scenario *sc, const struct ks_validate_params *p, struct ks_validate *v,
                    char *err, size_t len);
void ks_validate_fini(struct ks_validate *v);

// Writes DIR/NAME_sim.h5 and DIR/NAME_runtime.h5 (runfile.h: the layout of
// `run`; dir must exist), the simulator's first. KS_OK, or a status with the
// reason in err (the runtime's file not written when the simulator's failed).
int ks_validate_write(const char *dir, const struct ks_scenario *sc, const struct ks_validate *v, char *err,
                      size_t len);

// The kernel-time table `validate --measure-kernels` measures: the block
// counts of sc's table (4..128 without one) that model.max_context holds, at
// sc's head shape and the table's batch (8 without one), 9 samples each.
// The caller times the sparse kernel into seconds[] (the kernels are not
// this library's), then installs the table in the scenario.
struct ks_validate_kernels {
    uint32_t kv_heads, q_heads, head_dim, block_size;
    uint32_t context; // tokens per sequence, a multiple of block_size
    uint32_t batch;   // sequences per call
    uint32_t repeat;  // timed samples per point (median)
    uint64_t seed;
    uint32_t blocks[KS_VALIDATE_MAX_BLOCKS]; // selected blocks per sequence, n of them
    double seconds[KS_VALIDATE_MAX_BLOCKS];  // per call, filled by the caller
    size_t n;
};

// Fills k but seconds. KS_OK, or KS_EINVAL with the reason in err.
int ks_validate_kernels_plan(const struct ks_scenario *sc, struct ks_validate_kernels *k, char *err, size_t len);

// Replaces sc's kernel_time with k's table. KS_OK, or KS_ENOMEM with the
// reason in err.
int ks_validate_kernels_install(struct ks_scenario *sc, const struct ks_validate_kernels *k, char *err, size_t len);

// Is sc's profile this machine's? Writes this machine's CPU model
// (/proc/cpuinfo, machine.h) to host_cpu. 1: the profile names another CPU
// (its `cpu`: calib host and calib gpu write it), so its measured figures
// are likely not this machine's (results/fidelity/2026-12-06_xeon/: 14-52%
// off); 0: the same CPU; -1: the profile names none.
int ks_validate_other_machine(const struct ks_scenario *sc, char *host_cpu, size_t len);

#endif
