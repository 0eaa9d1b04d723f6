// test_synth.c - the synthetic attention generator (synth.h): determinism,
// the topic chain's statistics, and the structure block scoring must see
// (sinks, recency, retrieval, and temporal locality ordered by preset).
//
// Scoring is the simplest dot-product block scoring: block mean key . query
// over 32-token blocks, top 64 of the 1024 blocks of a 32K-token prompt, as
// the context grows by one token per decode step. Thresholds come from
// measurements over several seeds, with margin (the measured values are in
// the comments).
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "synth.h"

#define BLOCK 32
#define PROMPT 32768 // tokens: 1024 blocks
#define TOPK 64
#define REQ 7

static struct ks_synth *make(const struct ks_synth_params *p)
{
    char err[256] = "";
    struct ks_synth *s = ks_synth_new(p, err, sizeof err);
    if (!s)
        fail_msg("ks_synth_new: %s", err);
    return s;
}

static struct ks_synth *make_preset(const char *name)
{
    struct ks_synth_params p;
    assert_int_equal(ks_synth_preset(name, &p), KS_OK);
    return make(&p);
}

static void params_checked(void **state)
{
    (void)state;
    struct ks_synth_params p, d;
    ks_synth_params_default(&d);
    assert_int_equal(ks_synth_params_check(&d, NULL, 0), KS_OK);
    assert_int_equal(ks_synth_preset("drifting", &p), KS_OK);
    assert_memory_equal(&p, &d, sizeof p);
    assert_int_equal(ks_synth_preset("stable", &p), KS_OK);
    assert_int_equal(ks_synth_params_check(&p, NULL, 0), KS_OK);
    assert_int_equal(ks_synth_preset("noisy", &p), KS_OK);
    assert_int_equal(ks_synth_params_check(&p, NULL, 0), KS_OK);
    assert_int_equal(ks_synth_preset("calm", &p), KS_EINVAL);
    assert_int_equal(ks_synth_preset(NULL, &p), KS_EINVAL);

    struct ks_synth_params bad[6];
    for (int i = 0; i < 6; i++)
        bad[i] = d;
    bad[0].head_dim = 2 * d.rope_pairs + 3;
    bad[1].group = 0;
    bad[2].topic_switch = (double)(d.n_topics - 1) / d.n_topics + 1e-9; // a change needs another topic
    bad[3].topic_logit = NAN;
    bad[4].head_dim = KS_SYNTH_MAX_DIM + 1;
    bad[5].early_flatten = 1.0f;
    for (int i = 0; i < 6; i++) {
        char err[256] = "";
        assert_null(ks_synth_new(&bad[i], err, sizeof err));
        if (strncmp(err, "synth: ", 7) != 0)
            fail_msg("case %d: message '%s'", i, err);
    }
    ks_synth_free(NULL);
}

