// test_luatab.c - the Lua binding as a sandbox (README: "The Lua sandbox";
// issue 16, classes 1 and 2): the table walk refuses cycles and deep nesting
// by path and line, only the safe libraries are open, include composes files,
// every call has an instruction budget and every state a memory cap, and
// math.random is seeded. The hostile inputs are tests/fixtures/hostile/.
#define _POSIX_C_SOURCE 200809L // mkdtemp
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tmpdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "luatab.h"
#include "scenario.h"
#include "status.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define HOSTILE KS_SOURCE_DIR "/tests/fixtures/hostile/"
#define TS KS_SOURCE_DIR "/tests/fixtures/scenarios/"

static char err[1 << 14];
static char dir[64];

// Writes a scratch Lua file in the test's folder; returns its path (static).
static const char *scratch(const char *name, const char *text)
{
    const char *path = ks_tmpdir_file(dir, name, text);
    assert_non_null(path);
    return path;
}

static struct ks_luatab *loaded(const char *file)
{
    struct ks_luatab *t = NULL;
    int st = ks_luatab_load(file, ks_scenario_lua_dirs(), &t, err, sizeof err);
    if (st != KS_OK)
        fail_msg("%s refused (%d): %s", file, st, err);
    return t;
}

// Refused with KS_EINVAL, and the message contains want.
static void refused(const char *file, const char *want)
{
    struct ks_luatab *t = NULL;
    int st = ks_luatab_load(file, ks_scenario_lua_dirs(), &t, err, sizeof err);
    assert_null(t);
    if (st != KS_EINVAL || !strstr(err, want))
        fail_msg("%s: status %d, message:\n%s\nexpected: %s", file, st, err, want);
}

// A table that contains itself is refused at the field that closes the
// cycle, with the line of the nearest field the text writes; a table met
// twice side by side is no cycle.
static void cycles(void **state)
{
    (void)state;
    refused(HOSTILE "self_ref.lua",
            "self_ref.lua:10: cache.again: the table contains itself: this is the table at cache");
    refused(HOSTILE "self_ref_indirect.lua",
            "platform.ssd.back: the table contains itself: this is the table at platform");
    refused(scratch("root.lua", "local t = {name = 'x', list = {}}\nt.list[1] = t\nreturn t\n"),
            "list[1]: the table contains itself: this is the whole table the file returns");
    struct ks_luatab *t = loaded(scratch("shared.lua", "local d = {kind = 'constant', value = 8}\n"
                                                       "return {workload = {prompt_tokens = d, output_tokens = d}}\n"));
    const struct ks_luatab *a = ks_luatab_find(t, "workload.prompt_tokens.value");
    const struct ks_luatab *b = ks_luatab_find(t, "workload.output_tokens.value");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->i, 8);
    assert_int_equal(b->i, 8);
    ks_luatab_free(t);
}

// Tables nest at most KS_LUATAB_MAX_DEPTH deep: the root and 63 tables
// below it load; one more is refused by path; 200 (hostile/deep.lua) too.
static void depth(void **state)
{
    (void)state;
    struct ks_luatab *t = loaded(scratch("d63.lua", "local r = {} local n = r\n"
                                                    "for _ = 1, 63 do n.x = {} n = n.x end\nreturn r\n"));
    int levels = 0;
    for (const struct ks_luatab *n = t; n && n->type == KS_LUATAB_TABLE; n = ks_luatab_get(n, "x"))
        levels++;
    assert_int_equal(levels, KS_LUATAB_MAX_DEPTH);
    ks_luatab_free(t);
    refused(scratch("d64.lua", "local r = {} local n = r\nfor _ = 1, 64 do n.x = {} n = n.x end\nreturn r\n"),
            "tables nested more than 64 deep");
    // built by code: the line that returns the table (no field of the text names the culprit)
    refused(HOSTILE "deep.lua", "deep.lua:9: model.inner.inner.inner");
    refused(HOSTILE "deep.lua", "tables nested more than 64 deep (a table built by code; this line returns it)");
    refused(HOSTILE "deep.lua", "tables nested more than 64 deep");
}

// The tree a table becomes takes at most KS_LUATAB_MAX_BYTES: a table or a
// string met many times is copied each time, so sharing cannot hide a tree of
// 2^30 fields (hostile/shared_bomb.lua) or a 1 MB string met 100 times; a
// string met twice, and 10^4 numbers, load (shipped files take under 30 KB).
static void copied_size(void **state)
{
    (void)state;
    refused(HOSTILE "shared_bomb.lua", "the table takes more than 16 MB once copied");
    refused(scratch("strings.lua", "local s = ('x'):rep(1000000) local t = {}\n"
                                   "for i = 1, 100 do t[i] = s end\nreturn {list = t}\n"),
            "the table takes more than 16 MB once copied");
    struct ks_luatab *t = loaded(scratch("fine.lua", "local s = ('x'):rep(1000000) local t = {}\n"
                                                     "for i = 1, 10000 do t[i] = i end\n"
                                                     "return {list = t, a = s, b = s}\n"));
    const struct ks_luatab *last = ks_luatab_find(t, "list.[10000]");
    assert_non_null(last);
    assert_int_equal(last->i, 10000);
    assert_int_equal(strlen(ks_luatab_find(t, "b")->s), 1000000);
    ks_luatab_free(t);
}

