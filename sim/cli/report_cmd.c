// report_cmd.c - `kvstrata report RESULT.h5 [RESULT.h5 ...] | SWEEP_DIR -o DIR`:
// plots and an index.html of one run's result, of several compared, or of a
// sweep (report.h).
#include "report_cmd.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"
#include "status.h"

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// Whether ks_cli_parse would print the help (it looks for these anywhere).
static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

static int run_report(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    enum { SLOTS = KS_REPORT_MAX_RUNS + 1 }; // one more, to say that it is one too many
    static const char unset[] = "";          // a result not given (compared by address)
    const char *files[SLOTS] = {NULL};
    const char *out = NULL, *gnuplot = "gnuplot";
    // NOTE: the parser takes one option per positional argument; the results
    // after the first are optional arguments, left out of the help, whose
    // usage line names them once.
    struct ks_cli_opt opts[2 + SLOTS] = {
        {.name = "result", .kind = KS_CLI_ARG, .out = &files[0], .arg = "RESULT.h5 [RESULT.h5 ...] | SWEEP_DIR"},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "DIR", .short_name = 'o',
         .help = "folder for index.html, the images, their data and scripts (required)", .hide_default = 1},
        {.name = "gnuplot", .kind = KS_CLI_STRING, .out = &gnuplot, .arg = "PROGRAM",
         .help = "gnuplot program to run"},
    };
    for (size_t i = 1; i < SLOTS; i++) {
        files[i] = unset;
        opts[2 + i] = (struct ks_cli_opt){.name = "result", .kind = KS_CLI_ARG, .out = &files[i]};
    }
    if (wants_help(argc, argv)) {
        ks_cli_help(cmd, opts, 3, stdout);
        return KS_EXIT_OK;
    }
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (!out)
        return ks_cli_usage_error(cmd, "-o DIR is required");
    size_t n = 1;
    while (n < SLOTS && files[n] != unset)
        n++;
    if (n > KS_REPORT_MAX_RUNS)
        return ks_cli_usage_error(cmd, "more than %d results: a report compares at most %d", KS_REPORT_MAX_RUNS,
                                  KS_REPORT_MAX_RUNS);
    for (size_t i = 0; i < n; i++)
        if (!files[i][0])
            return ks_cli_usage_error(cmd, "result %zu is an empty name", i + 1);
    for (size_t i = 0; n > 1 && i < n; i++)
        if (is_dir(files[i]))
            return ks_cli_usage_error(cmd, "%s is a folder (a sweep?): a sweep is reported alone, not with other "
                                      "results", files[i]);
    static char err[1024];
    int rc = n == 1 && is_dir(files[0]) ? ks_report_sweep(files[0], out, gnuplot, err, sizeof err)
                                        : ks_report_compare(files, n, out, gnuplot, err, sizeof err);
    if (rc != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    printf("%s/index.html\n", out);
    return KS_EXIT_OK;
}

const struct ks_cli_cmd ks_report_cmd = {
    .name = "report",
    .summary = "Report a run's result, several compared, or a sweep: headline, summary in units, plots (HTML, PNG, "
               "SVG)",
    .about = "Reads RESULT.h5 (kvstrata run -o) and writes DIR/index.html: a headline (output\n"
             "throughput, TPOT P50/P99, the objectives' verdict, L1 hit rate, stall share and\n"
             "what bounded the run, judged from its figures), each objective met or missed\n"
             "and by how much, the summary grouped (load, latency, objectives, cache,\n"
             "migration, compute, the simulation) in ms, tokens/s, %, GB and GB/s with each\n"
             "figure's description, the resolved scenario, and six plots, each as PNG and\n"
             "SVG: per-request TPOT and largest ITL over the finished requests, decode step\n"
             "time and stall, batch size, hit rate per tier, tier occupancy (all over\n"
             "simulated time, binned in 100 intervals) and the utilisation of the six busiest\n"
             "links. The data behind each plot are in DIR/data, the gnuplot scripts in\n"
             "DIR/plots (gnuplot from the Debian package gnuplot-nox renders them). Prints the\n"
             "path of index.html. A result written before kvstrata stored the figures'\n"
             "descriptions and the scenario is reported without them.\n"
             "Given several results (at most 8), compares them with the first: the scenario\n"
             "fields that differ, each summary figure of each run with its change against the\n"
             "first ((run - first) / first), and the same plots with a line per run (for the\n"
             "links, each run's busiest). Every result is checked before DIR is made.\n"
             "Given a sweep folder (kvstrata sweep -o SWEEP_DIR) alone, plots each metric\n"
             "(output throughput, TPOT P50/P99, ITL P99, TTFT P99, L1 hit rate, stall\n"
             "fraction) against each axis, one line per combination of the other axes, and\n"
             "P99 TPOT against output throughput over all complete points with their Pareto\n"
             "frontier, and lists the points in index.html.\n",
    .run = run_report,
};
