// blocktab.h - the block table: one 16-byte entry per virtual block.
//
// An entry says where a block lives (tier, physical page), what it is doing
// (free, resident, migrating up or down), its migration generation, how many
// logical blocks map onto it (reference count), its heat (heat.h) and the step
// it was last accessed. Nothing else is stored per block, so 1M blocks cost
// 16 MB plus the small per-chunk records below.
//
// Virtual ids are handed out in chunks of KS_CHUNK consecutive ids so that a
// sequence of logical blocks maps onto runs of ids by arithmetic, not by a
// per-block array. Each chunk records its owner (request and layer group), the
// logical position of its first id and how many of its ids are live; a chunk
// returns to the free list when its last live id is freed.
//
// The table is sized for the worst case (every page of every tier) but costs
// memory only as far as it has been used (bigmem.h): chunks never used lie
// beyond a high-water mark and are handed out in order, lowest first, when
// no freed chunk is waiting; a freed chunk is reused first, last freed first.
//
// A chunk may be compact (ks_blocktab_chunk_alloc's `compact`): while every
// live id of it is resident in L1 with one heat and one recency, not
// prefetched and mapped once (a prompt's blocks placed together, then read
// alike every step), its entries are not written in the table: its record
// (one per chunk, in an array of its own) holds each id's page and
// generation and the ids' shared heat and recency, 256 bytes where the
// entries take 512, and the table's memory there is never touched
// (bigmem.h: a page that never is costs nothing). Its entries
// are written out (expanded) the first time anything would write one alone
// (ks_blocktab_get): a block moved, accessed on its own, shared; readers
// that write nothing see them through ks_blocktab_peek. Which form a chunk
// has changes no result: ids, pages and every entry's value are the same.
// The memory is saved a page of the table at a time (KS_CHUNK_PAGE chunks):
// once one chunk of a page is written, the page costs its memory for good,
// so its other compact chunks are written out too, and no chunk of it
// becomes compact again. The records of two pages of the table share a page
// of their own, given back once both are written.
//
// A growth's block that a record cannot hold (one arriving at another step
// than the chunk's live ids: a decode step's block in a prompt's last chunk)
// does not write the chunk's page of the table either: the chunk's 32
// entries go aside, to a slot of an array of their own (512 bytes), and the
// chunk is written aside (ks_blocktab_aside). Readers and writers that go
// through ks_blocktab_peek and ks_blocktab_entry find its entries there;
// ks_blocktab_get (whose callers may read the table by id: the wide access
// and eviction forms) writes them into the table first, with its page, as
// for a compact chunk. A chunk written aside that is freed and taken again
// as a compact chunk becomes compact again (its ids' generations go to the
// record). Such a chunk costs its slot and its record's room, where writing
// it out cost its page of the table: before, a decode step's new block
// wrote its chunk's page out, and over a long run nearly every page of the
// tables was written.
//
// Invariants: a free entry has state KS_BLK_FREE; a live entry has refs >= 1,
// except a block in flight whose last owner has gone (refs == 0), freed when
// its migration is confirmed or aborted. Chunks from hwm on are free, never
// used, with zero entries and records; the freed stack holds chunks below
// hwm only. A compact chunk's entries in the table have never been written
// (zero: only a chunk never used, or one written aside, becomes compact), its record says what they
// are (ks_blocktab_peek); n_compact records are in use. A page with a chunk
// that is not compact and has been handed out is dirty; no compact chunk
// lies in a dirty page. A chunk written aside is not compact and lies in a
// page that is not dirty, its entries in the table never written; its slot
// is below aside_hwm, not on the aside_freed stack, and no other chunk's.
#ifndef KS_BLOCKTAB_H
#define KS_BLOCKTAB_H

#include <stddef.h>
#include <stdint.h>

#define KS_CHUNK 32        // virtual ids per chunk
#define KS_CHUNK_PAGE 8    // chunks per 4 KiB page of the table
#define KS_NONE UINT32_MAX // no id / no page / no step

enum ks_tier_id { KS_L1 = 0, KS_L2 = 1, KS_L3 = 2, KS_TIERS = 3, KS_TIER_NONE = 3 };

