// luatab.c - the Lua binding: run a file in a sandbox, copy its table into C.
//
// Everything that can raise a Lua error (opening the libraries, running the
// chunk, calling its functions, walking the table) runs inside lua_pcall; the
// C functions run that way record their results in a struct owned by the
// caller, and every node is linked into the tree before it is filled, so a
// memory error half-way leaks nothing. Every state is a sandbox (struct ks_sandbox):
// its allocator counts the bytes it holds against KS_LUA_MEM_CAP, a count
// hook charges each call's instructions against its budget, and only the
// safe libraries are open (luatab.h).
#include "luatab.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "status.h"

static char *dup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

struct ks_luatab *ks_luatab_new(const char *key, enum ks_luatab_type type, const char *file)
{
    struct ks_luatab *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->type = type;
    t->key = dup(key);
    t->file = dup(file ? file : "--set");
    if ((key && !t->key) || !t->file) {
        ks_luatab_free(t);
        return NULL;
    }
    return t;
}

void ks_luatab_free(struct ks_luatab *t)
{
    while (t) {
        struct ks_luatab *next = t->next;
        ks_luatab_free(t->child);
        free(t->key);
        free(t->s);
        free(t->file);
        free(t->source);
        free(t->kind);
        for (size_t i = 0; i < t->n_included; i++)
            free(t->included[i]);
        free(t->included);
        free(t);
        t = next;
    }
}

struct ks_luatab *ks_luatab_get(const struct ks_luatab *t, const char *key)
{
    if (!t || t->type != KS_LUATAB_TABLE)
        return NULL;
    for (struct ks_luatab *c = t->child; c; c = c->next)
        if (strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

struct ks_luatab *ks_luatab_find(const struct ks_luatab *t, const char *path)
{
    char key[128];
    const struct ks_luatab *n = t;
    while (n && *path) {
        size_t k = strcspn(path, ".");
        if (k >= sizeof key)
            return NULL;
        memcpy(key, path, k);
        key[k] = '\0';
        n = ks_luatab_get(n, key);
        path += k + (path[k] == '.');
    }
    return (struct ks_luatab *)n;
}

const char *ks_luatab_type_name(const struct ks_luatab *t)
{
    switch (t->type) {
    case KS_LUATAB_BOOL: return "boolean";
    case KS_LUATAB_INT:
    case KS_LUATAB_REAL: return "number";
    case KS_LUATAB_STRING: return "string";
    case KS_LUATAB_TABLE: return "table";
    case KS_LUATAB_OTHER: return t->s ? t->s : "value";
    }
    return "value";
}

// ---- lines: where `name =` is written ---------------------------------------

struct linemap {
    char **path;
    int *line;
    size_t n, cap;
    int oom;
    int last_return; // the line of the text's last `return`: the chunk's own (Lua ends a block with it)
};

static void linemap_add(struct linemap *m, const char *path, int line)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->path[i], path) == 0)
            return; // the first occurrence names the field
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        char **p = realloc(m->path, cap * sizeof *p);
        if (p)
            m->path = p;
        int *l = p ? realloc(m->line, cap * sizeof *l) : NULL;
        if (l)
            m->line = l;
        if (!p || !l) {
            m->oom = 1;
            return;
        }
        m->cap = cap;
    }
    if (!(m->path[m->n] = dup(path))) {
        m->oom = 1;
        return;
    }
    m->line[m->n++] = line;
}

static void linemap_fini(struct linemap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->path[i]);
    free(m->path);
    free(m->line);
}

static int linemap_get(const struct linemap *m, const char *path)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->path[i], path) == 0)
            return m->line[i];
    return 0;
}

// Length of the level of a long bracket at s ("[[" -> 0, "[==[" -> 2), or -1.
static int long_bracket(const char *s)
{
    if (*s != '[')
        return -1;
    int lv = 0;
    while (s[1 + lv] == '=')
        lv++;
    return s[1 + lv] == '[' ? lv : -1;
}

// Skips a long string or comment body opened at s (level lv); counts lines.
static const char *skip_long(const char *s, int lv, int *line)
{
    s += lv + 2;
    for (; *s; s++) {
        if (*s == '\n')
            (*line)++;
        else if (*s == ']') {
            int k = 0;
            while (s[1 + k] == '=')
                k++;
            if (k == lv && s[1 + k] == ']')
                return s + k + 2;
        }
    }
    return s;
}

