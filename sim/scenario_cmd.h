// scenario_cmd.h - `kvstrata scenario check`: load, validate and show a scenario.
#ifndef KS_SCENARIO_CMD_H
#define KS_SCENARIO_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_scenario_check_cmd;

#endif
