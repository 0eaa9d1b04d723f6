// luatab.h - runs a Lua file and turns the table it returns into a plain C tree.
//
// This is kvstrata's Lua binding: with its sandbox (sandbox.h), the only
// code that calls Lua. The file runs under lua_pcall with a traceback message
// handler, so a Lua error never leaves as a longjmp; it becomes a status and
// a message. The table becomes a tree of struct ks_luatab nodes that owns all
// its memory, and the Lua state is closed before ks_luatab_load returns.
//
// The sandbox, as Redis runs user scripts: every file runs with only the base
// library (without dofile and loadfile; load takes text chunks only; print
// writes to stderr), string (without dump), table, math and utf8. There is no
// io, os, debug, package or coroutine: naming one is an error that says so.
// require loads only kvstrata's helpers (NAME.lua in lua_dirs), and include
// "FILE.lua" runs another file, named relative to the folder of the file that
// calls it, and returns its value. math.random is seeded (KS_LUA_SEED when
// loading a file; the run's seed for a kept function), so runs repeat. Each
// call into Lua (running the file, a sweep's points function, one call of a
// kept function) has an instruction budget, and each state a memory cap; a
// call that exceeds one fails with "instruction budget of N exhausted" or
// "memory cap of N MB exceeded", naming the file (and the line). String
// patterns, which that budget cannot interrupt, have a CPU-time limit
// (KS_LUA_PATTERN_SECONDS, sandbox.h): past it the process exits with 2.
//
// The table walk refuses a table that contains itself, tables nested more
// than KS_LUATAB_MAX_DEPTH deep, and a table whose C tree would take more
// than KS_LUATAB_MAX_BYTES (a table or string met twice is copied twice: a
// loop that puts a table twice into a new one, thirty times over, describes
// 2^30 nodes), as FILE:LINE: path: reason (the line of the nearest field above
// the culprit that the text writes; when the text writes none, the table was
// built by code, and the line is the one that returns it).
//
// Lines: each node carries the line where its field is written, found by
// scanning the file's text for `name =` inside table constructors under the
// parent's key (comments and strings skipped): a field at path a.b.c is
// placed on the first line where `c =` appears inside a constructor that
// follows `b =` inside one that follows `a =`. A table built by code (a loop,
// a helper that sets fields) has no such text, and its nodes have line 0.
#ifndef KS_LUATAB_H
#define KS_LUATAB_H

#include <stddef.h>
#include <stdint.h>

// Sandbox limits (README: "The Lua sandbox"), far above what shipped files
// use: each runs in under a thousand instructions and 40 KB; a policy call
// takes tens of instructions. 10^8 instructions take about 0.3 s.
#define KS_LUA_MEM_CAP (256u << 20)         // bytes a Lua state may hold
#define KS_LUA_LOAD_BUDGET 100000000LL      // instructions: running a file, or a sweep's points function
#define KS_LUA_CALL_BUDGET 1000000LL        // instructions: one call of a kept function (cache.evict...)
#define KS_LUA_SEED 1                       // math.random's seed while a file is loaded
#define KS_LUA_PATTERN_SECONDS 5            // CPU seconds of one string pattern call (sandbox.h)
enum { KS_LUATAB_MAX_DEPTH = 64 };          // tables nested deeper are refused
#define KS_LUATAB_MAX_BYTES ((size_t)16 << 20) // bytes the C tree of one table may take (shipped files: under 30 KB)

// Sets the instruction budget of running a file (and of a sweep's points
// function) for the rest of the process; 0 restores KS_LUA_LOAD_BUDGET. Only
// the fuzz targets (tests/fuzz/) call it: 10^8 instructions take 0.3 s, too
// long for one fuzzing input. Not thread-safe: call it before any load.
void ks_luatab_set_load_budget(long long instructions);

// Lowers the memory cap of every Lua state opened afterwards to `bytes` (at
// most KS_LUA_MEM_CAP; 0 restores it). Only the fuzz targets call it: a
// scenario that fills 256 MB touches that much fresh memory, and how long the
// kernel takes to fault it in varies tenfold on a virtual machine, which put
// one such input past fuzz_scenario's 2 s limit. Not thread-safe, as above.
void ks_luatab_set_mem_cap(size_t bytes);