enum { SCAN_DEPTH = 64, KEY_MAX = 64 };

static int is_keyword(const char *w)
{
    static const char *const kw[] = {"and", "break", "do", "else", "elseif", "end", "false", "for", "function",
                                     "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
                                     "true", "until", "while", NULL};
    for (int i = 0; kw[i]; i++)
        if (strcmp(kw[i], w) == 0)
            return 1;
    return 0;
}

// Scans Lua source text and records the line of each `key =` under its
// chain of enclosing `key = {` constructors. A key opens a constructor when
// only a call chain stands between them (`k = {`, `k = m.f{`, `k = m.f({`);
// a keyword, a literal or any other token ends it.
static void scan_lines(const char *s, struct linemap *m)
{
    char keys[SCAN_DEPTH][KEY_MAX]; // "" for an anonymous constructor
    int depth = 0, line = 1;
    char ident[KEY_MAX] = "", pending[KEY_MAX] = "";
    int last_ident = 0; // the previous token was an identifier
    while (*s) {
        char c = *s;
        if (c == '\n') {
            line++;
            s++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            s++;
            continue;
        }
        if (c == '-' && s[1] == '-') {
            int lv = long_bracket(s + 2);
            if (lv >= 0)
                s = skip_long(s + 2, lv, &line);
            else
                while (*s && *s != '\n')
                    s++;
            continue;
        }
        if (c == '"' || c == '\'') {
            for (s++; *s && *s != c && *s != '\n'; s++)
                if (*s == '\\' && s[1]) {
                    if (s[1] == '\n')
                        line++;
                    s++;
                }
            if (*s == c)
                s++;
            last_ident = 0;
            pending[0] = '\0';
            continue;
        }
        if (c == '[' && long_bracket(s) >= 0) {
            s = skip_long(s, long_bracket(s), &line);
            last_ident = 0;
            continue;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            size_t n = 0;
            while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || (*s >= '0' && *s <= '9')) {
                if (n + 1 < KEY_MAX)
                    ident[n++] = *s;
                s++;
            }
            ident[n] = '\0';
            last_ident = 1;
            if (is_keyword(ident)) { // `local k = f() return {`: the key ends with its statement
                pending[0] = '\0';
                last_ident = 0;
                if (strcmp(ident, "return") == 0)
                    m->last_return = line;
            }
            continue;
        }
        if (c == '=' && s[1] != '=') {
            if (last_ident) {
                snprintf(pending, sizeof pending, "%s", ident);
                char path[SCAN_DEPTH * KEY_MAX + KEY_MAX];
                size_t n = 0;
                path[0] = '\0';
                for (int i = 0; i < depth && i < SCAN_DEPTH; i++)
                    if (keys[i][0])
                        n += (size_t)snprintf(path + n, sizeof path - n, "%s.", keys[i]);
                snprintf(path + n, sizeof path - n, "%s", pending);
                linemap_add(m, path, line);
            }
            s++;
            last_ident = 0;
            continue;
        }
        if (c == '=' || c == '<' || c == '>' || c == '~') { // ==, <=, >=, ~=
            s += s[1] == '=' ? 2 : 1;
            last_ident = 0;
            continue;
        }
        if (c == '{') {
            if (depth < SCAN_DEPTH)
                snprintf(keys[depth], KEY_MAX, "%s", pending);
            depth++;
            pending[0] = '\0';
        } else if (c == '}') {
            if (depth > 0)
                depth--;
            pending[0] = '\0';
        } else if (c != '.' && c != ':' && c != '(') { // a call chain `k = m.f(` keeps the key
            pending[0] = '\0';
        }
        s++;
        last_ident = 0;
    }
}

static char *read_text(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    fclose(f);
    if (s)
        s[n] = '\0';
    return s;
}

static long long load_budget = KS_LUA_LOAD_BUDGET; // instructions (ks_luatab_set_load_budget)
static size_t mem_cap = KS_LUA_MEM_CAP;            // bytes (ks_luatab_set_mem_cap)

void ks_luatab_set_load_budget(long long instructions)
{
    load_budget = instructions > 0 ? instructions : KS_LUA_LOAD_BUDGET;
}

