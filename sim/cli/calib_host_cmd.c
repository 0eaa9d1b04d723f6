// calib_host_cmd.c - `kvstrata calib host`: parses the options, runs the
// host calibration (calib/host.h) and writes its profile, prints the report.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "calib_cmd.h"
#include "calib_print.h"
#include "cmdline.h"
#include "host.h"
#include "json.h"
#include "status.h"

#define MIB ((size_t)1 << 20)
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
enum { ERR_LEN = 4096 };

// The report on stdout: tables and fits, or one JSON object. 0 or -1.
static int report(const struct ks_host_params *o, const struct ks_host_run *h, const struct ks_machine *m,
                  const char *out, int json)
{
    if (!json) {
        printf("calib host: %s (%s, %u cores), %s\nprofile: %s\n\n", m->host, m->cpu, m->cores, m->date, out);
        printf("DRAM: median of %d windows of %.3g s per point, measured in rounds (each round one window of every "
               "size, one thread and all threads)\n", KS_MEASURE_WINDOWS, h->dram_seconds);
        ks_calib_print_dram(stdout, "DRAM copies, one thread (bytes copied per second):", h->dram1, h->n_dram, 0);
        printf("  fit: lat %.3g us, bw %.4g GB/s moved (3 bytes per byte copied below %zu MiB, 2 above), worst "
               "residual %.1f%%\n",
               1e6 * h->fit1.lat, h->fit1.bw / 1e9, h->nt / MIB, 100 * h->fit1.worst);
        ks_calib_print_dram(stdout, "DRAM copies, all threads at once:", h->dramn, h->n_dram, 0);
        printf("  fit: lat %.3g us, bw %.4g GB/s moved (all threads: dram_bw), worst residual %.1f%%\n\n",
               1e6 * h->fitn.lat, h->fitn.bw / 1e9, 100 * h->fitn.worst);
        ks_calib_print_wake(stdout, "host wake-ups (host_wake: a thread idle in pthread_cond_wait, signalled by a "
                            "spinning thread; seconds from the signal to the waiter running):", h->wake, h->n_wake, 0);
        putchar('\n');
        printf("SSD: %s (%s), %" PRIu64 " MiB file, median of %d windows of %.3g s per point\n", o->dir, h->fsdesc,
               h->file_bytes / MIB, KS_MEASURE_SSD_WINDOWS, h->seconds);
        ks_calib_print_ssd(stdout, "reads:", h->rd, h->n_ssd, 0);
        printf("  fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n", 1e6 * h->fit_rd.lat,
               1e6 * h->fit_rd.op, h->fit_rd.bw / 1e6, 100 * h->fit_rd.worst);
        ks_calib_print_ssd(stdout, "writes:", h->wr, h->n_ssd, 0);
        printf("  fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n", 1e6 * h->fit_wr.lat,
               1e6 * h->fit_wr.op, h->fit_wr.bw / 1e6, 100 * h->fit_wr.worst);
        return fflush(stdout) == 0 ? 0 : -1;
    }
    json_t *r = json_object();
    if (!r)
        return -1;
    int err = ks_json_set_str(r, "profile", out);
    err |= ks_json_set_str(r, "host", m->host);
    err |= ks_json_set_str(r, "cpu", m->cpu);
    err |= ks_json_set_int(r, "cores", m->cores);
    err |= ks_json_set_str(r, "date", m->date);
    err |= ks_json_set_str(r, "dir", o->dir);
    err |= ks_json_set_str(r, "filesystem", h->fsdesc);
    err |= ks_json_set_int(r, "file_bytes", (int64_t)h->file_bytes);
    err |= ks_json_set_int(r, "threads", h->threads);
    err |= json_object_set_new(r, "dram_one_thread", ks_calib_print_dram_json(h->dram1, h->n_dram, 0));
    err |= json_object_set_new(r, "dram_all_threads", ks_calib_print_dram_json(h->dramn, h->n_dram, 0));
    err |= ks_json_set_int(r, "dram_nt_threshold", (int64_t)h->nt);
    err |= ks_calib_print_copy_fit(r, "dram_fit_one_thread", &h->fit1);
    err |= ks_calib_print_copy_fit(r, "dram_fit_all_threads", &h->fitn);
    err |= json_object_set_new(r, "wake", ks_calib_print_wake_json(h->wake, h->n_wake, 0));
    err |= json_object_set_new(r, "ssd_read", ks_calib_print_ssd_json(h->rd, h->n_ssd, 0));
    err |= json_object_set_new(r, "ssd_write", ks_calib_print_ssd_json(h->wr, h->n_ssd, 0));
    err |= ks_calib_print_ssd_fit(r, "ssd_read_fit", &h->fit_rd);
    err |= ks_calib_print_ssd_fit(r, "ssd_write_fit", &h->fit_wr);
    int rc = err ? -1 : ks_json_print(stdout, r);
    json_decref(r);
    return rc;
}

