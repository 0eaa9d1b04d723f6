// run_cmd.h - the `kvstrata run` command.
#ifndef KS_RUN_CMD_H
#define KS_RUN_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_run_cmd;

#endif
