// accessstream.c - running the access model: a stream per (request, layer)
// draws each step's selection (see accessmodel.h; fitting is accessmodel.c).
//
// A stream keeps, per block of its context, the state fitting reads a trace
// with (last selected step, age), plus the return candidates: for each of
// the last horizon + 1 steps (a ring of slots), the blocks last selected
// then and not since, with a Fenwick tree over the
// slot sizes, so that a uniform candidate of any distance range is drawn
// in O(log horizon) and a reselected block leaves its slot in O(1)
// (swap-remove, its index kept per block). Invariant: a block is in slot
// t mod ring exactly when its last selection was step t, it was not
// selected at t + 1, and step - t <= horizon.
//
// A step costs O(selected blocks) and sorts nothing with comparisons: the
// previous step's free picks are kept in two orders, by block (the output's)
// and by rank (age descending, then block: the masses'), and both orders
// carry over, since every stay's age grows by one. Only the few entering
// blocks of a step are put in block order (insertion, or radix when many),
// then merged in. Invariants: free_blk ascending and free_rank ranked hold
// exactly the last step's free picks; the window's blocks rank in block
// order (each has been selected since it entered the context, and the
// context only grows).
//
// A stream lives as long as its request, one per layer, so its memory is
// kept near its live state (a cluster holds thousands of them):
// - A block needs its age only while it is selected (read at the next step)
//   and its slot index only while it is a return candidate (not selected at
//   the last step); the two share one field. A free pick's rank, needed
//   only while a step writes its masses, borrows its `last` meanwhile (every
//   free pick's is this step's then).
// - The slots share one array of candidates. A slot is filled in one burst
//   (the blocks that left the selection at one step) at the array's end,
//   and then only shrinks (swap-remove) or is dropped whole when it passes
//   the horizon, so the slots lie in the array in the order of their steps,
//   with gaps. When the end is reached the gaps are closed, every slot
//   moved whole (its order, which draws index into, kept), and the array
//   doubles only when the candidates fill more than half of it.
#include "accessmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accessmodel_impl.h"
#include "prefetch.h"
#include "rng.h"
#include "sort.h"
#include "status.h"

enum {
    TRIES = 16,      // probes per draw before a mechanism gives up
    SHORT_SORT = 48, // entering blocks a step sorted by insertion (more: by radix)
};

// ---- generation ----------------------------------------------------------------

// Per block of the context (8 bytes).
struct blk {
    uint32_t last; // step + 1 of the last selection (0: never); a free pick's rank while a step writes masses
    uint32_t ap;   // selected at the last step: its age (consecutive steps selected); a return candidate: its
                   // index in its slot
};

// The previous selection is kept implicitly: the sinks [0, fs), free_blk,
// the window [fe, nb) of the previous step's free range and context.
struct ks_accessmodel_stream {
    const struct ks_accessmodel_layer *ml;
    uint32_t horizon, near, ring; // ring = horizon + 1 slots
    struct ks_rng rng;
    uint64_t count_key;           // the free counts' hash key (count_unit)
    uint32_t step, nb;            // steps generated; context of the last one
    uint32_t fs, fe;              // the last one's free range
    struct blk *blk;              // [cap_blk], zero from nb on
    size_t cap_blk;
    uint32_t *free_blk;           // [n_free] the last step's free picks, ascending
    uint32_t *free_rank;          // [n_free] the same by rank: age descending, then block
    size_t n_free, cap_free_blk, cap_free_rank;
    uint32_t *pk;                 // [cap_pk] this step's free picks in draw order, then scratch
    size_t cap_pk;
    // slot i: the blocks whose last selection was at a step t with t mod
    // ring == i and that have not been selected since (return candidates of
    // distance step - t), in ev[beg[i] .. beg[i] + cnt[i])
    uint32_t *beg, *cnt;          // [ring]
    uint32_t *ev;                 // [cap_ev] the slots, in the order of their steps, with gaps
    size_t n_ev, cap_ev;          // ev[n_ev ..) is free
    uint32_t *fen;                // [ring + 1] Fenwick tree over the slots' sizes (cnt)
};

struct ks_accessmodel_stream *ks_accessmodel_stream_new(const struct ks_accessmodel *m, uint32_t layer, uint64_t seed)
{
    if (layer >= m->layers)
        return NULL;
    struct ks_accessmodel_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ml = &m->layer[layer];
    s->horizon = m->p.horizon;
    s->near = m->p.near;
    s->ring = m->p.horizon + 1;
    s->beg = calloc(s->ring, sizeof *s->beg);
    s->cnt = calloc(s->ring, sizeof *s->cnt);
    s->fen = calloc((size_t)s->ring + 1, sizeof *s->fen);
    if (!s->beg || !s->cnt || !s->fen) {
        ks_accessmodel_stream_free(s);
        return NULL;
    }
    ks_rng_seed(&s->rng, seed);
    s->count_key = ks_rng_mix(seed + KS_ACCESSMODEL_COUNT_SALT);
    return s;
}

