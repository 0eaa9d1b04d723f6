// check.h - `kvstrata calib check`: measures again and sets each model's
// prediction, from a profile's figures alone, against the measurement.
//
// The goals of issue 5: DRAM copies above 64 KiB within 5% (all threads:
// threads * size * moved / dram_bw), SSD reads and writes within 10% at every
// size and queue depth (lat + qd * op + qd * size / bw), the same reads
// replayed in SimGrid (sim/engine/simssd.h) against the same goal, PCIe
// pinned copies above 64 KiB within 5% with a GPU (copy_overhead + pcie_lat
// + size / pcie_bw), and the profile's host_wake at its idle times within an
// informative 25%. Each goal is met or not on the median windows; a missed
// goal is a finding, not a failure. Beside each DRAM and SSD goal, how noisy
// its measurement was (window spreads, measure.h).
#ifndef KS_CHECK_H
#define KS_CHECK_H

#include <stddef.h>

#include "gpu.h"
#include "measure.h"
#include "progress.h"
#include "scenario.h"

#define KS_CHECK_COPY_GOAL 0.05 // copies above KS_CHECK_GOAL_MIN_BYTES: relative error at most
#define KS_CHECK_SSD_GOAL 0.10  // SSD reads and writes, and the simulated reads
#define KS_CHECK_WAKE_GOAL 0.25 // host wake-ups: informative (calib/README.md)
#define KS_CHECK_GOAL_MIN_BYTES ((size_t)64 << 10)

struct ks_check_params {
    const char *dir;  // directory on the drive to check; NULL: no SSD checks
    int quick;        // few points, short windows
    unsigned threads; // threads of the DRAM check, >= 1
    double seconds;   // each timed window (0: KS_MEASURE_*_SECONDS)
};

struct ks_check_goal {
    const char *name;
    double worst, goal; // largest |relative error| over the points above the size floor
    int met;
    int n;              // points that count
    // DRAM and SSD: the measurement's own noise over the points that count,
    // beside the goal (never part of `met`): the widest window spread of a
    // point and how many points' windows lie further apart than the goal
    int has_spread;
    double worst_spread;
    int noisy;
};

struct ks_check_result {
    size_t nt;     // glibc's non-temporal threshold here (0: unknown)
    size_t n_dram;
    struct ks_measure_dram_pt dram[KS_MEASURE_MAX_SIZES];
    struct ks_check_goal dram_goal;
    size_t n_wake; // the profile's host_wake points (0: none, not checked)
    struct ks_measure_wake_pt wake[KS_MEASURE_MAX_WAKE];
    struct ks_check_goal wake_goal;
    char fsdesc[320]; // with dir: its filesystem and device
    size_t n_ssd;     // with dir
    struct ks_measure_ssd_pt rd[KS_MEASURE_MAX_SSD], wr[KS_MEASURE_MAX_SSD];
    struct ks_check_goal ssd_goal, sim_goal, write_goal;
    int gpu;          // 1: a GPU answered and the PCIe copies were checked
    size_t n_pcie;
    size_t pcie_bytes[KS_GPU_N_SIZES];
    double h2d[KS_GPU_N_SIZES], d2h[KS_GPU_N_SIZES], pcie_model[KS_GPU_N_SIZES]; // seconds
    struct ks_check_goal pcie_goal;
    int all_met;      // every goal checked is met
};

// 0 when the profile's host_wake can be checked: at most
// KS_MEASURE_MAX_WAKE points, every idle time at most KS_WAKE_MAX_IDLE.
int ks_check_wake_ok(const struct ks_host_wake *w);

// Measures and compares with pf's figures (ks_scenario_read_profile; its
// host_wake passed ks_check_wake_ok) into *r (the caller's storage, large:
// heap it). KS_OK; KS_MEASURE_EDIR when dir cannot take the benchmark file;
// or another status; the reason in err.
int ks_check_run(const struct ks_check_params *p, const struct ks_scenario_platform *pf, struct ks_check_result *r,
                 const struct ks_progress *pr, char *err, size_t len);

#endif
