// bench_kernels_cmd.c - `kvstrata bench kernels`: parses the sweep, times it
// through kernels/bench (bench.h says how the inputs are made and the points
// timed), prints the table or one JSON object, and writes the profile table.
#define _POSIX_C_SOURCE 200809L // isatty

#include "bench_kernels_cmd.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_kernels_print.h"
#include "cmdline.h"
#include "device.h"
#include "kernel.h"
#include "status.h"

const char *const ks_bench_backend_names[] = {"auto", "ref", "cuda", NULL};

struct settings {
    const char *kernels, *blocks, *batch, *profile; // as given; parsed into p
    int backend, json;
    struct ks_bench_params p;
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

// ---- options -------------------------------------------------------------

// Parses a comma-separated list of integers in [min, max] into v (sorted,
// duplicates dropped). 0, or a usage error's exit status.
static int parse_list(const struct ks_cli_cmd *cmd, const char *opt, const char *text, uint32_t min, uint32_t max,
                      uint32_t *v, size_t *n)
{
    *n = 0;
    const char *s = text;
    for (;;) {
        size_t len = strcspn(s, ",");
        char item[32], why[128];
        uint64_t x;
        if (len == 0 || len >= sizeof item)
            return ks_cli_usage_error(cmd, "--%s '%s': expected numbers separated by commas", opt, text);
        memcpy(item, s, len);
        item[len] = '\0';
        if (ks_cli_parse_u64(item, min, max, &x, why, sizeof why) != 0)
            return ks_cli_usage_error(cmd, "--%s: %s", opt, why);
        if (*n == KS_BENCH_MAX_LIST)
            return ks_cli_usage_error(cmd, "--%s: more than %d values", opt, KS_BENCH_MAX_LIST);
        v[(*n)++] = (uint32_t)x;
        if (s[len] == '\0')
            break;
        s += len + 1;
    }
    qsort(v, *n, sizeof *v, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (k == 0 || v[i] != v[k - 1])
            v[k++] = v[i];
    *n = k;
    return 0;
}

static int parse_kernels(const struct ks_cli_cmd *cmd, struct settings *o)
{
    const char *s = o->kernels;
    for (;;) {
        size_t len = strcspn(s, ",");
        int found = -1;
        for (int k = 0; k < KS_BENCH_N_KERNELS; k++)
            if (strlen(ks_bench_kernel_names[k]) == len && strncmp(s, ks_bench_kernel_names[k], len) == 0)
                found = k;
        if (found < 0)
            return ks_cli_usage_error(cmd,
                                      "--kernels '%s': expected names from summary, select, sparse, sparse_i8, "
                                      "dense separated by commas",
                                      o->kernels);
        o->p.run[found] = 1;
        if (s[len] == '\0')
            return 0;
        s += len + 1;
    }
}

static int check_settings(const struct ks_cli_cmd *cmd, struct settings *o)
{
    int rc;
    if ((rc = parse_kernels(cmd, o)) != 0)
        return rc;
    if ((rc = parse_list(cmd, "blocks", o->blocks, 1, 1u << 20, o->p.blocks, &o->p.n_blocks)) != 0)
        return rc;
    if ((rc = parse_list(cmd, "batch", o->batch, 1, 4096, o->p.batch, &o->p.n_batch)) != 0)
        return rc;
    if (o->p.q_heads % o->p.kv_heads != 0 || o->p.q_heads / o->p.kv_heads > KS_KERNEL_MAX_GROUP)
        return ks_cli_usage_error(cmd, "--q-heads %" PRIu32 " must be a multiple of --kv-heads %" PRIu32
                                       ", at most %d times it", o->p.q_heads, o->p.kv_heads, KS_KERNEL_MAX_GROUP);
    if (o->p.context % o->p.block_size != 0)
        return ks_cli_usage_error(cmd, "--context %" PRIu32 " is not a multiple of --block-size %" PRIu32,
                                  o->p.context, o->p.block_size);
    uint32_t ctx_blocks = o->p.context / o->p.block_size, most = o->p.blocks[o->p.n_blocks - 1];
    if (most > ctx_blocks)
        return ks_cli_usage_error(cmd, "--blocks %" PRIu32 " exceeds the %" PRIu32 " blocks of --context %" PRIu32,
                                  most, ctx_blocks, o->p.context);
    if ((uint64_t)ctx_blocks * o->p.batch[o->p.n_batch - 1] > UINT32_MAX / KS_BENCH_LAYERS)
        return ks_cli_usage_error(cmd, "--context and --batch make more than %u pages", UINT32_MAX / KS_BENCH_LAYERS);
    if (o->profile && !o->p.run[KS_BENCH_SPARSE])
        return ks_cli_usage_error(cmd, "--profile needs the sparse kernel in --kernels");
    if (o->profile && ks_bench_profile_dir_ok(o->profile) != 0)
        return ks_cli_fail(cmd, "--profile %s: cannot create a file in its directory", o->profile);
    return 0;
}

int ks_bench_backend(const struct ks_cli_cmd *cmd, int want)
{
    if (want == KS_BENCH_REF)
        return 0;
    char why[KS_KERNEL_ERR_LEN] = "";
    int n = ks_device_count(why, sizeof why);
    if (n > 0)
        return 1;
    if (want == KS_BENCH_CUDA) {
        ks_cli_fail(cmd, "--backend cuda: no GPU (%s)", why);
        return -1;
    }
    return 0;
}

// The progress line on a terminal: the point about to be timed.
static void progress(void *ctx, enum ks_bench_kernel k, uint32_t batch, uint32_t blocks)
{
    *(int *)ctx = 1;
    fprintf(stderr, "\rbench kernels: %-9s batch %4" PRIu32 " blocks %6" PRIu32 "\033[K", ks_bench_kernel_names[k],
            batch, blocks);
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    struct settings o = {.kernels = KS_BENCH_DEFAULT_KERNELS, .blocks = KS_BENCH_DEFAULT_BLOCKS,
                         .batch = KS_BENCH_DEFAULT_BATCH};
    ks_bench_params_default(&o.p);
    const struct ks_cli_opt opts[] = {
        {.name = "kernels", .kind = KS_CLI_STRING, .out = &o.kernels, .arg = "LIST",
         .help = "kernels to time, comma-separated"},
        {.name = "blocks", .kind = KS_CLI_STRING, .out = &o.blocks, .arg = "LIST",
         .help = "selected blocks per sequence, comma-separated"},
        {.name = "batch", .kind = KS_CLI_STRING, .out = &o.batch, .arg = "LIST",
         .help = "sequences per call, comma-separated"},
        {.name = "kv-heads", .kind = KS_CLI_U32, .out = &o.p.kv_heads, .arg = "N", .help = "KV heads", .min = 1,
         .max = 1024},
        {.name = "q-heads", .kind = KS_CLI_U32, .out = &o.p.q_heads, .arg = "N",
         .help = "query heads, a multiple of --kv-heads", .min = 1, .max = 16384},
        {.name = "head-dim", .kind = KS_CLI_U32, .out = &o.p.head_dim, .arg = "N", .help = "elements per head",
         .min = 1, .max = KS_KERNEL_MAX_HEAD_DIM},
        {.name = "block-size", .kind = KS_CLI_U32, .out = &o.p.block_size, .arg = "N", .help = "tokens per block",
         .min = 1, .max = KS_KERNEL_MAX_BLOCK_SIZE},
        {.name = "context", .kind = KS_CLI_U32, .out = &o.p.context, .arg = "TOKENS",
         .help = "tokens per sequence, a multiple of --block-size", .min = 1, .max = 1u << 24},
        {.name = "repeat", .kind = KS_CLI_U32, .out = &o.p.repeat, .arg = "N", .help = "timed samples per point",
         .min = 1, .max = 1000},
        {.name = "seed", .kind = KS_CLI_U64, .out = &o.p.seed, .arg = "N", .help = "seed of every random input"},
        {.name = "backend", .kind = KS_CLI_CHOICE, .out = &o.backend,
         .help = "kernels to time: auto (cuda when a GPU answers, else ref), ref (CPU), cuda",
         .choices = ks_bench_backend_names},
        {.name = "profile", .kind = KS_CLI_STRING, .out = &o.profile, .arg = "FILE.lua",
         .help = "also write the sparse decode times at the largest batch as a Lua kernel_time table"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &o.json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if ((status = check_settings(cmd, &o)) != 0)
        return status;
    int cuda = ks_bench_backend(cmd, o.backend);
    if (cuda < 0)
        return KS_EXIT_FAIL;
    o.p.cuda = cuda;

    struct ks_bench_machine m;
    ks_bench_machine_init(&m, cuda);
    struct ks_bench_copy copy;
    ks_bench_copy_measure(cuda, &copy);
    int tty = isatty(STDERR_FILENO), shown = 0, rc = 0;
    struct ks_bench_progress pr = {tty ? progress : NULL, &shown};
    struct ks_bench_result *res;
    size_t n_res;
    char err[1024];
    int st = ks_bench_run(&o.p, &pr, &res, &n_res, err, sizeof err);
    if (shown)
        fputs("\r\033[K", stderr);
    if (st != KS_KERNEL_OK)
        return ks_cli_fail(cmd, "%s", err);
    if (o.profile) {
        char cmdline[2048];
        ks_cmdline_format(cmdline, sizeof cmdline, argc, argv, "kvstrata bench kernels");
        if (ks_bench_write_profile(o.profile, &o.p, &m, res, n_res, cmdline) != KS_OK)
            rc = ks_cli_fail(cmd, "--profile %s: cannot write the file", o.profile);
    }
    if (rc == 0 && (o.json ? ks_bench_kernels_print_json(&o.p, &m, res, n_res, &copy, o.profile)
                           : ks_bench_kernels_print_text(&o.p, &m, res, n_res, &copy, o.profile)) != 0)
        rc = ks_cli_fail(cmd, "cannot write the report");
    free(res);
    return rc;
}

const struct ks_cli_cmd ks_bench_kernels_cmd = {
    .name = "bench kernels",
    .summary = "Time the attention kernels against selected blocks, batch and head shape",
    .about =
        "Times block summary, block select (Quest scores + top-k), sparse decode\n"
        "(fp16 and int8) and dense decode, on the GPU (the CUDA kernels) when one\n"
        "answers, else on the CPU (the C references); --backend forces one, and\n"
        "--backend cuda without a GPU is an error. Each point is a kernel, a batch\n"
        "and a number of blocks per sequence: selected blocks (sparse), blocks\n"
        "summarised (summary), top-k (select, which scores the whole context) or\n"
        "the context length in blocks (dense: the bytes of the sparse point).\n"
        "\n"
        "Inputs come from --seed: random fp16 KV (and an int8 copy) in pages owned\n"
        "by the sequences in shuffled order, 8 such block tables used in turn by\n"
        "successive calls (as successive layers), random selections. Nothing is\n"
        "allocated while the clock runs. A sample is `inner` calls back to back\n"
        "(enough for >= 1 ms) up to the device going idle, on the monotonic clock;\n"
        "a point's time is the median over --repeat samples of sample / inner.\n"
        "Decode bytes = blocks x block_size x kv_heads x head_dim x 2 (K and V) x\n"
        "dtype bytes x batch. With a GPU, the bandwidth is compared with a timed\n"
        "1 GiB device-to-device cudaMemcpy (bytes read + written per second); the\n"
        "goal is sparse >= 70% of it at >= 64 blocks and batch 32.\n"
        "\n"
        "--json prints one object: backend (\"ref\" or \"cuda\"), device (CPU or GPU\n"
        "name), host, date, kv_heads, q_heads, head_dim, block_size, context\n"
        "(tokens), repeat, seed, min_sample_s, n_points, min_median_s,\n"
        "max_median_s, min_bytes_per_s (over decode points; null if none),\n"
        "copy_bytes_per_s (null without a GPU), copy_note (\"no GPU\", ...),\n"
        "goal_ratio (worst sparse bandwidth / copy bandwidth at >= 64 blocks and\n"
        "batch 32, or null), goal_met (bool or null), profile (file or null) and\n"
        "points: an array of {kernel, blocks, batch, inner, median_s, min_s; for\n"
        "decode kernels also bytes, bytes_per_s and, with a GPU, copy_ratio}.\n"
        "\n"
        "--profile FILE.lua writes, through a temporary file renamed into place,\n"
        "`return { kernel_time = { source, kind = \"measured\", backend, batch,\n"
        "kv_heads, q_heads, head_dim, block_size, dtype = \"fp16\", blocks = {...},\n"
        "seconds = {...} } }`: the sparse decode time of one layer for the whole\n"
        "batch, by selected blocks per sequence, at the largest --batch.\n",
    .run = run,
};
