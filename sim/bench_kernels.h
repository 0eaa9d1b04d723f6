// bench_kernels.h - `kvstrata bench kernels`: attention kernel times against
// the number of selected blocks, batch and head shape, optionally written as
// a kernel-time table for a profile.
#ifndef KS_BENCH_KERNELS_H
#define KS_BENCH_KERNELS_H

#include "cli.h"

extern const struct ks_cli_cmd ks_bench_kernels_cmd;

#endif
