// host.h - `kvstrata calib host`: measures this host's DRAM copies (one
// thread and all cores), the wake-up of a thread idle on a condition
// variable, and O_DIRECT SSD reads and writes by size and queue depth in a
// directory; fits the models of fit.h; writes a full profile.
//
// The profile is the base profile's figures with their sources, the host
// figures (l2, dram_bw, ssd.*) replaced by measured ones whose source names
// the command, the date, the machine and the fit's worst residual, and
// host_wake with every point's samples and P10-P90 in its source.
#ifndef KS_HOST_H
#define KS_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "fit.h"
#include "machine.h"
#include "measure.h"
#include "progress.h"

struct ks_host_params {
    const char *dir;   // directory on the drive to measure (O_DIRECT)
    int quick;         // few sizes, a 64 MiB file and short windows
    unsigned threads;  // threads of the all-core DRAM curve, >= 1
    uint32_t file_mib; // SSD benchmark file, MiB (0: 1024, 64 with quick)
    double seconds;    // each timed window (0: KS_MEASURE_*_SECONDS)
};

struct ks_host_run {
    unsigned threads;
    size_t n_dram;
    struct ks_measure_dram_pt dram1[KS_MEASURE_MAX_SIZES], dramn[KS_MEASURE_MAX_SIZES]; // one thread, all
    struct ks_fit_copy fit1, fitn; // bw: bytes moved per second
    size_t nt;                     // glibc's non-temporal threshold here (0: unknown)
    size_t n_wake;
    struct ks_measure_wake_pt wake[KS_MEASURE_MAX_WAKE];
    size_t n_ssd;
    struct ks_measure_ssd_pt rd[KS_MEASURE_MAX_SSD], wr[KS_MEASURE_MAX_SSD];
    struct ks_fit_ssd fit_rd, fit_wr;
    char fsdesc[320];              // the filesystem and device of dir
    uint64_t file_bytes;
    double dram_seconds, seconds;  // a DRAM window, an SSD window
};

// Measures and fits everything into *h (the caller's storage, large: heap
// it). KS_OK; KS_MEASURE_EDIR when dir cannot take the benchmark file; or
// another status; the reason in err.
int ks_host_measure(const struct ks_host_params *p, struct ks_host_run *h, const struct ks_progress *pr, char *err,
                    size_t len);

// Writes the profile out (calib/profiles/NAME.lua; profile.h) from base_file
// and h, its sources naming cmdline (the command as typed) and m. KS_OK, or
// ks_calib_profile_write's status with the reason in err.
int ks_host_write_profile(const struct ks_host_params *p, const struct ks_host_run *h, const struct ks_machine *m,
                          const char *base_file, const char *cmdline, const char *out, char *err, size_t len);

#endif
