// results.h - the HDF5 result file of a run: summary attributes and tables.
//
// A result is written to a partial file beside its final path and renamed
// over it only by ks_results_commit, so a run that fails midway (or is
// killed) never leaves a half-written result under the name a user asked
// for; ks_results_abort removes the partial file. HDF5 builds the file in
// memory and commit writes its bytes itself, so a full disk or a short
// write is a failed commit with errno's reason, never a failure inside
// HDF5. Only a regular file (or nothing) is ever replaced. Tables are one-dimensional
// extendible datasets of compound records, appended in batches, chunked and
// compressed (shuffle + deflate), readable with h5dump and h5py.
//
// Groups are created on first use; names are HDF5 paths ("/summary",
// "/requests"). Every function returns KS_OK or a negative status; the
// reason ("PATH: what failed") goes into the message buffer the caller gave
// ks_results_open, which must outlive the result.
#ifndef KS_RESULTS_H
#define KS_RESULTS_H

#include <stddef.h>
#include <stdint.h>

// KS_F_S32: a NUL-terminated string in a char[32] (a name), stored as a fixed-length string.
enum ks_field_type { KS_F_U8, KS_F_U32, KS_F_U64, KS_F_I64, KS_F_F32, KS_F_F64, KS_F_S32 };

// One member of a table's record: its name, type and offset in the C struct.
struct ks_field {
    const char *name;
    enum ks_field_type type;
    size_t offset; // offsetof(record, member)
    const char *desc; // stored as the table's attribute "<name>.desc" when not NULL
};

struct ks_results;
struct ks_table;

// Can `path` be an output that must not overwrite any of `inputs` (n_inputs
// names, NULL entries skipped)? KS_OK when it is absent or a regular file
// that is none of them (compared by device and inode, so links and other
// spellings count); else KS_EINVAL with the reason in err: a folder, FIFO,
// device or socket, or an input.
int ks_results_check_target(const char *path, const char *const *inputs, size_t n_inputs, char *err, size_t len);

// A name from a scenario made safe as one file name: '/', '\\' and control
// characters become '_', and so do leading dots (no ".", no hidden file)
// and the second dot of any ".."; cut to 200 bytes; "" becomes "run". out
// gets len bytes at most.
void ks_results_safe_name(const char *name, char *out, size_t len);

// Starts a result that will land at `path` (the directory must exist; path
// must pass ks_results_check_target with no inputs).
// Returns NULL with the reason in err when the partial file cannot be made;
// else every later failure of r, its tables included, writes its reason
// into err (borrowed: it outlives r; NULL: no reasons).
struct ks_results *ks_results_open(const char *path, char *err, size_t errlen);

// Flushes every table, closes the file and renames it to its final path.
// Frees r whatever happens; on failure the partial file is removed.
int ks_results_commit(struct ks_results *r);

// Closes and removes the partial file; frees r. NULL is a no-op.
void ks_results_abort(struct ks_results *r);

// Attributes of a group (created if missing).
int ks_results_attr_num(struct ks_results *r, const char *group, const char *name, double v);
int ks_results_attr_int(struct ks_results *r, const char *group, const char *name, int64_t v);
int ks_results_attr_str(struct ks_results *r, const char *group, const char *name, const char *v);

// A table of records of rec_size bytes with the given fields, under `path`.
// The table is owned by r (closed by commit or abort). chunk_rows: rows per
// HDF5 chunk and per write (0: 4096).
struct ks_table *ks_results_table(struct ks_results *r, const char *path, const struct ks_field *fields,
                                  size_t n_fields, size_t rec_size, size_t chunk_rows);

// Appends n records (buffered; written a chunk at a time).
int ks_results_append(struct ks_table *t, const void *recs, size_t n);

#endif
