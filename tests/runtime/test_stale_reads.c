// test_stale_reads.c - migration races readers, and the generation check
// (ks_cache_locate + ks_cache_validate) refuses every stale read.
//
// The cache manager is plain C, not thread-safe and has no clock. A runtime
// drives it as this test does: one mutex around every call into the manager,
// bytes moved outside the mutex, readers that locate a block, read its page
// without the mutex and validate what they located afterwards.
//
//  - Page memory: per tier (L1, L2), PAGE_WORDS _Atomic uint64_t words a
//    page. A page that holds block X at generation g holds tag(X, g, w) in
//    its word w, so a reader can tell whether what it read is what it located.
//  - The migrator thread: under the mutex, a step, accesses to random blocks
//    and a plan; without it, each batch in plan order: every word of each
//    block is loaded from its source page (which must read tag(X, g, w)) and
//    stored to its destination page as tag(X, g + 1, w), g + 1 being the
//    generation that ks_cache_confirm gives X (bumped mod 2^KS_GEN_BITS) --
//    copy and retag in one pass, so a destination word is only ever written
//    once per move, with the value X will be located with; then, under the
//    mutex, ks_cache_confirm. A batch starts only when the batch it comes
//    `after` has been confirmed: batches run and are confirmed one by one in
//    plan order, which respects `after`. The test's own page table checks
//    that every destination page is free (never used, or vacated by a
//    confirmed batch) when its batch starts, and that the manager's view
//    after each confirm is what the copies did.
//  - Reader threads: under the mutex, locate a random block (any readable
//    state: resident, or in flight and "still readable here"; half the reads
//    look among a few blocks for one in flight, whose page is about to be
//    vacated and reused); without it, read the page's words with a pause in
//    the middle; under the mutex, validate. The read is stale when any word
//    is not tag(X, g, w) for the located (X, g). A stale read that validate
//    accepts has slipped through.
//
// Why an accepted read cannot be stale -- the guarantee under test. A reader
// R locates X on page P of tier T at generation g (L), reads P's words (the
// loads r), and validate (V) accepts. All page words are written by the
// migrator thread only, so each word's modification order is the migrator's
// program order.
//  (1) r sees at least X@g. X came to P with generation g by a batch whose
//      stores were sequenced before its confirm (or by the initial fill,
//      before the threads start); L took the mutex after that confirm (it saw
//      generation g), so those stores happen before L and hence before r:
//      by write-read coherence r reads them or a later store.
//  (2) r sees no later store. After X@g was stored, P's words are next
//      stored by a batch B whose destination is P. P must then be free in
//      the manager: vacated by a confirmed batch C that moved X away
//      (handed over to B through B's `after`, or freed and allocated again
//      later). The migrator starts B only after C's confirm returned, so C
//      happens before B's stores. C moved X: it changed X's tier and page
//      and bumped its generation. V accepted, so V saw X still at (T, P, g):
//      V came before C in the mutex's order, so r (sequenced before V)
//      happens before C, hence before B's stores, and by read-write
//      coherence r cannot read them or anything after them.
//  So an accepted read reads exactly X@g. Relaxed atomics suffice: every
// happens-before edge used above is the mutex's (and program order); the
// words are atomic only so that the intended data race of a reader with a
// batch is defined behaviour (and ThreadSanitizer-clean).
//  The argument needs, and the test checks: a destination page is free when
// its batch starts, its `after` confirmed (dst_busy == 0: the manager hands
// out no page that a block still holds, except through `after`); the manager's
// location of X after each confirm is the batch's destination with the
// bumped generation; and no block moves 2^KS_GEN_BITS times in the run, so
// a generation cannot wrap back to g while a reader holds it (at that point
// validate could accept a location that has been migrated away and back).
// The caller's side of the contract is the one thing the manager cannot
// check: a batch whose `after` is not KS_NONE must not start writing before
// `after` is confirmed -- finishing after's copies is not enough, readers of
// the blocks it moves validate against it until its confirm. KS_STALE_EARLY=1
// breaks exactly that rule (every batch of a plan is copied, then all are
// confirmed) and the test then expects stale reads to slip through, showing
// that the counting can see them.
//
// Environment: KS_STALE_STEPS=N migrator steps (default STEPS);
// KS_STALE_EARLY=1 the negative control above.
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "cache.h"
#include "clock.h"
#include "rng.h"

