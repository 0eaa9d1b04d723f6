// test_blocktab.c - the 16-byte block entry's bit fields and the chunked
// virtual-id allocator (blocktab.h).
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bigmem.h"
#include "blocktab.h"
#include "heat.h"
#include "rng.h"
#include "status.h"

static void entry_is_16_bytes(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct ks_block), 16);
    assert_int_equal(KS_PAGE_BITS + 2 + 2 + 1, 32);              // loc
    assert_int_equal(KS_HEAT_BITS + KS_GEN_BITS + KS_REFS_BITS, 64); // meta
}

// README "Block table entry (16 bytes)": "`meta` = heat (38) | migration
// generation (13) | reference count (13). So a tier holds at most 2^27 pages,
// a block at most 8191 sharers, and a reader's generation wraps after 8192
// migrations of the same block". Each field's width and place, not only their
// sums: heat bits 0-37, generation 38-50, references 51-63, the page 0-26 of loc.
static void readme_bit_split(void **state)
{
    (void)state;
    assert_int_equal(KS_HEAT_BITS, 38);
    assert_int_equal(KS_GEN_BITS, 13);
    assert_int_equal(KS_REFS_BITS, 13);
    assert_int_equal(KS_PAGE_BITS, 27);
    assert_int_equal(KS_REFS_MAX, 8191);
    struct ks_block b = {0};
    ks_blk_set_heat(&b, KS_HEAT_MAX);
    assert_true(b.meta == (UINT64_C(1) << 38) - 1);
    ks_blk_set_heat(&b, 0);
    ks_blk_set_refs(&b, KS_REFS_MAX);
    assert_true(b.meta == UINT64_C(0x1fff) << 51);
    ks_blk_set_refs(&b, 0);
    // the generation: 8191 migrations reach its largest value, bits 38-50;
    // the 8192nd brings it back to where it started
    for (unsigned g = 1; g < 8192; g++) {
        ks_blk_bump_gen(&b);
        assert_int_not_equal(ks_blk_gen(&b), 0);
    }
    assert_int_equal(ks_blk_gen(&b), 8191);
    assert_true(b.meta == UINT64_C(0x1fff) << 38);
    ks_blk_bump_gen(&b);
    assert_int_equal(ks_blk_gen(&b), 0);
    assert_true(b.meta == 0);
    ks_blk_set_loc(&b, KS_PAGE_MAX, 0, 0);
    assert_int_equal(b.loc, (UINT32_C(1) << 27) - 1);
}

struct fields {
    uint32_t page;
    unsigned tier, state, pf, gen, refs;
    uint64_t heat;
};

static void expect(const struct ks_block *b, const struct fields *f)
{
    assert_int_equal(ks_blk_page(b), f->page);
    assert_int_equal(ks_blk_tier(b), f->tier);
    assert_int_equal(ks_blk_state(b), f->state);
    assert_int_equal(ks_blk_prefetched(b), f->pf);
    assert_int_equal(ks_blk_heat(b), f->heat);
    assert_int_equal(ks_blk_gen(b), f->gen);
    assert_int_equal(ks_blk_refs(b), f->refs);
}

static void fields_extremes(void **state)
{
    (void)state;
    struct ks_block b = {0};
    struct fields f = {0};
    expect(&b, &f);
    // every field at its maximum, set one at a time
    ks_blk_set_prefetched(&b, 1);
    f.pf = 1;
    expect(&b, &f);
    ks_blk_set_loc(&b, KS_PAGE_MAX, 3, 3);
    f.page = KS_PAGE_MAX, f.tier = 3, f.state = 3;
    expect(&b, &f); // set_loc keeps the prefetched bit
    ks_blk_set_heat(&b, KS_HEAT_MAX);
    f.heat = KS_HEAT_MAX;
    expect(&b, &f);
    ks_blk_set_refs(&b, KS_REFS_MAX);
    f.refs = KS_REFS_MAX;
    expect(&b, &f);
    for (unsigned g = 1; g < (1u << KS_GEN_BITS); g++) {
        ks_blk_bump_gen(&b);
        f.gen = g;
        if (g % 1000 == 0 || g + 1 == (1u << KS_GEN_BITS))
            expect(&b, &f);
    }
    assert_int_equal(ks_blk_gen(&b), (1u << KS_GEN_BITS) - 1);
    ks_blk_bump_gen(&b); // wraps
    f.gen = 0;
    expect(&b, &f);
    assert_int_equal(b.last, 0);
    // and back to zero one at a time
    ks_blk_set_state(&b, 0);
    f.state = 0;
    expect(&b, &f);
    ks_blk_set_heat(&b, 0);
    f.heat = 0;
    expect(&b, &f);
    ks_blk_set_refs(&b, 0);
    f.refs = 0;
    expect(&b, &f);
    ks_blk_set_prefetched(&b, 0);
    f.pf = 0;
    expect(&b, &f);
    ks_blk_set_loc(&b, 0, 0, 0);
    f.page = 0, f.tier = 0, f.state = 0;
    expect(&b, &f);
    assert_int_equal(b.loc, 0);
    assert_int_equal(b.meta, 0);
    // a non-zero `on` is one
    ks_blk_set_prefetched(&b, 7);
    assert_int_equal(ks_blk_prefetched(&b), 1);
}

