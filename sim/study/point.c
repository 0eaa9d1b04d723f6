// point.c - one scenario point as its own `kvstrata run` process (see point.h).
//
// The argv is built in one place, so the command line a sweep writes for a
// cluster (ks_point_shell_line) is exactly the one it spawns here.
#define _XOPEN_SOURCE 700 // realpath

#include "point.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "status.h"

extern char **environ;

char *ks_point_self_exe(void)
{
    return realpath("/proc/self/exe", NULL);
}

const char **ks_point_argv(const struct ks_point *p)
{
    const char **v = calloc(2 * p->n_sets + 10, sizeof *v);
    if (!v)
        return NULL;
    size_t n = 0;
    v[n++] = p->exe;
    v[n++] = "run";
    v[n++] = p->base;
    for (size_t j = 0; j < p->n_sets; j++) {
        v[n++] = "--set";
        v[n++] = p->sets[j];
    }
    v[n++] = "-o";
    v[n++] = p->h5;
    if (p->threads) {
        v[n++] = "--threads";
        v[n++] = p->threads;
    }
    v[n++] = "--json";
    return v;
}

void ks_point_shell_word(FILE *f, const char *s)
{
    if (*s && !s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=%+-,@")]) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

int ks_point_shell_line(FILE *f, const struct ks_point *p)
{
    const char **argv = ks_point_argv(p);
    if (!argv)
        return KS_ENOMEM;
    for (size_t k = 0; argv[k]; k++) {
        if (k)
            fputc(' ', f);
        ks_point_shell_word(f, argv[k]);
    }
    free(argv);
    return KS_OK;
}

int ks_point_spawn(const struct ks_point *p, const struct ks_point_io *io, pid_t *pid, char *err, size_t len)
{
    const char **argv = ks_point_argv(p);
    posix_spawn_file_actions_t fa;
    *pid = -1;
    if (!argv || posix_spawn_file_actions_init(&fa) != 0) {
        free(argv);
        snprintf(err, len, "cannot start %s: %s", p->exe, strerror(errno));
        return KS_EIO;
    }
    int wr = O_WRONLY | O_CREAT | O_TRUNC;
    if ((!io->in || posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, io->in, O_RDONLY, 0) == 0) &&
        (!io->out || posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, io->out, wr, io->mode) == 0) &&
        (!io->err || posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, io->err, wr, io->mode) == 0) &&
        posix_spawn(pid, p->exe, &fa, NULL, (char *const *)argv, environ) != 0)
        *pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    // NOTE: the reason is errno, as the sweep has always reported it, although
    // posix_spawn returns its error rather than setting errno.
    if (*pid < 0) {
        snprintf(err, len, "cannot start %s: %s", p->exe, strerror(errno));
        return KS_EIO;
    }
    return KS_OK;
}

int ks_point_exit_code(int ws)
{
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

int ks_point_run(const struct ks_point *p, const struct ks_point_io *io, int *code, char *err, size_t len)
{
    pid_t pid;
    int st = ks_point_spawn(p, io, &pid, err, len);
    if (st != KS_OK)
        return st;
    int ws = 0;
    pid_t got;
    while ((got = waitpid(pid, &ws, 0)) < 0 && errno == EINTR)
        ;
    if (got < 0) {
        snprintf(err, len, "waiting for %s: %s", p->exe, strerror(errno));
        return KS_EIO;
    }
    *code = ks_point_exit_code(ws);
    return KS_OK;
}

static double get(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int ks_point_summary_read(const char *json, struct ks_point_summary *out, char *err, size_t len)
{
    json_error_t je;
    json_t *o = json_load_file(json, 0, &je);
    if (!o) {
        snprintf(err, len, "%s: %s", json, je.text);
        return KS_EINVAL;
    }
    *out = (struct ks_point_summary){.met = json_is_true(json_object_get(o, "slo_met")), .margin = INFINITY,
                                     .throughput = get(o, "output_throughput")};
    static const char prefix[] = "slo_margin_";
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) // jansson keeps the summary's order
    {
        if (strncmp(key, prefix, sizeof prefix - 1) != 0 || out->n == KS_POINT_MAX_OBJECTIVES)
            continue;
        const char *name = key + sizeof prefix - 1;
        double m = json_is_number(v) ? json_number_value(v) : NAN;
        out->margin = isnan(m) || isnan(out->margin) ? NAN : fmin(out->margin, m);
        snprintf(out->name[out->n], sizeof out->name[0], "%s", name);
        out->fig[out->n++] = get(o, name);
    }
    json_decref(o);
    return KS_OK;
}
