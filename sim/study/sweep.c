// sweep.c - a sweep file expanded into its points (see sweep.h).
//
// The sweep file format. A sweep file is Lua that returns a table:
//
//   return {
//     name = "l1_share",            -- optional; default: the file's name
//     base = "../default.lua",      -- the scenario, relative to this file's folder
//     set = {duration = "10s"},     -- optional: overrides applied to every point
//     axes = {                      -- optional: their Cartesian product, first axis outermost
//       {field = "cache.l1", values = {"50%", "75%", "100%"}},
//       {field = "cache.evict", values = {"heat", "lru"}},
//     },
//     points = function(add)        -- optional: more variants, after the product
//       for _, w in ipairs{0, 4} do add{["cache.prefetch_window"] = w} end
//     end,                          -- or a list of such tables (or a function returning one)
//     seeds = {1, 2, 3},            -- optional: every variant once per seed (an extra axis)
//   }
//
// A field is any path that `kvstrata run --set` accepts (cache.l1,
// platform.ssd.read_bw, workload.prompt_tokens.mu). A value is a number, a
// string ("85%", "10s", "7GBps") or a boolean, as --set reads it; a table
// value stands for its fields, so {kind = "poisson", rate = 2} for
// workload.arrival sets workload.arrival.kind and workload.arrival.rate.
// In `set` and in a variant, nested tables name paths too: {cache = {l1 =
// "50%"}} is {["cache.l1"] = "50%"}. A point's overrides are applied in this
// order: `set`, the axes in order, the variant's fields, the seed; a later
// one wins. With neither axes nor points the sweep has one variant (the base
// itself), repeated over the seeds.
//
// The file runs once, under lua_pcall (luatab.c), before anything else; the
// function in `points` runs then too, never later. Everything after that is
// plain C over the converted tree, which holds no Lua state.
#include "sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "luatab.h"
#include "scenario.h"
#include "status.h"

enum { MAX_POINTS = 1000000, PATH_LEN = 512 };

// A growable list of owned strings.
struct strv {
    char **v;
    size_t n, cap;
};

// What loading builds; errors stop at the first one.
struct build {
    const char *file;
    char *err;
    size_t len;
    int st; // KS_OK until the first error
    struct ks_sweep *s;
    uint32_t base_hash; // FNV-1a of the base scenario's bytes
};

static int bad(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct build *b, const char *fmt, ...)
{
    if (b->st != KS_OK)
        return b->st;
    int n = snprintf(b->err, b->len, "%s: ", b->file);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < b->len)
        vsnprintf(b->err + n, b->len - (size_t)n, fmt, ap);
    va_end(ap);
    return b->st = KS_EINVAL;
}

static int oom(struct build *b)
{
    if (b->st == KS_OK)
        snprintf(b->err, b->len, "%s: out of memory", b->file);
    return b->st = KS_ENOMEM;
}

static char *copy_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static int strv_push(struct strv *v, const char *s)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 8;
        char **p = realloc(v->v, cap * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        v->v = p;
        v->cap = cap;
    }
    if (!(v->v[v->n] = copy_str(s)))
        return KS_ENOMEM;
    v->n++;
    return KS_OK;
}

static void strv_fini(struct strv *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->v[i]);
    free(v->v);
    *v = (struct strv){0};
}

// ---- values --------------------------------------------------------------

