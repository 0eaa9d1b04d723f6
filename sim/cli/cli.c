// cli.c - strict option parsing, help text and usage errors for commands.
//
// Numbers are parsed by hand-checked rules rather than bare strtoull/strtod,
// which accept leading space, a sign (strtoull negates "-5" into a huge
// value), hex and "nan": any of those in a command line is a typo to report.
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void vreport(const struct ks_cli_cmd *cmd, const char *fmt, va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "kvstrata %s: ", cmd->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int ks_cli_usage_error(const struct ks_cli_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'kvstrata %s --help'.\n", cmd->name);
    return KS_EXIT_USAGE;
}

int ks_cli_fail(const struct ks_cli_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    return KS_EXIT_FAIL;
}

int ks_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why, size_t len)
{
    if (*s == '\0') {
        snprintf(why, len, "needs a value");
        return -1;
    }
    if (*s == '-' && s[1] >= '0' && s[1] <= '9') {
        snprintf(why, len, "'%s' is negative; expected an integer from %" PRIu64 " to %" PRIu64, s, min, max);
        return -1;
    }
    uint64_t v = 0;
    int overflow = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') {
            snprintf(why, len, "'%s' is not a whole number", s);
            return -1;
        }
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = 1;
        else
            v = v * 10 + d;
    }
    if (overflow || v < min || v > max) {
        snprintf(why, len, "'%s' is out of range; expected an integer from %" PRIu64 " to %" PRIu64, s, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int ks_cli_parse_real(const char *s, double min, double max, double *out, char *why, size_t len)
{
    if (*s == '\0') {
        snprintf(why, len, "needs a value");
        return -1;
    }
    // digits, one sign, a point and an exponent; strtod then checks the order
    int digits = 0;
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digits = 1;
        else if (!strchr("+-.eE", *p)) {
            digits = 0;
            break;
        }
    }
    char *end = NULL;
    errno = 0;
    double v = digits ? strtod(s, &end) : NAN;
    if (!digits || end == s || *end != '\0') {
        snprintf(why, len, "'%s' is not a number", s);
        return -1;
    }
    if (errno == ERANGE || !isfinite(v) || v < min || v > max) {
        snprintf(why, len, "'%s' is out of range; expected a number from %g to %g", s, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

static uint64_t int_max(const struct ks_cli_opt *o)
{
    if (o->max)
        return o->max;
    return o->kind == KS_CLI_U32 ? UINT32_MAX : UINT64_MAX;
}

// The value shown for an option in the help: its placeholder or its choices.
static void arg_text(const struct ks_cli_opt *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->kind == KS_CLI_FLAG)
        return;
    if (o->kind != KS_CLI_CHOICE) {
        snprintf(buf, len, "%s", o->arg ? o->arg : "VALUE");
        return;
    }
    size_t n = 0;
    for (const char *const *c = o->choices; *c && n < len; c++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", c == o->choices ? "" : "|", *c);
}

static void default_text(const struct ks_cli_opt *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->hide_default)
        return;
    switch (o->kind) {
    case KS_CLI_FLAG:
        break;
    case KS_CLI_U32:
        snprintf(buf, len, " (default %" PRIu32 ")", *(const uint32_t *)o->out);
        break;
    case KS_CLI_U64:
        snprintf(buf, len, " (default %" PRIu64 ")", *(const uint64_t *)o->out);
        break;
    case KS_CLI_REAL:
        snprintf(buf, len, " (default %g)", *(const double *)o->out);
        break;
    case KS_CLI_CHOICE:
        snprintf(buf, len, " (default %s)", o->choices[*(const int *)o->out]);
        break;
    case KS_CLI_STRING:
        if (*(const char *const *)o->out)
            snprintf(buf, len, " (default %s)", *(const char *const *)o->out);
        break;
    case KS_CLI_STRINGS:
    case KS_CLI_ARG:
        break;
    }
}

void ks_cli_help(const struct ks_cli_cmd *cmd, const struct ks_cli_opt *opts, size_t n_opts, FILE *f)
{
    enum { WRAP = 28 }; // option column width before the help moves to its own line
    char arg[256], def[128], col[320];
    fprintf(f, "Usage: kvstrata %s", cmd->name);
    for (size_t i = 0; i < n_opts; i++)
        if (opts[i].kind == KS_CLI_ARG)
            fprintf(f, " %s", opts[i].arg ? opts[i].arg : "ARG");
    fprintf(f, " [options]\n\n%s.\n", cmd->summary);
    if (cmd->about)
        fprintf(f, "\n%s", cmd->about);
    fprintf(f, "\nOptions:\n");
    for (size_t i = 0; i <= n_opts; i++) {
        const char *help = "show this help and exit";
        if (i < n_opts && opts[i].kind == KS_CLI_ARG)
            continue;
        if (i < n_opts) {
            arg_text(&opts[i], arg, sizeof arg);
            default_text(&opts[i], def, sizeof def);
            if (opts[i].short_name)
                snprintf(col, sizeof col, "-%c, --%s%s%s", opts[i].short_name, opts[i].name, arg[0] ? " " : "", arg);
            else
                snprintf(col, sizeof col, "--%s%s%s", opts[i].name, arg[0] ? " " : "", arg);
            help = opts[i].help;
        } else {
            def[0] = '\0';
            snprintf(col, sizeof col, "-h, --help");
        }
        if (strlen(col) < WRAP)
            fprintf(f, "  %-*s %s%s\n", WRAP - 1, col, help, def);
        else
            fprintf(f, "  %s\n  %-*s %s%s\n", col, WRAP - 1, "", help, def);
    }
}

static const struct ks_cli_opt *find(const struct ks_cli_opt *opts, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (opts[i].kind != KS_CLI_ARG && strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

// Stores value into o->out; 0, or a usage error (status) naming the option.
static int store(const struct ks_cli_cmd *cmd, const struct ks_cli_opt *o, const char *value)
{
    char why[256];
    uint64_t u;
    double d;
    switch (o->kind) {
    case KS_CLI_FLAG:
        *(int *)o->out = 1;
        return 0;
    case KS_CLI_U32:
    case KS_CLI_U64:
        if (ks_cli_parse_u64(value, o->min, int_max(o), &u, why, sizeof why) != 0)
            return ks_cli_usage_error(cmd, "--%s: %s", o->name, why);
        if (o->kind == KS_CLI_U32)
            *(uint32_t *)o->out = (uint32_t)u;
        else
            *(uint64_t *)o->out = u;
        return 0;
    case KS_CLI_REAL:
        if (ks_cli_parse_real(value, o->fmin, o->fmax, &d, why, sizeof why) != 0)
            return ks_cli_usage_error(cmd, "--%s: %s", o->name, why);
        *(double *)o->out = d;
        return 0;
    case KS_CLI_CHOICE:
        for (int k = 0; o->choices[k]; k++)
            if (strcmp(o->choices[k], value) == 0) {
                *(int *)o->out = k;
                return 0;
            }
        arg_text(o, why, sizeof why);
        return ks_cli_usage_error(cmd, "--%s: '%s' is not one of %s", o->name, value, why);
    case KS_CLI_STRING:
        if (*value == '\0')
            return ks_cli_usage_error(cmd, "--%s needs a non-empty value", o->name);
        *(const char **)o->out = value;
        return 0;
    case KS_CLI_STRINGS: {
        struct ks_cli_strings *l = o->out;
        if (*value == '\0')
            return ks_cli_usage_error(cmd, "--%s needs a non-empty value", o->name);
        if (l->n >= l->cap)
            return ks_cli_usage_error(cmd, "--%s given more than %zu times", o->name, l->cap);
        l->v[l->n++] = value;
        return 0;
    }
    case KS_CLI_ARG:
        break;
    }
    return ks_cli_usage_error(cmd, "--%s: unsupported option kind", o->name);
}

int ks_cli_parse(const struct ks_cli_cmd *cmd, const struct ks_cli_opt *opts, size_t n_opts, int argc,
                 char **argv, int *status)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            ks_cli_help(cmd, opts, n_opts, stdout);
            *status = KS_EXIT_OK;
            return 0;
        }
    size_t next_arg = 0; // positional arguments are filled in table order
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const struct ks_cli_opt *o = NULL;
        if (a[0] == '-' && a[1] != '\0' && a[1] != '-' && a[2] == '\0')
            for (size_t k = 0; k < n_opts && !o; k++)
                if (opts[k].short_name == a[1])
                    o = &opts[k];
        if (!o && (a[0] != '-' || a[1] != '-' || a[2] == '\0')) {
            if (a[0] == '-' && a[1] != '\0' && a[1] != '-') {
                *status = ks_cli_usage_error(cmd, "unknown option '%s'", a);
                return 0;
            }
            while (next_arg < n_opts && opts[next_arg].kind != KS_CLI_ARG)
                next_arg++;
            if (next_arg == n_opts || a[0] == '-') {
                *status = ks_cli_usage_error(cmd, "unexpected argument '%s'", a);
                return 0;
            }
            *(const char **)opts[next_arg++].out = a;
            continue;
        }
        const char *name = a + 2, *eq = o ? NULL : strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (!o)
            o = find(opts, n_opts, name, len);
        if (!o) {
            *status = ks_cli_usage_error(cmd, "unknown option '--%.*s'", (int)len, name);
            return 0;
        }
        const char *value = NULL;
        if (o->kind == KS_CLI_FLAG) {
            if (eq) {
                *status = ks_cli_usage_error(cmd, "--%s takes no value", o->name);
                return 0;
            }
        } else if (eq && eq[1] != '\0') {
            value = eq + 1;
        } else if (!eq && i + 1 < argc) {
            value = argv[++i];
        } else {
            *status = ks_cli_usage_error(cmd, "--%s needs a value", o->name);
            return 0;
        }
        if ((*status = store(cmd, o, value)) != 0)
            return 0;
    }
    for (size_t i = 0; i < n_opts; i++)
        if (opts[i].kind == KS_CLI_ARG && !*(const char *const *)opts[i].out) {
            *status = ks_cli_usage_error(cmd, "missing %s", opts[i].arg ? opts[i].arg : "argument");
            return 0;
        }
    *status = KS_EXIT_OK;
    return 1;
}
