// sweep_cmd.c - `kvstrata sweep`: run every point of a sweep as its own
// process, resume what an earlier run left, merge the summaries.
//
// The output folder DIR holds:
//   sweep.json     the manifest: the sweep, its columns, and per point its id,
//                  settings, column values, command line and status
//   commands.txt   point i's shell command on line i + 1 (what a cluster runs)
//   points/ID.h5   the point's result (`kvstrata run -o`, written atomically)
//   points/ID.json its --json report (written to ID.json.part, then renamed)
//   points/ID.err  its stderr, kept when it failed (or said something)
//   summary.h5, summary.csv   the merged table (sweep_merge.h)
//   sweep.slurm    with --emit slurm: a job array over commands.txt
// A point runs as `kvstrata run BASE --set ... -o DIR/points/ID.h5 --json`
// with the binary that runs the sweep (/proc/self/exe). Because a point's id
// hashes its settings and its result is checked before it is reused, a rerun
// runs exactly the points without a complete result, and an interrupted
// sweep loses only the points it was running.
#define _XOPEN_SOURCE 700 // realpath, readlink, sigaction

#include "sweep_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicfile.h"
#include "clock.h"
#include "fs.h"
#include "json.h"
#include "status.h"
#include "sweep.h"
#include "sweep_merge.h"

extern char **environ;

enum { ERR_LEN = 1 << 16, SHOW_BAD_POINTS = 5, PATH_LEN = 4096 };
enum { PENDING, COMPLETE, FAILED };

static volatile sig_atomic_t interrupted; // the signal that asks the sweep to stop

static void on_signal(int sig)
{
    interrupted = sig;
}

static char *copy_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

// s quoted for a POSIX shell (as is when nothing in it needs quoting).
static void shell_word(FILE *f, const char *s)
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

// An absolute form of path (that need not exist): realpath when it does.
static char *absolute(const char *path)
{
    char *r = realpath(path, NULL);
    if (r || path[0] == '/')
        return r ? r : copy_str(path);
    char cwd[PATH_LEN];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    char *p = malloc(strlen(cwd) + strlen(path) + 2);
    if (p)
        sprintf(p, "%s/%s", cwd, path[0] == '.' && path[1] == '/' ? path + 2 : path);
    return p;
}

// Writes text to path whole or not at all, with permission bits mode (0: as
// fopen). 0 or -1.
static int write_atomic(const char *path, const char *text, int mode)
{
    struct ks_atomicfile a;
    if (ks_atomicfile_open(&a, path, &(struct ks_atomicfile_params){.mode = (unsigned)mode}, NULL, 0) != KS_OK)
        return -1;
    fputs(text, a.f); // a failure marks the stream, and the commit fails
    return ks_atomicfile_commit(&a, NULL, 0) == KS_OK ? 0 : -1;
}

// ---- one sweep -----------------------------------------------------------------

struct sweep_run {
    const struct ks_cli_cmd *cmd;
    const struct ks_sweep *s;
    char *exe, *base, *dir, *file; // absolute
    char **line;                   // [n_points] the shell command of each point
    int *state, *code, *reused;    // [n_points]
    size_t ran, failed;
    int progress;                  // stderr is a terminal
    double t0;
};

static void point_path(const struct sweep_run *r, size_t i, const char *ext, char *buf, size_t len)
{
    snprintf(buf, len, "%s/points/%s%s", r->dir, r->s->points[i].id, ext);
}

// The argv that runs point i (NULL-terminated, strings borrowed except the
// output path, which is the caller's buffer h5).
static const char **point_argv(const struct sweep_run *r, size_t i, const char *h5)
{
    const struct ks_sweep_point *p = &r->s->points[i];
    const char **v = calloc(2 * p->n_sets + 8, sizeof *v);
    if (!v)
        return NULL;
    size_t n = 0;
    v[n++] = r->exe;
    v[n++] = "run";
    v[n++] = r->base;
    for (size_t j = 0; j < p->n_sets; j++) {
        v[n++] = "--set";
        v[n++] = p->sets[j];
    }
    v[n++] = "-o";
    v[n++] = h5;
    v[n++] = "--json";
    return v;
}