// Same inputs, same floats; a range is a slice of any range containing it,
// across the prompt's end too.
static void keys_deterministic(void **state)
{
    (void)state;
    struct ks_synth_params p;
    ks_synth_preset("noisy", &p);
    struct ks_synth *a = make(&p), *b = make(&p);
    uint32_t d = p.head_dim, prompt = 5000, lo = 4900, hi = 5300;
    float *big = malloc(sizeof *big * d * (hi - lo)), *part = malloc(sizeof *part * d * (hi - lo));
    assert_non_null(big);
    assert_non_null(part);

    assert_int_equal(ks_synth_keys(a, REQ, prompt, 5, 3, lo, hi, big), KS_OK);
    assert_int_equal(ks_synth_keys(b, REQ, prompt, 5, 3, lo, hi, part), KS_OK);
    assert_memory_equal(big, part, sizeof *big * d * (hi - lo));
    for (size_t i = 0; i < (size_t)d * (hi - lo); i++)
        assert_true(isfinite(big[i]));
    // sub-ranges: inside the prompt, straddling its end, inside the generated tokens, unaligned
    const uint32_t cut[][2] = {{4900, 4933}, {4917, 5001}, {5000, 5001}, {5123, 5300}, {5299, 5300}, {4999, 5000}};
    for (size_t c = 0; c < sizeof cut / sizeof *cut; c++) {
        uint32_t t0 = cut[c][0], t1 = cut[c][1];
        assert_int_equal(ks_synth_keys(b, REQ, prompt, 5, 3, t0, t1, part), KS_OK);
        if (memcmp(part, big + (size_t)(t0 - lo) * d, sizeof *part * d * (t1 - t0)) != 0)
            fail_msg("keys [%u, %u) differ from the same tokens in [%u, %u)", t0, t1, lo, hi);
    }
    // another request, layer or head gives other keys
    assert_int_equal(ks_synth_keys(a, REQ + 1, prompt, 5, 3, lo, lo + 1, part), KS_OK);
    assert_memory_not_equal(part, big, sizeof *part * d);
    assert_int_equal(ks_synth_keys(a, REQ, prompt, 6, 3, lo, lo + 1, part), KS_OK);
    assert_memory_not_equal(part, big, sizeof *part * d);
    assert_int_equal(ks_synth_keys(a, REQ, prompt, 5, 2, lo, lo + 1, part), KS_OK);
    assert_memory_not_equal(part, big, sizeof *part * d);
    // bad arguments
    assert_int_equal(ks_synth_keys(a, REQ, prompt, p.n_layers, 0, 0, 1, part), KS_EINVAL);
    assert_int_equal(ks_synth_keys(a, REQ, prompt, 0, p.n_kv_heads, 0, 1, part), KS_EINVAL);
    assert_int_equal(ks_synth_keys(a, REQ, prompt, 0, 0, 2, 1, part), KS_EINVAL);
    assert_int_equal(ks_synth_keys(a, REQ, prompt, 0, 0, 1, 1, part), KS_OK); // empty range
    free(big);
    free(part);
    ks_synth_free(a);
    ks_synth_free(b);
}

static void assert_step_equal(const struct ks_synth_step *x, const struct ks_synth_step *y)
{
    assert_true(x->req == y->req);
    assert_int_equal(x->prompt, y->prompt);
    assert_int_equal(x->step, y->step);
    assert_int_equal(x->topic, y->topic);
    assert_int_equal(x->target, y->target);
    assert_int_equal(x->episode, y->episode);
}

// Walking steps one by one gives the states (and queries) computed from
// scratch; a generated token's topic is the query's at its step.
static void steps_deterministic(void **state)
{
    (void)state;
    struct ks_synth_params p;
    ks_synth_preset("noisy", &p);
    struct ks_synth *s = make(&p), *s2 = make(&p);
    uint32_t prompt = 6000, d = p.head_dim, episodes = 0;
    float q1[KS_SYNTH_MAX_DIM], q2[KS_SYNTH_MAX_DIM];
    struct ks_synth_step walk, at;
    ks_synth_step_at(s, REQ, prompt, 0, &walk);
    assert_int_equal(walk.topic, ks_synth_token_topic(s, REQ, prompt, prompt - 1)); // the prompt's topic goes on
    for (uint32_t step = 0; step < 3000; step++) {
        ks_synth_step_at(s2, REQ, prompt, step, &at);
        assert_step_equal(&walk, &at);
        assert_int_equal(ks_synth_token_topic(s, REQ, prompt, prompt + step), walk.topic);
        episodes += walk.target != KS_SYNTH_NONE;
        if (walk.target != KS_SYNTH_NONE) { // far enough behind, past the sinks
            assert_true(walk.target >= p.sink_tokens);
            assert_true(walk.target + p.retrieval_min_distance <= prompt + walk.episode);
        }
        if (step % 97 == 0) {
            uint32_t layer = step % p.n_layers, qh = step % (p.n_kv_heads * p.group);
            assert_int_equal(ks_synth_query(s, &walk, layer, qh, q1), KS_OK);
            assert_int_equal(ks_synth_query(s2, &at, layer, qh, q2), KS_OK);
            assert_memory_equal(q1, q2, sizeof *q1 * d);
        }
        ks_synth_step_next(s, &walk);
    }
    assert_true(episodes > 0);
    assert_int_equal(ks_synth_query(s, &walk, p.n_layers, 0, q1), KS_EINVAL);
    assert_int_equal(ks_synth_query(s, &walk, 0, p.n_kv_heads * p.group, q1), KS_EINVAL);
    ks_synth_free(s);
    ks_synth_free(s2);
}

