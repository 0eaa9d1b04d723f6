// validate_cmd.h - the `kvstrata validate` command.
#ifndef KS_VALIDATE_CMD_H
#define KS_VALIDATE_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_validate_cmd;

#endif
