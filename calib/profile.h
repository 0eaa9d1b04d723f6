// profile.h - writes a calibration profile: a base profile's figures, with
// some replaced or added by measured ones; finds profiles and checks the
// name of one to write.
//
// The base profile file is read through the Lua binding (sim/luatab) and
// written back field by field in its own order, every figure with its
// source and kind as the base gives them, except the figures named in the
// replacement list, which take the new value, source and kind (figures the
// base lacks are added at the end of their table), and the top-level tables
// of number lists given whole (ks_calib_table). name, part, notes and cpu are
// the new profile's. The result goes to a temporary file in the target's
// directory, is checked by the scenario loader's profile check, and is
// renamed over the target: a failure leaves no file and no half-written one.
#ifndef KS_CALIB_PROFILE_H
#define KS_CALIB_PROFILE_H

#include <stddef.h>

struct ks_calib_figure {
    const char *path;   // relative to the profile: "dram_bw", "ssd.read_bw"
    const char *value;  // as written in a profile, with its unit: "12.5GBps"
    const char *source; // how it was obtained
    const char *kind;   // "measured", ...
};

// A top-level table of number lists, written whole: key = {name = {v, ...},
// ..., fields, source = "...", kind = "..."} (host_wake, kernel_time). It replaces the base's
// field of that key, or follows the base's fields when the base lacks it.
// Every value must be finite (else KS_EINVAL); each is written with the
// fewest digits that read back as the same double.
struct ks_calib_list {
    const char *name; // "idle"
    const double *v;  // the table's n values
};

// A field of such a table besides its lists: a string when text is not
// NULL, else the number v (kernel_time's batch = 32, backend = "cuda").
struct ks_calib_field {
    const char *name;
    const char *text;
    double v;
};

struct ks_calib_table {
    const char *key;                   // a top-level key: "host_wake"
    const struct ks_calib_list *lists; // n_lists lists, of n values each
    size_t n_lists, n;
    const struct ks_calib_field *fields; // n_fields, written after the lists (may be NULL)
    size_t n_fields;
    const char *source, *kind;
};

struct ks_calib_profile {
    const char *base_file;      // the profile whose other figures are kept
    const char *name, *part, *notes;
    const char *cpu; // the machine's CPU (struct ks_machine): the profile's `cpu`, which validate compares
    const char *comment;        // lines written as Lua comments at the top (may be NULL)
    const struct ks_calib_figure *figs;
    size_t n_figs;
    const struct ks_calib_table *tables; // may be NULL
    size_t n_tables;
};

// Writes p to out. KS_OK, or a status with the reason in err: KS_EINVAL (the
// base profile cannot be read, a value cannot be written, or the result does
// not pass the profile check), KS_EIO (the file cannot be written), KS_ENOMEM.
int ks_calib_profile_write(const struct ks_calib_profile *p, const char *out, char *err, size_t len);

// snprintf for a profile's texts (sources, notes, comments), which may be
// cut short at len - 1 characters.
void ks_calib_profile_text(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// Checks that out can name a new profile file: NAME.lua, NAME of letters,
// digits, '_' and '-', in an existing directory this process can write.
// KS_OK; KS_EINVAL when the name is not a profile's, KS_EIO when its
// directory is missing or not writable; the reason in err.
int ks_calib_profile_check_out(const char *out, char *err, size_t len);

// The profile's name for its file out (which passed ks_calib_profile_check_out):
// the file name without its folder and ".lua".
void ks_calib_profile_name(const char *out, char *buf, size_t len);

// The profile file for a name or a path: `spec` itself when it names a file
// (contains '/' or ends in ".lua"), else spec.lua under the source tree's
// calib/profiles, then the installed profile directory. A heap path (the
// caller frees it), or NULL when none exists.
char *ks_calib_profile_find(const char *spec);

#endif