void ks_luatab_set_mem_cap(size_t bytes)
{
    mem_cap = bytes > 0 && bytes < KS_LUA_MEM_CAP ? bytes : KS_LUA_MEM_CAP;
}

// ---- the table walk --------------------------------------------------------------

struct conv {
    const char *file;
    struct ks_luatab *root;
    int oom;
    int bad;               // the walk stopped at `path`, for the reason in `why`
    int seen;              // stack index of the tables being walked (table -> its path)
    size_t bytes;          // the tree's bytes so far, against KS_LUATAB_MAX_BYTES
    char why[256];
    char path[1024];       // the field being walked: a.b.[1] (the dotted form of place)
};

static void fill(lua_State *L, int idx, struct ks_luatab *n, int depth, struct conv *c);

// Counts n bytes more of the tree; 0, or 1 (with the reason set) past
// KS_LUATAB_MAX_BYTES: a table or string met many times is copied each time,
// so a few lines of Lua can describe a tree of any size.
static int grow(struct conv *c, size_t n)
{
    if (n <= KS_LUATAB_MAX_BYTES - c->bytes) {
        c->bytes += n;
        return 0;
    }
    snprintf(c->why, sizeof c->why,
             "the table takes more than %u MB once copied (a table or string met many times is copied each time)",
             (unsigned)(KS_LUATAB_MAX_BYTES >> 20));
    c->bad = 1;
    return 1;
}

// Copies the table at idx into n's children, in lua_next order. A table on
// the way down from the root is a cycle; one met twice beside it is not.
static void fill_table(lua_State *L, int idx, struct ks_luatab *n, int depth, struct conv *c)
{
    idx = lua_absindex(L, idx);
    if (depth >= KS_LUATAB_MAX_DEPTH) {
        snprintf(c->why, sizeof c->why, "tables nested more than %d deep", KS_LUATAB_MAX_DEPTH);
        c->bad = 1;
        return;
    }
    if (!lua_checkstack(L, 8)) {
        snprintf(c->why, sizeof c->why, "the Lua stack is exhausted");
        c->bad = 1;
        return;
    }
    lua_pushvalue(L, idx);
    if (lua_rawget(L, c->seen) == LUA_TSTRING) {
        const char *at = lua_tostring(L, -1);
        snprintf(c->why, sizeof c->why, "the table contains itself: this is %s%s", *at ? "the table at " : "",
                 *at ? at : "the whole table the file returns");
        lua_pop(L, 1);
        c->bad = 1;
        return;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    lua_pushstring(L, c->path);
    lua_rawset(L, c->seen);

    size_t plen = strlen(c->path);
    struct ks_luatab **tail = &n->child;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        char key[64];
        int kt = lua_type(L, -2);
        if (kt == LUA_TSTRING)
            snprintf(key, sizeof key, "%s", lua_tostring(L, -2));
        else if (kt == LUA_TNUMBER && lua_isinteger(L, -2))
            snprintf(key, sizeof key, "[%lld]", (long long)lua_tointeger(L, -2));
        else
            snprintf(key, sizeof key, "[%s key]", luaL_typename(L, -2));
        snprintf(c->path + plen, sizeof c->path - plen, "%s%s", plen ? "." : "", key);
        if (grow(c, sizeof(struct ks_luatab) + strlen(key) + strlen(c->file) + 2)) {
            lua_pop(L, 2); // the path names the field that went past the cap
            return;
        }
        struct ks_luatab *ch = ks_luatab_new(key, KS_LUATAB_OTHER, c->file);
        if (!ch) {
            c->oom = 1;
            lua_pop(L, 2);
            return;
        }
        *tail = ch;
        tail = &ch->next;
        fill(L, -1, ch, depth + 1, c);
        if (c->bad || c->oom) {
            lua_pop(L, 2); // the path stays: it names the culprit
            return;
        }
        c->path[plen] = '\0';
        lua_pop(L, 1);
    }
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_rawset(L, c->seen);
}

