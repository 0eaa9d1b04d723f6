// test_runtime.c - the real runtime (kernels/runtime/runtime.h) on a small scenario
// that keeps all three tiers busy: it finishes every request, reads blocks
// in flight from their destination, refuses no read, and makes the same
// cache decisions on every run whatever the threads' timing. Runs are
// compared launch by launch (ks_runtime_compare): every value of a block's
// KV is its own, so a launch that read one block from a wrong page differs.
#define _GNU_SOURCE // mkdtemp, O_DIRECT

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "runtime.h"
#include "scenario.h"
#include "status.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define TINY KS_SOURCE_DIR "/tests/fixtures/scenarios/runtime_tiny.lua"

static char dir[2048];

// Launch log rows kept per run: runtime_tiny decodes about 600 rows (6
// requests x 24 tokens x 4 layers), 2 KB each, so the whole run is logged.
#define KEEP_ROWS 4096
// CPU against GPU mode, per row: the CUDA decode's bound against the
// reference (kernels/README.md, "Tests and error bounds": outputs 1e-5
// normalised).
#define GPU_TOL 1e-5

// A disk-backed folder that takes O_DIRECT (under $KS_RUNTIME_DIR, else
// /var/tmp), or none (the test skips).
static int direct_dir(void)
{
    const char *base = getenv("KS_RUNTIME_DIR");
    if ((size_t)snprintf(dir, sizeof dir, "%s/ks_rt_XXXXXX", base && base[0] ? base : "/var/tmp") >= sizeof dir)
        return 0;
    if (!mkdtemp(dir))
        return 0;
    char f[sizeof dir + 16];
    snprintf(f, sizeof f, "%s/probe", dir);
    int fd = open(f, O_CREAT | O_RDWR | O_DIRECT, 0600);
    if (fd >= 0) {
        close(fd);
        unlink(f);
        return 1;
    }
    rmdir(dir);
    return 0;
}

// The tiny scenario, with one `--set` (NULL: none).
static struct ks_scenario *load_tiny(const char *set)
{
    struct ks_scenario *s = NULL;
    char err[4096];
    struct ks_scenario_params p = {.sets = &set, .n_sets = set != NULL};
    if (ks_scenario_load(TINY, &p, &s, err, sizeof err) != KS_OK)
        fail_msg("%s", err);
    return s;
}

static void run_mode(const struct ks_scenario *s, struct ks_run_result *r, struct ks_runtime_extra *x, int gpu)
{
    char err[1024] = "";
    struct ks_runtime_params p = {.dir = dir, .gpu = gpu, .keep_rows = KEEP_ROWS};
    int st = ks_runtime_run(s, &p, r, x, err, sizeof err);
    if (st != KS_OK)
        fail_msg("runtime: %s", err);
}

static void run_once(const struct ks_scenario *s, struct ks_run_result *r, struct ks_runtime_extra *x)
{
    run_mode(s, r, x, 0);
}

// The whole run is in x's launch log.
static void logged_whole(const struct ks_runtime_extra *x)
{
    assert_int_equal(x->launches_unlogged, 0);
    assert_int_equal(x->n_launches, x->kernel_launches);
    assert_true(x->n_rows > x->n_launches && x->row_elems > 0);
}

static void print_diff(const char *what, const struct ks_runtime_diff *d)
{
    printf("%s: %llu launches compared, %llu differ, largest row error %.3g", what, (unsigned long long)d->launches,
           (unsigned long long)d->differing, d->max_err);
    if (d->first >= 0)
        printf("; first: launch %lld (step %u, layer %u, part %u), sequence %u (request %u), error %.3g",
               (long long)d->first, d->step, d->layer, d->part, d->seq, d->req, d->err);
    printf("\n");
}

