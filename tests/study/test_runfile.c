// test_runfile.c - what a report says about a run's summary (issue 20):
// every key ks_run_summarise makes has its group and unit in runfile.c's
// table (README "Commands": report shows the summary grouped, in units), a
// figure reads in its unit, the rule for what bounded a run takes each of
// its branches on hand-made figures, the headline and an objective's verdict
// read as documented, and the notes survive the result file.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "compare.h"
#include "h5read.h"
#include "runfile.h"
#include "status.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return ks_tmpdir_make(dir, sizeof dir, "ks-runfile");
}

static int teardown(void **state)
{
    (void)state;
    return ks_tmpdir_remove(dir);
}

// The summary of an empty run under a scenario that sets every objective,
// so that every key ks_run_summarise can make is there (goodput, slo_*).
static void summarise_all(struct ks_run_summary *s, struct ks_run_result *r)
{
    static struct ks_scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.name = "t";
    sc.seed = 7;
    double *slo = &sc.slo.tpot_p99;
    for (size_t i = 0; i < sizeof sc.slo / sizeof(double); i++)
        slo[i] = 0.001 * (double)(i + 1);
    memset(r, 0, sizeof *r);
    r->sim_time = 1;
    s->fig = json_object();
    s->notes = json_object();
    s->err = 0;
    ks_run_summarise(s, &sc, r);
    assert_int_equal(s->err, 0);
}

// Every key has a group that is not "other": the table keeps up with
// ks_run_summarise.
static void every_key_grouped(void **state)
{
    (void)state;
    struct ks_run_summary s;
    struct ks_run_result r;
    summarise_all(&s, &r);
    assert_non_null(json_object_get(s.fig, "goodput"));
    assert_non_null(json_object_get(s.fig, "slo_margin_e2el_mean"));
    const char *key;
    json_t *v;
    json_object_foreach(s.fig, key, v)
    {
        struct ks_run_key_kind k = ks_run_key_kind(key);
        if (strcmp(k.group, "other") == 0)
            fail_msg("summary key %s has no group in runfile.c's key table", key);
        int known = 0;
        for (size_t g = 0; ks_run_groups[g]; g++)
            known |= strcmp(ks_run_groups[g], k.group) == 0;
        assert_true(known);
    }
    assert_string_equal(ks_run_key_kind("a_key_from_the_future").group, "other");
    json_decref(s.fig);
    json_decref(s.notes);
}

static void shows(const char *key, json_t *v, const char *want)
{
    char buf[128];
    ks_run_format(key, v, buf, sizeof buf);
    json_decref(v);
    if (strcmp(buf, want) != 0)
        fail_msg("%s shows as '%s', not '%s'", key, buf, want);
}

static void units(void **state)
{
    (void)state;
    shows("tpot_p99", json_real(0.0141), "14.1 ms");
    shows("ttft_mean", json_real(1.6041), "1604 ms");
    shows("hit_rate_l1", json_real(0.852), "85.2%");
    shows("slo_margin_tpot_p99", json_real(-0.12), "-12%");
    shows("output_throughput", json_real(9588.89), "9589 tokens/s");
    shows("request_throughput", json_real(9.393), "9.39 requests/s");
    shows("migrated_bytes_l2_l1", json_real(34839986176.0), "34.8 GB");
    shows("kv_sent_bytes", json_integer(512000), "512 kB");
    shows("backup_bytes", json_integer(0), "0 B");
    shows("copy_bandwidth", json_real(12057591271.0), "12.1 GB/s");
    shows("decode_flops", json_real(820860319932416.0), "821 TFLOP");
    shows("prefill_seconds", json_real(181.03), "181 s");
    shows("tokens", json_integer(47980), "47980");
    shows("seed", json_integer(INT64_MAX), "9223372036854775807");
    shows("slo_met", json_integer(1), "yes");
    shows("truncated", json_integer(0), "no");
    shows("tpot_p50", json_null(), "not measured");
    shows("slo_missed", json_string("none"), "none");
    shows("a_key_from_the_future", json_real(0.125), "0.125");
}

