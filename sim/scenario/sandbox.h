// sandbox.h - kvstrata's Lua sandbox: a Lua state that runs untrusted
// scenario, sweep and policy files with only the safe libraries and within
// limits (luatab.h says what a file may use; README "The Lua sandbox").
//
// Limits, each ending in a clear error that names the file: an instruction
// budget per call (a count hook), a memory cap per state (the allocator), and
// a CPU-time limit on string patterns. The last exists because Lua's pattern
// matcher (string.find, match, gmatch, gsub) is C code that the count hook
// never interrupts, and a pattern such as ("a*"):rep(40) .. "b" backtracks
// for hours on 40 characters: when one call has used KS_LUA_PATTERN_SECONDS
// of CPU time, the process prints FILE:LINE: string.find: ... on stderr and
// exits with status 2. Nothing can be unwound safely from inside the matcher,
// and kvstrata's outputs are written whole or not at all, so exiting leaves
// no partial file. The limit uses the process's virtual timer (SIGVTALRM):
// Lua runs on one thread.
//
// Only luatab.c uses this header.
#ifndef KS_SANDBOX_H
#define KS_SANDBOX_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

// One Lua state's limits and what broke them. It is the state's allocator
// data, so every C function reaches it through lua_getallocf; it must not
// move while the state lives.
struct ks_sandbox {
    const char *file;     // the file the state runs (messages)
    const char *lua_dirs; // where require finds kvstrata's helpers
    size_t used;          // bytes the state holds
    size_t cap;           // bytes the state may hold (KS_LUA_MEM_CAP, or the fuzz targets' lower cap)
    long long left;       // instructions left in the current call
    long long budget;     // instructions per call
    int includes;         // include() calls in progress
    int capped;           // an allocation was refused by the cap
    int exhausted;        // the budget ran out (why holds the message)
    char why[512];
    char **included;      // the files include() ran, as opened, each once
    size_t n_included;
};

// A new state on b, for `file`, with `lua_dirs` (';'-separated, may be NULL)
// searched by require, holding at most `cap` bytes. NULL when out of memory.
lua_State *ks_sandbox_open(struct ks_sandbox *b, const char *file, const char *lua_dirs, size_t cap);

// Closes L with its budget spent (a finalizer the script left stops at its
// first instruction) and frees b->included.
void ks_sandbox_close(lua_State *L);

// Opens the safe libraries in L, with math.random seeded with seed, and runs
// b->file under `budget` instructions. Leaves the message handler at index 1
// and, on success, the file's first result on top. A LUA_* status.
int ks_sandbox_run(lua_State *L, uint64_t seed, long long budget);

// Starts a call: a fresh budget of `budget` instructions, no failure recorded.
void ks_sandbox_begin(lua_State *L, long long budget);

// The message for a failed call (rc != LUA_OK, its error on top of L) in
// err; KS_EINVAL, or KS_ENOMEM for a memory error that is not the cap's.
int ks_sandbox_error(lua_State *L, int rc, char *err, size_t len);

// The message handler for lua_pcall: the message with a traceback.
int ks_sandbox_msghandler(lua_State *L);

#endif