void ks_accessmodel_stream_free(struct ks_accessmodel_stream *s)
{
    if (!s)
        return;
    free(s->beg);
    free(s->cnt);
    free(s->ev);
    free(s->fen);
    free(s->blk);
    free(s->free_blk);
    free(s->free_rank);
    free(s->pk);
    free(s);
}

static int grow(void **p, size_t *cap, size_t need, size_t size, int zero)
{
    if (need <= *cap)
        return KS_OK;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return KS_ENOMEM;
    if (zero)
        memset((char *)q + *cap * size, 0, (n - *cap) * size);
    *p = q;
    *cap = n;
    return KS_OK;
}

// Makes room for the per-block state of nb blocks, zeroed. NOTE: a context
// grows a block at a time, so an eighth of headroom bounds the reallocations
// (one per nb / 8 blocks of growth) at an eighth of the memory doubling would waste.
static int grow_blocks(struct ks_accessmodel_stream *s, size_t nb)
{
    if (nb <= s->cap_blk)
        return KS_OK;
    size_t n = nb + nb / 8;
    n = n > 64 ? n : 64;
    struct blk *q = realloc(s->blk, n * sizeof *q);
    if (!q)
        return KS_ENOMEM;
    memset(q + s->cap_blk, 0, (n - s->cap_blk) * sizeof *q);
    s->blk = q;
    s->cap_blk = n;
    return KS_OK;
}

static void fen_add(uint32_t *f, uint32_t n, uint32_t i, uint32_t delta, int sub)
{
    for (i++; i <= n; i += i & (~i + 1))
        f[i] = sub ? f[i] - delta : f[i] + delta;
}

// Events in slots [0, i).
static uint64_t fen_prefix(const uint32_t *f, uint32_t i)
{
    uint64_t sum = 0;
    for (; i > 0; i -= i & (~i + 1))
        sum += f[i];
    return sum;
}

// The slot holding event number *r (from 0, in slot order); *r becomes its
// index in that slot.
static uint32_t fen_find(const uint32_t *f, uint32_t n, uint64_t *r)
{
    uint32_t at = 0, bit = 1;
    while (bit * 2 <= n)
        bit *= 2;
    for (; bit; bit /= 2)
        if (at + bit <= n && f[at + bit] <= *r) {
            at += bit;
            *r -= f[at];
        }
    return at;
}

// The previous selection's size, and its block j (ascending).
static size_t prev_count(const struct ks_accessmodel_stream *s)
{
    return s->fs + s->n_free + (s->nb - s->fe);
}

static uint32_t prev_block(const struct ks_accessmodel_stream *s, size_t j)
{
    if (j < s->fs)
        return (uint32_t)j;
    j -= s->fs;
    return j < s->n_free ? s->free_blk[j] : s->fe + (uint32_t)(j - s->n_free);
}

// Does block b have a live event, i.e. is it a return candidate now?
static int has_event(const struct ks_accessmodel_stream *s, uint32_t b)
{
    uint32_t l = s->blk[b].last; // l == step: selected at the previous step, not an event yet
    return l != 0 && l < s->step && (uint64_t)l - 1 + s->horizon >= s->step;
}

// Selects b at this step with the given age, withdrawing its event.
static void take(struct ks_accessmodel_stream *s, uint32_t b, uint32_t age)
{
    struct blk *e = &s->blk[b];
    if (has_event(s, b)) {
        uint32_t i = (e->last - 1) % s->ring;
        uint32_t *sl = s->ev + s->beg[i];
        uint32_t moved = sl[--s->cnt[i]];
        sl[e->ap] = moved;
        s->blk[moved].ap = e->ap;
        fen_add(s->fen, s->ring, i, 1, 1);
    }
    e->last = s->step + 1;
    e->ap = age;
}

