// main.c - the kvstrata command: finds the command named by the first words
// of argv and runs it.
//
// Built a second time with KS_DEVICE_TOOL as `kvstrata-device`: `info` and
// `bench kernels` alone, linked without the simulator's libraries (SimGrid,
// Lua, HDF5, liburing) and with jansson static, so that the binary built
// here runs on a GPU machine that has none of them (kernels/device_check.sh).
//
// Commands are named by one or two words ("info", "bench cache"); a first
// word shared by several commands is a group, whose --help lists them. Only
// commands that exist are listed. Exit status: 0 success, 1 failure,
// 2 usage error (nothing on stdout).
#include <stdio.h>
#include <string.h>

#include "bench_kernels_cmd.h"
#include "cli.h"
#include "info_cmd.h"
#ifndef KS_DEVICE_TOOL
#include "bench_cache_cmd.h"
#include "calib_cmd.h"
#include "report_cmd.h"
#include "run_cmd.h"
#include "scenario_cmd.h"
#include "plan_cmd.h"
#include "sweep_cmd.h"
#include "trace_stats_cmd.h"
#include "trace_model_cmd.h"
#include "trace_record_cmd.h"
#include "validate_cmd.h"
#endif

static const struct ks_cli_cmd *const commands[] = {
#ifdef KS_DEVICE_TOOL
    &ks_bench_kernels_cmd,
    &ks_info_cmd,
#else
    &ks_run_cmd,
    &ks_report_cmd,
    &ks_bench_cache_cmd,
    &ks_bench_kernels_cmd,
    &ks_info_cmd,
    &ks_scenario_check_cmd,
    &ks_sweep_cmd,
    &ks_plan_cmd,
    &ks_trace_stats_cmd,
    &ks_trace_record_cmd,
    &ks_trace_model_cmd,
    &ks_calib_host_cmd,
    &ks_calib_check_cmd,
    &ks_calib_gpu_cmd,
    &ks_validate_cmd,
#endif
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

// Length of the first word of a command name.
static size_t word_len(const char *name)
{
    const char *sp = strchr(name, ' ');
    return sp ? (size_t)(sp - name) : strlen(name);
}

static int is_group(const char *word)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strchr(commands[i]->name, ' ') && word_len(commands[i]->name) == strlen(word) &&
            strncmp(commands[i]->name, word, strlen(word)) == 0)
            return 1;
    return 0;
}

// Lists the commands whose name starts with `group ` (every command when
// group is NULL).
static void list_commands(FILE *f, const char *group)
{
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const char *name = commands[i]->name;
        if (group && !(word_len(name) == strlen(group) && strncmp(name, group, strlen(group)) == 0 &&
                       name[strlen(group)] == ' '))
            continue;
        fprintf(f, "  %-14s %s\n", name, commands[i]->summary);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: kvstrata <command> [options]\n"
               "\n"
               "kvstrata simulates LLM sparse-attention decoding with a hierarchical KV cache.\n"
               "\n"
               "Commands:\n");
    list_commands(f, NULL);
    fprintf(f, "\n"
               "Options:\n"
               "  -h, --help     show this help and exit\n"
               "  --version      print the version and exit\n"
               "\n"
               "Run 'kvstrata <command> --help' for a command's options.\n");
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "kvstrata: %s '%s'\nTry 'kvstrata --help'.\n", what, arg);
    return KS_EXIT_USAGE;
}

static int group_usage(const char *group, FILE *f)
{
    fprintf(f, "Usage: kvstrata %s <command> [options]\n\nCommands:\n", group);
    list_commands(f, group);
    fprintf(f, "\nRun 'kvstrata %s <command> --help' for a command's options.\n", group);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        usage(stderr);
        return KS_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        usage(stdout);
        return KS_EXIT_OK;
    }
    if (strcmp(a, "--version") == 0) {
        printf("kvstrata %s\n", KS_VERSION);
        return KS_EXIT_OK;
    }
    if (a[0] == '-')
        return usage_error("unknown option", a);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, a) == 0)
            return commands[i]->run(commands[i], argc - 2, argv + 2);
    if (!is_group(a))
        return usage_error("unknown command", a);
    if (argc < 3) {
        fprintf(stderr, "kvstrata %s: missing command\n", a);
        group_usage(a, stderr);
        return KS_EXIT_USAGE;
    }
    const char *b = argv[2];
    if (strcmp(b, "--help") == 0 || strcmp(b, "-h") == 0) {
        group_usage(a, stdout);
        return KS_EXIT_OK;
    }
    char name[128];
    snprintf(name, sizeof name, "%s %s", a, b);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i]->run(commands[i], argc - 3, argv + 3);
    fprintf(stderr, "kvstrata %s: unknown %s '%s'\n", a, b[0] == '-' ? "option" : "command", b);
    group_usage(a, stderr);
    return KS_EXIT_USAGE;
}
