// sandbox.c - the Lua sandbox (sandbox.h): the allocator with its cap, the
// count hook with its budget, the safe libraries and kvstrata's own
// functions (print to stderr, load of text, seeded math.random, require of
// helpers, include), and string patterns under a CPU-time limit.
#define _POSIX_C_SOURCE 200809L // sigaction, setitimer

#include "sandbox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "luatab.h"
#include "status.h"

enum { HOOK_STEP = 1000, MAX_INCLUDES = 16, MAX_INCLUDED = 256, NAME_MAX_LEN = 64 };

static void *box_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct ks_sandbox *b = ud;
    size_t old = ptr ? osize : 0; // without ptr, osize is a type tag
    if (nsize == 0) {
        free(ptr);
        b->used -= old;
        return NULL;
    }
    if (nsize > old && nsize - old > b->cap - b->used) {
        b->capped = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p)
        b->used = b->used - old + nsize;
    return p;
}

static struct ks_sandbox *box_of(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

// Every HOOK_STEP instructions. Once the budget is spent it fires at every
// instruction, so a pcall in the script cannot swallow the error and go on.
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    struct ks_sandbox *b = box_of(L);
    if (!b->exhausted && (b->left -= HOOK_STEP) > 0)
        return;
    if (!b->exhausted) {
        lua_Debug at;
        int line = 0;
        const char *src = b->file;
        if (lua_getstack(L, 0, &at) && lua_getinfo(L, "Sl", &at)) {
            line = at.currentline;
            if (at.source[0] == '@')
                src = at.source + 1;
        }
        if (line > 0)
            snprintf(b->why, sizeof b->why, "%s:%d: instruction budget of %lld exhausted", src, line, b->budget);
        else
            snprintf(b->why, sizeof b->why, "%s: instruction budget of %lld exhausted", src, b->budget);
        b->exhausted = 1;
        lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    }
    lua_pushstring(L, b->why);
    lua_error(L);
}

// Starts a call: a fresh budget, no failure recorded.
void ks_sandbox_begin(lua_State *L, long long budget)
{
    struct ks_sandbox *b = box_of(L);
    b->budget = b->left = budget;
    b->exhausted = b->capped = 0;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_STEP);
}

static int panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "kvstrata: Lua error outside a protected call: %s\n", msg ? msg : "?");
    return 0; // Lua aborts
}

lua_State *ks_sandbox_open(struct ks_sandbox *b, const char *file, const char *lua_dirs, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->file = file;
    b->lua_dirs = lua_dirs;
    b->cap = cap;
    lua_State *L = lua_newstate(box_alloc, b);
    if (L)
        lua_atpanic(L, panic);
    return L;
}

// Closes L with a spent budget: a finalizer the script left stops at its
// first instruction (its error is dropped, as Lua drops errors in __gc).
void ks_sandbox_close(lua_State *L)
{
    struct ks_sandbox *b = box_of(L);
    b->exhausted = 1;
    snprintf(b->why, sizeof b->why, "%s: the state is closing", b->file);
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    lua_close(L);
    for (size_t i = 0; i < b->n_included; i++)
        free(b->included[i]);
    free(b->included);
    b->included = NULL;
    b->n_included = 0;
}

// The message for a failed call (rc != LUA_OK) with the error on top of L;
// the status it deserves.
int ks_sandbox_error(lua_State *L, int rc, char *err, size_t len)
{
    struct ks_sandbox *b = box_of(L);
    if (b->exhausted) {
        snprintf(err, len, "%s", b->why);
        return KS_EINVAL;
    }
    const char *msg = lua_tostring(L, -1);
    // NOTE: Lua retries a refused allocation after a full collection, so a
    // refusal alone is no failure; the error must be the memory error too
    // (LUA_ERRMEM, or its message when include or a pcall passed it on).
    if (b->capped && (rc == LUA_ERRMEM || (msg && strncmp(msg, "not enough memory", 17) == 0))) {
        snprintf(err, len, "%s: memory cap of %zu MB exceeded", b->file, b->cap >> 20);
        return KS_EINVAL;
    }
    snprintf(err, len, "%s", msg ? msg : "unknown Lua error");
    return rc == LUA_ERRMEM ? KS_ENOMEM : KS_EINVAL;
}

