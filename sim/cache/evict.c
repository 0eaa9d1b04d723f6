// evict.c - which blocks leave a full tier: policies and victim selection.
//
// Every policy reduces a block to a 64-bit key; the lowest key leaves first.
//   heat   : decayed attention mass (heat.h codes compare as integers), with
//            blocks used in the last protect_steps steps keyed above all
//            others: a block just fetched or prefetched has had no chance to
//            gather mass yet. Ties go to the least recently used.
//   lru    : step of last access.
//   lfu    : access count, then step of last access.
//   belady : farthest next use first (a block never used again goes first);
//            always exact, through a heap per tier (below).
//   callback: the caller's score, mapped to an order-preserving integer.
//   fifo   : (device buffers, L1) order of arrival in L1; below L1 as lru.
//   random : a hash of (seed, block, step): a fresh uniform order each step.
// Eligible victims are resident (never in flight) and were not accessed in
// the current step (the step's attention needs them all at once).
//
// Selection is sampled, the way Redis approximates LRU: to choose n victims,
// n * evict_samples pages of the tier are drawn at random and, together with
// a pool of the best runners-up of earlier rounds (KS_EVICT_POOL per tier),
// the n eligible blocks with the lowest keys go. Memory stays flat (no
// ordered structure); the pool lets a small sample do the work of a larger. With
// evict_samples == 0, when the tier is no bigger than the sample, or when
// sampling keeps finding nothing eligible, an exact scan of the tier picks
// the lowest keys.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "heap.h"

void ks_evict_view(const struct ks_cache *c, uint32_t id, struct ks_block_view *v)
{
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    const struct ks_chunk *ch = &c->tab.chunk[id / KS_CHUNK];
    uint64_t heat;
    uint32_t last;
    ks_blk_key_fields(c, id, &heat, &last);
    *v = (struct ks_block_view){.id = id,
                                .req = ch->req,
                                .group = ch->group,
                                .pos = ch->pos + id % KS_CHUNK,
                                .tier = ks_blk_tier(b),
                                .refs = ks_blk_refs(b),
                                .last = last,
                                .now = c->now,
                                .heat = ks_heat_value(&c->clk, heat)};
}

