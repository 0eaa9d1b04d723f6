// luatab.c - the Lua binding: run a file protected, copy its table into C.
//
// Everything that can raise a Lua error (opening the libraries, setting
// package.path, running the chunk, walking the table) runs inside lua_pcall;
// the C functions run that way record their results in a struct owned by the
// caller, and every node is linked into the tree before it is filled, so a
// memory error half-way leaks nothing.
#include "luatab.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

enum { MAX_DEPTH = 32 }; // deeper is a table that contains itself

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

// ---- the protected part ------------------------------------------------------

struct conv {
    const char *file, *lua_dirs;
    struct ks_luatab *root;
    int oom;
};

static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static int setup(lua_State *L)
{
    const struct conv *c = lua_touserdata(L, 1);
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const char *d = c->lua_dirs; d && *d;) {
        size_t k = strcspn(d, ";");
        if (k) {
            luaL_addlstring(&b, d, k);
            luaL_addstring(&b, "/?.lua;");
        }
        d += k + (d[k] == ';');
    }
    lua_getfield(L, -2, "path");
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    lua_setfield(L, -2, "path");
    return 0;
}

static void fill(lua_State *L, int idx, struct ks_luatab *n, int depth, struct conv *c);

// Copies the table at idx into n's children, in lua_next order.
static void fill_table(lua_State *L, int idx, struct ks_luatab *n, int depth, struct conv *c)
{
    struct ks_luatab **tail = &n->child;
    idx = lua_absindex(L, idx);
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
        struct ks_luatab *ch = ks_luatab_new(key, KS_LUATAB_OTHER, c->file);
        if (!ch) {
            c->oom = 1;
            lua_pop(L, 2);
            return;
        }
        *tail = ch;
        tail = &ch->next;
        fill(L, -1, ch, depth + 1, c);
        lua_pop(L, 1);
    }
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
        n->s = dup(lua_tostring(L, idx));
        c->oom |= !n->s;
        return;
    case LUA_TTABLE:
        if (depth < MAX_DEPTH) {
            n->type = KS_LUATAB_TABLE;
            fill_table(L, idx, n, depth, c);
            return;
        }
        n->s = dup("table nested too deep (does it contain itself?)");
        break;
    default:
        n->s = dup(luaL_typename(L, idx));
        break;
    }
    n->type = KS_LUATAB_OTHER;
    c->oom |= !n->s;
}