static void fill(lua_State *L, int idx, struct ks_luatab *n, int depth, struct conv *c)
{
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
        n->type = KS_LUATAB_BOOL;
        n->b = lua_toboolean(L, idx);
        return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            n->type = KS_LUATAB_INT;
            n->i = (int64_t)lua_tointeger(L, idx);
            n->d = (double)n->i;
        } else {
            n->type = KS_LUATAB_REAL;
            n->d = (double)lua_tonumber(L, idx);
        }
        return;
    case LUA_TSTRING:
        n->type = KS_LUATAB_STRING;
        if (grow(c, lua_rawlen(L, idx) + 1))
            return;
        n->s = dup(lua_tostring(L, idx));
        c->oom |= !n->s;
        return;
    case LUA_TTABLE:
        n->type = KS_LUATAB_TABLE;
        fill_table(L, idx, n, depth, c);
        return;
    default:
        n->type = KS_LUATAB_OTHER;
        n->s = dup(luaL_typename(L, idx));
        c->oom |= !n->s;
        return;
    }
}

// Under lua_pcall: the conv (1), the table (2).
static int convert(lua_State *L)
{
    struct conv *c = lua_touserdata(L, 1);
    lua_newtable(L);
    c->seen = lua_gettop(L);
    fill(L, 2, c->root, 0, c);
    return 0;
}

// Walks the table on top of L into c->root; KS_OK, or a status with the
// reason in err (the culprit's line found later, by finish).
static int walk(lua_State *L, struct conv *c, char *err, size_t len)
{
    lua_pushcfunction(L, convert);
    lua_pushlightuserdata(L, c);
    lua_pushvalue(L, -3);
    int rc = lua_pcall(L, 2, 0, 1);
    if (rc == LUA_OK && !c->oom)
        return c->bad ? KS_EINVAL : KS_OK;
    if (rc != LUA_OK && ks_sandbox_error(L, rc, err, len) == KS_EINVAL)
        return KS_EINVAL; // the memory cap
    snprintf(err, len, "%s: out of memory while reading the table", c->file);
    return KS_ENOMEM;
}

// ---- after Lua: lines and order ----------------------------------------------

static int before(const struct ks_luatab *a, const struct ks_luatab *b)
{
    int la = a->line ? a->line : 1 << 30, lb = b->line ? b->line : 1 << 30;
    return la != lb ? la < lb : strcmp(a->key, b->key) < 0;
}

// Sets each node's line from the map and sorts every table's fields.
static void place(struct ks_luatab *n, char *path, size_t plen, size_t cap, const struct linemap *m)
{
    struct ks_luatab *sorted = NULL;
    for (struct ks_luatab *ch = n->child, *next; ch; ch = next) {
        next = ch->next;
        int w = snprintf(path + plen, cap - plen, "%s%s", plen ? "." : "", ch->key);
        if (w > 0 && (size_t)w < cap - plen) {
            ch->line = linemap_get(m, path);
            place(ch, path, plen + (size_t)w, cap, m);
        }
        path[plen] = '\0';
        struct ks_luatab **p = &sorted; // insertion: tables are small
        while (*p && !before(ch, *p))
            p = &(*p)->next;
        ch->next = *p;
        *p = ch;
    }
    n->child = sorted;
}

// The line of the field at the dotted path, or of the nearest field above it
// that the text writes; 0 when none is.
static int line_near(const struct linemap *m, const char *path)
{
    char p[sizeof ((struct conv *)0)->path];
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        int line = linemap_get(m, p);
        char *dot = strrchr(p, '.');
        if (line || !dot)
            return line;
        *dot = '\0';
    }
}

// After Lua: on success places lines and hands the tree over; after a
// refused walk writes FILE:LINE: path: reason. Frees text.
static int finish(struct conv *c, int st, char *text, struct ks_luatab **out, char *err, size_t len)
{
    if (st == KS_OK || c->bad) {
        struct linemap m = {0};
        scan_lines(text, &m);
        if (st == KS_OK && !m.oom) {
            char path[1024] = "";
            place(c->root, path, 0, sizeof path, &m);
        } else if (st != KS_OK) {
            char shown[sizeof c->path];
            size_t k = 0;
            for (const char *s = c->path; *s && k + 1 < sizeof shown; s++)
                if (!(s[0] == '.' && s[1] == '['))
                    shown[k++] = *s; // axes.[1].field -> axes[1].field
            shown[k] = '\0';
            int line = m.oom ? 0 : line_near(&m, c->path);
            if (line)
                snprintf(err, len, "%s:%d: %s: %s", c->file, line, shown, c->why);
            else if (m.last_return) // a table built by code: where the file returns it
                snprintf(err, len, "%s:%d: %s: %s (a table built by code; this line returns it)", c->file,
                         m.last_return, shown, c->why);
            else
                snprintf(err, len, "%s: %s: %s", c->file, shown, c->why);
        }
        linemap_fini(&m);
    }
    free(text);
    if (st != KS_OK) {
        ks_luatab_free(c->root);
        return st;
    }
    *out = c->root;
    return KS_OK;
}

