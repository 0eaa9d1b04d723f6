// sweeprun.h - one run of a sweep in its output folder: every point as its
// own `kvstrata run` process (point.h), N at a time, resuming what an
// earlier run left; the manifest, the commands file and the Slurm script.
//
// The output folder DIR holds:
//   sweep.json     the manifest: the sweep, its columns, and per point its id,
//                  settings, column values, command line and status
//   commands.txt   point i's shell command on line i + 1 (what a cluster runs)
//   points/ID.h5   the point's result (`kvstrata run -o`, written atomically)
//   points/ID.json its --json report (written to ID.json.part, then renamed)
//   points/ID.err  its stderr, kept when it failed (or said something)
//   summary.h5, summary.csv   the merged table (sweep_merge.h)
//   sweep.slurm    a job array over commands.txt (ks_sweeprun_write_slurm)
//   sweep.lock     locked (flock) by the sweep writing into DIR; holds its pid
// A point runs as `kvstrata run BASE --set ... -o DIR/points/ID.h5 --json`
// with the binary that runs the sweep (/proc/self/exe). Because a point's id
// hashes its settings and its result is checked before it is reused, a rerun
// runs exactly the points without a complete result, and an interrupted
// sweep loses only the points it was running.
//
// Nothing here prints: what a caller shows while points run comes through
// the event callback of ks_sweeprun_run.
#ifndef KS_SWEEPRUN_H
#define KS_SWEEPRUN_H

#include <jansson.h>
#include <stddef.h>

#include "sweep.h"

enum ks_sweeprun_state { KS_SWEEPRUN_PENDING, KS_SWEEPRUN_COMPLETE, KS_SWEEPRUN_FAILED };

// Caller storage: ks_sweeprun_init fills it, ks_sweeprun_fini empties it.
struct ks_sweeprun {
    const struct ks_sweep *s;      // borrowed, for as long as r is used
    char *exe, *base, *dir, *file; // absolute: the kvstrata binary, the base scenario, DIR, the sweep file
    char **line;                   // [n_points] the shell command of each point
    int *state;                    // [n_points] enum ks_sweeprun_state
    int *code;                     // [n_points] a failed point's exit code (128 + signal when killed)
    int *reused;                   // [n_points] 1: complete from an earlier run
    size_t n_reused;               // points complete from an earlier run (ks_sweeprun_resume)
    size_t ran, failed;            // points ks_sweeprun_run ran, and those that failed
    double t0;                     // ks_clock_mono when ks_sweeprun_run started
    int lock_fd;                   // DIR/sweep.lock while this run holds it (ks_sweeprun_resume), else -1
    char threads[16];              // each point's `run --threads`
};

// Resolves the paths, creates DIR unless dry (nothing is written then), and
// builds every point's command line. KS_OK; KS_EIO or KS_ENOMEM with the
// reason in err. Either way r is to be emptied with ks_sweeprun_fini.
int ks_sweeprun_init(struct ks_sweeprun *r, const struct ks_sweep *s, const char *dir, int dry, unsigned threads,
                     char *err, size_t len);
void ks_sweeprun_fini(struct ks_sweeprun *r);

// Takes the folder's lock (an exclusive flock on DIR/sweep.lock, held until
// ks_sweeprun_fini; the kernel drops it if the process dies), creates
// DIR/points and marks complete every point whose result an earlier run
// left whole (sweep_merge.h). KS_OK; KS_ESTATE when another sweep holds the
// folder (its pid in the message), so that two sweeps never run one point
// twice; or KS_EIO, with the reason in err.
int ks_sweeprun_resume(struct ks_sweeprun *r, char *err, size_t len);

// Takes DIR/sweep.lock: an exclusive flock, not waiting, held until *fd is
// closed (the kernel drops it when the process dies, kill -9 included); the
// file holds this process's id for whoever finds it taken. KS_OK; KS_ESTATE
// when another sweep holds it (its pid in the message); or KS_EIO.
int ks_sweeprun_lock(const char *dir, int *fd, char *err, size_t len);

// The manifest as it stands (a new object), or NULL when memory runs out.
json_t *ks_sweeprun_manifest(const struct ks_sweeprun *r);

// Write DIR/sweep.json, DIR/commands.txt, and DIR/sweep.slurm (whose path
// goes to path) with its log folder DIR/slurm, each whole or not at all.
// KS_OK, or a negative status with "PATH: cannot write" (or create) in err.
int ks_sweeprun_write_manifest(const struct ks_sweeprun *r, char *err, size_t len);
int ks_sweeprun_write_commands(const struct ks_sweeprun *r, char *err, size_t len);
int ks_sweeprun_write_slurm(const struct ks_sweeprun *r, char *path, size_t plen, char *err, size_t len);

// Reads the manifest DIR/sweep.json that a sweep left. KS_OK with a new
// object in *out; KS_EINVAL with "cannot read PATH (reason)" in err.
int ks_sweeprun_manifest_read(const char *dir, json_t **out, char *err, size_t len);

enum ks_sweeprun_event_kind {
    KS_SWEEPRUN_EV_PROGRESS, // a point finished (or the run starts or ends)
    KS_SWEEPRUN_EV_FAILED,   // point `point` ran and left no complete result
    KS_SWEEPRUN_EV_NOSTART,  // point `point` could not be started
};

struct ks_sweeprun_event {
    enum ks_sweeprun_event_kind kind;
    size_t done;          // PROGRESS: points finished, earlier runs' included
    int final;            // PROGRESS: the last one
    size_t point;         // FAILED, NOSTART: the point's index
    int signaled;         // FAILED: 1 when a signal killed it
    int status;           // FAILED: its exit status, or the signal's number
    const char *tail;     // FAILED: the last line of its stderr ("" when none)
    const char *err_path; // FAILED: the file that holds its stderr
    const char *why;      // NOSTART: "cannot start EXE: reason"
};

// Runs the pending points, jobs at a time, until all have run or SIGINT or
// SIGTERM arrives (handlers are installed for the run and restored after;
// the running points are then stopped and stay pending). fn receives the
// run's events in order (NULL: none), with ud. KS_OK with *sig 0 or the
// signal that stopped it; KS_ENOMEM with the reason in err.
int ks_sweeprun_run(struct ks_sweeprun *r, unsigned jobs,
                    void (*fn)(void *ud, const struct ks_sweeprun *r, const struct ks_sweeprun_event *ev), void *ud,
                    int *sig, char *err, size_t len);

#endif