enum ks_luatab_type {
    KS_LUATAB_BOOL,
    KS_LUATAB_INT,
    KS_LUATAB_REAL,
    KS_LUATAB_STRING,
    KS_LUATAB_TABLE,
    KS_LUATAB_OTHER, // a value no scenario holds (function, userdata...); s names its type
};

struct ks_luatab {
    char *key;                      // field name; "[n]" for the integer key n
    enum ks_luatab_type type;
    int b;                          // KS_LUATAB_BOOL
    int64_t i;                      // KS_LUATAB_INT
    double d;                       // KS_LUATAB_REAL; also set for INT
    char *s;                        // KS_LUATAB_STRING (NUL-terminated), KS_LUATAB_OTHER
    struct ks_luatab *child, *next; // a table's fields, by line then key; siblings
    char *file;                     // where the value was written ("--set" for overrides)
    int line;                       // 1-based line in file; 0 = unknown
    char *source, *kind;            // profile figures: where the figure comes from; NULL otherwise
    char **included;                // the root only: the files include() ran (as opened), each once
    size_t n_included;
};

// Runs `file` (text chunks only) in the sandbox, with `lua_dirs`
// (';'-separated directories, may be NULL) searched by require, and converts
// the table it returns into *out (the caller frees it with ks_luatab_free).
// Returns KS_OK, KS_EINVAL with the Lua message (and its traceback) in err
// for a file that cannot be read, does not compile, fails, runs out of its
// budget or memory cap, or returns no table (or a table the walk refuses), or
// KS_ENOMEM.
int ks_luatab_load(const char *file, const char *lua_dirs, struct ks_luatab **out, char *err, size_t len);

// As ks_luatab_load, and before the table is converted, each top-level
// field named in `calls` (NULL-terminated) that holds a function is called,
// still under lua_pcall, with one argument: a function that appends its
// argument to a list. The field then holds that list, followed by the
// elements of the list the function returns, if it returns one. A field
// that holds no function is left as it is. Sweep files use it for `points`.
int ks_luatab_load_calling(const char *file, const char *lua_dirs, const char *const *calls,
                           struct ks_luatab **out, char *err, size_t len);

// A new node (key may be NULL) with file "--set" or the given file, line 0;
// NULL when out of memory.
struct ks_luatab *ks_luatab_new(const char *key, enum ks_luatab_type type, const char *file);

// Frees a node, its children and its siblings after it; NULL is a no-op.
void ks_luatab_free(struct ks_luatab *t);

// The field `key` of table t; NULL when t is not a table or has no such field.
struct ks_luatab *ks_luatab_get(const struct ks_luatab *t, const char *key);

// The field at a dotted path under t ("platform.ssd.lat"); NULL when absent.
struct ks_luatab *ks_luatab_find(const struct ks_luatab *t, const char *path);

// The type's name as Lua says it ("number", "string", "table"...).
const char *ks_luatab_type_name(const struct ks_luatab *t);

// A function a Lua file's table holds (a scenario's cache.evict), kept with
// its own Lua state for calls during a simulation. Every call runs under
// lua_pcall: a Lua error becomes a status and a message, never a longjmp.
struct ks_luafn;

// Runs `file` as ks_luatab_load does, with math.random seeded with `seed`,
// and keeps the function at the dotted `path` of the table it returns. NULL
// with the reason in err. Each call has KS_LUA_CALL_BUDGET instructions.
struct ks_luafn *ks_luafn_load(const char *file, const char *lua_dirs, const char *path, uint64_t seed, char *err,
                               size_t len);

// Calls the function with one table argument whose fields names[i] hold
// values[i] (the same table each call: the function must not keep it) and
// stores its number result in *out. KS_OK, KS_EINVAL (a Lua error, or no
// number returned) or KS_ENOMEM, with the message in err.
int ks_luafn_call(struct ks_luafn *f, const char *const *names, const double *values, size_t n, double *out,
                  char *err, size_t len);

void ks_luafn_free(struct ks_luafn *f);

#endif
