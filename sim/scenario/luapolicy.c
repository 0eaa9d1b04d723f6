// luapolicy.c - cache-manager policies written in Lua (see luapolicy.h).
#include "luapolicy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"
#include "status.h"

static const char *const fields[] = {"heat", "last", "now", "refs", "tier", "req", "pos", "group", "id", "entering"};
enum { N_BLOCK = 9 }; // fields every function gets; the prefetch rule also gets `entering`

int ks_luapolicy_init(struct ks_luapolicy *p, const char *file, const char *evict_path, const char *prefetch_path,
                      char *err, size_t len)
{
    return ks_luapolicy_init_seeded(p, file, evict_path, prefetch_path, KS_LUA_SEED, err, len);
}

int ks_luapolicy_init_seeded(struct ks_luapolicy *p, const char *file, const char *evict_path,
                             const char *prefetch_path, uint64_t seed, char *err, size_t len)
{
    memset(p, 0, sizeof *p);
    p->err = err;
    p->err_len = len;
    if (evict_path && !(p->evict = ks_luafn_load(file, ks_scenario_lua_dirs(), evict_path, seed, err, len)))
        return KS_EINVAL;
    if (prefetch_path &&
        !(p->prefetch = ks_luafn_load(file, ks_scenario_lua_dirs(), prefetch_path, seed, err, len))) {
        ks_luapolicy_fini(p);
        return KS_EINVAL;
    }
    return KS_OK;
}

void ks_luapolicy_fini(struct ks_luapolicy *p)
{
    ks_luafn_free(p->evict);
    ks_luafn_free(p->prefetch);
    p->evict = p->prefetch = NULL;
}

// Calls fn with the block's fields (and `entering` when n says so); 0 after a failure.
static double call(struct ks_luapolicy *p, struct ks_luafn *fn, const char *what, const struct ks_block_view *b,
                   int entering, size_t n)
{
    const double v[] = {b->heat, b->last, b->now, b->refs, b->tier, b->req, b->pos, b->group, b->id, entering};
    double out = 0;
    if (p->failed)
        return 0;
    if (ks_luafn_call(fn, fields, v, n, &out, p->err, p->err_len) != KS_OK) {
        p->failed = what;
        return 0;
    }
    if (!isfinite(out)) {
        snprintf(p->err, p->err_len, "returned %g; expected a finite number", out);
        p->failed = what;
        return 0;
    }
    return out;
}

double ks_luapolicy_evict(void *ud, const struct ks_block_view *b)
{
    struct ks_luapolicy *p = ud;
    return call(p, p->evict, "evict", b, 0, N_BLOCK);
}

uint32_t ks_luapolicy_prefetch(void *ud, const struct ks_block_view *b, int entering)
{
    struct ks_luapolicy *p = ud;
    double w = call(p, p->prefetch, "prefetch_window", b, entering, N_BLOCK + 1);
    return w <= 0 ? 0 : w >= 1024 ? 1024 : (uint32_t)lround(w);
}