int ks_sandbox_msghandler(lua_State *L)
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

// print: to stderr, so that a command's --json output stays one object.
static int sb_print(lua_State *L)
{
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t k;
        const char *s = luaL_tolstring(L, i, &k);
        if (i > 1)
            fputc('\t', stderr);
        fwrite(s, 1, k, stderr);
        lua_pop(L, 1);
    }
    fputc('\n', stderr);
    return 0;
}

// load: text chunks only (upvalue 1: the base library's load).
static int sb_load(lua_State *L)
{
    const char *mode = luaL_optstring(L, 3, "t");
    if (strcmp(mode, "t") != 0)
        return luaL_error(L, "load: mode '%s' refused: only text chunks load in kvstrata's Lua sandbox", mode);
    int n = lua_gettop(L);
    if (n < 3)
        lua_settop(L, 3);
    lua_pushstring(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n > 3 ? n : 3, LUA_MULTRET);
    return lua_gettop(L);
}

// math.randomseed with a seed only: without one it would read the clock.
static int sb_randomseed(lua_State *L)
{
    luaL_checkinteger(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

// The file of the nearest Lua function up the stack, with its '@'.
static const char *caller_source(lua_State *L)
{
    lua_Debug ar;
    for (int lv = 1; lua_getstack(L, lv, &ar); lv++)
        if (lua_getinfo(L, "S", &ar) && ar.source[0] == '@')
            return ar.source;
    return NULL;
}

// require NAME: kvstrata's own helpers only, lua/NAME.lua in the lua_dirs
// (upvalue 1: the modules loaded so far).
static int sb_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    size_t n = strlen(name);
    int ok = n > 0 && n <= NAME_MAX_LEN;
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '_';
    if (!ok)
        return luaL_error(L, "require '%s': only kvstrata's helpers load (a plain name, such as \"kvstrata\")", name);
    lua_settop(L, 1);
    if (lua_getfield(L, lua_upvalueindex(1), name) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    struct ks_sandbox *b = box_of(L);
    for (const char *d = b->lua_dirs; d && *d;) {
        size_t k = strcspn(d, ";");
        if (k) {
            const char *path = lua_pushfstring(L, "%s/%s.lua", lua_pushlstring(L, d, k), name);
            FILE *f = fopen(path, "r");
            if (f) {
                fclose(f);
                if (luaL_loadfilex(L, path, "t") != LUA_OK)
                    return lua_error(L);
                lua_pushvalue(L, 1);
                lua_call(L, 1, 1);
                if (lua_isnil(L, -1)) {
                    lua_pop(L, 1);
                    lua_pushboolean(L, 1);
                }
                lua_pushvalue(L, -1);
                lua_setfield(L, lua_upvalueindex(1), name);
                return 1;
            }
            lua_pop(L, 2);
        }
        d += k + (d[k] == ';');
    }
    return luaL_error(L, "require '%s': no such kvstrata helper (lua/%s.lua); to use another scenario file, "
                         "include \"FILE.lua\"",
                      name, name);
}

// Adds path to b->included unless it is there. KS_OK, KS_ENOMEM, or
// KS_EINVAL past MAX_INCLUDED files.
static int remember(struct ks_sandbox *b, const char *path)
{
    for (size_t i = 0; i < b->n_included; i++)
        if (strcmp(b->included[i], path) == 0)
            return KS_OK;
    if (b->n_included >= MAX_INCLUDED)
        return KS_EINVAL;
    char **grown = realloc(b->included, (b->n_included + 1) * sizeof *grown);
    if (!grown)
        return KS_ENOMEM;
    b->included = grown;
    size_t n = strlen(path) + 1;
    if (!(grown[b->n_included] = malloc(n)))
        return KS_ENOMEM;
    memcpy(grown[b->n_included++], path, n);
    return KS_OK;
}

// include "FILE.lua": runs another Lua file, named relative to the folder of
// the file that calls include, and returns what it returns. Read-only: the
// file is only read, as text, and runs in the same sandbox.
static int sb_include(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    size_t n = strlen(name);
    if (n < 5 || strcmp(name + n - 4, ".lua") != 0)
        return luaL_error(L, "include '%s': only .lua files can be included", name);
    struct ks_sandbox *b = box_of(L);
    if (b->includes >= MAX_INCLUDES)
        return luaL_error(L, "include '%s': includes nested more than %d deep (does a file include itself?)", name,
                          MAX_INCLUDES);
    const char *src = caller_source(L);
    if (name[0] == '/' || !src || !strchr(src, '/')) {
        lua_pushstring(L, name);
    } else {
        const char *slash = strrchr(src, '/');
        lua_pushlstring(L, src + 1, (size_t)(slash - src));
        lua_pushstring(L, name);
        lua_concat(L, 2);
    }
    const char *path = lua_tostring(L, -1);
    if (luaL_loadfilex(L, path, "t") != LUA_OK)
        return luaL_error(L, "include: %s", lua_tostring(L, -1));
    int kept = remember(b, path);
    if (kept == KS_EINVAL)
        return luaL_error(L, "include '%s': more than %d files included", name, MAX_INCLUDED);
    if (kept != KS_OK)
        return luaL_error(L, "not enough memory");
    b->includes++;
    int rc = lua_pcall(L, 0, 1, 0);
    b->includes--;
    if (rc != LUA_OK)
        return lua_error(L);
    return 1;
}

// _G's __index: a name the sandbox removed is an error that says so; any
// other missing global is nil, as in plain Lua.
static int sb_missing(lua_State *L)
{
    static const char *const gone[] = {"io", "os", "debug", "package", "dofile", "loadfile", "loadstring",
                                       "coroutine", NULL};
    const char *k = lua_tostring(L, 2);
    for (int i = 0; k && gone[i]; i++)
        if (strcmp(k, gone[i]) == 0) {
            lua_Debug ar;
            if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
                lua_pushfstring(L, "%s:%d: ", ar.source[0] == '@' ? ar.source + 1 : ar.short_src, ar.currentline);
            else
                lua_pushliteral(L, "");
            lua_pushfstring(L,
                            "'%s' is not available: kvstrata runs Lua in a sandbox (base, string, table, math, "
                            "utf8; require \"kvstrata\"; include \"FILE.lua\")",
                            k);
            lua_concat(L, 2);
            return lua_error(L);
        }
    return 0;
}

// ---- string patterns, under a CPU-time limit (sandbox.h) ------------------------

static char pattern_msg[768];  // what the timer prints, built when it is armed
static size_t pattern_msg_len;
static int pattern_depth;      // pattern calls in progress (gsub's function may call another)

static void pattern_expired(int sig)
{
    (void)sig;
    ssize_t w = write(STDERR_FILENO, pattern_msg, pattern_msg_len);
    (void)w;
    _exit(2);
}

// Arms the virtual timer for `seconds` of CPU time; 0 disarms it.
static void pattern_timer(int seconds)
{
    struct itimerval t = {.it_value = {.tv_sec = seconds}};
    setitimer(ITIMER_VIRTUAL, &t, NULL);
}

// Before the outermost pattern call: the message, the handler, the timer.
static void pattern_arm(lua_State *L, const char *fn)
{
    static int installed;
    lua_Debug ar;
    const char *src = box_of(L)->file;
    int line = 0;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
        line = ar.currentline;
        if (ar.source[0] == '@')
            src = ar.source + 1;
    }
    char at[16] = "";
    if (line > 0)
        snprintf(at, sizeof at, ":%d", line);
    int w = snprintf(pattern_msg, sizeof pattern_msg,
                     "%s%s: %s: the string pattern ran for more than %d s of CPU time; patterns run outside the "
                     "instruction budget (simplify the pattern or shorten the string)\n",
                     src, at, fn, KS_LUA_PATTERN_SECONDS);
    pattern_msg_len = w < 0 ? 0 : (size_t)w < sizeof pattern_msg ? (size_t)w : sizeof pattern_msg - 1;
    if (!installed) {
        struct sigaction sa = {.sa_handler = pattern_expired};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGVTALRM, &sa, NULL);
        installed = 1;
    }
    pattern_timer(KS_LUA_PATTERN_SECONDS);
}

