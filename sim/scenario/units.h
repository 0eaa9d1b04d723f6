// units.h - strict parsing and printing of quantities written with units.
//
// A quantity is a string, a number immediately followed by a unit ("25GBps",
// "2TiB", "1.5ms", "85%"), or a plain number in the SI base unit of its kind
// (bytes, bytes/s, seconds, 1 = 100%). Each use of a quantity has one kind,
// and a string whose unit belongs to another kind is refused, as are unknown
// units, spaces, trailing text, NaN, infinities and negatives (no quantity in
// kvstrata is negative). Decimal prefixes are powers of ten (kB = KB = 1000 B),
// binary ones powers of two (KiB = 1024 B); a lowercase b is a bit.
// Decimal scaling is done in the decimal text before conversion, so "1.5ms"
// is exactly the double nearest 1.5e-3 and "25GBps" is exactly 25e9.
#ifndef KS_UNITS_H
#define KS_UNITS_H

#include <stddef.h>
#include <stdint.h>

enum ks_unit {
    KS_UNIT_BYTES,     // bytes: B, kB/KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB
    KS_UNIT_BANDWIDTH, // bytes/s: a byte unit + "ps" or "/s"; bits: bps, kbps, Mbps, Gbps, Tbps (or b/s)
    KS_UNIT_TIME,      // seconds: ns, us, ms, s, min, h
    KS_UNIT_FRACTION,  // 1 = 100%: "%" or a plain number
    KS_UNIT_COUNT,     // a whole number, no unit
    KS_UNIT_FLOPS,     // floating-point operations per second: FLOPS or FLOP/s, prefixes G, T, P
    KS_UNIT_RATE,      // events per second: /s, /min, /h or a plain number
    KS_UNIT_NUMBER,    // a plain real number, no unit
};

// Parses s as a quantity of `kind` into *out (in the base unit). Returns 0,
// or -1 with the reason in why ("'25GBps' is a bandwidth; expected a time").
int ks_units_parse(const char *s, enum ks_unit kind, double *out, char *why, size_t len);

// Like ks_units_parse, for quantities that must be whole (bytes, counts):
// exact up to 2^64 - 1 when the number is written as an integer, up to 2^53
// otherwise. Returns 0, or -1 with the reason in why.
int ks_units_parse_u64(const char *s, enum ks_unit kind, uint64_t *out, char *why, size_t len);

// Checks a plain number given for a quantity of `kind`: finite, not negative,
// whole for counts. Returns 0, or -1 with the reason in why.
int ks_units_check(double v, enum ks_unit kind, char *why, size_t len);

// The kind's name ("size", "bandwidth", "time", ...), for messages.
const char *ks_units_kind_name(enum ks_unit kind);

// The base unit's symbol ("B", "B/s", "s", "fraction", "", "FLOP/s", "1/s").
const char *ks_units_symbol(enum ks_unit kind);

// Writes v readably with a unit that ks_units_parse reads back ("128KiB",
// "141GB", "25GBps", "2us", "85%"), up to 10 significant digits. Returns
// the length written (truncated to len - 1, as snprintf).
int ks_units_format(double v, enum ks_unit kind, char *buf, size_t len);

#endif
