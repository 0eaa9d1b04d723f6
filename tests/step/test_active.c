// test_active.c - a GPU's admitted requests (sim/step/active.h), the lifecycle the
// engine and the runtime share: the admission bound, prompt placement with a
// shared prefix and the fill hook, prefill chunks oldest first, TTFT, ITL,
// TPOT and E2EL in closed form, goodput's per-request objectives, growth by a
// block per layer, finishing and records, full tiers (wait) against an empty
// GPU (failure); SGLang's estimated reservations: admission, the ratio's
// decay, retraction and readmission in closed form.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "active.h"
#include "hist.h"
#include "step_util.h"
#include "unit_util.h"

#define LAYERS 2
#define BS 16 // tokens per block

struct fixture {
    struct ks_scenario s;
    struct ks_cache *c;
    struct ks_selection *sp;
    struct ks_run_result r;
    struct ks_active_set set;
    // hook calls
    uint32_t fills, filled_blocks, finished;
    uint32_t last_req, last_from, last_to;
    int fill_status;
    char err[256]; // the reason of the set's last failed call
};

static int on_fill(void *ctx, uint32_t req, uint32_t from, uint32_t to, char *err, size_t len)
{
    (void)err, (void)len;
    struct fixture *f = ctx;
    f->fills++;
    f->filled_blocks += to - from;
    f->last_req = req;
    f->last_from = from;
    f->last_to = to;
    return f->fill_status;
}

static void on_finished(void *ctx, struct ks_active *a)
{
    struct fixture *f = ctx;
    f->finished++;
    assert_true(a->generated >= a->spec.output_tokens);
}

// A set over a cache of l1 + l2 pages (no L3), admission bound admit_blocks,
// prefill chunks of `chunk` tokens (0: no limit), dense selection.
static struct fixture *setup(uint32_t l1, uint32_t l2, uint64_t admit_blocks, uint32_t chunk)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->s.seed = 1;
    f->s.model.layers = LAYERS;
    f->s.model.max_context = 1u << 16;
    f->s.cache.block_size = BS;
    f->s.prefill.chunk = chunk;
    f->s.sparse.policy = KS_SPARSE_DENSE;
    struct ks_cache_params p = ks_test_params(l1, l2, 0);
    p.groups = LAYERS;
    f->c = ks_test_new(&p);
    char err[256];
    f->sp = ks_selection_new(&f->s, err, sizeof err);
    assert_non_null(f->sp);
    assert_int_equal(ks_run_result_init(&f->r), KS_OK);
    ks_active_init(&f->set, &(struct ks_active_params){
        .s = &f->s, .cache = f->c, .sparse = f->sp, .r = &f->r, .gpu = 3, .admit_blocks = admit_blocks,
        .groups = LAYERS,
        .hooks = {.ctx = f, .fill = on_fill, .finished = on_finished}});
    return f;
}

static void teardown(struct fixture *f)
{
    ks_active_fini(&f->set);
    ks_test_check(f->c);
    ks_cache_free(f->c);
    ks_selection_free(f->sp);
    ks_run_result_fini(&f->r);
    free(f);
}

static struct ks_active *admit(struct fixture *f, const struct ks_request_spec *sp, double now)
{
    struct ks_active *a = NULL;
    assert_int_equal(ks_active_admit(&f->set, sp, now, KS_L1, &a, f->err, sizeof f->err), KS_OK);
    return a;
}

