// sweeprun.c - one run of a sweep in its output folder (see sweeprun.h).
//
// A point's state only moves forward within a run: pending, then complete or
// failed. A point counts as complete only when its result passes
// ks_sweep_merge_check, whether an earlier run left it or this one made it;
// anything less is removed before the point runs again (clear_point). The
// manifest is written before the points run and again after, so that it
// always names every point's command, even when the run is cut short.
#define _XOPEN_SOURCE 700 // realpath, sigaction

#include "sweeprun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicfile.h"
#include "clock.h"
#include "fs.h"
#include "json.h"
#include "point.h"
#include "status.h"
#include "sweep_merge.h"

enum { PATH_LEN = 4096 };

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
// fopen). KS_OK, or KS_EIO with "PATH: cannot write" in err.
static int write_atomic(const char *path, const char *text, int mode, char *err, size_t len)
{
    struct ks_atomicfile a;
    int st = ks_atomicfile_open(&a, path, &(struct ks_atomicfile_params){.mode = (unsigned)mode}, NULL, 0);
    if (st == KS_OK) {
        fputs(text, a.f); // a failure marks the stream, and the commit fails
        st = ks_atomicfile_commit(&a, NULL, 0);
    }
    if (st != KS_OK)
        snprintf(err, len, "%s: cannot write", path);
    return st == KS_OK ? KS_OK : KS_EIO;
}