static char *point_line(const struct sweep_run *r, size_t i)
{
    char h5[PATH_LEN], js[PATH_LEN], part[PATH_LEN], err[PATH_LEN];
    point_path(r, i, ".h5", h5, sizeof h5);
    point_path(r, i, ".json", js, sizeof js);
    point_path(r, i, ".json.part", part, sizeof part);
    point_path(r, i, ".err", err, sizeof err);
    const char **argv = point_argv(r, i, h5);
    char *text = NULL;
    size_t size = 0;
    FILE *f = argv ? open_memstream(&text, &size) : NULL;
    if (!f) {
        free(argv);
        return NULL;
    }
    for (size_t k = 0; argv[k]; k++) {
        if (k)
            fputc(' ', f);
        shell_word(f, argv[k]);
    }
    fputs(" > ", f);
    shell_word(f, part);
    fputs(" 2> ", f);
    shell_word(f, err);
    fputs(" && mv -f ", f);
    shell_word(f, part);
    fputc(' ', f);
    shell_word(f, js);
    fclose(f);
    free(argv);
    return text;
}

static const char *state_name(const struct sweep_run *r, size_t i)
{
    return r->state[i] == COMPLETE ? "complete" : r->state[i] == FAILED ? "failed" : "pending";
}

static json_t *manifest(const struct sweep_run *r)
{
    const struct ks_sweep *s = r->s;
    json_t *m = json_object(), *cols = json_array(), *pts = json_array();
    int err = !m || !cols || !pts;
    err |= ks_json_set_int(m, "kvstrata_sweep", 1);
    err |= ks_json_set_str(m, "name", s->name);
    err |= ks_json_set_str(m, "sweep", r->file);
    err |= ks_json_set_str(m, "base", r->base);
    err |= ks_json_set_str(m, "dir", r->dir);
    for (size_t c = 0; c < s->n_columns; c++)
        err |= json_array_append_new(cols, json_string(s->columns[c]));
    for (size_t i = 0; i < s->n_points && !err; i++) {
        const struct ks_sweep_point *p = &s->points[i];
        json_t *o = json_object(), *sets = json_array(), *vals = json_object();
        err |= !o || !sets || !vals;
        err |= ks_json_set_int(o, "index", (int64_t)p->index);
        err |= ks_json_set_str(o, "id", p->id);
        for (size_t j = 0; j < p->n_sets; j++)
            err |= json_array_append_new(sets, json_string(p->sets[j]));
        for (size_t c = 0; c < s->n_columns; c++) {
            if (!p->values[c])
                continue;
            err |= p->is_number[c] ? ks_json_set_num(vals, s->columns[c], strtod(p->values[c], NULL))
                                   : ks_json_set_str(vals, s->columns[c], p->values[c]);
        }
        err |= json_object_set_new(o, "settings", sets);
        err |= json_object_set_new(o, "values", vals);
        err |= ks_json_set_str(o, "status", state_name(r, i));
        if (r->state[i] == COMPLETE)
            err |= ks_json_set_bool(o, "reused", r->reused[i]);
        if (r->state[i] == FAILED)
            err |= ks_json_set_int(o, "exit", r->code[i]);
        err |= ks_json_set_str(o, "command", r->line[i]);
        err |= json_array_append_new(pts, o);
    }
    err |= json_object_set_new(m, "columns", cols);
    err |= json_object_set_new(m, "points", pts);
    if (err) {
        json_decref(m);
        return NULL;
    }
    return m;
}