// GPU mode (where a GPU answers): the same decisions as CPU mode, every
// block read, none refused, and every launch's outputs those of CPU mode
// within the CUDA kernel's bound, row by row: every value of a block's KV is
// a function of (request, layer, block, token, head, dim), so one read that
// raced ahead of its copy (or a copy that went the wrong way, or never
// landed) makes its launch differ; the first such launch is named. The
// kernel's time comes from CUDA events around its launches alone.
static void gpu_mode_same_decisions(void **state)
{
    (void)state;
    // main runs this case alone, and only with a GPU
    struct ks_scenario *s = load_tiny(NULL);
    struct ks_run_result a, b;
    struct ks_runtime_extra xa, xb;
    run_mode(s, &a, &xa, 0);
    run_mode(s, &b, &xb, 1);
    assert_memory_equal(&a.cache, &b.cache, sizeof a.cache);
    assert_int_equal(xb.reads, b.cache.accesses);
    assert_int_equal(xb.stale_refused, 0);
    logged_whole(&xa);
    logged_whole(&xb);
    struct ks_runtime_diff d;
    uint64_t n = ks_runtime_compare(&xa, &xb, GPU_TOL, &d);
    print_diff("CPU against GPU mode", &d);
    printf("GPU kernel %.6f s (events), launches %.6f s (host)\n", xb.kernel_seconds, xb.launch_seconds);
    if (n != 0)
        fail_msg("GPU mode differs from CPU mode at launch %lld (step %u, layer %u, part %u), sequence %u "
                 "(request %u): normalised error %.3g > %g; %llu of %llu launches differ",
                 (long long)d.first, d.step, d.layer, d.part, d.seq, d.req, d.err, GPU_TOL,
                 (unsigned long long)n, (unsigned long long)d.launches);
    assert_int_equal(d.launches, xa.kernel_launches);
    assert_true(xb.kernel_seconds > 0 && xb.kernel_seconds <= xb.launch_seconds);
    ks_runtime_extra_fini(&xa);
    ks_runtime_extra_fini(&xb);
    ks_run_result_fini(&a);
    ks_run_result_fini(&b);
    ks_scenario_free(s);
}

static void tiers_and_determinism(void **state)
{
    (void)state;
    struct ks_scenario *s = load_tiny(NULL);
    struct ks_run_result a, b;
    struct ks_runtime_extra xa, xb;
    run_once(s, &a, &xa);
    assert_int_equal(a.finished, 6);
    assert_int_equal(a.tokens, 6 * 24);
    const struct ks_cache_stats *c = &a.cache;
    printf("runtime_tiny: %llu accesses, L1 %llu L2 %llu L3 %llu; %llu reads, %llu in flight, %llu via scratch, "
           "%llu refused\n",
           (unsigned long long)c->accesses, (unsigned long long)c->found[KS_L1],
           (unsigned long long)c->found[KS_L2], (unsigned long long)c->found[KS_L3], (unsigned long long)xa.reads,
           (unsigned long long)xa.reads_inflight, (unsigned long long)xa.reads_scratch,
           (unsigned long long)xa.stale_refused);
    // every tier served accesses and every path moved bytes
    assert_true(c->found[KS_L2] > 0 && c->found[KS_L3] > 0);
    assert_true(c->mig_bytes[KS_L2][KS_L1] > 0 && c->mig_bytes[KS_L3][KS_L1] > 0);
    assert_true(c->mig_bytes[KS_L1][KS_L2] > 0 && c->mig_bytes[KS_L2][KS_L3] > 0);
    assert_int_equal(c->found[KS_L1] + c->found[KS_L2] + c->found[KS_L3] + c->found_inflight, c->accesses);
    // the kernel read every selected block, some of them at their destination
    assert_int_equal(xa.reads, c->accesses);
    assert_true(xa.reads_inflight > 0);
    assert_int_equal(xa.stale_refused, 0);
    assert_int_equal(c->stale_refused, 0);
    // mixed selections are made layer by layer: no lane copied a layer's
    // misses before the step reached that layer (copies_ahead_of_layers:
    // where the selection is known at the step's start, they do)
    assert_int_equal(xa.copies_ahead, 0);
    // the same decisions again, whatever the lanes' timing was
    run_once(s, &b, &xb);
    assert_memory_equal(&a.cache, &b.cache, sizeof a.cache);
    assert_int_equal(a.steps, b.steps);
    assert_int_equal(xa.reads_inflight, xb.reads_inflight);
    // and the same attention outputs, bit for bit, launch by launch (the
    // data, the pages and the kernel are the same)
    assert_true(xa.out_magnitude > 0 && isfinite(xa.out_checksum));
    assert_true(xa.out_checksum == xb.out_checksum && xa.out_magnitude == xb.out_magnitude);
    logged_whole(&xa);
    logged_whole(&xb);
    struct ks_runtime_diff d;
    assert_int_equal(ks_runtime_compare(&xa, &xb, 0.0, &d), 0);
    print_diff("CPU mode twice", &d);
    assert_int_equal(d.launches, xa.kernel_launches);
    assert_int_equal(d.first, -1);
    assert_true(d.max_err == 0.0);
    // CPU mode times the kernel and nothing else
    assert_true(xa.kernel_seconds > 0 && xa.kernel_seconds == xa.launch_seconds);
    // one kernel speed per decode step, finite where the step read blocks
    assert_int_equal(xa.n_step_kernel, a.steps);
    for (size_t i = 0; i < xa.n_step_kernel; i++)
        assert_true(isnan(xa.step_kernel[i]) || xa.step_kernel[i] > 0);
    assert_true(xa.step_kernel_p10 > 0 && xa.step_kernel_p10 <= xa.step_kernel_p50 &&
                xa.step_kernel_p50 <= xa.step_kernel_p90 && xa.step_kernel_p90 <= xa.step_kernel_p99);
    ks_runtime_extra_fini(&xa);
    ks_runtime_extra_fini(&xb);
    ks_run_result_fini(&a);
    ks_run_result_fini(&b);
    ks_scenario_free(s);
}