enum {
    N_REQ = 4,          // requests
    GROUPS = 2,         // layer groups per request
    BLOCKS = 16,        // logical blocks per group: 128 blocks in all
    L1_PAGES = 24,      // far fewer than the blocks: misses keep migrating
    L2_PAGES = 160,     // room for every block
    PAGE_WORDS = 64,    // one page
    ACCESSES = 4,       // random accesses per step
    READERS = 3,
    HUNT = 8,           // blocks a hunting reader locates to find one in flight
    RESERVE = 2,        // L1 pages kept free: demotions without a handoff
    STEPS = 12000,      // migrator steps
    CHECK_EVERY = 500,  // steps between invariant checks (ks_cache_check)
    GEN_WRAP = 1 << KS_GEN_BITS,
    N_IDS = 4096,       // virtual ids (params.n_blocks)
};

static uint64_t tag(uint32_t id, unsigned gen, unsigned w)
{
    return (uint64_t)(id + 1) << 32 | (uint64_t)(gen % GEN_WRAP) << 16 | w; // never 0: zero is "unwritten"
}

struct mig_stats {
    uint64_t steps, batches, with_after, blocks;
    uint64_t dst_busy;  // destination page not free when its batch started
    uint64_t src_bad;   // source word not tag(X, g, w)
    uint64_t mismatch;  // manager's location disagrees with what the copies did
    uint32_t max_moves; // most moves of one block
    uint64_t errors;
    char err[160];
};

struct read_stats {
    uint64_t reads, refused, stale, stale_accepted, refused_ok, torn, inflight, errors;
    char err[160];
};

struct world {
    pthread_mutex_t mu;
    struct ks_cache *c;
    uint32_t req[N_REQ];
    _Atomic uint64_t *mem[2]; // [tier][page * PAGE_WORDS + word]
    atomic_int done;
    uint32_t steps;
    int early;
    // the migrator's alone
    struct { uint32_t req, group, block; } ref[N_IDS]; // virtual id -> logical block
    uint32_t owner[2][L2_PAGES];                        // test's page table: id or KS_NONE
    uint16_t gen_before[N_IDS];
    uint32_t planned_in[N_IDS]; // step whose plan moves the id
    uint32_t moves[N_IDS];
    struct mig_stats mig;
};

struct reader {
    struct world *w;
    unsigned idx;
    struct read_stats st;
};

static void lock(struct world *w)
{
    if (pthread_mutex_lock(&w->mu) != 0)
        abort();
}

static void unlock(struct world *w)
{
    if (pthread_mutex_unlock(&w->mu) != 0)
        abort();
}

static _Atomic uint64_t *page_of(struct world *w, unsigned tier, uint32_t page)
{
    return w->mem[tier] + (size_t)page * PAGE_WORDS;
}

static void pause_us(unsigned us)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)us * 1000};
    nanosleep(&ts, NULL);
}

// A pause of a random kind: none, a yield, a few microseconds' sleep or,
// now and then, a longer one (a reader descheduled mid-read).
static void random_pause(struct ks_rng *rng)
{
    uint32_t k = ks_rng_below(rng, 16);
    if (k < 4)
        return;
    if (k < 8)
        sched_yield();
    else if (k < 14)
        pause_us(1 + ks_rng_below(rng, 30));
    else
        pause_us(50 + ks_rng_below(rng, 250));
}

#define MIG_ERROR(m, ...)                                                                                              \
    do {                                                                                                               \
        if ((m)->errors++ == 0)                                                                                        \
            snprintf((m)->err, sizeof (m)->err, __VA_ARGS__);                                                          \
    } while (0)

// ---- the migrator --------------------------------------------------------

