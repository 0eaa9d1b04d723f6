// bench_kernels_print.h - the report of `kvstrata bench kernels` on stdout:
// a table (text) or one JSON object (json), the sweep's settings, machine and
// copy yardstick first, then one row or object per point; profile names the
// kernel_time file written, or is NULL.
#ifndef KS_BENCH_KERNELS_PRINT_H
#define KS_BENCH_KERNELS_PRINT_H

#include <stddef.h>

#include "bench.h"

// 0, or -1 when stdout cannot be written (or, json, an object not built).
int ks_bench_kernels_print_text(const struct ks_bench_params *o, const struct ks_bench_machine *m,
                                const struct ks_bench_result *res, size_t n, const struct ks_bench_copy *c,
                                const char *profile);
int ks_bench_kernels_print_json(const struct ks_bench_params *o, const struct ks_bench_machine *m,
                                const struct ks_bench_result *res, size_t n, const struct ks_bench_copy *c,
                                const char *profile);

#endif
