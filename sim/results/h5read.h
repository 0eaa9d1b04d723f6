// h5read.h - reading HDF5 files nobody vouches for: tables and attributes
// checked before anything is allocated or read.
//
// HDF5 trusts the sizes, offsets and layouts a file declares: a corrupted
// file can claim 2.3e18 rows, a chunk or a datatype of size 0, or compound
// members lying outside their record, and HDF5 then allocates without end,
// divides by zero or copies out of bounds. Every reader of a trace or a
// result goes through here instead: a table is a one-dimensional dataset of
// compound records whose every member lies inside its record and has a sane
// size; its rows fit in what the file's bytes can hold (x 1100 when it is
// compressed: deflate's bound is about 1032:1), and the bytes its chunks claim
// to store fit in the file; an attribute holds one value
// of the class asked for. Values are converted with range checks: a negative
// number read into an unsigned field, a fraction or NaN into an integer, or
// an overflow is refused by the field's name, never clamped to 0.
//
// Every function returns KS_OK or KS_EINVAL with the reason in why: for a
// table "TABLE ...", for an attribute what is wrong with it ("is missing",
// "holds 2 values, not one"), for the caller to put after its name.
#ifndef KS_H5READ_H
#define KS_H5READ_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "results.h"

// Opens `path` read-only when it is a regular file HDF5 can open; its size
// in bytes goes to *bytes. A negative id with the reason in why (the C
// library's for a missing or unreadable file).
hid_t ks_h5read_open(const char *path, uint64_t *bytes, char *why, size_t len);

// Reads the members `fields` (matched by name; types KS_F_U32, KS_F_U64,
// KS_F_I64, KS_F_F32, KS_F_F64) of the table `name` into a new array of
// *rows records of rec bytes (free() it; NULL when there are no rows).
// file_bytes: the file's size, the bound on the rows.
int ks_h5read_table(hid_t f, const char *name, const struct ks_field *fields, size_t n_fields, size_t rec,
                    uint64_t file_bytes, void **out, size_t *rows, char *why, size_t len);

// A scalar integer attribute of loc (an integral float is refused too).
int ks_h5read_attr_int(hid_t loc, const char *name, int64_t *v, char *why, size_t len);

// A scalar numeric attribute of loc (integer or float) as a double.
int ks_h5read_attr_num(hid_t loc, const char *name, double *v, char *why, size_t len);

// A scalar string attribute, fixed or variable length, ASCII or UTF-8, cut
// to cap - 1 bytes. KS_OK, 1 when absent (buf ""), or KS_EINVAL.
int ks_h5read_attr_str(hid_t loc, const char *name, char *buf, size_t cap, char *why, size_t len);

#endif