// Room at the end of ev for slot `newest`, whose burst is being appended
// there: the slots' gaps closed, oldest slot first, and ev doubled when
// they are still more than half of it. KS_OK or KS_ENOMEM.
static int make_room(struct ks_accessmodel_stream *s, uint32_t newest)
{
    size_t to = 0;
    for (uint32_t j = 1; j <= s->ring; j++) {
        uint32_t i = (newest + j) % s->ring;
        if (s->cnt[i] == 0)
            continue;
        KS_ASSERT(s->beg[i] >= to);
        memmove(s->ev + to, s->ev + s->beg[i], (size_t)s->cnt[i] * sizeof *s->ev);
        s->beg[i] = (uint32_t)to;
        to += s->cnt[i];
    }
    s->n_ev = to;
    if (to < s->cap_ev / 2)
        return KS_OK;
    return grow((void **)&s->ev, &s->cap_ev, s->cap_ev + 1, sizeof *s->ev, 0); // doubles
}

// Block b, selected at step t, left the selection. The blocks leaving at
// one step do so together, after the step's selection is made.
static int leave(struct ks_accessmodel_stream *s, uint32_t b, uint32_t t)
{
    uint32_t i = t % s->ring;
    if (s->n_ev == s->cap_ev && make_room(s, i) != KS_OK)
        return KS_ENOMEM;
    if (s->n_ev >= UINT32_MAX)
        return KS_ENOMEM;
    if (s->cnt[i] == 0)
        s->beg[i] = (uint32_t)s->n_ev; // the burst starts at the end
    KS_ASSERT(s->beg[i] + s->cnt[i] == s->n_ev);
    s->blk[b].ap = s->cnt[i];
    s->ev[s->n_ev++] = b;
    s->cnt[i]++;
    fen_add(s->fen, s->ring, i, 1, 0);
    return KS_OK;
}

// Is block x selected at this step or the previous one?
static int recent(const struct ks_accessmodel_stream *s, uint32_t x)
{
    return s->blk[x].last >= s->step && s->blk[x].last != 0;
}

// A block last selected d steps ago, 2^(k-1) < d <= 2^k, d <= horizon,
// drawn uniformly from those in [fs, fe); UINT32_MAX when there is none.
static uint32_t draw_return(struct ks_accessmodel_stream *s, unsigned k, uint32_t fs, uint32_t fe)
{
    uint64_t dlo = (UINT64_C(1) << (k - 1)) + 1, dhi = UINT64_C(1) << k;
    dhi = dhi < s->horizon ? dhi : s->horizon;
    if (dlo > dhi || s->step < dlo)
        return UINT32_MAX;
    uint32_t tlo = s->step > dhi ? s->step - (uint32_t)dhi : 0, thi = s->step - (uint32_t)dlo;
    uint32_t a = tlo % s->ring, b = thi % s->ring; // thi - tlo < ring: at most one wrap
    uint64_t pa = fen_prefix(s->fen, a), pb = fen_prefix(s->fen, b + 1);
    uint64_t total = a <= b ? 0 : fen_prefix(s->fen, s->ring); // needed only where the range wraps
    uint64_t n = a <= b ? pb - pa : total - pa + pb;
    if (n == 0)
        return UINT32_MAX;
    // NOTE: with probability return_adjacent, prefer a candidate next to a
    // block selected now or at the previous step, as the trace's returns
    // are: the distance bucket stays exact, and runs of blocks stay together.
    int want_adjacent = ks_rng_unit(&s->rng) < s->ml->return_adjacent;
    uint32_t x = UINT32_MAX;
    for (int i = 0; i < (want_adjacent ? TRIES : 1); i++) {
        uint64_t r = n <= UINT32_MAX ? ks_rng_below(&s->rng, (uint32_t)n) : ks_rng_next(&s->rng) % n;
        r = a <= b || r < total - pa ? pa + r : r - (total - pa);
        uint32_t j = fen_find(s->fen, s->ring, &r);
        x = s->ev[s->beg[j] + r];
        if (!want_adjacent || (x > 0 && recent(s, x - 1)) ||
            (x + 1 < s->cap_blk && recent(s, x + 1)))
            break;
    }
    return x >= fs && x < fe ? x : UINT32_MAX;
}

// May block x be a far pick: in the free range, not selected within the horizon?
static int far_ok(const struct ks_accessmodel_stream *s, int64_t x, uint32_t fs, uint32_t fe)
{
    if (x < fs || x >= fe)
        return 0;
    uint32_t l = s->blk[x].last;
    return l == 0 || (uint64_t)l - 1 + s->horizon < s->step;
}

