// fit.h - least-squares fits of measured curves to the cost models the
// simulator charges.
//
// Two models, both linear in their parameters:
//   copy:  t(s)       = lat + s / bw                    (DRAM memcpy, one PCIe copy,
//                                                        one batched PCIe copy of s bytes)
//   ssd:   t(qd, s)   = lat + qd * op + qd * s / bw     (closed loop, qd requests in flight)
// where t is the time one request (or copy) takes from issue to completion,
// s its bytes, qd the requests kept in flight. The ssd model is what SimGrid
// computes for qd equal flows on one link of latency `lat` and bandwidth
// `bw` whose flows each carry s + op * bw bytes: the throughput it implies,
// qd * s / t, saturates at s / (op + s / bw) as qd grows (op is the device
// time each request holds beyond its bytes: 1 / op bounds tiny-request IOPS).
//
// Fits minimise the sum of squared relative residuals ((model - t) / t)^2,
// so that a 70 us point weighs as much as a 40 ms one, and keep every
// parameter >= 0 (an exact small non-negative least squares: every subset
// of the parameters is solved and the best non-negative one kept). The worst
// residual is the largest |model - t| / t over the points.
#ifndef KS_FIT_H
#define KS_FIT_H

#include <stddef.h>

struct ks_fit_copy {
    double lat;   // seconds
    double bw;    // bytes/s
    double worst; // largest |relative residual|
    double rms;   // root mean square relative residual
};

struct ks_fit_ssd {
    double lat;   // seconds
    double op;    // seconds of device time per request
    double bw;    // bytes/s
    double worst; // largest |relative residual|
    double rms;   // root mean square relative residual
};

// One measured SSD point: qd requests of `bytes` in flight; t seconds per
// request from issue to completion (qd * elapsed / completed).
struct ks_fit_ssd_point {
    double qd, bytes, t;
};

// Fits t[i] = lat + s[i] / bw over n >= 2 points (t > 0, s >= 0, at least two
// distinct sizes). KS_OK, or KS_EINVAL when the points cannot fix a positive
// bandwidth.
int ks_fit_copy(const double *s, const double *t, size_t n, struct ks_fit_copy *out);

// The fixed cost of one batched copy call: the profile's copy_overhead, which
// the simulator charges once per migration batch (the runtime issues one
// batched call per batch). Fits t[i] = lat + blocks[i] * block / bw over n >= 2
// calls that each moved blocks[i] blocks of `block` bytes (t > 0, at least two
// distinct counts) into *out, whose lat is that cost; *link_worst receives the
// largest |relative residual| over the same points of the model the simulator
// then charges a batch, out->lat + blocks * block / link_bw, where link_bw is
// the profile's pcie_bw (fitted elsewhere, on single copies). KS_OK, or
// KS_EINVAL as ks_fit_copy, or when block or link_bw is not positive.
int ks_fit_batch(const double *blocks, const double *t, size_t n, double block, double link_bw,
                 struct ks_fit_copy *out, double *link_worst);

// Fits the ssd model over n >= 3 points. KS_OK or KS_EINVAL as above.
int ks_fit_ssd(const struct ks_fit_ssd_point *p, size_t n, struct ks_fit_ssd *out);

// The models' predictions, in seconds per request.
double ks_fit_copy_time(const struct ks_fit_copy *f, double bytes);
double ks_fit_ssd_time(const struct ks_fit_ssd *f, double qd, double bytes);

#endif
