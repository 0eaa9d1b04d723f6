// json.h - thin helpers over jansson for the figures commands print and
// the summaries a run or a sweep writes.
//
// A command gathers its figures in one jansson object, in the order it wants
// them shown (jansson keeps insertion order, so output is stable), then
// prints that object either as JSON (--json: exactly one object on stdout)
// or as an aligned table. Setters return 0 or -1 (out of memory); errors can
// be OR-ed and checked once. A value that is a whole number is stored as a
// JSON integer, so counters never print with a fraction.
#ifndef KS_JSON_H
#define KS_JSON_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

int ks_json_set_str(json_t *o, const char *key, const char *value);
int ks_json_set_int(json_t *o, const char *key, int64_t value);
int ks_json_set_bool(json_t *o, const char *key, int value);
// The JSON value of a figure: an integer when v is whole and exact in a
// double (|v| <= 2^53), else a real; NaN and infinities become null. NULL
// when out of memory.
json_t *ks_json_num(double v);
// A real; NaN and infinities, which JSON cannot hold, become null.
int ks_json_set_real(json_t *o, const char *key, double value);
// An integer when value is whole and exact in a double (|value| <= 2^53),
// otherwise a real: for figures that arrive as doubles (statistics).
int ks_json_set_num(json_t *o, const char *key, double value);

// Prints o as indented JSON and a newline, then flushes. 0, or -1 on error.
int ks_json_print(FILE *f, const json_t *o);

// Prints o as "key  value" lines, keys padded to one column; when notes (an
// object of strings, may be NULL) has the key, "  # note" follows. Nested
// values print as compact JSON. 0, or -1 on error.
int ks_json_print_table(FILE *f, const json_t *o, const json_t *notes);

#endif