void ks_sweep_number_text(double v, char *buf, size_t len)
{
    for (int digits = 15; digits <= 17; digits++) { // the shortest text that reads back exactly
        snprintf(buf, len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

// The text of a scalar as --set reads it back; 0, or -1 for a value that
// is no scalar (or a number --set cannot read).
static int scalar_text(const struct ks_luatab *n, char *buf, size_t len)
{
    switch (n->type) {
    case KS_LUATAB_BOOL: snprintf(buf, len, "%s", n->b ? "true" : "false"); return 0;
    case KS_LUATAB_INT: snprintf(buf, len, "%lld", (long long)n->i); return 0;
    case KS_LUATAB_REAL:
        if (!(n->d == n->d) || n->d > 1e308 || n->d < -1e308)
            return -1;
        ks_sweep_number_text(n->d, buf, len);
        return 0;
    case KS_LUATAB_STRING: snprintf(buf, len, "%s", n->s); return 0;
    default: return -1;
    }
}

// The children of a list in index order ([1], [2]...), in a new array; n
// gets the count. Returns -1 (and *items NULL) when t is not a list.
static int list_items(const struct ks_luatab *t, const struct ks_luatab ***items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (!t || t->type != KS_LUATAB_TABLE)
        return -1;
    size_t count = 0;
    for (const struct ks_luatab *c = t->child; c; c = c->next)
        count++;
    if (count == 0)
        return 0;
    const struct ks_luatab **v = calloc(count, sizeof *v);
    if (!v)
        return -2;
    for (const struct ks_luatab *c = t->child; c; c = c->next) {
        char *end;
        long long k = c->key[0] == '[' ? strtoll(c->key + 1, &end, 10) : 0;
        if (k < 1 || (size_t)k > count || c->key[0] != '[' || *end != ']' || v[k - 1]) {
            free(v);
            return -1;
        }
        v[k - 1] = c;
    }
    *items = v;
    *n = count;
    return 0;
}

// Appends "path=value" for n (a scalar, or a table whose fields extend the
// path) to sets. what names the value in errors.
static void flatten(struct build *b, const struct ks_luatab *n, const char *path, const char *what,
                    struct strv *sets)
{
    if (b->st != KS_OK)
        return;
    if (n->type == KS_LUATAB_TABLE) {
        if (!n->child) {
            bad(b, "%s: %s is an empty table", what, path[0] ? path : "the value");
            return;
        }
        for (const struct ks_luatab *c = n->child; c && b->st == KS_OK; c = c->next) {
            if (c->key[0] == '[') {
                bad(b, "%s: %s%s%s is a list entry; expected field = value", what, path, path[0] ? "." : "",
                    c->key);
                return;
            }
            char sub[PATH_LEN];
            if (snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", c->key) >= (int)sizeof sub) {
                bad(b, "%s: path too long", what);
                return;
            }
            flatten(b, c, sub, what, sets);
        }
        return;
    }
    char text[PATH_LEN + 1024];
    size_t k = (size_t)snprintf(text, sizeof text, "%s=", path);
    if (!path[0]) {
        bad(b, "%s: expected a table of field = value, not a %s", what, ks_luatab_type_name(n));
        return;
    }
    if (scalar_text(n, text + k, sizeof text - k) != 0) {
        bad(b, "%s: %s: a %s is no value --set can take", what, path, ks_luatab_type_name(n));
        return;
    }
    if (strv_push(sets, text) != KS_OK)
        oom(b);
}

// The text shown for a value in the summary: the scalar itself, or the
// fields of a table as "k=v,k=v" (the part after the axis field).
static char *display(struct build *b, const struct ks_luatab *n, const char *field, const struct strv *sets,
                     size_t from)
{
    char buf[4096];
    if (n->type != KS_LUATAB_TABLE) {
        scalar_text(n, buf, sizeof buf);
    } else {
        size_t k = 0, skip = strlen(field) + 1;
        buf[0] = '\0';
        for (size_t i = from; i < sets->n && k < sizeof buf; i++)
            k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? "," : "", sets->v[i] + skip);
    }
    char *d = copy_str(buf);
    if (!d)
        oom(b);
    return d;
}

// ---- the sweep -------------------------------------------------------------

// One value of one axis, or one variant: its overrides and its column values.
struct choice {
    struct strv sets;
    struct strv cols, vals; // parallel: column name, value text
    int *num;               // [cols.n]
};

static void choice_fini(struct choice *c)
{
    strv_fini(&c->sets);
    strv_fini(&c->cols);
    strv_fini(&c->vals);
    free(c->num);
}

// Adds a column value to c (text owned by c afterwards).
static void choice_col(struct build *b, struct choice *c, const char *col, char *text, int is_num)
{
    if (!text || b->st != KS_OK) {
        free(text);
        return;
    }
    int *num = realloc(c->num, (c->cols.n + 1) * sizeof *num);
    if (!num || strv_push(&c->cols, col) != KS_OK || strv_push(&c->vals, text) != KS_OK) {
        free(num == c->num ? NULL : num);
        free(text);
        oom(b);
        return;
    }
    c->num = num;
    num[c->cols.n - 1] = is_num;
    free(text);
}

static size_t column_of(struct build *b, const char *col)
{
    struct ks_sweep *s = b->s;
    for (size_t i = 0; i < s->n_columns; i++)
        if (strcmp(s->columns[i], col) == 0)
            return i;
    char **v = realloc(s->columns, (s->n_columns + 1) * sizeof *v);
    if (!v || !(v[s->n_columns] = copy_str(col))) {
        if (v)
            s->columns = v;
        oom(b);
        return 0;
    }
    s->columns = v;
    return s->n_columns++;
}

static uint32_t fnv1a(uint32_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s;; p++) {
        h = (h ^ *p) * 16777619u;
        if (!*p)
            return h;
    }
}

static uint32_t fnv1a_bytes(uint32_t h, const void *v, size_t n)
{
    for (const unsigned char *p = v; n--; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

// The hash of a file's bytes (the base scenario), continuing h; -1 when it
// cannot be read.
static int hash_file(const char *path, uint32_t *h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char buf[8192];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;)
        *h = fnv1a_bytes(*h, buf, n);
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : 0;
}

// Adds a point made of the fixed sets and the given choices (NULL entries
// skipped) to the sweep.
static void add_point(struct build *b, const struct strv *fixed, struct choice **parts, size_t n_parts)
{
    struct ks_sweep *s = b->s;
    if (b->st != KS_OK)
        return;
    struct ks_sweep_point *pts = realloc(s->points, (s->n_points + 1) * sizeof *pts);
    if (!pts) {
        oom(b);
        return;
    }
    s->points = pts;
    struct ks_sweep_point *p = &pts[s->n_points++];
    memset(p, 0, sizeof *p);
    p->index = s->n_points - 1;
    size_t n = fixed->n;
    for (size_t i = 0; i < n_parts; i++)
        n += parts[i] ? parts[i]->sets.n : 0;
    if (n && !(p->sets = calloc(n, sizeof *p->sets))) {
        oom(b);
        return;
    }
    uint32_t h = fnv1a(b->base_hash, s->base_as_written);
    for (size_t i = 0; i < fixed->n; i++)
        if ((p->sets[p->n_sets++] = copy_str(fixed->v[i])))
            h = fnv1a(h, fixed->v[i]);
    for (size_t i = 0; i < n_parts; i++)
        for (size_t j = 0; parts[i] && j < parts[i]->sets.n; j++)
            if ((p->sets[p->n_sets++] = copy_str(parts[i]->sets.v[j])))
                h = fnv1a(h, parts[i]->sets.v[j]);
    for (size_t i = 0; i < p->n_sets; i++)
        if (!p->sets[i])
            oom(b);
    snprintf(p->id, sizeof p->id, "p%04zu-%08x", p->index, (unsigned)h);
}

// Gives every point its column values (after all columns are known).
static void fill_values(struct build *b, struct choice ***point_parts, const size_t *n_parts)
{
    struct ks_sweep *s = b->s;
    for (size_t i = 0; i < s->n_points && b->st == KS_OK; i++) {
        struct ks_sweep_point *p = &s->points[i];
        p->values = calloc(s->n_columns ? s->n_columns : 1, sizeof *p->values);
        p->is_number = calloc(s->n_columns ? s->n_columns : 1, sizeof *p->is_number);
        if (!p->values || !p->is_number) {
            oom(b);
            return;
        }
        for (size_t k = 0; k < n_parts[i]; k++) {
            const struct choice *c = point_parts[i][k];
            for (size_t j = 0; c && j < c->cols.n; j++) {
                size_t col = column_of(b, c->cols.v[j]);
                KS_ASSERT(col < s->n_columns && b->st == KS_OK); // every column is known by now
                free(p->values[col]);
                if (!(p->values[col] = copy_str(c->vals.v[j])))
                    oom(b);
                p->is_number[col] = c->num[j];
            }
        }
    }
}

struct axis {
    char *field;
    struct choice *values;
    size_t n;
};

// The list t's items (*items, *n; free *items) and a zeroed array of *n
// entries of `size` bytes; NULL after reporting `expected` or running out of
// memory.
static void *read_list(struct build *b, const struct ks_luatab *t, size_t size, const char *expected,
                       const struct ks_luatab ***items, size_t *n)
{
    int rc = list_items(t, items, n);
    if (rc == -2) {
        oom(b);
        return NULL;
    }
    if (rc != 0) {
        bad(b, "%s", expected);
        return NULL;
    }
    void *v = calloc(*n ? *n : 1, size);
    if (!v) {
        free(*items);
        *items = NULL;
        oom(b);
    }
    return v;
}

static void read_axes(struct build *b, const struct ks_luatab *t, struct axis **out, size_t *n_out)
{
    const struct ks_luatab **items;
    size_t n;
    *n_out = 0;
    struct axis *ax = *out = read_list(b, t, sizeof *ax, "axes: expected a list of {field = \"path\", values = {...}}",
                                       &items, &n);
    if (!ax)
        return;
    *n_out = n;
    for (size_t i = 0; i < n && b->st == KS_OK; i++) {
        const struct ks_luatab *a = items[i], *f = ks_luatab_get(a, "field"), *v = ks_luatab_get(a, "values");
        for (const struct ks_luatab *c = a->type == KS_LUATAB_TABLE ? a->child : NULL; c; c = c->next)
            if (strcmp(c->key, "field") != 0 && strcmp(c->key, "values") != 0)
                bad(b, "axes[%zu]: unknown field '%s' (an axis has field and values)", i + 1, c->key);
        if (!f || f->type != KS_LUATAB_STRING || !f->s[0]) {
            bad(b, "axes[%zu].field: expected the path of a scenario field (e.g. \"cache.l1\")", i + 1);
            break;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(ax[j].field, f->s) == 0)
                bad(b, "axes[%zu].field: %s is already axes[%zu]", i + 1, f->s, j + 1);
        if (!(ax[i].field = copy_str(f->s))) {
            oom(b);
            break;
        }
        const struct ks_luatab **vals;
        size_t nv;
        int rc = list_items(v, &vals, &nv);
        if (rc == -2) {
            oom(b);
            break;
        }
        if (rc != 0 || nv == 0) {
            bad(b, "axes[%zu].values (%s): expected a non-empty list of values", i + 1, f->s);
            free(vals);
            break;
        }
        if (!(ax[i].values = calloc(nv, sizeof *ax[i].values))) {
            free(vals);
            oom(b);
            break;
        }
        ax[i].n = nv;
        char what[64];
        snprintf(what, sizeof what, "axes[%zu] (%s)", i + 1, f->s);
        for (size_t j = 0; j < nv && b->st == KS_OK; j++) {
            struct choice *c = &ax[i].values[j];
            flatten(b, vals[j], f->s, what, &c->sets);
            char *text = b->st == KS_OK ? display(b, vals[j], f->s, &c->sets, 0) : NULL;
            choice_col(b, c, f->s, text, vals[j]->type == KS_LUATAB_INT || vals[j]->type == KS_LUATAB_REAL);
        }
        free(vals);
    }
    free(items);
}

static void read_variants(struct build *b, const struct ks_luatab *t, struct choice **out, size_t *n_out)
{
    const struct ks_luatab **items;
    size_t n;
    *n_out = 0;
    struct choice *v = *out = read_list(
        b, t, sizeof *v, "points: expected a list of tables of field = value, or a function that adds them", &items, &n);
    if (!v)
        return;
    *n_out = n;
    for (size_t i = 0; i < n && b->st == KS_OK; i++) {
        char what[64];
        snprintf(what, sizeof what, "points[%zu]", i + 1);
        if (items[i]->type != KS_LUATAB_TABLE || !items[i]->child) {
            bad(b, "%s: expected a non-empty table of field = value, not a %s", what,
                ks_luatab_type_name(items[i]));
            break;
        }
        flatten(b, items[i], "", what, &v[i].sets);
        for (size_t j = 0; j < v[i].sets.n && b->st == KS_OK; j++) {
            char col[PATH_LEN];
            const char *eq = strchr(v[i].sets.v[j], '=');
            snprintf(col, sizeof col, "%.*s", (int)(eq - v[i].sets.v[j]), v[i].sets.v[j]);
            const struct ks_luatab *node = ks_luatab_find(items[i], col);
            if (!node) // written as ["a.b"] = v: one key with dots
                node = ks_luatab_get(items[i], col);
            int num = node && (node->type == KS_LUATAB_INT || node->type == KS_LUATAB_REAL);
            choice_col(b, &v[i], col, copy_str(eq + 1), num);
        }
    }
    free(items);
}

static char *folder_join(const char *file, const char *rel)
{
    const char *slash = strrchr(file, '/');
    size_t k = slash && rel[0] != '/' ? (size_t)(slash - file) + 1 : 0;
    char *p = malloc(k + strlen(rel) + 1);
    if (p) {
        memcpy(p, file, k);
        strcpy(p + k, rel);
    }
    return p;
}

static char *stem(const char *file)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".lua") == 0)
        n -= 4;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, base, n);
        s[n] = '\0';
    }
    return s;
}

