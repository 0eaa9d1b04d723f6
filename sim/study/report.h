// report.h - plots of a run's result file, or of several compared: gnuplot
// scripts, PNG and SVG images, and an index.html around them (compare.h).
//
// From a result (results/README.md): the distribution over finished
// requests of their TPOT and largest ITL (/requests), step time, batch size,
// hit rate per tier and tier occupancy over time (/steps, all GPUs binned by
// time), and the utilisation of the busiest links over time
// (/link_samples). Data go to DIR/data/*.dat, the scripts to DIR/plots/*.gp,
// the images to DIR/*.png and DIR/*.svg; gnuplot (Debian gnuplot-nox)
// renders them. Several results share each plot, a line per run and series.
// Every image index.html references exists when a report returns KS_OK; a
// result that cannot be read leaves no folder behind.
//
// A sweep report (ks_report_sweep) plots the sweep's summaries the same way.
#ifndef KS_REPORT_H
#define KS_REPORT_H

#include <stddef.h>

// The most results one report compares (a line colour each).
#define KS_REPORT_MAX_RUNS 8

// Writes the report of result file `h5` into directory `dir` (created if
// missing): a headline, the summary in units with each key's note, the
// scenario, the plots. KS_OK, or a status with "FILE: reason" in err.
// gnuplot is the program run ("gnuplot" when NULL).
int ks_report_write(const char *h5, const char *dir, const char *gnuplot, char *err, size_t len);

// Writes the report of n result files (1 to KS_REPORT_MAX_RUNS) compared,
// the first the reference: the scenario fields that differ, every summary
// figure of each with its change against the first, and every plot with a
// line per run (the links: each run's busiest). Every file is read and
// checked before dir is made. KS_OK, or a status with "FILE: reason" in err.
int ks_report_compare(const char *const *h5, size_t n, const char *dir, const char *gnuplot, char *err,
                      size_t len);

// Writes the report of a sweep folder (kvstrata sweep -o SWEEP_DIR: its
// sweep.json and each complete point's JSON summary) into `dir`: for each
// axis, each metric (output throughput, TPOT P50/P99, ITL P99, TTFT P99, L1
// hit rate, stall fraction) against the axis, one line per combination of the other axes;
// and P99 TPOT against throughput over all points with their Pareto
// frontier (the points no other point beats on both). KS_OK, or a status
// with the reason in err.
int ks_report_sweep(const char *sweep_dir, const char *dir, const char *gnuplot, char *err, size_t len);

#endif
