// test_workload.c - the request stream: exact values for constant and uniform
// counts, sample means against closed forms (poisson gaps, lognormal,
// normal), prefix shares and group uniformity, session growth, the
// max_context clamp, trace replay (an excerpt and the whole trace, both in
// tests/fixtures/data), bad files, determinism.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "scenario.h"
#include "status.h"
#include "workload.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define EXCERPT KS_SOURCE_DIR "/tests/fixtures/data/azure_conv_excerpt.csv"
#define FULL_TRACE KS_SOURCE_DIR "/tests/fixtures/data/azure_conv_2023.csv"

static char err[4096];
static char tmpdir[] = "/tmp/ks-test-workload-XXXXXX";

// A scenario built in C: poisson at 10/s, constant 100-token prompts and
// 10-token outputs, max_context 1 Mi tokens, no prefix, single turns.
static struct ks_scenario base(void)
{
    struct ks_scenario s;
    memset(&s, 0, sizeof s);
    s.seed = 42;
    s.model.max_context = 1u << 20;
    s.workload.arrival.kind = KS_ARRIVAL_POISSON;
    s.workload.arrival.rate = 10;
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_CONSTANT, .value = 100, .min = 100, .max = 100};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_CONSTANT, .value = 10, .min = 10, .max = 10};
    s.workload.shared_prefix.groups = 1;
    s.workload.sessions.turns = 1;
    return s;
}

static struct ks_workload *make(const struct ks_scenario *s)
{
    struct ks_workload *w = ks_workload_new(s, err, sizeof err);
    if (!w)
        fail_msg("ks_workload_new: %s", err);
    return w;
}

static struct ks_request_spec next(struct ks_workload *w)
{
    struct ks_request_spec r;
    int st = ks_workload_next(w, &r);
    if (st != 1)
        fail_msg("ks_workload_next: %d, expected a request", st);
    return r;
}

// Writes text into a file of the test's folder and returns its path (static).
static const char *put(const char *name, const char *text)
{
    static char path[4][512];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void constant_and_uniform(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    s.workload.requests = 1000;
    struct ks_workload *w = make(&s);
    for (uint64_t i = 0; i < 1000; i++) {
        struct ks_request_spec r = next(w);
        assert_int_equal(r.id, i);
        assert_int_equal(r.prompt_tokens, 100);
        assert_int_equal(r.output_tokens, 10);
        assert_int_equal(r.prefix_group, KS_NONE);
        assert_int_equal(r.prefix_tokens, 0);
        assert_int_equal(r.session, i);
        assert_int_equal(r.turn, 0);
        assert_int_equal(r.history_tokens, 0);
        assert_true(r.prev_id == KS_WORKLOAD_NO_ID);
    }
    struct ks_request_spec r;
    assert_int_equal(ks_workload_next(w, &r), 0);
    assert_int_equal(ks_workload_next(w, &r), 0);
    ks_workload_free(w);

    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_UNIFORM, .min = 10, .max = 20};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_UNIFORM, .min = 1, .max = 1};
    s.workload.requests = 110000;
    w = make(&s);
    uint64_t seen[21] = {0};
    for (int i = 0; i < 110000; i++) {
        r = next(w);
        assert_in_range(r.prompt_tokens, 10, 20);
        assert_int_equal(r.output_tokens, 1);
        seen[r.prompt_tokens]++;
    }
    double chi2 = 0; // 11 values, 10 degrees of freedom
    for (int v = 10; v <= 20; v++)
        chi2 += (seen[v] - 10000.0) * (seen[v] - 10000.0) / 10000.0;
    assert_true(chi2 < 29.59); // p = 0.001
    ks_workload_free(w);
    ks_workload_free(NULL);
}

