// sweep_cmd.h - the `kvstrata sweep` command.
#ifndef KS_SWEEP_CMD_H
#define KS_SWEEP_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_sweep_cmd;

#endif
