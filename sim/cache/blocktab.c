// blocktab.c - the block table and its chunked virtual-id allocator.
#include "blocktab.h"

#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "status.h"

static size_t blk_bytes(uint32_t chunks)
{
    return (size_t)chunks * KS_CHUNK * sizeof(struct ks_block);
}

static size_t cmp_bytes(uint32_t chunks)
{
    return (size_t)chunks * sizeof(struct ks_compact);
}

int ks_blocktab_init(struct ks_blocktab *t, uint32_t n_blocks)
{
    memset(t, 0, sizeof *t);
    if (n_blocks == 0 || n_blocks > (UINT32_C(1) << 31) - KS_CHUNK)
        return KS_EINVAL;
    t->n_chunks = (n_blocks + KS_CHUNK - 1) / KS_CHUNK;
    // reserved: zeroed, committed as chunks are first handed out (the
    // records: as chunks become compact)
    t->blk = ks_bigmem_alloc(blk_bytes(t->n_chunks));
    t->chunk = ks_bigmem_alloc((size_t)t->n_chunks * sizeof *t->chunk);
    t->freed = ks_bigmem_alloc((size_t)t->n_chunks * sizeof *t->freed);
    t->cmp = ks_bigmem_alloc(cmp_bytes(t->n_chunks));
    t->compact = calloc(t->n_chunks / 8 + 1, 1);
    t->dirty = calloc(t->n_chunks / KS_CHUNK_PAGE / 8 + 1, 1);
    // the chunks written aside: their slots, committed as far as used
    t->aside = ks_bigmem_alloc(blk_bytes(t->n_chunks));
    t->aside_of = ks_bigmem_alloc((size_t)t->n_chunks * sizeof *t->aside_of);
    t->aside_freed = ks_bigmem_alloc((size_t)t->n_chunks * sizeof *t->aside_freed);
    t->aside_bit = calloc(t->n_chunks / 8 + 1, 1);
    if (!t->blk || !t->chunk || !t->freed || !t->cmp || !t->compact || !t->dirty || !t->aside || !t->aside_of ||
        !t->aside_freed || !t->aside_bit) {
        ks_blocktab_fini(t);
        return KS_ENOMEM;
    }
    return KS_OK;
}

void ks_blocktab_fini(struct ks_blocktab *t)
{
    free(t->compact);
    free(t->dirty);
    ks_bigmem_free(t->blk, blk_bytes(t->n_chunks));
    ks_bigmem_free(t->chunk, (size_t)t->n_chunks * sizeof *t->chunk);
    ks_bigmem_free(t->freed, (size_t)t->n_chunks * sizeof *t->freed);
    ks_bigmem_free(t->cmp, cmp_bytes(t->n_chunks));
    ks_bigmem_free(t->aside, blk_bytes(t->n_chunks));
    ks_bigmem_free(t->aside_of, (size_t)t->n_chunks * sizeof *t->aside_of);
    ks_bigmem_free(t->aside_freed, (size_t)t->n_chunks * sizeof *t->aside_freed);
    free(t->aside_bit);
    memset(t, 0, sizeof *t);
}

// Chunk k becomes compact, every id free at generation 0 (a chunk never used).
static void compact_new(struct ks_blocktab *t, uint32_t k)
{
    memset(&t->cmp[k], 0, sizeof t->cmp[k]);
    t->compact[k / 8] |= (uint8_t)(1u << (k % 8));
    t->n_compact++;
}

// Compact chunk k's entries into the table; it is compact no more.
static void write_out(struct ks_blocktab *t, uint32_t k)
{
    const struct ks_compact *x = &t->cmp[k];
    for (uint32_t i = 0; i < KS_CHUNK; i++)
        t->blk[(size_t)k * KS_CHUNK + i] = ks_compact_entry(x, i);
    t->compact[k / 8] &= (uint8_t)~(1u << (k % 8));
    t->n_compact--;
}

// Compact chunk k's entries go aside (a slot: the last given back, else the
// lowest never used); it is compact no more, and its page stays as it was.
static void put_aside(struct ks_blocktab *t, uint32_t k)
{
    const struct ks_compact *x = &t->cmp[k];
    uint32_t given = t->aside_hwm - t->n_aside; // slots on the aside_freed stack
    uint32_t slot = given ? t->aside_freed[given - 1] : t->aside_hwm++;
    struct ks_block *e = &t->aside[(size_t)slot * KS_CHUNK];
    for (uint32_t i = 0; i < KS_CHUNK; i++)
        e[i] = ks_compact_entry(x, i);
    t->compact[k / 8] &= (uint8_t)~(1u << (k % 8));
    t->n_compact--;
    t->aside_of[k] = slot;
    t->aside_bit[k / 8] |= (uint8_t)(1u << (k % 8));
    t->n_aside++;
}

