// fuzz_scenario.c - libFuzzer target: the scenario loader (sim/scenario),
// as `kvstrata scenario check` and `run` call it.
//
// An input is one of two kinds:
//   - Lua source: written to a .lua file and loaded with ks_scenario_load;
//   - a first line "--set" (a Lua comment), then one PATH=VALUE string per
//     line: the --set overrides, applied in order to the fixed base scenario
//     tests/fixtures/scenarios/base.lua (KS_FUZZ_BASE).
// The load budget is lowered to 10^6 instructions (ks_luatab_set_load_budget)
// so that an endless loop costs milliseconds, not 0.3 s, and the memory cap
// to 32 MB (ks_luatab_set_mem_cap; shipped files hold under 40 KB, and a
// table can still outgrow KS_LUATAB_MAX_BYTES), so that a scenario that fills
// memory costs about 20 ms, not 140 ms of mostly page faults, whose cost
// varies tenfold on a virtual machine (a CI run stopped one such input at
// fuzz_scenario's 2 s limit; it ran in 141 ms alone).
#include "fuzz_util.h"

#include "luatab.h"
#include "scenario.h"

enum { MAX_SETS = 64, FUZZ_LOAD_BUDGET = 1000000 };
#define FUZZ_MEM_CAP ((size_t)32 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ks_luatab_set_load_budget(FUZZ_LOAD_BUDGET);
    ks_luatab_set_mem_cap(FUZZ_MEM_CAP);
    return 0;
}

// The --set strings of text (after its first line), each a NUL-terminated
// line of the copy in buf; their count.
static size_t split_sets(char *buf, const char **sets)
{
    size_t n = 0;
    char *p = strchr(buf, '\n');
    while (p && n < MAX_SETS) {
        *p++ = '\0';
        char *end = strchr(p, '\n');
        if (end || *p)
            sets[n++] = p;
        p = end;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char set_mark[] = "--set\n";
    char err[4096];
    struct ks_scenario *s = NULL;
    if (size >= sizeof set_mark - 1 && memcmp(data, set_mark, sizeof set_mark - 1) == 0) {
        char *buf = malloc(size + 1);
        if (!buf)
            return 0;
        memcpy(buf, data, size);
        buf[size] = '\0'; // a NUL inside ends its line's string early, as argv would
        const char *sets[MAX_SETS];
        struct ks_scenario_params p = {.sets = sets, .n_sets = split_sets(buf, sets)};
        if (ks_scenario_load(KS_FUZZ_BASE, &p, &s, err, sizeof err) == KS_OK)
            ks_scenario_free(s);
        free(buf);
        return 0;
    }
    char path[4200];
    fuzz_write(data, size, ".lua", path, sizeof path);
    if (ks_scenario_load(path, NULL, &s, err, sizeof err) == KS_OK)
        ks_scenario_free(s);
    unlink(path);
    return 0;
}
