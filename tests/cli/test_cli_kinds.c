// test_cli_kinds.c - the option kinds `scenario check` added to the parser:
// a repeatable string (--set) and a positional argument.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "cli.h"

static int dummy_run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    (void)cmd, (void)argc, (void)argv;
    return 0;
}

static const struct ks_cli_cmd cmd = {.name = "test", .summary = "Test", .run = dummy_run};

struct vals {
    const char *file;
    const char *items[3];
    struct ks_cli_strings set;
    int flag;
};

static int parse(const char *line, struct vals *v, int *status)
{
    *v = (struct vals){0};
    v->set = (struct ks_cli_strings){.v = v->items, .cap = 3};
    const struct ks_cli_opt opts[] = {
        {.name = "file", .kind = KS_CLI_ARG, .out = &v->file, .arg = "FILE"},
        {.name = "set", .kind = KS_CLI_STRINGS, .out = &v->set, .arg = "K=V", .help = "a setting"},
        {.name = "flag", .kind = KS_CLI_FLAG, .out = &v->flag, .help = "a flag"},
    };
    static char buf[256];
    char *argv[32];
    int argc = 0;
    strncpy(buf, line, sizeof buf - 1);
    for (char *w = strtok(buf, " "); w && argc < 32; w = strtok(NULL, " "))
        argv[argc++] = w;
    return ks_cli_parse(&cmd, opts, sizeof opts / sizeof opts[0], argc, argv, status);
}

static void repeatable_and_positional(void **state)
{
    (void)state;
    struct vals v;
    int status;
    assert_int_equal(parse("a.lua --set x=1 --set=y=2 --flag --set z=3", &v, &status), 1);
    assert_string_equal(v.file, "a.lua");
    assert_int_equal(v.set.n, 3);
    assert_string_equal(v.items[0], "x=1");
    assert_string_equal(v.items[1], "y=2"); // the first '=' ends the option's name
    assert_string_equal(v.items[2], "z=3");
    assert_int_equal(parse("--flag a.lua", &v, &status), 1); // anywhere
    assert_string_equal(v.file, "a.lua");
    assert_int_equal(v.set.n, 0);
    const char *usage[] = {"", "--flag", "a.lua b.lua", "a.lua --set", "a.lua --set=", "a.lua --file x",
                           "a.lua --set a --set b --set c --set d", "-"};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        status = -1;
        assert_int_equal(parse(usage[i], &v, &status), 0);
        assert_int_equal(status, KS_EXIT_USAGE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(repeatable_and_positional)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