// The text a memory stream gathered, or NULL (with err set) when it failed.
static char *stream_text(FILE *f, char **text, char *err, size_t len)
{
    if (fclose(f) != 0 || !*text) {
        free(*text);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    return *text;
}

// ---- points ---------------------------------------------------------------------

static void point_path(const struct ks_sweeprun *r, size_t i, const char *ext, char *buf, size_t len)
{
    snprintf(buf, len, "%s/points/%s%s", r->dir, r->s->points[i].id, ext);
}

// Point i as point.h runs it; its output path is the caller's buffer h5.
static struct ks_point point_of(const struct ks_sweeprun *r, size_t i, char *h5, size_t len)
{
    const struct ks_sweep_point *p = &r->s->points[i];
    point_path(r, i, ".h5", h5, len);
    return (struct ks_point){.exe = r->exe, .base = r->base, .sets = (const char *const *)p->sets,
                             .n_sets = p->n_sets, .h5 = h5, .threads = r->threads};
}

// Point i's shell command: the run, its report to ID.json.part, its stderr
// to ID.err, then the report renamed to ID.json when the run succeeded.
static char *point_line(const struct ks_sweeprun *r, size_t i)
{
    char h5[PATH_LEN], js[PATH_LEN], part[PATH_LEN], err[PATH_LEN];
    struct ks_point p = point_of(r, i, h5, sizeof h5);
    point_path(r, i, ".json", js, sizeof js);
    point_path(r, i, ".json.part", part, sizeof part);
    point_path(r, i, ".err", err, sizeof err);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    int st = ks_point_shell_line(f, &p);
    fputs(" > ", f);
    ks_point_shell_word(f, part);
    fputs(" 2> ", f);
    ks_point_shell_word(f, err);
    fputs(" && mv -f ", f);
    ks_point_shell_word(f, part);
    fputc(' ', f);
    ks_point_shell_word(f, js);
    if (fclose(f) != 0 || st != KS_OK) {
        free(text);
        return NULL;
    }
    return text;
}

// Removes what an earlier attempt at point i left (partial files too).
static void clear_point(const struct ks_sweeprun *r, size_t i)
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

// Starts point i afresh: stdin from /dev/null, its report to ID.json.part,
// its stderr to ID.err.
static int spawn_point(const struct ks_sweeprun *r, size_t i, pid_t *pid, char *why, size_t len)
{
    char h5[PATH_LEN], part[PATH_LEN], err[PATH_LEN];
    struct ks_point p = point_of(r, i, h5, sizeof h5);
    point_path(r, i, ".json.part", part, sizeof part);
    point_path(r, i, ".err", err, sizeof err);
    clear_point(r, i);
    struct ks_point_io io = {.in = "/dev/null", .out = part, .err = err, .mode = 0666};
    return ks_point_spawn(&p, &io, pid, why, len);
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

// ---- the run ---------------------------------------------------------------------

struct events {
    void (*fn)(void *ud, const struct ks_sweeprun *r, const struct ks_sweeprun_event *ev);
    void *ud;
};

static void progress(const struct ks_sweeprun *r, const struct events *ev, size_t done, int final)
{
    if (ev->fn)
        ev->fn(ev->ud, r, &(struct ks_sweeprun_event){.kind = KS_SWEEPRUN_EV_PROGRESS, .done = done, .final = final});
}

// Records how point i ended (ws from waitpid).
static void finish_point(struct ks_sweeprun *r, const struct events *ev, size_t i, int ws)
{
    char h5[PATH_LEN], js[PATH_LEN], part[PATH_LEN], err[PATH_LEN], why[1024] = "";
    point_path(r, i, ".h5", h5, sizeof h5);
    point_path(r, i, ".json", js, sizeof js);
    point_path(r, i, ".json.part", part, sizeof part);
    point_path(r, i, ".err", err, sizeof err);
    int code = ks_point_exit_code(ws);
    r->ran++;
    if (code == 0 && ks_atomicfile_rename(part, js, NULL, 0) == KS_OK &&
        ks_sweep_merge_check(h5, js, NULL, why, sizeof why)) {
        struct stat st;
        if (stat(err, &st) == 0 && st.st_size == 0)
            unlink(err);
        r->state[i] = KS_SWEEPRUN_COMPLETE;
        return;
    }
    unlink(part);
    r->state[i] = KS_SWEEPRUN_FAILED;
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
    if (ev->fn)
        ev->fn(ev->ud, r,
               &(struct ks_sweeprun_event){.kind = KS_SWEEPRUN_EV_FAILED, .point = i, .signaled = !WIFEXITED(ws),
                                           .status = WIFEXITED(ws) ? code : WTERMSIG(ws), .tail = tail,
                                           .err_path = err});
}

// Point i could not be started: it failed with exit code 127.
static void nostart_point(struct ks_sweeprun *r, const struct events *ev, size_t i, const char *why)
{
    r->state[i] = KS_SWEEPRUN_FAILED;
    r->code[i] = 127;
    r->failed++;
    r->ran++;
    if (ev->fn)
        ev->fn(ev->ud, r, &(struct ks_sweeprun_event){.kind = KS_SWEEPRUN_EV_NOSTART, .point = i, .why = why});
}

int ks_sweeprun_run(struct ks_sweeprun *r, unsigned jobs,
                    void (*fn)(void *ud, const struct ks_sweeprun *r, const struct ks_sweeprun_event *ev), void *ud,
                    int *sig, char *err, size_t len)
{
    const struct events ev = {fn, ud};
    size_t n = r->s->n_points, done = 0, next = 0, running = 0;
    r->t0 = ks_clock_mono();
    *sig = 0;
    pid_t *pids = calloc(jobs, sizeof *pids);
    size_t *which = calloc(jobs, sizeof *which);
    if (!pids || !which) {
        free(pids);
        free(which);
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        done += r->state[i] == KS_SWEEPRUN_COMPLETE;
    interrupted = 0;
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int); // no SA_RESTART: waitpid returns on a signal
    sigaction(SIGTERM, &sa, &old_term);
    progress(r, &ev, done, 0);
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
            if (r->state[i] != KS_SWEEPRUN_PENDING)
                continue;
            pid_t pid;
            char why[PATH_LEN + 256];
            if (spawn_point(r, i, &pid, why, sizeof why) != KS_OK) {
                done++;
                nostart_point(r, &ev, i, why);
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
                    finish_point(r, &ev, which[k], ws);
                    done++;
                }
                progress(r, &ev, done, 0);
            }
    }
    progress(r, &ev, done, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(pids);
    free(which);
    *sig = interrupted;
    return KS_OK;
}

// ---- the files ---------------------------------------------------------------------

static const char *state_name(const struct ks_sweeprun *r, size_t i)
{
    return r->state[i] == KS_SWEEPRUN_COMPLETE ? "complete" : r->state[i] == KS_SWEEPRUN_FAILED ? "failed" : "pending";
}


json_t *ks_sweeprun_manifest(const struct ks_sweeprun *r)
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
            err |= json_object_set_new(vals, s->columns[c],
                                       p->is_number[c] ? ks_json_num(strtod(p->values[c], NULL)) : json_string(p->values[c]));
        }
        err |= json_object_set_new(o, "settings", sets);
        err |= json_object_set_new(o, "values", vals);
        err |= ks_json_set_str(o, "status", state_name(r, i));
        if (r->state[i] == KS_SWEEPRUN_COMPLETE)
            err |= json_object_set_new(o, "reused", json_boolean(r->reused[i]));
        if (r->state[i] == KS_SWEEPRUN_FAILED)
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

