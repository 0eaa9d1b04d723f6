// tier.h - the page allocator of one memory tier: a slab of block-sized pages.
//
// Every page is block-sized, so there is no fragmentation to manage: a page is
// free or owned by one virtual block. One array does both jobs: for a page in
// use it holds the owning block id (the reverse map that eviction samples),
// for a free page it holds the next free page (KS_PAGE_FREE marks it), so the
// free list costs nothing extra. Pages are reused last-freed first; pages
// never used yet lie beyond a high-water mark and are handed out in order
// when the free list is empty, so the array is only written (and its memory
// only committed, bigmem.h) as far as the tier has ever been filled.
//
// The free list's first pages are also kept in order in a small array of
// their own (`recent`, at most KS_TIER_RECENT of them): handing out the head
// then reads the next head there, not in the head's slot of the page array,
// which lies anywhere in it. Pages are freed and taken in bursts (a step's
// batches), and following the list slot by slot made every allocation wait
// for memory.
//
// An addressed tier (ks_tier_addressed: the device buffers' L1, cache.h)
// hands pages out by number instead (ks_tier_take): its free pages below
// hwm are marked free but never linked, and hwm passes the highest page
// ever taken. A bit per page says which are free (ks_tier_next_free finds
// the next one a word at a time: a buffer's free pages lie anywhere in it).
//
// Invariants: recent[n_recent - 1 - i] is the free list's page i for
// i < n_recent; used + length of the free list == hwm <= cap (addressed:
// used + free pages below hwm == hwm <= cap, the free list empty, and bit p
// of freemap set exactly when page p is free, for every p < cap); owner[p] of a
// used page is a block whose entry names (this tier, p), or a block
// migrating into p; pages from hwm on are free and never used.
#ifndef KS_TIER_H
#define KS_TIER_H

#include <stddef.h>
#include <stdint.h>

#define KS_PAGE_FREE (UINT32_C(1) << 31)
#define KS_TIER_RECENT 65536 // the most free-list pages kept in `recent`
#define KS_TIER_AHEAD 16     // allocations ahead whose owner slot is fetched (tier.c)

struct ks_tier_stats {
    uint64_t allocs;      // pages handed out
    uint64_t frees;       // pages given back
    uint64_t alloc_fails; // requests refused because the tier was full
    uint64_t mig_in;      // blocks that arrived by migration (confirmed)
    uint64_t mig_out;     // blocks that left by migration (confirmed)
    uint64_t peak_used;   // most pages in use at once
};

struct ks_tier {
    uint32_t cap;        // pages; 0 = the tier is absent
    uint32_t used;       // pages in use
    uint32_t free_head;  // first page of the free list, or KS_PAGE_FREE when empty
    uint32_t hwm;        // pages [0, hwm) have been used; the rest never
    uint32_t block_bytes; // bytes one block occupies in this tier
    uint8_t addressed;   // pages taken by number (ks_tier_take), never from the free list
    uint32_t *owner;     // [cap]: owning block id, or KS_PAGE_FREE | next free; written below hwm only
    uint32_t *recent;    // [cap_recent]: the free list's first n_recent pages, the head last
    uint32_t n_recent, cap_recent;
    uint64_t *freemap;   // addressed: [ceil(cap / 64)], bit p % 64 of word p / 64 set when page p is free
    size_t mark;         // bytes of owner below which ks_bigmem_use has been told
    struct ks_tier_stats st;
};

// cap pages of block_bytes each; cap may be 0. KS_OK, KS_EINVAL or KS_ENOMEM.
int ks_tier_init(struct ks_tier *t, uint32_t cap, uint32_t block_bytes);
void ks_tier_fini(struct ks_tier *t);

// Takes a free page for block id; returns it, or KS_NONE (counted as a
// failure) when the tier is full or absent.
uint32_t ks_tier_alloc(struct ks_tier *t, uint32_t id);
// Gives a used page back (addressed: marks it free, unlinked).
void ks_tier_free(struct ks_tier *t, uint32_t page);

// Makes the tier addressed (right after ks_tier_init). KS_OK or KS_ENOMEM.
int ks_tier_addressed(struct ks_tier *t);
// Addressed tiers: block id takes free page `page`.
void ks_tier_take(struct ks_tier *t, uint32_t page, uint32_t id);
// Addressed tiers: the first free page in [from, end) (end <= cap), or end
// when none is.
uint32_t ks_tier_next_free(const struct ks_tier *t, uint32_t from, uint32_t end);

static inline uint32_t ks_tier_free_pages(const struct ks_tier *t) { return t->cap - t->used; }
static inline int ks_tier_page_used(const struct ks_tier *t, uint32_t page)
{
    return page < t->hwm && !(t->owner[page] & KS_PAGE_FREE);
}

// Bytes the page array is reserved for (committed up to hwm only).
uint64_t ks_tier_bytes(const struct ks_tier *t);

#endif
