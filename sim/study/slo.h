// slo.h - the SLO search behind `kvstrata plan`: the smallest platform or
// the largest load that meets a scenario's SLO, by bisection over one
// monotone field, each value simulated as its own process (point.h).
//
// A plan file is Lua returning a table:
//   base   = "../scenarios/doc_qa_128k.lua",  -- relative to the plan file
//   set    = {["duration"] = "60s"},           -- optional: fixed overrides (dotted paths, scalar values)
//   search = {field = "platform.nodes", from = 1, to = 16, goal = "smallest"},
//            -- or {field = "workload.arrival.rate", from = 0.5, to = 64, goal = "largest",
//            --     tolerance = 0.05}  (stop when the interval is within tolerance x its top;
//            --     integer bounds keep the values whole and stop at an interval of 1 at most)
// The SLO is the scenario's `slo` on the run's figures (ttft, tpot, itl,
// e2el, each _mean or _p99; at least one): a point meets it when its run's
// summary says so (slo_met: every objective set is measured and holds). "smallest" assumes
// that more of the field never hurts (nodes, GPUs, DRAM, drives) and finds
// the smallest value that meets the SLO; "largest" assumes that more of it
// never helps (arrival rate) and finds the largest value that still meets
// it. (Migration planning is another thing: sim/cache/migrate.c.)
#ifndef KS_SLO_H
#define KS_SLO_H

#include <stddef.h>

#include "point.h"
#include "scenario.h"

enum {
    KS_SLO_MAX_SETS = 64,   // fixed overrides in a plan file
    KS_SLO_MAX_POINTS = 64, // points one search may simulate
};

// A loaded plan file. Caller storage, zeroed before ks_slo_load; emptied by
// ks_slo_fini (also after a failed load).
struct ks_slo_plan {
    char base[4096];                   // the scenario, resolved from the plan file's folder
    char *sets[KS_SLO_MAX_SETS + 1];   // [n_sets] "path=value", owned; the searched field follows per point
    size_t n_sets;
    char field[256];                   // the searched field's dotted path
    double from, to, tolerance;        // the interval; tolerance is a share of the value
    int integer;                       // 1: whole-number bounds, values stay whole
    int largest;                       // 1: goal "largest", 0: "smallest"
    struct ks_scenario_slo slo;        // the base scenario's objectives
};

// Reads the plan file and checks its base with the overrides and the field
// at `from` (it must be valid and set an SLO). KS_OK; KS_EINVAL with "FILE:
// reason" in err; KS_ENOMEM.
int ks_slo_load(const char *file, struct ks_slo_plan *p, char *err, size_t len);

// Frees what ks_slo_load allocated; p can be loaded again after zeroing.
void ks_slo_fini(struct ks_slo_plan *p);

struct ks_slo_point {
    double x;                  // the field's value
    struct ks_point_summary s; // its run's verdict (s.met), margin and figures
};

struct ks_slo_params {
    const char *dir; // folder for each point's DIR/plan-NNN.h5 and .json (created)
    // called after point k ran, before its summary is read (a run can take
    // minutes); NULL: none
    void (*progress)(void *ud, size_t k, const char *field, double x);
    void *ud;
};

struct ks_slo_result {
    struct ks_slo_point pts[KS_SLO_MAX_POINTS]; // [n] in the order simulated: from, to, then the bisection
    size_t n;
    int found;     // 1: answer holds the answer
    double answer; // the field's value found
    size_t at;     // pts[at] is the point at the answer
};

// Runs the search: the ends first, then bisection while both ends disagree.
// KS_OK with *r filled (found may be 0: even the best end misses the SLO);
// otherwise a negative status with the reason in err (the kvstrata binary
// not found, the folder not created, a run that failed, no answer within
// KS_SLO_MAX_POINTS).
int ks_slo_search(const struct ks_slo_plan *p, const struct ks_slo_params *sp, struct ks_slo_result *r, char *err,
                  size_t len);

#endif
