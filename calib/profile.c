// profile.c - the profile writer of profile.h.
#define _POSIX_C_SOURCE 200809L // access

#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "luatab.h"
#include "scenario.h"
#include "status.h"

#if !defined(KS_PROFILE_SRC_DIR) || !defined(KS_PROFILE_INSTALL_DIR)
#error "the build defines KS_PROFILE_SRC_DIR and KS_PROFILE_INSTALL_DIR"
#endif

enum { PATH_LEN = 256 };

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

char *ks_calib_profile_find(const char *spec)
{
    size_t n = strlen(spec);
    if (strchr(spec, '/') || (n > 4 && strcmp(spec + n - 4, ".lua") == 0)) {
        char *p = file_exists(spec) ? malloc(n + 1) : NULL;
        if (p)
            memcpy(p, spec, n + 1);
        return p;
    }
    const char *dirs[] = {KS_PROFILE_SRC_DIR, KS_PROFILE_INSTALL_DIR};
    for (size_t i = 0; i < 2; i++) {
        size_t m = strlen(dirs[i]) + n + 6;
        char *p = malloc(m);
        if (!p)
            return NULL;
        snprintf(p, m, "%s/%s.lua", dirs[i], spec);
        if (file_exists(p))
            return p;
        free(p);
    }
    return NULL;
}

void ks_calib_profile_text(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

int ks_calib_profile_check_out(const char *out, char *err, size_t len)
{
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    size_t bn = strlen(base);
    if (bn < 5 || strcmp(base + bn - 4, ".lua") != 0) {
        snprintf(err, len, "a profile file ends in .lua (calib/profiles/NAME.lua)");
        return KS_EINVAL;
    }
    for (size_t i = 0; i + 4 < bn; i++) {
        char c = base[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
            snprintf(err, len, "a profile's name takes letters, digits, '_' and '-' only");
            return KS_EINVAL;
        }
    }
    char dir[4096];
    if (base == out)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(base - out - 1 > 0 ? base - out - 1 : 1), out);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, len, "no directory %s", dir);
        return KS_EIO;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, len, "cannot write in %s: %s", dir, strerror(errno));
        return KS_EIO;
    }
    return KS_OK;
}