enum ks_blk_state {
    KS_BLK_FREE = 0,     // the id is not in use
    KS_BLK_RESIDENT = 1, // in its tier, readable
    KS_BLK_MIG_UP = 2,   // being copied to a faster tier; still readable here
    KS_BLK_MIG_DOWN = 3, // being copied to a slower tier; still readable here
};

#define KS_PAGE_BITS 27
#define KS_PAGE_MAX ((UINT32_C(1) << KS_PAGE_BITS) - 1) // pages per tier
#define KS_GEN_BITS 13
#define KS_REFS_BITS 13
#define KS_REFS_MAX ((1u << KS_REFS_BITS) - 1)

struct ks_block {
    uint32_t loc;  // page:27 | tier:2 | state:2 | prefetched:1
    uint32_t last; // step of the last access, or of arrival in L1
    uint64_t meta; // heat:38 (heat.h code) | gen:13 | refs:13
};
_Static_assert(sizeof(struct ks_block) == 16, "a block table entry is 16 bytes");

static inline uint32_t ks_blk_page(const struct ks_block *b) { return b->loc & KS_PAGE_MAX; }
static inline unsigned ks_blk_tier(const struct ks_block *b) { return (b->loc >> 27) & 3u; }
static inline unsigned ks_blk_state(const struct ks_block *b) { return (b->loc >> 29) & 3u; }
static inline unsigned ks_blk_prefetched(const struct ks_block *b) { return b->loc >> 31; }
static inline uint64_t ks_blk_heat(const struct ks_block *b) { return b->meta & ((UINT64_C(1) << 38) - 1); }
static inline unsigned ks_blk_gen(const struct ks_block *b) { return (unsigned)(b->meta >> 38) & ((1u << KS_GEN_BITS) - 1); }
static inline unsigned ks_blk_refs(const struct ks_block *b) { return (unsigned)(b->meta >> 51); }

static inline void ks_blk_set_loc(struct ks_block *b, uint32_t page, unsigned tier, unsigned state)
{
    b->loc = (b->loc & (1u << 31)) | (page & KS_PAGE_MAX) | ((uint32_t)tier << 27) | ((uint32_t)state << 29);
}
static inline void ks_blk_set_state(struct ks_block *b, unsigned state)
{
    b->loc = (b->loc & ~(3u << 29)) | ((uint32_t)state << 29);
}
static inline void ks_blk_set_prefetched(struct ks_block *b, unsigned on)
{
    b->loc = (b->loc & ~(1u << 31)) | ((uint32_t)(on != 0) << 31);
}
static inline void ks_blk_set_heat(struct ks_block *b, uint64_t code)
{
    b->meta = (b->meta & ~((UINT64_C(1) << 38) - 1)) | code;
}
static inline void ks_blk_bump_gen(struct ks_block *b)
{
    uint64_t g = (ks_blk_gen(b) + 1u) & ((1u << KS_GEN_BITS) - 1);
    b->meta = (b->meta & ~(UINT64_C(0x1fff) << 38)) | (g << 38);
}
static inline void ks_blk_set_refs(struct ks_block *b, unsigned refs)
{
    b->meta = (b->meta & ((UINT64_C(1) << 51) - 1)) | ((uint64_t)refs << 51);
}

struct ks_chunk {
    uint32_t req;   // owning request (the one that allocated the chunk)
    uint32_t pos;   // logical position of the chunk's first id
    uint16_t group; // layer group of the owning sequence
    uint16_t live;  // ids of this chunk in use
};

// A compact chunk's entries: a live id is resident in L1 at its page, with
// the shared heat and recency, reference count 1, not prefetched; a free id
// is free. Each id keeps its generation. 256 bytes: two pages' of them fill
// a page.
struct ks_compact {
    uint32_t page[KS_CHUNK]; // L1 page of each live id
    uint16_t gen[KS_CHUNK];  // generation of each id
    uint64_t heat;           // heat code of every live id
    uint32_t last;           // recency of every live id
    uint32_t live;           // bit i set: id (chunk * KS_CHUNK + i) is live
    uint8_t spare[48];       // to 256 bytes
};
_Static_assert(sizeof(struct ks_compact) * 2 * KS_CHUNK_PAGE == 4096, "two pages' records fill a page");

