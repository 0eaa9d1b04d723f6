// gpu.c - `calib gpu` of gpu.h: the copy series and their fits, the batched
// calls, the kernel table, and the profile's figures and sources.

#include "gpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpubench.h"
#include "copybench.h"
#include "kernel.h"
#include "profile.h"
#include "status.h"
#include "units.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
enum { ERR_LEN = 4096 };

const size_t ks_gpu_sizes[KS_GPU_N_SIZES] = {4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB};
const int ks_gpu_batch_blocks[KS_GPU_N_BATCH] = {1, 2, 4, 8, 16, KS_GPU_BLOCKS};
const int ks_gpu_item_counts[KS_GPU_N_ITEMS] = {256, 1024, 4096, 16384};
const char *const ks_gpu_series[KS_GPU_N_SERIES] = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"};

int ks_gpu_measure(int repeat, struct ks_gpu_run *r, const struct ks_progress *pr, char *err, size_t len)
{
    char why[ERR_LEN] = ""; // a benchmark's reason
    int st = ks_copy_bench_d2d(256 * MIB, repeat, &r->d2d_bw, why, sizeof why);
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_read(1024 * MIB, repeat, &r->read_bw, why, sizeof why);
    for (int s = 0; s < KS_GPU_N_SERIES && st == KS_KERNEL_OK; s++) {
        double x[KS_GPU_N_SIZES];
        for (size_t i = 0; i < KS_GPU_N_SIZES && st == KS_KERNEL_OK; i++) {
            ks_progress_say(pr, "calib: %s copies of %zu KiB", ks_gpu_series[s], ks_gpu_sizes[i] / KIB);
            x[i] = (double)ks_gpu_sizes[i];
            st = ks_gpu_bench_copy(s % 2 ? KS_GPU_D2H : KS_GPU_H2D, s < 2, ks_gpu_sizes[i], repeat, &r->t[s][i], why,
                                   sizeof why);
        }
        if (st == KS_KERNEL_OK && ks_fit_copy(x, r->t[s], KS_GPU_N_SIZES, &r->fit[s]) != KS_OK) {
            ks_progress_done(pr);
            snprintf(err, len, "%s copy times do not fit latency + size / bandwidth", ks_gpu_series[s]);
            return KS_EINVAL;
        }
    }
    ks_progress_done(pr);
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_blocks(KS_GPU_BLOCK, KS_GPU_BLOCKS, repeat, &r->single_s, &r->gather_s, why, sizeof why);
    for (int d = 0; d < 2 && st == KS_KERNEL_OK; d++) {
        double x[KS_GPU_N_BATCH];
        for (size_t i = 0; i < KS_GPU_N_BATCH && st == KS_KERNEL_OK; i++) {
            ks_progress_say(pr, "calib: %s batched copies of %d x 128 KiB", d ? "d2h" : "h2d", ks_gpu_batch_blocks[i]);
            x[i] = ks_gpu_batch_blocks[i];
            st = ks_gpu_bench_batch(d ? KS_GPU_D2H : KS_GPU_H2D, KS_GPU_BLOCK, ks_gpu_batch_blocks[i], repeat,
                                    &r->batch_t[d][i], why, sizeof why);
        }
        if (st == KS_KERNEL_OK && ks_fit_batch(x, r->batch_t[d], KS_GPU_N_BATCH, (double)KS_GPU_BLOCK,
                                               r->fit[0].bw, &r->batch_fit[d], &r->batch_link_worst[d]) != KS_OK) {
            ks_progress_done(pr);
            snprintf(err, len, "%s batched copy times do not fit overhead + bytes / bandwidth", d ? "d2h" : "h2d");
            return KS_EINVAL;
        }
    }
    ks_progress_done(pr);
    for (int d = 0; d < 2 && st == KS_KERNEL_OK; d++) {
        double x[KS_GPU_N_ITEMS];
        for (size_t i = 0; i < KS_GPU_N_ITEMS && st == KS_KERNEL_OK; i++) {
            ks_progress_say(pr, "calib: %s scattered copies of %d x %d B", d ? "d2h" : "h2d", ks_gpu_item_counts[i],
                            KS_GPU_ITEM);
            x[i] = (double)ks_gpu_item_counts[i] * KS_GPU_ITEM;
            st = ks_gpu_bench_items(d ? KS_GPU_D2H : KS_GPU_H2D, KS_GPU_ITEM, ks_gpu_item_counts[i], repeat,
                                    &r->item_t[d][i], &r->item_kernel_t[d][i], why, sizeof why);
        }
        if (st == KS_KERNEL_OK && (ks_fit_copy(x, r->item_t[d], KS_GPU_N_ITEMS, &r->item_fit[d]) != KS_OK ||
                                   ks_fit_copy(x, r->item_kernel_t[d], KS_GPU_N_ITEMS, &r->item_kernel_fit[d]) != KS_OK)) {
            ks_progress_done(pr);
            snprintf(err, len, "%s scattered item times do not fit overhead + bytes / bandwidth", d ? "d2h" : "h2d");
            return KS_EINVAL;
        }
        if (st == KS_KERNEL_OK)
            r->copy_item[d] = KS_GPU_ITEM / r->item_fit[d].bw;
    }
    const int chain[2] = {KS_GPU_CHAIN_SHORT, KS_GPU_CHAIN_LONG};
    for (int c = 0; c < 2 && st == KS_KERNEL_OK; c++) {
        ks_progress_say(pr, "calib: %d dependent loads from host memory", chain[c]);
        st = ks_gpu_bench_host_chain(chain[c], repeat, &r->chain_t[c], why, sizeof why);
    }
    ks_progress_done(pr);
    if (st == KS_KERNEL_OK) {
        r->host_read_lat = (r->chain_t[1] - r->chain_t[0]) / (KS_GPU_CHAIN_LONG - KS_GPU_CHAIN_SHORT);
        if (!(r->host_read_lat > 0)) {
            snprintf(err, len, "host load chains: %d loads took %.4g s, %d loads %.4g s: no latency per load",
                     KS_GPU_CHAIN_SHORT, r->chain_t[0], KS_GPU_CHAIN_LONG, r->chain_t[1]);
            return KS_EINVAL;
        }
    }
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_bidir(64 * MIB, repeat, &r->bidir_s, why, sizeof why);
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_copy(KS_GPU_H2D, 1, 64 * MIB, repeat, &r->one_dir_s, why, sizeof why);
    if (st != KS_KERNEL_OK) {
        snprintf(err, len, "GPU benchmark: %s %s", ks_kernel_status_str(st), why);
        return st;
    }
    // the kernel table `bench kernels --backend cuda --profile` writes with
    // its defaults, timed by the same code
    uint32_t blocks[KS_BENCH_MAX_BLOCKS];
    ks_bench_kernel_defaults(&r->kshape, blocks, &r->n_kernel);
    r->kshape.cuda = 1;
    ks_progress_say(pr, "calib: sparse decode kernel, batch %u, %zu block counts", r->kshape.batch, r->n_kernel);
    st = ks_bench_kernel_table(&r->kshape, blocks, r->n_kernel, r->kseconds, why, sizeof why);
    ks_progress_done(pr);
    if (st != KS_KERNEL_OK) {
        snprintf(err, len, "kernel benchmark: %s", why);
        return st;
    }
    for (size_t i = 0; i < r->n_kernel; i++)
        r->kblocks[i] = blocks[i];
    return KS_OK;
}