static uint64_t order_double(double x)
{
    if (isnan(x))
        return UINT64_MAX;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

// NOTE: inline in the scans (ks_evict_key is the same, out of line): called
// for every page a scan or a sample judges, the call and its policy switch
// were 8.6% of glm_hisparse.lua's main thread (perf, 2026-12-05).
static inline __attribute__((always_inline)) uint64_t key_of(const struct ks_cache *c, uint32_t id)
{
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    uint64_t heat;
    uint32_t last;
    ks_blk_key_fields(c, id, &heat, &last);
    switch (c->p.evict) {
    case KS_EVICT_HEAT: {
        uint64_t protect = c->now - last < c->p.protect_steps;
        return (protect << 63) | (heat << 25) | (last & 0x1ffffffu);
    }
    case KS_EVICT_LRU:
        return last;
    case KS_EVICT_LFU:
        return ((uint64_t)c->lfu[id] << 32) | last;
    case KS_EVICT_BELADY:
        return UINT32_MAX - c->next[id];
    case KS_EVICT_CALLBACK: {
        struct ks_block_view v;
        ks_evict_view(c, id, &v);
        return order_double(c->p.evict_fn(c->p.evict_ud, &v));
    }
    case KS_EVICT_FIFO:
        return c->arrival && ks_blk_tier(b) == KS_L1 ? c->arrival[ks_blk_page(b)] : last;
    case KS_EVICT_RANDOM:
        return ks_rng_mix(c->p.seed ^ ((uint64_t)c->now << 32) ^ id);
    }
    return 0;
}

uint64_t ks_evict_key(const struct ks_cache *c, uint32_t id)
{
    return key_of(c, id);
}

// Whether the block on `page` of tier t may leave: resident there (its
// location word, the prefetched bit aside, is that page, tier and state) and
// not accessed this step; 1 or 0. Computed without a branch on the block's
// state: a device buffer's scan judges every page, and about half its blocks
// were just accessed, in no order (the branch mispredicted on every other
// page: perf, glm_hisparse.lua, 2026-12-05).
// NOTE: inline, with the pending-aggregate lookup out of line: called for
// every sampled page, a call here cost bench cache 7% (perf, 2026-12-01).
static inline uint32_t eligible(const struct ks_cache *c, unsigned t, uint32_t page, uint32_t id)
{
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    uint32_t at = (b->loc & ~(UINT32_C(1) << 31)) == (page | (uint32_t)t << 27 | (uint32_t)KS_BLK_RESIDENT << 29);
    uint32_t last = c->agg_pending ? ks_blk_last(c, id) : b->last;
    return at & (last != c->now);
}

// Max-heap of (key, id) holding the n lowest keys seen (struct kv: cache_impl.h):
// the highest key leaves first.
static int kv_higher(const void *a, const void *b)
{
    uint64_t x = ((const struct kv *)a)->key, y = ((const struct kv *)b)->key;
    return (x < y) - (x > y);
}

// Keeps the want lowest keys among the candidates seen, marking nothing.
// NOTE: always inline: GCC kept it out of line, a call per offer (bench
// cache 18.4 -> 19.0 M accesses/s with heat, glm_hisparse.lua 40 s 23.2 ->
// 22.2 wall s: alternating runs, 2026-12-05).
static inline __attribute__((always_inline)) void heap_offer(struct kv *h, uint32_t *k, uint32_t want, uint64_t key, uint32_t id)
{
    if (*k < want)
        ks_heap_push(h, (*k)++, sizeof *h, &(struct kv){key, id}, kv_higher);
    else if (key < h[0].key)
        ks_heap_replace(h, *k, sizeof *h, &(struct kv){key, id}, kv_higher);
}

// A scan reads the pages in order (their owners stream in) but the owners'
// entries lie anywhere in the block table: each is fetched SCAN_AHEAD pages
// before the scan judges it, so that the misses overlap (a macro: KS_AHEAD's
// NOTE, cache_impl.h).
enum { SCAN_AHEAD = 64 };
#define PREFETCH_OWNER_ENTRY(c, tr, p, end)                                                                       \
    do {                                                                                                         \
        if ((p) < (end) && !((tr)->owner[p] & KS_PAGE_FREE))                                                     \
            __builtin_prefetch(&(c)->tab.blk[(tr)->owner[p]]);                                                   \
    } while (0)

static uint32_t select_exact(struct ks_cache *c, unsigned t, uint32_t n, uint32_t *out)
{
    if (n == 0)
        return 0;
    if (ks_grow((void **)&c->heap, &c->cap_heap, n, sizeof *c->heap) != KS_OK)
        return 0;
    struct kv *h = c->heap;
    uint32_t k = 0;
    const struct ks_tier *tr = &c->tier[t];
    for (uint32_t p = 0; p < tr->hwm; p++) {
        PREFETCH_OWNER_ENTRY(c, tr, p + SCAN_AHEAD, tr->hwm);
        if (!ks_tier_page_used(tr, p))
            continue;
        uint32_t id = tr->owner[p];
        if (eligible(c, t, p, id))
            heap_offer(h, &k, n, key_of(c, id), id);
    }
    for (uint32_t i = 0; i < k; i++) {
        out[i] = h[i].id;
        ks_blk_set_state(ks_blocktab_get(&c->tab, h[i].id), KS_BLK_MIG_DOWN);
    }
    return k;
}

// ---- the wide forms: a buffer's scan, a pool's samples -----------------------
//
// A device buffer's scan judges every page, about half of them eligible and
// few entering the heap once it holds `want`. The wide form judges eight
// pages at a time in 64-bit lanes and offers the pages that pass, in page
// order, to the same heap with the same test. The heap's top only falls once
// the heap is full, so a page that fails the test against the top at the
// start of its eight would fail it later too: the offers, and so the victims
// and their order, are the plain form's.
//   lru : c->l1_last holds each used page's key and eligibility (its block's
//         last use, KS_NONE when the block is not resident there: buffer.c),
//         so no entry is read; c->l1_least bounds each span of KS_SPAN pages
//         from below, and a span whose bound is at the top or above is passed
//         over whole (once the heap is full).
//   heat: the owners' entries are gathered, key and eligibility computed.
//   fifo: the page's arrival is its key; the entries of the pages that may
//         pass are gathered for eligibility.
// A shared pool's sampling round judges its samples the same way, eight at a
// time, under lru (the entry's last use is the key) and heat (sample8).
// Not for the other policies, nor while aggregate accesses are pending (the
// entries then lag the keys): those take the plain form.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KS_EVICT_X86 1
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f")))

struct wide {
    const struct ks_cache *c;
    struct kv *h;
    uint32_t *k, want;
};

// Offers the lanes of `pass`, lowest first.
AVX512 static inline __attribute__((always_inline)) void offer8(const struct wide *w, __mmask8 pass, __m512i key,
                                                                __m512i own)
{
    uint64_t kk[8];
    uint32_t id[8];
    _mm512_storeu_si512(kk, key);
    _mm256_storeu_si256((__m256i *)id, _mm512_cvtepi64_epi32(own));
    for (unsigned m = pass; m; m &= m - 1) {
        unsigned i = (unsigned)__builtin_ctz(m);
        heap_offer(w->h, w->k, w->want, kk[i], id[i]);
    }
}

// Judges pages [p, p + 8) of tier L1 under lru; returns the least l1_last of
// the used pages (UINT64_MAX if none).
AVX512 static inline __attribute__((always_inline)) uint64_t judge8_lru(const struct wide *w, uint32_t p)
{
    const struct ks_cache *c = w->c;
    __m512i own = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)&c->tier[KS_L1].owner[p]));
    __m512i key = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)&c->l1_last[p]));
    __mmask8 used = _mm512_testn_epi64_mask(own, _mm512_set1_epi64(KS_PAGE_FREE)), pass;
    if (*w->k == w->want) { // eligible keys are below now, and KS_NONE is above them all
        pass = _mm512_mask_cmplt_epu64_mask(used, key, _mm512_set1_epi64((long long)w->h[0].key));
    } else {
        pass = _mm512_mask_cmpneq_epi64_mask(used, key, _mm512_set1_epi64(KS_NONE));
        pass = _mm512_mask_cmpneq_epi64_mask(pass, key, _mm512_set1_epi64(c->now));
    }
    if (pass)
        offer8(w, pass, key, own);
    return _mm512_mask_reduce_min_epu64(used, key);
}