static void poisson(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    const int n = 100000;
    const double rate = 5;
    s.workload.arrival.rate = rate;
    s.workload.requests = 0; // unbounded
    struct ks_workload *w = make(&s);
    double last = 0, sum = 0;
    int in_window = 0;
    for (int i = 0; i < n; i++) {
        struct ks_request_spec r = next(w);
        assert_true(r.arrival >= last);
        sum += r.arrival - last;
        last = r.arrival;
        in_window += r.arrival >= 1000 && r.arrival < 3000;
    }
    // exponential gaps: mean 1/rate, standard deviation 1/rate
    double se = (1 / rate) / sqrt(n);
    assert_true(fabs(sum / n - 1 / rate) < 3 * se);
    // a Poisson count over 2000 s: mean and variance rate * 2000
    double expect = rate * 2000;
    assert_true(fabs(in_window - expect) < 3 * sqrt(expect));
    ks_workload_free(w);
}

// Sample mean of n prompt draws.
static double prompt_mean(const struct ks_scenario *s, int n)
{
    struct ks_workload *w = make(s);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += next(w).prompt_tokens;
    ks_workload_free(w);
    return sum / n;
}

static void lognormal_and_normal(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    const int n = 100000;
    // clamps far in the tails (min 1, max e^5.125 * 60): they change the mean by far less than its error
    double mu = 5, sigma = 0.5;
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_LOGNORMAL, .mu = mu, .sigma = sigma, .min = 1,
                                                .max = 10000};
    double mean = exp(mu + sigma * sigma / 2), sd = mean * sqrt(exp(sigma * sigma) - 1);
    double got = prompt_mean(&s, n);
    assert_true(fabs(got - mean) < 4 * sd / sqrt(n) + 0.05); // 0.05: rounding
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_NORMAL, .mean = 1000, .stddev = 100, .min = 1,
                                                .max = 100000};
    got = prompt_mean(&s, n);
    assert_true(fabs(got - 1000) < 4 * 100 / sqrt(n) + 0.05);
    // every draw is within the clamp
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_NORMAL, .mean = 100, .stddev = 100, .min = 50,
                                                .max = 150};
    s.workload.requests = 10000;
    struct ks_workload *w = make(&s);
    int lo = 0, hi = 0;
    for (int i = 0; i < 10000; i++) {
        uint32_t p = next(w).prompt_tokens;
        assert_in_range(p, 50, 150);
        lo += p == 50;
        hi += p == 150;
    }
    assert_true(lo > 2000 && hi > 2000); // about 31% of draws fall beyond each clamp
    ks_workload_free(w);
}

static void prefix(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    const int n = 100000, groups = 8;
    s.workload.shared_prefix = (struct ks_scenario_prefix){.tokens = 150, .groups = groups, .fraction = 0.3};
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_UNIFORM, .min = 100, .max = 200};
    struct ks_workload *w = make(&s);
    uint64_t count[8] = {0}, with = 0;
    for (int i = 0; i < n; i++) {
        struct ks_request_spec r = next(w);
        if (r.prefix_group == KS_NONE) {
            assert_int_equal(r.prefix_tokens, 0);
            continue;
        }
        assert_in_range(r.prefix_group, 0, groups - 1);
        assert_int_equal(r.prefix_tokens, r.prompt_tokens < 150 ? r.prompt_tokens : 150);
        count[r.prefix_group]++;
        with++;
    }
    double share = (double)with / n, se = sqrt(0.3 * 0.7 / n);
    assert_true(fabs(share - 0.3) < 3 * se);
    double chi2 = 0, e = (double)with / groups; // 7 degrees of freedom
    for (int g = 0; g < groups; g++)
        chi2 += (count[g] - e) * (count[g] - e) / e;
    assert_true(chi2 < 24.32); // p = 0.001
    ks_workload_free(w);

    s.workload.shared_prefix.fraction = 1;
    s.workload.shared_prefix.groups = 1;
    w = make(&s);
    for (int i = 0; i < 100; i++)
        assert_int_equal(next(w).prefix_group, 0);
    ks_workload_free(w);
}

