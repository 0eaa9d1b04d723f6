// sweep.h - a sweep file expanded into the list of points it names.
//
// A sweep file is Lua that returns a table (the format is documented at the
// top of sweep.c and in `kvstrata sweep --help`). Loading evaluates it once,
// under lua_pcall (luatab), and turns it into plain C: the base scenario and,
// per point, the ordered `path=value` overrides that `kvstrata run --set`
// takes. After loading no Lua state remains; a point is just strings.
//
// Invariants of a loaded sweep: points are in a fixed order (the Cartesian
// product of the axes, first axis outermost, then the `points` variants,
// each repeated over `seeds`); a point's id is "p<index>-<hash>" where the
// hash covers the base scenario's bytes, its path as written and every
// override in order, and, once ks_sweep_check has resolved the point, every
// field of the scenario it resolves to (profile figures and tables
// included), so a point whose settings, base or profile change gets a new
// id and a rerun never reuses a result made from something else (a file the
// scenario names, such as a trace, counts by its path only); each point has
// one value (or none) per column, a column being an axis field, "seed", or a
// field that a `points` variant sets.
#ifndef KS_SWEEP_H
#define KS_SWEEP_H

#include <stddef.h>

struct ks_sweep_point {
    size_t index;
    char id[32];    // "p0007-1a2b3c4d"
    char **sets;    // [n_sets] "path=value", applied in order
    size_t n_sets;
    char **values;  // [columns] the value this point gives the column, as text; NULL: none
    int *is_number; // [columns] 1: the value was a Lua number
};

struct ks_sweep {
    char *file;     // the sweep file as given
    char *name;     // `name`, default the file's name without folder and .lua
    char *base;     // the base scenario, resolved from the sweep file's folder
    char *base_as_written;
    char **columns; // [n_columns] field paths
    size_t n_columns;
    struct ks_sweep_point *points;
    size_t n_points;
};

// Evaluates the sweep file and expands it into *out (freed with
// ks_sweep_free). Returns KS_OK; KS_EINVAL with the reason ("FILE: field:
// reason", or Lua's message) in err; or KS_ENOMEM. Scenarios are not loaded.
int ks_sweep_load(const char *file, struct ks_sweep **out, char *err, size_t len);

// Loads the base scenario with every point's overrides and checks it; a
// valid point's id then also hashes the scenario it resolves to (ids are
// final only after this). Returns KS_OK, or KS_EINVAL with one paragraph
// per bad point (at most max_points of them, then a count) naming the sweep
// file, the point and the scenario's errors; KS_ENOMEM.
int ks_sweep_check(struct ks_sweep *s, size_t max_points, char *err, size_t len);

// Frees a loaded sweep; NULL is a no-op.
void ks_sweep_free(struct ks_sweep *s);

// Writes v in the fewest significant digits (15 to 17) that read back as v.
void ks_sweep_number_text(double v, char *buf, size_t len);

#endif