static int write_manifest(const struct sweep_run *r)
{
    json_t *m = manifest(r);
    char *text = m ? json_dumps(m, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/sweep.json", r->dir);
    int rc = text ? write_atomic(path, text, 0) : -1;
    free(text);
    json_decref(m);
    if (rc != 0)
        ks_cli_fail(r->cmd, "%s: cannot write", path);
    return rc;
}

static int write_commands(const struct sweep_run *r)
{
    char *text = NULL, path[PATH_LEN];
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return -1;
    for (size_t i = 0; i < r->s->n_points; i++)
        fprintf(f, "%s\n", r->line[i]);
    fclose(f);
    snprintf(path, sizeof path, "%s/commands.txt", r->dir);
    int rc = write_atomic(path, text, 0);
    free(text);
    if (rc != 0)
        ks_cli_fail(r->cmd, "%s: cannot write", path);
    return rc;
}

static int write_slurm(const struct sweep_run *r, char *path, size_t len)
{
    char logs[PATH_LEN], cmds[PATH_LEN];
    snprintf(path, len, "%s/sweep.slurm", r->dir);
    snprintf(logs, sizeof logs, "%s/slurm", r->dir);
    snprintf(cmds, sizeof cmds, "%s/commands.txt", r->dir);
    if (ks_fs_mkdirs(logs, 0777, NULL, 0) != KS_OK) {
        ks_cli_fail(r->cmd, "%s: cannot create", logs);
        return -1;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return -1;
    fprintf(f, "#!/bin/bash\n");
    fprintf(f, "# Slurm job array for the sweep %s (%zu points), written by kvstrata sweep --emit slurm.\n",
            r->s->name, r->s->n_points);
    fprintf(f, "# Task i runs line i + 1 of commands.txt. Submit: sbatch ");
    shell_word(f, path);
    fprintf(f, "\n# then merge what the tasks wrote: ");
    shell_word(f, r->exe);
    fprintf(f, " sweep --merge ");
    shell_word(f, r->dir);
    fprintf(f, "\n#SBATCH --job-name=kvstrata-%s\n", r->s->name);
    fprintf(f, "#SBATCH --array=0-%zu\n", r->s->n_points - 1);
    fprintf(f, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    fprintf(f, "#SBATCH --output=%s/%%A_%%a.out\n", logs);
    fprintf(f, "set -euo pipefail\n");
    fprintf(f, "commands=");
    shell_word(f, cmds);
    fprintf(f, "\nline=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$commands\")\n");
    fprintf(f, "if [ -z \"$line\" ]; then\n"
               "    echo \"no command for task $SLURM_ARRAY_TASK_ID in $commands\" >&2\n"
               "    exit 2\n"
               "fi\n"
               "exec bash -c \"$line\"\n");
    fclose(f);
    int rc = write_atomic(path, text, 0755);
    free(text);
    if (rc != 0)
        ks_cli_fail(r->cmd, "%s: cannot write", path);
    return rc;
}

// Removes what an earlier attempt at point i left (partial files too).
static void clear_point(const struct sweep_run *r, size_t i)
{
    char path[PATH_LEN], pts[PATH_LEN];
    const char *exts[] = {".h5", ".json", ".json.part", ".err"};
    for (size_t k = 0; k < sizeof exts / sizeof exts[0]; k++) {
        point_path(r, i, exts[k], path, sizeof path);
        unlink(path);
    }
    snprintf(pts, sizeof pts, "%s/points", r->dir);
    DIR *d = opendir(pts);
    if (!d)
        return;
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "%s.h5.part-", r->s->points[i].id);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, prefix, (size_t)n) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static pid_t spawn_point(const struct sweep_run *r, size_t i)
{
    char h5[PATH_LEN], part[PATH_LEN], err[PATH_LEN];
    point_path(r, i, ".h5", h5, sizeof h5);
    point_path(r, i, ".json.part", part, sizeof part);
    point_path(r, i, ".err", err, sizeof err);
    clear_point(r, i);
    const char **argv = point_argv(r, i, h5);
    posix_spawn_file_actions_t fa;
    if (!argv || posix_spawn_file_actions_init(&fa) != 0) {
        free(argv);
        return -1;
    }
    pid_t pid = -1;
    if (posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) == 0 &&
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, part, O_WRONLY | O_CREAT | O_TRUNC, 0666) == 0 &&
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err, O_WRONLY | O_CREAT | O_TRUNC, 0666) == 0 &&
        posix_spawn(&pid, r->exe, &fa, NULL, (char *const *)argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    return pid;
}

static void show_progress(const struct sweep_run *r, size_t done, int final)
{
    if (!r->progress)
        return;
    long t = (long)(ks_clock_mono() - r->t0);
    fprintf(stderr, "\r\033[Ksweep %s: %zu/%zu points done, %zu failed, %ld:%02ld elapsed%s", r->s->name, done,
            r->s->n_points, r->failed, t / 60, t % 60, final ? "\n" : "");
    fflush(stderr);
}

// The last non-empty line of a file, in buf ("" when none).
static void last_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0])
            snprintf(buf, len, "%s", line);
    }
    fclose(f);
}