int ks_sweeprun_write_manifest(const struct ks_sweeprun *r, char *err, size_t len)
{
    json_t *m = ks_sweeprun_manifest(r);
    char *text = m ? json_dumps(m, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(m);
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/sweep.json", r->dir);
    int st = KS_ENOMEM;
    if (text)
        st = write_atomic(path, text, 0, err, len);
    else
        snprintf(err, len, "%s: cannot write", path);
    free(text);
    return st;
}

int ks_sweeprun_manifest_read(const char *dir, json_t **out, char *err, size_t len)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    *out = NULL;
    if (!m || !json_is_object(m)) {
        json_decref(m);
        snprintf(err, len, "cannot read %s (%s)", path, je.text);
        return KS_EINVAL;
    }
    *out = m;
    return KS_OK;
}

int ks_sweeprun_write_commands(const struct ks_sweeprun *r, char *err, size_t len)
{
    char *text = NULL, path[PATH_LEN];
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) {
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < r->s->n_points; i++)
        fprintf(f, "%s\n", r->line[i]);
    if (!stream_text(f, &text, err, len))
        return KS_ENOMEM;
    snprintf(path, sizeof path, "%s/commands.txt", r->dir);
    int st = write_atomic(path, text, 0, err, len);
    free(text);
    return st;
}

