// test_accessmodel_ref.c - the access model's generator (accessmodel.h) draws exactly the selections of its definition.
//
// The generator keeps its state ordered step to step so that a selection
// costs O(selected blocks) with no sort; the reference here is the model's
// definition written plainly: the previous selection as a list, the return
// candidates as slots scanned one by one, the free picks ranked by a sort by
// (age descending, block) for their masses and sorted by block for the
// output. Both draw from the same seeded generator in the same order, so the
// check is bit for bit: the same count, blocks and masses (compared as
// bytes) at every step, and any extra or missing draw shows up as diverging
// selections a few steps later.
// Covered: models fitted to the repository's drifting trace (the cluster
// scenarios' fit) and to a trace written here whose layers exercise the
// cases (a moving free set, every record saturated, no edges, wide edges,
// edges only); horizons 2 to 512 (the ring wraps, events expire); contexts
// growing slowly, from one block (empty free range, edges still forming)
// and by jumps (old window blocks entering the free range).
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accessmodel.h"
#include "rng.h"
#include "status.h"
#include "tmpdir.h"
#include "trace.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define DRIFTING KS_SOURCE_DIR "/results/traces/synthetic_drifting_8k.h5"

enum {
    MAX_BLOCKS = 4096, // contexts are capped here
    STEPS = 700,       // per stream: past the default horizon of 512
    TRIES = 16,        // as accessstream.c
};

// ---- the reference ---------------------------------------------------------------

struct ref_pick {
    uint32_t block, age;
    float mass;
};

struct ref_slot {
    uint32_t *block;
    size_t n;
};

struct ref {
    const struct ks_accessmodel_layer *ml;
    uint32_t horizon, near, ring;
    struct ks_rng rng;
    uint64_t seed; // the free counts' uniforms hash it with the step
    uint32_t step;
    uint32_t last[MAX_BLOCKS + 1]; // step + 1 of the last selection (0: never); one past the end stays 0
    uint32_t age[MAX_BLOCKS], pos[MAX_BLOCKS]; // consecutive steps selected; index in its slot
    struct ref_pick prev[MAX_BLOCKS], pk[2 * MAX_BLOCKS];
    size_t n_prev;
    uint64_t filled, restayed; // steps the draws left short of their count; blocks that then stayed
    struct ref_slot *slot; // [ring] blocks last selected at step t (t mod ring), not at t + 1
};

static struct ref *ref_new(const struct ks_accessmodel *m, uint32_t layer, const struct ks_accessmodel_params *p,
                           uint64_t seed)
{
    struct ref *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->ml = ks_accessmodel_layer(m, layer);
    r->horizon = p->horizon;
    r->near = p->near;
    r->ring = p->horizon + 1;
    r->slot = calloc(r->ring, sizeof *r->slot);
    assert_non_null(r->slot);
    for (uint32_t i = 0; i < r->ring; i++)
        assert_non_null(r->slot[i].block = malloc(MAX_BLOCKS * sizeof *r->slot[i].block));
    ks_rng_seed(&r->rng, seed);
    r->seed = seed;
    return r;
}

static void ref_free(struct ref *r)
{
    for (uint32_t i = 0; i < r->ring; i++)
        free(r->slot[i].block);
    free(r->slot);
    free(r);
}

static unsigned ref_bucket(uint64_t x, unsigned n) // 0 for 1, else ceil(log2 x), capped at n - 1
{
    unsigned k = 0;
    while (k + 1 < n && (UINT64_C(1) << k) < x)
        k++;
    return k;
}

// Is b a return candidate: last selected within the horizon, not at the previous step?
static int ref_candidate(const struct ref *r, uint32_t b)
{
    uint32_t l = r->last[b];
    return l != 0 && l < r->step && (uint64_t)l - 1 + r->horizon >= r->step;
}

static void ref_take(struct ref *r, uint32_t b, uint32_t age)
{
    if (ref_candidate(r, b)) { // out of its slot: the slot's last block takes its place
        struct ref_slot *sl = &r->slot[(r->last[b] - 1) % r->ring];
        uint32_t moved = sl->block[--sl->n];
        sl->block[r->pos[b]] = moved;
        r->pos[moved] = r->pos[b];
    }
    r->last[b] = r->step + 1;
    r->age[b] = age;
}

