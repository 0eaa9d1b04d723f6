// calib_print.c - the tables and JSON of the calib commands' measured
// points, fits and goals.

#include "calib_print.h"

#include <stdint.h>

json_t *ks_calib_print_dram_json(const struct ks_measure_dram_pt *p, size_t n, int with_model)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        int err = !o;
        err |= ks_json_set_int(o, "bytes", (int64_t)p[i].bytes);
        err |= ks_json_set_int(o, "threads", p[i].threads);
        err |= ks_json_set_real(o, "seconds_per_copy", p[i].r.t);
        err |= ks_json_set_real(o, "bytes_per_s", p[i].r.bytes_per_s);
        err |= ks_json_set_real(o, "bytes_per_s_min", p[i].lo);
        err |= ks_json_set_real(o, "bytes_per_s_max", p[i].hi);
        err |= ks_json_set_real(o, "window_spread", ks_measure_dram_spread(&p[i]));
        if (with_model) {
            err |= ks_json_set_real(o, "predicted_s", p[i].model);
            err |= ks_json_set_real(o, "rel_error", p[i].err);
        }
        if (err || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *ks_calib_print_ssd_json(const struct ks_measure_ssd_pt *p, size_t n, int with_sim)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        int err = !o;
        err |= ks_json_set_int(o, "bytes", (int64_t)p[i].bytes);
        err |= ks_json_set_int(o, "qd", p[i].qd);
        err |= ks_json_set_int(o, "requests", (int64_t)p[i].r.requests);
        err |= ks_json_set_real(o, "seconds_per_request", p[i].r.t);
        err |= ks_json_set_real(o, "bytes_per_s", p[i].r.bytes_per_s);
        err |= ks_json_set_real(o, "bytes_per_s_min", p[i].lo);
        err |= ks_json_set_real(o, "bytes_per_s_max", p[i].hi);
        err |= ks_json_set_real(o, "window_spread", ks_measure_ssd_spread(&p[i]));
        err |= ks_json_set_real(o, "iops", (double)p[i].r.requests / p[i].r.elapsed);
        err |= ks_json_set_real(o, "predicted_s", p[i].model);
        err |= ks_json_set_real(o, "rel_error", p[i].err);
        if (with_sim) {
            err |= ks_json_set_real(o, "simulated_s", p[i].sim);
            err |= ks_json_set_real(o, "sim_rel_error", p[i].sim_err);
        }
        if (err || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *ks_calib_print_wake_json(const struct ks_measure_wake_pt *p, size_t n, int with_model)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        int err = !o;
        err |= ks_json_set_real(o, "idle_s", p[i].idle);
        err |= ks_json_set_int(o, "samples", p[i].r.samples);
        err |= ks_json_set_real(o, "seconds", p[i].r.median);
        err |= ks_json_set_real(o, "p10_s", p[i].r.p10);
        err |= ks_json_set_real(o, "p90_s", p[i].r.p90);
        err |= ks_json_set_real(o, "min_s", p[i].r.min);
        err |= ks_json_set_real(o, "max_s", p[i].r.max);
        err |= ks_json_set_real(o, "spread", ks_measure_wake_spread(&p[i]));
        if (with_model) {
            err |= ks_json_set_real(o, "predicted_s", p[i].model);
            err |= ks_json_set_real(o, "rel_error", p[i].err);
        }
        if (err || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int ks_calib_print_copy_fit(json_t *o, const char *key, const struct ks_fit_copy *f)
{
    json_t *x = json_object();
    if (!x)
        return -1;
    int err = ks_json_set_real(x, "lat_s", f->lat);
    err |= ks_json_set_real(x, "bw_bytes_per_s", f->bw);
    err |= ks_json_set_real(x, "worst_residual", f->worst);
    err |= ks_json_set_real(x, "rms_residual", f->rms);
    return err | json_object_set_new(o, key, x);
}

int ks_calib_print_ssd_fit(json_t *o, const char *key, const struct ks_fit_ssd *f)
{
    json_t *x = json_object();
    if (!x)
        return -1;
    int err = ks_json_set_real(x, "lat_s", f->lat);
    err |= ks_json_set_real(x, "op_s", f->op);
    err |= ks_json_set_real(x, "bw_bytes_per_s", f->bw);
    err |= ks_json_set_real(x, "worst_residual", f->worst);
    err |= ks_json_set_real(x, "rms_residual", f->rms);
    return err | json_object_set_new(o, key, x);
}

void ks_calib_print_dram(FILE *f, const char *title, const struct ks_measure_dram_pt *p, size_t n, int with_model)
{
    fprintf(f, "%s\n  %10s %8s %14s %12s %15s %7s%s\n", title, "bytes", "threads", "s/copy", "GB/s", "windows_GB/s",
            "spread", with_model ? "   predicted_s   error" : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %10zu %8u %14.6e %12.3f %7.3f-%-7.3f %6.1f%%", p[i].bytes, p[i].threads, p[i].r.t,
                p[i].r.bytes_per_s / 1e9, p[i].lo / 1e9, p[i].hi / 1e9, 100 * ks_measure_dram_spread(&p[i]));
        if (with_model)
            fprintf(f, "  %12.6e %+6.1f%%", p[i].model, 100 * p[i].err);
        fputc('\n', f);
    }
}

void ks_calib_print_ssd(FILE *f, const char *title, const struct ks_measure_ssd_pt *p, size_t n, int with_sim)
{
    fprintf(f, "%s\n  %8s %4s %12s %10s %17s %7s %10s %12s %7s%s\n", title, "bytes", "qd", "s/request", "MB/s",
            "windows_MB/s", "spread", "IOPS", "model_s", "error", with_sim ? "    simulated_s   error" : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %8zu %4u %12.4e %10.1f %8.1f-%-8.1f %6.1f%% %10.0f %12.4e %+6.1f%%", p[i].bytes, p[i].qd,
                p[i].r.t, p[i].r.bytes_per_s / 1e6, p[i].lo / 1e6, p[i].hi / 1e6, 100 * ks_measure_ssd_spread(&p[i]),
                (double)p[i].r.requests / p[i].r.elapsed, p[i].model, 100 * p[i].err);
        if (with_sim)
            fprintf(f, "  %12.4e %+6.1f%%", p[i].sim, 100 * p[i].sim_err);
        fputc('\n', f);
    }
}

void ks_calib_print_wake(FILE *f, const char *title, const struct ks_measure_wake_pt *p, size_t n, int with_model)
{
    fprintf(f, "%s\n  %9s %8s %10s %17s %19s %7s%s\n", title, "idle_s", "samples", "median_us", "P10-P90_us",
            "min-max_us", "spread", with_model ? "  predicted_us   error" : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %9.3g %8u %10.1f %8.1f-%-8.1f %9.1f-%-9.1f %6.1f%%", p[i].idle, p[i].r.samples,
                1e6 * p[i].r.median, 1e6 * p[i].r.p10, 1e6 * p[i].r.p90, 1e6 * p[i].r.min, 1e6 * p[i].r.max,
                100 * ks_measure_wake_spread(&p[i]));
        if (with_model)
            fprintf(f, "  %12.1f %+6.1f%%", 1e6 * p[i].model, 100 * p[i].err);
        fputc('\n', f);
    }
}

