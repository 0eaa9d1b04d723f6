// blocktab.c - the block table and its chunked virtual-id allocator.
#include "blocktab.h"

#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "grow.h"
#include "status.h"

static size_t blk_bytes(uint32_t chunks)
{
    return (size_t)chunks * KS_CHUNK * sizeof(struct ks_block);
}

int ks_blocktab_init(struct ks_blocktab *t, uint32_t n_blocks)
{
    memset(t, 0, sizeof *t);
    if (n_blocks == 0 || n_blocks > (UINT32_C(1) << 31) - KS_CHUNK)
        return KS_EINVAL;
    t->n_chunks = (n_blocks + KS_CHUNK - 1) / KS_CHUNK;
    // reserved: zeroed, committed as chunks are first handed out
    t->blk = ks_bigmem_alloc(blk_bytes(t->n_chunks));
    t->chunk = ks_bigmem_alloc((size_t)t->n_chunks * sizeof *t->chunk);
    t->freed = ks_bigmem_alloc((size_t)t->n_chunks * sizeof *t->freed);
    if (!t->blk || !t->chunk || !t->freed) {
        ks_blocktab_fini(t);
        return KS_ENOMEM;
    }
    return KS_OK;
}

void ks_blocktab_fini(struct ks_blocktab *t)
{
    free(t->cmp);
    free(t->cmp_free);
    ks_bigmem_free(t->blk, blk_bytes(t->n_chunks));
    ks_bigmem_free(t->chunk, (size_t)t->n_chunks * sizeof *t->chunk);
    ks_bigmem_free(t->freed, (size_t)t->n_chunks * sizeof *t->freed);
    memset(t, 0, sizeof *t);
}

// A record for chunk k, every id free at generation 0 (a chunk never used);
// 0 when out of memory (k stays as it is, its zero entries saying the same).
static int compact_new(struct ks_blocktab *t, uint32_t k)
{
    uint32_t r;
    if (t->n_cmp_free) {
        r = t->cmp_free[--t->n_cmp_free];
    } else {
        if (ks_grow((void **)&t->cmp, &t->cap_cmp, t->n_cmp + 1, sizeof *t->cmp) != KS_OK)
            return 0;
        if (ks_grow((void **)&t->cmp_free, &t->cap_cmp_free, t->cap_cmp, sizeof *t->cmp_free) != KS_OK)
            return 0; // the free stack holds every record
        r = t->n_cmp++;
    }
    memset(&t->cmp[r], 0, sizeof t->cmp[r]);
    t->chunk[k].cmp = r + 1;
    t->n_compact++;
    return 1;
}

void ks_blocktab_expand(struct ks_blocktab *t, uint32_t k)
{
    KS_ASSERT(t->chunk[k].cmp != 0);
    uint32_t r = t->chunk[k].cmp - 1;
    const struct ks_compact *x = &t->cmp[r];
    for (uint32_t i = 0; i < KS_CHUNK; i++)
        t->blk[(size_t)k * KS_CHUNK + i] = ks_compact_entry(x, i);
    t->chunk[k].cmp = 0;
    t->cmp_free[t->n_cmp_free++] = r;
    t->n_compact--;
}

#define CHUNK_AHEAD 4 // chunk allocations ahead whose entries are fetched

uint32_t ks_blocktab_chunk_alloc(struct ks_blocktab *t, uint32_t req, uint16_t group, uint32_t pos, int compact)
{
    uint32_t c, cmp = 0;
    if (t->n_freed) {
        c = t->freed[--t->n_freed];
        cmp = t->chunk[c].cmp;
        if (cmp && !compact) { // written out: its ids' generations go to the table
            ks_blocktab_expand(t, c);
            cmp = 0;
        }
    } else if (t->hwm < t->n_chunks) {
        c = t->hwm++;
        if (blk_bytes(t->hwm) > t->mark)
            t->mark = ks_bigmem_use(t->blk, blk_bytes(t->n_chunks), t->mark, blk_bytes(t->hwm));
        if (compact && compact_new(t, c))
            cmp = t->chunk[c].cmp;
    } else {
        return KS_NONE;
    }
    t->chunk[c] = (struct ks_chunk){.req = req, .pos = pos, .group = group, .live = 0, .cmp = cmp};
    // the entries of the chunk handed out CHUNK_AHEAD allocations from now
    // (the freed stack's) are fetched: they lie anywhere in the table, and a
    // request's growth takes one chunk per layer group in turn, then fills
    // them all together. (A hint: nothing changes. Written here, not as a
    // function: GCC deems a function whose only effect is a prefetch pure.)
    if (t->n_freed >= CHUNK_AHEAD) {
        const char *e = (const char *)&t->blk[(size_t)t->freed[t->n_freed - CHUNK_AHEAD] * KS_CHUNK];
        for (size_t off = 0; off < KS_CHUNK * sizeof *t->blk; off += 64)
            __builtin_prefetch(e + off, 1);
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
        struct ks_block *b = ks_blocktab_get(t, id);
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

void ks_blocktab_release(struct ks_blocktab *t, uint32_t id)
{
    struct ks_compact *x = ks_blocktab_compact(t, id / KS_CHUNK);
    if (x) {
        uint32_t i = id % KS_CHUNK;
        KS_ASSERT(x->live >> i & 1u);
        x->live &= ~(UINT32_C(1) << i);
        x->gen[i] = (uint16_t)((x->gen[i] + 1u) & ((1u << KS_GEN_BITS) - 1));
    } else {
        struct ks_block *b = &t->blk[id];
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

uint64_t ks_blocktab_bytes(const struct ks_blocktab *t)
{
    return (uint64_t)t->n_chunks * (KS_CHUNK * sizeof *t->blk + sizeof *t->chunk + sizeof *t->freed) +
           (uint64_t)t->cap_cmp * (sizeof *t->cmp + sizeof *t->cmp_free);
}