// Which of the used pages `cand` of tier t, pages p, their owners' first
// words w0 (last use in the high half), hold a block that may leave: eligible's
// test in lanes.
AVX512 static inline __attribute__((always_inline)) __mmask8 ok8(const struct ks_cache *c, unsigned t, __m512i p,
                                                                 __mmask8 cand, __m512i w0, __m512i last)
{
    __m512i at = _mm512_or_si512(p, _mm512_set1_epi64((long long)t << 27 | (long long)KS_BLK_RESIDENT << 29));
    __mmask8 ok = _mm512_mask_cmpeq_epi64_mask(cand, _mm512_and_si512(w0, _mm512_set1_epi64(0x7fffffffLL)), at);
    return _mm512_mask_cmpneq_epi64_mask(ok, last, _mm512_set1_epi64(c->now));
}

// key_of's heat key in the lanes ok (entries at idx, their last uses last):
// (protect << 63) | (heat << 25) | (last & 0x1ffffff).
AVX512 static inline __attribute__((always_inline)) __m512i heat_key8(const struct ks_cache *c, __mmask8 ok,
                                                                      __m512i idx, __m512i last)
{
    const long long *blk = (const long long *)c->tab.blk;
    __m512i meta = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), ok, idx, blk + 1, 8);
    __m512i age = _mm512_and_si512(_mm512_sub_epi64(_mm512_set1_epi64(c->now), last),
                                   _mm512_set1_epi64(0xffffffffLL)); // 32-bit wrap
    __mmask8 young = _mm512_cmplt_epu64_mask(age, _mm512_set1_epi64(c->p.protect_steps));
    __m512i key = _mm512_or_si512(_mm512_slli_epi64(_mm512_and_si512(meta, _mm512_set1_epi64((long long)KS_HEAT_MAX)), 25),
                                  _mm512_and_si512(last, _mm512_set1_epi64(0x1ffffff)));
    return _mm512_mask_or_epi64(key, young, key, _mm512_set1_epi64((long long)(UINT64_C(1) << 63)));
}

