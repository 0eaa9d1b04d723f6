// fit.c - weighted non-negative least squares for the models of fit.h.
//
// The design matrix has at most 3 columns, each scaled by its largest
// magnitude before the normal equations are solved (bytes are ~1e9, seconds
// ~1e-4: unscaled, the system would be ill-conditioned).
#include "fit.h"

#include <math.h>
#include <string.h>

#include "status.h"

enum { MAXK = 3 };

// Solves the k x k system a x = b by Gaussian elimination with partial
// pivoting. 0, or -1 when it is singular.
static int solve(double a[MAXK][MAXK], double *b, int k, double *x)
{
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) < 1e-12)
            return -1;
        if (p != c) {
            for (int j = 0; j < k; j++) {
                double t = a[c][j];
                a[c][j] = a[p][j];
                a[p][j] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j < k; j++)
                a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int c = k - 1; c >= 0; c--) {
        double s = b[c];
        for (int j = c + 1; j < k; j++)
            s -= a[c][j] * x[j];
        x[c] = s / a[c][c];
    }
    return 0;
}

// Columns x[i*MAXK + j]; fits y ~ sum_j beta_j x_j with weights 1/y^2 over the
// columns in `mask`. 0 with beta (0 outside the mask) and the weighted sum of
// squares in *sse, or -1 when singular.
static int lsq(const double *x, const double *y, size_t n, unsigned mask, double *beta, double *sse)
{
    int cols[MAXK], k = 0;
    double scale[MAXK];
    for (int j = 0; j < MAXK; j++)
        if (mask & (1u << j)) {
            double m = 0;
            for (size_t i = 0; i < n; i++)
                m = fmax(m, fabs(x[i * MAXK + j]));
            if (m == 0)
                return -1;
            scale[k] = m;
            cols[k++] = j;
        }
    double a[MAXK][MAXK] = {{0}}, b[MAXK] = {0}, z[MAXK] = {0};
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / (y[i] * y[i]);
        for (int r = 0; r < k; r++) {
            double xr = x[i * MAXK + cols[r]] / scale[r];
            b[r] += w * xr * y[i];
            for (int c = 0; c < k; c++)
                a[r][c] += w * xr * x[i * MAXK + cols[c]] / scale[c];
        }
    }
    if (solve(a, b, k, z) != 0)
        return -1;
    for (int j = 0; j < MAXK; j++)
        beta[j] = 0;
    for (int r = 0; r < k; r++)
        beta[cols[r]] = z[r] / scale[r];
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double m = 0;
        for (int j = 0; j < MAXK; j++)
            m += beta[j] * x[i * MAXK + j];
        s += (m - y[i]) * (m - y[i]) / (y[i] * y[i]);
    }
    *sse = s;
    return 0;
}

// Best non-negative fit over the column subsets that hold every column in
// `need`. 0 with beta, or -1 when no subset gives one.
static int nnls(const double *x, const double *y, size_t n, unsigned need, double *beta)
{
    double best = INFINITY;
    for (unsigned mask = 1; mask < (1u << MAXK); mask++) {
        if ((mask & need) != need)
            continue;
        double b[MAXK], sse;
        if (lsq(x, y, n, mask, b, &sse) != 0)
            continue;
        int ok = 1;
        for (int j = 0; j < MAXK; j++)
            ok &= b[j] >= 0 && isfinite(b[j]);
        if (ok && (mask & need) && b[MAXK - 1] > 0 && sse < best) {
            best = sse;
            memcpy(beta, b, sizeof b);
        }
    }
    return isfinite(best) ? 0 : -1;
}

static int points_ok(const double *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(t[i] > 0) || !isfinite(t[i]))
            return 0;
    return 1;
}

// Largest and rms relative residual of the model values m against t.
static void residuals(const double *m, const double *t, size_t n, double *worst, double *rms)
{
    double w = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double r = (m[i] - t[i]) / t[i];
        w = fmax(w, fabs(r));
        s += r * r;
    }
    *worst = w;
    *rms = n ? sqrt(s / (double)n) : 0;
}

