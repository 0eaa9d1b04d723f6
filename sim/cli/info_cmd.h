// info_cmd.h - the `kvstrata info` command (also in kvstrata-device).
#ifndef KS_INFO_CMD_H
#define KS_INFO_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_info_cmd;

#endif
