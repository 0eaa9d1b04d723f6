// calib_cmd.h - `kvstrata calib host`, `calib check` and `calib gpu`: measure
// this machine, fit the simulator's cost models, write or check a profile.
#ifndef KS_CALIB_CMD_H
#define KS_CALIB_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_calib_host_cmd;
extern const struct ks_cli_cmd ks_calib_check_cmd;
extern const struct ks_cli_cmd ks_calib_gpu_cmd;

#endif