// The first request is admitted whatever its size; the next only while the
// blocks of all at full length stay within the bound; finishing frees room.
static void admission_bound(void **state)
{
    (void)state;
    // 40 + 8 tokens = 3 blocks per layer, 6 in all; a bound of 10 holds one
    struct fixture *f = setup(64, 64, 10, 0);
    struct ks_request_spec a = ks_test_spec(0, 40, 1, 0), b = ks_test_spec(1, 40, 8, 0);
    a.output_tokens = 8;
    assert_non_null(admit(f, &a, 1.0));
    assert_int_equal(ks_active_reserved(&f->set), 6);
    assert_null(admit(f, &b, 1.0)); // 6 + 6 > 10: waits
    assert_int_equal(f->set.n, 1);
    assert_int_equal(f->r.admitted, 1);
    // the prompt's 3 blocks of each layer were placed and filled
    assert_int_equal(ks_cache_req_len(f->c, f->set.a[0].req), 3);
    assert_int_equal(f->fills, 1);
    assert_int_equal(f->filled_blocks, 3);
    assert_int_equal(f->set.a[0].prefilled, 0);
    // prefill, then 8 tokens: the request finishes and its blocks go
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    for (int i = 0; i < 8; i++)
        assert_int_equal(ks_active_emit(&f->set, 2.0 + i, i == 0, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->set.n, 0);
    assert_int_equal(ks_active_reserved(&f->set), 0);
    assert_int_equal(f->finished, 1);
    assert_non_null(admit(f, &b, 10.0));
    assert_int_equal(f->r.peak_batch, 1);
    teardown(f);
}

// The latencies as vLLM and Vidur define them (README "The simulator"):
// TTFT = first token - arrival; ITL = every gap between two tokens; per
// finished request TPOT = (finish - first token) / (tokens - 1) and E2EL =
// finish - arrival. Arrival 0.5, tokens at 2, 2.25, 2.75 and 3: TTFT 1.5,
// gaps 0.25 + 0.5 + 0.25, TPOT 1/3, E2EL 2.5.
static void token_timing(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1000, 0);
    struct ks_request_spec sp = ks_test_spec(7, 20, 4, 0.5);
    struct ks_active *a = admit(f, &sp, 1.0);
    assert_non_null(a);
    assert_int_equal(ks_active_decoding_count(&f->set), 0);
    // no token before the prompt is prefilled
    assert_int_equal(ks_active_emit(&f->set, 1.5, 1, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->set.a[0].generated, 0);
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    assert_int_equal(ks_active_emit(&f->set, 2.0, 0, f->err, sizeof f->err), KS_OK); // not yet decoding: nothing
    assert_int_equal(f->set.a[0].generated, 0);
    assert_int_equal(ks_active_emit(&f->set, 2.0, 1, f->err, sizeof f->err), KS_OK);
    assert_int_equal(ks_active_decoding_count(&f->set), 1);
    assert_int_equal(f->r.ttft->count, 1);
    assert_float_equal(f->r.ttft->sum, 1.5, 1e-12);
    assert_int_equal(f->r.prompt_tokens, 20);
    assert_int_equal(ks_active_emit(&f->set, 2.0, 1, f->err, sizeof f->err), KS_OK); // a second first token: none
    assert_int_equal(f->r.tokens, 1);
    assert_int_equal(ks_active_emit(&f->set, 2.25, 0, f->err, sizeof f->err), KS_OK);
    assert_int_equal(ks_active_emit(&f->set, 2.75, 0, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->r.tpot->count + f->r.e2el->count, 0); // not finished yet
    assert_int_equal(ks_active_emit(&f->set, 3.0, 0, f->err, sizeof f->err), KS_OK); // the 4th token: finished
    assert_int_equal(f->set.n, 0);
    assert_int_equal(f->r.tokens, 4);
    assert_int_equal(f->r.finished, 1);
    assert_int_equal(f->r.itl->count, 3);
    assert_float_equal(f->r.itl->sum, 1.0, 1e-12);
    assert_float_equal(f->r.itl->max, 0.5, 1e-12);
    assert_int_equal(f->r.tpot->count, 1);
    assert_float_equal(f->r.tpot->sum, 1.0 / 3, 1e-12);
    assert_int_equal(f->r.e2el->count, 1);
    assert_float_equal(f->r.e2el->sum, 2.5, 1e-12);
    assert_int_equal(f->r.good, 1); // no per-request objective: every finished request is good
    assert_int_equal(f->r.n_rec, 1);
    const struct ks_request_record *rec = &f->r.rec[0];
    assert_int_equal(rec->id, 7);
    assert_int_equal(rec->gpu, 3);
    assert_int_equal(rec->generated, 4);
    assert_float_equal(rec->admitted, 1.0, 0);
    assert_float_equal(rec->first_token, 2.0, 0);
    assert_float_equal(rec->finish, 3.0, 0);
    assert_float_equal(rec->tpot, 1.0 / 3, 1e-12);
    assert_float_equal(rec->e2el, 2.5, 0);
    assert_float_equal(rec->itl_max, 0.5, 1e-12);
    teardown(f);
}

// Three requests decoding together under per-request objectives
// (slo.ttft, tpot, e2el); returns how many count toward goodput. First
// tokens at 1.0, then tokens at 1.2, 1.4, 2.0, 2.6: A (arrival 0.5, 3
// tokens) has TTFT 0.5, TPOT 0.2, E2EL 0.9; B (arrival 0, 5 tokens) TTFT 1.0,
// TPOT 0.4, E2EL 2.6; C (arrival 0.2, 1 token) TTFT 0.8, no TPOT (it meets
// any, as in vLLM), E2EL 0.8.
static uint64_t good_requests(double ttft, double tpot, double e2el)
{
    struct fixture *f = setup(64, 64, 1000, 0);
    f->s.slo = (struct ks_scenario_slo){.ttft = ttft, .tpot = tpot, .e2el = e2el};
    struct ks_request_spec a = ks_test_spec(0, 20, 3, 0.5), b = ks_test_spec(1, 20, 5, 0),
                           c = ks_test_spec(2, 20, 1, 0.2);
    assert_non_null(admit(f, &a, 0.9));
    assert_non_null(admit(f, &b, 0.9));
    assert_non_null(admit(f, &c, 0.9));
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    assert_int_equal(ks_active_emit(&f->set, 1.0, 1, f->err, sizeof f->err), KS_OK); // C finishes
    static const double t[] = {1.2, 1.4, 2.0, 2.6};                                   // A finishes at 1.4, B at 2.6
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        assert_int_equal(ks_active_emit(&f->set, t[i], 0, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->r.finished, 3);
    assert_int_equal(f->r.tpot->count, 2); // C has one token
    assert_float_equal(f->r.tpot->sum, 0.2 + 0.4, 1e-12);
    assert_int_equal(f->r.e2el->count, 3);
    assert_float_equal(f->r.e2el->sum, 0.9 + 2.6 + 0.8, 1e-12);
    assert_int_equal(f->r.itl->count, 2 + 4);
    uint64_t good = f->r.good;
    teardown(f);
    return good;
}

// goodput counts the finished requests that meet every per-request objective set.
static void goodput_objectives(void **state)
{
    (void)state;
    assert_int_equal(good_requests(0, 0, 0), 3);     // none set: all
    assert_int_equal(good_requests(0.9, 0, 0), 2);   // B's TTFT of 1.0 misses
    assert_int_equal(good_requests(0, 0.3, 0), 2);   // B's TPOT of 0.4 misses; C has none and meets it
    assert_int_equal(good_requests(0.9, 0.3, 0), 2); // B misses both, counted once
    assert_int_equal(good_requests(0.9, 0.3, 0.85), 1); // and A's E2EL of 0.9 misses: C alone
    assert_int_equal(good_requests(0.4, 0.1, 0.5), 0);
}

// Each token adds one to the context; when it opens a block, every layer
// gets one, in L1, and the fill hook writes it.
static void growth_by_block(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1000, 0);
    struct ks_request_spec sp = ks_test_spec(0, 30, 30, 0); // 30 tokens: 2 blocks
    assert_non_null(admit(f, &sp, 0));
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    uint32_t fills = f->fills;
    assert_int_equal(ks_active_emit(&f->set, 1, 1, f->err, sizeof f->err), KS_OK); // ctx 31
    assert_int_equal(ks_active_emit(&f->set, 2, 0, f->err, sizeof f->err), KS_OK); // ctx 32
    assert_int_equal(f->fills, fills);
    assert_int_equal(ks_cache_req_len(f->c, f->set.a[0].req), 2);
    assert_int_equal(ks_active_emit(&f->set, 3, 0, f->err, sizeof f->err), KS_OK); // ctx 33: a third block
    assert_int_equal(f->set.a[0].ctx, 33);
    assert_int_equal(ks_cache_req_len(f->c, f->set.a[0].req), 3);
    assert_int_equal(f->fills, fills + 1);
    assert_int_equal(f->last_from, 2);
    assert_int_equal(f->last_to, 3);
    // a failing fill stops the call with its status
    f->fill_status = KS_EIO;
    for (int i = 0; i < 15; i++) // up to ctx 48
        assert_int_equal(ks_active_emit(&f->set, 4 + i, 0, f->err, sizeof f->err), KS_OK);
    assert_int_equal(ks_active_emit(&f->set, 20, 0, f->err, sizeof f->err), KS_EIO); // ctx 49: a fourth block
    assert_string_equal(f->err, "writing a new block's KV: input/output error"); // no reason of the hook's own
    teardown(f);
}

static double tokens_cost(const struct ks_scenario *s, double tokens, double done)
{
    (void)s;
    return tokens * 1000 + done; // both arguments show in the sum
}

// Prefill chunks take up to prefill.chunk tokens, oldest admission first, and
// a request emits its first token only once its whole prompt is done.
static void prefill_chunks_oldest_first(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1000, 64);
    struct ks_request_spec x = ks_test_spec(0, 100, 2, 0), y = ks_test_spec(1, 50, 2, 0);
    assert_non_null(admit(f, &x, 1.0));
    assert_non_null(admit(f, &y, 2.0));
    // 64 of x's 100
    uint32_t took = 0;
    assert_float_equal(ks_active_prefill_chunk(&f->set, tokens_cost, &took), 64 * 1000 + 0, 0);
    assert_int_equal(took, 64);
    assert_int_equal(f->set.a[0].prefilled, 64);
    assert_int_equal(f->set.a[1].prefilled, 0);
    assert_int_equal(ks_active_emit(&f->set, 3.0, 1, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->r.tokens, 0);
    // x's last 36, then 28 of y's
    assert_float_equal(ks_active_prefill_chunk(&f->set, tokens_cost, &took), (36 * 1000 + 64) + (28 * 1000 + 0), 0);
    assert_int_equal(took, 64);
    assert_int_equal(ks_active_emit(&f->set, 4.0, 1, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->r.tokens, 1); // x's first token, not y's
    assert_float_equal(ks_active_prefill_chunk(&f->set, tokens_cost, &took), 22 * 1000 + 28, 0);
    assert_int_equal(took, 22);
    assert_float_equal(ks_active_prefill_chunk(&f->set, tokens_cost, &took), 0, 0); // nothing left
    assert_int_equal(took, 0);
    assert_int_equal(ks_active_emit(&f->set, 5.0, 1, f->err, sizeof f->err), KS_OK);
    assert_int_equal(f->r.tokens, 2);
    teardown(f);
}

// The first request of a prefix group places the prefix in a request of its
// own (filled once); later ones share its whole blocks, which prefill skips.
static void shared_prefix(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1000, 0);
    struct ks_request_spec x = ks_test_spec(0, 60, 2, 0), y = ks_test_spec(1, 40, 2, 0);
    x.prefix_group = y.prefix_group = 5;
    x.prefix_tokens = y.prefix_tokens = 35; // 2 whole blocks
    assert_non_null(admit(f, &x, 1.0));
    uint32_t pr = f->set.prefix_req[5];
    assert_int_not_equal(pr, KS_NONE);
    assert_int_equal(ks_cache_req_len(f->c, pr), 2);
    // the prefix's 2 blocks, then x's blocks 2..3 (60 tokens: 4 blocks)
    assert_int_equal(f->fills, 2);
    assert_int_equal(f->filled_blocks, 2 + 2);
    assert_int_equal(f->set.a[0].prefilled, 0); // the first request computes the prefix
    assert_non_null(admit(f, &y, 2.0));
    assert_int_equal(f->set.prefix_req[5], pr);
    assert_int_equal(f->set.a[1].prefilled, 32);  // 2 blocks of 16 already exist
    assert_int_equal(f->filled_blocks, 2 + 2 + 1); // y: its third block only
    assert_int_equal(f->last_from, 2);
    assert_int_equal(f->last_to, 3);
    teardown(f);
}

// Full tiers: with other requests admitted a request waits (KS_OK, NULL) and
// nothing of it stays; in an empty GPU it is a failure that says so.
static void full_tiers(void **state)
{
    (void)state;
    // 4 + 4 pages; a 50-token prompt needs 4 blocks of each of 2 layers
    struct fixture *f = setup(4, 4, 1000, 0);
    struct ks_request_spec x = ks_test_spec(0, 50, 2, 0), y = ks_test_spec(1, 50, 2, 0), big = ks_test_spec(2, 200, 2, 0);
    assert_non_null(admit(f, &x, 0));
    assert_null(admit(f, &y, 0));
    assert_int_equal(f->set.n, 1);
    assert_int_equal(f->r.admitted, 1);
    ks_test_check(f->c);
    ks_active_fini(&f->set); // close x; its cache request goes with the cache
    struct ks_cache_params p = ks_test_params(4, 4, 0);
    p.groups = LAYERS;
    ks_cache_free(f->c);
    f->c = ks_test_new(&p);
    ks_active_init(&f->set, &(struct ks_active_params){
        .s = &f->s, .cache = f->c, .sparse = f->sp, .r = &f->r, .admit_blocks = 1000, .groups = LAYERS,
        .hooks = {.ctx = f, .fill = on_fill, .finished = on_finished}});
    struct ks_active *a = NULL;
    assert_int_equal(ks_active_admit(&f->set, &big, 0, KS_L1, &a, f->err, sizeof f->err), KS_ENOSPC);
    assert_null(a);
    assert_string_equal(f->err, "placing a prompt in an empty GPU: no free page in any tier");
    assert_int_equal(f->set.n, 0);
    teardown(f);
}

// A request cut off by the end of the run is recorded unfinished.
static void record_rest(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1000, 0);
    struct ks_request_spec sp = ks_test_spec(4, 20, 10, 0);
    assert_non_null(admit(f, &sp, 0));
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    assert_int_equal(ks_active_emit(&f->set, 1.0, 1, f->err, sizeof f->err), KS_OK);
    assert_int_equal(ks_active_emit(&f->set, 1.5, 0, f->err, sizeof f->err), KS_OK);
    ks_active_record_rest(&f->set);
    assert_int_equal(f->r.n_rec, 1);
    assert_int_equal(f->r.rec[0].generated, 2);
    assert_true(f->r.rec[0].finish < 0);
    assert_float_equal(f->r.rec[0].tpot, -1, 0); // TPOT and E2EL are a finished request's
    assert_float_equal(f->r.rec[0].e2el, -1, 0);
    assert_float_equal(f->r.rec[0].itl_max, 0.5, 1e-12);
    assert_int_equal(f->r.itl->count, 1);
    assert_int_equal(f->r.tpot->count + f->r.e2el->count + f->r.good, 0);
    assert_int_equal(f->finished, 0);
    teardown(f);
}


// One decode step of the set: room first (ks_active_make_room), then the
// step's tokens at `now`.
static void decode_step(struct fixture *f, double now)
{
    assert_int_equal(ks_active_make_room(&f->set), KS_OK);
    assert_int_equal(ks_active_emit(&f->set, now, 0, f->err, sizeof f->err), KS_OK);
}

// scheduler.reserve = "estimate" (SGLang's admission), ratio 0.5, clip 32,
// blocks of 16 tokens in 2 layers, a bound of 20 blocks. A (output 20)
// reserves 32 + ceil(0.5 x 20) = 42 tokens, 3 blocks a layer: 6; B and C
// (output 100) 32 + ceil(0.5 x 32) = 48: 6 each; D waits (24 > 20), where
// reserving the whole output would admit A alone (132 tokens: 18 blocks).
// The ratio falls by (0.5 - 0.07) / 600 a step while the blocks fit. At
// 48 tokens each (16 generated), the next step opens a fourth block of each:
// 18 + 6 > 20. C goes (ties on tokens and prompt: the latest arrival), which
// leaves 20 - 12 = 8 blocks, 64 tokens, for 20 of each of the two left; the
// ratio becomes (16 + 16 + 2 x 20) / (20 + 100 + 1) = 72/121. A finishes 3
// steps later (3 decays); C's context (48 tokens, 19 reserved: 67) then fits
// beside B's (52 + 19): 10 + 10 blocks. It is placed anew (3 blocks, filled),
// recomputed by a prefill of 48 tokens, whose end gives its 17th token.
static void estimate_retract_resume(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 20, 0);
    f->s.scheduler.reserve = KS_RESERVE_ESTIMATE;
    f->s.scheduler.new_token_ratio = 0.5;
    f->s.scheduler.reserve_clip = 32;
    struct ks_request_spec a = ks_test_spec(0, 32, 20, 0), b = ks_test_spec(1, 32, 100, 1),
                           c = ks_test_spec(2, 32, 100, 2), d = ks_test_spec(3, 32, 100, 3);
    assert_non_null(admit(f, &a, 3));
    assert_int_equal(ks_active_reserved(&f->set), 6);
    assert_non_null(admit(f, &b, 3));
    assert_non_null(admit(f, &c, 3));
    assert_int_equal(ks_active_reserved(&f->set), 18);
    assert_null(admit(f, &d, 3));
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    assert_int_equal(ks_active_emit(&f->set, 4, 1, f->err, sizeof f->err), KS_OK); // 33 tokens each
    double decay = (0.5 - 0.5 * 0.14) / 600, t = 4;
    for (int i = 0; i < 15; i++) // to 48 tokens each, nothing retracted
        decode_step(f, ++t);
    assert_int_equal(f->r.retracted, 0);
    assert_float_equal(f->set.ratio, 0.5 - 15 * decay, 1e-12);
    decode_step(f, ++t); // the fourth blocks would not fit
    assert_int_equal(f->r.retracted, 1);
    assert_int_equal(f->set.n, 2);
    assert_int_equal(f->set.n_out, 1);
    assert_int_equal(f->set.out[0].spec.id, 2);
    assert_int_equal(f->set.out[0].req, KS_NONE);
    assert_int_equal(f->set.out[0].generated, 16);
    assert_float_equal(f->set.ratio, 72.0 / 121, 1e-12);
    uint32_t fills = f->fills;
    struct ks_active *x = NULL;
    assert_int_equal(ks_active_resume(&f->set, &x, f->err, sizeof f->err), KS_OK);
    assert_null(x); // A's 8 and B's 10 blocks reserved: C's 10 (48 + 20 tokens) do not fit
    for (int i = 0; i < 3; i++)
        decode_step(f, ++t);
    assert_int_equal(f->finished, 1); // A
    assert_float_equal(f->set.ratio, 72.0 / 121 - 3 * decay, 1e-12);
    assert_int_equal(ks_active_reserved(&f->set), 10);
    assert_int_equal(ks_active_resume(&f->set, &x, f->err, sizeof f->err), KS_OK);
    assert_non_null(x);
    assert_int_equal(ks_active_reserved(&f->set), 20);
    assert_int_equal(f->set.n_out, 0);
    assert_int_equal(x->spec.id, 2);
    assert_int_equal(ks_cache_req_len(f->c, x->req), 3);
    assert_int_equal(f->fills, fills + 1);
    assert_int_equal(f->last_to, 3);
    assert_false(ks_active_decodes(x));
    assert_int_equal(ks_active_decoding_count(&f->set), 1); // B
    uint32_t took = 0;
    ks_active_prefill_chunk(&f->set, NULL, &took);
    assert_int_equal(took, 48);
    uint64_t tokens = f->r.tokens;
    double last = x->last_token;
    assert_int_equal(ks_active_emit(&f->set, t + 0.5, 1, f->err, sizeof f->err), KS_OK);
    x = f->set.a[0].spec.id == 2 ? &f->set.a[0] : &f->set.a[1];
    assert_int_equal(x->generated, 17);
    assert_int_equal(x->ctx, 49);
    assert_true(ks_active_decodes(x));
    assert_int_equal(f->r.tokens, tokens + 1);
    assert_float_equal(x->itl_max, t + 0.5 - last, 1e-12);
    assert_int_equal(f->r.admitted, 3); // a readmission is not an admission
    teardown(f);
}