struct opts {
    const char *dir, *out, *base;
    int quick, json;
    uint32_t threads, file_mib;
    double seconds;
};

static int run_host(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    struct opts o = {.base = KS_CALIB_DEFAULT_BASE};
    const struct ks_cli_opt opts[] = {
        {.name = "dir", .kind = KS_CLI_STRING, .out = &o.dir, .arg = "DIR",
         .help = "directory on the drive to measure (O_DIRECT; not tmpfs); required", .hide_default = 1},
        {.name = "out", .kind = KS_CLI_STRING, .out = &o.out, .arg = "FILE.lua", .short_name = 'o',
         .help = "the profile to write (calib/profiles/NAME.lua); required", .hide_default = 1},
        {.name = "base", .kind = KS_CLI_STRING, .out = &o.base, .arg = "PROFILE",
         .help = "profile whose other (GPU, network) figures are kept"},
        {.name = "quick", .kind = KS_CLI_FLAG, .out = &o.quick,
         .help = "few sizes, a 64 MiB file and short points: seconds, for tests"},
        {.name = "threads", .kind = KS_CLI_U32, .out = &o.threads, .arg = "N",
         .help = "threads of the all-core DRAM run (0: one per online CPU)", .max = 1024},
        {.name = "file-size", .kind = KS_CLI_U32, .out = &o.file_mib, .arg = "MIB",
         .help = "SSD benchmark file in MiB, a multiple of 4 (0: 1024, 64 with --quick)", .max = 1u << 20},
        {.name = "time", .kind = KS_CLI_REAL, .out = &o.seconds, .arg = "SECONDS",
         .help = "each timed window (3 per DRAM point, 5 per SSD point, median kept; 0: 0.15 s DRAM, 0.3 s SSD, "
                 "0.01 s with --quick)", .fmin = 0, .fmax = 60},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &o.json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, N_OF(opts), argc, argv, &status))
        return status;
    if (!o.dir)
        return ks_cli_usage_error(cmd, "missing --dir DIR: the directory on the drive to measure");
    if (!o.out)
        return ks_cli_usage_error(cmd, "missing -o FILE.lua: the profile to write");
    if (o.file_mib % 4)
        return ks_cli_usage_error(cmd, "--file-size %" PRIu32 " is not a multiple of 4 MiB", o.file_mib);
    if (o.file_mib && o.file_mib < 8)
        return ks_cli_usage_error(cmd, "--file-size %" PRIu32 ": at least 8 MiB (two of the largest requests)",
                                  o.file_mib);
    if ((status = ks_calib_cmd_out(cmd, o.out)) != 0)
        return status;
    if ((status = ks_calib_cmd_dir(cmd, o.dir)) != 0)
        return status;
    char *base_file = ks_calib_cmd_base(cmd, o.base, &status);
    if (!base_file)
        return status;
    struct ks_progress pr = ks_calib_cmd_progress();
    struct ks_machine m;
    ks_machine_init(&m);
    struct ks_host_run *h = calloc(1, sizeof *h);
    if (!h) {
        free(base_file);
        return ks_cli_fail(cmd, "out of memory");
    }
    struct ks_host_params p = {.dir = o.dir, .quick = o.quick, .threads = o.threads ? o.threads : m.cores,
                               .file_mib = o.file_mib, .seconds = o.seconds};
    char cmdline[2048], err[ERR_LEN];
    ks_cmdline_format(cmdline, sizeof cmdline, argc, argv, "kvstrata %s", cmd->name);
    int rc = 0, st = ks_host_measure(&p, h, &pr, err, sizeof err);
    if (st != KS_OK)
        rc = ks_calib_cmd_fail(cmd, st, err);
    else if (ks_host_write_profile(&p, h, &m, base_file, cmdline, o.out, err, sizeof err) != KS_OK)
        rc = ks_cli_fail(cmd, "-o %s: %s", o.out, err);
    else if (report(&p, h, &m, o.out, o.json) != 0)
        rc = ks_cli_fail(cmd, "cannot write the report");
    free(h);
    free(base_file);
    return rc;
}