// Anchors of adjacent and near picks: the previous selection (n_prev
// blocks), then this step's n_picked free picks in draw order.
static uint32_t draw_far(struct ks_accessmodel_stream *s, uint32_t fs, uint32_t fe, size_t n_prev, size_t n_picked)
{
    const struct ks_accessmodel_layer *ml = s->ml;
    double u = ks_rng_unit(&s->rng);
    size_t anchors = n_prev + n_picked;
    if (anchors && u < ml->far_adjacent + ml->far_near) {
        int adjacent = u < ml->far_adjacent;
        for (int i = 0; i < TRIES; i++) {
            size_t j = ks_rng_below(&s->rng, (uint32_t)anchors);
            int64_t c = j < n_prev ? prev_block(s, j) : s->pk[j - n_prev];
            int64_t o = adjacent ? 1 : 2 + ks_rng_below(&s->rng, s->near - 1);
            int64_t x = ks_rng_below(&s->rng, 2) ? c + o : c - o;
            if (far_ok(s, x, fs, fe))
                return (uint32_t)x;
        }
    }
    for (int i = 0; i < TRIES; i++) {
        uint32_t x = fs + ks_rng_below(&s->rng, fe - fs);
        if (far_ok(s, x, fs, fe))
            return x;
    }
    return UINT32_MAX;
}

// The free count of `step`, at most span: the fitted distribution's
// quantile at a uniform hashed from the stream's key and the step
// (accessmodel.h), so that it is known before the step's draws.
static uint32_t count_at(const struct ks_accessmodel_layer *ml, uint64_t key, uint32_t step, uint32_t span)
{
    if (!ml->count_cdf)
        return span;
    // u = v / 2^53; the search starts at u's bucket of the guide (accessmodel.c)
    uint64_t v = ks_rng_mix(key + (uint64_t)(step + 1) * KS_ACCESSMODEL_COUNT_STRIDE) >> 11;
    uint32_t lo = ml->count_guide[v >> (53 - ml->guide_bits)];
    if (lo & KS_ACCESSMODEL_GUIDE_ONLY) {
        lo &= ~KS_ACCESSMODEL_GUIDE_ONLY;
    } else { // the first m with cdf[m] > u: cdf[max_free] is 1
        double u = (double)v * 0x1.0p-53;
        while (ml->count_cdf[lo] <= u)
            lo++;
    }
    return lo < span ? lo : span;
}

// Where an entering block comes from: a return of reuse-distance bucket k
// >= 1, or 0 for a far block; shares of the step's class.
static unsigned draw_source(struct ks_accessmodel_stream *s)
{
    const struct ks_accessmodel_layer *ml = s->ml;
    unsigned c = log_bucket(s->step, KS_ACCESSMODEL_GAPS);
    c = c < ml->n_classes ? c : ml->n_classes - 1;
    const double *gap = ml->class_gap + (size_t)c * KS_ACCESSMODEL_GAPS;
    double u = ks_rng_unit(&s->rng), acc = 0;
    for (unsigned k = 1; k < KS_ACCESSMODEL_GAPS; k++)
        if (u < (acc += gap[k]))
            return k;
    return 0;
}

// Does free pick a rank before free pick b: selected longer, then lower?
static int ranks_before(const struct blk *blk, uint32_t a, uint32_t b)
{
    return blk[a].ap != blk[b].ap ? blk[a].ap > blk[b].ap : a < b;
}

// Sorts the distinct blocks a[0 .. n) ascending; tmp[n] is scratch.
// Insertion below SHORT_SORT, else least significant byte first (sort.h).
static void sort_blocks(uint32_t *a, size_t n, uint32_t *tmp)
{
    if (n <= SHORT_SORT) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1] > x; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    ks_sort_by_u32(a, n, sizeof *a, 0, tmp);
}

// The mean mass of the free pick of rank i.
static float free_mass(const struct ks_accessmodel_layer *ml, size_t i)
{
    return ml->n_mass_free == 0 ? 0.0f : ml->mass_free[i < ml->n_mass_free ? i : ml->n_mass_free - 1];
}

