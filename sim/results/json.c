// json.c - jansson setters and the two printers (JSON, aligned table).
#include "json.h"

#include <math.h>
#include <string.h>

enum { REAL_DIGITS = 12 }; // enough for any figure, short enough to read

int ks_json_set_str(json_t *o, const char *key, const char *value)
{
    return json_object_set_new(o, key, json_string(value));
}

int ks_json_set_int(json_t *o, const char *key, int64_t value)
{
    return json_object_set_new(o, key, json_integer((json_int_t)value));
}

int ks_json_set_bool(json_t *o, const char *key, int value)
{
    return json_object_set_new(o, key, json_boolean(value));
}

int ks_json_set_real(json_t *o, const char *key, double value)
{
    return json_object_set_new(o, key, isfinite(value) ? json_real(value) : json_null());
}

json_t *ks_json_num(double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) <= 0x1p53)
        return json_integer((json_int_t)(int64_t)v);
    return isfinite(v) ? json_real(v) : json_null();
}

int ks_json_set_num(json_t *o, const char *key, double value)
{
    return json_object_set_new(o, key, ks_json_num(value));
}

int ks_json_print(FILE *f, const json_t *o)
{
    if (json_dumpf(o, f, JSON_INDENT(2) | JSON_REAL_PRECISION(REAL_DIGITS)) != 0)
        return -1;
    if (fputc('\n', f) == EOF || fflush(f) != 0)
        return -1;
    return 0;
}

// The text of a value in the table; points into buf or into v itself.
static const char *value_text(const json_t *v, char *buf, size_t len)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_value(v);
    case JSON_INTEGER:
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL: {
        double x = json_real_value(v);
        // large rates read better without an exponent
        snprintf(buf, len, fabs(x) >= 1e5 && fabs(x) < 1e15 ? "%.0f" : "%.6g", x);
        return buf;
    }
    case JSON_TRUE:
        return "yes";
    case JSON_FALSE:
        return "no";
    case JSON_NULL:
        return "-";
    default: { // nested values print as compact JSON
        size_t n = json_dumpb(v, buf, len - 1, JSON_COMPACT | JSON_REAL_PRECISION(REAL_DIGITS));
        if (n == 0 || n >= len - 1)
            return "(too long to show)";
        buf[n] = '\0';
        return buf;
    }
    }
}

int ks_json_print_table(FILE *f, const json_t *o, const json_t *notes)
{
    const char *key;
    json_t *v;
    char buf[512];
    int width = 0, vwidth = 0;
    json_object_foreach((json_t *)o, key, v) {
        int k = (int)strlen(key), n = (int)strlen(value_text(v, buf, sizeof buf));
        width = k > width ? k : width;
        vwidth = n > vwidth ? n : vwidth;
    }
    json_object_foreach((json_t *)o, key, v) {
        const json_t *note = notes ? json_object_get(notes, key) : NULL;
        const char *text = value_text(v, buf, sizeof buf);
        if (note && json_is_string(note))
            fprintf(f, "%-*s  %-*s  # %s\n", width, key, vwidth, text, json_string_value(note));
        else
            fprintf(f, "%-*s  %s\n", width, key, text);
    }
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
