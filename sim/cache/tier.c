// tier.c - slab page allocator of one tier (see tier.h).
#include "tier.h"

#include <stdlib.h>
#include <string.h>

#include "blocktab.h"
#include "bigmem.h"
#include "status.h"

int ks_tier_init(struct ks_tier *t, uint32_t cap, uint32_t block_bytes)
{
    memset(t, 0, sizeof *t);
    if (cap > KS_PAGE_MAX)
        return KS_EINVAL;
    t->cap = cap;
    t->block_bytes = block_bytes;
    t->free_head = KS_PAGE_FREE;
    if (cap == 0)
        return KS_OK;
    t->owner = ks_bigmem_alloc((size_t)cap * sizeof *t->owner); // reserved: committed up to hwm
    return t->owner ? KS_OK : KS_ENOMEM;
}

void ks_tier_fini(struct ks_tier *t)
{
    ks_bigmem_free(t->owner, (size_t)t->cap * sizeof *t->owner);
    free(t->recent);
    free(t->freemap);
    memset(t, 0, sizeof *t);
}

// Pages [0, hwm) are about to be written: the owner array commits them
// (bigmem.h).
static void reach(struct ks_tier *t, uint32_t hwm)
{
    size_t bytes = (size_t)hwm * sizeof *t->owner;
    if (bytes > t->mark)
        t->mark = ks_bigmem_use(t->owner, (size_t)t->cap * sizeof *t->owner, t->mark, bytes);
}

static void count_use(struct ks_tier *t)
{
    t->used++;
    t->st.allocs++;
    if (t->used > t->st.peak_used)
        t->st.peak_used = t->used;
}

uint32_t ks_tier_alloc(struct ks_tier *t, uint32_t id)
{
    KS_ASSERT(!(id & KS_PAGE_FREE) && !t->addressed);
    if (t->used == t->cap) {
        t->st.alloc_fails++;
        return KS_NONE;
    }
    uint32_t p = t->free_head;
    if (p == KS_PAGE_FREE) { // the free list is empty: a page never used before
        KS_ASSERT(t->hwm < t->cap);
        reach(t, t->hwm + 1);
        p = t->hwm++;
    } else if (t->n_recent > 1) { // the next head is the one kept before it
        KS_ASSERT(t->recent[t->n_recent - 1] == p);
        t->free_head = t->recent[--t->n_recent - 1];
        // the slot written KS_TIER_AHEAD allocations from now: free pages lie
        // anywhere in the array, and a request's growth takes thousands in a row
        if (t->n_recent > KS_TIER_AHEAD)
            __builtin_prefetch(&t->owner[t->recent[t->n_recent - 1 - KS_TIER_AHEAD]], 1);
    } else {
        KS_ASSERT(p < t->hwm && (t->owner[p] & KS_PAGE_FREE));
        uint32_t next = t->owner[p] & ~KS_PAGE_FREE;
        t->free_head = next == KS_PAGE_MAX ? KS_PAGE_FREE : next;
        t->n_recent = 0;
    }
    t->owner[p] = id;
    count_use(t);
    return p;
}

static size_t map_words(const struct ks_tier *t)
{
    return ((size_t)t->cap + 63) / 64;
}

int ks_tier_addressed(struct ks_tier *t)
{
    t->addressed = 1;
    if (t->cap == 0)
        return KS_OK;
    if (!(t->freemap = malloc(map_words(t) * sizeof *t->freemap)))
        return KS_ENOMEM;
    memset(t->freemap, 0xff, map_words(t) * sizeof *t->freemap); // every page free (bits past cap never read)
    return KS_OK;
}

uint32_t ks_tier_next_free(const struct ks_tier *t, uint32_t from, uint32_t end)
{
    KS_ASSERT(t->addressed && end <= t->cap);
    if (from >= end)
        return end;
    size_t w = from / 64, last = (end - 1) / 64;
    uint64_t bits = t->freemap[w] & (~UINT64_C(0) << (from % 64)); // pages before `from` masked out
    while (bits == 0) {
        if (++w > last)
            return end;
        bits = t->freemap[w];
    }
    uint64_t p = (uint64_t)w * 64 + (unsigned)__builtin_ctzll(bits);
    return p < end ? (uint32_t)p : end;
}

void ks_tier_take(struct ks_tier *t, uint32_t page, uint32_t id)
{
    KS_ASSERT(t->addressed && page < t->cap && !ks_tier_page_used(t, page) && !(id & KS_PAGE_FREE));
    reach(t, page + 1);
    for (; t->hwm <= page; t->hwm++) // pages passed over are free, never used
        t->owner[t->hwm] = KS_PAGE_FREE | KS_PAGE_MAX;
    t->owner[page] = id;
    t->freemap[page / 64] &= ~(UINT64_C(1) << (page % 64));
    count_use(t);
}

// page became the free list's head: the top of `recent`. Full, `recent`
// doubles up to KS_TIER_RECENT; beyond it, or where it cannot grow, it keeps
// its newer half (with fewer than two, none: empty, it mirrors nothing wrong).
static void keep_recent(struct ks_tier *t, uint32_t page)
{
    if (t->n_recent == t->cap_recent) {
        uint32_t cap = t->cap_recent ? 2 * t->cap_recent : 64;
        uint32_t *r = cap <= KS_TIER_RECENT ? realloc(t->recent, cap * sizeof *r) : NULL;
        if (r) {
            t->recent = r;
            t->cap_recent = cap;
        } else if (t->n_recent >= 2) {
            uint32_t half = t->n_recent / 2;
            memmove(t->recent, t->recent + t->n_recent - half, half * sizeof *t->recent);
            t->n_recent = half;
        } else {
            t->n_recent = 0;
            return;
        }
    }
    t->recent[t->n_recent++] = page;
}

void ks_tier_free(struct ks_tier *t, uint32_t page)
{
    KS_ASSERT(page < t->cap && ks_tier_page_used(t, page));
    if (t->addressed) {
        t->owner[page] = KS_PAGE_FREE | KS_PAGE_MAX;
        t->freemap[page / 64] |= UINT64_C(1) << (page % 64);
        t->used--;
        t->st.frees++;
        return;
    }
    uint32_t next = t->free_head == KS_PAGE_FREE ? KS_PAGE_MAX : t->free_head;
    t->owner[page] = KS_PAGE_FREE | next;
    t->free_head = page;
    keep_recent(t, page);
    t->used--;
    t->st.frees++;
}

uint64_t ks_tier_bytes(const struct ks_tier *t)
{
    return (uint64_t)t->cap * sizeof *t->owner + (uint64_t)t->cap_recent * sizeof *t->recent +
           (t->freemap ? map_words(t) * sizeof *t->freemap : 0);
}