static void fields_random(void **state)
{
    (void)state;
    struct ks_rng r;
    ks_rng_seed(&r, 99);
    struct ks_block b = {0};
    struct fields f = {0};
    b.last = 0xdeadbeef;
    for (int i = 0; i < 100000; i++) {
        switch (ks_rng_below(&r, 6)) {
        case 0:
            f.page = ks_rng_below(&r, KS_PAGE_MAX + 1);
            f.tier = ks_rng_below(&r, 4);
            f.state = ks_rng_below(&r, 4);
            ks_blk_set_loc(&b, f.page, f.tier, f.state);
            break;
        case 1:
            f.state = ks_rng_below(&r, 4);
            ks_blk_set_state(&b, f.state);
            break;
        case 2:
            f.pf = ks_rng_below(&r, 2);
            ks_blk_set_prefetched(&b, f.pf);
            break;
        case 3:
            f.heat = ks_rng_next(&r) & KS_HEAT_MAX;
            ks_blk_set_heat(&b, f.heat);
            break;
        case 4:
            f.gen = (f.gen + 1) & ((1u << KS_GEN_BITS) - 1);
            ks_blk_bump_gen(&b);
            break;
        case 5:
            f.refs = ks_rng_below(&r, KS_REFS_MAX + 1);
            ks_blk_set_refs(&b, f.refs);
            break;
        }
        expect(&b, &f);
        assert_int_equal(b.last, 0xdeadbeef);
    }
}