// Each step changes topic with probability topic_switch, independently, so
// the count of changes over N steps is binomial: within 5 sigma of N p.
static void topic_switch_rate(void **state)
{
    (void)state;
    const double probs[] = {0.01, 0.1, 0.45};
    for (size_t i = 0; i < sizeof probs / sizeof *probs; i++) {
        struct ks_synth_params p;
        ks_synth_params_default(&p);
        p.n_topics = 8;
        p.topic_switch = probs[i];
        struct ks_synth *s = make(&p);
        uint64_t n = 0, changes = 0;
        for (uint64_t req = 0; req < 20; req++) {
            struct ks_synth_step st;
            ks_synth_step_at(s, req, 1000, 0, &st);
            for (uint32_t step = 1; step <= 10000; step++) {
                uint32_t before = st.topic;
                ks_synth_step_next(s, &st);
                changes += st.topic != before;
                n++;
            }
        }
        double rate = (double)changes / n, sigma = sqrt(probs[i] * (1 - probs[i]) / n);
        if (fabs(rate - probs[i]) > 5 * sigma)
            fail_msg("topic_switch %g: measured %g over %llu steps (sigma %g)", probs[i], rate, (unsigned long long)n,
                     sigma);
        ks_synth_free(s);
    }
}

// What one (layer, query head) shows over `steps` decode steps.
struct seen {
    double overlap;  // sum over steps of |top-k(s) & top-k(s-1)| / k
    uint32_t pairs;  // consecutive step pairs
    uint32_t steps;  // steps scored
    uint32_t sink;   // steps with block 0 in the top-k
    double last;     // sum over steps of the fraction of the 4 newest blocks in the top-k
    double middle;   // same for the 128 blocks around the middle of the context
    uint32_t episodes, found; // steps in a retrieval episode; of those, with the target block in the top-k
};

static int by_score_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