// Only base (without dofile, loadfile), string (without dump), table, math
// and utf8; naming a removed library is an error that names it, at its line.
static void libraries(void **state)
{
    (void)state;
    struct ks_luatab *t = loaded(scratch("libs.lua", "return {\n"
                                                     "  io = rawget(_G, 'io') == nil, os = rawget(_G, 'os') == nil,\n"
                                                     "  debug = rawget(_G, 'debug') == nil,\n"
                                                     "  package = rawget(_G, 'package') == nil,\n"
                                                     "  coroutine = rawget(_G, 'coroutine') == nil,\n"
                                                     "  dofile = rawget(_G, 'dofile') == nil,\n"
                                                     "  loadfile = rawget(_G, 'loadfile') == nil,\n"
                                                     "  dump = string.dump == nil,\n"
                                                     "  safe = string.format('%d', 7) .. table.concat({'a', 'b'})\n"
                                                     "    .. math.floor(2.5) .. utf8.char(72) .. load('return 1')(),\n"
                                                     "  missing = undefined_global == nil,\n"
                                                     "}\n"));
    static const char *const gone[] = {"io", "os", "debug", "package", "coroutine", "dofile", "loadfile", "dump",
                                       "missing"};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++) {
        const struct ks_luatab *n = ks_luatab_get(t, gone[i]);
        assert_non_null(n);
        if (n->type != KS_LUATAB_BOOL || !n->b)
            fail_msg("%s is still there", gone[i]);
    }
    assert_string_equal(ks_luatab_get(t, "safe")->s, "7ab2H1");
    ks_luatab_free(t);
    refused(HOSTILE "os_execute.lua", "os_execute.lua:2: 'os' is not available: kvstrata runs Lua in a sandbox");
    refused(HOSTILE "os_exit.lua", "os_exit.lua:3: 'os' is not available");
    refused(HOSTILE "io_open_write.lua", "io_open_write.lua:2: 'io' is not available");
    refused(HOSTILE "io_popen.lua", "io_popen.lua:2: 'io' is not available");
    refused(HOSTILE "loadlib.lua", "loadlib.lua:2: 'package' is not available");
    refused(HOSTILE "dofile.lua", "dofile.lua:3: 'dofile' is not available");
    refused(HOSTILE "load_binary.lua", "load_binary.lua:3: attempt to load a binary chunk (mode is 't')");
    refused(scratch("load_mode.lua", "return load('return {}', 'x', 'b')()\n"),
            "load: mode 'b' refused: only text chunks load");
    refused(HOSTILE "require_other.lua", "require_other.lua:2: require 'os': no such kvstrata helper");
    refused(scratch("require_path.lua", "return require '../lua/kvstrata'\n"), "only kvstrata's helpers load");
    refused(scratch("seed_clock.lua", "math.randomseed()\nreturn {}\n"), "bad argument #1 to 'randomseed'");
    // no side effect: the files the hostile scenarios would have written do not exist
    assert_int_equal(access("kvstrata_hostile_io_open.txt", F_OK), -1);
    assert_int_equal(access("kvstrata_hostile_os_execute.txt", F_OK), -1);
}

// include runs a file relative to the including file's folder (nested
// includes resolve from their own folder); require "kvstrata" still works.
static void include(void **state)
{
    (void)state;
    struct ks_luatab *t = loaded(TS "lua_bad.lua"); // includes lua_lru.lua, which includes policies.lua
    assert_string_equal(ks_luatab_get(t, "name")->s, "lua_lru");
    // the root lists the files included, each once, as opened (-o must not replace them)
    assert_int_equal(t->n_included, 2);
    assert_string_equal(t->included[0], TS "lua_lru.lua");
    assert_string_equal(t->included[1], TS "policies.lua");
    assert_string_equal(ks_luatab_find(t, "sparse.policy")->s, "random");
    assert_string_equal(ks_luatab_find(t, "cache.evict")->s, "function");
    ks_luatab_free(t);
    t = loaded(scratch("inc.lua", "local ks = require 'kvstrata'\n"
                                  "local s = ks.include('" KS_SOURCE_DIR "/tests/fixtures/scenarios/policies.lua')\n"
                                  "s.cache.l1 = ks.percent(50)\nreturn s\n"));
    assert_string_equal(ks_luatab_find(t, "cache.l1")->s, "50%");
    ks_luatab_free(t);
    refused(scratch("inc_self.lua", "return include('inc_self.lua')\n"), "includes nested more than 16 deep");
    refused(scratch("inc_txt.lua", "return include('/etc/passwd')\n"), "only .lua files can be included");
    refused(scratch("inc_none.lua", "return include('none.lua')\n"), "include: cannot open");
}

