// calib_gpu_cmd.c - `kvstrata calib gpu`: parses the options, runs the GPU
// calibration (calib/gpu.h) and writes its profile, prints the figures (a
// table, or one JSON object).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "calib_cmd.h"
#include "calib_print.h"
#include "cmdline.h"
#include "copybench.h"
#include "device.h"
#include "gpu.h"
#include "json.h"
#include "machine.h"
#include "status.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
enum { ERR_LEN = 4096 };

// The report on stdout; the JSON keys name the figures. 0 or -1.
static int report(const struct ks_gpu_run *r, const struct ks_machine *m, const char *dev, const char *out, int json)
{
    json_t *o = json_object();
    int e = !o;
    e |= ks_json_set_str(o, "profile", out);
    e |= ks_json_set_str(o, "device", dev);
    e |= ks_json_set_str(o, "host", m->host);
    e |= ks_json_set_str(o, "date", m->date);
    e |= ks_json_set_real(o, "d2d_bytes_per_s", r->d2d_bw);
    e |= ks_json_set_real(o, "hbm_read_bytes_per_s", r->read_bw);
    for (int s = 0; s < KS_GPU_N_SERIES; s++) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < KS_GPU_N_SIZES; i++) {
            json_t *p = json_object();
            e |= !p || ks_json_set_int(p, "bytes", (int64_t)ks_gpu_sizes[i]) ||
                 ks_json_set_real(p, "seconds", r->t[s][i]) || json_array_append_new(a, p);
        }
        e |= json_object_set_new(o, ks_gpu_series[s], a);
        char key[64];
        snprintf(key, sizeof key, "%s_fit", ks_gpu_series[s]);
        e |= ks_calib_print_copy_fit(o, key, &r->fit[s]);
    }
    e |= ks_json_set_real(o, "blocks_32x128KiB_single_copies_s", r->single_s);
    e |= ks_json_set_real(o, "blocks_32x128KiB_gather_kernel_s", r->gather_s);
    e |= ks_json_set_real(o, "blocks_32x128KiB_batched_copy_s", r->batch_t[0][KS_GPU_N_BATCH - 1]);
    e |= ks_json_set_real(o, "blocks_32x128KiB_batched_copy_d2h_s", r->batch_t[1][KS_GPU_N_BATCH - 1]);
    for (int d = 0; d < 2; d++) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < KS_GPU_N_BATCH; i++) {
            json_t *p = json_object();
            e |= !p || ks_json_set_int(p, "blocks", ks_gpu_batch_blocks[i]) ||
                 ks_json_set_int(p, "bytes", (int64_t)(ks_gpu_batch_blocks[i] * KS_GPU_BLOCK)) ||
                 ks_json_set_real(p, "seconds", r->batch_t[d][i]) || json_array_append_new(a, p);
        }
        e |= json_object_set_new(o, d ? "batched_d2h" : "batched_h2d", a);
        e |= ks_calib_print_copy_fit(o, d ? "batched_d2h_fit" : "batched_h2d_fit", &r->batch_fit[d]);
        e |= ks_json_set_real(o, d ? "batched_d2h_worst_with_pcie_bw" : "batched_h2d_worst_with_pcie_bw",
                              r->batch_link_worst[d]);
    }
    for (int d = 0; d < 2; d++) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < KS_GPU_N_ITEMS; i++) {
            json_t *p = json_object();
            e |= !p || ks_json_set_int(p, "items", ks_gpu_item_counts[i]) ||
                 ks_json_set_int(p, "item_bytes", KS_GPU_ITEM) ||
                 ks_json_set_real(p, "per_item_copies_s", r->item_t[d][i]) ||
                 ks_json_set_real(p, "kernel_s", r->item_kernel_t[d][i]) || json_array_append_new(a, p);
        }
        e |= json_object_set_new(o, d ? "items_d2h" : "items_h2d", a);
        e |= ks_calib_print_copy_fit(o, d ? "items_d2h_fit" : "items_h2d_fit", &r->item_fit[d]);
        e |= ks_calib_print_copy_fit(o, d ? "items_d2h_kernel_fit" : "items_h2d_kernel_fit", &r->item_kernel_fit[d]);
        e |= ks_json_set_real(o, d ? "copy_item_d2h_s" : "copy_item_h2d_s", r->copy_item[d]);
    }
    e |= ks_json_set_real(o, "host_chain_short_s", r->chain_t[0]);
    e |= ks_json_set_real(o, "host_chain_long_s", r->chain_t[1]);
    e |= ks_json_set_real(o, "host_read_lat_s", r->host_read_lat);
    e |= ks_json_set_real(o, "copy_overhead_s", r->batch_fit[0].lat);
    e |= ks_json_set_real(o, "single_copy_overhead_s", r->fit[0].lat);
    e |= ks_json_set_real(o, "bidir_64MiB_s", r->bidir_s);
    e |= ks_json_set_real(o, "one_dir_64MiB_s", r->one_dir_s);
    // kernel_time {batch, blocks, seconds}; each json_object_set_new takes its value, failing or not
    json_t *kt = json_object(), *kb = json_array(), *ksec = json_array();
    for (size_t i = 0; kb && ksec && i < r->n_kernel; i++) {
        e |= json_array_append_new(kb, json_integer((json_int_t)r->kblocks[i]));
        e |= json_array_append_new(ksec, json_real(r->kseconds[i]));
    }
    e |= json_object_set_new(kt, "batch", json_integer(r->kshape.batch));
    e |= json_object_set_new(kt, "blocks", kb);
    e |= json_object_set_new(kt, "seconds", ksec);
    e |= json_object_set_new(o, "kernel_time", kt);
    int rc = e || (json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, NULL)) != 0 ? -1 : 0;
    json_decref(o);
    return rc;
}