// Block means of the prompt, then `steps` decode steps: each scores every
// block of the context (the newest one partial) and takes the top TOPK.
static void observe(const struct ks_synth *s, uint32_t layer, uint32_t qh, uint32_t steps, struct seen *out)
{
    const struct ks_synth_params *p = ks_synth_params_of(s);
    uint32_t d = p->head_dim, kvh = qh / p->group, nmax = (PROMPT + steps + BLOCK - 1) / BLOCK;
    float *keys = malloc(sizeof *keys * BLOCK * d), *mean = malloc(sizeof *mean * nmax * d);
    float *score = malloc(sizeof *score * nmax), *sorted = malloc(sizeof *sorted * nmax), q[KS_SYNTH_MAX_DIM];
    unsigned char *in = calloc(nmax, 1), *was = calloc(nmax, 1);
    assert_true(keys && mean && score && sorted && in && was);
    for (uint32_t b = 0; b * BLOCK < PROMPT + steps; b++) {
        uint32_t t0 = b * BLOCK, t1 = t0 + BLOCK < PROMPT + steps ? t0 + BLOCK : PROMPT + steps;
        assert_int_equal(ks_synth_keys(s, REQ, PROMPT, layer, kvh, t0, t1, keys), KS_OK);
        for (uint32_t j = 0; j < d; j++) {
            float sum = 0;
            for (uint32_t t = 0; t < t1 - t0; t++)
                sum += keys[t * d + j];
            mean[(size_t)b * d + j] = sum / (float)(t1 - t0);
        }
    }
    memset(out, 0, sizeof *out);
    struct ks_synth_step st;
    ks_synth_step_at(s, REQ, PROMPT, 0, &st);
    for (uint32_t step = 0; step < steps; step++, ks_synth_step_next(s, &st)) {
        uint32_t ctx = PROMPT + step, n = (ctx + BLOCK - 1) / BLOCK;
        if (ctx % BLOCK) { // the newest block holds only the tokens written so far
            uint32_t t0 = (n - 1) * BLOCK;
            assert_int_equal(ks_synth_keys(s, REQ, PROMPT, layer, kvh, t0, ctx, keys), KS_OK);
            for (uint32_t j = 0; j < d; j++) {
                float sum = 0;
                for (uint32_t t = 0; t < ctx - t0; t++)
                    sum += keys[t * d + j];
                mean[(size_t)(n - 1) * d + j] = sum / (float)(ctx - t0);
            }
        }
        assert_int_equal(ks_synth_query(s, &st, layer, qh, q), KS_OK);
        for (uint32_t b = 0; b < n; b++) {
            float dot = 0;
            for (uint32_t j = 0; j < d; j++)
                dot += mean[(size_t)b * d + j] * q[j];
            score[b] = dot;
        }
        memcpy(sorted, score, sizeof *score * n);
        qsort(sorted, n, sizeof *sorted, by_score_desc);
        memset(in, 0, nmax);
        uint32_t taken = 0;
        for (uint32_t b = 0; b < n; b++)
            if (score[b] >= sorted[TOPK - 1] && taken < TOPK)
                in[b] = 1, taken++;
        if (step > 0) {
            uint32_t both = 0;
            for (uint32_t b = 0; b < n; b++)
                both += in[b] & was[b];
            out->overlap += (double)both / TOPK;
            out->pairs++;
        }
        out->steps++;
        out->sink += in[0];
        for (uint32_t b = n - 4; b < n; b++)
            out->last += in[b] / 4.0;
        for (uint32_t b = n / 2 - 64; b < n / 2 + 64; b++)
            out->middle += in[b] / 128.0;
        if (st.target != KS_SYNTH_NONE) {
            out->episodes++;
            out->found += in[st.target / BLOCK];
        }
        memcpy(was, in, nmax);
    }
    free(keys);
    free(mean);
    free(score);
    free(sorted);
    free(in);
    free(was);
}

// Observes a spread of layers past the first two (which are local and
// flat by design) and of query heads, and adds it all up.
static struct seen observe_many(const struct ks_synth *s, uint32_t steps)
{
    const uint32_t layers[] = {2, 11, 20, 29}, heads[] = {0, 13, 26};
    struct seen all;
    memset(&all, 0, sizeof all);
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++)
        for (size_t h = 0; h < sizeof heads / sizeof *heads; h++) {
            struct seen one;
            observe(s, layers[l], heads[h], steps, &one);
            all.overlap += one.overlap;
            all.pairs += one.pairs;
            all.steps += one.steps;
            all.sink += one.sink;
            all.last += one.last;
            all.middle += one.middle;
            all.episodes += one.episodes;
            all.found += one.found;
        }
    return all;
}