// Records how point i ended.
static void finish_point(struct sweep_run *r, size_t i, int ws)
{
    char h5[PATH_LEN], js[PATH_LEN], part[PATH_LEN], err[PATH_LEN], why[1024] = "";
    point_path(r, i, ".h5", h5, sizeof h5);
    point_path(r, i, ".json", js, sizeof js);
    point_path(r, i, ".json.part", part, sizeof part);
    point_path(r, i, ".err", err, sizeof err);
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r->ran++;
    if (code == 0 && ks_atomicfile_rename(part, js, NULL, 0) == KS_OK &&
        ks_sweep_merge_check(h5, js, NULL, why, sizeof why)) {
        struct stat st;
        if (stat(err, &st) == 0 && st.st_size == 0)
            unlink(err);
        r->state[i] = COMPLETE;
        return;
    }
    unlink(part);
    r->state[i] = FAILED;
    r->code[i] = code;
    r->failed++;
    if (code == 0) { // it said it succeeded, but left no complete result
        FILE *f = fopen(err, "a");
        if (f) {
            fprintf(f, "kvstrata sweep: no complete result: %s\n", why);
            fclose(f);
        }
    }
    char tail[1024];
    last_line(err, tail, sizeof tail);
    if (r->progress)
        fputs("\r\033[K", stderr);
    fprintf(stderr, "kvstrata sweep: point %s failed (%s %d)%s%s; stderr in %s\n", r->s->points[i].id,
            WIFEXITED(ws) ? "exit" : "signal", WIFEXITED(ws) ? code : WTERMSIG(ws), tail[0] ? ": " : "", tail, err);
}

