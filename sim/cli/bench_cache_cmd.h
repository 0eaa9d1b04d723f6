// bench_cache_cmd.h - `kvstrata bench cache`: the cache manager's speed and memory.
#ifndef KS_BENCH_CACHE_CMD_H
#define KS_BENCH_CACHE_CMD_H

#include "cli.h"

extern const struct ks_cli_cmd ks_bench_cache_cmd;

#endif
