// calib_cmd.h - `kvstrata calib host`, `calib check` and `calib gpu`: measure
// this machine, fit the simulator's cost models, write or check a profile.
//
// One file per command (calib_host_cmd.c, calib_check_cmd.c,
// calib_gpu_cmd.c) parses its options, runs the calibration of calib/
// (host.h, check.h, gpu.h) and prints (calib_print.h); calib_cmd.c holds
// what the three share: the progress line and the checks of -o, --dir and
// --base.
#ifndef KS_CALIB_CMD_H
#define KS_CALIB_CMD_H

#include "cli.h"
#include "progress.h"

extern const struct ks_cli_cmd ks_calib_host_cmd;
extern const struct ks_cli_cmd ks_calib_check_cmd;
extern const struct ks_cli_cmd ks_calib_gpu_cmd;

#define KS_CALIB_DEFAULT_BASE "h200_sxm_pcie5" // --base: the profile whose other figures are kept

// A calibration's progress: one line rewritten in place on stderr when it
// is a terminal, nothing otherwise.
struct ks_progress ks_calib_cmd_progress(void);

// -o FILE.lua names a new profile in a writable directory: 0, or the exit
// status after saying why (a usage error for a bad name).
int ks_calib_cmd_out(const struct ks_cli_cmd *cmd, const char *out);

// --dir DIR is a directory this process can create a file in: checked before
// any measurement, so a mistyped path fails at once. 0, or the exit status
// after saying why.
int ks_calib_cmd_dir(const struct ks_cli_cmd *cmd, const char *dir);

// The --base profile's file, checked as a profile: a heap path (the caller
// frees it), or NULL with the exit status in *status after saying why.
char *ks_calib_cmd_base(const struct ks_cli_cmd *cmd, const char *base, int *status);

// Reports a calibration's failure st (calib/host.h, check.h): "--dir REASON"
// for KS_MEASURE_EDIR, else the reason. The exit status.
int ks_calib_cmd_fail(const struct ks_cli_cmd *cmd, int st, const char *err);

#endif