// Where the selections are known at the step's start (a position rule:
// random), the lanes copy every layer's misses from the step's start, ahead
// of the layers that need them; where a layer's selection is made as it runs
// (mixed, tiers_and_determinism), none is copied before its layer.
static void copies_ahead_of_layers(void **state)
{
    (void)state;
    struct ks_scenario *s = load_tiny("sparse.policy=random");
    struct ks_run_result r;
    struct ks_runtime_extra x;
    run_once(s, &r, &x);
    printf("runtime_tiny, random selections: %llu needed batches started before the step reached their layer\n",
           (unsigned long long)x.copies_ahead);
    assert_true(r.cache.found[KS_L2] + r.cache.found[KS_L3] > 0);
    assert_true(x.copies_ahead > 0);
    ks_runtime_extra_fini(&x);
    ks_run_result_fini(&r);
    ks_scenario_free(s);
}

// The resident-pointer table's generation check: entries of blocks that
// moved are caught before the read and located afresh. Without the check
// (the negative control) the same run reads moved blocks from their old
// pages: the outputs change, and the check after the launch refuses those
// reads.
static void generation_check_before_reads(void **state)
{
    (void)state;
    struct ks_scenario *s = load_tiny(NULL);
    struct ks_run_result a, b;
    struct ks_runtime_extra xa, xb;
    run_once(s, &a, &xa);
    assert_true(xa.table_refreshed > 0);
    assert_int_equal(xa.stale_refused, 0);
    assert_true(a.table_rebuilds > 0 && a.table_rebuilds <= a.steps);
#ifdef __SANITIZE_THREAD__
    // the negative control reads pages a lane may be writing: a data race by
    // design, which ThreadSanitizer rightly reports
    printf("runtime_tiny: %llu table entries refreshed; negative control not run under ThreadSanitizer\n",
           (unsigned long long)xa.table_refreshed);
    ks_runtime_extra_fini(&xa);
    ks_run_result_fini(&a);
    ks_scenario_free(s);
    return;
#endif
    char err[1024] = "";
    struct ks_runtime_params p = {.dir = dir, .skip_gen_check = 1, .keep_rows = KEEP_ROWS};
    if (ks_runtime_run(s, &p, &b, &xb, err, sizeof err) != KS_OK)
        fail_msg("runtime: %s", err);
    printf("runtime_tiny: %llu table entries refreshed, %llu table rebuilds; unchecked: %llu reads refused, "
           "output sum %.9g against %.9g\n",
           (unsigned long long)xa.table_refreshed, (unsigned long long)a.table_rebuilds,
           (unsigned long long)xb.stale_refused, xb.out_checksum, xa.out_checksum);
    // the same decisions (the table is not the cache manager's), other data
    assert_memory_equal(&a.cache.found, &b.cache.found, sizeof a.cache.found);
    assert_true(xb.stale_refused > 0);
    assert_true(xb.out_checksum != xa.out_checksum);
    // launch by launch, at the bound the GPU test allows: the comparison
    // fails, and names the first launch that differs
    logged_whole(&xa);
    logged_whole(&xb);
    struct ks_runtime_diff d;
    uint64_t n = ks_runtime_compare(&xa, &xb, GPU_TOL, &d);
    print_diff("unchecked against checked", &d);
    assert_true(n > 0 && d.differing == n);
    assert_true(d.first >= 0 && (uint64_t)d.first < d.launches);
    assert_true(d.err > GPU_TOL);
    const struct ks_runtime_launch *f = &xb.launches[d.first];
    assert_true(d.step == f->step && d.layer == f->layer && d.part == f->part && d.seq < f->n_seqs);
    assert_int_equal(d.req, xb.row_req[f->row + d.seq]);
    // outputs depend only on the data read, and a read the check after the
    // launch accepts read the right data: every launch that differs holds a
    // refused read, so the first one is at or after the first stale read
    uint64_t stale = 0, stale_differ = 0;
    int64_t first_stale = -1;
    for (uint64_t i = 0; i < d.launches; i++) {
        const struct ks_runtime_launch *g = &xb.launches[i];
        struct ks_runtime_extra ia = xa, ib = xb; // the one launch i alone
        ia.launches = &xa.launches[i], ib.launches = &xb.launches[i];
        ia.n_launches = ib.n_launches = 1;
        struct ks_runtime_diff di;
        int differs = ks_runtime_compare(&ia, &ib, GPU_TOL, &di) > 0;
        if (differs)
            assert_true(g->stale_refused > 0);
        if (g->stale_refused > 0) {
            first_stale = first_stale < 0 ? (int64_t)i : first_stale;
            stale++;
            stale_differ += differs;
        }
    }
    printf("unchecked: %llu launches with refused reads, %llu of them differ (a refused read may find its old "
           "page still holding its block)\n", (unsigned long long)stale, (unsigned long long)stale_differ);
    assert_true(first_stale >= 0 && d.first >= first_stale);
    ks_runtime_extra_fini(&xa);
    ks_runtime_extra_fini(&xb);
    ks_run_result_fini(&a);
    ks_run_result_fini(&b);
    ks_scenario_free(s);
}

