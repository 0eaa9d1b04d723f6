// sweep_merge.h - a sweep's point results: checked one by one, merged into
// one table.
//
// A point's result is two files under DIR/points/: ID.h5, written by
// `kvstrata run` (atomically), and ID.json, its --json report. A result is
// complete when the HDF5 file opens, has the group /summary, and every key
// of the JSON report is an attribute of /summary with the same value (to the
// report's 12 digits). Anything less (a file missing, truncated, or from
// another run) is not a result, and the point runs again.
//
// The merged table holds one row per complete point: its id, its value for
// each column of the manifest (a number column when every value given is a
// number, else text), and every numeric figure of its summary (from the
// HDF5 file, at full precision; booleans as 0/1). It is written as
// DIR/summary.h5 (dataset /summary, a compound record per row; text cut to
// 31 bytes) and DIR/summary.csv (a header, then one line per row), each
// whole or not at all.
#ifndef KS_SWEEP_MERGE_H
#define KS_SWEEP_MERGE_H

#include <jansson.h>
#include <stddef.h>

// 1 when h5 and json hold a complete result; then *figures (may be NULL)
// gets a new object of the numeric figures. 0 otherwise, with the reason
// in why.
int ks_sweep_merge_check(const char *h5, const char *json, json_t **figures, char *why, size_t len);

struct ks_sweep_merged {
    size_t rows;       // complete points in the table
    json_t *missing;   // new array of the ids of points without a complete result
};

// Merges the points that a manifest lists ({"columns": [...], "points":
// [{"id":, "values": {column: value}}...]}; see sweeprun.h) from dir.
// Returns KS_OK with *out filled (the caller decrefs out->missing), or a
// negative status with the reason in err.
int ks_sweep_merge(const char *dir, const json_t *manifest, struct ks_sweep_merged *out, char *err, size_t len);

#endif