static uint32_t ref_return(struct ref *r, unsigned k, uint32_t fs, uint32_t fe)
{
    uint64_t dlo = (UINT64_C(1) << (k - 1)) + 1, dhi = UINT64_C(1) << k;
    dhi = dhi < r->horizon ? dhi : r->horizon;
    if (dlo > dhi || r->step < dlo)
        return UINT32_MAX;
    uint32_t tlo = r->step > dhi ? r->step - (uint32_t)dhi : 0, thi = r->step - (uint32_t)dlo;
    uint64_t n = 0;
    for (uint32_t t = tlo; t <= thi; t++)
        n += r->slot[t % r->ring].n;
    if (n == 0)
        return UINT32_MAX;
    int want_adjacent = ks_rng_unit(&r->rng) < r->ml->return_adjacent;
    uint32_t x = UINT32_MAX;
    for (int i = 0; i < (want_adjacent ? TRIES : 1); i++) {
        uint64_t c = n <= UINT32_MAX ? ks_rng_below(&r->rng, (uint32_t)n) : ks_rng_next(&r->rng) % n;
        uint32_t t = tlo; // candidate c, counting from the oldest step's slot
        while (c >= r->slot[t % r->ring].n)
            c -= r->slot[t++ % r->ring].n;
        x = r->slot[t % r->ring].block[c];
        int adjacent = (x > 0 && r->last[x - 1] >= r->step && r->last[x - 1] != 0) || // x + 1 <= MAX_BLOCKS
                       (r->last[x + 1] >= r->step && r->last[x + 1] != 0);
        if (!want_adjacent || adjacent)
            break;
    }
    return x >= fs && x < fe ? x : UINT32_MAX;
}

static int ref_far_ok(const struct ref *r, int64_t x, uint32_t fs, uint32_t fe)
{
    if (x < fs || x >= fe)
        return 0;
    uint32_t l = r->last[x];
    return l == 0 || (uint64_t)l - 1 + r->horizon < r->step;
}

static uint32_t ref_far(struct ref *r, uint32_t fs, uint32_t fe, size_t n_picked)
{
    const struct ks_accessmodel_layer *ml = r->ml;
    double u = ks_rng_unit(&r->rng);
    size_t anchors = r->n_prev + n_picked;
    if (anchors && u < ml->far_adjacent + ml->far_near) {
        int adjacent = u < ml->far_adjacent;
        for (int i = 0; i < TRIES; i++) {
            size_t j = ks_rng_below(&r->rng, (uint32_t)anchors);
            int64_t c = j < r->n_prev ? r->prev[j].block : r->pk[j - r->n_prev].block;
            int64_t o = adjacent ? 1 : 2 + ks_rng_below(&r->rng, r->near - 1);
            int64_t x = ks_rng_below(&r->rng, 2) ? c + o : c - o;
            if (ref_far_ok(r, x, fs, fe))
                return (uint32_t)x;
        }
    }
    for (int i = 0; i < TRIES; i++) {
        uint32_t x = fs + ks_rng_below(&r->rng, fe - fs);
        if (ref_far_ok(r, x, fs, fe))
            return x;
    }
    return UINT32_MAX;
}

// The source of an entering block: a return of reuse-distance bucket k >= 1, or 0 (far).
static unsigned ref_source(struct ref *r)
{
    const struct ks_accessmodel_layer *ml = r->ml;
    unsigned c = ref_bucket(r->step, KS_ACCESSMODEL_GAPS);
    c = c < ml->n_classes ? c : ml->n_classes - 1;
    const double *gap = ml->class_gap + (size_t)c * KS_ACCESSMODEL_GAPS;
    double u = ks_rng_unit(&r->rng), acc = 0;
    for (unsigned k = 1; k < KS_ACCESSMODEL_GAPS; k++)
        if (u < (acc += gap[k]))
            return k;
    return 0;
}

static int ref_by_rank(const void *a, const void *b) // age descending, then block
{
    const struct ref_pick *x = a, *y = b;
    if (x->age != y->age)
        return x->age < y->age ? 1 : -1;
    return x->block < y->block ? -1 : x->block > y->block;
}

static int ref_by_block(const void *a, const void *b)
{
    const struct ref_pick *x = a, *y = b;
    return x->block < y->block ? -1 : x->block > y->block;
}