static void sessions(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    const uint32_t turns = 4;
    s.workload.arrival.rate = 2;
    s.workload.sessions = (struct ks_scenario_sessions){.turns = turns, .think_time = 3};
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_UNIFORM, .min = 50, .max = 80};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_UNIFORM, .min = 5, .max = 30};
    s.workload.shared_prefix = (struct ks_scenario_prefix){.tokens = 40, .groups = 3, .fraction = 0.5};
    s.workload.requests = 4000;
    enum { MAX = 4000 };
    static struct ks_request_spec all[MAX];
    static uint64_t last_of[MAX]; // session -> id of its latest turn
    struct ks_workload *w = make(&s);
    double t = 0;
    uint64_t opened = 0;
    for (uint64_t i = 0; i < MAX; i++) {
        struct ks_request_spec r = all[i] = next(w);
        assert_int_equal(r.id, i);
        assert_true(r.arrival >= t);
        t = r.arrival;
        assert_true(r.session <= opened);
        if (r.turn == 0) {
            assert_int_equal(r.session, opened);
            assert_in_range(r.prompt_tokens, 50, 80);
            assert_int_equal(r.history_tokens, 0);
            assert_true(r.prev_id == KS_WORKLOAD_NO_ID);
            opened++;
        } else {
            const struct ks_request_spec *p = &all[last_of[r.session]];
            assert_int_equal(r.prev_id, p->id);
            assert_int_equal(r.turn, p->turn + 1);
            assert_true(r.arrival == p->arrival + 3);
            uint32_t msg = r.prompt_tokens - p->prompt_tokens - p->output_tokens;
            assert_in_range(msg, 50, 80); // grows by exactly the history plus one new message
            assert_int_equal(r.history_tokens, p->prompt_tokens + p->output_tokens);
            assert_int_equal(r.prefix_group, p->prefix_group);
            assert_int_equal(r.prefix_tokens, p->prefix_tokens);
        }
        assert_in_range(r.turn, 0, turns - 1);
        assert_in_range(r.output_tokens, 5, 30);
        last_of[r.session] = i;
    }
    struct ks_request_spec r;
    assert_int_equal(ks_workload_next(w, &r), 0);
    ks_workload_free(w);
    assert_true(opened > MAX / turns); // the limit cut the last sessions short

    // closed: waves of `concurrency` sessions, every arrival 0
    s.workload.arrival = (struct ks_scenario_arrival){.kind = KS_ARRIVAL_CLOSED, .concurrency = 3};
    s.workload.requests = 0;
    w = make(&s);
    for (uint64_t i = 0; i < 10000; i++) {
        r = next(w);
        uint64_t wave = i / (3 * turns), k = i % (3 * turns);
        assert_true(r.arrival == 0);
        assert_int_equal(r.turn, k / 3);
        assert_int_equal(r.session, wave * 3 + k % 3);
    }
    ks_workload_free(w);
}

static void max_context(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    s.model.max_context = 1000;
    s.workload.prompt_tokens.value = 900;
    s.workload.output_tokens.value = 300;
    s.workload.requests = 1;
    struct ks_workload *w = make(&s);
    struct ks_request_spec r = next(w);
    assert_int_equal(r.prompt_tokens, 900); // the output gives way first
    assert_int_equal(r.output_tokens, 100);
    ks_workload_free(w);

    s.workload.prompt_tokens.value = 5000; // beyond max_context: then the prompt too
    w = make(&s);
    r = next(w);
    assert_int_equal(r.prompt_tokens, 999);
    assert_int_equal(r.output_tokens, 1);
    ks_workload_free(w);

    // a conversation outgrows the context: cut to max_context, output 1
    s.workload.prompt_tokens.value = 300;
    s.workload.output_tokens.value = 100;
    s.workload.sessions.turns = 4;
    s.workload.requests = 4;
    w = make(&s);
    uint32_t want[4][2] = {{300, 100}, {700, 100}, {999, 1}, {999, 1}};
    for (int i = 0; i < 4; i++) {
        r = next(w);
        assert_int_equal(r.turn, i);
        assert_int_equal(r.prompt_tokens, want[i][0]);
        assert_int_equal(r.output_tokens, want[i][1]);
        assert_true((uint64_t)r.prompt_tokens + r.output_tokens <= 1000);
    }
    assert_int_equal(r.history_tokens, 999); // 999 + 1 cut to the prompt
    ks_workload_free(w);

    s.model.max_context = 1;
    assert_null(ks_workload_new(&s, err, sizeof err));
    assert_non_null(strstr(err, "max_context"));
}

