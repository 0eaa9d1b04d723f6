// sweep_merge.c - checking point results and merging them (see sweep_merge.h).
#define _POSIX_C_SOURCE 200809L // stat

#include "sweep_merge.h"

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomicfile.h"
#include "h5read.h"
#include "results.h"
#include "runfile.h"
#include "status.h"
#include "sweep.h"

enum { TEXT = 32 }; // bytes of a text cell in the HDF5 table (KS_F_S32)

// Copies s into a text cell, cut to fit.
static void put_text(unsigned char *cell, const char *s)
{
    size_t n = strlen(s);
    memcpy(cell, s, n < TEXT ? n : TEXT - 1);
}

// Does the attribute `key` of g hold v (a JSON scalar)? Its value as a
// number goes to *num when it is one. Read through h5read.h: an attribute
// of many values, a damaged type or an absurd string size is no match.
static int attr_matches(hid_t g, const char *key, const json_t *v, double *num)
{
    char why[256];
    if (json_is_string(v)) {
        size_t n = strlen(json_string_value(v)) + 2; // one more: a longer string is no match
        char *s = malloc(n);
        int ok = s && ks_h5read_attr_str(g, key, s, n, why, sizeof why) == KS_OK &&
                 strcmp(s, json_string_value(v)) == 0;
        free(s);
        return ok;
    }
    if (json_is_null(v)) { // a figure the run did not measure: NaN in the file (runfile.c)
        double d;
        *num = NAN;
        return ks_h5read_attr_num(g, key, &d, why, sizeof why) == KS_OK && isnan(d);
    }
    if (!json_is_number(v) && !json_is_boolean(v))
        return 0;
    double d, want = json_is_boolean(v) ? json_is_true(v) : json_number_value(v);
    if (ks_h5read_attr_num(g, key, &d, why, sizeof why) != KS_OK)
        return 0;
    *num = d;
    // the report prints 12 significant digits
    return d == want || fabs(d - want) <= 1e-10 * fmax(fabs(d), fabs(want));
}

int ks_sweep_merge_check(const char *h5, const char *json, json_t **figures, char *why, size_t len)
{
    if (figures)
        *figures = NULL;
    struct stat st;
    if (stat(h5, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, len, "%s: no such file", h5);
        return 0;
    }
    json_error_t je;
    json_t *report = json_load_file(json, JSON_REJECT_DUPLICATES, &je);
    if (!report || !json_is_object(report)) {
        snprintf(why, len, "%s: %s", json, report ? "not a JSON object" : je.text);
        json_decref(report);
        return 0;
    }
    uint64_t bytes;
    char cause[256];
    hid_t f = ks_h5read_open(h5, &bytes, cause, sizeof cause);
    hid_t g = f >= 0 && H5Lexists(f, "/summary", H5P_DEFAULT) > 0 ? H5Gopen2(f, "/summary", H5P_DEFAULT) : -1;
    json_t *figs = json_object();
    int ok = g >= 0 && figs;
    if (f < 0)
        snprintf(why, len, "%s: %s", h5, cause);
    else if (g < 0)
        snprintf(why, len, "%s: no /summary", h5);
    if (ok && ks_run_check_complete(f, cause, sizeof cause) != KS_OK) {
        snprintf(why, len, "%s: %s", h5, cause);
        ok = 0;
    }
    const json_t *res = json_object_get(report, "result");
    const char *rs = json_is_string(res) ? json_string_value(res) : NULL;
    const char *base = strrchr(h5, '/'), *rbase = rs ? strrchr(rs, '/') : NULL;
    base = base ? base + 1 : h5;
    rbase = rbase ? rbase + 1 : rs;
    if (ok && (!rbase || strcmp(base, rbase) != 0)) { // the report of another file
        snprintf(why, len, "%s: its report names another result", json);
        ok = 0;
    }
    const char *key;
    json_t *v;
    json_object_foreach(report, key, v)
    {
        if (!ok)
            break;
        if (strcmp(key, "result") == 0)
            continue;
        double num = NAN;
        if (!attr_matches(g, key, v, &num)) {
            snprintf(why, len, "%s: /summary %s differs from the report %s", h5, key, json);
            ok = 0;
        } else if (!json_is_string(v) &&
                   json_object_set_new(figs, key, isnan(num) ? json_null() : json_real(num)) != 0) {
            snprintf(why, len, "out of memory");
            ok = 0;
        }
    }
    if (g >= 0)
        H5Gclose(g);
    if (f >= 0)
        H5Fclose(f);
    json_decref(report);
    if (ok && figures)
        *figures = figs;
    else
        json_decref(figs);
    return ok;
}

// ---- the merged table --------------------------------------------------------

struct col {
    const char *name;
    int is_number;
    size_t offset;
};

struct row {
    const char *id;
    const json_t *values; // column -> value
    json_t *figures;
};