int ks_accessmodel_next(const struct ks_accessmodel *m, struct ks_accessmodel_stream *s, uint32_t context_blocks,
                        uint32_t *out_blocks, float *out_mass, uint32_t cap)
{
    const struct ks_accessmodel_layer *ml = s->ml;
    uint32_t layer = (uint32_t)(ml - m->layer), nb = context_blocks, step = s->step;
    if (nb < s->nb || cap < ks_accessmodel_max_selected(m, layer, nb))
        return KS_EINVAL;
    uint32_t fs, fe;
    free_range(ml, nb, &fs, &fe);
    if (grow_blocks(s, nb) != KS_OK)
        return KS_ENOMEM;
    uint32_t m_free = count_at(ml, s->count_key, step, fe - fs);
    size_t n_prev = prev_count(s);
    if (grow((void **)&s->pk, &s->cap_pk, (size_t)m_free + n_prev + 1, sizeof *s->pk, 0) != KS_OK ||
        grow((void **)&s->free_blk, &s->cap_free_blk, (size_t)m_free + 1, sizeof *s->free_blk, 0) != KS_OK ||
        grow((void **)&s->free_rank, &s->cap_free_rank, (size_t)m_free + 1, sizeof *s->free_rank, 0) != KS_OK)
        return KS_ENOMEM;
    if (step > s->horizon) { // events of step - horizon - 1 would now be too far back
        uint32_t i = (step - s->horizon - 1) % s->ring;
        fen_add(s->fen, s->ring, i, s->cnt[i], 1);
        s->cnt[i] = 0;
    }

    // stays first, so that entering draws see them as taken: the previous
    // selection's blocks in the free range, ascending (its sinks never are)
    size_t n = 0;
    uint32_t *pk = s->pk;
    enum { AHEAD = 8 }; // blocks whose entries are fetched ahead of their use: their misses overlap
    for (size_t i = 0; i < s->n_free && i < AHEAD; i++)
        __builtin_prefetch(&s->blk[s->free_blk[i]]);
    for (size_t i = 0; i < s->n_free + (s->nb - s->fe); i++) {
        if (i + AHEAD < s->n_free)
            __builtin_prefetch(&s->blk[s->free_blk[i + AHEAD]]);
        uint32_t b = i < s->n_free ? s->free_blk[i] : s->fe + (uint32_t)(i - s->n_free);
        if (b >= fs && b < fe && ks_rng_unit(&s->rng) < ml->stay[log_bucket(s->blk[b].ap, KS_ACCESSMODEL_AGES)])
            pk[n++] = b;
    }
    for (size_t i = 0; n > m_free && i < m_free; i++) { // keep m_free of them at random
        size_t j = i + ks_rng_below(&s->rng, (uint32_t)(n - i));
        uint32_t x = pk[i];
        pk[i] = pk[j];
        pk[j] = x;
    }
    n = n < m_free ? n : m_free;
    for (size_t i = 0; i < n; i++)
        take(s, pk[i], s->blk[pk[i]].ap + 1);
    size_t n_stay = n;
    // the edges, whose ages go on from the previous step (sinks and the window never leave)
    size_t n_out = 0;
    for (uint32_t b = 0; b < fs; b++) {
        take(s, b, step > 0 && s->blk[b].last == step ? s->blk[b].ap + 1 : 1);
        out_blocks[n_out] = b;
        out_mass[n_out++] = ml->mass_sink[b];
    }
    for (uint32_t b = fe; b < nb; b++)
        take(s, b, step > 0 && s->blk[b].last == step ? s->blk[b].ap + 1 : 1);
    // entering blocks until m_free, within a budget of draws
    for (size_t tries = 0, budget = 4 * ((size_t)m_free - n) + 16; n < m_free && tries < budget; tries++) {
        unsigned k = draw_source(s);
        uint32_t b = k ? draw_return(s, k, fs, fe) : draw_far(s, fs, fe, n_prev, n);
        if (b == UINT32_MAX)
            continue;
        pk[n++] = b;
        take(s, b, 1);
    }
    // NOTE: the budget can end a step short of its count (10 steps in a
    // million of cluster_64x8.lua); the rest are then taken from a uniform
    // block of the free range on, wrapping, so that every step selects
    // exactly its count (ks_accessmodel_count): first the blocks that may
    // enter (selected neither now nor at the previous step), then, should
    // they run out, the previous step's that did not stay, which stay after
    // all (in the stays' place in pk). The free range has enough: m_free <= span.
    if (n < m_free) {
        uint32_t from = fs + ks_rng_below(&s->rng, fe - fs), b = from;
        for (uint32_t i = 0; n < m_free && i < fe - fs; i++, b = b + 1 < fe ? b + 1 : fs)
            if (!recent(s, b)) {
                pk[n++] = b;
                take(s, b, 1);
            }
        for (uint32_t i = 0; n < m_free && i < fe - fs; i++, b = b + 1 < fe ? b + 1 : fs)
            if (step > 0 && s->blk[b].last == step) {
                memmove(pk + n_stay + 1, pk + n_stay, (n - n_stay) * sizeof *pk);
                pk[n_stay++] = b;
                n++;
                take(s, b, s->blk[b].ap + 1);
            }
        KS_ASSERT(n == m_free);
    }
    const size_t n_enter = n - n_stay;

    // The previous free-range blocks again, ascending: the stays into
    // pk[0 .. n_stay) (the previous free picks', then the previous window's:
    // w of them), the others become return candidates.
    size_t n_s = 0, w = 0;
    for (size_t i = 0; i < s->n_free + (s->nb - s->fe); i++) {
        uint32_t b = i < s->n_free ? s->free_blk[i] : s->fe + (uint32_t)(i - s->n_free);
        if (s->blk[b].last != step + 1) {
            if (leave(s, b, step - 1) != KS_OK)
                return KS_ENOMEM;
        } else if (b >= fs && b < fe) {
            pk[n_s++] = b;
            w += i >= s->n_free;
        }
    }
    KS_ASSERT(n_s == n_stay);
    // Masses go by rank: age descending, then block. The stays keep their
    // order of the previous step (every age grew by one): its free picks'
    // ranks filtered, merged with the former window blocks, which rank in
    // block order already (a window block has been selected at every step
    // since it entered the context, so a lower one is at least as old).
    // Entering blocks (age 1) rank after every stay, by block.
    uint32_t *rank = s->free_rank, *wb = pk + n_stay - w;
    size_t n_a = 0;
    for (size_t i = 0; i < s->n_free; i++)
        if (s->blk[rank[i]].last == step + 1)
            rank[n_a++] = rank[i];
    KS_ASSERT(n_a + w == n_stay);
    for (size_t i = 1; i < w; i++)
        KS_ASSERT(ranks_before(s->blk, wb[i - 1], wb[i]));
    for (size_t o = n_stay; w > 0;) // merge from the back, in place
        rank[--o] = n_a > 0 && ranks_before(s->blk, wb[w - 1], rank[n_a - 1]) ? rank[--n_a] : wb[--w];
    memcpy(rank + n_stay, pk + n_stay, n_enter * sizeof *rank);
    sort_blocks(rank + n_stay, n_enter, pk + n_stay);
    // NOTE: a stay's rank is kept in its `last` (step + 1 for every free pick
    // now) until its mass is written, which puts `last` back: its other field
    // holds its age, which the next step reads. An entering block's rank is
    // its place in rank[], where the merge below reads it.
    for (size_t i = 0; i < n_stay; i++)
        s->blk[rank[i]].last = (uint32_t)i;
    // the free picks in block order: the stays' and the entering blocks' merged
    for (size_t i = 0, j = n_stay, o = 0; o < n; o++) {
        size_t r;
        uint32_t b;
        if (j == n || (i < n_stay && pk[i] < rank[j])) {
            b = pk[i++];
            r = s->blk[b].last;
            s->blk[b].last = step + 1;
        } else {
            r = j;
            b = rank[j++];
        }
        s->free_blk[o] = b;
        out_blocks[n_out] = b;
        out_mass[n_out++] = free_mass(ml, r);
    }
    for (uint32_t b = fe; b < nb; b++) {
        out_blocks[n_out] = b;
        out_mass[n_out++] = ml->mass_window[nb - 1 - b];
    }
    s->n_free = n;
    s->fs = fs;
    s->fe = fe;
    s->nb = nb;
    s->step++;
    return (int)n_out;
}