// Copies a batch's blocks from their source pages to their destination
// pages, retagged with the generation confirm will give them. No mutex: only
// what this thread wrote into its own tables and the batch (written by
// ks_cache_plan, in this thread) are read.
static void execute(struct world *w, const struct ks_batch *b, struct ks_rng *rng)
{
    struct mig_stats *m = &w->mig;
    for (uint32_t i = 0; i < b->n; i++) {
        uint32_t id = b->blocks[i], dp = b->dst_pages[i];
        unsigned g = w->gen_before[id];
        if (w->owner[b->dst][dp] != KS_NONE)
            m->dst_busy++;
        w->owner[b->dst][dp] = id;
        _Atomic uint64_t *src = page_of(w, b->src, b->src_pages[i]), *dst = page_of(w, b->dst, dp);
        for (unsigned k = 0; k < PAGE_WORDS; k++) {
            if (atomic_load_explicit(&src[k], memory_order_relaxed) != tag(id, g, k))
                m->src_bad++;
            atomic_store_explicit(&dst[k], tag(id, g + 1, k), memory_order_relaxed);
            if (k == PAGE_WORDS / 2 && ks_rng_below(rng, 4) == 0)
                sched_yield(); // a reader may see this page half written
        }
    }
}

// Confirms a batch (mutex held) and checks the manager moved what was copied.
static void confirm(struct world *w, struct ks_batch *b)
{
    struct mig_stats *m = &w->mig;
    // the batch's arrays are the manager's until confirm: take what we need first
    uint32_t n = b->n, ids[64], sp[64], dp[64];
    unsigned src = b->src, dst = b->dst;
    if (n > 64) {
        MIG_ERROR(m, "batch of %u blocks", n);
        return;
    }
    memcpy(ids, b->blocks, n * sizeof *ids);
    memcpy(sp, b->src_pages, n * sizeof *sp);
    memcpy(dp, b->dst_pages, n * sizeof *dp);
    int st = ks_cache_confirm(w->c, b);
    if (st != KS_OK) {
        MIG_ERROR(m, "ks_cache_confirm: %s", ks_status_str(st));
        return;
    }
    m->batches++;
    m->blocks += n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        if (w->owner[src][sp[i]] == id)
            w->owner[src][sp[i]] = KS_NONE; // vacated: the next batch may write it
        else
            m->mismatch++; // (or, under KS_STALE_EARLY, already overwritten)
        struct ks_loc l;
        st = ks_cache_locate(w->c, w->req[w->ref[id].req], w->ref[id].group, w->ref[id].block, &l);
        if (st != KS_OK || l.id != id || l.tier != dst || l.page != dp[i] || l.state != KS_BLK_RESIDENT ||
            l.gen != (w->gen_before[id] + 1u) % GEN_WRAP)
            m->mismatch++;
        if (++w->moves[id] > m->max_moves)
            m->max_moves = w->moves[id];
    }
}