// Chunk k is aside no more; its slot is given back.
static void leave_aside(struct ks_blocktab *t, uint32_t k)
{
    t->aside_freed[t->aside_hwm - t->n_aside] = t->aside_of[k]; // on top of the slots given back
    t->aside_bit[k / 8] &= (uint8_t)~(1u << (k % 8));
    t->n_aside--;
}

// Chunk k, written aside, every id free, becomes compact: its record takes
// the ids' generations.
static void aside_to_compact(struct ks_blocktab *t, uint32_t k)
{
    const struct ks_block *e = &t->aside[(size_t)t->aside_of[k] * KS_CHUNK];
    struct ks_compact *x = &t->cmp[k];
    memset(x, 0, sizeof *x);
    for (uint32_t i = 0; i < KS_CHUNK; i++) {
        KS_ASSERT(ks_blk_state(&e[i]) == KS_BLK_FREE);
        x->gen[i] = (uint16_t)ks_blk_gen(&e[i]);
    }
    leave_aside(t, k);
    t->compact[k / 8] |= (uint8_t)(1u << (k % 8));
    t->n_compact++;
}

// Chunk k is about to be written: its page is dirty, and the page's
// compact chunks (and those written aside) are written out (the memory is
// committed anyway). Once the page that shares their records' page is dirty
// too, that page goes back: no chunk of either becomes compact again.
static void dirty(struct ks_blocktab *t, uint32_t k)
{
    uint32_t pg = k / KS_CHUNK_PAGE;
    if (ks_blocktab_page_dirty(t, k))
        return;
    t->dirty[pg / 8] |= (uint8_t)(1u << (pg % 8));
    for (uint32_t j = pg * KS_CHUNK_PAGE; j < (pg + 1) * KS_CHUNK_PAGE && j < t->hwm; j++) {
        if (ks_blocktab_compact(t, j)) {
            write_out(t, j);
        } else if (ks_blocktab_aside(t, j)) {
            memcpy(&t->blk[(size_t)j * KS_CHUNK], ks_blocktab_entries(t, j), KS_CHUNK * sizeof *t->blk);
            leave_aside(t, j);
        }
    }
    uint32_t pair = pg & ~1u; // the first of the two pages whose records share a page
    if (ks_blocktab_page_dirty(t, pair * KS_CHUNK_PAGE) && ks_blocktab_page_dirty(t, (pair + 1) * KS_CHUNK_PAGE) &&
        cmp_bytes((pair + 2) * KS_CHUNK_PAGE) <= cmp_bytes(t->n_chunks))
        ks_bigmem_drop(t->cmp, cmp_bytes(t->n_chunks), cmp_bytes(pair * KS_CHUNK_PAGE), cmp_bytes(2 * KS_CHUNK_PAGE));
}

void ks_blocktab_expand(struct ks_blocktab *t, uint32_t k)
{
    KS_ASSERT(ks_blocktab_compact(t, k) != NULL || ks_blocktab_aside(t, k));
    dirty(t, k);
}

#define CHUNK_AHEAD 4 // chunk allocations ahead whose entries are fetched

uint32_t ks_blocktab_chunk_alloc(struct ks_blocktab *t, uint32_t req, uint16_t group, uint32_t pos, int compact)
{
    uint32_t c;
    if (t->n_freed) {
        c = t->freed[--t->n_freed];
        // written out: its ids' generations go to the table; or, aside, to a record
        if (!compact && (ks_blocktab_compact(t, c) || ks_blocktab_aside(t, c)))
            dirty(t, c);
        else if (compact && ks_blocktab_aside(t, c))
            aside_to_compact(t, c);
    } else if (t->hwm < t->n_chunks) {
        c = t->hwm++;
        if (blk_bytes(t->hwm) > t->mark)
            t->mark = ks_bigmem_use(t->blk, blk_bytes(t->n_chunks), t->mark, blk_bytes(t->hwm));
        if (compact && !ks_blocktab_page_dirty(t, c))
            compact_new(t, c);
        else
            dirty(t, c);
    } else {
        return KS_NONE;
    }
    t->chunk[c] = (struct ks_chunk){.req = req, .pos = pos, .group = group, .live = 0};
    // the entries of the chunk handed out CHUNK_AHEAD allocations from now
    // (the freed stack's), or its record when it is compact, are fetched:
    // they lie anywhere in the table, and a request's growth takes one chunk
    // per layer group in turn, then fills them all together. (A hint:
    // nothing changes; a record's four lines come twice over the entries'
    // eight. Written here, not as a function: GCC deems a function whose
    // only effect is a prefetch pure.)
    for (uint32_t line = 0; line < KS_CHUNK * sizeof *t->blk / 64; line++) {
        const void *e = ks_blocktab_ahead_line(t, CHUNK_AHEAD - 1, line);
        if (e)
            __builtin_prefetch(e, 1);
    }
    return c * KS_CHUNK;
}