uint32_t ks_accessmodel_count(const struct ks_accessmodel *m, uint32_t layer, uint64_t seed, uint32_t step,
                              uint32_t context_blocks)
{
    if (layer >= m->layers)
        return 0;
    const struct ks_accessmodel_layer *ml = &m->layer[layer];
    uint32_t fs, fe;
    free_range(ml, context_blocks, &fs, &fe);
    return context_blocks - (fe - fs) + count_at(ml, ks_rng_mix(seed + KS_ACCESSMODEL_COUNT_SALT), step, fe - fs);
}

uint32_t ks_accessmodel_stream_step(const struct ks_accessmodel_stream *s)
{
    return s->step;
}

KS_PREFETCH_FN void ks_accessmodel_stream_warm(const struct ks_accessmodel_stream *s, int stage)
{
    switch (stage) {
    case 0:
        ks_prefetch_lines(s, sizeof *s);
        break;
    case 1:
        // NOTE: the slots, their tree and the candidates whole (a few KB):
        // a draw's reads of them are random, and each waited for memory on
        // a loaded GPU (draw_return's read of ev, 17% of ks_accessmodel_next;
        // the 8-GPU slice of cluster_64x8_loaded.lua at --threads 1: user
        // time x0.89, alternating runs, 2026-12-06). The whole of blk too
        // (stage 2) gained nothing more.
        ks_prefetch_lines(s->free_blk, s->n_free * sizeof *s->free_blk);
        ks_prefetch_lines(s->free_rank, s->n_free * sizeof *s->free_rank);
        ks_prefetch_lines(s->fen, ((size_t)s->ring + 1) * sizeof *s->fen);
        ks_prefetch_lines(s->beg, (size_t)s->ring * sizeof *s->beg);
        ks_prefetch_lines(s->cnt, (size_t)s->ring * sizeof *s->cnt);
        ks_prefetch_lines(s->ev, s->n_ev * sizeof *s->ev);
        break;
    default: // the last step's selection: its free picks, its sinks and window (one more block now)
        for (size_t i = 0; i < s->n_free; i++)
            __builtin_prefetch(&s->blk[s->free_blk[i]]);
        if (s->blk) {
            ks_prefetch_lines(s->blk, s->fs * sizeof *s->blk);
            ks_prefetch_lines(s->blk + s->fe, ((size_t)s->nb - s->fe + 1) * sizeof *s->blk);
        }
    }
}

