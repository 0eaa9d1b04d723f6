// trace_record_cmd.h - the `kvstrata trace record` command.
#ifndef KS_TRACE_RECORD_CMD_H
#define KS_TRACE_RECORD_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_trace_record_cmd;

#endif