void ks_blocktab_use(struct ks_blocktab *t, uint32_t id, uint32_t page, unsigned tier, uint32_t step)
{
    struct ks_compact *x = ks_blocktab_compact(t, id / KS_CHUNK);
    uint32_t i = id % KS_CHUNK;
    if (x && tier == KS_L1 && (!x->live || (x->heat == 0 && x->last == step))) {
        KS_ASSERT(!(x->live >> i & 1u));
        x->page[i] = page;
        x->heat = 0;
        x->last = step;
        x->live |= UINT32_C(1) << i;
    } else {
        if (x) // the record cannot hold it: the chunk's entries go aside, its page stays unwritten
            put_aside(t, id / KS_CHUNK);
        struct ks_block *b = ks_blocktab_entry(t, id);
        KS_ASSERT(ks_blk_state(b) == KS_BLK_FREE);
        b->loc = 0;
        b->meta &= UINT64_C(0x1fff) << 38; // the generation survives reuse (see release)
        ks_blk_set_loc(b, page, tier, KS_BLK_RESIDENT);
        ks_blk_set_refs(b, 1);
        b->last = step;
    }
    t->chunk[id / KS_CHUNK].live++;
    t->live++;
}

void ks_blocktab_use_l1_run(struct ks_blocktab *t, uint32_t id, uint32_t n, const uint32_t *page, size_t stride,
                            uint32_t step)
{
    uint32_t k = id / KS_CHUNK, i = id % KS_CHUNK;
    KS_ASSERT(n > 0 && i + n <= KS_CHUNK);
    struct ks_compact *x = ks_blocktab_compact(t, k);
    if (!x || (x->live && (x->heat != 0 || x->last != step))) { // not in the record: one by one
        for (uint32_t m = 0; m < n; m++)
            ks_blocktab_use(t, id + m, page[m * stride], KS_L1, step);
        return;
    }
    uint32_t run = (n == KS_CHUNK ? UINT32_MAX : (UINT32_C(1) << n) - 1) << i;
    KS_ASSERT(!(x->live & run));
    for (uint32_t m = 0; m < n; m++)
        x->page[i + m] = page[m * stride];
    x->heat = 0;
    x->last = step;
    x->live |= run;
    t->chunk[k].live = (uint16_t)(t->chunk[k].live + n);
    t->live += n;
}

void ks_blocktab_release(struct ks_blocktab *t, uint32_t id)
{
    struct ks_compact *x = ks_blocktab_compact(t, id / KS_CHUNK);
    if (x) {
        uint32_t i = id % KS_CHUNK;
        KS_ASSERT(x->live >> i & 1u);
        x->live &= ~(UINT32_C(1) << i);
        x->gen[i] = (uint16_t)((x->gen[i] + 1u) & ((1u << KS_GEN_BITS) - 1));
    } else {
        struct ks_block *b = ks_blocktab_entry(t, id);
        KS_ASSERT(ks_blk_state(b) != KS_BLK_FREE);
        // NOTE: bumping the generation on release means a reader still holding a
        // location of a freed block is refused even after the id is reused.
        ks_blk_bump_gen(b);
        b->loc = 0;
        b->meta &= UINT64_C(0x1fff) << 38;
        b->last = 0;
    }
    struct ks_chunk *c = &t->chunk[id / KS_CHUNK];
    KS_ASSERT(c->live > 0);
    t->live--;
    if (--c->live == 0)
        t->freed[t->n_freed++] = id / KS_CHUNK;
}

void ks_blocktab_release_run(struct ks_blocktab *t, uint32_t id, uint32_t n)
{
    uint32_t k = id / KS_CHUNK, i = id % KS_CHUNK;
    struct ks_compact *x = ks_blocktab_compact(t, k);
    KS_ASSERT(x && n > 0 && i + n <= KS_CHUNK);
    uint32_t run = (n == KS_CHUNK ? UINT32_MAX : (UINT32_C(1) << n) - 1) << i;
    KS_ASSERT((x->live & run) == run);
    x->live &= ~run;
    for (uint32_t m = i; m < i + n; m++)
        x->gen[m] = (uint16_t)((x->gen[m] + 1u) & ((1u << KS_GEN_BITS) - 1));
    struct ks_chunk *c = &t->chunk[k];
    KS_ASSERT(c->live >= n);
    t->live -= n;
    c->live = (uint16_t)(c->live - n);
    if (c->live == 0)
        t->freed[t->n_freed++] = k;
}

uint64_t ks_blocktab_bytes(const struct ks_blocktab *t)
{
    return (uint64_t)t->n_chunks * (KS_CHUNK * sizeof *t->blk + sizeof *t->chunk + sizeof *t->freed) +
           (uint64_t)(t->n_chunks / 8 + 1) + (t->n_chunks / KS_CHUNK_PAGE / 8 + 1) +
           (uint64_t)t->n_compact * sizeof *t->cmp + (uint64_t)t->aside_hwm * KS_CHUNK * sizeof *t->blk;
}