// One stale read in a whole run is seen: the negative control limited to the
// first stale entry whose old L1 page holds another block's data. Exactly
// one launch reads wrong data, and the comparison at the GPU test's bound
// finds that launch and no other.
static void one_stale_read_is_caught(void **state)
{
    (void)state;
#ifdef __SANITIZE_THREAD__
    printf("one stale read: not run under ThreadSanitizer (it reads a page a lane may write)\n");
    return;
#endif
    struct ks_scenario *s = load_tiny(NULL);
    struct ks_run_result a, b;
    struct ks_runtime_extra xa, xb;
    run_once(s, &a, &xa);
    char err[1024] = "";
    struct ks_runtime_params p = {.dir = dir, .skip_gen_check = 1, .stale_reads = 1, .keep_rows = KEEP_ROWS};
    if (ks_runtime_run(s, &p, &b, &xb, err, sizeof err) != KS_OK)
        fail_msg("runtime: %s", err);
    assert_memory_equal(&a.cache.found, &b.cache.found, sizeof a.cache.found);
    assert_int_equal(xb.stale_refused, 1);
    logged_whole(&xa);
    logged_whole(&xb);
    struct ks_runtime_diff d;
    assert_int_equal(ks_runtime_compare(&xa, &xb, GPU_TOL, &d), 1);
    print_diff("one stale read", &d);
    assert_true(d.first >= 0 && d.err > GPU_TOL);
    for (uint64_t i = 0; i < xb.n_launches; i++)
        assert_int_equal(xb.launches[i].stale_refused, (uint64_t)d.first == i);
    ks_runtime_extra_fini(&xa);
    ks_runtime_extra_fini(&xb);
    ks_run_result_fini(&a);
    ks_run_result_fini(&b);
    ks_scenario_free(s);
}

