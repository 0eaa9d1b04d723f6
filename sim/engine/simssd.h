// simssd.h - the SSD benchmark's reads, replayed in the simulator.
//
// Loads the platform that sim/engine/platform.c generates (one node, one GPU, one
// SSD with the given figures, host memory of dram_bw, run with
// KS_PLATFORM_CFG) and, for each point,
// starts qd actors on the SSD pseudo-host that each send `rounds` requests
// of bytes + op * bw bytes to the CPU host one after another (sg_host_sendto),
// as the benchmark's closed loop keeps qd requests in flight. The op term is
// the device time each request holds (fit.h): SimGrid has no per-request
// cost of its own, so it travels as bytes on the read link (and into host
// memory: at any measured figures a drive is far from filling it). A point's result
// is qd * simulated elapsed / requests, seconds per request, the figure the
// benchmark measures.
//
// SimGrid initialises once per process: ks_simssd_run may be called once.
#ifndef KS_SIMSSD_H
#define KS_SIMSSD_H

#include <stddef.h>

struct ks_simssd_point {
    unsigned qd;     // requests in flight
    double bytes;    // per request
    unsigned rounds; // requests per actor (>= 1)
    double t;        // out: simulated seconds per request
};

// Simulates every point in order. KS_OK, KS_EINVAL (bad figures or points;
// err says which), KS_ESTATE when SimGrid already ran in this process.
int ks_simssd_run(double lat, double bw, double op, double dram_bw, struct ks_simssd_point *pts, size_t n, char *err,
                  size_t len);

#endif