// A seed from the sweep file: a Lua integer >= 0, or a string of digits up
// to 2^64 - 1 (Lua integers stop at 2^63 - 1). 0, or -1 when it is neither.
static int seed_of(const struct ks_luatab *n, uint64_t *out)
{
    if (n->type == KS_LUATAB_INT && n->i >= 0) {
        *out = (uint64_t)n->i;
        return 0;
    }
    if (n->type != KS_LUATAB_STRING || !n->s[0] || n->s[strspn(n->s, "0123456789")] || strlen(n->s) > 20)
        return -1;
    errno = 0;
    unsigned long long v = strtoull(n->s, NULL, 10);
    if (errno != 0)
        return -1;
    *out = v;
    return 0;
}

// The sweep's `seeds` list (sd, may be NULL): a choice per seed, none on a
// field that an axis sweeps already.
static void read_seeds(struct build *b, const struct ks_luatab *sd, const struct axis *axes, size_t n_axes,
                       struct choice **out, size_t *n_out)
{
    struct choice *seeds = NULL;
    size_t n_seeds = 0;
    const struct ks_luatab **sv = NULL;
    if (sd && b->st == KS_OK) {
        int rc = list_items(sd, &sv, &n_seeds);
        if (rc == -2)
            oom(b);
        else if (rc != 0 || n_seeds == 0)
            bad(b, "seeds: expected a non-empty list of whole numbers");
        for (size_t i = 0; i < n_axes; i++)
            if (axes[i].field && strcmp(axes[i].field, "seed") == 0)
                bad(b, "seeds: seed is also axes[%zu]", i + 1);
        if (b->st == KS_OK && !(seeds = calloc(n_seeds, sizeof *seeds)))
            oom(b);
        for (size_t i = 0; i < n_seeds && b->st == KS_OK; i++) {
            uint64_t seed;
            if (seed_of(sv[i], &seed) != 0) {
                bad(b, "seeds[%zu]: expected a whole number from 0 to 2^64 - 1 (a string above 2^63 - 1), not %s%s",
                    i + 1, sv[i]->type == KS_LUATAB_STRING ? "" : "a ",
                    sv[i]->type == KS_LUATAB_STRING ? sv[i]->s : ks_luatab_type_name(sv[i]));
                break;
            }
            char num[32], set[40];
            snprintf(num, sizeof num, "%" PRIu64, seed);
            snprintf(set, sizeof set, "seed=%s", num);
            if (strv_push(&seeds[i].sets, set) != KS_OK) {
                oom(b);
                break;
            }
            // exact as a number up to 2^53; a text column above, so that no seed is rounded
            choice_col(b, &seeds[i], "seed", copy_str(num), seed <= (UINT64_C(1) << 53));
        }
        free(sv);
    }
    *out = seeds;
    *n_out = n_seeds;
}