// Runs the pending points, `jobs` at a time. 0, or the signal that stopped it.
static int run_points(struct sweep_run *r, unsigned jobs)
{
    size_t n = r->s->n_points, done = 0, next = 0, running = 0;
    pid_t *pids = calloc(jobs, sizeof *pids);
    size_t *which = calloc(jobs, sizeof *which);
    if (!pids || !which) {
        free(pids);
        free(which);
        ks_cli_fail(r->cmd, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        done += r->state[i] == COMPLETE;
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int); // no SA_RESTART: waitpid returns on a signal
    sigaction(SIGTERM, &sa, &old_term);
    show_progress(r, done, 0);
    int killed = 0;
    for (;;) {
        if (interrupted && !killed) { // the children may not have had the signal
            for (size_t k = 0; k < jobs; k++)
                if (pids[k])
                    kill(pids[k], SIGTERM);
            killed = 1;
        }
        while (!interrupted && running < jobs && next < n) {
            size_t i = next++;
            if (r->state[i] != PENDING)
                continue;
            pid_t pid = spawn_point(r, i);
            if (pid < 0) {
                r->state[i] = FAILED;
                r->code[i] = 127;
                r->failed++;
                r->ran++;
                done++;
                ks_cli_fail(r->cmd, "point %s: cannot start %s: %s", r->s->points[i].id, r->exe, strerror(errno));
                continue;
            }
            size_t slot = 0;
            while (pids[slot])
                slot++;
            pids[slot] = pid;
            which[slot] = i;
            running++;
        }
        if (running == 0)
            break;
        int ws;
        pid_t pid = waitpid(-1, &ws, 0);
        if (pid < 0) {
            if (errno != EINTR)
                break;
            continue;
        }
        for (size_t k = 0; k < jobs; k++)
            if (pids[k] == pid) {
                pids[k] = 0;
                running--;
                if (interrupted && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) {
                    clear_point(r, which[k]); // stopped by us: it stays pending
                } else {
                    finish_point(r, which[k], ws);
                    done++;
                }
                show_progress(r, done, 0);
            }
    }
    show_progress(r, done, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(pids);
    free(which);
    return interrupted;
}

// ---- the command ---------------------------------------------------------------

static int report(const struct ks_cli_cmd *cmd, json_t *o, int json)
{
    int rc = json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, NULL);
    json_decref(o);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

// Merges dir's points as the manifest lists them into o; the missing ones
// are named on stderr. KS_EXIT_OK, or KS_EXIT_FAIL after a message.
static int merge_into(const struct ks_cli_cmd *cmd, const char *dir, const json_t *m, json_t *o, size_t *missing)
{
    static char err[ERR_LEN];
    struct ks_sweep_merged mg;
    if (ks_sweep_merge(dir, m, &mg, err, sizeof err) != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    *missing = json_array_size(mg.missing);
    char path[PATH_LEN];
    int e = ks_json_set_int(o, "merged", (int64_t)mg.rows);
    e |= ks_json_set_int(o, "missing", (int64_t)*missing);
    snprintf(path, sizeof path, "%s/summary.h5", dir);
    e |= ks_json_set_str(o, "summary_h5", path);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    e |= ks_json_set_str(o, "summary_csv", path);
    if (*missing) {
        fprintf(stderr, "kvstrata sweep: %zu of %zu points have no complete result in %s/points:", *missing,
                *missing + mg.rows, dir);
        for (size_t i = 0; i < *missing && i < 20; i++)
            fprintf(stderr, " %s", json_string_value(json_array_get(mg.missing, i)));
        fprintf(stderr, "%s\n", *missing > 20 ? " ..." : "");
        e |= json_object_set(o, "missing_ids", mg.missing);
    }
    json_decref(mg.missing);
    return e ? ks_cli_fail(cmd, "out of memory") : KS_EXIT_OK;
}

static int run_merge(const struct ks_cli_cmd *cmd, const char *dir_arg, int json)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/sweep.json", dir_arg);
    json_error_t je;
    json_t *m = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!m || !json_is_object(m)) {
        json_decref(m);
        return ks_cli_usage_error(cmd, "--merge %s: cannot read %s (%s); is it a sweep's folder?", dir_arg, path,
                                  je.text);
    }
    json_t *o = json_object();
    size_t missing = 0;
    int rc = o ? KS_EXIT_OK : ks_cli_fail(cmd, "out of memory");
    const json_t *name = json_object_get(m, "name");
    if (rc == KS_EXIT_OK) {
        int e = ks_json_set_str(o, "name", json_is_string(name) ? json_string_value(name) : "");
        e |= ks_json_set_str(o, "dir", dir_arg);
        e |= ks_json_set_int(o, "points", (int64_t)json_array_size(json_object_get(m, "points")));
        rc = e ? ks_cli_fail(cmd, "out of memory") : merge_into(cmd, dir_arg, m, o, &missing);
    }
    json_decref(m);
    if (rc != KS_EXIT_OK) {
        json_decref(o);
        return rc;
    }
    rc = report(cmd, o, json);
    return rc == KS_EXIT_OK && missing ? KS_EXIT_FAIL : rc;
}

static int dry_run(const struct sweep_run *r, int json)
{
    if (!json) {
        for (size_t i = 0; i < r->s->n_points; i++) {
            const struct ks_sweep_point *p = &r->s->points[i];
            printf("%s", p->id);
            for (size_t j = 0; j < p->n_sets; j++)
                printf(" %s", p->sets[j]);
            printf("\n    %s\n", r->line[i]);
        }
        return fflush(stdout) == 0 ? KS_EXIT_OK : ks_cli_fail(r->cmd, "cannot write the report");
    }
    json_t *o = json_object(), *list = json_array();
    int e = !o || !list;
    e |= ks_json_set_str(o, "name", r->s->name);
    e |= ks_json_set_str(o, "base", r->base);
    e |= ks_json_set_str(o, "dir", r->dir);
    e |= ks_json_set_int(o, "points", (int64_t)r->s->n_points);
    for (size_t i = 0; i < r->s->n_points && !e; i++) {
        const struct ks_sweep_point *p = &r->s->points[i];
        json_t *pt = json_object(), *sets = json_array();
        e |= !pt || !sets;
        e |= ks_json_set_str(pt, "id", p->id);
        for (size_t j = 0; j < p->n_sets; j++)
            e |= json_array_append_new(sets, json_string(p->sets[j]));
        e |= json_object_set_new(pt, "settings", sets);
        e |= ks_json_set_str(pt, "command", r->line[i]);
        e |= json_array_append_new(list, pt);
    }
    e |= json_object_set_new(o, "plan", list);
    if (e) {
        json_decref(o);
        return ks_cli_fail(r->cmd, "out of memory");
    }
    return report(r->cmd, o, 1);
}

static void sweep_run_fini(struct sweep_run *r)
{
    for (size_t i = 0; r->line && i < r->s->n_points; i++)
        free(r->line[i]);
    free(r->line);
    free(r->state);
    free(r->code);
    free(r->reused);
    free(r->exe);
    free(r->base);
    free(r->dir);
    free(r->file);
}

static int run_sweep(const struct ks_cli_cmd *cmd, struct sweep_run *r, const char *dir_arg, unsigned jobs,
                     int dry, int emit_slurm, int json)
{
    const struct ks_sweep *s = r->s;
    size_t n = s->n_points;
    char dflt[PATH_LEN];
    if (!dir_arg) {
        snprintf(dflt, sizeof dflt, "results/%s", s->name);
        dir_arg = dflt;
    }
    r->exe = realpath("/proc/self/exe", NULL);
    r->base = realpath(s->base, NULL);
    r->file = realpath(s->file, NULL);
    if (!r->exe || !r->base || !r->file)
        return ks_cli_fail(cmd, "cannot resolve the paths of the kvstrata binary, %s and %s: %s", s->file, s->base,
                           strerror(errno));
    if (!dry && ks_fs_mkdirs(dir_arg, 0777, NULL, 0) != KS_OK)
        return ks_cli_fail(cmd, "%s: cannot create: %s", dir_arg, strerror(errno));
    r->dir = absolute(dir_arg);
    r->line = calloc(n, sizeof *r->line);
    r->state = calloc(n, sizeof *r->state);
    r->code = calloc(n, sizeof *r->code);
    r->reused = calloc(n, sizeof *r->reused);
    if (!r->dir || !r->line || !r->state || !r->code || !r->reused)
        return ks_cli_fail(cmd, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!(r->line[i] = point_line(r, i)))
            return ks_cli_fail(cmd, "out of memory");
    if (dry)
        return dry_run(r, json);

    char pts[PATH_LEN];
    snprintf(pts, sizeof pts, "%s/points", r->dir);
    if (ks_fs_mkdirs(pts, 0777, NULL, 0) != KS_OK)
        return ks_cli_fail(cmd, "%s: cannot create: %s", pts, strerror(errno));
    size_t reused = 0;
    for (size_t i = 0; i < n; i++) {
        char h5[PATH_LEN], js[PATH_LEN], why[512];
        point_path(r, i, ".h5", h5, sizeof h5);
        point_path(r, i, ".json", js, sizeof js);
        if (ks_sweep_merge_check(h5, js, NULL, why, sizeof why)) {
            r->state[i] = COMPLETE;
            r->reused[i] = 1;
            reused++;
        }
    }
    if (write_commands(r) != 0 || write_manifest(r) != 0)
        return KS_EXIT_FAIL;
    json_t *o = json_object();
    if (!o)
        return ks_cli_fail(cmd, "out of memory");
    char path[PATH_LEN];
    int e = ks_json_set_str(o, "name", s->name);
    e |= ks_json_set_str(o, "dir", r->dir);
    e |= ks_json_set_int(o, "points", (int64_t)n);
    if (emit_slurm) {
        if (write_slurm(r, path, sizeof path) != 0) {
            json_decref(o);
            return KS_EXIT_FAIL;
        }
        e |= ks_json_set_int(o, "complete", (int64_t)reused);
        e |= ks_json_set_str(o, "slurm", path);
        snprintf(path, sizeof path, "%s/commands.txt", r->dir);
        e |= ks_json_set_str(o, "commands", path);
        if (e) {
            json_decref(o);
            return ks_cli_fail(cmd, "out of memory");
        }
        return report(cmd, o, json);
    }
    r->t0 = ks_clock_mono();
    r->progress = isatty(STDERR_FILENO);
    int sig = run_points(r, jobs);
    if (write_manifest(r) != 0 || sig < 0) {
        json_decref(o);
        return KS_EXIT_FAIL;
    }
    if (sig > 0) {
        json_decref(o);
        fprintf(stderr, "kvstrata sweep: stopped by signal %d after %zu points; rerun to resume\n", sig, r->ran);
        return 128 + sig;
    }
    e |= ks_json_set_int(o, "ran", (int64_t)r->ran);
    e |= ks_json_set_int(o, "skipped", (int64_t)reused);
    e |= ks_json_set_int(o, "failed", (int64_t)r->failed);
    e |= ks_json_set_real(o, "wall_s", ks_clock_mono() - r->t0);
    snprintf(path, sizeof path, "%s/sweep.json", r->dir);
    e |= ks_json_set_str(o, "manifest", path);
    json_t *m = manifest(r);
    size_t missing = 0;
    int rc = e || !m ? ks_cli_fail(cmd, "out of memory") : merge_into(cmd, r->dir, m, o, &missing);
    json_decref(m);
    if (rc != KS_EXIT_OK) {
        json_decref(o);
        return rc;
    }
    rc = report(cmd, o, json);
    if (rc == KS_EXIT_OK && r->failed)
        fprintf(stderr, "kvstrata sweep: %zu of %zu points failed\n", r->failed, n);
    return rc == KS_EXIT_OK && (r->failed || missing) ? KS_EXIT_FAIL : rc;
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = "", *dir = NULL, *merge = NULL;
    uint32_t jobs = 0;
    int dry = 0, json = 0, emit = 0;
    static const char *const emits[] = {"none", "slurm", NULL};
    const struct ks_cli_opt opts[] = {
        {.name = "sweep", .kind = KS_CLI_ARG, .out = &file, .arg = "SWEEP.lua"},
        {.name = "jobs", .kind = KS_CLI_U32, .out = &jobs, .arg = "N", .short_name = 'j', .min = 1, .max = 4096,
         .help = "points run at once (default: the online CPUs)", .hide_default = 1},
        {.name = "output", .kind = KS_CLI_STRING, .out = &dir, .arg = "DIR", .short_name = 'o',
         .help = "output folder (default: results/NAME)", .hide_default = 1},
        {.name = "dry-run", .kind = KS_CLI_FLAG, .out = &dry, .help = "print the points and their commands; run nothing"},
        {.name = "emit", .kind = KS_CLI_CHOICE, .out = &emit, .choices = emits,
         .help = "slurm: write DIR/sweep.slurm, a job array; run nothing"},
        {.name = "merge", .kind = KS_CLI_STRING, .out = &merge, .arg = "DIR",
         .help = "merge the complete points of DIR into its summary; run nothing", .hide_default = 1},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (merge) {
        if (file[0] || dir || jobs || dry || emit)
            return ks_cli_usage_error(cmd, "--merge DIR takes no sweep file and no other option but --json");
        return run_merge(cmd, merge, json);
    }
    if (!file[0])
        return ks_cli_usage_error(cmd, "missing SWEEP.lua");
    if (dry && emit)
        return ks_cli_usage_error(cmd, "--dry-run and --emit exclude each other");
    if (!jobs) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (uint32_t)(cpus < 4096 ? cpus : 4096) : 1;
    }
    static char err[ERR_LEN];
    struct ks_sweep *s = NULL;
    int st = ks_sweep_load(file, &s, err, sizeof err);
    if (st == KS_ENOMEM)
        return ks_cli_fail(cmd, "%s", err);
    if (st != KS_OK) {
        fprintf(stderr, "%s\nkvstrata %s: %s is not a valid sweep\n", err, cmd->name, file);
        return KS_EXIT_USAGE;
    }
    st = ks_sweep_check(s, SHOW_BAD_POINTS, err, sizeof err);
    if (st != KS_OK) {
        fprintf(stderr, "%s\nkvstrata %s: %s: nothing was run\n", err, cmd->name, file);
        ks_sweep_free(s);
        return st == KS_ENOMEM ? KS_EXIT_FAIL : KS_EXIT_USAGE;
    }
    struct sweep_run r = {.cmd = cmd, .s = s};
    int rc = run_sweep(cmd, &r, dir, jobs, dry, emit == 1, json);
    sweep_run_fini(&r);
    ks_sweep_free(s);
    return rc;
}

const struct ks_cli_cmd ks_sweep_cmd = {
    .name = "sweep",
    .summary = "Run a scenario over a grid of settings, each point its own process; merge the summaries",
    .about =
        "SWEEP.lua returns a table:\n"
        "  name   = \"l1_share\",           optional; default: the file's name\n"
        "  base   = \"../default.lua\",     the scenario, relative to the sweep file's folder\n"
        "  set    = {duration = \"10s\"},   optional: overrides for every point\n"
        "  axes   = {{field = \"cache.l1\", values = {\"50%\", \"75%\", \"100%\"}}, ...},\n"
        "                                 optional: the Cartesian product, first axis outermost\n"
        "  points = function(add) add{[\"cache.evict\"] = \"lru\"} end,\n"
        "                                 optional: more variants after the product (or a\n"
        "                                 list of tables of field = value)\n"
        "  seeds  = {1, 2, 3},            optional: every variant once per seed\n"
        "A field is any path `run --set` takes; a value is a number, a string (\"85%\",\n"
        "\"7GBps\") or a boolean; a table value stands for its fields. A point applies\n"
        "set, the axes, the variant, the seed, in that order.\n"
        "\n"
        "Every point is checked first (a bad field or value: exit 2, nothing run). Then\n"
        "each point runs as `kvstrata run BASE --set ... -o DIR/points/ID.h5 --json`,\n"
        "N at a time, its report in DIR/points/ID.json and, when it fails, its stderr\n"
        "in DIR/points/ID.err. An id (p0007-1a2b3c4d) is the point's index and a hash\n"
        "of its settings. A rerun skips the points whose result is complete (the .h5\n"
        "opens and its /summary matches the .json) and runs the rest, so an\n"
        "interrupted sweep loses nothing it finished. DIR/sweep.json lists every point\n"
        "with its settings and status; DIR/commands.txt holds each point's command.\n"
        "At the end DIR/summary.h5 (dataset /summary) and DIR/summary.csv hold one row\n"
        "per complete point: its id, its value of each swept field, and every numeric\n"
        "figure of its summary. Exit status 1 when a point failed (the others still run).\n"
        "\n"
        "--emit slurm writes DIR/sweep.slurm, a job array whose task i runs line i + 1 of\n"
        "DIR/commands.txt; afterwards `kvstrata sweep --merge DIR` merges what the\n"
        "tasks finished and names the points still missing (exit status 1 if any).\n",
    .run = run,
};