static uint32_t ref_next(struct ref *r, uint32_t nb, uint32_t *out, float *mass)
{
    const struct ks_accessmodel_layer *ml = r->ml;
    uint32_t step = r->step;
    uint32_t fs = ml->n_sink < nb ? ml->n_sink : nb;
    uint32_t fe = nb - fs > ml->n_window ? nb - ml->n_window : fs;
    uint32_t m_free = fe - fs; // the free count, from the fitted distribution at a uniform hashed from seed and step
    if (ml->count_cdf) {
        uint64_t key = ks_rng_mix(r->seed + UINT64_C(0xd1b54a32d192ed03));
        double u = (double)(ks_rng_mix(key + (uint64_t)(step + 1) * UINT64_C(0x9e3779b97f4a7c15)) >> 11) / 9007199254740992.0;
        uint32_t c = 0;
        while (c < ml->max_free && !(ml->count_cdf[c] > u))
            c++;
        m_free = c < m_free ? c : m_free;
    }
    if (step > r->horizon) // events of step - horizon - 1 expire
        r->slot[(step - r->horizon - 1) % r->ring].n = 0;
    size_t n = 0; // stays
    for (size_t i = 0; i < r->n_prev; i++) {
        const struct ref_pick *p = &r->prev[i];
        if (p->block >= fs && p->block < fe && ks_rng_unit(&r->rng) < ml->stay[ref_bucket(p->age, KS_ACCESSMODEL_AGES)])
            r->pk[n++] = (struct ref_pick){p->block, p->age + 1, 0};
    }
    for (size_t i = 0; n > m_free && i < m_free; i++) {
        size_t j = i + ks_rng_below(&r->rng, (uint32_t)(n - i));
        struct ref_pick x = r->pk[i];
        r->pk[i] = r->pk[j];
        r->pk[j] = x;
    }
    n = n < m_free ? n : m_free;
    for (size_t i = 0; i < n; i++)
        ref_take(r, r->pk[i].block, r->pk[i].age);
    for (uint32_t b = 0; b < fs; b++)
        ref_take(r, b, step > 0 && r->last[b] == step ? r->age[b] + 1 : 1);
    for (uint32_t b = fe; b < nb; b++)
        ref_take(r, b, step > 0 && r->last[b] == step ? r->age[b] + 1 : 1);
    for (size_t tries = 0, budget = 4 * ((size_t)m_free - n) + 16; n < m_free && tries < budget; tries++) {
        unsigned k = ref_source(r);
        uint32_t b = k ? ref_return(r, k, fs, fe) : ref_far(r, fs, fe, n);
        if (b == UINT32_MAX)
            continue;
        r->pk[n++] = (struct ref_pick){b, 1, 0};
        ref_take(r, b, 1);
    }
    if (n < m_free) { // short of the count: from a uniform free block on, wrapping, the
        r->filled++;     // blocks selected neither now nor before entering, then the previous step's staying
        uint32_t from = fs + ks_rng_below(&r->rng, fe - fs);
        for (uint32_t i = 0; i < fe - fs && n < m_free; i++) {
            uint32_t b = fs + (from - fs + i) % (fe - fs);
            if (r->last[b] == 0 || r->last[b] < step) {
                r->pk[n++] = (struct ref_pick){b, 1, 0};
                ref_take(r, b, 1);
            }
        }
        for (uint32_t i = 0; i < fe - fs && n < m_free; i++) {
            uint32_t b = fs + (from - fs + i) % (fe - fs);
            if (step > 0 && r->last[b] == step) {
                r->restayed++;
                r->pk[n++] = (struct ref_pick){b, r->age[b] + 1, 0};
                ref_take(r, b, r->age[b] + 1);
            }
        }
    }
    qsort(r->pk, n, sizeof *r->pk, ref_by_rank);
    for (size_t i = 0; i < n; i++) {
        size_t rank = i < ml->n_mass_free ? i : ml->n_mass_free - 1;
        r->pk[i].mass = ml->n_mass_free ? ml->mass_free[rank] : 0.0f;
    }
    qsort(r->pk, n, sizeof *r->pk, ref_by_block);
    uint32_t k = 0;
    for (uint32_t b = 0; b < fs; b++, k++)
        out[k] = b, mass[k] = ml->mass_sink[b];
    for (size_t i = 0; i < n; i++, k++)
        out[k] = r->pk[i].block, mass[k] = r->pk[i].mass;
    for (uint32_t b = fe; b < nb; b++, k++)
        out[k] = b, mass[k] = ml->mass_window[nb - 1 - b];
    for (size_t i = 0; i < r->n_prev; i++) { // the blocks that left become return candidates
        uint32_t b = r->prev[i].block;
        if (r->last[b] != step + 1) {
            struct ref_slot *sl = &r->slot[(step - 1) % r->ring];
            r->pos[b] = (uint32_t)sl->n;
            sl->block[sl->n++] = b;
        }
    }
    for (uint32_t i = 0; i < k; i++)
        r->prev[i] = (struct ref_pick){out[i], r->age[out[i]], mass[i]};
    r->n_prev = k;
    r->step++;
    return k;
}