// The last step's free picks: free_blk ascending and free_rank ranked, each
// a block of the free range selected at that step, and as many as there are.
static int check_free_picks(const struct ks_accessmodel_stream *s, char *msg, size_t len)
{
    const uint32_t now = s->step; // `last` of the blocks the last step selected
    for (size_t i = 0; i < s->n_free; i++) {
        uint32_t b = s->free_blk[i], r = s->free_rank[i];
        if (b < s->fs || b >= s->fe || s->blk[b].last != now || (i > 0 && s->free_blk[i - 1] >= b))
            return ks_corrupt(msg, len, "free pick %zu by block: block %u (free range [%u, %u), last selected at %lld)",
                           i, b, s->fs, s->fe, (long long)s->blk[b].last - 1);
        if (r < s->fs || r >= s->fe || s->blk[r].last != now || (i > 0 && !ranks_before(s->blk, s->free_rank[i - 1], r)))
            return ks_corrupt(msg, len, "free pick %zu by rank: block %u (age %u) out of place", i, r, s->blk[r].ap);
    }
    size_t selected = 0;
    for (uint32_t b = 0; b < s->nb; b++) {
        if (s->blk[b].last != now)
            continue;
        if (s->blk[b].ap == 0 || s->blk[b].ap > now)
            return ks_corrupt(msg, len, "block %u: selected at the last step (%u) with age %u", b, now - 1, s->blk[b].ap);
        selected += b >= s->fs && b < s->fe;
    }
    if (s->step > 0 && selected != s->n_free)
        return ks_corrupt(msg, len, "%zu free picks kept, the last step selected %zu in the free range", s->n_free,
                       selected);
    return KS_OK;
}

int ks_accessmodel_stream_check(const struct ks_accessmodel_stream *s, uint32_t *candidates, char *msg, size_t len)
{
    // the slots in the order of their steps, oldest first: the newest holds
    // the blocks that left at the last step generated
    uint64_t total = 0, end = 0;
    uint32_t newest = s->step > 1 ? (s->step - 2) % s->ring : 0;
    for (uint32_t j = 1; j <= s->ring; j++) {
        uint32_t i = (newest + j) % s->ring;
        uint64_t fen_n = fen_prefix(s->fen, i + 1) - fen_prefix(s->fen, i);
        if (fen_n != s->cnt[i])
            return ks_corrupt(msg, len, "slot %u: %u candidates, the Fenwick tree says %llu", i, s->cnt[i],
                           (unsigned long long)fen_n);
        if (s->cnt[i] == 0)
            continue;
        if (s->beg[i] < end || (uint64_t)s->beg[i] + s->cnt[i] > s->n_ev || s->n_ev > s->cap_ev)
            return ks_corrupt(msg, len, "slot %u: [%u, %llu) overlaps an older slot or leaves [0, %zu)", i, s->beg[i],
                           (unsigned long long)s->beg[i] + s->cnt[i], s->n_ev);
        end = (uint64_t)s->beg[i] + s->cnt[i];
        total += s->cnt[i];
        for (uint32_t k = 0; k < s->cnt[i]; k++) {
            uint32_t b = s->ev[s->beg[i] + k];
            if (b >= s->nb)
                return ks_corrupt(msg, len, "slot %u holds block %u, beyond the context (%u)", i, b, s->nb);
            uint32_t l = s->blk[b].last;
            if (l == 0 || l >= s->step || (uint64_t)l + s->horizon < s->step || (l - 1) % s->ring != i)
                return ks_corrupt(msg, len, "slot %u holds block %u, last selected at step %lld (now %u)", i, b,
                               (long long)l - 1, s->step);
            if (s->blk[b].ap != k)
                return ks_corrupt(msg, len, "block %u: index %u in slot %u, found at %u", b, s->blk[b].ap, i, k);
        }
    }
    // NOTE: the slot of step - horizon - 1 is dropped when the next step
    // starts, so its blocks count until then
    uint64_t expect = 0;
    for (size_t b = 0; b < s->cap_blk; b++) {
        uint32_t l = s->blk[b].last;
        if ((b >= s->nb && (l || s->blk[b].ap)) || l > s->step)
            return ks_corrupt(msg, len, "block %zu: last selected at step %lld (now %u, context %u)", b,
                           (long long)l - 1, s->step, s->nb);
        expect += l != 0 && l < s->step && (uint64_t)l + s->horizon >= s->step;
    }
    if (expect != total) // each is where its index says (above), so each is there once
        return ks_corrupt(msg, len, "%llu candidates in the slots, %llu blocks are", (unsigned long long)total,
                       (unsigned long long)expect);
    int rc = check_free_picks(s, msg, len);
    if (rc != KS_OK)
        return rc;
    if (candidates)
        *candidates = (uint32_t)total;
    return KS_OK;
}