static void chunks(void **state)
{
    (void)state;
    struct ks_blocktab t;
    assert_int_equal(ks_blocktab_init(&t, 0), KS_EINVAL);
    assert_int_equal(ks_blocktab_init(&t, 100), KS_OK); // rounded up to 4 chunks
    assert_int_equal(t.n_chunks, 4);
    assert_int_equal(ks_blocktab_chunks_free(&t), 4);
    assert_int_equal(t.hwm, 0);
    assert_int_equal(t.live, 0);
    assert_int_equal(ks_blocktab_bytes(&t), 4 * (KS_CHUNK * 16 + sizeof(struct ks_chunk) + sizeof(uint32_t)) + 2); // and a byte each of the bits per chunk and per page
    assert_int_equal(sizeof(struct ks_chunk), 12);
    // ids in increasing order, chunk records filled in
    uint32_t first[4];
    for (uint32_t k = 0; k < 4; k++) {
        first[k] = ks_blocktab_chunk_alloc(&t, 10 + k, (uint16_t)(k % 2), 64 * k, 0);
        assert_int_equal(first[k], k * KS_CHUNK);
        assert_int_equal(t.chunk[k].req, 10 + k);
        assert_int_equal(t.chunk[k].group, k % 2);
        assert_int_equal(t.chunk[k].pos, 64 * k);
        assert_int_equal(t.chunk[k].live, 0);
    }
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 0, 0, 0, 0), KS_NONE);
    assert_int_equal(ks_blocktab_chunks_free(&t), 0);

    // use every id of chunk 1 and three of chunk 2
    for (uint32_t i = 0; i < KS_CHUNK; i++)
        ks_blocktab_use(&t, first[1] + i, 1000 + i, KS_L2, 77);
    for (uint32_t i = 0; i < 3; i++)
        ks_blocktab_use(&t, first[2] + i, i, KS_L1, 5);
    assert_int_equal(t.live, KS_CHUNK + 3);
    assert_int_equal(t.chunk[1].live, KS_CHUNK);
    assert_int_equal(t.chunk[2].live, 3);
    const struct ks_block *b = ks_blocktab_get(&t, first[1] + 7);
    assert_int_equal(ks_blk_page(b), 1007);
    assert_int_equal(ks_blk_tier(b), KS_L2);
    assert_int_equal(ks_blk_state(b), KS_BLK_RESIDENT);
    assert_int_equal(ks_blk_prefetched(b), 0);
    assert_int_equal(ks_blk_refs(b), 1);
    assert_int_equal(ks_blk_heat(b), 0);
    assert_int_equal(ks_blk_gen(b), 0);
    assert_int_equal(b->last, 77);

    // a used entry that is released and used again starts clean, but for
    // its generation
    struct ks_block *m = ks_blocktab_get(&t, first[2] + 1);
    ks_blk_bump_gen(m);
    ks_blk_set_heat(m, 12345);
    ks_blk_set_prefetched(m, 1);
    ks_blk_set_refs(m, 9);
    ks_blocktab_release(&t, first[2] + 1);
    assert_int_equal(ks_blk_state(m), KS_BLK_FREE);
    assert_int_equal(t.chunk[2].live, 2);
    // release bumped the generation (1 -> 2) and reuse keeps it, so a
    // reader's old location of the id stays refused
    assert_int_equal(ks_blk_gen(m), 2);
    assert_int_equal(ks_blk_refs(m), 0);
    assert_int_equal(ks_blk_heat(m), 0);
    ks_blocktab_use(&t, first[2] + 1, 42, KS_L3, 6);
    assert_int_equal(ks_blk_gen(m), 2);
    assert_int_equal(m->last, 6);
    assert_int_equal(ks_blk_heat(m), 0);
    assert_int_equal(ks_blk_prefetched(m), 0);
    assert_int_equal(ks_blk_refs(m), 1);
    assert_int_equal(ks_blk_tier(m), KS_L3);
    assert_int_equal(ks_blk_page(m), 42);

    // chunk 1 returns only with its last id
    for (uint32_t i = 0; i + 1 < KS_CHUNK; i++) {
        ks_blocktab_release(&t, first[1] + i);
        assert_int_equal(ks_blocktab_chunks_free(&t), 0);
    }
    assert_int_equal(t.chunk[1].live, 1);
    ks_blocktab_release(&t, first[1] + KS_CHUNK - 1);
    assert_int_equal(ks_blocktab_chunks_free(&t), 1);
    assert_int_equal(t.live, 3);
    // chunk 0 never had a live id, it is still taken; chunk 1 is reused
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 3, 1, 96, 0), first[1]);
    assert_int_equal(t.chunk[1].req, 3);
    assert_int_equal(t.chunk[1].pos, 96);
    assert_int_equal(t.chunk[1].live, 0);
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 0, 0, 0, 0), KS_NONE);

    // chunk 2: releasing all three returns it
    for (uint32_t i = 0; i < 3; i++)
        ks_blocktab_release(&t, first[2] + i);
    assert_int_equal(t.live, 0);
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 4, 0, 0, 0), first[2]);
    ks_blocktab_fini(&t);
    assert_null(t.blk);
    assert_int_equal(t.n_chunks, 0);
}