// ---- traces to fit -----------------------------------------------------------------

static char tmpdir[64];

static int make_tmpdir(void **state)
{
    (void)state;
    return ks_tmpdir_make(tmpdir, sizeof tmpdir, "ks-accessmodel-ref");
}

static int remove_tmpdir(void **state)
{
    (void)state;
    return ks_tmpdir_remove(tmpdir);
}

enum {
    CASE_BLOCK = 16,  // tokens
    CASE_LAYERS = 5,  // one per kind below
    CASE_STEPS = 300,
    CASE_REQUESTS = 3,
};

// One record of layer kind l (l mod 5): 0 a moving free set between a sink
// and a window of 2, 1 every block (every record saturated), 2 no edges and
// returns from the recent past, 3 wide edges (3 sinks, 5 window blocks) and
// at most 2 free blocks, 4 the edges alone. set[] carries the free set from
// step to step (a flag per block).
static uint32_t case_record(struct ks_rng *g, uint32_t l, uint32_t nb, unsigned char *set, uint32_t *blocks,
                            float *mass)
{
    static const uint32_t sink[] = {1, 0, 0, 3, 2}, window[] = {2, 0, 0, 5, 2};
    uint32_t lo = sink[l], hi = nb - window[l], want = 0;
    switch (l) {
    case 0: want = 6 + ks_rng_below(g, 12); break;
    case 1: want = hi - lo; break;
    case 2: want = 3 + ks_rng_below(g, 8); break;
    case 3: want = ks_rng_below(g, 3); break;
    default: break;
    }
    uint32_t have = 0;
    for (uint32_t b = lo; b < hi; b++) // each block of the set stays with probability 0.8
        have += set[b] = l == 1 || (set[b] && ks_rng_unit(g) < 0.8);
    for (uint32_t tries = 0; have < want && tries < 64; tries++) {
        uint32_t b = lo + ks_rng_below(g, hi - lo);
        if (ks_rng_unit(g) < 0.4) { // next to a block of the set, when one is found
            uint32_t c = lo + ks_rng_below(g, hi - lo);
            b = set[c] && c + 1 < hi ? c + 1 : b;
        }
        have += !set[b];
        set[b] = 1;
    }
    for (uint32_t b = lo; have > want && b < hi; b++)
        if (set[b] && ks_rng_below(g, 2))
            set[b] = 0, have--;
    uint32_t n = 0;
    for (uint32_t b = 0; b < nb; b++)
        if (b < lo || b >= hi || set[b] || (l == 2 && b == 0 && ks_rng_below(g, 2))) {
            blocks[n] = b;
            mass[n++] = (float)ks_rng_unit(g);
        }
    return n;
}

