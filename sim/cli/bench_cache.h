// bench_cache.h - `kvstrata bench cache`: the cache manager's speed and memory.
#ifndef KS_BENCH_CACHE_H
#define KS_BENCH_CACHE_H

#include "cli.h"

extern const struct ks_cli_cmd ks_bench_cache_cmd;

#endif
