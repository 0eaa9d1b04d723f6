// measure.h - the measured points of `calib host` and `calib check`: DRAM
// copies, SSD requests and thread wake-ups, each point the median of its
// timed windows, with the spread of those windows, and the fits over them.
//
// NOTE: each point is the median of KS_MEASURE_WINDOWS timed windows
// (KS_MEASURE_SSD_WINDOWS for the SSD): the virtual disk and memory of a
// shared machine stall now and then, and one stall in one window must not
// become the figure. The SSD gets more and longer windows
// (KS_MEASURE_SSD_SECONDS each) because the development VM's virtual disk
// swings by tens of percent between back-to-back windows of 0.15 s, and by
// 2-3x over minutes (calib/README.md). The DRAM sizes are measured in
// KS_MEASURE_WINDOWS rounds of one window each rather than size after size,
// because the VM's copy speed moves by tens of percent within seconds to
// minutes: in rounds a drift reaches every size, where size after size it
// made one size fast and the next slow. Each point also reports the spread
// of its windows, so that a reader sees how far one figure can be trusted.
//
// Failures return a status with the reason in the caller's err; progress
// goes to the caller's struct ks_progress (may be NULL).
#ifndef KS_MEASURE_H
#define KS_MEASURE_H

#include <stddef.h>

#include "dram.h"
#include "fit.h"
#include "progress.h"
#include "ssd.h"
#include "wake.h"

enum {
    KS_MEASURE_MAX_SIZES = 16, // sizes of one DRAM or SSD sweep
    KS_MEASURE_MAX_QDS = 16,   // queue depths of one SSD sweep
    KS_MEASURE_MAX_SSD = KS_MEASURE_MAX_SIZES * KS_MEASURE_MAX_QDS,
    KS_MEASURE_MAX_WAKE = 64,  // idle times
    KS_MEASURE_MAX_SERIES = 2, // DRAM curves measured in the same rounds
    KS_MEASURE_WINDOWS = 3,    // per DRAM point
    KS_MEASURE_SSD_WINDOWS = 5, // per SSD point
};
#define KS_MEASURE_DRAM_SECONDS 0.15 // a DRAM window
#define KS_MEASURE_SSD_SECONDS 0.3   // an SSD window
#define KS_MEASURE_QUICK_SECONDS 0.01 // either, with --quick

// The status of a calibration (host.h, check.h) whose SSD directory cannot
// take the benchmark file: ks_ssd_open's reason in err, for the caller to
// put after the directory's option.
#define KS_MEASURE_EDIR (-40)

struct ks_measure_dram_pt {
    size_t bytes;
    unsigned threads;
    struct ks_dram_result r; // the median window (by seconds per copy)
    double lo, hi;           // the slowest and fastest window's bytes per second
    double model, err;       // predicted seconds per copy, relative error (set by the caller)
};

struct ks_measure_ssd_pt {
    enum ks_ssd_op op;
    size_t bytes;
    unsigned qd;
    struct ks_ssd_result r;  // the median window (by seconds per request)
    double lo, hi;           // the slowest and fastest window's bytes per second
    double model, err;       // predicted seconds per request, relative error
    double sim, sim_err;     // simulated seconds per request (calib check), relative error
};

struct ks_measure_wake_pt {
    double idle;             // seconds the waiter was idle before its signal
    struct ks_wake_result r; // seconds from the signal to the waiter running
    double model, err;       // the profile's seconds at this idle time, relative error of the median
};

// One DRAM curve: every size copied by `threads` threads at once.
struct ks_measure_series {
    unsigned threads;
    struct ks_measure_dram_pt *out; // one point per size
};

// Measures every series at every size: KS_MEASURE_WINDOWS rounds, each one
// window of `seconds` of every size and series in turn, on one set of
// regions of at least `pool` bytes faulted in before the first (dram.h); a
// point is the median of its windows. n <= KS_MEASURE_MAX_SIZES, n_series
// <= KS_MEASURE_MAX_SERIES. KS_OK, or a status with the reason in err.
int ks_measure_dram(const size_t *sizes, size_t n, const struct ks_measure_series *s, size_t n_series, size_t pool,
                    double seconds, const struct ks_progress *pr, char *err, size_t len);

// The request sizes and queue depths of an SSD sweep (quick: few).
struct ks_measure_grid {
    const size_t *sizes;
    size_t n_sizes;
    const unsigned *qds;
    size_t n_qds;
};

void ks_measure_ssd_grid(int quick, struct ks_measure_grid *g);

// Measures op at every size and queue depth of g, size after size, into
// out[size * n_qds + qd] (n_sizes * n_qds points); KS_MEASURE_SSD_WINDOWS
// windows of `seconds` per point. KS_OK, or a status with the reason in err.
int ks_measure_ssd(struct ks_ssd *s, enum ks_ssd_op op, const struct ks_measure_grid *g, double seconds,
                   struct ks_measure_ssd_pt *out, const struct ks_progress *pr, char *err, size_t len);

// Times the wake-ups after each idle time (wake.h; n <= KS_MEASURE_MAX_WAKE);
// the caller's thread spins between handshake and signal, as a decode thread
// computing. Samples per idle time: as many as a fixed budget of idle spin
// allows, within bounds (measure.c; quick: a smaller budget). KS_OK, or a
// status with the reason in err.
int ks_measure_wake(const double *idle, size_t n, int quick, struct ks_measure_wake_pt *out,
                    const struct ks_progress *pr, char *err, size_t len);

// Fits t = lat + threads * size * moved(size) / bw: bw in bytes the memory
// moves per second (dram.h: a copy moves 3 bytes per byte below glibc's
// non-temporal threshold nt, 2 at or above it). KS_OK or KS_EINVAL.
int ks_measure_fit_dram(const struct ks_measure_dram_pt *p, size_t n, size_t nt, struct ks_fit_copy *f);

// Fits the SSD model of fit.h and sets each point's model and err. KS_OK or KS_EINVAL.
int ks_measure_fit_ssd(struct ks_measure_ssd_pt *p, size_t n, struct ks_fit_ssd *f);

// The point where |err| is largest.
const struct ks_measure_ssd_pt *ks_measure_worst_ssd(const struct ks_measure_ssd_pt *p, size_t n);

// How far a point's windows lie apart: (fastest - slowest) / median, in
// bytes per second. A point whose windows differ by more than a goal cannot
// show that a model meets it.
double ks_measure_dram_spread(const struct ks_measure_dram_pt *p);
double ks_measure_ssd_spread(const struct ks_measure_ssd_pt *p);

// How far a wake-up point's samples lie apart: (P90 - P10) / median.
double ks_measure_wake_spread(const struct ks_measure_wake_pt *p);

#endif