// ks_blocktab_ahead_line names what the allocations to come will take (the
// growth's hints are worth something only then): the freed stack's chunks,
// the last freed first, their entries, or their record when compact; line
// numbers taken modulo the lines there are; NULL for chunks never used.
static void ahead_line_names_next_chunks(void **state)
{
    (void)state;
    struct ks_blocktab t;
    assert_int_equal(ks_blocktab_init(&t, 16 * KS_CHUNK * KS_CHUNK_PAGE), KS_OK);
    assert_null(ks_blocktab_ahead_line(&t, 0, 0)); // nothing freed: the next is never used
    uint32_t first[3];
    for (uint32_t k = 0; k < 3; k++) { // 0 and 2 asked compact, 1 not
        first[k] = ks_blocktab_chunk_alloc(&t, k, 0, 0, k != 1);
        ks_blocktab_use(&t, first[k], 100 + k, KS_L1, 3);
    }
    // chunk 1 dirtied their page: 0 was written out, 2 never compact; a
    // chunk asked compact in a clean page of its own stays so
    uint32_t far = KS_NONE;
    while ((far = ks_blocktab_chunk_alloc(&t, 9, 0, 0, 1)) / KS_CHUNK < KS_CHUNK_PAGE)
        ks_blocktab_use(&t, far, 7, KS_L1, 3);
    ks_blocktab_use(&t, far, 200, KS_L1, 3);
    assert_non_null(ks_blocktab_compact(&t, far / KS_CHUNK));
    assert_null(ks_blocktab_compact(&t, 0));
    ks_blocktab_release(&t, first[0]);
    ks_blocktab_release(&t, far);
    ks_blocktab_release(&t, first[1]);
    // freed in the order 0, far, 1: taken 1, far, 0
    const char *blk = (const char *)t.blk, *cmp = (const char *)&t.cmp[far / KS_CHUNK];
    assert_ptr_equal(ks_blocktab_ahead_line(&t, 0, 0), blk + (size_t)first[1] * 16);
    assert_ptr_equal(ks_blocktab_ahead_line(&t, 0, 7), blk + (size_t)first[1] * 16 + 7 * 64);
    assert_ptr_equal(ks_blocktab_ahead_line(&t, 0, 8), blk + (size_t)first[1] * 16); // 8 lines of entries
    assert_ptr_equal(ks_blocktab_ahead_line(&t, 1, 3), cmp + 3 * 64);
    assert_ptr_equal(ks_blocktab_ahead_line(&t, 1, 5), cmp + 64); // 4 lines of record
    assert_ptr_equal(ks_blocktab_ahead_line(&t, 2, 2), blk + (size_t)first[0] * 16 + 2 * 64);
    assert_null(ks_blocktab_ahead_line(&t, 3, 0));
    // and the allocations take them in that order
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 1, 0, 0, 1), first[1]);
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 1, 0, 0, 1), far);
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 1, 0, 0, 1), first[0]);
    ks_blocktab_fini(&t);
}

// A table sized past bigmem's dense size (16 MiB of entries) handed out
// whole: ids in increasing order, the memory told before each chunk past
// the mark, every entry read back; freed chunks are reused last freed
// first, and never-used ones only once none waits.
static void grows_across_dense(void **state)
{
    (void)state;
    struct ks_blocktab t;
    uint32_t ids = (uint32_t)(2 * KS_BIGMEM_DENSE / sizeof(struct ks_block)) + 100;
    assert_int_equal(ks_blocktab_init(&t, ids), KS_OK);
    uint32_t n = t.n_chunks;
    assert_int_equal(n, (ids + KS_CHUNK - 1) / KS_CHUNK);
    assert_int_equal(ks_blocktab_chunks_free(&t), n);
    for (uint32_t k = 0; k < n; k++) {
        assert_int_equal(ks_blocktab_chunk_alloc(&t, k, (uint16_t)(k % 7), 3 * k, 0), k * KS_CHUNK);
        assert_int_equal(t.hwm, k + 1);
        assert_true(t.mark >= (size_t)t.hwm * KS_CHUNK * sizeof(struct ks_block) ||
                    (size_t)t.hwm * KS_CHUNK * sizeof(struct ks_block) < KS_BIGMEM_DENSE);
        ks_blocktab_use(&t, k * KS_CHUNK + k % KS_CHUNK, k % (KS_PAGE_MAX + 1), k % 3, k);
    }
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 0, 0, 0, 0), KS_NONE);
    assert_int_equal(ks_blocktab_chunks_free(&t), 0);
    assert_int_equal(t.live, n);
    for (uint32_t id = 0; id < n * KS_CHUNK; id++) {
        const struct ks_block *b = ks_blocktab_get(&t, id);
        uint32_t k = id / KS_CHUNK;
        if (id % KS_CHUNK != k % KS_CHUNK) {
            assert_int_equal(b->loc | b->last | b->meta, 0);
            continue;
        }
        assert_int_equal(ks_blk_state(b), KS_BLK_RESIDENT);
        assert_int_equal(ks_blk_page(b), k);
        assert_int_equal(ks_blk_tier(b), k % 3);
        assert_int_equal(ks_blk_refs(b), 1);
        assert_int_equal(b->last, k);
        assert_int_equal(t.chunk[k].req, k);
        assert_int_equal(t.chunk[k].group, k % 7);
        assert_int_equal(t.chunk[k].pos, 3 * k);
        assert_int_equal(t.chunk[k].live, 1);
    }
    // free three chunks (their only ids): reused in the reverse order
    uint32_t gone[3] = {5, n / 2, n - 1};
    for (int i = 0; i < 3; i++) {
        uint32_t id = gone[i] * KS_CHUNK + gone[i] % KS_CHUNK;
        ks_blocktab_release(&t, id);
        assert_int_equal(ks_blk_state(ks_blocktab_get(&t, id)), KS_BLK_FREE);
        assert_int_equal(ks_blk_gen(ks_blocktab_get(&t, id)), 1);
    }
    assert_int_equal(ks_blocktab_chunks_free(&t), 3);
    for (int i = 2; i >= 0; i--)
        assert_int_equal(ks_blocktab_chunk_alloc(&t, 1, 0, 0, 0), gone[i] * KS_CHUNK);
    assert_int_equal(ks_blocktab_chunk_alloc(&t, 0, 0, 0, 0), KS_NONE);
    ks_blocktab_fini(&t);
}