json_t *ks_calib_print_goal_json(const struct ks_check_goal *g)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int err = ks_json_set_str(o, "model", g->name);
    err |= ks_json_set_int(o, "points", g->n);
    err |= ks_json_set_real(o, "worst_rel_error", g->worst);
    err |= ks_json_set_real(o, "goal", g->goal);
    err |= ks_json_set_bool(o, "met", g->met);
    if (g->has_spread) {
        err |= ks_json_set_real(o, "worst_window_spread", g->worst_spread);
        err |= ks_json_set_int(o, "points_spread_beyond_goal", g->noisy);
    }
    if (err) {
        json_decref(o);
        return NULL;
    }
    return o;
}

void ks_calib_print_noise(const struct ks_check_goal *g, int windows)
{
    printf("  measurement noise: %d of %d points' %d windows differ by more than %.0f%% (worst %.1f%%); there a "
           "%.0f%% agreement is luck either way\n\n", g->noisy, g->n, windows, 100 * g->goal, 100 * g->worst_spread,
           100 * g->goal);
}

void ks_calib_print_goal(const struct ks_check_goal *g, const char *what)
{
    printf("  %s: worst %.1f%% over %d points, goal %.0f%%%s: %s\n", g->name, 100 * g->worst, g->n, 100 * g->goal, what,
           g->met ? "met" : "NOT met");
}