// Reads the rest of w's requests; checks their order; returns their count.
static uint64_t drain(struct ks_workload *w, struct ks_request_spec *first, struct ks_request_spec *last)
{
    uint64_t n = 0;
    struct ks_request_spec r;
    int st;
    double t = 0;
    while ((st = ks_workload_next(w, &r)) == 1) {
        if (n > 0)
            assert_int_equal(r.id, last->id + 1);
        assert_true(r.arrival >= t);
        t = r.arrival;
        if (n++ == 0)
            *first = r;
        *last = r;
    }
    assert_int_equal(st, 0);
    return n;
}

static void trace_excerpt(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    s.workload.arrival = (struct ks_scenario_arrival){.kind = KS_ARRIVAL_TRACE, .file = EXCERPT};
    // a trace distribution on the CSV reads its column, row by row
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1, .file = EXCERPT};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1, .file = EXCERPT};
    struct ks_workload *w = make(&s);
    struct ks_request_spec a, b, r = next(w);
    assert_true(r.arrival == 0.0);
    assert_int_equal(r.prompt_tokens, 374);
    assert_int_equal(r.output_tokens, 44);
    r = next(w);
    assert_true(r.arrival == 4.314579);
    assert_int_equal(r.prompt_tokens, 396);
    assert_int_equal(r.output_tokens, 109);
    assert_int_equal(drain(w, &a, &b), 197);
    assert_true(b.arrival == 61.145266);
    assert_int_equal(b.prompt_tokens, 1027);
    assert_int_equal(b.output_tokens, 388);
    ks_workload_free(w);

    s.workload.requests = 50; // the limit ends the replay early
    w = make(&s);
    assert_int_equal(drain(w, &a, &b), 50);
    assert_true(b.arrival == 26.461144);
    ks_workload_free(w);
}

// detail.nodes thins a trace to the sampled nodes' share (keep_one_in):
// trace arrivals keep whole requests at random, each with the lengths it
// has in the whole run (here the same file's, in file order), in the
// file's order; under poisson arrivals a trace distribution's counts in
// file order are skipped the same way; one in 1 keeps every row.
static void trace_thinned(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    s.workload.arrival = (struct ks_scenario_arrival){.kind = KS_ARRIVAL_TRACE, .file = EXCERPT};
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1, .file = EXCERPT};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1, .file = EXCERPT};
    enum { ROWS = 199 };
    struct ks_request_spec row[ROWS], r;
    struct ks_workload *w = make(&s);
    for (int i = 0; i < ROWS; i++)
        row[i] = next(w);
    assert_int_equal(ks_workload_next(w, &r), 0);
    ks_workload_free(w);
    s.workload.keep_one_in = 1; // every row, as 0
    w = make(&s);
    for (int i = 0; i < ROWS; i++)
        assert_true(next(w).arrival == row[i].arrival);
    ks_workload_free(w);

    s.workload.keep_one_in = 4;
    w = make(&s);
    int kept = 0, at = 0;
    while (ks_workload_next(w, &r) == 1) {
        while (at < ROWS && row[at].arrival != r.arrival) // the rows skipped
            at++;
        assert_true(at < ROWS); // a row of the file, after the previous one
        assert_int_equal(r.prompt_tokens, row[at].prompt_tokens);
        assert_int_equal(r.output_tokens, row[at].output_tokens);
        at++;
        kept++;
    }
    ks_workload_free(w);
    // binomial(199, 1/4): mean 49.75, sd 6.1; within 5 sd
    assert_in_range(kept, 19, 80);

    // counts in file order under poisson arrivals: a subsequence of the file's
    s = base();
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1, .file = EXCERPT};
    s.workload.keep_one_in = 3;
    w = make(&s);
    at = 0;
    for (int i = 0; i < 40; i++) {
        r = next(w);
        while (at < ROWS && row[at].prompt_tokens != r.prompt_tokens)
            at++;
        assert_true(at < ROWS);
        at++;
    }
    ks_workload_free(w);
    assert_true(at > 40); // some were skipped: 40 of about 120
}

