// calib_print.h - what the calib commands print of their measured points
// (calib/measure.h), fits and goals (calib/check.h): aligned tables on a
// FILE, and the same figures as jansson values for --json.
//
// The JSON builders return a new value (NULL when memory runs out, or pass
// through json_object_set_new, which takes NULL as a failure); the setters
// add one object under key and return 0 or non-zero.
#ifndef KS_CALIB_PRINT_H
#define KS_CALIB_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "check.h"
#include "fit.h"
#include "json.h"
#include "measure.h"

// A table of points under title: bytes, threads or queue depth, seconds,
// bandwidth, the slowest-fastest window and the spread; with_model (DRAM,
// wake-ups) adds the prediction and its error, with_sim (SSD) the
// simulated time and its error (the SSD always shows its model).
void ks_calib_print_dram(FILE *f, const char *title, const struct ks_measure_dram_pt *p, size_t n, int with_model);
void ks_calib_print_ssd(FILE *f, const char *title, const struct ks_measure_ssd_pt *p, size_t n, int with_sim);
void ks_calib_print_wake(FILE *f, const char *title, const struct ks_measure_wake_pt *p, size_t n, int with_model);

// The same points as a JSON array of objects.
json_t *ks_calib_print_dram_json(const struct ks_measure_dram_pt *p, size_t n, int with_model);
json_t *ks_calib_print_ssd_json(const struct ks_measure_ssd_pt *p, size_t n, int with_sim);
json_t *ks_calib_print_wake_json(const struct ks_measure_wake_pt *p, size_t n, int with_model);

// A fit as {lat_s, bw_bytes_per_s, worst_residual, rms_residual} (SSD: and op_s) under key.
int ks_calib_print_copy_fit(json_t *o, const char *key, const struct ks_fit_copy *f);
int ks_calib_print_ssd_fit(json_t *o, const char *key, const struct ks_fit_ssd *f);

// A goal's line on stdout ("  NAME: worst ...: met"), what said after the goal (" (informative)" or "").
void ks_calib_print_goal(const struct ks_check_goal *g, const char *what);

// The line beside a goal that says how noisy its measurement was (windows per point).
void ks_calib_print_noise(const struct ks_check_goal *g, int windows);

// A goal as {model, points, worst_rel_error, goal, met[, worst_window_spread, points_spread_beyond_goal]}.
json_t *ks_calib_print_goal_json(const struct ks_check_goal *g);

#endif
