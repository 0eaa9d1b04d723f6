// test_sandbox_shipped.c - what the shipped Lua files cost in the sandbox
// (README "The Lua sandbox"): every scenario, sweep, plan, profile and
// published scenario kvstrata ships (scenarios/*.lua, scenarios/*/*.lua,
// calib/profiles/*.lua, results/published/*.lua) loads as kvstrata loads it (ks_luatab_load_calling, a
// sweep's `points` called too) in under 3000 instructions per call and
// under 80 KB of Lua memory at the state's peak. (README said a thousand
// and 40 KB until this test: the scenarios and published scenarios need
// 1000-2999 instructions, most of them in lua/models.lua's citations, and
// peak at 67-77 KB; plans, sweeps, validation scenarios and profiles stay
// under 1000 and 35 KB.)
//
// Instructions: the count hook (sandbox.c) takes its budget in steps of 1000
// instructions, so a budget of 3000 refuses exactly the calls that run 3000
// instructions or more. Memory: the link wraps lua_newstate
// (-Wl,--wrap=lua_newstate) to put a counting allocator in front of the
// sandbox's own, which counts bytes as the sandbox does (its `used`) and
// keeps the peak; the sandbox's allocator data is passed on unchanged.
#define _POSIX_C_SOURCE 200809L // mkdtemp, glob
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luatab.h"
#include "tmpdir.h"
#include "scenario.h"
#include "status.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif

// README: "each shipped file needs under 3000" (instructions)
#define MAX_INSTRUCTIONS 3000
// README: "the shipped files use under 80 KB" (KB as 1000 bytes: the stricter reading)
#define MAX_BYTES 80000

static glob_t shipped_files;
static char err[1 << 14];
static char dir[] = "/tmp/ks-sandbox-XXXXXX";

// ---- the counting allocator ---------------------------------------------------

static lua_Alloc inner;   // the sandbox's allocator (box_alloc)
static size_t used, peak; // bytes the newest state holds; its peak

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    size_t old = ptr ? osize : 0; // without ptr, osize is a type tag
    void *p = inner(ud, ptr, osize, nsize);
    if (nsize == 0)
        used -= old;
    else if (p)
        used = used - old + nsize;
    if (used > peak)
        peak = used;
    return p;
}

lua_State *__real_lua_newstate(lua_Alloc f, void *ud);
lua_State *__wrap_lua_newstate(lua_Alloc f, void *ud);
lua_State *__wrap_lua_newstate(lua_Alloc f, void *ud)
{
    inner = f;
    used = peak = 0;
    return __real_lua_newstate(counting_alloc, ud);
}

// ---- loading ------------------------------------------------------------------

static const char *const calls[] = {"points", NULL};

static int load(const char *file)
{
    struct ks_luatab *t = NULL;
    err[0] = '\0';
    int st = ks_luatab_load_calling(file, ks_scenario_lua_dirs(), calls, &t, err, sizeof err);
    ks_luatab_free(t);
    return st;
}

static const char *scratch(const char *name, const char *text)
{
    const char *path = ks_tmpdir_file(dir, name, text);
    assert_non_null(path);
    return path;
}

// The two checks bite: a file that runs 3000 instructions is refused under
// the budget, and one that holds 80 KB of string peaks above the bound.
static void controls(void **state)
{
    (void)state;
    ks_luatab_set_load_budget(MAX_INSTRUCTIONS);
    assert_int_equal(load(scratch("spin.lua", "local n = 0\nfor i = 1, 3000 do n = n + i end\nreturn {n = n}\n")),
                     KS_EINVAL);
    assert_non_null(strstr(err, "instruction budget of 3000 exhausted"));
    ks_luatab_set_load_budget(0);
    assert_int_equal(load(scratch("big.lua", "return {s = #string.rep('x', 80000)}\n")), KS_OK);
    assert_true(peak >= MAX_BYTES);
}

// Every shipped file loads within both bounds.
static void shipped(void **state)
{
    (void)state;
    static const char *const globs[] = {KS_SOURCE_DIR "/scenarios/*.lua", KS_SOURCE_DIR "/scenarios/*/*.lua",
                                        KS_SOURCE_DIR "/calib/profiles/*.lua",
                                        KS_SOURCE_DIR "/results/published/*.lua"};
    for (size_t g = 0; g < sizeof globs / sizeof *globs; g++)
        assert_int_equal(glob(globs[g], g ? GLOB_APPEND : 0, NULL, &shipped_files), 0);
    size_t n_files = shipped_files.gl_pathc;
    char **files = shipped_files.gl_pathv;
    assert_true(n_files >= 30); // 14 + 8 scenarios, 7 profiles, 6 published at the time of writing
    int bad = 0;
    for (size_t i = 0; i < n_files; i++) {
        ks_luatab_set_load_budget(MAX_INSTRUCTIONS);
        int st = load(files[i]);
        ks_luatab_set_load_budget(0);
        if (st != KS_OK) {
            print_error("%s: refused under %d instructions: %s\n", files[i], MAX_INSTRUCTIONS, err);
            bad++;
            continue;
        }
        // the memory of a load that the small budget did not cut short: load again under the default budget
        assert_int_equal(load(files[i]), KS_OK);
        print_message("%s: peak %zu bytes\n", files[i], peak);
        if (peak >= MAX_BYTES) {
            print_error("%s: %zu bytes of Lua memory at the peak, not under %d\n", files[i], peak, MAX_BYTES);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    globfree(&shipped_files);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(controls), cmocka_unit_test(shipped)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