// A compact chunk (blocktab.h) against the same chunk written out: two
// tables take the same random operations, one asking for compact chunks and
// one not, and every entry of the first (ks_blocktab_peek; ks_blocktab_get
// now and then, which writes a chunk out) equals the second's after each,
// as do the ids handed out. The shared heat and recency are changed the way
// aggregate.c changes them: on the record, and on every live entry of the
// other table's chunk. A use the record cannot hold (at another step, or
// below L1) writes the chunk aside (its page stays unwritten), and a freed
// chunk written aside, taken again as compact, is compact again.
static void compact_same_as_written(void **state)
{
    (void)state;
    enum { CHUNKS = 512 };
    struct ks_blocktab a, b;
    assert_int_equal(ks_blocktab_init(&a, CHUNKS * KS_CHUNK), KS_OK);
    assert_int_equal(ks_blocktab_init(&b, CHUNKS * KS_CHUNK), KS_OK);
    struct ks_rng rng;
    ks_rng_seed(&rng, 19);
    uint32_t held[CHUNKS], n_held = 0, step = 1, compact_seen = 0, expanded = 0, aside_seen = 0;
    for (int op = 0; op < 6000; op++) {
        uint32_t r = (uint32_t)ks_rng_below(&rng, 100), before = a.n_compact;
        if (r < 8 && ks_blocktab_chunks_free(&a)) { // a chunk for a new sequence
            int want = (int)ks_rng_below(&rng, 4) != 0;
            uint32_t fa = ks_blocktab_chunk_alloc(&a, 1, 0, 0, want);
            assert_int_equal(fa, ks_blocktab_chunk_alloc(&b, 1, 0, 0, 0));
            held[n_held++] = fa / KS_CHUNK;
            compact_seen += ks_blocktab_compact(&a, fa / KS_CHUNK) != NULL;
        } else if (r < 60 && n_held) { // a free id of a held chunk used: mostly in L1 at the step
            uint32_t k = held[ks_rng_below(&rng, n_held)];
            uint32_t id = k * KS_CHUNK + (uint32_t)ks_rng_below(&rng, KS_CHUNK);
            if (ks_blk_state(ks_blocktab_slot(&b, id)) != KS_BLK_FREE)
                continue;
            unsigned tier = ks_rng_below(&rng, 8) ? KS_L1 : KS_L2;
            uint32_t at = ks_rng_below(&rng, 8) ? step : step - 1, page = (uint32_t)ks_rng_below(&rng, 1000);
            ks_blocktab_use(&a, id, page, tier, at);
            ks_blocktab_use(&b, id, page, tier, at);
        } else if (r < 75 && n_held) { // a live id released (its chunk may go)
            uint32_t h = (uint32_t)ks_rng_below(&rng, n_held), k = held[h];
            uint32_t id = k * KS_CHUNK + (uint32_t)ks_rng_below(&rng, KS_CHUNK);
            if (ks_blk_state(ks_blocktab_slot(&b, id)) == KS_BLK_FREE)
                continue;
            ks_blocktab_release(&a, id);
            ks_blocktab_release(&b, id);
            if (b.chunk[k].live == 0)
                held[h] = held[--n_held];
        } else if (r < 90 && n_held) { // aggregate accesses: every live block of a chunk alike
            uint32_t k = held[ks_rng_below(&rng, n_held)];
            struct ks_compact *x = ks_blocktab_compact(&a, k);
            if (!x)
                continue;
            uint64_t heat = ks_rng_next(&rng) & KS_HEAT_MAX;
            x->heat = heat;
            x->last = step;
            for (uint32_t i = 0; i < KS_CHUNK; i++) {
                struct ks_block *e = ks_blocktab_get(&b, k * KS_CHUNK + i);
                if (ks_blk_state(e) != KS_BLK_FREE) {
                    ks_blk_set_heat(e, heat);
                    e->last = step;
                }
            }
        } else if (r < 93 && n_held) { // a block read one by one: written out
            uint32_t k = held[ks_rng_below(&rng, n_held)];
            ks_blocktab_get(&a, k * KS_CHUNK + (uint32_t)ks_rng_below(&rng, KS_CHUNK));
            assert_null(ks_blocktab_compact(&a, k));
        } else {
            step++;
        }
        expanded += a.n_compact < before ? before - a.n_compact : 0; // only chunks written out leave the count
        assert_int_equal(a.live, b.live);
        assert_int_equal(a.n_freed, b.n_freed);
        for (uint32_t id = 0; id < ks_blocktab_ids_used(&b); id++) {
            struct ks_block tmp;
            const struct ks_block *ea = ks_blocktab_peek(&a, id, &tmp), *eb = ks_blocktab_slot(&b, id);
            assert_int_equal(ea->loc, eb->loc);
            assert_int_equal(ea->last, eb->last);
            assert_true(ea->meta == eb->meta);
            assert_int_equal(a.chunk[id / KS_CHUNK].live, b.chunk[id / KS_CHUNK].live);
        }
        for (uint32_t k = 0; k < a.hwm; k++) { // a compact chunk, or one written aside: its page never written
            aside_seen += ks_blocktab_aside(&a, k);
            if (!ks_blocktab_compact(&a, k) && !ks_blocktab_aside(&a, k))
                continue;
            assert_false(ks_blocktab_page_dirty(&a, k));
            for (uint32_t i = 0; i < KS_CHUNK; i++)
                assert_true((a.blk[k * KS_CHUNK + i].loc | a.blk[k * KS_CHUNK + i].last | a.blk[k * KS_CHUNK + i].meta) == 0);
        }
    }
    print_message("compact chunks %u, written out or aside %u, aside (chunk-steps) %u\n", compact_seen, expanded,
                  aside_seen);
    assert_true(compact_seen > 20 && expanded > 20 && aside_seen > 20); // every form was exercised
    // every chunk written out: the tables are the same byte for byte
    for (uint32_t id = 0; id < ks_blocktab_ids_used(&a); id++)
        ks_blocktab_get(&a, id);
    assert_int_equal(a.n_compact, 0);
    assert_int_equal(a.n_aside, 0);
    assert_memory_equal(a.blk, b.blk, ks_blocktab_ids_used(&a) * sizeof *a.blk);
    ks_blocktab_fini(&a);
    ks_blocktab_fini(&b);
}