// Temporal locality follows the preset: stable > drifting > noisy, with
// stable above 0.8 and noisy below 0.5 (measured over 17 seeds on these 12
// (layer, head) pairs: stable 0.980-0.999, drifting 0.896-0.968, noisy
// 0.224-0.298). Retrieval episodes find their target and recency holds in
// every preset; sinks hold in the default.
static void locality_by_preset(void **state)
{
    (void)state;
    const char *names[] = {"stable", "drifting", "noisy"};
    double overlap[3];
    for (int i = 0; i < 3; i++) {
        struct ks_synth *s = make_preset(names[i]);
        struct seen w = observe_many(s, 128);
        overlap[i] = w.overlap / w.pairs;
        double sink = (double)w.sink / w.steps, last = w.last / w.steps, middle = w.middle / w.steps;
        print_message("synth %-8s: top-%d overlap %.3f, sink block in top-k %.2f, newest 4 blocks %.2f, middle %.3f, "
                      "retrieval target found %u/%u\n",
                      names[i], TOPK, overlap[i], sink, last, middle, w.found, w.episodes);
        // The sink rule is the default's: in "stable" a head keeps or misses
        // its sink for good (measured 0.51-1.0 over 12 heads), in "noisy" the
        // drift competes with it (0.60-0.74).
        if (i == 1 && sink < 0.7) // measured 0.78-0.99
            fail_msg("%s: the sink block is in the top-%d in only %.2f of steps", names[i], TOPK, sink);
        if (!(last > 0.4 && last > 4 * middle)) // measured newest 0.53-1.0, middle 0.00-0.07
            fail_msg("%s: newest blocks selected %.2f of the time, middle ones %.3f", names[i], last, middle);
        if (w.episodes && (double)w.found / w.episodes < 0.5) // measured 0.69-1.0
            fail_msg("%s: retrieval found its target in %u of %u steps", names[i], w.found, w.episodes);
        ks_synth_free(s);
    }
    if (!(overlap[0] > 0.8 && overlap[2] < 0.5))
        fail_msg("overlap: stable %.3f (want > 0.8), noisy %.3f (want < 0.5)", overlap[0], overlap[2]);
    if (!(overlap[0] > overlap[1] + 0.01 && overlap[1] > overlap[2] + 0.2))
        fail_msg("overlap not ordered: stable %.3f, drifting %.3f, noisy %.3f", overlap[0], overlap[1], overlap[2]);
}

// In the default preset, at a middle layer, the newest blocks are selected
// far more often than the middle ones (measured over 16 seeds: 0.66-1.0
// against 0.007-0.18).
static void recency_default(void **state)
{
    (void)state;
    struct ks_synth_params p;
    ks_synth_params_default(&p);
    struct ks_synth *s = make(&p);
    struct seen w;
    observe(s, 16, 5, 96, &w);
    double last = w.last / w.steps, middle = w.middle / w.steps;
    print_message("synth default, layer 16: newest 4 blocks in top-%d %.2f of steps, middle blocks %.3f\n", TOPK, last,
                  middle);
    assert_true(last > 0.5);
    assert_true(last > 4 * middle);
    ks_synth_free(s);
}

// The scale of each term in the query of (layer, query head), read back
// from its channels (synth.h): the sink and heavy channels hold sqrt(d) times
// their logit; the rotary pairs hold a norm of sqrt(d) times the recency
// logit; with no topic and no retrieval the content channels hold the drift,
// a unit direction times sqrt(d) times its logit.
struct terms {
    double sink, heavy, recency, drift;
};

static struct terms query_terms(const struct ks_synth *s, uint32_t layer, uint32_t qh)
{
    const struct ks_synth_params *p = ks_synth_params_of(s);
    uint32_t d = p->head_dim, c0 = 2 * p->rope_pairs;
    struct ks_synth_step st;
    ks_synth_step_at(s, REQ, PROMPT, 5, &st);
    assert_int_equal(st.target, KS_SYNTH_NONE);
    float q[KS_SYNTH_MAX_DIM];
    assert_int_equal(ks_synth_query(s, &st, layer, qh, q), KS_OK);
    double sd = sqrt((double)d), rec = 0, content = 0;
    for (uint32_t c = 0; c < c0; c++)
        rec += (double)q[c] * q[c];
    for (uint32_t c = c0; c < d - 2; c++)
        content += (double)q[c] * q[c];
    return (struct terms){.sink = q[d - 1] / sd, .heavy = q[d - 2] / sd, .recency = sqrt(rec) / sd,
                          .drift = sqrt(content) / sd};
}

static void assert_near(double x, double want, const char *what, uint32_t layer, uint32_t qh)
{
    if (fabs(x - want) > 1e-4 * fabs(want))
        fail_msg("layer %u head %u: %s %.6f, expected %.6f", layer, qh, what, x, want);
}