// A scenario file around a trace arrival; workload_extra is Lua table fields.
static struct ks_scenario *load(const char *workload_extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "return {\n"
             "  platform = {profile = \"h200_sxm_pcie5\", nodes = 1, gpus_per_node = 1},\n"
             "  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = \"fp16\", weight_bytes = \"16GB\"},\n"
             "  workload = {arrival = {kind = \"trace\", file = \"%s\"}, %s},\n"
             "}\n",
             EXCERPT, workload_extra);
    const char *file = put("trace.lua", text);
    struct ks_scenario *s = NULL;
    if (ks_scenario_load(file, NULL, &s, err, sizeof err) != KS_OK)
        fail_msg("ks_scenario_load: %s", err);
    return s;
}

static void trace_lengths(void **state)
{
    (void)state;
    // lengths left at their defaults: the trace's own
    struct ks_scenario *s = load("");
    struct ks_workload *w = make(s);
    ks_scenario_free(s); // nothing of it is kept
    struct ks_request_spec a, b, r = next(w);
    assert_int_equal(r.prompt_tokens, 374);
    assert_int_equal(r.output_tokens, 44);
    assert_int_equal(drain(w, &a, &b), 198);
    assert_int_equal(b.prompt_tokens, 1027);
    assert_int_equal(b.output_tokens, 388);
    ks_workload_free(w);

    // a prompt distribution in the scenario wins; the outputs stay the trace's
    s = load("prompt_tokens = {kind = \"uniform\", min = 32000, max = 64000}");
    w = make(s);
    ks_scenario_free(s);
    r = next(w);
    assert_in_range(r.prompt_tokens, 32000, 64000);
    assert_int_equal(r.output_tokens, 44);
    assert_int_equal(drain(w, &a, &b), 198);
    assert_int_equal(b.output_tokens, 388);
    ks_workload_free(w);
}

static void full_trace(void **state)
{
    (void)state;
    // main runs this case alone, and only where ../shared is (not in CI:
    // the excerpt covers the format there)
    struct ks_scenario s = base();
    s.workload.arrival = (struct ks_scenario_arrival){.kind = KS_ARRIVAL_TRACE, .file = FULL_TRACE};
    struct ks_workload *w = make(&s);
    struct ks_request_spec a, b;
    assert_int_equal(drain(w, &a, &b), 19366);
    assert_true(a.arrival == 0.0);
    assert_true(b.arrival == 3501.721937);
    ks_workload_free(w);
}

static void count_files(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 6, .file = (char *)put("p.txt",
                                                                                                   "5\n7\n\n 9\r\n")};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1, .max = 8,
                                                .file = (char *)put("o.txt", "4\n0\n12\n")};
    struct ks_workload *w = make(&s);
    uint32_t want_p[] = {6, 7, 9, 6, 7, 9, 6}, want_o[] = {4, 1, 8, 4, 1, 8, 4};
    for (int i = 0; i < 7; i++) {
        struct ks_request_spec r = next(w);
        assert_int_equal(r.prompt_tokens, want_p[i]); // cycled, clamped to [min, max]
        assert_int_equal(r.output_tokens, want_o[i]);
    }
    ks_workload_free(w);
}

// ks_workload_new refuses s; err holds every expected text.
static void refused(const struct ks_scenario *s, const char *want1, const char *want2)
{
    assert_null(ks_workload_new(s, err, sizeof err));
    if (!strstr(err, want1) || (want2 && !strstr(err, want2)))
        fail_msg("'%s' lacks '%s' or '%s'", err, want1, want2 ? want2 : "");
}