// Judges pages [p, p + 8) of tier L1 under heat or fifo (end: where the scan
// stops, for the entries fetched ahead).
AVX512 static inline __attribute__((always_inline)) void judge8(const struct wide *w, uint32_t p, uint32_t end)
{
    const struct ks_cache *c = w->c;
    const struct ks_tier *tr = &c->tier[KS_L1];
    const long long *blk = (const long long *)c->tab.blk;
    int full = *w->k == w->want, fifo = c->p.evict == KS_EVICT_FIFO;
    if (!fifo || !full) // every entry will be read: fetch them ahead
        for (uint32_t i = 0; i < 8; i++)
            PREFETCH_OWNER_ENTRY(c, tr, p + SCAN_AHEAD + i, end);
    __m512i own = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)&tr->owner[p]));
    __mmask8 cand = _mm512_testn_epi64_mask(own, _mm512_set1_epi64(KS_PAGE_FREE));
    __m512i top = _mm512_set1_epi64(full ? (long long)w->h[0].key : 0);
    __m512i key = _mm512_setzero_si512();
    if (fifo) {
        key = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)&c->arrival[p]));
        if (full)
            cand = _mm512_mask_cmplt_epu64_mask(cand, key, top);
    }
    if (!cand)
        return;
    __m512i idx = _mm512_slli_epi64(own, 1); // an entry is two 64-bit words
    __m512i w0 = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), cand, idx, blk, 8);
    __m512i last = _mm512_srli_epi64(w0, 32);
    __m512i pages = _mm512_add_epi64(_mm512_set1_epi64(p), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    __mmask8 ok = ok8(c, KS_L1, pages, cand, w0, last);
    if (!ok)
        return;
    if (!fifo)
        key = heat_key8(c, ok, idx, last);
    __mmask8 pass = full ? _mm512_mask_cmplt_epu64_mask(ok, key, top) : ok;
    if (pass)
        offer8(w, pass, key, own);
}

// Judges pages [p, p + 8j) of tier L1 (j the most that fit before end);
// returns the first page not judged.
AVX512 static uint32_t scan8(const struct ks_cache *c, uint32_t p, uint32_t end, struct kv *h, uint32_t *k,
                             uint32_t want)
{
    const struct wide w = {.c = c, .h = h, .k = k, .want = want};
    if (c->p.evict != KS_EVICT_LRU) {
        for (; p + 8 <= end; p += 8)
            judge8(&w, p, end);
        return p;
    }
    uint32_t *least = c->l1_least;
    while (p + 8 <= end) {
        if (!least || p % KS_SPAN || p + KS_SPAN > end) {
            judge8_lru(&w, p);
            p += 8;
            continue;
        }
        uint32_t s = p / KS_SPAN;
        if (*k == want && least[s] >= h[0].key) {
            p += KS_SPAN;
            continue;
        }
        uint64_t m = UINT64_MAX;
        for (uint32_t e = p + KS_SPAN; p < e; p += 8) {
            uint64_t l = judge8_lru(&w, p);
            m = l < m ? l : m;
        }
        least[s] = m < KS_NONE ? (uint32_t)m : KS_NONE; // afresh
    }
    return p;
}

// Whether the wide form may judge this cache's buffers now.
static int scan_wide(const struct ks_cache *c)
{
    if (!c->wide || c->agg_pending || c->tab.n_compact || c->tab.n_aside) // their entries are not in the table
        return 0;
    return (c->p.evict == KS_EVICT_LRU && c->l1_last) || c->p.evict == KS_EVICT_HEAT ||
           (c->p.evict == KS_EVICT_FIFO && c->arrival);
}