// ks.merge (lua/kvstrata.lua): over's fields replace base's, tables merge
// field by field, and ks.delete removes a field (README "Variants"):
// switching arrivals to a trace leaves no rate behind.
static void merge_delete(void **state)
{
    (void)state;
    struct ks_luatab *t = loaded(scratch("merge.lua",
        "local ks = require 'kvstrata'\n"
        "local base = {workload = {arrival = ks.poisson(4), requests = 9}, slo = {ttft_p99 = '1s'}}\n"
        "local to_trace = {workload = {arrival = {kind = 'trace', file = 'a.csv', rate = ks.delete}}}\n"
        "return {deleted = ks.merge(base, to_trace),\n"
        "        kept = ks.merge(base, {workload = {arrival = {kind = 'trace', file = 'a.csv'}}}),\n"
        "        whole = ks.merge(base, {slo = ks.delete, workload = {requests = ks.delete}}),\n"
        "        absent = ks.merge(base, {sparse = {fit = ks.delete}, slo = {tpot = ks.delete}}),\n"
        "        frozen = pcall(function() ks.delete.x = 1 end)}\n"));
    const struct ks_luatab *d = ks_luatab_get(t, "deleted");
    assert_string_equal(ks_luatab_find(d, "workload.arrival.kind")->s, "trace");
    assert_string_equal(ks_luatab_find(d, "workload.arrival.file")->s, "a.csv");
    assert_null(ks_luatab_find(d, "workload.arrival.rate"));
    assert_int_equal(ks_luatab_find(d, "workload.requests")->i, 9);
    assert_non_null(ks_luatab_find(ks_luatab_get(t, "kept"), "workload.arrival.rate")); // without ks.delete it stays
    const struct ks_luatab *w = ks_luatab_get(t, "whole");
    assert_null(ks_luatab_get(w, "slo"));
    assert_null(ks_luatab_find(w, "workload.requests"));
    assert_non_null(ks_luatab_find(w, "workload.arrival.rate"));
    // deleting what is not there adds nothing, not even an empty table
    const struct ks_luatab *a = ks_luatab_get(t, "absent");
    assert_null(ks_luatab_find(a, "sparse.fit"));
    assert_null(ks_luatab_find(a, "slo.tpot"));
    assert_string_equal(ks_luatab_find(a, "slo.ttft_p99")->s, "1s");
    assert_false(ks_luatab_get(t, "frozen")->b);
    ks_luatab_free(t);
}

// string.find, match, gmatch and gsub under the pattern guard (sandbox.h)
// answer as Lua's own do, errors inside gsub's function included; a
// pattern that never ends is a CLI test (scenario_hostile_pattern_bomb): the
// guard ends the process.
static void patterns(void **state)
{
    (void)state;
    struct ks_luatab *t = loaded(scratch("pat.lua",
        "local keys = {}\n"
        "for k, v in ('a=1, bb=22'):gmatch('(%w+)=(%d+)') do keys[#keys + 1] = k .. v end\n"
        "local up, n = ('x y'):gsub('%w', function(c) return c:upper() end)\n"
        "local ok, e = pcall(string.gsub, 'abc', '%w', function() error('inner', 0) end)\n"
        "local i, j = ('hello'):find('l+')\n"
        "return {keys = table.concat(keys, ' '), up = up, n = n, e = tostring(ok) .. ' ' .. e,\n"
        "        i = i, j = j, m = ('k=v'):match('(%w)='), plain = ('a.b'):find('.', 1, true)}\n"));
    assert_string_equal(ks_luatab_get(t, "keys")->s, "a1 bb22");
    assert_string_equal(ks_luatab_get(t, "up")->s, "X Y");
    assert_int_equal(ks_luatab_get(t, "n")->i, 2);
    assert_string_equal(ks_luatab_get(t, "e")->s, "false inner");
    assert_int_equal(ks_luatab_get(t, "i")->i, 3);
    assert_int_equal(ks_luatab_get(t, "j")->i, 4);
    assert_string_equal(ks_luatab_get(t, "m")->s, "k");
    assert_int_equal(ks_luatab_get(t, "plain")->i, 2);
    ks_luatab_free(t);
    // a budget that runs out inside gsub's function still ends the load
    refused(scratch("pat_loop.lua", "string.gsub('abc', '%w', function() while true do end end)\nreturn {}\n"),
            "pat_loop.lua:1: instruction budget of 100000000 exhausted");
}