static int run_gpu(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *out = NULL, *base = KS_CALIB_DEFAULT_BASE;
    int quick = 0, json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "out", .kind = KS_CLI_STRING, .out = &out, .arg = "FILE.lua", .short_name = 'o',
         .help = "the profile to write; required", .hide_default = 1},
        {.name = "base", .kind = KS_CLI_STRING, .out = &base, .arg = "PROFILE",
         .help = "profile whose other (host, network) figures are kept"},
        {.name = "quick", .kind = KS_CLI_FLAG, .out = &quick, .help = "5 timed copies per point instead of 21"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, N_OF(opts), argc, argv, &status))
        return status;
    if (!out)
        return ks_cli_usage_error(cmd, "missing -o FILE.lua: the profile to write");
    if ((status = ks_calib_cmd_out(cmd, out)) != 0)
        return status;
    char *base_file = ks_calib_cmd_base(cmd, base, &status);
    if (!base_file)
        return status;
    char why[KS_KERNEL_ERR_LEN] = "";
    if (ks_device_count(why, sizeof why) <= 0) {
        free(base_file);
        return ks_cli_fail(cmd, "no GPU: %s", why[0] ? why : "CUDA not built in");
    }
    struct ks_progress pr = ks_calib_cmd_progress();
    struct ks_machine m;
    ks_machine_init(&m);
    char dev[256] = "GPU", cmdline[2048], err[ERR_LEN];
    (void)ks_copy_bench_device_name(dev, sizeof dev, NULL, 0);
    ks_cmdline_format(cmdline, sizeof cmdline, argc, argv, "kvstrata %s", cmd->name);
    struct ks_gpu_run r = {0};
    int rc = 0;
    if (ks_gpu_measure(quick ? 5 : 21, &r, &pr, err, sizeof err) != KS_OK)
        rc = ks_cli_fail(cmd, "%s", err);
    else if (ks_gpu_write_profile(&r, &m, dev, base_file, cmdline, out, err, sizeof err) != KS_OK)
        rc = ks_cli_fail(cmd, "-o %s: %s", out, err);
    else if (report(&r, &m, dev, out, json) != 0)
        rc = ks_cli_fail(cmd, "cannot write the report");
    free(base_file);
    return rc;
}

const struct ks_cli_cmd ks_calib_gpu_cmd = {
    .name = "calib gpu",
    .summary = "Measure GPU copies (HBM, PCIe pinned and pageable) and the decode kernel, write a profile",
    .about =
        "With a GPU: a kernel streaming reads of 1 GiB (hbm_bw: bytes read per\n"
        "second) and a device-to-device copy (bytes read + written per second,\n"
        "in hbm_bw's source); host-to-device and device-to-host copies of\n"
        "4 KiB to 64 MiB, pinned and pageable, each timed on the host from\n"
        "issue to the end of a\n"
        "stream synchronisation and fitted to overhead + size / bandwidth\n"
        "(pcie_bw from the pinned host-to-device fit); 32 blocks of 128 KiB\n"
        "moved by one copy each, by one gather kernel and by one batched copy\n"
        "call (ks_copy_batch_async, two 64 KiB halves per block, as the runtime\n"
        "moves a migration batch); batched calls of 1 to 32 blocks each way,\n"
        "fitted to overhead + bytes / bandwidth (copy_overhead: the host-to-\n"
        "device intercept, the fixed cost per batch the simulator charges);\n"
        "656-byte items (one token's latent cache in one layer) between\n"
        "scattered places of pinned host memory and the device, 256 to 16384\n"
        "per call, each way, by one copy per item and by one kernel through\n"
        "mapped memory (copy_item_h2d/d2h: the per-item slope; gather_h2d_bw,\n"
        "gather_d2h_bw: the kernel's rate), every copy checked byte for byte;\n"
        "a GPU thread's chain of dependent loads from host memory\n"
        "(host_read_lat);\n"
        "both directions at once; and the sparse decode kernel as\n"
        "`kvstrata bench kernels --backend cuda --profile` times it with its\n"
        "defaults (batch 32, 8 to 256 selected blocks, median of 5 samples).\n"
        "Writes -o: the --base profile with hbm_bw, pcie_bw, pcie_lat (0:\n"
        "folded into copy_overhead), copy_overhead, copy_item_h2d/d2h,\n"
        "gather_h2d_bw/d2h_bw and host_read_lat measured (the single-copy\n"
        "intercept stays in its source and JSON), and its kernel_time table\n"
        "(replacing the base's). Without a GPU it exits 1 and says so.\n",
    .run = run_gpu,
};