const struct ks_cli_cmd ks_calib_host_cmd = {
    .name = "calib host",
    .summary = "Measure host DRAM, thread wake-ups and an SSD, fit the models, write a profile",
    .about =
        "Measures memcpy bandwidth by copy size (64 KiB to 1 GiB) on one thread and\n"
        "on all cores (data out of cache; bytes copied per second; median of 3\n"
        "rounds, each one window of every size and thread count, so that a drift\n"
        "of the machine reaches every point alike); the wake-up of a thread idle\n"
        "in pthread_cond_wait for 1e-4, 1e-3, 1e-2 and 1e-1 s (1e-4 and 1e-3 with\n"
        "--quick), signalled by a thread that spins meanwhile: seconds from the\n"
        "signal to the waiter running, median, P10 and P90 of 200, 200, 60 and 20\n"
        "wake-ups (about 3 s; calib/wake.h); and O_DIRECT random reads\n"
        "and writes through io_uring by request size (4 KiB to 4 MiB) and queue\n"
        "depth (1 to 64) on a file it creates in --dir (filled first, synced and\n"
        "removed at the end). Fits latency + size * moved / bandwidth\n"
        "to the copies (bandwidth in bytes the memory moves: a copy moves 3 bytes\n"
        "per byte below glibc's non-temporal threshold, 2 at or above it) and\n"
        "t = lat + qd * op + qd * size / bw to the SSD requests\n"
        "(calib/README.md), and writes -o: the --base profile's figures with\n"
        "their sources, and l2, dram_bw, ssd.count, ssd.read_bw, ssd.write_bw,\n"
        "ssd.lat, ssd.read_op_time and ssd.write_op_time measured here, each with\n"
        "the command, date, machine and the fit's worst residual, and host_wake =\n"
        "{idle = {...}, seconds = {...}} (the median wake-up at each idle time;\n"
        "its source gives every point's samples and P10-P90), replacing the\n"
        "base's. The file is written to a temporary name, checked as a profile,\n"
        "then renamed.\n"
        "\n"
        "--json prints one object: profile, host, cpu, cores, date, dir,\n"
        "filesystem, file_bytes, threads, dram_one_thread and dram_all_threads\n"
        "(arrays of {bytes, threads, seconds_per_copy, bytes_per_s (the median\n"
        "window), bytes_per_s_min, bytes_per_s_max, window_spread ((max - min) /\n"
        "median)}), dram_nt_threshold (bytes; 0: unknown), their fits dram_fit_*\n"
        "{lat_s, bw_bytes_per_s, worst_residual, rms_residual}, wake (array of\n"
        "{idle_s, samples, seconds (the median), p10_s, p90_s, min_s, max_s,\n"
        "spread ((p90 - p10) / median)}), ssd_read and\n"
        "ssd_write (arrays of {bytes, qd, requests, seconds_per_request,\n"
        "bytes_per_s (the median window), bytes_per_s_min, bytes_per_s_max,\n"
        "window_spread, iops, predicted_s, rel_error}) and their fits ssd_*_fit\n"
        "{lat_s, op_s, bw_bytes_per_s, worst_residual, rms_residual}.\n",
    .run = run_host,
};