// The points: the product of the axes, then the variants, each times the
// seeds; every column before any point's values.
static void build_points(struct build *b, const struct strv *fixed, struct axis *axes, size_t n_axes,
                         struct choice *vars, size_t n_vars, struct choice *seeds, size_t n_seeds)
{
    struct ks_sweep *s = b->s;
    size_t n_combo = n_axes ? 1 : 0;
    for (size_t i = 0; i < n_axes; i++)
        n_combo = n_combo > MAX_POINTS ? n_combo : n_combo * axes[i].n;
    size_t n_variant = n_combo + n_vars + (n_combo + n_vars == 0);
    size_t total = n_variant * (n_seeds ? n_seeds : 1);
    if (b->st == KS_OK && (n_combo > MAX_POINTS || total > MAX_POINTS))
        bad(b, "the sweep has more than %d points", MAX_POINTS);
    size_t parts = n_axes + 2; // the axes, a variant, a seed
    struct choice ***point_parts = NULL;
    size_t *n_parts = NULL;
    if (b->st == KS_OK && (!(point_parts = calloc(total, sizeof *point_parts)) ||
                           !(n_parts = calloc(total, sizeof *n_parts))))
        oom(b);
    for (size_t v = 0; v < n_variant && b->st == KS_OK; v++) {
        for (size_t k = 0; k < (n_seeds ? n_seeds : 1) && b->st == KS_OK; k++) {
            size_t idx = s->n_points;
            struct choice **pp = calloc(parts, sizeof *pp);
            if (!pp) {
                oom(b);
                break;
            }
            point_parts[idx] = pp;
            n_parts[idx] = parts;
            if (v < n_combo) {
                size_t r = v;
                for (size_t i = n_axes; i-- > 0;) { // the last axis varies fastest
                    pp[i] = &axes[i].values[r % axes[i].n];
                    r /= axes[i].n;
                }
            } else if (v - n_combo < n_vars) {
                pp[n_axes] = &vars[v - n_combo];
            }
            pp[n_axes + 1] = n_seeds ? &seeds[k] : NULL;
            add_point(b, fixed, pp, parts);
        }
    }
    // every column before any point's values: the axes in order, the variants' fields, the seed
    for (size_t i = 0; i < n_axes && b->st == KS_OK; i++)
        column_of(b, axes[i].field);
    for (size_t i = 0; i < n_vars && b->st == KS_OK; i++)
        for (size_t j = 0; j < vars[i].cols.n && b->st == KS_OK; j++)
            column_of(b, vars[i].cols.v[j]);
    if (n_seeds && b->st == KS_OK)
        column_of(b, "seed");
    if (b->st == KS_OK)
        fill_values(b, point_parts, n_parts);
    for (size_t i = 0; i < total && point_parts; i++)
        free(point_parts[i]);
    free(point_parts);
    free(n_parts);
}