// Writes the trace of the five kinds to path.
static void write_cases(const char *path)
{
    struct ks_trace_meta m = {.block_size = CASE_BLOCK, .layers = CASE_LAYERS, .kv_heads = 1, .q_heads = 1,
                              .head_dim = 8};
    snprintf(m.dtype, sizeof m.dtype, "fp16");
    snprintf(m.source, sizeof m.source, "layer kinds of test_accessmodel_ref");
    char err[512] = "";
    struct ks_trace_writer *w = ks_trace_writer_open(path, &m, err, sizeof err);
    if (!w)
        fail_msg("ks_trace_writer_open: %s", err);
    struct ks_rng g;
    ks_rng_seed(&g, 7);
    static unsigned char set[CASE_LAYERS][512];
    uint32_t blocks[512];
    float mass[512];
    for (uint32_t r = 0; r < CASE_REQUESTS; r++) {
        memset(set, 0, sizeof set);
        uint32_t prompt = (40 + 30 * r) * CASE_BLOCK;
        for (uint32_t s = 0; s < CASE_STEPS; s++)
            for (uint32_t l = 0; l < CASE_LAYERS; l++) {
                uint32_t ctx = prompt + s + 1, nb = (ctx + CASE_BLOCK - 1) / CASE_BLOCK;
                uint32_t n = case_record(&g, l, nb, set[l], blocks, mass);
                if (ks_trace_writer_add(w, r, s, l, ctx, blocks, mass, n, -1) != KS_OK)
                    fail_msg("ks_trace_writer_add: %s", err);
            }
    }
    assert_int_equal(ks_trace_writer_commit(w), KS_OK);
}

static struct ks_accessmodel *fit(const struct ks_trace *t, const struct ks_accessmodel_params *p)
{
    char err[512] = "";
    struct ks_accessmodel *m = ks_accessmodel_fit(t, p, err, sizeof err);
    if (!m)
        fail_msg("ks_accessmodel_fit: %s", err);
    return m;
}

static struct ks_trace *load(const char *path)
{
    char err[512] = "";
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (!t)
        fail_msg("ks_trace_load: %s", err);
    return t;
}

// ---- the comparison -----------------------------------------------------------------

// The context of each step: 0 slow growth from nb0, 1 from one block by 0-2
// blocks a step, 2 from nb0 with jumps of up to 200 blocks.
static uint32_t next_context(struct ks_rng *g, int schedule, uint32_t nb0, uint32_t step, uint32_t nb)
{
    switch (schedule) {
    case 0: nb = nb0 + step / 8; break;
    case 1: nb = step == 0 ? 1 : nb + ks_rng_below(g, 3); break;
    default: nb = step == 0 ? nb0 : nb + (ks_rng_unit(g) < 0.03 ? ks_rng_below(g, 201) : ks_rng_below(g, 2)); break;
    }
    return nb < MAX_BLOCKS ? nb : MAX_BLOCKS;
}

// Steps the reference filled up to their count, and blocks of the previous
// step that stayed in the fill; steps whose last block the model says it
// selects (checked: it did) and does not say, over every compare().
static uint64_t filled, restayed, last_said, last_unsaid;

// Streams of `layer` with seeds 1 .. seeds and every schedule against the
// reference, step by step; returns the selections compared. Each step's
// size is also the stream's count for it (ks_accessmodel_count), asked for
// every step before the first draw.
static uint64_t compare(const struct ks_accessmodel *m, const struct ks_accessmodel_params *p, uint32_t layer,
                        uint32_t nb0, unsigned seeds, const char *what)
{
    static uint32_t got[MAX_BLOCKS], want[MAX_BLOCKS], contexts[STEPS], counts[STEPS];
    static float got_mass[MAX_BLOCKS], want_mass[MAX_BLOCKS];
    uint64_t compared = 0;
    for (unsigned seed = 1; seed <= seeds; seed++)
        for (int schedule = 0; schedule < 3; schedule++) {
            uint64_t sd = seed * UINT64_C(0x9e3779b97f4a7c15) ^ layer;
            struct ks_accessmodel_stream *s = ks_accessmodel_stream_new(m, layer, sd);
            struct ref *r = ref_new(m, layer, p, sd);
            assert_non_null(s);
            struct ks_rng g;
            ks_rng_seed(&g, seed * 31 + (uint64_t)schedule);
            for (uint32_t step = 0; step < STEPS; step++) {
                contexts[step] = next_context(&g, schedule, nb0, step, step ? contexts[step - 1] : 0);
                counts[step] = ks_accessmodel_count(m, layer, sd, step, contexts[step]);
            }
            for (uint32_t step = 0; step < STEPS; step++) {
                uint32_t nb = contexts[step];
                assert_int_equal(ks_accessmodel_stream_step(s), step);
                int n = ks_accessmodel_next(m, s, nb, got, got_mass, MAX_BLOCKS);
                if (n != (int)counts[step])
                    fail_msg("%s layer %u seed %u schedule %d step %u: %d blocks, counted %u before the first draw",
                             what, layer, seed, schedule, step, n, counts[step]);
                if (!ks_accessmodel_selects_last(m, layer, nb)) {
                    last_unsaid++;
                } else if (n < 1 || got[n - 1] != nb - 1) {
                    fail_msg("%s layer %u step %u: the last block (%u) said selected, not among the %d", what, layer,
                             step, nb - 1, n);
                } else {
                    last_said++;
                }
                uint32_t k = ref_next(r, nb, want, want_mass);
                if (n != (int)k || memcmp(got, want, k * sizeof *got) != 0 ||
                    memcmp(got_mass, want_mass, k * sizeof *got_mass) != 0) {
                    uint32_t i = 0;
                    while (n == (int)k && i < k && got[i] == want[i] &&
                           memcmp(&got_mass[i], &want_mass[i], sizeof *got_mass) == 0)
                        i++;
                    fail_msg("%s layer %u seed %u schedule %d step %u (context %u blocks): %d blocks against the "
                             "reference's %u; first difference at %u: block %u mass %a, reference %u mass %a",
                             what, layer, seed, schedule, step, nb, n, k, i, i < (uint32_t)n ? got[i] : 0,
                             i < (uint32_t)n ? got_mass[i] : 0.0f, i < k ? want[i] : 0, i < k ? want_mass[i] : 0.0f);
                }
                compared++;
            }
            filled += r->filled;
            restayed += r->restayed;
            ks_accessmodel_stream_free(s);
            ref_free(r);
        }
    return compared;
}