// string.find, match, gsub and gmatch's iterator (upvalue 1: the string
// library's function; upvalue 2: its name), under the limit. A Lua error
// inside (gsub's function) passes through after the timer is disarmed.
static int sb_pattern(lua_State *L)
{
    int n = lua_gettop(L);
    if (pattern_depth++ == 0)
        pattern_arm(L, lua_tostring(L, lua_upvalueindex(2)));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    int rc = lua_pcall(L, n, LUA_MULTRET, 0);
    if (--pattern_depth == 0)
        pattern_timer(0);
    if (rc != LUA_OK)
        return lua_error(L);
    return lua_gettop(L);
}

// string.gmatch: its iterator, wrapped (upvalue 1: the library's gmatch).
static int sb_gmatch(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, 1);
    lua_pushliteral(L, "string.gmatch");
    lua_pushcclosure(L, sb_pattern, 2);
    return 1;
}

// Replaces the string table's (on top of L) pattern functions.
static void guard_patterns(lua_State *L)
{
    static const char *const fns[] = {"find", "match", "gsub", NULL};
    for (int i = 0; fns[i]; i++) {
        lua_getfield(L, -1, fns[i]);
        lua_pushfstring(L, "string.%s", fns[i]);
        lua_pushcclosure(L, sb_pattern, 2);
        lua_setfield(L, -2, fns[i]);
    }
    lua_getfield(L, -1, "gmatch");
    lua_pushcclosure(L, sb_gmatch, 1);
    lua_setfield(L, -2, "gmatch");
}

