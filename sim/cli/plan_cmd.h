// plan_cmd.h - the `kvstrata plan` command (SLO search).
#ifndef KS_PLAN_CMD_H
#define KS_PLAN_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_plan_cmd;

#endif