// The fit of the cluster scenarios: 32 layers of 8K contexts (258 blocks),
// run here on contexts of 1000 blocks and more, as there.
static void same_as_reference_drifting(void **state)
{
    (void)state;
    struct ks_trace *t = load(DRIFTING);
    struct ks_accessmodel_params p;
    ks_accessmodel_params_default(&p);
    struct ks_accessmodel *m = fit(t, &p);
    uint64_t n = 0;
    for (uint32_t l = 0; l < ks_accessmodel_layers(m); l += 5)
        n += compare(m, &p, l, l % 2 ? 1000 : 250, 2, "drifting");
    print_message("drifting: %llu selections identical\n", (unsigned long long)n);
    ks_accessmodel_free(m);
    ks_trace_free(t);
}

// Each layer kind, under horizons from 2 (the ring of 3 slots wraps every
// few steps) to 512, and near from 2 to 40.
static void same_as_reference_cases(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/cases.h5", tmpdir);
    write_cases(path);
    struct ks_trace *t = load(path);
    unlink(path);
    static const uint32_t horizon[] = {2, 7, 64, 512}, near[] = {2, 40, 16, 16};
    uint64_t n = 0;
    for (size_t h = 0; h < sizeof horizon / sizeof *horizon; h++) {
        struct ks_accessmodel_params p;
        ks_accessmodel_params_default(&p);
        p.horizon = horizon[h];
        p.near = near[h];
        struct ks_accessmodel *m = fit(t, &p);
        const struct ks_accessmodel_layer *saturated = ks_accessmodel_layer(m, 1);
        assert_null(saturated->count_cdf); // the kinds are what they say
        assert_int_equal(ks_accessmodel_layer(m, 3)->n_sink, 3);
        assert_int_equal(ks_accessmodel_layer(m, 4)->max_free, 0);
        char what[64];
        snprintf(what, sizeof what, "cases (horizon %u, near %u)", p.horizon, p.near);
        for (uint32_t l = 0; l < CASE_LAYERS; l++)
            n += compare(m, &p, l, l == 1 ? 60 : 100, 3, what);
        ks_accessmodel_free(m);
    }
    print_message("cases: %llu selections identical, %llu filled up to their count (%llu blocks staying)\n",
                  (unsigned long long)n, (unsigned long long)filled, (unsigned long long)restayed);
    assert_true(filled > 0 && restayed > 0); // both ways of filling were compared
    assert_true(last_said > 0 && last_unsaid > 0); // layers with a window and without
    ks_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_as_reference_cases),
        cmocka_unit_test(same_as_reference_drifting),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
