// luapolicy.h - cache-manager policies written in Lua: a scenario's eviction
// score and prefetch rule, as the callbacks cache.h takes.
//
// Each function receives one table with the block's fields (heat, last, now,
// refs, tier, req, pos, group, id; the prefetch rule also `entering`), the
// same table every call (luatab.h: ks_luafn_call). The cache manager calls
// them with no way to fail, so a Lua error, or an answer that is not a
// finite number, sets `failed` and writes its reason into the caller's
// buffer given to init; every later answer is 0, and the caller stops at its
// next check of `failed`.
#ifndef KS_LUAPOLICY_H
#define KS_LUAPOLICY_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "luatab.h"

struct ks_luapolicy {
    struct ks_luafn *evict;    // NULL: the built-in eviction policy
    struct ks_luafn *prefetch; // NULL: the fixed prefetch window
    const char *failed;        // NULL, or the path of the function that failed
    char *err;                 // the caller's (borrowed): why `failed`
    size_t err_len;
};

// Loads the functions at the dotted paths evict_path and prefetch_path (NULL:
// none) of the table `file` returns. KS_OK, or a status with the reason in
// err; err (borrowed: it outlives p) also takes the reason of a later failure.
// Each call runs in luatab.h's sandbox, with KS_LUA_CALL_BUDGET instructions;
// math.random is seeded with `seed` (the run's seed), so a policy that draws
// gives the same run twice. ks_luapolicy_init seeds with KS_LUA_SEED.
int ks_luapolicy_init_seeded(struct ks_luapolicy *p, const char *file, const char *evict_path,
                             const char *prefetch_path, uint64_t seed, char *err, size_t len);
int ks_luapolicy_init(struct ks_luapolicy *p, const char *file, const char *evict_path, const char *prefetch_path,
                      char *err, size_t len);
void ks_luapolicy_fini(struct ks_luapolicy *p);

// ks_evict_score_fn and ks_prefetch_fn over a struct ks_luapolicy (ud). The
// prefetch answer is rounded and clamped to 0 .. 1024.
double ks_luapolicy_evict(void *ud, const struct ks_block_view *b);
uint32_t ks_luapolicy_prefetch(void *ud, const struct ks_block_view *b, int entering);

#endif
