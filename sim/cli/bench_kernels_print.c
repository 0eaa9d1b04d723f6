// bench_kernels_print.c - what `kvstrata bench kernels` prints: the table of
// points with the device copy they are compared with and the goal, or the same
// as one JSON object.

#include "bench_kernels_print.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "json.h"

int ks_bench_kernels_print_json(const struct ks_bench_params *o, const struct ks_bench_machine *m,
                                const struct ks_bench_result *res, size_t n, const struct ks_bench_copy *c,
                                const char *profile)
{
    json_t *obj = json_object(), *pts = json_array();
    int err = !obj || !pts;
    double lo = INFINITY, hi = 0, bw_lo = INFINITY;
    for (size_t i = 0; !err && i < n; i++) {
        const struct ks_bench_result *r = res + i;
        json_t *p = json_object();
        err |= !p || json_array_append_new(pts, p);
        if (err)
            break;
        err |= ks_json_set_str(p, "kernel", ks_bench_kernel_names[r->kernel]);
        err |= ks_json_set_int(p, "blocks", r->blocks);
        err |= ks_json_set_int(p, "batch", r->batch);
        err |= ks_json_set_int(p, "inner", r->inner);
        err |= ks_json_set_real(p, "median_s", r->median);
        err |= ks_json_set_real(p, "min_s", r->min);
        if (r->bytes > 0) {
            double bw = r->bytes / r->median;
            err |= ks_json_set_num(p, "bytes", r->bytes);
            err |= ks_json_set_real(p, "bytes_per_s", bw);
            if (c->bytes_per_s > 0)
                err |= ks_json_set_real(p, "copy_ratio", bw / c->bytes_per_s);
            bw_lo = bw < bw_lo ? bw : bw_lo;
        }
        lo = r->median < lo ? r->median : lo;
        hi = r->median > hi ? r->median : hi;
    }
    double goal = ks_bench_goal_ratio(res, n, c);
    if (!err) {
        err |= ks_json_set_str(obj, "backend", o->cuda ? "cuda" : "ref");
        err |= ks_json_set_str(obj, "device", m->device);
        err |= ks_json_set_str(obj, "host", m->host);
        err |= ks_json_set_str(obj, "date", m->date);
        err |= ks_json_set_int(obj, "kv_heads", o->kv_heads);
        err |= ks_json_set_int(obj, "q_heads", o->q_heads);
        err |= ks_json_set_int(obj, "head_dim", o->head_dim);
        err |= ks_json_set_int(obj, "block_size", o->block_size);
        err |= ks_json_set_int(obj, "context", o->context);
        err |= ks_json_set_int(obj, "repeat", o->repeat);
        err |= ks_json_set_int(obj, "seed", (int64_t)o->seed);
        err |= ks_json_set_real(obj, "min_sample_s", KS_BENCH_MIN_SAMPLE_S);
        err |= ks_json_set_int(obj, "n_points", (int64_t)n);
        err |= ks_json_set_real(obj, "min_median_s", n ? lo : NAN);
        err |= ks_json_set_real(obj, "max_median_s", n ? hi : NAN);
        err |= ks_json_set_real(obj, "min_bytes_per_s", bw_lo);
        err |= ks_json_set_real(obj, "copy_bytes_per_s", c->bytes_per_s > 0 ? c->bytes_per_s : NAN);
        err |= ks_json_set_str(obj, "copy_note", c->note);
        err |= ks_json_set_real(obj, "goal_ratio", goal);
        err |= isnan(goal) ? json_object_set_new(obj, "goal_met", json_null())
                           : ks_json_set_bool(obj, "goal_met", goal >= KS_BENCH_GOAL_RATIO);
        err |= profile ? ks_json_set_str(obj, "profile", profile) : json_object_set_new(obj, "profile", json_null());
        err |= json_object_set(obj, "points", pts);
    }
    int rc = err ? -1 : ks_json_print(stdout, obj);
    json_decref(pts);
    json_decref(obj);
    return rc;
}

int ks_bench_kernels_print_text(const struct ks_bench_params *o, const struct ks_bench_machine *m,
                                const struct ks_bench_result *res, size_t n, const struct ks_bench_copy *c,
                                const char *profile)
{
    printf("backend     %s (%s)\n", o->cuda ? "cuda" : "ref", m->device);
    printf("host        %s, %s\n", m->host, m->date);
    printf("shape       kv_heads %" PRIu32 ", q_heads %" PRIu32 ", head_dim %" PRIu32 ", block_size %" PRIu32
           ", context %" PRIu32 " tokens\n",
           o->kv_heads, o->q_heads, o->head_dim, o->block_size, o->context);
    printf("timing      median of %" PRIu32 " samples of >= %g ms each\n", o->repeat, KS_BENCH_MIN_SAMPLE_S * 1e3);
    if (c->bytes_per_s > 0)
        printf("copy        %.1f GB/s (%s)\n", c->bytes_per_s * 1e-9, c->note);
    else
        printf("copy        %s\n", c->note);
    printf("\n%-10s %7s %6s %12s %12s %7s %10s %9s %7s\n", "kernel", "blocks", "batch", "median_us", "min_us",
           "inner", "KV_MiB", "GB/s", "of_copy");
    for (size_t i = 0; i < n; i++) {
        const struct ks_bench_result *r = res + i;
        printf("%-10s %7" PRIu32 " %6" PRIu32 " %12.2f %12.2f %7" PRIu32, ks_bench_kernel_names[r->kernel], r->blocks,
               r->batch, r->median * 1e6, r->min * 1e6, r->inner);
        if (r->bytes > 0) {
            double bw = r->bytes / r->median;
            printf(" %10.2f %9.2f", r->bytes / (1024.0 * 1024.0), bw * 1e-9);
            if (c->bytes_per_s > 0)
                printf(" %6.1f%%", 100 * bw / c->bytes_per_s);
            else
                printf(" %7s", "-");
        } else {
            printf(" %10s %9s %7s", "-", "-", "-");
        }
        putchar('\n');
    }
    double goal = ks_bench_goal_ratio(res, n, c);
    printf("\ngoal        sparse >= %.0f%% of the copy bandwidth at >= %d blocks, batch %d: ",
           100 * KS_BENCH_GOAL_RATIO, KS_BENCH_GOAL_BLOCKS, KS_BENCH_GOAL_BATCH);
    if (isnan(goal))
        printf("not measured (%s)\n", c->bytes_per_s > 0 ? "no such point in the sweep" : c->note);
    else
        printf("%s (worst %.1f%%)\n", goal >= KS_BENCH_GOAL_RATIO ? "met" : "NOT met", 100 * goal);
    if (profile)
        printf("profile     %s\n", profile);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}