// Tables a and b hold the same live counts, and chunk k the same entries
// (read through ks_blocktab_peek: a compact chunk's from its record).
static void same_chunk(const struct ks_blocktab *a, const struct ks_blocktab *b, uint32_t k)
{
    assert_int_equal(a->live, b->live);
    assert_int_equal(a->chunk[k].live, b->chunk[k].live);
    for (uint32_t id = k * KS_CHUNK; id < (k + 1) * KS_CHUNK; id++) {
        struct ks_block ta, tb;
        const struct ks_block *ea = ks_blocktab_peek(a, id, &ta), *eb = ks_blocktab_peek(b, id, &tb);
        assert_int_equal(ea->loc, eb->loc);
        assert_int_equal(ea->last, eb->last);
        assert_true(ea->meta == eb->meta);
    }
}

// A compact chunk's run released at once (ks_blocktab_release_run, a
// request's end) leaves what releasing its ids one by one leaves: entries
// with their generations bumped, the chunk's and the table's live counts,
// and the chunk on the freed stack once its last id goes; over two rounds
// of use, so that the bumped generations are read back.
static void release_run_as_one_by_one(void **state)
{
    (void)state;
    struct ks_blocktab a, b;
    assert_int_equal(ks_blocktab_init(&a, 8 * KS_CHUNK), KS_OK);
    assert_int_equal(ks_blocktab_init(&b, 8 * KS_CHUNK), KS_OK);
    // runs [from, to) of each round: a part of the chunk, then the rest
    static const uint32_t cut[][3] = {{0, 5, 32}, {0, 31, 32}, {0, 1, 20}, {0, 19, 20}};
    for (uint32_t round = 0; round < 4; round++) {
        uint32_t fa = ks_blocktab_chunk_alloc(&a, 1, 0, 0, 1), fb = ks_blocktab_chunk_alloc(&b, 1, 0, 0, 1);
        assert_int_equal(fa, fb);
        uint32_t k = fa / KS_CHUNK, n = cut[round][2];
        for (uint32_t i = 0; i < n; i++) {
            ks_blocktab_use(&a, fa + i, 100 + i, KS_L1, round);
            ks_blocktab_use(&b, fa + i, 100 + i, KS_L1, round);
        }
        assert_non_null(ks_blocktab_compact(&a, k));
        for (uint32_t part = 0; part < 2; part++) {
            uint32_t from = part ? cut[round][1] : cut[round][0], to = part ? n : cut[round][1];
            ks_blocktab_release_run(&a, fa + from, to - from);
            for (uint32_t id = fa + from; id < fa + to; id++)
                ks_blocktab_release(&b, id);
            same_chunk(&a, &b, k);
            assert_int_equal(a.n_freed, b.n_freed);
            assert_int_equal(a.n_freed, part); // on the stack once its last id went
        }
        assert_int_equal(a.freed[0], b.freed[0]);
    }
    ks_blocktab_fini(&a);
    ks_blocktab_fini(&b);
}

