// bench_kernels_cmd.h - `kvstrata bench kernels`: attention kernel times against
// the number of selected blocks, batch and head shape, optionally written as
// a kernel-time table for a profile. The timing itself is kernels/bench
// (bench.h, included here for the commands that time a table through it).
#ifndef KS_BENCH_KERNELS_CMD_H
#define KS_BENCH_KERNELS_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "cli.h"

extern const struct ks_cli_cmd ks_bench_kernels_cmd;

// --backend of the commands that run kernels (bench kernels, trace record):
// the choices, NULL-terminated for KS_CLI_CHOICE, indexed by enum ks_bench_backend_kind.
enum ks_bench_backend_kind { KS_BENCH_AUTO, KS_BENCH_REF, KS_BENCH_CUDA };
extern const char *const ks_bench_backend_names[];

// What `want` runs on: 1 the CUDA kernels (auto: when a GPU answers), 0 the
// C references; -1 after reporting, as cmd, that cuda was asked for and no
// GPU answers (with ks_device_count's reason).
int ks_bench_backend(const struct ks_cli_cmd *cmd, int want);

#endif