static int convert(lua_State *L)
{
    struct conv *c = lua_touserdata(L, 1);
    fill(L, 2, c->root, 0, c);
    return 0;
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

int ks_luatab_load(const char *file, const char *lua_dirs, struct ks_luatab **out, char *err, size_t len)
{
    *out = NULL;
    char *text = read_text(file);
    if (!text) {
        snprintf(err, len, "%s: cannot read the file", file);
        return KS_EINVAL;
    }
    struct conv c = {.file = file, .lua_dirs = lua_dirs};
    c.root = ks_luatab_new(NULL, KS_LUATAB_OTHER, file);
    lua_State *L = luaL_newstate();
    if (!c.root || !L) {
        free(text);
        ks_luatab_free(c.root);
        if (L)
            lua_close(L);
        snprintf(err, len, "%s: out of memory", file);
        return KS_ENOMEM;
    }
    int st = KS_OK;
    lua_pushcfunction(L, msghandler);
    int h = lua_gettop(L);
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, &c);
    int rc = lua_pcall(L, 1, 0, h);
    if (rc == LUA_OK)
        rc = luaL_loadfilex(L, file, "t");
    if (rc == LUA_OK)
        rc = lua_pcall(L, 0, 1, h);
    if (rc != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        snprintf(err, len, "%s", msg ? msg : "unknown Lua error");
        st = rc == LUA_ERRMEM ? KS_ENOMEM : KS_EINVAL;
    } else if (!lua_istable(L, -1)) {
        snprintf(err, len, "%s: the file returns %s; expected a table (end it with `return { ... }`)", file,
                 lua_isnoneornil(L, -1) ? "nothing" : luaL_typename(L, -1));
        st = KS_EINVAL;
    } else {
        lua_pushcfunction(L, convert);
        lua_pushlightuserdata(L, &c);
        lua_pushvalue(L, -3);
        rc = lua_pcall(L, 2, 0, h);
        if (rc != LUA_OK || c.oom) {
            snprintf(err, len, "%s: out of memory while reading the table", file);
            st = KS_ENOMEM;
        }
    }
    lua_close(L);
    if (st == KS_OK) {
        struct linemap m = {0};
        scan_lines(text, &m);
        char path[1024] = "";
        if (!m.oom)
            place(c.root, path, 0, sizeof path, &m);
        linemap_fini(&m);
    }
    free(text);
    if (st != KS_OK) {
        ks_luatab_free(c.root);
        return st;
    }
    *out = c.root;
    return KS_OK;
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

// Arguments: the NULL-terminated names, the file's name, the returned table.
// Replaces each named function field by the list it builds.
static int call_fields(lua_State *L)
{
    const char *const *names = lua_touserdata(L, 1);
    const char *file = lua_tostring(L, 2);
    for (; names && *names; names++) {
        if (lua_getfield(L, 3, *names) != LUA_TFUNCTION) {
            lua_pop(L, 1);
            continue;
        }
        lua_newtable(L);                 // f list
        lua_pushvalue(L, -2);            // f list f
        lua_pushvalue(L, -2);            // f list f list
        lua_pushcclosure(L, collect, 1); // f list f add
        lua_call(L, 1, 1);               // f list ret
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
    *out = NULL;
    char *text = read_text(file);
    if (!text) {
        snprintf(err, len, "%s: cannot read the file", file);
        return KS_EINVAL;
    }
    struct conv c = {.file = file, .lua_dirs = lua_dirs, .root = ks_luatab_new(NULL, KS_LUATAB_OTHER, file)};
    lua_State *L = c.root ? luaL_newstate() : NULL;
    if (!L) {
        free(text);
        ks_luatab_free(c.root);
        snprintf(err, len, "%s: out of memory", file);
        return KS_ENOMEM;
    }
    lua_pushcfunction(L, msghandler);
    int h = lua_gettop(L);
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, &c);
    int rc = lua_pcall(L, 1, 0, h);
    if (rc == LUA_OK && (rc = luaL_loadfilex(L, file, "t")) == LUA_OK)
        rc = lua_pcall(L, 0, 1, h);
    int st = KS_OK, table = h + 1;
    if (rc == LUA_OK && !lua_istable(L, table)) {
        snprintf(err, len, "%s: the file returns %s; expected a table (end it with `return { ... }`)", file,
                 lua_isnoneornil(L, table) ? "nothing" : luaL_typename(L, table));
        st = KS_EINVAL;
    }
    if (rc == LUA_OK && st == KS_OK) {
        lua_pushcfunction(L, call_fields);
        lua_pushlightuserdata(L, (void *)calls);
        lua_pushstring(L, file);
        lua_pushvalue(L, table);
        rc = lua_pcall(L, 3, 0, h);
    }
    if (rc == LUA_OK && st == KS_OK) {
        lua_pushcfunction(L, convert);
        lua_pushlightuserdata(L, &c);
        lua_pushvalue(L, table);
        if (lua_pcall(L, 2, 0, h) != LUA_OK || c.oom) {
            snprintf(err, len, "%s: out of memory while reading the table", file);
            st = KS_ENOMEM;
        }
    }
    if (rc != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        snprintf(err, len, "%s", msg ? msg : "unknown Lua error");
        st = rc == LUA_ERRMEM ? KS_ENOMEM : KS_EINVAL;
    }
    lua_close(L);
    if (st == KS_OK) {
        struct linemap m = {0};
        scan_lines(text, &m);
        char path[1024] = "";
        if (!m.oom)
            place(c.root, path, 0, sizeof path, &m);
        linemap_fini(&m);
        *out = c.root;
    } else {
        ks_luatab_free(c.root);
    }
    free(text);
    return st;
}

// ---- a function kept alive ------------------------------------------------

struct ks_luafn {
    lua_State *L;
    int fn, arg; // registry references: the function, the table it is called with
    int handler; // registry reference: the message handler
};

// Under lua_pcall: walks the returned table (at 1) along the dotted path
// (lightuserdata at 2) and leaves the value found on the stack.
static int find_path(lua_State *L)
{
    const char *path = lua_touserdata(L, 2);
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
    return 1;
}

struct ks_luafn *ks_luafn_load(const char *file, const char *lua_dirs, const char *path, char *err, size_t len)
{
    struct ks_luafn *f = calloc(1, sizeof *f);
    lua_State *L = f ? luaL_newstate() : NULL;
    if (!L) {
        free(f);
        snprintf(err, len, "%s: out of memory", file);
        return NULL;
    }
    f->L = L;
    struct conv c = {.file = file, .lua_dirs = lua_dirs};
    lua_pushcfunction(L, msghandler);
    int h = lua_gettop(L);
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, &c);
    int rc = lua_pcall(L, 1, 0, h);
    if (rc == LUA_OK)
        rc = luaL_loadfilex(L, file, "t");
    if (rc == LUA_OK)
        rc = lua_pcall(L, 0, 1, h);
    if (rc == LUA_OK) {
        lua_pushcfunction(L, find_path);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, (void *)path);
        rc = lua_pcall(L, 2, 1, h);
    }
    if (rc != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        snprintf(err, len, "%s: %s: %s", file, path, msg ? msg : "unknown Lua error");
        ks_luafn_free(f);
        return NULL;
    }
    if (!lua_isfunction(L, -1)) {
        snprintf(err, len, "%s: %s is a %s, not a function", file, path, luaL_typename(L, -1));
        ks_luafn_free(f);
        return NULL;
    }
    f->fn = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    f->arg = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, h);
    f->handler = luaL_ref(L, LUA_REGISTRYINDEX);
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
    lua_call(L, 1, 1);
    return 1;
}

int ks_luafn_call(struct ks_luafn *f, const char *const *names, const double *values, size_t n, double *out,
                  char *err, size_t len)
{
    lua_State *L = f->L;
    struct call c = {.f = f, .names = names, .values = values, .n = n};
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->handler);
    lua_pushcfunction(L, invoke);
    lua_pushlightuserdata(L, &c);
    int rc = lua_pcall(L, 1, 1, 1);
    int st = KS_OK;
    if (rc != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        snprintf(err, len, "%s", msg ? msg : "unknown Lua error");
        st = rc == LUA_ERRMEM ? KS_ENOMEM : KS_EINVAL;
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
        lua_close(f->L);
    free(f);
}
