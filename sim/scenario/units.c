// units.c - the unit table, the quantity parser and the formatter.
//
// A unit scales its number by 10^p10 * 2^p2 * factor. p10 is folded into the
// decimal text before strtod (one correct rounding), p2 is exact (ldexp),
// factor (60 for minutes, 3600 for hours) costs one more rounding.
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *sym;
    enum ks_unit kind;
    int p10, p2;
    double factor;
};

// Every unit of every kind, so that a unit of the wrong kind is named as such.
static const struct unit units[] = {
    {"B", KS_UNIT_BYTES, 0, 0, 1},      {"kB", KS_UNIT_BYTES, 3, 0, 1},    {"KB", KS_UNIT_BYTES, 3, 0, 1},
    {"MB", KS_UNIT_BYTES, 6, 0, 1},     {"GB", KS_UNIT_BYTES, 9, 0, 1},    {"TB", KS_UNIT_BYTES, 12, 0, 1},
    {"PB", KS_UNIT_BYTES, 15, 0, 1},    {"KiB", KS_UNIT_BYTES, 0, 10, 1},  {"MiB", KS_UNIT_BYTES, 0, 20, 1},
    {"GiB", KS_UNIT_BYTES, 0, 30, 1},   {"TiB", KS_UNIT_BYTES, 0, 40, 1},  {"PiB", KS_UNIT_BYTES, 0, 50, 1},
    {"Bps", KS_UNIT_BANDWIDTH, 0, 0, 1},    {"B/s", KS_UNIT_BANDWIDTH, 0, 0, 1},
    {"kBps", KS_UNIT_BANDWIDTH, 3, 0, 1},   {"kB/s", KS_UNIT_BANDWIDTH, 3, 0, 1},
    {"KBps", KS_UNIT_BANDWIDTH, 3, 0, 1},   {"KB/s", KS_UNIT_BANDWIDTH, 3, 0, 1},
    {"MBps", KS_UNIT_BANDWIDTH, 6, 0, 1},   {"MB/s", KS_UNIT_BANDWIDTH, 6, 0, 1},
    {"GBps", KS_UNIT_BANDWIDTH, 9, 0, 1},   {"GB/s", KS_UNIT_BANDWIDTH, 9, 0, 1},
    {"TBps", KS_UNIT_BANDWIDTH, 12, 0, 1},  {"TB/s", KS_UNIT_BANDWIDTH, 12, 0, 1},
    {"KiBps", KS_UNIT_BANDWIDTH, 0, 10, 1}, {"KiB/s", KS_UNIT_BANDWIDTH, 0, 10, 1},
    {"MiBps", KS_UNIT_BANDWIDTH, 0, 20, 1}, {"MiB/s", KS_UNIT_BANDWIDTH, 0, 20, 1},
    {"GiBps", KS_UNIT_BANDWIDTH, 0, 30, 1}, {"GiB/s", KS_UNIT_BANDWIDTH, 0, 30, 1},
    {"TiBps", KS_UNIT_BANDWIDTH, 0, 40, 1}, {"TiB/s", KS_UNIT_BANDWIDTH, 0, 40, 1},
    {"bps", KS_UNIT_BANDWIDTH, 0, -3, 1},   {"b/s", KS_UNIT_BANDWIDTH, 0, -3, 1},
    {"kbps", KS_UNIT_BANDWIDTH, 3, -3, 1},  {"kb/s", KS_UNIT_BANDWIDTH, 3, -3, 1},
    {"Kbps", KS_UNIT_BANDWIDTH, 3, -3, 1},  {"Kb/s", KS_UNIT_BANDWIDTH, 3, -3, 1},
    {"Mbps", KS_UNIT_BANDWIDTH, 6, -3, 1},  {"Mb/s", KS_UNIT_BANDWIDTH, 6, -3, 1},
    {"Gbps", KS_UNIT_BANDWIDTH, 9, -3, 1},  {"Gb/s", KS_UNIT_BANDWIDTH, 9, -3, 1},
    {"Tbps", KS_UNIT_BANDWIDTH, 12, -3, 1}, {"Tb/s", KS_UNIT_BANDWIDTH, 12, -3, 1},
    {"ns", KS_UNIT_TIME, -9, 0, 1},  {"us", KS_UNIT_TIME, -6, 0, 1},     {"\xc2\xb5s", KS_UNIT_TIME, -6, 0, 1},
    {"ms", KS_UNIT_TIME, -3, 0, 1},  {"s", KS_UNIT_TIME, 0, 0, 1},       {"min", KS_UNIT_TIME, 0, 0, 60},
    {"h", KS_UNIT_TIME, 0, 0, 3600}, {"%", KS_UNIT_FRACTION, -2, 0, 1},
    {"FLOPS", KS_UNIT_FLOPS, 0, 0, 1},    {"FLOP/s", KS_UNIT_FLOPS, 0, 0, 1},
    {"GFLOPS", KS_UNIT_FLOPS, 9, 0, 1},   {"GFLOP/s", KS_UNIT_FLOPS, 9, 0, 1},
    {"TFLOPS", KS_UNIT_FLOPS, 12, 0, 1},  {"TFLOP/s", KS_UNIT_FLOPS, 12, 0, 1},
    {"PFLOPS", KS_UNIT_FLOPS, 15, 0, 1},  {"PFLOP/s", KS_UNIT_FLOPS, 15, 0, 1},
    {"/s", KS_UNIT_RATE, 0, 0, 1},   {"/min", KS_UNIT_RATE, 0, 0, 1.0 / 60}, {"/h", KS_UNIT_RATE, 0, 0, 1.0 / 3600},
};
enum { N_UNITS = sizeof units / sizeof units[0] };