// An endless loop stops at the budget of its call, naming the file and line,
// even when it catches every error with pcall; a memory bomb at the cap.
static void limits(void **state)
{
    (void)state;
    refused(HOSTILE "loop.lua", "loop.lua:4: instruction budget of 100000000 exhausted");
    refused(HOSTILE "loop_pcall.lua", "loop_pcall.lua:5: instruction budget of 100000000 exhausted");
    refused(HOSTILE "memory_bomb.lua", "memory_bomb.lua: memory cap of 256 MB exceeded");
    // a lowered cap (the fuzz targets') stops the bomb there and still loads a shipped file; 0 restores it
    ks_luatab_set_mem_cap((size_t)1 << 20);
    refused(HOSTILE "memory_bomb.lua", "memory_bomb.lua: memory cap of 1 MB exceeded");
    refused(scratch("big.lua", "local s = string.rep('x', 2 << 20)\nreturn {}\n"), "big.lua: memory cap of 1 MB exceeded");
    ks_luatab_free(loaded(KS_SOURCE_DIR "/scenarios/default.lua"));
    ks_luatab_set_mem_cap(0);
    ks_luatab_free(loaded(scratch("big.lua", "local s = string.rep('x', 2 << 20)\nreturn {}\n")));
    // garbage that meets the cap is collected and the allocation retried: no cap error, the file's own
    refused(scratch("churn.lua", "for _ = 1, 6 do local s = string.rep('x', 100 << 20) end\nerror('boom')\n"),
            "churn.lua:2: boom");

    struct ks_luafn *f = ks_luafn_load(HOSTILE "evict_loop.lua", ks_scenario_lua_dirs(), "cache.evict", 1, err,
                                       sizeof err);
    if (!f)
        fail_msg("evict_loop.lua: %s", err);
    const char *names[] = {"heat"};
    double v[] = {1}, out = -1;
    for (int call = 0; call < 2; call++) { // each call has its own budget, and fails alone
        err[0] = '\0';
        assert_int_equal(ks_luafn_call(f, names, v, 1, &out, err, sizeof err), KS_EINVAL);
        if (!strstr(err, "evict_loop.lua:7: instruction budget of 1000000 exhausted"))
            fail_msg("call %d: %s", call, err);
    }
    ks_luafn_free(f);

    const char *bomb = "return {f = function() local s = 'x' while true do s = s .. s end end}\n";
    f = ks_luafn_load(scratch("fn_bomb.lua", bomb), NULL, "f", 1, err, sizeof err);
    assert_non_null(f);
    assert_int_equal(ks_luafn_call(f, names, v, 1, &out, err, sizeof err), KS_EINVAL);
    if (!strstr(err, "fn_bomb.lua: memory cap of 256 MB exceeded"))
        fail_msg("%s", err);
    ks_luafn_free(f);
}

// math.random is seeded: a scenario that draws loads the same twice; a
// policy draws the same sequence with the same seed, another with another.
static void random_seeded(void **state)
{
    (void)state;
    struct ks_luatab *a = loaded(HOSTILE "scenario_random.lua"), *b = loaded(HOSTILE "scenario_random.lua");
    assert_int_equal(ks_luatab_find(a, "workload.prompt_tokens")->i, ks_luatab_find(b, "workload.prompt_tokens")->i);
    assert_int_equal(ks_luatab_find(a, "workload.output_tokens")->i, ks_luatab_find(b, "workload.output_tokens")->i);
    ks_luatab_free(a);
    ks_luatab_free(b);

    double seq[3][8];
    const uint64_t seeds[3] = {42, 42, 43};
    for (int k = 0; k < 3; k++) {
        struct ks_luafn *f = ks_luafn_load(HOSTILE "evict_random.lua", ks_scenario_lua_dirs(), "cache.evict",
                                           seeds[k], err, sizeof err);
        if (!f)
            fail_msg("evict_random.lua: %s", err);
        const char *names[] = {"heat"};
        double v[] = {1};
        for (int i = 0; i < 8; i++)
            assert_int_equal(ks_luafn_call(f, names, v, 1, &seq[k][i], err, sizeof err), KS_OK);
        ks_luafn_free(f);
    }
    assert_memory_equal(seq[0], seq[1], sizeof seq[0]);
    assert_memory_not_equal(seq[0], seq[2], sizeof seq[0]);
}

static int setup(void **state)
{
    (void)state;
    return ks_tmpdir_make(dir, sizeof dir, "ks-luatab");
}

static int teardown(void **state)
{
    (void)state;
    return ks_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cycles), cmocka_unit_test(depth),  cmocka_unit_test(copied_size), cmocka_unit_test(libraries),
        cmocka_unit_test(include), cmocka_unit_test(patterns), cmocka_unit_test(limits),
        cmocka_unit_test(random_seeded), cmocka_unit_test(merge_delete),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