// A retracted request still waiting when the run ends is recorded, unfinished.
static void estimate_record_retracted(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 8, 0);
    f->s.scheduler.reserve = KS_RESERVE_ESTIMATE;
    f->s.scheduler.new_token_ratio = 0.1;
    f->s.scheduler.reserve_clip = 16;
    // 16 + ceil(0.1 x 16) = 18 tokens: 2 blocks a layer, 4; two fit in 8
    struct ks_request_spec a = ks_test_spec(0, 16, 40, 0), b = ks_test_spec(1, 16, 40, 1);
    assert_non_null(admit(f, &a, 1));
    assert_non_null(admit(f, &b, 1));
    ks_active_prefill_chunk(&f->set, NULL, NULL);
    assert_int_equal(ks_active_emit(&f->set, 2, 1, f->err, sizeof f->err), KS_OK); // 17 tokens: 2 blocks each
    // the 16th step would open third blocks (12 > 8): B goes, A alone is
    // left however little room it has
    for (int i = 0; i < 16; i++)
        decode_step(f, 3 + i);
    assert_int_equal(f->r.retracted, 1);
    assert_int_equal(f->set.n, 1);
    assert_int_equal(f->set.out[0].spec.id, 1);
    assert_float_equal(f->set.ratio, (16 + 20) / 41.0, 1e-12);
    ks_active_record_rest(&f->set);
    assert_int_equal(f->r.n_rec, 2);
    assert_int_equal(f->r.rec[1].id, 1);
    assert_int_equal(f->r.rec[1].generated, 16);
    assert_true(f->r.rec[1].finish < 0);
    teardown(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(admission_bound),
        cmocka_unit_test(token_timing),
        cmocka_unit_test(goodput_objectives),
        cmocka_unit_test(growth_by_block),
        cmocka_unit_test(prefill_chunks_oldest_first),
        cmocka_unit_test(shared_prefix),
        cmocka_unit_test(full_tiers),
        cmocka_unit_test(record_rest),
        cmocka_unit_test(estimate_retract_resume),
        cmocka_unit_test(estimate_record_retracted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
