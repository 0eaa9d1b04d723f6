// report_cmd.c - `kvstrata report RESULT.h5|SWEEP_DIR -o DIR`: plots and an
// index.html of one run's result or of a sweep (report.h).
#include "report_cmd.h"

#include <stdio.h>
#include <sys/stat.h>

#include "report.h"
#include "status.h"

static int run_report(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *out = NULL, *gnuplot = "gnuplot";
    const struct ks_cli_opt opts[] = {
        {.name = "result", .kind = KS_CLI_ARG, .out = &file, .arg = "RESULT.h5|SWEEP_DIR"},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "DIR", .short_name = 'o',
         .help = "folder for index.html, the images, their data and scripts (required)", .hide_default = 1},
        {.name = "gnuplot", .kind = KS_CLI_STRING, .out = &gnuplot, .arg = "PROGRAM",
         .help = "gnuplot program to run"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (!out)
        return ks_cli_usage_error(cmd, "-o DIR is required");
    static char err[1024];
    struct stat st;
    int sweep = stat(file, &st) == 0 && S_ISDIR(st.st_mode);
    if ((sweep ? ks_report_sweep(file, out, gnuplot, err, sizeof err) : ks_report_write(file, out, gnuplot, err, sizeof err)) !=
        KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    printf("%s/index.html\n", out);
    return KS_EXIT_OK;
}

const struct ks_cli_cmd ks_report_cmd = {
    .name = "report",
    .summary = "Plot a run's result or a sweep: TPOT, hit rates, occupancy, links; metrics by axis (PNG, SVG, HTML)",
    .about = "Reads RESULT.h5 (kvstrata run -o) and writes DIR/index.html with the run's summary\n"
             "and six plots, each as PNG and SVG: per-request TPOT and largest ITL over the\n"
             "finished requests, decode\n"
             "step time and stall, batch size, hit rate per tier, tier occupancy (all over\n"
             "simulated time, binned in 100 intervals) and the utilisation of the six busiest\n"
             "links. The data behind each plot are in DIR/data, the gnuplot scripts in\n"
             "DIR/plots (gnuplot from the Debian package gnuplot-nox renders them). Prints the\n"
             "path of index.html.\n"
             "Given a sweep folder (kvstrata sweep -o SWEEP_DIR), plots each metric\n"
             "(output throughput, TPOT P50/P99, ITL P99, TTFT P99, L1 hit rate, stall\n"
             "fraction) against each axis, one line per combination of the other axes, and\n"
             "P99 TPOT against output throughput over all complete points with their Pareto\n"
             "frontier, and lists\n"
             "the points in index.html.\n",
    .run = run_report,
};
