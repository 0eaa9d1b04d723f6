// compare.h - the page of a report (index.html): one run's summary in
// human units, or several runs side by side against the first.
//
// report.c reads the result files and draws the plots; this module writes
// the words and tables around them: a headline per run, the verdict on each
// objective, the summary grouped (runfile.h's ks_run_key_kind: group and
// unit per key) with each key's note, and the scenario - every field for
// one run, the fields that differ for several. A figure the first run has
// is compared as (run - first) / first.
#ifndef KS_COMPARE_H
#define KS_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

// One run as the page shows it; everything is borrowed.
struct ks_compare_run {
    const char *path;     // the result file, as given
    const char *label;    // its name in plot legends ("1: default")
    const json_t *fig;    // summary figures (ks_run_read_summary)
    const json_t *notes;  // key -> note; empty for a file written before notes were stored
    const json_t *scenario; // field path -> text; NULL: the file has no /scenario
};

// One plot of the page: DIR/NAME.png and DIR/NAME.svg.
struct ks_compare_plot {
    const char *name, *title, *caption;
};

// Writes DIR/index.html (whole or not at all) for n runs (the first is the
// reference) and their plots. KS_OK, or KS_EIO with "DIR: reason" in err.
int ks_compare_page(const char *dir, const struct ks_compare_run *runs, size_t n,
                    const struct ks_compare_plot *plots, size_t n_plots, char *err, size_t len);

// One or two sentences on a run from its figures: output throughput, TPOT
// P50 and P99 (and the objectives' verdict when set), L1 hit rate, stall
// share and what bounded it (ks_run_bound).
void ks_compare_headline(const json_t *fig, char *buf, size_t len);

// The verdict on objective `name` (slo_NAME with slo_margin_NAME in fig),
// as "TPOT P99 <= 20 ms: 14.1 ms, met by 29.5%" or "..., missed by 12.0%".
void ks_compare_objective(const json_t *fig, const char *name, char *buf, size_t len);

// b against the reference a: "+12.3%" ((b - a) / |a|, one decimal), "=" when
// equal, "from 0" when a is 0, "" when either is not a number.
void ks_compare_change(double a, double b, char *buf, size_t len);

// Writes s escaped for HTML text.
void ks_compare_html_text(FILE *f, const char *s);

#endif