// Layers and heads differ as synth.h says: with head_spread = 0, every term
// of layer l is its logit times the early-layer profile (content terms x (1 -
// early_flatten e(l)), recency x (1 + early_local e(l)), e(l) = exp(-l /
// early_layers)), the drift also times one factor per layer in 1 +-
// layer_noise, and the heads of a layer are equal; with head_spread > 0 each
// (layer, head) multiplies each term by exp(head_spread z), z standard normal.
static void layer_and_head_terms(void **state)
{
    (void)state;
    struct ks_synth_params p;
    ks_synth_params_default(&p);
    p.topic_logit = 0;    // content channels: the drift alone
    p.retrieval_prob = 0; // no retrieval term either
    p.head_spread = 0;
    struct ks_synth *s = make(&p);
    uint32_t H = p.n_kv_heads * p.group;
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t l = 0; l < p.n_layers; l++) {
        double e = exp(-(double)l / p.early_layers), flat = 1 - p.early_flatten * e, local = 1 + p.early_local * e;
        struct terms t0 = query_terms(s, l, 0);
        double noise = t0.drift / (p.drift_logit * flat);
        if (!(noise >= 1 - p.layer_noise - 1e-5 && noise <= 1 + p.layer_noise + 1e-5))
            fail_msg("layer %u: drift factor %.4f outside 1 +- %.2f", l, noise, (double)p.layer_noise);
        lo = fmin(lo, noise);
        hi = fmax(hi, noise);
        for (uint32_t h = 0; h < H; h++) {
            struct terms t = query_terms(s, l, h);
            assert_near(t.sink, p.sink_logit * flat, "sink", l, h);
            assert_near(t.heavy, p.heavy_logit * flat, "heavy", l, h);
            assert_near(t.recency, p.recency_logit * local, "recency", l, h);
            assert_near(t.drift, t0.drift, "drift (as head 0's)", l, h);
        }
    }
    // 32 factors drawn uniformly in 1 +- 0.3 span most of it (a range under
    // half of it has probability ~1e-8)
    if (!(hi - lo > p.layer_noise))
        fail_msg("the layers' drift factors span %.3f..%.3f only", lo, hi);
    ks_synth_free(s);

    // head weights: log(term / logit) over 32 layers x 32 heads x 4 terms,
    // no early-layer profile, no layer noise
    p.head_spread = 0.25f;
    p.early_layers = 0;
    p.layer_noise = 0;
    s = make(&p);
    double sum = 0, sum2 = 0;
    uint32_t n = 0, same_layer_differs = 0, same_head_differs = 0;
    for (uint32_t l = 0; l < p.n_layers; l++)
        for (uint32_t h = 0; h < H; h++) {
            struct terms t = query_terms(s, l, h);
            double z[4] = {log(t.sink / p.sink_logit), log(t.heavy / p.heavy_logit),
                           log(t.recency / p.recency_logit), log(t.drift / p.drift_logit)};
            for (int k = 0; k < 4; k++, n++) {
                sum += z[k];
                sum2 += z[k] * z[k];
            }
            same_layer_differs += h > 0 && t.sink != query_terms(s, l, h - 1).sink;
            same_head_differs += l > 0 && t.sink != query_terms(s, l - 1, h).sink;
        }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    print_message("synth head weights: log-weight mean %.4f, sd %.4f (head_spread %.2f) over %u\n", mean, sd,
                  (double)p.head_spread, n);
    // standard errors over 4096 draws: 0.004 for the mean, 0.003 for the sd
    if (fabs(mean) > 0.03 || fabs(sd - p.head_spread) > 0.025)
        fail_msg("head weights: log mean %.4f, sd %.4f; expected 0 and %.2f", mean, sd, (double)p.head_spread);
    assert_int_equal(same_layer_differs, p.n_layers * (H - 1));
    assert_int_equal(same_head_differs, (p.n_layers - 1) * H);
    ks_synth_free(s);
}