static void expand(struct build *b, const struct ks_luatab *root)
{
    static const char *const known[] = {"name", "base", "set", "axes", "points", "seeds", NULL};
    if (ks_scenario_file_kind(root) == KS_FILE_SCENARIO) {
        bad(b, "is a scenario, not a sweep: a sweep names its scenario, {base = \"SCENARIO.lua\", axes = {...}} "
               "(kvstrata sweep --help; scenarios/sweeps/)");
        return;
    }
    for (const struct ks_luatab *c = root->child; c; c = c->next) {
        int ok = 0;
        for (int i = 0; known[i]; i++)
            ok |= strcmp(c->key, known[i]) == 0;
        if (!ok)
            bad(b, "unknown field '%s' (a sweep has name, base, set, axes, points, seeds)", c->key);
    }
    struct ks_sweep *s = b->s;
    const struct ks_luatab *name = ks_luatab_get(root, "name"), *base = ks_luatab_get(root, "base");
    if (name && (name->type != KS_LUATAB_STRING || !name->s[0] || strchr(name->s, '/')))
        bad(b, "name: expected a non-empty string without '/'");
    if (!base || base->type != KS_LUATAB_STRING || !base->s[0]) {
        bad(b, "base: expected the path of a scenario file (relative to the sweep file's folder)");
        return;
    }
    if (b->st != KS_OK)
        return;
    s->name = name ? copy_str(name->s) : stem(b->file);
    s->base_as_written = copy_str(base->s);
    s->base = folder_join(b->file, base->s);
    if (!s->name || !s->base || !s->base_as_written) {
        oom(b);
        return;
    }
    b->base_hash = 2166136261u;
    if (access(s->base, R_OK) != 0 || hash_file(s->base, &b->base_hash) != 0) {
        bad(b, "base: cannot read %s", s->base);
        return;
    }
    struct strv fixed = {0};
    const struct ks_luatab *set = ks_luatab_get(root, "set");
    if (set)
        flatten(b, set, "", "set", &fixed);
    struct axis *axes = NULL;
    size_t n_axes = 0;
    const struct ks_luatab *ax = ks_luatab_get(root, "axes");
    if (ax)
        read_axes(b, ax, &axes, &n_axes);
    struct choice *vars = NULL;
    size_t n_vars = 0;
    const struct ks_luatab *pts = ks_luatab_get(root, "points");
    if (pts)
        read_variants(b, pts, &vars, &n_vars);
    struct choice *seeds = NULL;
    size_t n_seeds = 0;
    read_seeds(b, ks_luatab_get(root, "seeds"), axes, n_axes, &seeds, &n_seeds);
    build_points(b, &fixed, axes, n_axes, vars, n_vars, seeds, n_seeds);
    for (size_t i = 0; i < n_axes; i++) {
        for (size_t j = 0; j < axes[i].n; j++)
            choice_fini(&axes[i].values[j]);
        free(axes[i].values);
        free(axes[i].field);
    }
    free(axes);
    for (size_t i = 0; i < n_vars; i++)
        choice_fini(&vars[i]);
    free(vars);
    for (size_t i = 0; seeds && i < n_seeds; i++)
        choice_fini(&seeds[i]);
    free(seeds);
    strv_fini(&fixed);
}

