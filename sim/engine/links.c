// links.c - transfers over the platform, and what each link carried (see engine_impl.h).
#include "engine_impl.h"

#include <math.h>
#include <simgrid/engine.h>
#include <stdio.h>
#include <stdlib.h>
#include <xbt/dynar.h>

// Doubles the sampling interval of a run whose horizon grows: each link's
// bins merge in pairs.
static void widen_bins(struct sim *m)
{
    size_t k = KS_RUN_LINK_SAMPLES;
    m->link_every *= 2;
    for (size_t i = 0; m->link_bins && i < m->n_links; i++) {
        double *bins = m->link_bins + i * (k + 1);
        for (size_t b = 0; b < k / 2; b++)
            bins[b] = bins[2 * b] + bins[2 * b + 1];
        for (size_t b = k / 2; b < k; b++)
            bins[b] = 0;
    }
}

// Sends `bytes` from `from` to `to` and records them on every link of the
// route (once per time the route crosses it). `extra`: bytes that only stand
// for a device's per-request time (the SSD's op time): sent, so they take
// their time on every link, but not recorded as carried.
void ks_engine_transfer(struct sim *m, struct route *rt, sg_host_t from, sg_host_t to, double bytes, double extra)
{
    if (!rt->link) {
        xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
        sg_host_get_route(from, to, d);
        unsigned long n = xbt_dynar_length(d);
        rt->link = malloc((n ? n : 1) * sizeof *rt->link);
        if (rt->link) {
            rt->n = 0;
            for (unsigned long i = 0; i < n; i++) {
                uintptr_t id = (uintptr_t)sg_link_get_data(xbt_dynar_get_as(d, i, sg_link_t));
                if (id) // 0: a link made after setup (none are)
                    rt->link[rt->n++] = (uint32_t)(id - 1);
            }
        }
        xbt_dynar_free(&d);
    }
    double start = simgrid_get_clock();
    sg_host_sendto(from, to, bytes + extra);
    double end = simgrid_get_clock();
    for (uint32_t i = 0; rt->link && i < rt->n; i++)
        m->link_bytes[rt->link[i]] += bytes;
    // the time series: the bytes spread evenly over the transfer's time, into
    // the sampling intervals it overlaps (the last interval takes what runs
    // past the horizon when it does not grow)
    size_t k = KS_RUN_LINK_SAMPLES;
    while (m->link_grows && end >= k * m->link_every)
        widen_bins(m);
    double every = m->link_every;
    size_t b0 = (size_t)(start / every), b1 = (size_t)(end / every);
    if (b0 > k)
        b0 = k;
    if (b1 > k)
        b1 = k;
    for (uint32_t i = 0; m->link_bins && rt->link && i < rt->n; i++) {
        double *bins = m->link_bins + (size_t)rt->link[i] * (k + 1);
        if (b0 == b1 || end <= start) {
            bins[b1] += bytes;
            continue;
        }
        for (size_t b = b0; b <= b1; b++) {
            double lo = b == b0 ? start : b * every, hi = b == b1 || b == k ? end : (b + 1) * every;
            bins[b] += bytes * (hi - lo) / (end - start);
        }
    }
}


// Every link's totals, in sg_link_list order (the order the samples index).
void ks_engine_link_records(struct sim *m, struct ks_run_result *r)
{
    r->links = calloc(m->n_links ? m->n_links : 1, sizeof *r->links);
    if (!r->links)
        return;
    for (size_t i = 0; i < m->n_links; i++) {
        struct ks_link_record *x = &r->links[i];
        snprintf(x->name, sizeof x->name, "%s", sg_link_get_name(m->links[i]));
        x->bandwidth = sg_link_get_bandwidth(m->links[i]);
        x->latency = sg_link_get_latency(m->links[i]);
        x->bytes = m->link_bytes[i];
        x->utilisation = r->sim_time > 0 ? x->bytes / (x->bandwidth * r->sim_time) : 0;
    }
    r->n_links = m->n_links;
    // the time series: each link's bytes carried up to the end of each
    // sampling interval, then at the end of the run
    size_t n = m->n_links, k = KS_RUN_LINK_SAMPLES;
    while (m->link_grows && r->sim_time >= k * m->link_every)
        widen_bins(m);
    double every = m->link_every;
    size_t intervals = r->sim_time > k * every ? k + 1 : k; // a last one when the run overshot its duration
    if (m->link_grows) // up to the end of the run
        intervals = r->sim_time > every ? (size_t)ceil(r->sim_time / every) : 1;
    if (!m->link_bins || !(r->link_samples = malloc(n * intervals * sizeof *r->link_samples)))
        return; // the time series is lost; the totals above stand
    for (size_t i = 0; i < n; i++) {
        double sum = 0;
        for (size_t b = 0; b < intervals; b++) {
            // the run's end: the exact total (the spread shares, summed, may round a byte's fraction off it)
            sum = b + 1 < intervals ? sum + m->link_bins[i * (k + 1) + b] : m->link_bytes[i];
            double t = b < k ? every * (b + 1) : r->sim_time;
            r->link_samples[b * n + i] = (struct ks_link_sample){.t = t < r->sim_time ? t : r->sim_time,
                                                                 .link = (uint32_t)i, .bytes = sum};
        }
    }
    r->n_link_samples = r->cap_link_samples = n * intervals;
}
