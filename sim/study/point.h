// point.h - one scenario point run as its own `kvstrata run` process: its
// argv and shell command line, starting it, waiting for it, reading its
// --json summary.
//
// A point is `EXE run BASE --set S1 ... --set Sn -o H5 --json`: the base
// scenario with overrides applied in order, its result written to H5, its
// summary printed as one JSON object on stdout. SimGrid initialises once per
// process, so every point is a process of its own; `kvstrata sweep` and
// `kvstrata plan` both run theirs here. Nothing in a struct ks_point is
// owned: it borrows its strings for as long as the call that takes it.
#ifndef KS_POINT_H
#define KS_POINT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct ks_point {
    const char *exe;         // the kvstrata binary (ks_point_self_exe)
    const char *base;        // the scenario file
    const char *const *sets; // [n_sets] "path=value" overrides, applied in order
    size_t n_sets;
    const char *h5;          // the result file (`-o`)
    const char *threads;     // `--threads` value ("1"); NULL: none given (the run's default)
};

// Where the point's standard streams go: a file name each, NULL for the
// caller's own stream. out and err are created (or truncated) with mode
// (less the umask); in is opened for reading.
struct ks_point_io {
    const char *in, *out, *err;
    unsigned mode; // permission bits of out and err
};

// The absolute path of the running kvstrata binary (/proc/self/exe), for the
// caller to free; NULL with errno set when it cannot be resolved.
char *ks_point_self_exe(void);

// The point's argv, NULL-terminated, for the caller to free (the strings
// stay p's). NULL when memory runs out.
const char **ks_point_argv(const struct ks_point *p);

// Writes s to f as one word for a POSIX shell: as is when nothing in it needs
// quoting, else in single quotes.
void ks_point_shell_word(FILE *f, const char *s);

// Writes the point's argv to f as shell words joined by spaces. KS_OK, or
// KS_ENOMEM.
int ks_point_shell_line(FILE *f, const struct ks_point *p);

// Starts the point with its streams in io's files. KS_OK with *pid set; or
// KS_EIO with "cannot start EXE: reason" in err (errno as the attempt left it).
int ks_point_spawn(const struct ks_point *p, const struct ks_point_io *io, pid_t *pid, char *err, size_t len);

// How a process ended, as a shell reports it: its exit status, or 128 + the
// signal that killed it. ws is a status from waitpid.
int ks_point_exit_code(int ws);

// Starts the point and waits for it. KS_OK with *code its exit code
// (ks_point_exit_code); KS_EIO with the reason in err when it could not be
// started or waited for.
int ks_point_run(const struct ks_point *p, const struct ks_point_io *io, int *code, char *err, size_t len);

// The figures of a point's --json summary that an SLO search needs: its
// verdict, and the figures its objectives bound (slo_margin_NAME, NAME).
enum { KS_POINT_MAX_OBJECTIVES = 16 };
struct ks_point_summary {
    int met;           // slo_met; 0 when the summary has none
    double margin;     // the smallest slo_margin_*; NaN when one is null (not measured), INFINITY when none
    double throughput; // output tokens per second (output_throughput); NaN when absent
    size_t n;          // objectives judged, in the summary's order
    char name[KS_POINT_MAX_OBJECTIVES][32]; // the figure each bounds
    double fig[KS_POINT_MAX_OBJECTIVES];    // its value; NaN: not measured
};

// Reads the summary a point printed to the file json. KS_OK, or KS_EINVAL
// with "FILE: reason" in err.
int ks_point_summary_read(const char *json, struct ks_point_summary *out, char *err, size_t len);

#endif
