// cli.h - strict command-line parsing shared by every kvstrata command.
//
// A command describes itself in a struct ks_cli_cmd and its options in a
// table of struct ks_cli_opt whose `out` fields already hold the defaults;
// ks_cli_parse fills them from argv, or prints the help, or reports a usage
// error. Parsing is strict: an unknown option, a missing or malformed value,
// a number out of range or a stray argument is a usage error that names the
// option and exits with KS_EXIT_USAGE, never a silent default. `--opt=value`
// and `--opt value` are the same; an option given twice takes its last value;
// `-h` and `--help` anywhere print the help and nothing else runs.
//
// Output discipline for every command: figures go to stdout (with --json,
// exactly one JSON object and nothing else); messages go to stderr.
#ifndef KS_CLI_H
#define KS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { KS_EXIT_OK = 0, KS_EXIT_FAIL = 1, KS_EXIT_USAGE = 2 };

enum ks_cli_kind {
    KS_CLI_FLAG,   // no value; out: int, set to 1
    KS_CLI_U32,    // decimal integer in [min, max]; out: uint32_t
    KS_CLI_U64,    // decimal integer in [min, max]; out: uint64_t
    KS_CLI_REAL,   // finite decimal number in [fmin, fmax]; out: double
    KS_CLI_CHOICE, // one of `choices`; out: int, the index of the choice
    KS_CLI_STRING, // non-empty text; out: const char *, pointing into argv
    KS_CLI_STRINGS, // non-empty text, may repeat; out: struct ks_cli_strings, each value appended
    KS_CLI_ARG,    // a positional argument (words not starting with "--", in table order);
                   // out: const char *; required unless it holds a default; `arg` names it
};

// The values of a repeatable option, in command-line order; v points to the
// caller's array of cap entries (more values than cap are a usage error).
struct ks_cli_strings {
    const char **v;
    size_t n, cap;
};

struct ks_cli_opt {
    const char *name;           // long name without the leading "--"
    enum ks_cli_kind kind;
    void *out;                  // holds the default before parsing
    const char *arg;            // value placeholder in the help ("N"); unused for flags and choices
    const char *help;           // one line
    uint64_t min, max;          // integer kinds: inclusive range; max 0 = the type's maximum
    double fmin, fmax;          // KS_CLI_REAL: inclusive range
    const char *const *choices; // KS_CLI_CHOICE: NULL-terminated
    int hide_default;           // the help shows no default (flags never show one)
    char short_name;            // a one-letter alias ("-o FILE"), or 0
};

struct ks_cli_cmd {
    const char *name;    // as typed after "kvstrata": "bench cache"
    const char *summary; // one line, for the command list
    const char *about;   // text after the summary in --help, may be NULL
    int (*run)(const struct ks_cli_cmd *cmd, int argc, char **argv); // exit status
};

// Parses argv[0..argc), the words after the command name. Returns 1 when the
// command should run; 0 when it should return *status instead: KS_EXIT_OK
// after the help went to stdout, KS_EXIT_USAGE after a message on stderr.
int ks_cli_parse(const struct ks_cli_cmd *cmd, const struct ks_cli_opt *opts, size_t n_opts, int argc,
                 char **argv, int *status);

// Prints the command's help (usage line with the positional arguments,
// summary, about, options with their defaults as the `out` fields hold them now).
void ks_cli_help(const struct ks_cli_cmd *cmd, const struct ks_cli_opt *opts, size_t n_opts, FILE *f);

// Prints "kvstrata <cmd>: <message>" and a hint to --help on stderr; returns
// KS_EXIT_USAGE so that a command can `return ks_cli_usage_error(...)`.
int ks_cli_usage_error(const struct ks_cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Prints "kvstrata <cmd>: <message>" on stderr; returns KS_EXIT_FAIL.
int ks_cli_fail(const struct ks_cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Parses a decimal integer: digits only (no sign, space or base prefix), in
// [min, max]. Returns 0, or -1 with the reason in why ("is not a number").
int ks_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why, size_t len);

// Parses a finite decimal number (strtod syntax without space, hex, inf or
// nan) in [min, max]. Returns 0, or -1 with the reason in why.
int ks_cli_parse_real(const char *s, double min, double max, double *out, char *why, size_t len);

#endif
