// seqmap.c - logical-to-virtual block maps with shared prefixes (see seqmap.h).
#include "seqmap.h"

#include <stdlib.h>
#include <string.h>

#include "blocktab.h"
#include "status.h"

_Static_assert(KS_CHUNK == 32, "ks_seq_needs_chunk and ks_seq_lookup assume KS_CHUNK == 32");

void ks_seq_init(struct ks_seq *s)
{
    memset(s, 0, sizeof *s);
}

void ks_seq_fini(struct ks_seq *s)
{
    free(s->seg);
    free(s->own);
    memset(s, 0, sizeof *s);
}

uint32_t ks_seq_lookup_prefix(const struct ks_seq *s, uint32_t j)
{
    KS_ASSERT(j < s->n_prefix);
    uint32_t lo = 0, hi = s->n_seg; // last segment with pos <= j
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->seg[mid].pos <= j)
            lo = mid;
        else
            hi = mid;
    }
    const struct ks_seg *g = &s->seg[lo];
    KS_ASSERT(j >= g->pos && j < g->pos + g->len);
    return g->id + (j - g->pos);
}

int ks_seq_reserve(struct ks_seq *s, uint32_t n)
{
    if (n <= s->cap_own)
        return KS_OK;
    uint32_t cap = s->cap_own ? s->cap_own : 4;
    while (cap < n)
        cap *= 2;
    uint32_t *own = realloc(s->own, (size_t)cap * sizeof *own);
    if (!own)
        return KS_ENOMEM;
    s->own = own;
    s->cap_own = cap;
    return KS_OK;
}

int ks_seq_add_chunk(struct ks_seq *s, uint32_t first)
{
    if (s->n_own == s->cap_own && ks_seq_reserve(s, s->n_own + 1) != KS_OK)
        return KS_ENOMEM;
    s->own[s->n_own++] = first;
    return KS_OK;
}

static int push_seg(struct ks_seq *s, uint32_t pos, uint32_t id, uint32_t len)
{
    if (s->n_seg > 0) {
        struct ks_seg *g = &s->seg[s->n_seg - 1];
        if (g->pos + g->len == pos && g->id + g->len == id) {
            g->len += len;
            return KS_OK;
        }
    }
    if (s->n_seg == s->cap_seg) {
        uint32_t cap = s->cap_seg ? 2 * s->cap_seg : 4;
        struct ks_seg *seg = realloc(s->seg, (size_t)cap * sizeof *seg);
        if (!seg)
            return KS_ENOMEM;
        s->seg = seg;
        s->cap_seg = cap;
    }
    s->seg[s->n_seg++] = (struct ks_seg){.pos = pos, .id = id, .len = len};
    return KS_OK;
}

int ks_seq_share(struct ks_seq *dst, const struct ks_seq *src, uint32_t n)
{
    if (dst->n != 0 || n > src->n)
        return KS_EINVAL;
    for (uint32_t i = 0; i < src->n_seg && src->seg[i].pos < n; i++) {
        const struct ks_seg *g = &src->seg[i];
        uint32_t len = g->pos + g->len <= n ? g->len : n - g->pos;
        if (push_seg(dst, g->pos, g->id, len) != KS_OK)
            return KS_ENOMEM;
    }
    for (uint32_t k = 0; k < src->n_own; k++) {
        uint32_t pos = src->n_prefix + k * KS_CHUNK;
        if (pos >= n)
            break;
        uint32_t len = n - pos < KS_CHUNK ? n - pos : KS_CHUNK;
        if (push_seg(dst, pos, src->own[k], len) != KS_OK)
            return KS_ENOMEM;
    }
    dst->n = dst->n_prefix = n;
    return KS_OK;
}

uint64_t ks_seq_bytes(const struct ks_seq *s)
{
    return sizeof *s + (uint64_t)s->cap_seg * sizeof *s->seg + (uint64_t)s->cap_own * sizeof *s->own;
}