static const char *const kind_names[] = {"size", "bandwidth", "time", "fraction", "count", "FLOP rate",
                                         "rate", "number"};
static const char *const symbols[] = {"B", "B/s", "s", "fraction", "", "FLOP/s", "1/s", ""};
static const char *const examples[] = {"\"80GiB\", \"141GB\" or bytes", "\"25GBps\", \"200Gbps\" or bytes/s",
                                       "\"2us\", \"1.5ms\", \"120s\" or seconds", "\"85%\" or a number from 0",
                                       "a whole number", "\"990TFLOPS\" or FLOP/s", "\"2.5/s\" or events/s",
                                       "a number"};

const char *ks_units_kind_name(enum ks_unit kind)
{
    return kind_names[kind];
}

const char *ks_units_symbol(enum ks_unit kind)
{
    return symbols[kind];
}

// The number at the start of s: digits, an optional point and digits (at
// least one digit in all), an optional exponent. Returns its length (0: none)
// and its own exponent in *exp, the mantissa's length in *mlen.
static size_t scan_number(const char *s, size_t *mlen, long *exp)
{
    size_t i = 0, digits = 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return 0;
    *mlen = i;
    *exp = 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        int neg = 0;
        if (s[j] == '+' || s[j] == '-')
            neg = s[j++] == '-';
        if (s[j] >= '0' && s[j] <= '9') {
            long e = 0;
            while (s[j] >= '0' && s[j] <= '9') {
                if (e < 100000)
                    e = e * 10 + (s[j] - '0');
                j++;
            }
            *exp = neg ? -e : e;
            i = j;
        }
    }
    return i;
}

// Splits s into number and unit and checks the unit's kind; on success *u
// is the unit (NULL: a plain number), the number's text is s[0..*mlen) with
// exponent *exp.
static int split(const char *s, enum ks_unit kind, const struct unit **u, size_t *mlen, long *exp, char *why,
                 size_t len)
{
    if (!s || !*s) {
        snprintf(why, len, "is empty; expected %s", examples[kind]);
        return -1;
    }
    for (const char *p = s; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n') {
            snprintf(why, len, "'%s' has a space; write the number and its unit together, e.g. %s", s,
                     examples[kind]);
            return -1;
        }
    if (*s == '-') {
        snprintf(why, len, "'%s' is negative", s);
        return -1;
    }
    size_t n = scan_number(s, mlen, exp);
    if (n == 0) {
        snprintf(why, len, "'%s' is not a number; expected %s", s, examples[kind]);
        return -1;
    }
    const char *sym = s + n;
    *u = NULL;
    if (!*sym)
        return 0;
    for (size_t i = 0; i < N_UNITS; i++)
        if (strcmp(units[i].sym, sym) == 0) {
            if (units[i].kind != kind) {
                snprintf(why, len, "'%s' is a %s; expected a %s (%s)", s, kind_names[units[i].kind],
                         kind_names[kind], examples[kind]);
                return -1;
            }
            *u = &units[i];
            return 0;
        }
    snprintf(why, len, "unknown unit '%s' in '%s'; expected %s", sym, s, examples[kind]);
    return -1;
}

int ks_units_check(double v, enum ks_unit kind, char *why, size_t len)
{
    if (!isfinite(v)) {
        snprintf(why, len, "%g is not a finite number", v);
        return -1;
    }
    if (v < 0) {
        snprintf(why, len, "%g is negative", v);
        return -1;
    }
    if ((kind == KS_UNIT_COUNT) && v != floor(v)) {
        snprintf(why, len, "%g is not a whole number", v);
        return -1;
    }
    return 0;
}