int ks_sweep_load(const char *file, struct ks_sweep **out, char *err, size_t len)
{
    static const char *const calls[] = {"points", NULL};
    *out = NULL;
    struct ks_luatab *root = NULL;
    int st = ks_luatab_load_calling(file, ks_scenario_lua_dirs(), calls, &root, err, len);
    if (st != KS_OK)
        return st;
    struct build b = {.file = file, .err = err, .len = len, .st = KS_OK};
    if (!(b.s = calloc(1, sizeof *b.s)) || !(b.s->file = copy_str(file)))
        oom(&b);
    if (b.st == KS_OK)
        expand(&b, root);
    ks_luatab_free(root);
    if (b.st != KS_OK) {
        ks_sweep_free(b.s);
        return b.st;
    }
    *out = b.s;
    return KS_OK;
}

void ks_sweep_free(struct ks_sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_points; i++) {
        struct ks_sweep_point *p = &s->points[i];
        for (size_t j = 0; j < p->n_sets; j++)
            free(p->sets[j]);
        free(p->sets);
        for (size_t j = 0; p->values && j < s->n_columns; j++)
            free(p->values[j]);
        free(p->values);
        free(p->is_number);
    }
    free(s->points);
    for (size_t i = 0; i < s->n_columns; i++)
        free(s->columns[i]);
    free(s->columns);
    free(s->file);
    free(s->name);
    free(s->base);
    free(s->base_as_written);
    free(s);
}