struct ks_blocktab {
    struct ks_block *blk;    // [n_chunks * KS_CHUNK], written below hwm * KS_CHUNK only
    struct ks_chunk *chunk;  // [n_chunks], written below hwm only
    uint32_t *freed;         // stack of freed chunks below hwm, the last freed on top
    uint32_t n_chunks;       // chunks the table is sized for
    uint32_t n_freed;        // chunks on the freed stack
    uint32_t hwm;            // chunks [0, hwm) have been handed out; the rest never
    uint32_t live;           // live ids
    size_t mark;             // bytes of blk below which ks_bigmem_use has been told
    struct ks_compact *cmp;  // [n_chunks] each chunk's record, written while it is compact
    uint8_t *compact;        // [n_chunks / 8 + 1] bit per chunk: compact
    uint8_t *dirty;          // [n_chunks / KS_CHUNK_PAGE / 8 + 1] bit per page of the table: written
    uint32_t n_compact;      // compact chunks
    struct ks_block *aside;  // [n_chunks * KS_CHUNK] slots of 32 entries of chunks written aside, used below aside_hwm
    uint32_t *aside_of;      // [n_chunks] the slot of a chunk written aside
    uint32_t *aside_freed;   // stack of the aside_hwm - n_aside slots given back, the last on top
    uint8_t *aside_bit;      // [n_chunks / 8 + 1] bit per chunk: written aside
    uint32_t n_aside;        // chunks written aside
    uint32_t aside_hwm;      // slots [0, aside_hwm) have been used
};

// Sizes the table for at least n_blocks ids (rounded up to whole chunks).
// Returns KS_OK, KS_EINVAL or KS_ENOMEM; _fini releases what _init took.
int ks_blocktab_init(struct ks_blocktab *t, uint32_t n_blocks);
void ks_blocktab_fini(struct ks_blocktab *t);

// Takes a free chunk for (req, group) starting at logical position pos: the
// last freed, else the lowest never used. Returns the chunk's first id, or
// KS_NONE when none is free. compact: the chunk is to be compact where it
// can (one never used, or compact when freed; not when out of memory); a
// compact chunk taken without is expanded.
uint32_t ks_blocktab_chunk_alloc(struct ks_blocktab *t, uint32_t req, uint16_t group, uint32_t pos, int compact);

// Marks id live (refs 1, heat 0) with the given location. The generation is
// the one the id had when it was released (bumped then). A compact chunk
// stays compact if the id goes to L1 and its live ids, if any, have heat 0
// and recency `step`; otherwise it is expanded first.
void ks_blocktab_use(struct ks_blocktab *t, uint32_t id, uint32_t page, unsigned tier, uint32_t step);
// Marks ids [id, id + n) of one chunk live in L1 at pages page[0],
// page[stride], ..., as n calls of ks_blocktab_use in id order would.
void ks_blocktab_use_l1_run(struct ks_blocktab *t, uint32_t id, uint32_t n, const uint32_t *page, size_t stride,
                            uint32_t step);

// Releases a live id; its chunk returns to the free list with its last id.
void ks_blocktab_release(struct ks_blocktab *t, uint32_t id);
// Releases ids [id, id + n) of one compact chunk, every one of them live,
// as n calls of ks_blocktab_release in id order would.
void ks_blocktab_release_run(struct ks_blocktab *t, uint32_t id, uint32_t n);

// Writes compact (or written aside) chunk k's entries into the table, and
// those of the other such chunks of its page; none of them is compact or
// aside any more.
void ks_blocktab_expand(struct ks_blocktab *t, uint32_t k);

// The record of chunk k when it is compact, else NULL.
static inline struct ks_compact *ks_blocktab_compact(const struct ks_blocktab *t, uint32_t k)
{
    return t->n_compact && (t->compact[k / 8] >> (k % 8) & 1) ? &t->cmp[k] : NULL;
}

// Whether chunk k is written aside.
static inline int ks_blocktab_aside(const struct ks_blocktab *t, uint32_t k)
{
    return t->n_aside && (t->aside_bit[k / 8] >> (k % 8) & 1);
}