static void *migrator(void *arg)
{
    struct world *w = arg;
    struct mig_stats *m = &w->mig;
    struct ks_rng rng;
    ks_rng_seed(&rng, 0x5ea1ed);
    uint64_t budget = 4 * PAGE_WORDS * sizeof(uint64_t); // four prefetched blocks a step
    for (uint32_t t = 1; t <= w->steps && m->errors == 0; t++) {
        struct ks_plan plan;
        lock(w);
        int st = ks_cache_step(w->c, t);
        for (unsigned a = 0; a < ACCESSES && st == KS_OK; a++) {
            struct ks_access acc = {.block = ks_rng_below(&rng, BLOCKS), .mass = (float)ks_rng_unit(&rng),
                                    .next = KS_NONE};
            st = ks_cache_access(w->c, w->req[ks_rng_below(&rng, N_REQ)], ks_rng_below(&rng, GROUPS), &acc, 1, NULL,
                                 NULL);
        }
        if (st == KS_OK)
            st = ks_cache_plan(w->c, budget, &plan);
        if (st != KS_OK) {
            unlock(w);
            MIG_ERROR(m, "step %u: %s", t, ks_status_str(st));
            break;
        }
        // the generation each block has now (each block moves at most once a plan)
        for (uint32_t i = 0; i < plan.n; i++) {
            const struct ks_batch *b = plan.batch[i];
            for (uint32_t k = 0; k < b->n; k++) {
                uint32_t id = b->blocks[k];
                struct ks_loc l;
                if (id >= N_IDS || w->planned_in[id] == t ||
                    ks_cache_locate(w->c, w->req[w->ref[id].req], w->ref[id].group, w->ref[id].block, &l) != KS_OK ||
                    l.id != id || l.tier != b->src || l.page != b->src_pages[k] ||
                    (l.state != KS_BLK_MIG_UP && l.state != KS_BLK_MIG_DOWN)) {
                    m->mismatch++;
                    continue;
                }
                w->planned_in[id] = t;
                w->gen_before[id] = l.gen;
            }
        }
        unlock(w);
        m->steps++;

        if (w->early) { // negative control: copy everything, then confirm
            for (uint32_t i = 0; i < plan.n; i++)
                execute(w, plan.batch[i], &rng);
            sched_yield();
            for (uint32_t i = 0; i < plan.n; i++) {
                lock(w);
                confirm(w, plan.batch[i]);
                unlock(w);
                random_pause(&rng);
            }
            continue;
        }
        // in plan order, each confirmed before the next starts: `after` first
        for (uint32_t i = 0; i < plan.n; i++) {
            struct ks_batch *b = plan.batch[i];
            m->with_after += b->after != KS_NONE;
            execute(w, b, &rng);
            random_pause(&rng); // readers validate against the old place meanwhile
            lock(w);
            confirm(w, b);
            if (i + 1 == plan.n && t % CHECK_EVERY == 0) {
                char msg[128] = "";
                if (ks_cache_check(w->c, msg, sizeof msg) != KS_OK)
                    MIG_ERROR(m, "step %u: ks_cache_check: %s", t, msg);
            }
            unlock(w);
            if (ks_rng_below(&rng, 2)) // the next batch may reuse the page just vacated
                sched_yield();         // soon: readers still on it see it change
        }
    }
    atomic_store_explicit(&w->done, 1, memory_order_release);
    return NULL;
}

// ---- readers ---------------------------------------------------------------

static void *reader(void *arg)
{
    struct reader *rd = arg;
    struct world *w = rd->w;
    struct read_stats *s = &rd->st;
    struct ks_rng rng;
    ks_rng_seed(&rng, 0xfeed + rd->idx);
    while (!atomic_load_explicit(&w->done, memory_order_acquire)) {
        // half the reads look for a block in flight (among a few random
        // ones): those are the pages about to be vacated and reused
        unsigned tries = ks_rng_below(&rng, 2) ? HUNT : 1;
        struct ks_loc loc;
        int st = KS_OK;
        lock(w);
        for (unsigned k = 0; k < tries; k++) {
            uint32_t q = ks_rng_below(&rng, N_REQ), g = ks_rng_below(&rng, GROUPS), j = ks_rng_below(&rng, BLOCKS);
            st = ks_cache_locate(w->c, w->req[q], g, j, &loc);
            if (st != KS_OK || loc.state != KS_BLK_RESIDENT)
                break;
        }
        unlock(w);
        if (st != KS_OK || loc.tier > KS_L2 || loc.state == KS_BLK_FREE || loc.page >= L2_PAGES ||
            (loc.tier == KS_L1 && loc.page >= L1_PAGES)) {
            if (s->errors++ == 0)
                snprintf(s->err, sizeof s->err, "locate: %s, tier %u page %u state %u", ks_status_str(st), loc.tier,
                         loc.page, loc.state);
            continue;
        }
        s->inflight += loc.state != KS_BLK_RESIDENT;
        _Atomic uint64_t *pg = page_of(w, loc.tier, loc.page);
        unsigned bad = 0;
        for (unsigned k = 0; k < PAGE_WORDS; k++) {
            if (k == PAGE_WORDS / 2) // the window a migration can land in
                ks_rng_below(&rng, 4) ? random_pause(&rng) : pause_us(50 + ks_rng_below(&rng, 450));
            bad += atomic_load_explicit(&pg[k], memory_order_relaxed) != tag(loc.id, loc.gen, k);
        }
        lock(w);
        st = ks_cache_validate(w->c, &loc);
        unlock(w);
        s->reads++;
        s->stale += bad != 0;
        s->torn += bad != 0 && bad < PAGE_WORDS; // saw a page change under it
        if (st == KS_OK) {
            s->stale_accepted += bad != 0;
        } else if (st == KS_ESTALE) {
            s->refused++;
            s->refused_ok += bad == 0;
        } else if (s->errors++ == 0) {
            snprintf(s->err, sizeof s->err, "validate: %s", ks_status_str(st));
        }
    }
    return NULL;
}