// A sampling round's samples, eight at a time: the pages' owners and their
// entries gathered, eligibility and the key (lru: the last use; heat)
// computed in lanes, and the passing samples offered in order to the same
// heap with the same test (the scan's argument above). Judges page[0 .. m)
// of tier t in eights; returns how many it judged.
AVX512 static uint32_t sample8(const struct ks_cache *c, unsigned t, const uint32_t *page, uint32_t m, struct kv *h,
                               uint32_t *k, uint32_t want)
{
    const struct wide w = {.c = c, .h = h, .k = k, .want = want};
    const long long *blk = (const long long *)c->tab.blk;
    const int *owner = (const int *)c->tier[t].owner;
    int lru = c->p.evict == KS_EVICT_LRU;
    uint32_t i = 0;
    for (; i + 8 <= m; i += 8) {
        __m256i p32 = _mm256_loadu_si256((const __m256i *)(page + i));
        __m512i own = _mm512_cvtepu32_epi64(_mm256_i32gather_epi32(owner, p32, 4));
        __mmask8 cand = _mm512_testn_epi64_mask(own, _mm512_set1_epi64(KS_PAGE_FREE));
        if (!cand)
            continue;
        __m512i idx = _mm512_slli_epi64(own, 1); // an entry is two 64-bit words
        __m512i w0 = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), cand, idx, blk, 8);
        __m512i last = _mm512_srli_epi64(w0, 32);
        __mmask8 ok = ok8(c, t, _mm512_cvtepu32_epi64(p32), cand, w0, last);
        if (!ok)
            continue;
        __m512i key = lru ? last : heat_key8(c, ok, idx, last);
        __mmask8 pass = *k == want ? _mm512_mask_cmplt_epu64_mask(ok, key, _mm512_set1_epi64((long long)h[0].key)) : ok;
        if (pass)
            offer8(&w, pass, key, own);
    }
    return i;
}

// Whether the wide form may judge this cache's samples now.
static int sample_wide(const struct ks_cache *c)
{
    return c->wide && !c->agg_pending && !c->tab.n_compact && !c->tab.n_aside &&
           (c->p.evict == KS_EVICT_LRU || c->p.evict == KS_EVICT_HEAT);
}
#endif