// The top-TOPK blocks of (layer, query head) at decode step 0 of the default
// preset, scored as observe() does; in[b] = 1 for a selected block.
static void top_blocks(const struct ks_synth *s, uint32_t layer, uint32_t qh, unsigned char *in)
{
    const struct ks_synth_params *p = ks_synth_params_of(s);
    uint32_t d = p->head_dim, n = PROMPT / BLOCK;
    float *keys = malloc(sizeof *keys * BLOCK * d), *score = malloc(sizeof *score * n);
    float *sorted = malloc(sizeof *sorted * n), q[KS_SYNTH_MAX_DIM];
    assert_true(keys && score && sorted);
    struct ks_synth_step st;
    ks_synth_step_at(s, REQ, PROMPT, 0, &st);
    assert_int_equal(ks_synth_query(s, &st, layer, qh, q), KS_OK);
    for (uint32_t b = 0; b < n; b++) {
        assert_int_equal(ks_synth_keys(s, REQ, PROMPT, layer, qh / p->group, b * BLOCK, (b + 1) * BLOCK, keys),
                         KS_OK);
        double dot = 0;
        for (uint32_t t = 0; t < BLOCK; t++)
            for (uint32_t j = 0; j < d; j++)
                dot += (double)keys[t * d + j] * q[j];
        score[b] = (float)(dot / BLOCK);
    }
    memcpy(sorted, score, sizeof *score * n);
    qsort(sorted, n, sizeof *sorted, by_score_desc);
    uint32_t taken = 0;
    for (uint32_t b = 0; b < n; b++) {
        in[b] = score[b] >= sorted[TOPK - 1] && taken < TOPK;
        taken += in[b];
    }
    free(keys);
    free(score);
    free(sorted);
}

static uint32_t shared(const unsigned char *a, const unsigned char *b)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < PROMPT / BLOCK; i++)
        k += a[i] & b[i];
    return k;
}

// What the generator gives differs by layer and by head: for one request and
// step, no two of 4 layers (same query head) and no two of 4 query heads
// (same layer, two of them sharing a KV head and so its keys) select the
// same top-TOPK blocks. Measured over seeds 1-12 and the default's: layer
// pairs share 26-62 of the 64 blocks, head pairs 35-63 (the two sharing a KV
// head 43-63: only the heads' weights tell them apart).
static void layers_and_heads_select_differently(void **state)
{
    (void)state;
    struct ks_synth *s = make_preset("drifting");
    const uint32_t layers[] = {0, 10, 20, 31}, heads[] = {4, 5, 17, 30}; // heads 4 and 5: KV head 1
    enum { NL = 4, NH = 4, NB = PROMPT / BLOCK };
    static unsigned char by_layer[NL][NB], by_head[NH][NB];
    for (int i = 0; i < NL; i++)
        top_blocks(s, layers[i], heads[0], by_layer[i]);
    for (int i = 0; i < NH; i++)
        top_blocks(s, layers[2], heads[i], by_head[i]);
    for (int i = 0; i < NL; i++) {
        for (int j = 0; j < i; j++) {
            uint32_t k = shared(by_layer[i], by_layer[j]);
            print_message("synth: layers %u and %u share %u of %d blocks\n", layers[i], layers[j], k, TOPK);
            if (k == TOPK)
                fail_msg("layers %u and %u select the same %d blocks", layers[i], layers[j], TOPK);
        }
    }
    for (int i = 0; i < NH; i++)
        for (int j = 0; j < i; j++) {
            uint32_t k = shared(by_head[i], by_head[j]);
            print_message("synth: heads %u and %u of layer %u share %u of %d blocks\n", heads[i], heads[j], layers[2],
                          k, TOPK);
            if (k == TOPK)
                fail_msg("heads %u and %u select the same %d blocks", heads[i], heads[j], TOPK);
        }
    ks_synth_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params_checked),     cmocka_unit_test(keys_deterministic),
        cmocka_unit_test(steps_deterministic), cmocka_unit_test(topic_switch_rate),
        cmocka_unit_test(locality_by_preset), cmocka_unit_test(recency_default),
        cmocka_unit_test(layer_and_head_terms), cmocka_unit_test(layers_and_heads_select_differently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