// Appends text to err at *k, indenting every line by `indent`.
static void append(char *err, size_t len, size_t *k, const char *indent, const char *text)
{
    for (const char *line = text; *line && *k + 1 < len;) {
        size_t n = strcspn(line, "\n");
        int w = snprintf(err + *k, len - *k, "%s%.*s\n", indent, (int)n, line);
        if (w < 0 || (size_t)w >= len - *k) {
            *k = len - 1;
            return;
        }
        *k += (size_t)w;
        line += n + (line[n] == '\n');
    }
}

static int hash_item(const struct ks_scenario_item *it, void *ud)
{
    uint32_t *h = ud;
    *h = fnv1a(fnv1a(*h, it->path), it->text);
    if (it->is_number)
        *h = fnv1a_bytes(*h, &it->number, sizeof it->number);
    return 0;
}

// The point's id from what it resolves to: its settings' hash (the id so
// far) continued over every field's value and the profile's measured tables,
// so that a change of the profile, of a helper the base requires, or of
// anything else the point resolves to gives it a new id.
static void resolved_id(struct ks_sweep_point *p, const struct ks_scenario *sc)
{
    uint32_t h = fnv1a(2166136261u, p->id);
    ks_scenario_foreach(sc, hash_item, &h);
    const struct ks_kernel_time *kt = &sc->platform.kernel_time;
    const struct ks_host_wake *w = &sc->platform.host_wake;
    h = fnv1a_bytes(h, &kt->batch, sizeof kt->batch);
    h = fnv1a_bytes(h, kt->blocks, kt->n * sizeof *kt->blocks);
    h = fnv1a_bytes(h, kt->seconds, kt->n * sizeof *kt->seconds);
    h = fnv1a_bytes(h, w->idle, w->n * sizeof *w->idle);
    h = fnv1a_bytes(h, w->seconds, w->n * sizeof *w->seconds);
    snprintf(p->id, sizeof p->id, "p%04zu-%08x", p->index, (unsigned)h);
}