static void bad_files(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    struct ks_dist *d = &s.workload.prompt_tokens;
    *d = (struct ks_dist){.kind = KS_DIST_TRACE, .min = 1};
    d->file = (char *)put("missing.txt", "");
    unlink(d->file);
    refused(&s, "missing.txt: cannot read", NULL);
    d->file = (char *)put("empty.txt", "\n\n");
    refused(&s, "empty.txt: empty", NULL);
    d->file = (char *)put("word.txt", "12\nabc\n");
    refused(&s, "word.txt:2:", "'abc' is not a number");
    d->file = (char *)put("neg.txt", "12\n13\n-4\n");
    refused(&s, "neg.txt:3:", "'-4' is negative");
    d->file = (char *)put("frac.txt", "12.5\n");
    refused(&s, "frac.txt:1:", "'12.5' is not a whole number");
    d->file = (char *)put("nocol.csv", "arrived_at,num_decode_tokens\n0,1\n");
    refused(&s, "nocol.csv:1:", "no column 'num_prefill_tokens'");

    s = base();
    s.workload.arrival = (struct ks_scenario_arrival){.kind = KS_ARRIVAL_TRACE};
    s.workload.arrival.file = (char *)put("back.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                                                      "0.5,10,2\n1.5,10,2\n1.25,10,2\n");
    refused(&s, "back.csv:4:", "'1.25' is before");
    s.workload.arrival.file = (char *)put("plain.csv", "0.5\n1.5\n");
    refused(&s, "plain.csv:1:", "header");
    s.workload.arrival.file = (char *)put("short.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,10\n");
    refused(&s, "short.csv:2:", "2 fields");
    s.workload.arrival.file = (char *)put("nan.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\nsoon,1,1\n");
    refused(&s, "nan.csv:2:", "'soon' is not a number");
}

static int same(const struct ks_request_spec *a, const struct ks_request_spec *b)
{
    return a->id == b->id && a->arrival == b->arrival && a->prompt_tokens == b->prompt_tokens &&
           a->output_tokens == b->output_tokens && a->prefix_group == b->prefix_group &&
           a->prefix_tokens == b->prefix_tokens && a->session == b->session && a->turn == b->turn &&
           a->history_tokens == b->history_tokens && a->prev_id == b->prev_id;
}

static void determinism(void **state)
{
    (void)state;
    struct ks_scenario s = base();
    s.workload.prompt_tokens = (struct ks_dist){.kind = KS_DIST_LOGNORMAL, .mu = 7, .sigma = 1, .min = 1,
                                                .max = 100000};
    s.workload.output_tokens = (struct ks_dist){.kind = KS_DIST_NORMAL, .mean = 200, .stddev = 50, .min = 1,
                                                .max = 1000};
    s.workload.shared_prefix = (struct ks_scenario_prefix){.tokens = 64, .groups = 4, .fraction = 0.5};
    s.workload.sessions = (struct ks_scenario_sessions){.turns = 3, .think_time = 1};
    struct ks_workload *a = make(&s), *b = make(&s);
    s.seed = 43;
    struct ks_workload *c = make(&s);
    int differ = 0;
    for (int i = 0; i < 5000; i++) {
        struct ks_request_spec ra = next(a), rb = next(b), rc = next(c);
        assert_true(same(&ra, &rb));
        differ += !same(&ra, &rc);
    }
    assert_true(differ > 4900);
    ks_workload_free(a);
    ks_workload_free(b);
    ks_workload_free(c);
}

static int make_tmpdir(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    static const char *const names[] = {"trace.lua", "p.txt", "o.txt", "missing.txt", "empty.txt", "word.txt",
                                        "neg.txt", "frac.txt", "nocol.csv", "back.csv", "plain.csv", "short.csv",
                                        "nan.csv"};
    char p[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    return rmdir(tmpdir);
}

// `workload_workload full_trace` runs the whole trace alone (a second of
// work: a test of its own); without an argument, the other cases.
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "full_trace") == 0) {
        const struct CMUnitTest one[] = {cmocka_unit_test(full_trace)};
        return cmocka_run_group_tests(one, make_tmpdir, remove_tmpdir);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constant_and_uniform), cmocka_unit_test(poisson),       cmocka_unit_test(lognormal_and_normal),
        cmocka_unit_test(prefix),               cmocka_unit_test(sessions),      cmocka_unit_test(max_context),
        cmocka_unit_test(trace_excerpt),        cmocka_unit_test(trace_lengths), cmocka_unit_test(count_files),
        cmocka_unit_test(trace_thinned),
        cmocka_unit_test(bad_files),            cmocka_unit_test(determinism),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