// ---- loading a file ----------------------------------------------------------------

// Under lua_pcall: the NULL-terminated names (1), the file's name (2), the
// returned table (3). Replaces each named function field by the list it builds.
static int call_fields(lua_State *L);

static int load(const char *file, const char *lua_dirs, const char *const *calls, struct ks_luatab **out, char *err,
                size_t len)
{
    *out = NULL;
    char *text = read_text(file);
    if (!text) {
        snprintf(err, len, "%s: cannot read the file", file);
        return KS_EINVAL;
    }
    struct ks_sandbox b;
    struct conv c = {.file = file, .root = ks_luatab_new(NULL, KS_LUATAB_OTHER, file)};
    lua_State *L = c.root ? ks_sandbox_open(&b, file, lua_dirs, mem_cap) : NULL;
    if (!L) {
        free(text);
        ks_luatab_free(c.root);
        snprintf(err, len, "%s: out of memory", file);
        return KS_ENOMEM;
    }
    int st = KS_OK, rc = ks_sandbox_run(L, KS_LUA_SEED, load_budget);
    if (rc == LUA_OK && !lua_istable(L, -1)) {
        snprintf(err, len, "%s: the file returns %s; expected a table (end it with `return { ... }`)", file,
                 lua_isnoneornil(L, -1) ? "nothing" : luaL_typename(L, -1));
        st = KS_EINVAL;
    }
    if (rc == LUA_OK && st == KS_OK && calls) {
        lua_pushcfunction(L, call_fields);
        lua_pushlightuserdata(L, (void *)calls);
        lua_pushlightuserdata(L, (void *)file);
        lua_pushvalue(L, -4);
        rc = lua_pcall(L, 3, 0, 1);
    }
    if (rc != LUA_OK)
        st = ks_sandbox_error(L, rc, err, len);
    else if (st == KS_OK)
        st = walk(L, &c, err, len);
    c.root->included = b.included; // the root owns them now
    c.root->n_included = b.n_included;
    b.included = NULL;
    b.n_included = 0;
    ks_sandbox_close(L);
    return finish(&c, st, text, out, err, len);
}

int ks_luatab_load(const char *file, const char *lua_dirs, struct ks_luatab **out, char *err, size_t len)
{
    return load(file, lua_dirs, NULL, out, err, len);
}

// ---- fields that are functions to call ---------------------------------------

// Appends the argument to the list that is upvalue 1.
static int collect(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    lua_seti(L, lua_upvalueindex(1), luaL_len(L, lua_upvalueindex(1)) + 1);
    return 0;
}

static int call_fields(lua_State *L)
{
    const char *const *names = lua_touserdata(L, 1);
    const char *file = lua_touserdata(L, 2);
    for (; names && *names; names++) {
        if (lua_getfield(L, 3, *names) != LUA_TFUNCTION) {
            lua_pop(L, 1);
            continue;
        }
        lua_newtable(L);                 // f list
        lua_pushvalue(L, -2);            // f list f
        lua_pushvalue(L, -2);            // f list f list
        lua_pushcclosure(L, collect, 1); // f list f add
        ks_sandbox_begin(L, load_budget);
        lua_call(L, 1, 1); // f list ret
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_Integer have = luaL_len(L, -2), n = luaL_len(L, -1);
            for (lua_Integer i = 1; i <= n; i++) {
                lua_geti(L, -1, i);
                lua_seti(L, -3, have + i);
            }
        } else if (!lua_isnil(L, -1)) {
            return luaL_error(L, "%s: %s: the function returned a %s; expected a list of tables or nothing", file,
                              *names, luaL_typename(L, -1));
        }
        lua_pop(L, 1);              // f list
        lua_setfield(L, 3, *names); // f
        lua_pop(L, 1);
    }
    return 0;
}