int ks_sweep_check(struct ks_sweep *s, size_t max_points, char *err, size_t len)
{
    enum { ONE = 1 << 14 };
    char *msg = malloc(ONE);
    if (!msg) {
        snprintf(err, len, "%s: out of memory", s->file);
        return KS_ENOMEM;
    }
    size_t k = 0, n_bad = 0;
    int st = KS_OK;
    err[0] = '\0';
    for (size_t i = 0; i < s->n_points; i++) {
        struct ks_sweep_point *p = &s->points[i];
        struct ks_scenario_params params = {.sets = (const char *const *)p->sets, .n_sets = p->n_sets};
        struct ks_scenario *sc = NULL;
        int rc = ks_scenario_load(s->base, &params, &sc, msg, ONE);
        if (rc == KS_OK)
            resolved_id(p, sc);
        ks_scenario_free(sc);
        if (rc == KS_ENOMEM) {
            snprintf(err, len, "%s: out of memory", s->file);
            st = KS_ENOMEM;
            break;
        }
        if (rc == KS_OK)
            continue;
        st = KS_EINVAL;
        if (n_bad++ >= max_points)
            continue;
        char head[1024];
        size_t h = (size_t)snprintf(head, sizeof head, "%s: point %s (", s->file, p->id);
        for (size_t j = 0; j < p->n_sets && h < sizeof head; j++)
            h += (size_t)snprintf(head + h, sizeof head - h, "%s%s", j ? " " : "", p->sets[j]);
        if (h < sizeof head)
            snprintf(head + h, sizeof head - h, ") is not a valid scenario (base %s):", s->base);
        append(err, len, &k, "", head);
        append(err, len, &k, "  ", msg);
    }
    if (st == KS_EINVAL && n_bad > max_points && k + 1 < len)
        snprintf(err + k, len - k, "%s: and %zu more bad points\n", s->file, n_bad - max_points);
    else if (k > 0 && err[k - 1] == '\n')
        err[k - 1] = '\0';
    free(msg);
    return st;
}
