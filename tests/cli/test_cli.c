// test_cli.c - runs one kvstrata command line and checks what it did: exit
// status, what reached stdout and stderr, and, for --json commands, that
// stdout is exactly one JSON object whose keys satisfy the given bounds.
//
// Usage: test_cli [checks] -- program args...
//   --exit N          exit status (default 0)
//   --stdout-empty    nothing on stdout          --stderr-empty   nothing on stderr
//   --stdout-has TEXT stdout contains TEXT       --stderr-has TEXT stderr contains TEXT
//   --stdout-lacks TEXT                          --stderr-lacks TEXT
//   --json            stdout is one JSON object (no trailing text, no duplicate keys)
//   --has KEY         the object has KEY
//   --gt|--ge|--lt|--le KEY X   the object's number KEY compares so with X
//   --is KEY TEXT     the object's KEY is the string TEXT
//   --eq KEY JSON     the object's KEY, as compact JSON, is exactly JSON (an exact
//                     integer such as 9223372036854775807, "text", null, false)
//   --len KEY N       the object's KEY is an array of exactly N elements
// Every failed check is reported; the exit status is 1 if any failed.
#define _POSIX_C_SOURCE 200809L // fork, dup2, fileno

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

// Reads a whole stream from its start into a NUL-terminated heap string.
static char *slurp(FILE *f)
{
    rewind(f);
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    if (s)
        s[n] = '\0';
    return s;
}

// Runs argv with stdout and stderr in temporary files; returns the exit
// status (128 + signal when killed), or -1 when it could not run.
static int run(char **argv, char **out, char **err)
{
    FILE *fo = tmpfile(), *fe = tmpfile();
    if (!fo || !fe)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fileno(fo), STDOUT_FILENO);
        dup2(fileno(fe), STDERR_FILENO);
        execv(argv[0], argv);
        perror(argv[0]);
        _exit(127);
    }
    int ws;
    if (waitpid(pid, &ws, 0) != pid)
        return -1;
    *out = slurp(fo);
    *err = slurp(fe);
    fclose(fo);
    fclose(fe);
    if (!*out || !*err)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static const json_t *number(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v || !json_is_number(v)) {
        fail("key '%s' is missing or not a number", key);
        return NULL;
    }
    return v;
}

int main(int argc, char **argv)
{
    int dash = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            dash = i;
            break;
        }
    if (!dash || dash + 1 >= argc) {
        fprintf(stderr, "usage: test_cli [checks] -- program args...\n");
        return 2;
    }
    char *out = NULL, *err = NULL;
    int status = run(argv + dash + 1, &out, &err);
    if (status < 0) {
        fprintf(stderr, "FAIL: cannot run %s\n", argv[dash + 1]);
        return 1;
    }
    int want_exit = 0;
    json_t *obj = NULL;
    for (int i = 1; i < dash; i++) {
        const char *c = argv[i];
        const char *a = i + 1 < dash ? argv[i + 1] : "";
        const char *b = i + 2 < dash ? argv[i + 2] : "";
        if (strcmp(c, "--exit") == 0) {
            want_exit = atoi(a);
            i++;
        } else if (strcmp(c, "--stdout-empty") == 0) {
            if (*out)
                fail("stdout is not empty:\n%s", out);
        } else if (strcmp(c, "--stderr-empty") == 0) {
            if (*err)
                fail("stderr is not empty:\n%s", err);
        } else if (strcmp(c, "--stdout-has") == 0) {
            if (!strstr(out, a))
                fail("stdout lacks '%s':\n%s", a, out);
            i++;
        } else if (strcmp(c, "--stdout-lacks") == 0) {
            if (strstr(out, a))
                fail("stdout has '%s':\n%s", a, out);
            i++;
        } else if (strcmp(c, "--stderr-lacks") == 0) {
            if (strstr(err, a))
                fail("stderr has '%s':\n%s", a, err);
            i++;
        } else if (strcmp(c, "--stderr-has") == 0) {
            if (!strstr(err, a))
                fail("stderr lacks '%s':\n%s", a, err);
            i++;
        } else if (strcmp(c, "--json") == 0) {
            json_error_t je;
            obj = json_loads(out, JSON_REJECT_DUPLICATES, &je);
            if (!obj)
                fail("stdout is not one JSON value: %s\n%s", je.text, out);
            else if (!json_is_object(obj))
                fail("stdout is JSON but not an object");
        } else if (strcmp(c, "--has") == 0) {
            if (!obj || !json_object_get(obj, a))
                fail("key '%s' is missing", a);
            i++;
        } else if (strcmp(c, "--is") == 0) {
            const json_t *v = obj ? json_object_get(obj, a) : NULL;
            if (!v || !json_is_string(v) || strcmp(json_string_value(v), b) != 0)
                fail("key '%s' is not the string '%s'", a, b);
            i += 2;
        } else if (strcmp(c, "--eq") == 0) {
            const json_t *v = obj ? json_object_get(obj, a) : NULL;
            char *text = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
            if (!text || strcmp(text, b) != 0)
                fail("key '%s' is %s, not %s", a, text ? text : "missing", b);
            free(text);
            i += 2;
        } else if (strcmp(c, "--len") == 0) {
            const json_t *v = obj ? json_object_get(obj, a) : NULL;
            if (!v || !json_is_array(v))
                fail("key '%s' is missing or not an array", a);
            else if (json_array_size(v) != strtoull(b, NULL, 10))
                fail("key '%s' has %zu elements, not %s", a, json_array_size(v), b);
            i += 2;
        } else if (!strcmp(c, "--gt") || !strcmp(c, "--ge") || !strcmp(c, "--lt") || !strcmp(c, "--le")) {
            const json_t *v = number(obj, a);
            double x = v ? json_number_value(v) : 0, y = atof(b);
            int ok = c[2] == 'g' ? (c[3] == 't' ? x > y : x >= y) : (c[3] == 't' ? x < y : x <= y);
            if (v && !ok) {
                fail("key '%s' = %.17g fails %s %s", a, x, c, b);
            }
            i += 2;
        } else {
            fprintf(stderr, "test_cli: unknown check '%s'\n", c);
            return 2;
        }
    }
    if (status != want_exit) {
        fail("exit status %d, expected %d", status, want_exit);
    }
    if (failures) {
        fprintf(stderr, "command:");
        for (int i = dash + 1; i < argc; i++)
            fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\nstderr:\n%s", err);
    }
    json_decref(obj);
    free(out);
    free(err);
    return failures ? 1 : 0;
}
