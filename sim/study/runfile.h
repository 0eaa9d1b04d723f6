// runfile.h - a run's summary figures and its HDF5 result file.
//
// `run` and `validate` summarise a struct ks_run_result with the same keys
// (the same on stdout, in --json and as /summary attributes) and write the
// same layout: /summary, /summary_notes, /scenario, /requests, /steps,
// /tiers, /links, /link_samples (schema in results/README.md). A report reads
// the summary back (ks_run_read_summary) and shows each key in the group and
// unit ks_run_key_kind gives it: the one place that knows what a key is.
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

// Writes the HDF5 result (/summary, /summary_notes: each key's note,
// /scenario: sc's resolved fields as text, /requests, /steps, /tiers, /links,
// /link_samples) whole or not at all. sc: the scenario that ran (NULL: no
// /scenario). KS_OK or KS_EIO with the reason in err.
int ks_run_write(const char *path, const struct ks_run_summary *s, const struct ks_scenario *sc,
                 const struct ks_run_result *r, char *err, size_t len);

// Reads a result's summary back: /summary's attributes into s->fig (as
// ks_run_summarise made them: whole numbers as integers, NaN as null),
// /summary_notes into s->notes, and, when scenario is not NULL, /scenario
// into a new object *scenario (path -> text; NULL when the file has none:
// written before kvstrata stored it). s->fig and s->notes are the caller's;
// a file without /summary or /summary_notes leaves them empty. KS_OK, or
// KS_EINVAL with the reason in why (an attribute of the wrong kind) or
// KS_ENOMEM.
int ks_run_read_summary(hid_t f, struct ks_run_summary *s, json_t **scenario, char *why, size_t len);

// How a report shows a summary key: its unit ...
enum ks_run_unit {
    KS_RUN_UNIT_TEXT,       // as it is
    KS_RUN_UNIT_ID,         // an identifier, exact (the seed)
    KS_RUN_UNIT_COUNT,      // a whole number
    KS_RUN_UNIT_YESNO,      // 0/1 or a JSON boolean
    KS_RUN_UNIT_MS,         // seconds, shown in ms
    KS_RUN_UNIT_S,          // seconds
    KS_RUN_UNIT_TOKENS_S,   // tokens per second
    KS_RUN_UNIT_REQUESTS_S, // requests per second
    KS_RUN_UNIT_PERCENT,    // a fraction, shown in %
    KS_RUN_UNIT_BYTES,      // bytes, shown in GB, MB or kB
    KS_RUN_UNIT_BYTES_S,    // bytes/s, shown in GB/s, MB/s or kB/s
    KS_RUN_UNIT_FLOP,       // flops, shown in TFLOP
};

// ... and its group, one of ks_run_groups; rank orders the keys within it
// (the row of the table in runfile.c that matched).
struct ks_run_key_kind {
    const char *group;
    enum ks_run_unit unit;
    int rank;
};

// The groups in the order a report shows them, "other" (every key the table
// does not know, so that a new key is never lost) last; NULL-terminated.
extern const char *const ks_run_groups[];

// The kind of a summary key; group "other" and unit KS_RUN_UNIT_TEXT (a string
// as it is, a number plainly) when the table does not know it.
struct ks_run_key_kind ks_run_key_kind(const char *key);

// A figure in its key's unit into buf ("14.1 ms", "85.2%", "1.23 GB",
// "9589 tokens/s"); "not measured" for null or NaN; "" for NULL.
void ks_run_format(const char *key, const json_t *v, char *buf, size_t len);

// What bounded a run, judged from its summary figures alone (ks_run_bound
// in runfile.c documents the rule).
enum ks_run_bound {
    KS_BOUND_HOST_LINK,     // waiting for blocks from lower tiers
    KS_BOUND_COMPUTE,       // compute-bound iterations
    KS_BOUND_COLLECTIVES,   // collectives over NVLink
    KS_BOUND_HOST,          // host costs: scheduling, table rebuilds
    KS_BOUND_PREFILL,       // prefill on the decode GPUs
    KS_BOUND_HBM_BANDWIDTH, // memory-bound decode
};

struct ks_run_limit {
    enum ks_run_bound bound;
    int capacity; // 1: HBM capacity held the run back too (misses without a page, retractions, requests left waiting)
};

struct ks_run_limit ks_run_bound(const json_t *fig);

// The words for b ("HBM bandwidth (memory-bound decode)").
const char *ks_run_bound_text(enum ks_run_bound b);

// Is the open result f complete? ks_run_write writes the root attribute
// `complete` = 1 after everything else, so a file without it is what a write
// that never finished left. KS_OK, or KS_EINVAL with the reason in why
// ("an incomplete result: ...; rerun it").
int ks_run_check_complete(hid_t f, char *why, size_t len);

#endif