void ks_calib_profile_name(const char *out, char *buf, size_t len)
{
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    snprintf(buf, len, "%.*s", (int)(strlen(base) - 4), base);
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\%03u", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static int is_name(const char *k)
{
    if (!isalpha((unsigned char)k[0]) && k[0] != '_')
        return 0;
    for (; *k; k++)
        if (!isalnum((unsigned char)*k) && *k != '_')
            return 0;
    return 1;
}

static void put_key(FILE *f, const char *k)
{
    if (k[0] == '[') // "[n]": an integer key, written as Lua writes it
        fputs(k, f);
    else if (is_name(k))
        fputs(k, f);
    else {
        fputc('[', f);
        put_string(f, k);
        fputc(']', f);
    }
    fputs(" = ", f);
}

static void indent(FILE *f, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", f);
}

static void put_figure(FILE *f, const struct ks_calib_figure *g, const char *key, int depth)
{
    indent(f, depth);
    put_key(f, key);
    fputs("{value = ", f);
    char *end;
    (void)strtod(g->value, &end);
    if (g->value[0] && !*end && !isspace((unsigned char)g->value[0])) // a plain number: no quotes
        fputs(g->value, f);
    else
        put_string(f, g->value);
    fputs(", source = ", f);
    put_string(f, g->source);
    fputs(", kind = ", f);
    put_string(f, g->kind);
    fputs("},\n", f);
}

// A number as written in a profile: the shortest of 15 to 17 significant
// digits that reads back as the same double.
static void put_number(FILE *f, double v)
{
    char buf[64];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

// Writes t, or -1 (nothing written) when a value is not a finite number.
static int put_table(FILE *f, const struct ks_calib_table *t, int depth, char *err, size_t len)
{
    for (size_t i = 0; i < t->n_lists; i++)
        for (size_t j = 0; j < t->n; j++)
            if (!isfinite(t->lists[i].v[j])) {
                snprintf(err, len, "%s.%s[%zu]: %g is not a finite number", t->key, t->lists[i].name, j + 1,
                         t->lists[i].v[j]);
                return -1;
            }
    for (size_t i = 0; i < t->n_fields; i++)
        if (!t->fields[i].text && !isfinite(t->fields[i].v)) {
            snprintf(err, len, "%s.%s: %g is not a finite number", t->key, t->fields[i].name, t->fields[i].v);
            return -1;
        }
    indent(f, depth);
    put_key(f, t->key);
    fputc('{', f);
    for (size_t i = 0; i < t->n_lists; i++) {
        fprintf(f, "%s = {", t->lists[i].name);
        for (size_t j = 0; j < t->n; j++) {
            if (j)
                fputs(", ", f);
            put_number(f, t->lists[i].v[j]);
        }
        fputs("}, ", f);
    }
    for (size_t i = 0; i < t->n_fields; i++) {
        const struct ks_calib_field *x = &t->fields[i];
        fprintf(f, "%s = ", x->name);
        if (x->text)
            put_string(f, x->text);
        else
            put_number(f, x->v);
        fputs(", ", f);
    }
    fputs("source = ", f);
    put_string(f, t->source);
    fputs(", kind = ", f);
    put_string(f, t->kind);
    fputs("},\n", f);
    return 0;
}

static const struct ks_calib_table *table_named(const struct ks_calib_profile *p, const char *key)
{
    for (size_t i = 0; i < p->n_tables; i++)
        if (strcmp(p->tables[i].key, key) == 0)
            return &p->tables[i];
    return NULL;
}

static const struct ks_calib_figure *replacement(const struct ks_calib_profile *p, const char *path)
{
    for (size_t i = 0; i < p->n_figs; i++)
        if (strcmp(p->figs[i].path, path) == 0)
            return &p->figs[i];
    return NULL;
}

static void join(char *buf, size_t len, const char *prefix, const char *key)
{
    snprintf(buf, len, "%s%s%s", prefix, prefix[0] ? "." : "", key);
}

// Writes the fields of table t (at dotted path `prefix`), replacing and
// adding figures. -1 when a value cannot be written back.
static int put_fields(FILE *f, const struct ks_calib_profile *p, const struct ks_luatab *t, const char *prefix,
                      int depth, char *err, size_t len)
{
    char path[PATH_LEN];
    for (const struct ks_luatab *c = t->child; c; c = c->next) {
        if (depth == 1 && (!strcmp(c->key, "name") || !strcmp(c->key, "part") || !strcmp(c->key, "notes") ||
                           !strcmp(c->key, "cpu"))) // this machine's, not the base's
            continue;
        join(path, sizeof path, prefix, c->key);
        const struct ks_calib_table *tt = depth == 1 ? table_named(p, c->key) : NULL;
        if (tt) {
            if (put_table(f, tt, depth, err, len) != 0)
                return -1;
            continue;
        }
        const struct ks_calib_figure *g = replacement(p, path);
        if (g) {
            put_figure(f, g, c->key, depth);
            continue;
        }
        indent(f, depth);
        put_key(f, c->key);
        switch (c->type) {
        case KS_LUATAB_BOOL:
            fputs(c->b ? "true" : "false", f);
            break;
        case KS_LUATAB_INT:
            fprintf(f, "%lld", (long long)c->i);
            break;
        case KS_LUATAB_REAL:
            fprintf(f, "%.17g", c->d);
            break;
        case KS_LUATAB_STRING:
            put_string(f, c->s);
            break;
        case KS_LUATAB_TABLE: {
            // a figure {value, source, kind} stays on one line; other tables open up
            const struct ks_luatab *v = ks_luatab_get(c, "value");
            int figure = v && v->type != KS_LUATAB_TABLE && ks_luatab_get(c, "source");
            fputs(figure ? "{" : "{\n", f);
            if (figure) {
                const char *keys[] = {"value", "source", "kind"};
                for (int i = 0; i < 3; i++) {
                    const struct ks_luatab *x = ks_luatab_get(c, keys[i]);
                    if (!x)
                        continue;
                    fprintf(f, "%s%s = ", i ? ", " : "", keys[i]);
                    if (x->type == KS_LUATAB_STRING)
                        put_string(f, x->s);
                    else if (x->type == KS_LUATAB_INT)
                        fprintf(f, "%lld", (long long)x->i);
                    else if (x->type == KS_LUATAB_REAL)
                        fprintf(f, "%.17g", x->d);
                    else
                        fputs(x->b ? "true" : "false", f);
                }
            } else {
                if (put_fields(f, p, c, path, depth + 1, err, len) != 0)
                    return -1;
                indent(f, depth);
            }
            fputc('}', f);
            break;
        }
        default:
            snprintf(err, len, "%s: a %s cannot be written into a profile", path, ks_luatab_type_name(c));
            return -1;
        }
        fputs(",\n", f);
    }
    // figures this table lacks: those directly under it
    for (size_t i = 0; i < p->n_figs; i++) {
        const char *fp = p->figs[i].path, *rest = fp;
        size_t pl = strlen(prefix);
        if (pl) {
            if (strncmp(fp, prefix, pl) != 0 || fp[pl] != '.')
                continue;
            rest = fp + pl + 1;
        }
        if (strchr(rest, '.') || ks_luatab_get(t, rest))
            continue;
        put_figure(f, &p->figs[i], rest, depth);
    }
    // tables this one lacks that new figures live in (one level: "ssd.x" without an ssd table)
    for (size_t i = 0; depth == 1 && i < p->n_figs; i++) {
        const char *dot = strchr(p->figs[i].path, '.');
        if (!dot || strchr(dot + 1, '.'))
            continue;
        char table[64];
        snprintf(table, sizeof table, "%.*s", (int)(dot - p->figs[i].path), p->figs[i].path);
        if (ks_luatab_get(t, table))
            continue;
        int first = 1; // written once, at its first figure
        for (size_t j = 0; j < i; j++)
            first &= !(strncmp(p->figs[j].path, table, strlen(table)) == 0 && p->figs[j].path[strlen(table)] == '.');
        if (!first)
            continue;
        indent(f, depth);
        fprintf(f, "%s = {\n", table);
        for (size_t j = i; j < p->n_figs; j++)
            if (strncmp(p->figs[j].path, table, strlen(table)) == 0 && p->figs[j].path[strlen(table)] == '.')
                put_figure(f, &p->figs[j], p->figs[j].path + strlen(table) + 1, depth + 1);
        indent(f, depth);
        fputs("},\n", f);
    }
    // tables of lists the base lacks
    for (size_t i = 0; depth == 1 && i < p->n_tables; i++)
        if (!ks_luatab_get(t, p->tables[i].key) && put_table(f, &p->tables[i], depth, err, len) != 0)
            return -1;
    return 0;
}

int ks_calib_profile_write(const struct ks_calib_profile *p, const char *out, char *err, size_t len)
{
    struct ks_luatab *base = NULL;
    int st = ks_luatab_load(p->base_file, NULL, &base, err, len);
    if (st != KS_OK)
        return st;
    struct ks_atomicfile a;
    st = ks_atomicfile_open(&a, out, &(struct ks_atomicfile_params){.sync = 1}, NULL, 0);
    if (st != KS_OK) {
        ks_luatab_free(base);
        snprintf(err, len, st == KS_ENOMEM ? "out of memory" : "%s: cannot create a file there", out);
        return st;
    }
    FILE *f = a.f;
    if (p->comment) {
        for (const char *c = p->comment; *c;) {
            size_t k = strcspn(c, "\n");
            fprintf(f, "-- %.*s\n", (int)k, c);
            c += k + (c[k] == '\n');
        }
    }
    fputs("return {\n", f);
    const char *meta[][2] = {{"name", p->name}, {"part", p->part}, {"notes", p->notes}, {"cpu", p->cpu}};
    for (int i = 0; i < 4; i++) {
        if (i == 3 && !p->cpu)
            break;
        fprintf(f, "  %s = ", meta[i][0]);
        put_string(f, meta[i][1] ? meta[i][1] : "");
        fputs(",\n", f);
    }
    int bad = put_fields(f, p, base, "", 1, err, len) != 0;
    fputs("}\n", f);
    ks_luatab_free(base);
    if (bad) {
        ks_atomicfile_abandon(&a);
        return KS_EINVAL;
    }
    if (ks_atomicfile_finish(&a, NULL, 0) != KS_OK) {
        ks_atomicfile_abandon(&a);
        snprintf(err, len, "%s: cannot write the file", out);
        return KS_EIO;
    }
    char why[4096];
    st = ks_scenario_check_profile(a.tmp, NULL, why, sizeof why);
    if (st != KS_OK) {
        ks_atomicfile_abandon(&a);
        snprintf(err, len, "the written profile does not pass the check: %s", why);
        return KS_EINVAL;
    }
    if (ks_atomicfile_commit(&a, NULL, 0) != KS_OK) {
        snprintf(err, len, "%s: cannot rename the file into place", out);
        return KS_EIO;
    }
    return KS_OK;
}