int ks_sweeprun_write_slurm(const struct ks_sweeprun *r, char *path, size_t plen, char *err, size_t len)
{
    char logs[PATH_LEN], cmds[PATH_LEN];
    snprintf(path, plen, "%s/sweep.slurm", r->dir);
    snprintf(logs, sizeof logs, "%s/slurm", r->dir);
    snprintf(cmds, sizeof cmds, "%s/commands.txt", r->dir);
    if (ks_fs_mkdirs(logs, 0777, NULL, 0) != KS_OK) {
        snprintf(err, len, "%s: cannot create", logs);
        return KS_EIO;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) {
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    fprintf(f, "#!/bin/bash\n");
    fprintf(f, "# Slurm job array for the sweep %s (%zu points), written by kvstrata sweep --emit slurm.\n",
            r->s->name, r->s->n_points);
    fprintf(f, "# Task i runs line i + 1 of commands.txt. Submit: sbatch ");
    ks_point_shell_word(f, path);
    fprintf(f, "\n# then merge what the tasks wrote: ");
    ks_point_shell_word(f, r->exe);
    fprintf(f, " sweep --merge ");
    ks_point_shell_word(f, r->dir);
    fprintf(f, "\n#SBATCH --job-name=kvstrata-%s\n", r->s->name);
    fprintf(f, "#SBATCH --array=0-%zu\n", r->s->n_points - 1);
    fprintf(f, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    fprintf(f, "#SBATCH --output=%s/%%A_%%a.out\n", logs);
    fprintf(f, "set -euo pipefail\n");
    fprintf(f, "commands=");
    ks_point_shell_word(f, cmds);
    fprintf(f, "\nline=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$commands\")\n");
    fprintf(f, "if [ -z \"$line\" ]; then\n"
               "    echo \"no command for task $SLURM_ARRAY_TASK_ID in $commands\" >&2\n"
               "    exit 2\n"
               "fi\n"
               "exec bash -c \"$line\"\n");
    if (!stream_text(f, &text, err, len))
        return KS_ENOMEM;
    int st = write_atomic(path, text, 0755, err, len);
    free(text);
    return st;
}

// ---- setting up ----------------------------------------------------------------------

int ks_sweeprun_init(struct ks_sweeprun *r, const struct ks_sweep *s, const char *dir, int dry, unsigned threads,
                     char *err, size_t len)
{
    size_t n = s->n_points;
    *r = (struct ks_sweeprun){.s = s, .lock_fd = -1};
    snprintf(r->threads, sizeof r->threads, "%u", threads);
    r->exe = ks_point_self_exe();
    r->base = realpath(s->base, NULL);
    r->file = realpath(s->file, NULL);
    if (!r->exe || !r->base || !r->file) {
        snprintf(err, len, "cannot resolve the paths of the kvstrata binary, %s and %s: %s", s->file, s->base,
                 strerror(errno));
        return KS_EIO;
    }
    if (!dry && ks_fs_mkdirs(dir, 0777, NULL, 0) != KS_OK) {
        snprintf(err, len, "%s: cannot create: %s", dir, strerror(errno));
        return KS_EIO;
    }
    r->dir = absolute(dir);
    r->line = calloc(n, sizeof *r->line);
    r->state = calloc(n, sizeof *r->state);
    r->code = calloc(n, sizeof *r->code);
    r->reused = calloc(n, sizeof *r->reused);
    if (!r->dir || !r->line || !r->state || !r->code || !r->reused) {
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (!(r->line[i] = point_line(r, i))) {
            snprintf(err, len, "out of memory");
            return KS_ENOMEM;
        }
    return KS_OK;
}

void ks_sweeprun_fini(struct ks_sweeprun *r)
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
    if (r->lock_fd >= 0)
        close(r->lock_fd); // releases the lock
    *r = (struct ks_sweeprun){.lock_fd = -1};
}

// NOTE: flock, not a lock file's existence: the kernel drops it when the
// process dies, kill -9 included, so a crashed sweep never blocks a rerun.
int ks_sweeprun_lock(const char *dir, int *fd_out, char *err, size_t len)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/sweep.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666); // O_CLOEXEC: the points must not hold it
    if (fd < 0) {
        snprintf(err, len, "%s: cannot open: %s", path, strerror(errno));
        return KS_EIO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t got = e == EWOULDBLOCK ? pread(fd, pid, sizeof pid - 1, 0) : -1;
        pid[got > 0 ? got : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(fd);
        if (e == EWOULDBLOCK)
            snprintf(err, len,
                     "%s: another kvstrata sweep%s%s%s is writing into this folder (it holds %s); wait for it to "
                     "end, or give another -o",
                     dir, pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", path);
        else
            snprintf(err, len, "%s: cannot lock: %s", path, strerror(e));
        return e == EWOULDBLOCK ? KS_ESTATE : KS_EIO;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    // NOTE: the pid is only for a second sweep's message; the lock holds without it
    int noted = ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) == n;
    (void)noted;
    *fd_out = fd;
    return KS_OK;
}

static int take_lock(struct ks_sweeprun *r, char *err, size_t len)
{
    return r->lock_fd >= 0 ? KS_OK : ks_sweeprun_lock(r->dir, &r->lock_fd, err, len);
}

int ks_sweeprun_resume(struct ks_sweeprun *r, char *err, size_t len)
{
    int st = take_lock(r, err, len);
    if (st != KS_OK)
        return st;
    char pts[PATH_LEN];
    snprintf(pts, sizeof pts, "%s/points", r->dir);
    if (ks_fs_mkdirs(pts, 0777, NULL, 0) != KS_OK) {
        snprintf(err, len, "%s: cannot create: %s", pts, strerror(errno));
        return KS_EIO;
    }
    for (size_t i = 0; i < r->s->n_points; i++) {
        char h5[PATH_LEN], js[PATH_LEN], why[512];
        point_path(r, i, ".h5", h5, sizeof h5);
        point_path(r, i, ".json", js, sizeof js);
        if (ks_sweep_merge_check(h5, js, NULL, why, sizeof why)) {
            r->state[i] = KS_SWEEPRUN_COMPLETE;
            r->reused[i] = 1;
            r->n_reused++;
        }
    }
    return KS_OK;
}