int ks_gpu_write_profile(const struct ks_gpu_run *r, const struct ks_machine *m, const char *dev,
                         const char *base_file, const char *cmdline, const char *out, char *err, size_t len)
{
    char where[1024], v_hbm[32], v_bw[32], v_ov[32], s_hbm[2048], s_bw[2048], s_ov[2048], s_lat[1024];
    ks_calib_profile_text(where, sizeof where, "`%s` on %s (%s, host %s), %s", cmdline, m->host, dev, m->cpu, m->date);
    ks_units_format(r->read_bw, KS_UNIT_BANDWIDTH, v_hbm, sizeof v_hbm);
    ks_units_format(r->fit[0].bw, KS_UNIT_BANDWIDTH, v_bw, sizeof v_bw);
    ks_units_format(r->batch_fit[0].lat, KS_UNIT_TIME, v_ov, sizeof v_ov);
    ks_calib_profile_text(s_hbm, sizeof s_hbm,
             "%s: one kernel reading 1 GiB of device memory once (16-byte loads, grid-stride, 4 blocks of 512 "
             "threads per multiprocessor), timed with events, median; a cudaMemcpy device to device of 256 MiB "
             "moves %.4g GB/s read + written", where, r->d2d_bw / 1e9);
    ks_calib_profile_text(s_bw, sizeof s_bw,
             "%s: pinned host-to-device cudaMemcpyAsync + stream sync, 4 KiB to 64 MiB, fit t = overhead + size "
             "/ bw, worst residual %.1f%%; device-to-host %.4g GB/s (worst %.1f%%); pageable %.4g / %.4g GB/s",
             where, 100 * r->fit[0].worst, r->fit[1].bw / 1e9, 100 * r->fit[1].worst, r->fit[2].bw / 1e9,
             r->fit[3].bw / 1e9);
    const size_t nb = KS_GPU_N_BATCH - 1; // the KS_GPU_BLOCKS point
    ks_calib_profile_text(s_ov, sizeof s_ov,
             "%s: fixed cost of one batched copy call, which the simulator charges once per migration batch: "
             "intercept of one ks_copy_batch_async (cudaMemcpyBatchAsync) + stream sync moving 1 to %d pinned "
             "host blocks of 128 KiB to the device as the runtime moves a batch (two 64 KiB copies per block, "
             "its K and V halves), fit t = overhead + bytes / bw (%.4g GB/s, worst residual %.1f%%; with "
             "pcie_bw instead, worst %.1f%%; pcie_lat is folded in here); device to host %.4g us (%.4g GB/s, "
             "worst %.1f%%). One cudaMemcpyAsync per copy: intercept %.4g us (the pcie_bw fit). 32 x 128 KiB "
             "blocks host to device: %.4g us one copy each, %.4g us one gather kernel, %.4g us one batched call",
             where, KS_GPU_BLOCKS, r->batch_fit[0].bw / 1e9, 100 * r->batch_fit[0].worst,
             100 * r->batch_link_worst[0], 1e6 * r->batch_fit[1].lat, r->batch_fit[1].bw / 1e9,
             100 * r->batch_fit[1].worst, 1e6 * r->fit[0].lat, 1e6 * r->single_s, 1e6 * r->gather_s,
             1e6 * r->batch_t[0][nb]);
    ks_calib_profile_text(s_lat, sizeof s_lat, "%s: 0, its part of a batch's fixed cost is in copy_overhead", where);
    const struct ks_bench_shape *ks = &r->kshape;
    char s_kt[2048];
    ks_calib_profile_text(s_kt, sizeof s_kt,
         "%s: the CUDA sparse decode kernel timed as `kvstrata bench kernels --backend cuda --kernels sparse "
         "--batch %u` times it (kernels/bench/bench.h): one decode layer for the whole batch, fp16 KV, context "
         "%u tokens, median of %u samples, seed %" PRIu64, where, ks->batch, ks->context, ks->repeat, ks->seed);
    const struct ks_calib_list kt_lists[] = {{"blocks", r->kblocks}, {"seconds", r->kseconds}};
    const struct ks_calib_field kt_fields[] = {
        {"batch", NULL, ks->batch},       {"kv_heads", NULL, ks->kv_heads},
        {"q_heads", NULL, ks->q_heads},   {"head_dim", NULL, ks->head_dim},
        {"block_size", NULL, ks->block_size}, {"backend", "cuda", 0}, {"dtype", "fp16", 0},
    };
    const struct ks_calib_table tables[] = {
        {.key = "kernel_time", .lists = kt_lists, .n_lists = N_OF(kt_lists), .n = r->n_kernel,
         .fields = kt_fields, .n_fields = N_OF(kt_fields), .source = s_kt, .kind = "measured"},
    };
    // the scattered items: per-item cost and kernel rate, both directions
    char v_item[2][32], v_gat[2][32], v_hrl[32], s_item[2][1024], s_gat[2][1024], s_hrl[1024];
    const int last = KS_GPU_N_ITEMS - 1;
    for (int d = 0; d < 2; d++) {
        const char *dir = d ? "device-to-host" : "host-to-device";
        ks_units_format(r->copy_item[d], KS_UNIT_TIME, v_item[d], sizeof v_item[d]);
        ks_units_format(r->item_kernel_fit[d].bw, KS_UNIT_BANDWIDTH, v_gat[d], sizeof v_gat[d]);
        ks_calib_profile_text(s_item[d], sizeof s_item[d],
                 "%s: one cudaMemcpyAsync per %d B item %s between scattered places of pinned host memory and the "
                 "device, %d to %d items per call and one stream sync; the slope of the fit t = overhead + bytes / "
                 "bw (intercept %.4g us, worst residual %.1f%%); %d items took %.4g ms",
                 where, KS_GPU_ITEM, dir, ks_gpu_item_counts[0], ks_gpu_item_counts[last], 1e6 * r->item_fit[d].lat,
                 100 * r->item_fit[d].worst, ks_gpu_item_counts[last], 1e3 * r->item_t[d][last]);
        ks_calib_profile_text(s_gat[d], sizeof s_gat[d],
                 "%s: one kernel, a warp per %d B item, 16-byte %s through mapped pinned host memory (%s), %d to %d "
                 "items per launch and one stream sync; the rate of the fit t = overhead + bytes / bw (intercept "
                 "%.4g us, worst residual %.1f%%)",
                 where, KS_GPU_ITEM, d ? "stores" : "loads", dir, ks_gpu_item_counts[0], ks_gpu_item_counts[last],
                 1e6 * r->item_kernel_fit[d].lat, 100 * r->item_kernel_fit[d].worst);
    }
    ks_units_format(r->host_read_lat, KS_UNIT_TIME, v_hrl, sizeof v_hrl);
    ks_calib_profile_text(s_hrl, sizeof s_hrl,
             "%s: one GPU thread following a chain of dependent 8-byte loads through mapped pinned host memory "
             "(scattered over 64 MiB): (%.4g ms for %d loads - %.4g ms for %d) / %d",
             where, 1e3 * r->chain_t[1], KS_GPU_CHAIN_LONG, 1e3 * r->chain_t[0], KS_GPU_CHAIN_SHORT,
             KS_GPU_CHAIN_LONG - KS_GPU_CHAIN_SHORT);
    const struct ks_calib_figure figs[] = {
        {"hbm_bw", v_hbm, s_hbm, "measured"},
        {"pcie_bw", v_bw, s_bw, "measured"},
        {"pcie_lat", "0s", s_lat, "measured"},
        {"copy_overhead", v_ov, s_ov, "measured"},
        {"copy_item_h2d", v_item[0], s_item[0], "measured"},
        {"copy_item_d2h", v_item[1], s_item[1], "measured"},
        {"gather_h2d_bw", v_gat[0], s_gat[0], "measured"},
        {"gather_d2h_bw", v_gat[1], s_gat[1], "measured"},
        {"host_read_lat", v_hrl, s_hrl, "measured"},
    };
    char name[256], part[512], comment[4096];
    ks_calib_profile_name(out, name, sizeof name);
    ks_calib_profile_text(part, sizeof part, "%s on host %s; other figures from %s", dev, m->host, base_file);
    ks_calib_profile_text(comment, sizeof comment,
             "%s.lua - measured GPU profile, written by kvstrata calib gpu.\nCommand: %s\nMachine: %s, %s, %s\n"
             "device-to-device %.4g GB/s (read + written); both directions at once, 64 MiB each: %.4g ms "
             "(one direction alone %.4g ms)",
             name, cmdline, m->host, dev, m->date, r->d2d_bw / 1e9, 1e3 * r->bidir_s, 1e3 * r->one_dir_s);
    struct ks_calib_profile prof = {.base_file = base_file, .name = name, .part = part, .cpu = m->cpu,
                                    .notes = "GPU copy figures and kernel_time measured by kvstrata calib gpu",
                                    .comment = comment, .figs = figs, .n_figs = N_OF(figs), .tables = tables,
                                    .n_tables = N_OF(tables)};
    return ks_calib_profile_write(&prof, out, err, len);
}