// fig from "key=value" pairs (numbers), NULL-terminated.
static json_t *figures(const char *pair, ...)
{
    json_t *fig = json_object();
    va_list ap;
    va_start(ap, pair);
    for (const char *p = pair; p; p = va_arg(ap, const char *)) {
        char key[64];
        const char *eq = strchr(p, '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
        json_object_set_new(fig, key, json_real(atof(eq + 1)));
    }
    va_end(ap);
    return fig;
}

static void bound_is(json_t *fig, enum ks_run_bound want, int capacity)
{
    struct ks_run_limit l = ks_run_bound(fig);
    json_decref(fig);
    assert_int_equal(l.bound, want);
    assert_int_equal(l.capacity, capacity);
}

// Each branch of the rule in ks_run_bound, and that the first that holds
// decides.
static void bound_rule(void **state)
{
    (void)state;
    bound_is(figures("stall_fraction=0.25", "compute_bound_fraction=0.9", NULL), KS_BOUND_HOST_LINK, 0);
    bound_is(figures("stall_fraction=0.19", "compute_bound_fraction=0.5", "comm_fraction=0.5", NULL),
             KS_BOUND_COMPUTE, 0);
    bound_is(figures("compute_bound_fraction=0.49", "comm_fraction=0.3", "host_fraction=0.9", NULL),
             KS_BOUND_COLLECTIVES, 0);
    bound_is(figures("comm_fraction=0.29", "host_fraction=0.3", NULL), KS_BOUND_HOST, 0);
    // prefill 10 s against decode 1000 steps x 5 ms = 5 s: two thirds
    bound_is(figures("prefill_seconds=10", "steps=1000", "itl_mean=0.005", NULL), KS_BOUND_PREFILL, 0);
    bound_is(figures("prefill_seconds=4", "steps=1000", "itl_mean=0.005", NULL), KS_BOUND_HBM_BANDWIDTH, 0);
    // a prefill pool: its seconds are not the decode GPUs'
    bound_is(figures("prefill_seconds=10", "steps=1000", "itl_mean=0.005", "kv_sent_bytes=1e9", NULL),
             KS_BOUND_HBM_BANDWIDTH, 0);
    bound_is(figures("stall_fraction=0.01", NULL), KS_BOUND_HBM_BANDWIDTH, 0);
    bound_is(json_object(), KS_BOUND_HBM_BANDWIDTH, 0); // an older file's missing figures never hold
    // HBM capacity: a miss without a page, a retraction, > 5% of the arrivals left waiting
    bound_is(figures("misses_unplanned=1", NULL), KS_BOUND_HBM_BANDWIDTH, 1);
    bound_is(figures("retracted=2", NULL), KS_BOUND_HBM_BANDWIDTH, 1);
    bound_is(figures("requests_arrived=100", "requests_admitted=94", NULL), KS_BOUND_HBM_BANDWIDTH, 1);
    bound_is(figures("requests_arrived=100", "requests_admitted=95", NULL), KS_BOUND_HBM_BANDWIDTH, 0);
    assert_string_equal(ks_run_bound_text(KS_BOUND_HBM_BANDWIDTH), "HBM bandwidth (memory-bound decode)");
}

static void words(void **state)
{
    (void)state;
    char buf[1024];
    json_t *fig = figures("output_throughput=9588.89", "tokens=47980", "tpot_p50=0.00379", "tpot_p99=0.0141",
                          "hit_rate_l1=0.852", "stall_fraction=0.0094", "compute_bound_fraction=0.7",
                          "slo_tpot_p99=0.02", "slo_margin_tpot_p99=0.295", "slo_met=1", NULL);
    ks_compare_headline(fig, buf, sizeof buf);
    assert_string_equal(buf, "Output 9589 tokens/s; TPOT P50 3.79 ms, P99 14.1 ms; objectives met (1 of 1). L1 "
                             "hit rate 85.2%, 0.94% of GPU time stalled waiting for blocks; bounded by compute.");
    ks_compare_objective(fig, "tpot_p99", buf, sizeof buf);
    assert_string_equal(buf, "TPOT P99 <= 20 ms: 14.1 ms, met by 29.5%");
    json_object_set_new(fig, "tpot_p99", json_real(0.0224));
    json_object_set_new(fig, "slo_margin_tpot_p99", json_real(-0.12));
    ks_compare_objective(fig, "tpot_p99", buf, sizeof buf);
    assert_string_equal(buf, "TPOT P99 <= 20 ms: 22.4 ms, missed by 12%");
    json_object_set_new(fig, "slo_margin_tpot_p99", json_null());
    ks_compare_objective(fig, "tpot_p99", buf, sizeof buf);
    assert_string_equal(buf, "TPOT P99 <= 20 ms: not measured, missed");
    json_decref(fig);
    fig = json_object();
    ks_compare_headline(fig, buf, sizeof buf);
    json_decref(fig);
    assert_string_equal(buf, "The result holds no summary figures.");
    ks_compare_change(100, 112.3, buf, sizeof buf);
    assert_string_equal(buf, "+12.3%");
    ks_compare_change(8, 6, buf, sizeof buf);
    assert_string_equal(buf, "-25.0%");
    ks_compare_change(0, 1, buf, sizeof buf);
    assert_string_equal(buf, "from 0");
    ks_compare_change(3, 3, buf, sizeof buf);
    assert_string_equal(buf, "=");
    ks_compare_change(NAN, 3, buf, sizeof buf);
    assert_string_equal(buf, "");
}

// The notes travel in the file (/summary_notes) and read back with the
// figures; without a scenario there is no /scenario.
static void notes_round_trip(void **state)
{
    (void)state;
    struct ks_run_summary s;
    struct ks_run_result r;
    summarise_all(&s, &r);
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/r.h5", dir);
    assert_int_equal(ks_run_write(path, &s, NULL, &r, err, sizeof err), KS_OK);
    uint64_t bytes;
    hid_t f = ks_h5read_open(path, &bytes, err, sizeof err);
    assert_true(f >= 0);
    struct ks_run_summary back = {.fig = json_object(), .notes = json_object()};
    json_t *scenario = json_true(); // a singleton, not allocated: the call must set it (to NULL: no /scenario)
    assert_int_equal(ks_run_read_summary(f, &back, &scenario, err, sizeof err), KS_OK);
    assert_null(scenario);
    assert_int_equal(json_object_size(back.fig), json_object_size(s.fig));
    assert_int_equal(json_object_size(back.notes), json_object_size(s.notes));
    assert_string_equal(json_string_value(json_object_get(back.notes, "tpot_p99")),
                        json_string_value(json_object_get(s.notes, "tpot_p99")));
    assert_true(json_is_null(json_object_get(back.fig, "tpot_p99"))); // NaN in the file, null again
    assert_int_equal(json_integer_value(json_object_get(back.fig, "seed")), 7);
    H5Fclose(f);
    json_decref(back.fig);
    json_decref(back.notes);
    json_decref(s.fig);
    json_decref(s.notes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_key_grouped),
        cmocka_unit_test(units),
        cmocka_unit_test(bound_rule),
        cmocka_unit_test(words),
        cmocka_unit_test(notes_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