int ks_evict_wide_available(void)
{
#ifdef KS_EVICT_X86
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

uint32_t ks_evict_select_buffer(struct ks_cache *c, uint32_t buf, uint32_t n, uint32_t *out, uint32_t *next)
{
    ks_defer_settle_buffer(c, buf); // keys read: deferred selections applied first
    struct ks_buf *bf = &c->bufs[buf];
    uint32_t want = n + (next != NULL);
    if (next)
        *next = KS_NONE;
    if (want == 0 || bf->barren == c->now + 1u ||
        ks_grow((void **)&c->heap, &c->cap_heap, want, sizeof *c->heap) != KS_OK)
        return 0;
    struct kv *h = c->heap;
    uint32_t k = 0, B = c->p.buffer_blocks, end = (buf + 1) * B;
    const struct ks_tier *tr = &c->tier[KS_L1];
    uint32_t p = buf * B;
#ifdef KS_EVICT_X86
    if (scan_wide(c))
        p = scan8(c, p, end < tr->hwm ? end : tr->hwm, h, &k, want);
#endif
    for (; p < end; p++) {
        PREFETCH_OWNER_ENTRY(c, tr, p + SCAN_AHEAD, end);
        if (!ks_tier_page_used(tr, p))
            continue;
        uint32_t id = tr->owner[p];
        if (c->p.evict == KS_EVICT_CALLBACK) { // the callback is asked about eligible blocks only
            if (eligible(c, KS_L1, p, id))
                heap_offer(h, &k, want, key_of(c, id), id);
            continue;
        }
        // NOTE: no branch on eligibility (eligible's note): the key is
        // computed for every block, and the one branch is on a block that
        // enters the heap, rare once it holds `want`.
        uint64_t key = key_of(c, id);
        if (eligible(c, KS_L1, p, id) & ((k < want) | (k == want && key < h[0].key)))
            heap_offer(h, &k, want, key, id);
    }
    if (k == 0)
        bf->barren = c->now + 1u;
    // the heap's top is its highest key: the one after the n lowest when it holds n + 1
    if (next && k == want) {
        *next = h[0].id;
        ks_heap_pop(h, k--, sizeof *h, NULL, kv_higher);
    }
    for (uint32_t i = 0; i < k; i++)
        out[i] = h[i].id;
    return k;
}

// One round of sampling for `want` victims: want * S random pages plus the
// tier's pool of runners-up from earlier rounds; the want lowest keys among
// the eligible ones go, the next KS_EVICT_POOL stay in the pool. The pages'
// owners, then the owners' entries, are all prefetched before any is read
// (bench cache: 6-8% faster than a pipeline 8 samples deep, 2026-12-03).
static uint32_t sample_round(struct ks_cache *c, unsigned t, uint32_t want, uint32_t *out)
{
    const struct ks_tier *tr = &c->tier[t];
    uint32_t m = want * c->p.evict_samples;
    uint32_t keep = want + KS_EVICT_POOL;
    if (ks_grow((void **)&c->samp, &c->cap_samp, m, sizeof *c->samp) != KS_OK ||
        ks_grow((void **)&c->heap, &c->cap_heap, keep, sizeof *c->heap) != KS_OK)
        return 0;
    struct kv *h = c->heap;
    uint32_t k = 0;
    struct ks_evict_pool *pool = &c->pool[t];
    for (uint32_t i = 0; i < pool->n; i++) { // runners-up, if still eligible, with fresh keys
        uint32_t id = pool->e[i].id;
        const struct ks_block *b = ks_blocktab_get(&c->tab, id);
        if (ks_blk_state(b) != KS_BLK_FREE && eligible(c, t, ks_blk_page(b), id))
            heap_offer(h, &k, keep, key_of(c, id), id);
    }
    // three passes, each pass's random reads overlapping one another: draw
    // every sample and prefetch its owner slot; read the owners and prefetch
    // their entries; judge
    uint32_t *page = c->samp;
    for (uint32_t i = 0; i < m; i++) {
        page[i] = ks_rng_below(&c->rng, tr->hwm); // pages beyond it were never used
        __builtin_prefetch(&tr->owner[page[i]]);
    }
    for (uint32_t i = 0; i < m; i++) {
        uint32_t id = tr->owner[page[i]];
        if (!(id & KS_PAGE_FREE))
            __builtin_prefetch(&c->tab.blk[id]);
    }
    uint32_t i = 0;
#ifdef KS_EVICT_X86
    if (sample_wide(c))
        i = sample8(c, t, page, m, h, &k, keep);
#endif
    for (; i < m; i++) {
        uint32_t p = page[i], id = tr->owner[p];
        if (!(id & KS_PAGE_FREE) && eligible(c, t, p, id))
            heap_offer(h, &k, keep, key_of(c, id), id);
    }
    // the heap holds the `keep` lowest keys: pop the highest into the pool
    // until `want` remain, and those go. A block seen twice (sampled twice,
    // or sampled and pooled) is taken once: its second copy finds it moving.
    pool->n = 0;
    while (k > want) {
        if (pool->n < KS_EVICT_POOL)
            pool->e[pool->n++] = h[0];
        ks_heap_pop(h, k--, sizeof *h, NULL, kv_higher);
    }
    uint32_t got = 0;
    for (uint32_t i = 0; i < k; i++) {
        struct ks_block *b = ks_blocktab_get(&c->tab, h[i].id);
        if (ks_blk_state(b) != KS_BLK_RESIDENT)
            continue;
        ks_blk_set_state(b, KS_BLK_MIG_DOWN);
        out[got++] = h[i].id;
    }
    return got;
}

// Belady keeps, per tier, a max-heap of (next use, id) with lazy deletion:
// every change of a block's next use, or its arrival in a tier, pushes an
// entry; an entry whose block has left the tier or changed its next use is
// dropped when it reaches the top. The heap is rebuilt from the tier when
// stale entries outnumber live ones.
static void bel_push(struct ks_cache *c, unsigned t, uint32_t id)
{
    if (ks_grow((void **)&c->bel[t], &c->cap_bel[t], c->n_bel[t] + 1, sizeof *c->bel[t]) != KS_OK) {
        c->bel_lost = 1; // rebuilt from the tier at the next selection
        return;
    }
    ks_heap_push(c->bel[t], c->n_bel[t]++, sizeof *c->bel[t], &(struct kv){c->next[id], id}, kv_higher);
}

static void bel_rebuild(struct ks_cache *c, unsigned t)
{
    const struct ks_tier *tr = &c->tier[t];
    c->n_bel[t] = 0;
    for (uint32_t p = 0; p < tr->hwm; p++) {
        if (!ks_tier_page_used(tr, p))
            continue;
        uint32_t id = tr->owner[p];
        const struct ks_block *b = ks_blocktab_get(&c->tab, id);
        if (ks_blk_tier(b) == t && ks_blk_page(b) == p)
            bel_push(c, t, id);
    }
}

void ks_evict_note(struct ks_cache *c, uint32_t id)
{
    if (!c->next)
        return;
    unsigned t = ks_blk_tier(ks_blocktab_get(&c->tab, id));
    if (c->lower[t] == KS_TIER_NONE) // nothing is ever evicted from the bottom tier
        return;
    if (c->n_bel[t] > 2 * (uint64_t)c->tier[t].used + 1024)
        bel_rebuild(c, t);
    bel_push(c, t, id);
}

static uint32_t select_belady(struct ks_cache *c, unsigned t, uint32_t n, uint32_t *out)
{
    if (c->bel_lost) {
        for (unsigned u = 0; u < KS_TIERS; u++)
            bel_rebuild(c, u);
        c->bel_lost = 0;
    }
    struct kv *h = c->bel[t];
    uint32_t got = 0, held = 0;
    // entries of blocks used this step are valid but not eligible: set aside
    // in the scratch heap array, pushed back afterwards
    while (got < n && c->n_bel[t] > 0) {
        struct kv top;
        ks_heap_pop(h, c->n_bel[t]--, sizeof *h, &top, kv_higher);
        struct ks_block *b = ks_blocktab_get(&c->tab, top.id);
        if (ks_blk_state(b) != KS_BLK_RESIDENT || ks_blk_tier(b) != t || c->next[top.id] != top.key)
            continue; // stale
        if (ks_blk_last(c, top.id) == c->now) {
            if (ks_grow((void **)&c->heap, &c->cap_heap, held + 1, sizeof *c->heap) == KS_OK)
                c->heap[held++] = top;
            else
                c->bel_lost = 1;
            continue;
        }
        ks_blk_set_state(b, KS_BLK_MIG_DOWN);
        out[got++] = top.id;
    }
    for (uint32_t i = 0; i < held; i++) // room: each was popped from this array
        ks_heap_push(h, c->n_bel[t]++, sizeof *h, &c->heap[i], kv_higher);
    return got;
}

uint32_t ks_evict_select(struct ks_cache *c, unsigned t, uint32_t n, uint32_t *out)
{
    if (t == KS_L1)
        ks_defer_settle_l1(c); // keys read: deferred selections applied first
    const struct ks_tier *tr = &c->tier[t];
    if (n == 0 || tr->used == 0)
        return 0;
    if (c->p.evict == KS_EVICT_BELADY) // the bound is exact: never sampled
        return select_belady(c, t, n, out);
    uint64_t S = c->p.evict_samples;
    if (S == 0 || n * S >= tr->hwm) // exact asked for, or a scan costs no more than sampling
        return select_exact(c, t, n, out);
    uint32_t k = 0;
    for (int round = 0; round < 4 && k < n; round++) {
        uint32_t got = sample_round(c, t, n - k, out + k);
        if (got == 0)
            break;
        k += got;
    }
    if (k < n) // sampling kept missing (few eligible blocks): settle the rest exactly
        k += select_exact(c, t, n - k, out + k);
    return k;
}