// The entries of chunk k, not compact: aside, or in the table.
static inline struct ks_block *ks_blocktab_entries(const struct ks_blocktab *t, uint32_t k)
{
    return ks_blocktab_aside(t, k) ? &t->aside[(size_t)t->aside_of[k] * KS_CHUNK] : &t->blk[(size_t)k * KS_CHUNK];
}

// Whether the page of the table holding chunk k has been written.
static inline int ks_blocktab_page_dirty(const struct ks_blocktab *t, uint32_t k)
{
    uint32_t pg = k / KS_CHUNK_PAGE;
    return t->dirty[pg / 8] >> (pg % 8) & 1;
}

// Compact chunk record x's entry i.
static inline struct ks_block ks_compact_entry(const struct ks_compact *x, uint32_t i)
{
    uint64_t gen = (uint64_t)x->gen[i] << 38;
    if (!(x->live >> i & 1u))
        return (struct ks_block){.loc = 0, .last = 0, .meta = gen};
    return (struct ks_block){.loc = (x->page[i] & KS_PAGE_MAX) | ((uint32_t)KS_L1 << 27) | ((uint32_t)KS_BLK_RESIDENT << 29),
                             .last = x->last,
                             .meta = x->heat | gen | (UINT64_C(1) << 51)};
}

// Free chunks: freed ones and those never used.
static inline uint32_t ks_blocktab_chunks_free(const struct ks_blocktab *t)
{
    return t->n_freed + (t->n_chunks - t->hwm);
}

// Ids that have ever been handed out lie below this; the rest are free.
static inline uint32_t ks_blocktab_ids_used(const struct ks_blocktab *t)
{
    return t->hwm * KS_CHUNK;
}

// Block id's entry in the table, to read or write: a compact chunk's, or
// one written aside, is written into the table first.
static inline struct ks_block *ks_blocktab_get(struct ks_blocktab *t, uint32_t id)
{
    if (ks_blocktab_compact(t, id / KS_CHUNK) || ks_blocktab_aside(t, id / KS_CHUNK))
        ks_blocktab_expand(t, id / KS_CHUNK);
    return &t->blk[id];
}

// Block id's entry where it lies, to read or write, when its chunk is not
// compact: in the table, or aside (nothing is moved).
static inline struct ks_block *ks_blocktab_entry(const struct ks_blocktab *t, uint32_t id)
{
    return &ks_blocktab_entries(t, id / KS_CHUNK)[id % KS_CHUNK];
}

// Block id's entry, to read only: in the table or aside, or built in *tmp
// from a compact chunk's record.
static inline const struct ks_block *ks_blocktab_peek(const struct ks_blocktab *t, uint32_t id, struct ks_block *tmp)
{
    const struct ks_compact *x = ks_blocktab_compact(t, id / KS_CHUNK);
    if (!x)
        return ks_blocktab_entry(t, id);
    *tmp = ks_compact_entry(x, id % KS_CHUNK);
    return tmp;
}

// For a prefetch hint only: line `line` (of 64 bytes, taken modulo) of what
// the chunk handed out `ahead` allocations from now (0: the next) holds, its
// entries (in the table or aside) or, compact, its record; NULL when that
// chunk will be one never used (its memory is not there yet).
static inline const void *ks_blocktab_ahead_line(const struct ks_blocktab *t, uint32_t ahead, uint32_t line)
{
    if (ahead >= t->n_freed)
        return NULL;
    uint32_t k = t->freed[t->n_freed - 1 - ahead];
    const struct ks_compact *x = ks_blocktab_compact(t, k);
    if (x)
        return (const char *)x + line % (sizeof *x / 64) * 64;
    return (const char *)ks_blocktab_entries(t, k) + line % (KS_CHUNK * sizeof *t->blk / 64) * 64;
}

// Where block id's entry lies, in the table or aside, for a prefetch hint
// only (a compact chunk's is not its entry).
static inline const struct ks_block *ks_blocktab_slot(const struct ks_blocktab *t, uint32_t id)
{
    return ks_blocktab_entry(t, id);
}

// Bytes the table is sized for (entries, chunk records, freed stack, the
// bits per chunk and page; it commits them only as far as it has been used)
// and the compact chunks' records and the slots of chunks written aside.
uint64_t ks_blocktab_bytes(const struct ks_blocktab *t);

#endif