// ---- the test ----------------------------------------------------------------

static uint32_t env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? (uint32_t)strtoul(v, NULL, 10) : dflt;
}

static void stale_reads_refused(void **state)
{
    (void)state;
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->steps = env_u32("KS_STALE_STEPS", STEPS);
    w->early = env_u32("KS_STALE_EARLY", 0) != 0;
    assert_int_equal(pthread_mutex_init(&w->mu, NULL), 0);
    atomic_init(&w->done, 0);

    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = N_IDS;
    p.tier_blocks[KS_L1] = L1_PAGES;
    p.tier_blocks[KS_L2] = L2_PAGES;
    p.block_bytes[KS_L1] = p.block_bytes[KS_L2] = PAGE_WORDS * sizeof(uint64_t);
    p.groups = GROUPS;
    p.prefetch_window = 2;
    p.migration_batch = 4; // several batches a step, `after` chains between them
    p.seed = 7;
    p.debug = 0; // params.debug would check under the mutex after every confirm: readers
                 // would queue behind it and validate before the next batch writes
    char err[256] = "";
    w->c = ks_cache_new(&p, err, sizeof err);
    if (!w->c)
        fail_msg("ks_cache_new: %s", err);
    ks_cache_set_reserve(w->c, RESERVE);

    for (unsigned t = 0; t < 2; t++) {
        uint32_t pages = t == KS_L1 ? L1_PAGES : L2_PAGES;
        w->mem[t] = malloc((size_t)pages * PAGE_WORDS * sizeof *w->mem[t]);
        assert_non_null(w->mem[t]);
        for (size_t k = 0; k < (size_t)pages * PAGE_WORDS; k++)
            atomic_init(&w->mem[t][k], 0);
        for (uint32_t pg = 0; pg < L2_PAGES; pg++)
            w->owner[t][pg] = KS_NONE;
    }
    // the requests, and the initial fill of their pages (before any thread)
    for (uint32_t q = 0; q < N_REQ; q++) {
        assert_int_equal(ks_cache_req_new(w->c, &w->req[q]), KS_OK);
        assert_int_equal(ks_cache_req_grow(w->c, w->req[q], BLOCKS, KS_L1, NULL), KS_OK);
        for (uint32_t g = 0; g < GROUPS; g++)
            for (uint32_t j = 0; j < BLOCKS; j++) {
                struct ks_loc l;
                assert_int_equal(ks_cache_locate(w->c, w->req[q], g, j, &l), KS_OK);
                assert_true(l.id < N_IDS && l.tier <= KS_L2 && l.state == KS_BLK_RESIDENT);
                assert_true(l.page < (l.tier == KS_L1 ? L1_PAGES : L2_PAGES));
                assert_int_equal(w->owner[l.tier][l.page], KS_NONE);
                w->owner[l.tier][l.page] = l.id;
                w->ref[l.id].req = q;
                w->ref[l.id].group = g;
                w->ref[l.id].block = j;
                _Atomic uint64_t *pg = page_of(w, l.tier, l.page);
                for (unsigned k = 0; k < PAGE_WORDS; k++)
                    atomic_store_explicit(&pg[k], tag(l.id, l.gen, k), memory_order_relaxed);
            }
    }

    double t0 = ks_clock_mono();
    pthread_t mt, rt[READERS];
    struct reader rd[READERS];
    memset(rd, 0, sizeof rd);
    assert_int_equal(pthread_create(&mt, NULL, migrator, w), 0);
    for (unsigned i = 0; i < READERS; i++) {
        rd[i].w = w;
        rd[i].idx = i;
        assert_int_equal(pthread_create(&rt[i], NULL, reader, &rd[i]), 0);
    }
    assert_int_equal(pthread_join(mt, NULL), 0);
    struct read_stats s = {0};
    for (unsigned i = 0; i < READERS; i++) {
        assert_int_equal(pthread_join(rt[i], NULL), 0);
        s.reads += rd[i].st.reads;
        s.refused += rd[i].st.refused;
        s.stale += rd[i].st.stale;
        s.stale_accepted += rd[i].st.stale_accepted;
        s.refused_ok += rd[i].st.refused_ok;
        s.torn += rd[i].st.torn;
        s.inflight += rd[i].st.inflight;
        if (rd[i].st.errors && !s.errors)
            memcpy(s.err, rd[i].st.err, sizeof s.err);
        s.errors += rd[i].st.errors;
    }
    double secs = ks_clock_mono() - t0;

    const struct mig_stats *m = &w->mig;
    const struct ks_cache_stats *cs = ks_cache_stats(w->c);
    printf("stale_reads%s: %.2f s, %u readers\n", w->early ? " (KS_STALE_EARLY: after not waited for)" : "", secs,
           READERS);
    printf("  migrator: steps %llu, batches %llu (with after %llu), blocks moved %llu, most moves of a block %u\n",
           (unsigned long long)m->steps, (unsigned long long)m->batches, (unsigned long long)m->with_after,
           (unsigned long long)m->blocks, m->max_moves);
    printf("  migrator checks: dst_busy %llu, src_bad %llu, mismatch %llu\n", (unsigned long long)m->dst_busy,
           (unsigned long long)m->src_bad, (unsigned long long)m->mismatch);
    printf("  readers: reads %llu (located in flight %llu), refused %llu, stale %llu (torn %llu), "
           "stale_accepted %llu, refused_with_ok_data %llu\n",
           (unsigned long long)s.reads, (unsigned long long)s.inflight, (unsigned long long)s.refused,
           (unsigned long long)s.stale, (unsigned long long)s.torn, (unsigned long long)s.stale_accepted,
           (unsigned long long)s.refused_ok);
    printf("  manager: stale_refused %llu\n", (unsigned long long)cs->stale_refused);
    fflush(stdout);

    if (m->errors)
        fail_msg("migrator: %llu errors, first: %s", (unsigned long long)m->errors, m->err);
    if (s.errors)
        fail_msg("readers: %llu errors, first: %s", (unsigned long long)s.errors, s.err);
    assert_int_equal(m->steps, w->steps);
    assert_true(m->max_moves < GEN_WRAP); // no generation wrapped: see the top
    assert_int_equal(cs->stale_refused, s.refused);
    char msg[512] = "";
    if (ks_cache_check(w->c, msg, sizeof msg) != KS_OK)
        fail_msg("ks_cache_check: %s", msg);
    assert_int_equal(ks_cache_inflight_batches(w->c), 0);
    if (w->early) {
        // the rule broken on purpose: reads must slip through, and be seen
        assert_true(s.stale_accepted > 0);
    } else {
        assert_int_equal(m->dst_busy, 0);
        assert_int_equal(m->src_bad, 0);
        assert_int_equal(m->mismatch, 0);
        assert_true(m->with_after > 0);
        assert_int_equal(s.stale_accepted, 0); // none slipped through
        assert_true(s.refused > 0);            // and the race really happened
        assert_true(s.stale > 0);
    }

    ks_cache_free(w->c);
    free(w->mem[0]);
    free(w->mem[1]);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_reads_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