size_t ks_accessmodel_stream_bytes(const struct ks_accessmodel_stream *s)
{
    return sizeof *s + s->cap_blk * sizeof *s->blk +
           (s->cap_free_blk + s->cap_free_rank + s->cap_pk + s->cap_ev) * sizeof(uint32_t) +
           (size_t)s->ring * (sizeof *s->beg + sizeof *s->cnt) + ((size_t)s->ring + 1) * sizeof *s->fen;
}

int ks_accessmodel_write(const struct ks_accessmodel *m, const struct ks_trace *shape, uint64_t seed, const char *path,
                         char *err, size_t len)
{
    const uint32_t L = shape->meta.layers;
    if (L != m->layers) {
        snprintf(err, len, "%s: the shape has %u layers, the model %u", path, L, m->layers);
        return KS_EINVAL;
    }
    size_t max_blocks = 1;
    for (size_t i = 0; i < shape->n_steps; i++) {
        size_t nb = ks_trace_blocks(&shape->meta, shape->steps[i].context);
        max_blocks = nb > max_blocks ? nb : max_blocks;
    }
    struct ks_trace_meta meta = shape->meta;
    snprintf(meta.source, sizeof meta.source, "access model fitted to: %.100s", shape->meta.source);
    uint32_t *blocks = malloc(max_blocks * sizeof *blocks);
    float *mass = malloc(max_blocks * sizeof *mass);
    struct ks_accessmodel_stream **st = calloc(L, sizeof *st);
    struct ks_trace_writer *w = blocks && mass && st ? ks_trace_writer_open(path, &meta, err, len) : NULL;
    int rc = w ? KS_OK : blocks && mass && st ? KS_EIO : KS_ENOMEM;
    if (rc == KS_ENOMEM)
        snprintf(err, len, "%s: out of memory", path);
    for (uint32_t r = 0; r < shape->n_requests && rc == KS_OK; r++) {
        for (uint32_t l = 0; l < L && rc == KS_OK; l++) {
            uint64_t sd = seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (r + 1)) ^ (UINT64_C(0xbf58476d1ce4e5b9) * (l + 1));
            if (!(st[l] = ks_accessmodel_stream_new(m, l, sd))) {
                snprintf(err, len, "%s: out of memory", path);
                rc = KS_ENOMEM;
            }
        }
        for (uint32_t step = 0; step < shape->req_steps[r] && rc == KS_OK; step++)
            for (uint32_t l = 0; l < L && rc == KS_OK; l++) {
                const struct ks_trace_step *rec = ks_trace_at(shape, r, step, l);
                int n = ks_accessmodel_next(m, st[l], (uint32_t)ks_trace_blocks(&shape->meta, rec->context), blocks,
                                            mass, (uint32_t)max_blocks);
                if (n < 0) {
                    snprintf(err, len, "%s: generating request %u step %u layer %u: %s", path, r, step, l,
                             ks_status_str(n));
                    rc = n;
                } else {
                    // a failure's reason goes into err (given to the writer), after the path
                    char why[400] = "";
                    rc = ks_trace_writer_add(w, r, step, l, rec->context, blocks, mass, (uint32_t)n, -1.0);
                    if (rc != KS_OK) {
                        snprintf(why, sizeof why, "%s", err);
                        snprintf(err, len, "%s: %s", path, why);
                    }
                }
            }
        for (uint32_t l = 0; l < L; l++) {
            ks_accessmodel_stream_free(st[l]);
            st[l] = NULL;
        }
    }
    if (rc == KS_OK)
        rc = ks_trace_writer_commit(w);
    else
        ks_trace_writer_abort(w);
    free(blocks);
    free(mass);
    free(st);
    return rc;
}
