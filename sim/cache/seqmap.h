// seqmap.h - the map from a sequence's logical blocks to virtual block ids.
//
// A sequence is one request's blocks for one layer group. Its first n_prefix
// logical blocks may be shared with another request (a shared prefix): they
// are described by segments, runs of consecutive ids copied from the source
// sequence's map. The rest are the sequence's own, allocated a chunk of
// KS_CHUNK consecutive ids at a time, so own block j lives at
//     own[(j - n_prefix) / KS_CHUNK] + (j - n_prefix) % KS_CHUNK.
// Memory is a few bytes per chunk, not per block. Lookups are O(1) for own
// blocks and O(log segments) for shared ones.
//
// The map only names ids; reference counts live in the block table and are
// the caller's to keep (request.c).
#ifndef KS_SEQMAP_H
#define KS_SEQMAP_H

#include <stdint.h>

struct ks_seg {
    uint32_t pos; // first logical block
    uint32_t id;  // its virtual id; the run continues with id + 1, ...
    uint32_t len; // blocks
};

struct ks_seq {
    uint32_t n;        // logical blocks
    uint32_t n_prefix; // logical blocks shared from another sequence
    uint32_t n_seg, cap_seg;
    uint32_t n_own, cap_own;
    struct ks_seg *seg; // [n_seg] prefix segments, by position
    uint32_t *own;      // [n_own] first id of each own chunk
};

void ks_seq_init(struct ks_seq *s);
void ks_seq_fini(struct ks_seq *s);

// Shared prefix lookups (binary search over segments).
uint32_t ks_seq_lookup_prefix(const struct ks_seq *s, uint32_t j);

// The virtual id of logical block j (< s->n).
static inline uint32_t ks_seq_lookup(const struct ks_seq *s, uint32_t j)
{
    if (j >= s->n_prefix) {
        uint32_t k = j - s->n_prefix;
        return s->own[k / 32u] + k % 32u; // KS_CHUNK (blocktab.h), asserted in seqmap.c
    }
    return ks_seq_lookup_prefix(s, j);
}

// True when appending one block needs a new own chunk first.
static inline int ks_seq_needs_chunk(const struct ks_seq *s)
{
    return (s->n - s->n_prefix) % 32u == 0; // KS_CHUNK, kept literal to stay header-light
}

// Makes room for n own chunks in all, so that adding them cannot fail.
int ks_seq_reserve(struct ks_seq *s, uint32_t n);

// Records a new own chunk whose first id is `first`. KS_OK or KS_ENOMEM.
int ks_seq_add_chunk(struct ks_seq *s, uint32_t first);

// Makes the empty sequence dst share src's first n blocks.
// KS_OK, KS_EINVAL (dst not empty, n > src->n) or KS_ENOMEM.
int ks_seq_share(struct ks_seq *dst, const struct ks_seq *src, uint32_t n);

uint64_t ks_seq_bytes(const struct ks_seq *s);

#endif