// Opens the safe libraries and the sandbox's own functions. Argument: the
// seed of math.random (an integer).
static int setup(lua_State *L)
{
    lua_Integer seed = lua_tointeger(L, 1);
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},        {LUA_STRLIBNAME, luaopen_string},
                                    {LUA_TABLIBNAME, luaopen_table},  {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL}};
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    lua_pushglobaltable(L);
    static const char *const drop[] = {"dofile", "loadfile", NULL};
    for (int i = 0; drop[i]; i++) {
        lua_pushnil(L);
        lua_setfield(L, -2, drop[i]);
    }
    lua_pushcfunction(L, sb_print);
    lua_setfield(L, -2, "print");
    lua_getfield(L, -1, "load");
    lua_pushcclosure(L, sb_load, 1);
    lua_setfield(L, -2, "load");
    lua_newtable(L);
    lua_pushcclosure(L, sb_require, 1);
    lua_setfield(L, -2, "require");
    lua_pushcfunction(L, sb_include);
    lua_setfield(L, -2, "include");
    lua_getfield(L, -1, LUA_STRLIBNAME);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    guard_patterns(L);
    lua_pop(L, 1);
    lua_getfield(L, -1, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushvalue(L, -1);
    lua_pushinteger(L, seed);
    lua_call(L, 1, 0);
    lua_pushcclosure(L, sb_randomseed, 1);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, sb_missing);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    return 0;
}

int ks_sandbox_run(lua_State *L, uint64_t seed, long long budget)
{
    lua_settop(L, 0);
    lua_pushcfunction(L, ks_sandbox_msghandler);
    lua_pushcfunction(L, setup);
    lua_pushinteger(L, (lua_Integer)seed);
    int rc = lua_pcall(L, 1, 0, 1);
    if (rc == LUA_OK)
        rc = luaL_loadfilex(L, box_of(L)->file, "t");
    if (rc == LUA_OK) {
        ks_sandbox_begin(L, budget);
        rc = lua_pcall(L, 0, 1, 1);
    }
    return rc;
}
