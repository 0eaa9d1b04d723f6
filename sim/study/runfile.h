// runfile.h - a run's summary figures and its HDF5 result file.
//
// `run` and `validate` summarise a struct ks_run_result with the same keys
// (the same on stdout, in --json and as /summary attributes) and write the
// same layout: /summary, /requests, /steps, /tiers, /links, /link_samples
// (schema in results/README.md).
#ifndef KS_RUNFILE_H
#define KS_RUNFILE_H

#include <hdf5.h>
#include <jansson.h>
#include <stddef.h>

#include "runresult.h"
#include "scenario.h"

// A run's summary: figures by key, and a note on each (the same keys on
// stdout, in --json and as /summary attributes). err: a JSON call failed.
// fig and notes are the caller's (made with json_object, released with
// json_decref).
struct ks_run_summary {
    json_t *fig, *notes;
    int err;
};

// Adds r's summary figures to s, in the order they are shown; a whole
// number is stored as a JSON integer (as sim/cli/json.h's setters do).
void ks_run_summarise(struct ks_run_summary *s, const struct ks_scenario *sc, const struct ks_run_result *r);

// Whether the scenario's slo sets an objective on the run's figures (slo.
// ttft, tpot, itl, e2el: _mean or _p99), which slo_met then judges; the
// per-request objectives (slo.ttft, tpot, e2el) only count toward goodput.
int ks_run_slo_set(const struct ks_scenario_slo *o);

// Writes the HDF5 result (/summary, /requests, /steps, /tiers, /links,
// /link_samples) whole or not at all. KS_OK or KS_EIO with the reason in err.
int ks_run_write(const char *path, const struct ks_run_summary *s, const struct ks_run_result *r, char *err,
                 size_t len);

// Is the open result f complete? ks_run_write writes the root attribute
// `complete` = 1 after everything else, so a file without it is what a write
// that never finished left. KS_OK, or KS_EINVAL with the reason in why
// ("an incomplete result: ...; rerun it").
int ks_run_check_complete(hid_t f, char *why, size_t len);

#endif