// The launch log keeps what params.keep_rows allows, from the first launch
// on, and counts the launches after it.
static void launch_log_bounded(void **state)
{
    (void)state;
    struct ks_scenario *s = load_tiny(NULL);
    struct ks_run_result a;
    struct ks_runtime_extra xa;
    char err[1024] = "";
    struct ks_runtime_params p = {.dir = dir, .keep_rows = 10};
    if (ks_runtime_run(s, &p, &a, &xa, err, sizeof err) != KS_OK)
        fail_msg("runtime: %s", err);
    assert_true(xa.n_rows <= 10 && xa.n_launches > 0 && xa.launches_unlogged > 0);
    assert_int_equal(xa.n_launches + xa.launches_unlogged, xa.kernel_launches);
    assert_int_equal(xa.launches[0].step, 0);
    assert_int_equal(xa.launches[0].row, 0);
    for (uint64_t i = 1; i < xa.n_launches; i++)
        assert_int_equal(xa.launches[i].row, xa.launches[i - 1].row + xa.launches[i - 1].n_seqs);
    ks_runtime_extra_fini(&xa);
    ks_run_result_fini(&a);
    ks_scenario_free(s);
}

// With L1 too small for every request's selection, some misses find no
// room: the kernel reads them where they lie, through a scratch page, and
// the runtime counts them as the simulator does (outside_reads).
static void reads_outside_l1(void **state)
{
    (void)state;
    struct ks_scenario *s = load_tiny("platform.hbm_bytes=1MB");
    struct ks_run_result a;
    struct ks_runtime_extra xa;
    run_once(s, &a, &xa);
    printf("runtime_tiny, 1 MB of HBM: %llu reads, %llu via scratch, %llu refused\n", (unsigned long long)xa.reads,
           (unsigned long long)xa.reads_scratch, (unsigned long long)xa.stale_refused);
    assert_true(xa.reads_scratch > 0);
    assert_int_equal(a.outside_reads, xa.reads_scratch);
    assert_int_equal(xa.reads, a.cache.accesses);
    assert_int_equal(xa.stale_refused, 0);
    ks_runtime_extra_fini(&xa);
    ks_run_result_fini(&a);
    ks_scenario_free(s);
}

static void refuses_what_it_cannot_run(void **state)
{
    (void)state;
    struct ks_scenario *s = load_tiny("cache.compression=int8");
    char err[4096];
    struct ks_run_result r;
    assert_int_equal(ks_runtime_run(s, NULL, &r, NULL, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "cache.compression"));
    ks_scenario_free(s);
}

int main(int argc, char **argv)
{
    if (!direct_dir()) {
        fprintf(stderr, "no folder under %s takes O_DIRECT: skipped\n",
                getenv("KS_RUNTIME_DIR") ? getenv("KS_RUNTIME_DIR") : "/var/tmp");
        return 77;
    }
    // `runtime_runtime gpu`: GPU mode alone, 77 (CTest: skipped) without a GPU
    if (argc > 1 && strcmp(argv[1], "gpu") == 0) {
        char why[KS_KERNEL_ERR_LEN] = "";
        int rc = 77;
        if (ks_device_count(why, sizeof why) <= 0) {
            printf("no GPU (%s): GPU mode not run, skipped\n", why);
        } else {
            const struct CMUnitTest one[] = {cmocka_unit_test(gpu_mode_same_decisions)};
            rc = cmocka_run_group_tests(one, NULL, NULL);
        }
        rmdir(dir);
        return rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiers_and_determinism),
        cmocka_unit_test(copies_ahead_of_layers),
        cmocka_unit_test(generation_check_before_reads),
        cmocka_unit_test(one_stale_read_is_caught),
        cmocka_unit_test(launch_log_bounded),
        cmocka_unit_test(reads_outside_l1),
        cmocka_unit_test(refuses_what_it_cannot_run),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