int ks_units_parse(const char *s, enum ks_unit kind, double *out, char *why, size_t len)
{
    const struct unit *u;
    size_t mlen;
    long exp;
    if (split(s, kind, &u, &mlen, &exp, why, len) != 0)
        return -1;
    char text[96];
    if (mlen > 64) {
        snprintf(why, len, "'%s' has too many digits", s);
        return -1;
    }
    snprintf(text, sizeof text, "%.*se%ld", (int)mlen, s, exp + (u ? u->p10 : 0));
    errno = 0;
    double v = strtod(text, NULL);
    if (u)
        v = ldexp(v, u->p2) * u->factor;
    if (errno == ERANGE && v != 0) {
        snprintf(why, len, "'%s' is out of range", s);
        return -1;
    }
    if (!isfinite(v)) {
        snprintf(why, len, "'%s' is out of range", s);
        return -1;
    }
    if (ks_units_check(v, kind, why, len) != 0) {
        snprintf(why, len, "'%s' is not a whole number", s);
        return -1;
    }
    *out = v;
    return 0;
}

int ks_units_parse_u64(const char *s, enum ks_unit kind, uint64_t *out, char *why, size_t len)
{
    const struct unit *u;
    size_t mlen;
    long exp;
    if (split(s, kind, &u, &mlen, &exp, why, len) != 0)
        return -1;
    int p10 = u ? u->p10 : 0, p2 = u ? u->p2 : 0;
    int integral = strcspn(s, ".eE") >= mlen && s[mlen] != 'e' && s[mlen] != 'E' && p10 >= 0 && p2 >= 0 &&
                   (!u || u->factor == 1);
    if (integral) { // exact integer arithmetic with overflow checks
        uint64_t v = 0;
        int over = 0;
        for (size_t i = 0; i < mlen; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            over |= v > (UINT64_MAX - d) / 10;
            v = v * 10 + d;
        }
        for (int i = 0; i < p10; i++) {
            over |= v > UINT64_MAX / 10;
            v *= 10;
        }
        over |= p2 >= 64 || (p2 > 0 && v > (UINT64_MAX >> p2));
        if (over) {
            snprintf(why, len, "'%s' is too large", s);
            return -1;
        }
        *out = v << p2;
        return 0;
    }
    double v;
    if (ks_units_parse(s, kind, &v, why, len) != 0)
        return -1;
    if (v != floor(v)) {
        snprintf(why, len, "'%s' is not a whole number of %s", s, kind == KS_UNIT_COUNT ? "units" : symbols[kind]);
        return -1;
    }
    if (v > 0x1p53) {
        snprintf(why, len, "'%s' is too large to be exact; write it as a whole number", s);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

// v / scale with up to 10 significant digits and a unit, into buf.
static int put(char *buf, size_t len, double v, double scale, const char *sym)
{
    return snprintf(buf, len, "%.10g%s", v / scale, sym);
}

// Bytes and bandwidths: the shorter of the best binary and decimal forms.
static int format_bytes(double v, const char *tail, char *buf, size_t len)
{
    static const char *const dec[] = {"", "k", "M", "G", "T", "P"};
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
    char a[64], b[64], sym[16];
    int k = 0;
    while (k < 5 && v >= pow(10, 3 * (k + 1)))
        k++;
    snprintf(sym, sizeof sym, "%sB%s", dec[k], tail);
    put(a, sizeof a, v, pow(10, 3 * k), sym);
    int j = 0;
    while (j < 5 && v >= ldexp(1, 10 * (j + 1)))
        j++;
    snprintf(sym, sizeof sym, "%sB%s", bin[j], tail);
    put(b, sizeof b, v, ldexp(1, 10 * j), sym);
    return snprintf(buf, len, "%s", strlen(b) < strlen(a) ? b : a);
}

int ks_units_format(double v, enum ks_unit kind, char *buf, size_t len)
{
    if (!isfinite(v))
        return snprintf(buf, len, "%g", v);
    switch (kind) {
    case KS_UNIT_BYTES:
        return format_bytes(v, "", buf, len);
    case KS_UNIT_BANDWIDTH:
        return format_bytes(v, "ps", buf, len);
    case KS_UNIT_TIME:
        if (v == 0)
            return snprintf(buf, len, "0s");
        if (v < 1e-6)
            return put(buf, len, v, 1e-9, "ns");
        if (v < 1e-3)
            return put(buf, len, v, 1e-6, "us");
        if (v < 1)
            return put(buf, len, v, 1e-3, "ms");
        if (v >= 3600 && fmod(v, 3600) == 0)
            return put(buf, len, v, 3600, "h");
        return put(buf, len, v, 1, "s");
    case KS_UNIT_FRACTION:
        return snprintf(buf, len, "%.10g%%", v * 100);
    case KS_UNIT_FLOPS:
        if (v >= 1e15)
            return put(buf, len, v, 1e15, "PFLOPS");
        if (v >= 1e12)
            return put(buf, len, v, 1e12, "TFLOPS");
        if (v >= 1e9)
            return put(buf, len, v, 1e9, "GFLOPS");
        return put(buf, len, v, 1, "FLOPS");
    case KS_UNIT_RATE:
        return put(buf, len, v, 1, "/s");
    case KS_UNIT_COUNT:
    case KS_UNIT_NUMBER:
        break;
    }
    return snprintf(buf, len, "%.10g", v);
}