// A growth's run written at once (ks_blocktab_use_l1_run, a turn of a
// request's growth) leaves what ks_blocktab_use one id at a time leaves: in
// a compact chunk's record, and where the record cannot hold it (ids
// arriving at another step than its live ones: the chunk goes aside) or the
// chunk is not compact. Pages given with a stride, as the growth lays them.
static void use_run_as_one_by_one(void **state)
{
    (void)state;
    struct ks_blocktab a, b;
    assert_int_equal(ks_blocktab_init(&a, 8 * KS_CHUNK), KS_OK);
    assert_int_equal(ks_blocktab_init(&b, 8 * KS_CHUNK), KS_OK);
    uint32_t pages[3 * KS_CHUNK];
    for (uint32_t i = 0; i < 3 * KS_CHUNK; i++)
        pages[i] = 1000 + 7 * i;
    // {compact chunk?, ids [0, cut) at step 5, ids [cut, n) at step `late`}
    static const uint32_t run[][4] = {{1, 10, 32, 5}, {1, 12, 20, 6}, {0, 4, 32, 5}, {1, 0, 32, 5}, {1, 31, 32, 9}};
    uint32_t seen_aside = 0, seen_compact = 0;
    for (uint32_t r = 0; r < sizeof run / sizeof run[0]; r++) {
        uint32_t fa = ks_blocktab_chunk_alloc(&a, 1, 0, 0, (int)run[r][0]);
        assert_int_equal(fa, ks_blocktab_chunk_alloc(&b, 1, 0, 0, (int)run[r][0]));
        uint32_t k = fa / KS_CHUNK, cut = run[r][1], n = run[r][2];
        for (uint32_t part = 0; part < 2; part++) {
            uint32_t from = part ? cut : 0, to = part ? n : cut, step = part ? run[r][3] : 5;
            if (to > from)
                ks_blocktab_use_l1_run(&a, fa + from, to - from, pages + 3 * from, 3, step);
            for (uint32_t id = fa + from; id < fa + to; id++)
                ks_blocktab_use(&b, id, pages[3 * (id - fa)], KS_L1, step);
            seen_compact += ks_blocktab_compact(&a, k) != NULL;
            seen_aside += ks_blocktab_aside(&a, k);
            same_chunk(&a, &b, k);
        }
        for (uint32_t id = fa; id < fa + n; id++) { // the chunk goes back, for the next round
            ks_blocktab_release(&a, id);
            ks_blocktab_release(&b, id);
        }
    }
    assert_true(seen_compact > 0 && seen_aside > 0); // both forms were written
    ks_blocktab_fini(&a);
    ks_blocktab_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entry_is_16_bytes),
        cmocka_unit_test(readme_bit_split),
        cmocka_unit_test(fields_extremes),
        cmocka_unit_test(fields_random),
        cmocka_unit_test(chunks),
        cmocka_unit_test(grows_across_dense),
        cmocka_unit_test(compact_same_as_written),
        cmocka_unit_test(ahead_line_names_next_chunks),
        cmocka_unit_test(release_run_as_one_by_one),
        cmocka_unit_test(use_run_as_one_by_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