double ks_fit_copy_time(const struct ks_fit_copy *f, double bytes)
{
    return f->lat + bytes / f->bw;
}

double ks_fit_ssd_time(const struct ks_fit_ssd *f, double qd, double bytes)
{
    return f->lat + qd * f->op + qd * bytes / f->bw;
}

enum { MAX_POINTS = 4096 };

int ks_fit_copy(const double *s, const double *t, size_t n, struct ks_fit_copy *out)
{
    memset(out, 0, sizeof *out);
    if (n < 2 || n > MAX_POINTS || !points_ok(t, n))
        return KS_EINVAL;
    static _Thread_local double x[MAX_POINTS * MAXK], m[MAX_POINTS];
    for (size_t i = 0; i < n; i++) {
        if (!(s[i] >= 0) || !isfinite(s[i]))
            return KS_EINVAL;
        x[i * MAXK + 0] = 1;
        x[i * MAXK + 1] = 0; // unused column: never in a mask that solves
        x[i * MAXK + 2] = s[i];
    }
    int two = 0;
    for (size_t i = 1; i < n; i++)
        two |= s[i] != s[0];
    if (!two)
        return KS_EINVAL; // one size: latency and bandwidth cannot be told apart
    double beta[MAXK];
    // column 1 is all zero, so only subsets without it solve
    if (nnls(x, t, n, 1u << 2, beta) != 0)
        return KS_EINVAL;
    out->lat = beta[0];
    out->bw = 1.0 / beta[2];
    for (size_t i = 0; i < n; i++)
        m[i] = ks_fit_copy_time(out, s[i]);
    residuals(m, t, n, &out->worst, &out->rms);
    return KS_OK;
}

int ks_fit_batch(const double *blocks, const double *t, size_t n, double block, double link_bw,
                 struct ks_fit_copy *out, double *link_worst)
{
    memset(out, 0, sizeof *out);
    *link_worst = 0;
    if (!(block > 0) || !isfinite(block) || !(link_bw > 0) || !isfinite(link_bw) || n > MAX_POINTS)
        return KS_EINVAL;
    static _Thread_local double s[MAX_POINTS], m[MAX_POINTS];
    for (size_t i = 0; i < n; i++)
        s[i] = blocks[i] * block; // a bad count (< 0, NaN) is ks_fit_copy's EINVAL
    int st = ks_fit_copy(s, t, n, out);
    if (st != KS_OK)
        return st;
    struct ks_fit_copy link = {.lat = out->lat, .bw = link_bw};
    for (size_t i = 0; i < n; i++)
        m[i] = ks_fit_copy_time(&link, s[i]);
    double rms;
    residuals(m, t, n, link_worst, &rms);
    return KS_OK;
}

int ks_fit_ssd(const struct ks_fit_ssd_point *p, size_t n, struct ks_fit_ssd *out)
{
    memset(out, 0, sizeof *out);
    if (n < 3 || n > MAX_POINTS)
        return KS_EINVAL;
    static _Thread_local double x[MAX_POINTS * MAXK], t[MAX_POINTS], m[MAX_POINTS];
    for (size_t i = 0; i < n; i++) {
        if (!(p[i].qd >= 1) || !(p[i].bytes > 0) || !isfinite(p[i].bytes))
            return KS_EINVAL;
        x[i * MAXK + 0] = 1;
        x[i * MAXK + 1] = p[i].qd;
        x[i * MAXK + 2] = p[i].qd * p[i].bytes;
        t[i] = p[i].t;
    }
    if (!points_ok(t, n))
        return KS_EINVAL;
    double beta[MAXK];
    if (nnls(x, t, n, 1u << 2, beta) != 0)
        return KS_EINVAL;
    out->lat = beta[0];
    out->op = beta[1];
    out->bw = 1.0 / beta[2];
    for (size_t i = 0; i < n; i++)
        m[i] = ks_fit_ssd_time(out, p[i].qd, p[i].bytes);
    residuals(m, t, n, &out->worst, &out->rms);
    return KS_OK;
}
