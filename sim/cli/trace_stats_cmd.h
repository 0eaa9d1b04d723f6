// trace_stats_cmd.h - `kvstrata trace stats`: a trace's access statistics (tracestats.h).
#ifndef KS_TRACE_STATS_CMD_H
#define KS_TRACE_STATS_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_trace_stats_cmd;

#endif