int ks_luatab_load_calling(const char *file, const char *lua_dirs, const char *const *calls,
                           struct ks_luatab **out, char *err, size_t len)
{
    static const char *const none[] = {NULL};
    return load(file, lua_dirs, calls ? calls : none, out, err, len);
}

// ---- a function kept alive ------------------------------------------------

struct ks_luafn {
    lua_State *L;
    struct ks_sandbox box; // L's allocator data: it does not move
    int fn, arg;    // registry references: the function, the table it is called with
};

// Under lua_pcall: walks the returned table (at 1) along the dotted path
// (lightuserdata at 2), and keeps the value found and the argument table in
// the registry (their references in the ks_luafn at 3).
static int find_path(lua_State *L)
{
    const char *path = lua_touserdata(L, 2);
    struct ks_luafn *f = lua_touserdata(L, 3);
    lua_pushvalue(L, 1);
    while (*path) {
        size_t k = strcspn(path, ".");
        if (!lua_istable(L, -1))
            return luaL_error(L, "no table on the way to the field");
        lua_pushlstring(L, path, k);
        lua_gettable(L, -2);
        lua_remove(L, -2);
        path += k + (path[k] == '.');
    }
    if (!lua_isfunction(L, -1)) {
        lua_pushstring(L, luaL_typename(L, -1));
        return 1;
    }
    f->fn = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    f->arg = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

struct ks_luafn *ks_luafn_load(const char *file, const char *lua_dirs, const char *path, uint64_t seed, char *err,
                               size_t len)
{
    struct ks_luafn *f = calloc(1, sizeof *f);
    lua_State *L = f ? ks_sandbox_open(&f->box, file, lua_dirs, mem_cap) : NULL;
    if (!L) {
        free(f);
        snprintf(err, len, "%s: out of memory", file);
        return NULL;
    }
    f->L = L;
    int rc = ks_sandbox_run(L, seed, load_budget);
    if (rc == LUA_OK) {
        lua_pushcfunction(L, find_path);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, (void *)path);
        lua_pushlightuserdata(L, f);
        rc = lua_pcall(L, 3, 1, 1);
    }
    if (rc != LUA_OK) {
        char why[1024];
        ks_sandbox_error(L, rc, why, sizeof why);
        snprintf(err, len, "%s: %s: %s", file, path, why);
        ks_luafn_free(f);
        return NULL;
    }
    if (!lua_isnil(L, -1)) {
        snprintf(err, len, "%s: %s is a %s, not a function", file, path, lua_tostring(L, -1));
        ks_luafn_free(f);
        return NULL;
    }
    lua_settop(L, 0);
    return f;
}

struct call {
    const struct ks_luafn *f;
    const char *const *names;
    const double *values;
    size_t n;
};

// Under lua_pcall: fills the argument table and calls the function.
static int invoke(lua_State *L)
{
    const struct call *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->f->fn);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->f->arg);
    for (size_t i = 0; i < c->n; i++) {
        lua_pushnumber(L, c->values[i]);
        lua_setfield(L, -2, c->names[i]);
    }
    ks_sandbox_begin(L, KS_LUA_CALL_BUDGET);
    lua_call(L, 1, 1);
    return 1;
}

int ks_luafn_call(struct ks_luafn *f, const char *const *names, const double *values, size_t n, double *out,
                  char *err, size_t len)
{
    lua_State *L = f->L;
    struct call c = {.f = f, .names = names, .values = values, .n = n};
    lua_settop(L, 0);
    lua_pushcfunction(L, ks_sandbox_msghandler);
    lua_pushcfunction(L, invoke);
    lua_pushlightuserdata(L, &c);
    int rc = lua_pcall(L, 1, 1, 1);
    int st = KS_OK;
    if (rc != LUA_OK) {
        st = ks_sandbox_error(L, rc, err, len);
    } else if (!lua_isnumber(L, -1)) {
        snprintf(err, len, "the function returned a %s; expected a number", luaL_typename(L, -1));
        st = KS_EINVAL;
    } else {
        *out = lua_tonumber(L, -1);
    }
    lua_settop(L, 0);
    return st;
}

void ks_luafn_free(struct ks_luafn *f)
{
    if (!f)
        return;
    if (f->L)
        ks_sandbox_close(f->L);
    free(f);
}