static void csv_cell(FILE *f, const char *s, int first)
{
    if (!first)
        fputc(',', f);
    if (!s[strcspn(s, ",\"\n\r")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v)
{
    char buf[64] = "";
    if (isfinite(v))
        ks_sweep_number_text(v, buf, sizeof buf);
    fputc(',', f);
    fputs(buf, f);
}

// The text of a value (a JSON string or number) for a text column.
static void value_text(const json_t *v, char *buf, size_t len)
{
    buf[0] = '\0';
    if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_number(v))
        ks_sweep_number_text(json_number_value(v), buf, len);
}

static int write_csv(const char *path, const struct col *cols, size_t n_cols, const char *const *keys,
                     size_t n_keys, const struct row *rows, size_t n_rows, char *err, size_t len)
{
    struct ks_atomicfile a;
    if (ks_atomicfile_open(&a, path, NULL, err, len) != KS_OK)
        return KS_EIO;
    FILE *f = a.f;
    csv_cell(f, "id", 1);
    for (size_t i = 0; i < n_cols; i++)
        csv_cell(f, cols[i].name, 0);
    for (size_t i = 0; i < n_keys; i++)
        csv_cell(f, keys[i], 0);
    fputc('\n', f);
    for (size_t r = 0; r < n_rows; r++) {
        csv_cell(f, rows[r].id, 1);
        for (size_t i = 0; i < n_cols; i++) {
            const json_t *v = json_object_get(rows[r].values, cols[i].name);
            char text[4096];
            value_text(v, text, sizeof text);
            csv_cell(f, text, 0);
        }
        for (size_t i = 0; i < n_keys; i++) {
            const json_t *v = json_object_get(rows[r].figures, keys[i]);
            csv_number(f, json_is_number(v) ? json_number_value(v) : NAN);
        }
        fputc('\n', f);
    }
    if (ks_atomicfile_commit(&a, NULL, 0) != KS_OK) {
        snprintf(err, len, "%s: cannot write", path);
        return KS_EIO;
    }
    return KS_OK;
}

static int write_h5(const char *path, const json_t *manifest, struct col *cols, size_t n_cols,
                    const char *const *keys, size_t n_keys, const struct row *rows, size_t n_rows, char *err,
                    size_t len)
{
    size_t n_fields = 1 + n_cols + n_keys;
    struct ks_field *fields = calloc(n_fields, sizeof *fields);
    if (!fields) {
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    size_t off = 0;
    fields[0] = (struct ks_field){"id", KS_F_S32, 0, "point id (p<index>-<hash of its settings>)"};
    off += TEXT;
    for (size_t i = 0; i < n_cols; i++) {
        cols[i].offset = off;
        fields[1 + i] = (struct ks_field){cols[i].name, cols[i].is_number ? KS_F_F64 : KS_F_S32, off,
                                          cols[i].is_number ? "swept value; NaN: not set by this point"
                                                            : "swept value as text (cut to 31 bytes; the CSV has it whole)"};
        off += cols[i].is_number ? 8 : TEXT;
    }
    for (size_t i = 0; i < n_keys; i++) {
        fields[1 + n_cols + i] = (struct ks_field){keys[i], KS_F_F64, off, NULL};
        off += 8;
    }
    unsigned char *rec = calloc(1, off);
    struct ks_results *h = rec ? ks_results_open(path, err, len) : NULL;
    if (!h) {
        if (!rec)
            snprintf(err, len, "out of memory");
        free(rec);
        free(fields);
        return rec ? KS_EIO : KS_ENOMEM;
    }
    const json_t *name = json_object_get(manifest, "name"), *base = json_object_get(manifest, "base");
    int st = ks_results_attr_str(h, "/", "sweep", json_is_string(name) ? json_string_value(name) : "");
    if (st == KS_OK)
        st = ks_results_attr_str(h, "/", "base", json_is_string(base) ? json_string_value(base) : "");
    if (st == KS_OK)
        st = ks_results_attr_int(h, "/", "points", (int64_t)json_array_size(json_object_get(manifest, "points")));
    struct ks_table *t = st == KS_OK ? ks_results_table(h, "/summary", fields, n_fields, off, 0) : NULL;
    for (size_t r = 0; t && r < n_rows; r++) {
        memset(rec, 0, off);
        put_text(rec, rows[r].id);
        for (size_t i = 0; i < n_cols; i++) {
            const json_t *v = json_object_get(rows[r].values, cols[i].name);
            if (cols[i].is_number) {
                double d = json_is_number(v) ? json_number_value(v) : NAN;
                memcpy(rec + cols[i].offset, &d, sizeof d);
            } else {
                char text[4096];
                value_text(v, text, sizeof text);
                put_text(rec + cols[i].offset, text);
            }
        }
        for (size_t i = 0; i < n_keys; i++) {
            const json_t *v = json_object_get(rows[r].figures, keys[i]);
            double d = json_is_number(v) ? json_number_value(v) : NAN;
            memcpy(rec + fields[1 + n_cols + i].offset, &d, sizeof d);
        }
        if (ks_results_append(t, rec, 1) != KS_OK)
            t = NULL;
    }
    free(rec);
    free(fields);
    if (!t) {
        ks_results_abort(h); // the reason is in err
        return KS_EIO;
    }
    return ks_results_commit(h);
}

int ks_sweep_merge(const char *dir, const json_t *manifest, struct ks_sweep_merged *out, char *err, size_t len)
{
    *out = (struct ks_sweep_merged){0};
    const json_t *columns = json_object_get(manifest, "columns"), *points = json_object_get(manifest, "points");
    if (!json_is_array(columns) || !json_is_array(points)) {
        snprintf(err, len, "%s/sweep.json: no columns or points (is it a sweep's manifest?)", dir);
        return KS_EINVAL;
    }
    size_t n_pts = json_array_size(points), n_cols = json_array_size(columns);
    struct col *cols = calloc(n_cols + 1, sizeof *cols);
    struct row *rows = calloc(n_pts + 1, sizeof *rows);
    json_t *keys = json_array(), *missing = json_array();
    int st = cols && rows && keys && missing ? KS_OK : KS_ENOMEM;
    for (size_t i = 0; i < n_cols && st == KS_OK; i++) {
        cols[i].name = json_string_value(json_array_get(columns, i));
        if (!cols[i].name) {
            snprintf(err, len, "%s/sweep.json: columns[%zu] is not a string", dir, i);
            st = KS_EINVAL;
        }
    }
    size_t n_rows = 0;
    for (size_t p = 0; p < n_pts && st == KS_OK; p++) {
        const json_t *pt = json_array_get(points, p);
        const char *id = json_string_value(json_object_get(pt, "id"));
        if (!id || strchr(id, '/') || strlen(id) >= TEXT) {
            snprintf(err, len, "%s/sweep.json: points[%zu] has no valid id", dir, p);
            st = KS_EINVAL;
            break;
        }
        char h5[4096], js[4096], why[512];
        snprintf(h5, sizeof h5, "%s/points/%s.h5", dir, id);
        snprintf(js, sizeof js, "%s/points/%s.json", dir, id);
        json_t *figs = NULL;
        if (!ks_sweep_merge_check(h5, js, &figs, why, sizeof why)) {
            if (json_array_append_new(missing, json_string(id)) != 0)
                st = KS_ENOMEM;
            continue;
        }
        rows[n_rows++] = (struct row){id, json_object_get(pt, "values"), figs};
        const char *key;
        json_t *v;
        json_object_foreach(figs, key, v)
        {
            int seen = strcmp(key, "id") == 0;
            for (size_t i = 0; i < n_cols && !seen; i++)
                seen = strcmp(key, cols[i].name) == 0;
            for (size_t i = 0; i < json_array_size(keys) && !seen; i++)
                seen = strcmp(key, json_string_value(json_array_get(keys, i))) == 0;
            if (!seen && json_array_append_new(keys, json_string(key)) != 0)
                st = KS_ENOMEM;
        }
    }
    for (size_t i = 0; i < n_cols && st == KS_OK; i++) { // numbers when every value given is one
        int any = 0, all = 1;
        for (size_t r = 0; r < n_rows; r++) {
            const json_t *v = json_object_get(rows[r].values, cols[i].name);
            any |= v != NULL;
            all &= !v || json_is_number(v);
        }
        cols[i].is_number = any && all;
    }
    size_t n_keys = json_array_size(keys);
    const char **kv = st == KS_OK ? calloc(n_keys + 1, sizeof *kv) : NULL;
    if (st == KS_OK && !kv)
        st = KS_ENOMEM;
    for (size_t i = 0; kv && i < n_keys; i++)
        kv[i] = json_string_value(json_array_get(keys, i));
    if (st == KS_ENOMEM)
        snprintf(err, len, "out of memory");
    char path[4096];
    if (st == KS_OK) {
        snprintf(path, sizeof path, "%s/summary.h5", dir);
        st = write_h5(path, manifest, cols, n_cols, kv, n_keys, rows, n_rows, err, len);
    }
    if (st == KS_OK) {
        snprintf(path, sizeof path, "%s/summary.csv", dir);
        st = write_csv(path, cols, n_cols, kv, n_keys, rows, n_rows, err, len);
    }
    for (size_t r = 0; rows && r < n_rows; r++)
        json_decref(rows[r].figures);
    free(kv);
    free(rows);
    free(cols);
    json_decref(keys);
    if (st != KS_OK) {
        json_decref(missing);
        return st;
    }
    out->rows = n_rows;
    out->missing = missing;
    return KS_OK;
}
