// trace_model_cmd.h - the `kvstrata trace model` command.
#ifndef KS_TRACE_MODEL_CMD_H
#define KS_TRACE_MODEL_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_trace_model_cmd;

#endif
