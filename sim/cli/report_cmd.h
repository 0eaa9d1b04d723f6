// report_cmd.h - the `kvstrata report` command.
#ifndef KS_REPORT_CMD_H
#define KS_REPORT_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_report_cmd;

#endif
