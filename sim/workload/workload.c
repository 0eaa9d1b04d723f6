// workload.c - the request stream of a scenario (see workload.h).
//
// Invariants: the heap holds every request created and not yet handed out:
// at most one fresh arrival (the next session's turn 0, created when the
// previous one is handed out) and the next turn of each open session. Keys
// never go below the key last handed out (a later turn comes think_time or
// more after its previous turn; the next fresh arrival is no earlier than the
// last one), so popping the smallest (key, creation order) gives arrival
// order. Trace files are read whole by ks_workload_new; nothing is read later.
#define _POSIX_C_SOURCE 200809L // getline

#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "heap.h"
#include "rng.h"
#include "status.h"

#define TWO_PI 6.283185307179586476925
#define NO_ROW SIZE_MAX // draw from the distribution, not from a given trace row

// One token-count distribution with its clamp and its own generator.
struct sampler {
    enum ks_dist_kind kind;
    double value, min, max, mu, sigma, mean, stddev;
    double lo, hi;   // tokens, the clamp
    double *vals;    // trace: the counts in file order
    size_t n, pos;   // trace: count of vals; the next one to hand out
    uint32_t thin;   // trace, in file order: each count is handed out with chance 1 / thin (rng), else skipped
    int has_spare;   // normal: Box-Muller gave two, one is left
    double spare;
    struct ks_rng rng;
};

struct pending {
    double key;      // arrival (closed: wave and turn)
    uint64_t seq;    // creation order, breaks ties
    struct ks_request_spec r;
};

struct ks_workload {
    enum ks_arrival_kind kind;
    double rate;              // poisson: requests/s
    uint32_t concurrency;     // closed: sessions per wave
    uint64_t limit;           // requests to hand out; 0 = no limit
    uint32_t max_context;     // tokens
    uint32_t turns;           // per session
    double think;             // seconds
    uint32_t prefix_tokens, groups;
    double fraction;
    struct sampler prompt, output;
    int trace_prompt, trace_output; // the arrival trace's row gives turn 0's count
    double *times;            // trace arrivals, seconds
    size_t n_rows, next_row;
    uint32_t thin;            // trace arrivals: each request is kept with chance 1 / thin (thin_rng), else dropped
    struct ks_rng arrival_rng, prefix_rng, thin_rng;
    double clock;             // poisson: the last fresh arrival
    uint64_t sessions;        // opened so far
    uint64_t handed;          // requests handed out
    uint64_t seq;
    struct pending *heap;
    size_t n_heap, cap_heap;
};

// ---- reading trace files ------------------------------------------------

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

// Parses one value: a time (seconds, finite, >= 0) or a count (a whole
// number of tokens, 0 .. 2^32-1). 0, or -1 with the reason in err.
static int parse_value(const char *path, long line, const char *text, int is_time, double *out, char *err,
                       size_t len)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!text[0] || *end || end == text || errno == ERANGE || !isfinite(v)) {
        snprintf(err, len, "%s:%ld: '%s' is not a number", path, line, text);
        return -1;
    }
    if (v < 0) {
        snprintf(err, len, "%s:%ld: '%s' is negative", path, line, text);
        return -1;
    }
    if (!is_time && (v != floor(v) || v > (double)UINT32_MAX)) {
        snprintf(err, len, "%s:%ld: '%s' is not a whole number of tokens (0 .. %u)", path, line, text, UINT32_MAX);
        return -1;
    }
    *out = v;
    return 0;
}

static int push_value(double **vals, size_t *n, size_t *cap, double v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        double *p = realloc(*vals, c * sizeof *p);
        if (!p)
            return -1;
        *vals = p;
        *cap = c;
    }
    (*vals)[(*n)++] = v;
    return 0;
}

// Reads the columns `names` (n_names of them, at most 3) of a CSV file with a
// header into out[k] (malloc'ed, *n_rows values each). Column time_col
// (-1: none) holds times, non-decreasing; the others counts. Unless
// need_header, a file whose first line has no comma is a plain list, one
// count per line, read into out[0]. Blank lines are skipped. 0, or -1 with
// the reason in err (out freed).
static int read_table(const char *path, const char *const *names, int n_names, int time_col, int need_header,
                      double **out, size_t *n_rows, char *err, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    int idx[3] = {-1, -1, -1}, n_fields = 0, csv = -1, rc = -1;
    size_t caps[3] = {0, 0, 0};
    for (int k = 0; k < n_names; k++)
        out[k] = NULL;
    *n_rows = 0;
    char *buf = NULL;
    size_t bufcap = 0;
    long line = 0;
    double last = 0;
    while (getline(&buf, &bufcap, f) >= 0) {
        line++;
        char *s = trim(buf);
        if (!s[0])
            continue;
        if (csv < 0) { // the first line decides the format: a header (one column, or several), or a number
            csv = strchr(s, ',') != NULL || strcmp(s, names[0]) == 0;
            if (!csv && need_header) {
                snprintf(err, len, "%s:%ld: expected a CSV header naming %s", path, line, names[0]);
                goto done;
            }
            if (csv) {
                for (char *field = s, *next; field; field = next, n_fields++) {
                    next = strchr(field, ',');
                    if (next)
                        *next++ = '\0';
                    for (int k = 0; k < n_names; k++)
                        if (strcmp(trim(field), names[k]) == 0 && idx[k] < 0)
                            idx[k] = n_fields;
                }
                for (int k = 0; k < n_names; k++)
                    if (idx[k] < 0) {
                        snprintf(err, len, "%s:%ld: the header has no column '%s'", path, line, names[k]);
                        goto done;
                    }
                continue;
            }
            idx[0] = 0;
        }
        char *fields[64];
        int nf = 0;
        if (csv) {
            for (char *field = s, *next; field; field = next) {
                next = strchr(field, ',');
                if (next)
                    *next++ = '\0';
                if (nf < 64)
                    fields[nf] = trim(field);
                nf++;
            }
            if (nf != n_fields) {
                snprintf(err, len, "%s:%ld: %d fields; the header has %d", path, line, nf, n_fields);
                goto done;
            }
        } else {
            fields[0] = s;
        }
        for (int k = 0; k < (csv ? n_names : 1); k++) {
            double v;
            const char *text = idx[k] < 64 ? fields[idx[k]] : "";
            if (parse_value(path, line, text, k == time_col, &v, err, len) != 0)
                goto done;
            if (k == time_col && *n_rows > 0 && v < last) {
                snprintf(err, len, "%s:%ld: arrival '%s' is before the previous one (%.9g s)", path, line, text, last);
                goto done;
            }
            if (k == time_col)
                last = v;
            size_t n = *n_rows;
            if (push_value(&out[k], &n, &caps[k], v) != 0) {
                snprintf(err, len, "%s: out of memory", path);
                goto done;
            }
        }
        ++*n_rows;
    }
    if (ferror(f))
        snprintf(err, len, "%s: read error: %s", path, strerror(errno));
    else if (*n_rows == 0)
        snprintf(err, len, "%s: empty: no values", path);
    else
        rc = 0;
done:
    free(buf);
    fclose(f);
    if (rc != 0)
        for (int k = 0; k < n_names; k++) {
            free(out[k]);
            out[k] = NULL;
        }
    return rc;
}

// ---- drawing counts -------------------------------------------------------

static void sampler_init(struct sampler *sm, const struct ks_dist *d, uint32_t max_context, uint64_t seed)
{
    double mc = max_context;
    *sm = (struct sampler){.kind = d->kind, .value = d->value, .min = d->min, .max = d->max, .mu = d->mu,
                           .sigma = d->sigma, .mean = d->mean, .stddev = d->stddev};
    sm->lo = d->kind == KS_DIST_CONSTANT || d->min < 1 ? 1 : d->min;
    sm->hi = d->kind != KS_DIST_CONSTANT && d->max > 0 && d->max < mc ? d->max : mc;
    if (sm->lo > sm->hi)
        sm->lo = sm->hi;
    ks_rng_seed(&sm->rng, seed);
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double normal(struct sampler *sm)
{
    if (sm->has_spare) {
        sm->has_spare = 0;
        return sm->spare;
    }
    double u1 = 1.0 - ks_rng_unit(&sm->rng); // (0, 1]: log is finite
    double u2 = ks_rng_unit(&sm->rng);
    double r = sqrt(-2.0 * log(u1));
    sm->spare = r * sin(TWO_PI * u2);
    sm->has_spare = 1;
    return r * cos(TWO_PI * u2);
}

// One count, rounded and clamped; `row` picks a trace value (NO_ROW: the next
// one in file order, cycled).
static uint32_t draw(struct sampler *sm, size_t row)
{
    double v = 0;
    switch (sm->kind) {
    case KS_DIST_CONSTANT:
        v = sm->value;
        break;
    case KS_DIST_UNIFORM: {
        uint32_t lo = (uint32_t)sm->lo, hi = (uint32_t)sm->hi; // hi < 2^32 - 1, lo >= 1: the span fits
        v = (double)(lo + ks_rng_below(&sm->rng, hi - lo + 1));
        break;
    }
    case KS_DIST_LOGNORMAL:
        v = exp(sm->mu + sm->sigma * normal(sm));
        break;
    case KS_DIST_NORMAL:
        v = sm->mean + sm->stddev * normal(sm);
        break;
    case KS_DIST_TRACE:
        if (row == NO_ROW) {
            while (sm->thin > 1 && ks_rng_below(&sm->rng, sm->thin) != 0) // skipped: another node's request
                sm->pos = (sm->pos + 1) % sm->n;
            row = sm->pos;
            sm->pos = (sm->pos + 1) % sm->n;
        }
        v = sm->vals[row % sm->n];
        break;
    }
    return (uint32_t)clamp(round(v), sm->lo, sm->hi);
}

// prompt + output <= max_context: the output gives way first, then the prompt.
static void fit_context(struct ks_request_spec *r, uint32_t max_context)
{
    if ((uint64_t)r->prompt_tokens + r->output_tokens <= max_context)
        return;
    r->output_tokens = r->prompt_tokens < max_context ? max_context - r->prompt_tokens : 1;
    if ((uint64_t)r->prompt_tokens + r->output_tokens > max_context)
        r->prompt_tokens = max_context - r->output_tokens;
}

// ---- the heap of pending requests ----------------------------------------

static int before(const struct pending *a, const struct pending *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static int cmp_pending(const void *a, const void *b)
{
    return before(a, b) ? -1 : before(b, a);
}

static int heap_push(struct ks_workload *w, double key, const struct ks_request_spec *r)
{
    if (w->n_heap == w->cap_heap) {
        size_t c = w->cap_heap ? w->cap_heap * 2 : 64;
        struct pending *p = realloc(w->heap, c * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        w->heap = p;
        w->cap_heap = c;
    }
    struct pending e = {.key = key, .seq = w->seq++, .r = *r};
    ks_heap_push(w->heap, w->n_heap++, sizeof *w->heap, &e, cmp_pending);
    return KS_OK;
}

static struct pending heap_pop(struct ks_workload *w)
{
    KS_ASSERT(w->n_heap > 0);
    struct pending top;
    ks_heap_pop(w->heap, w->n_heap--, sizeof *w->heap, &top, cmp_pending);
    return top;
}

// ---- building the stream -------------------------------------------------

// Opens the next session (its turn 0) unless the arrivals or the request
// limit are used up; KS_OK or KS_ENOMEM.
static int push_fresh(struct ks_workload *w)
{
    if (w->limit && w->sessions >= w->limit) // every session hands out at least one request
        return KS_OK;
    struct ks_request_spec r;
    double key;
    do { // a trace thinned (detail.nodes): the whole trace's requests, one kept in `thin` at random
        if (w->kind == KS_ARRIVAL_TRACE && w->next_row >= w->n_rows)
            return KS_OK;
        r = (struct ks_request_spec){.session = w->sessions, .prev_id = KS_WORKLOAD_NO_ID, .prefix_group = KS_NONE};
        key = 0;
        size_t row = NO_ROW;
        switch (w->kind) {
        case KS_ARRIVAL_POISSON:
            w->clock += -log(1.0 - ks_rng_unit(&w->arrival_rng)) / w->rate;
            r.arrival = key = w->clock;
            break;
        case KS_ARRIVAL_TRACE:
            row = w->next_row++;
            r.arrival = key = w->times[row];
            break;
        case KS_ARRIVAL_CLOSED:
            key = (double)(w->sessions / w->concurrency) * w->turns;
            break;
        }
        r.prompt_tokens = draw(&w->prompt, w->trace_prompt ? row : NO_ROW);
        r.output_tokens = draw(&w->output, w->trace_output ? row : NO_ROW);
        fit_context(&r, w->max_context);
        if (w->prefix_tokens > 0 && ks_rng_unit(&w->prefix_rng) < w->fraction) {
            r.prefix_group = ks_rng_below(&w->prefix_rng, w->groups);
            r.prefix_tokens = w->prefix_tokens < r.prompt_tokens ? w->prefix_tokens : r.prompt_tokens;
        }
    } while (w->kind == KS_ARRIVAL_TRACE && w->thin > 1 && ks_rng_below(&w->thin_rng, w->thin) != 0);
    w->sessions++;
    return heap_push(w, key, &r);
}

// Queues the turn after prev (which got its id) in prev's session.
static int push_turn(struct ks_workload *w, const struct pending *prev)
{
    const struct ks_request_spec *p = &prev->r;
    struct ks_request_spec r = *p;
    uint64_t history = (uint64_t)p->prompt_tokens + p->output_tokens;
    uint64_t prompt = history + draw(&w->prompt, NO_ROW);
    r.turn = p->turn + 1;
    r.prev_id = p->id;
    r.prompt_tokens = prompt > w->max_context ? w->max_context : (uint32_t)prompt;
    r.output_tokens = draw(&w->output, NO_ROW);
    fit_context(&r, w->max_context);
    r.history_tokens = history < r.prompt_tokens ? (uint32_t)history : r.prompt_tokens;
    if (r.prefix_group != KS_NONE)
        r.prefix_tokens = w->prefix_tokens < r.prompt_tokens ? w->prefix_tokens : r.prompt_tokens;
    double key = w->kind == KS_ARRIVAL_CLOSED ? prev->key + 1 : p->arrival + w->think;
    r.arrival = w->kind == KS_ARRIVAL_CLOSED ? 0 : key;
    return heap_push(w, key, &r);
}

struct find_origin {
    const char *path;
    int is_default;
};

static int find_origin(const struct ks_scenario_item *it, void *ud)
{
    struct find_origin *fo = ud;
    if (strcmp(it->path, fo->path) != 0)
        return 0;
    fo->is_default = it->origin && it->origin->from && strcmp(it->origin->from, "default") == 0;
    return 1;
}

// Did the scenario file leave this distribution at its default?
static int left_default(const struct ks_scenario *s, const char *path)
{
    if (!s->origin)
        return 0;
    struct find_origin fo = {path, 0};
    ks_scenario_foreach(s, find_origin, &fo);
    return fo.is_default;
}

// Reads a trace distribution's counts; 0 or -1 (err).
static int load_dist(struct sampler *sm, const struct ks_dist *d, const char *label, const char *column, char *err,
                     size_t len)
{
    if (!d->file) {
        snprintf(err, len, "%s: a trace distribution needs a file", label);
        return -1;
    }
    const char *names[] = {column};
    if (read_table(d->file, names, 1, -1, 0, &sm->vals, &sm->n, err, len) != 0)
        return -1;
    return 0;
}

// Seeds of the generators: one stream per purpose, from the scenario's seed.
enum { STREAM_ARRIVAL = 1, STREAM_PROMPT, STREAM_OUTPUT, STREAM_PREFIX, STREAM_THIN };

static uint64_t stream_seed(uint64_t seed, int stream)
{
    return seed ^ ((uint64_t)stream * UINT64_C(0xd1b54a32d192ed03));
}

struct ks_workload *ks_workload_new(const struct ks_scenario *s, char *err, size_t len)
{
    const struct ks_scenario_workload *wl = &s->workload;
    const struct ks_scenario_arrival *ar = &wl->arrival;
    if (s->model.max_context < 2) {
        snprintf(err, len, "model.max_context: %u tokens leave no room for a prompt and an output token",
                 s->model.max_context);
        return NULL;
    }
    if ((ar->kind == KS_ARRIVAL_POISSON && !(ar->rate > 0 && isfinite(ar->rate))) ||
        (ar->kind == KS_ARRIVAL_CLOSED && ar->concurrency == 0) || (ar->kind == KS_ARRIVAL_TRACE && !ar->file)) {
        snprintf(err, len, "workload.arrival: %s", ar->kind == KS_ARRIVAL_POISSON ? "poisson needs rate > 0"
                                                   : ar->kind == KS_ARRIVAL_CLOSED ? "closed needs concurrency >= 1"
                                                                                   : "trace needs a file");
        return NULL;
    }
    if (wl->shared_prefix.tokens > 0 && wl->shared_prefix.fraction > 0 && wl->shared_prefix.groups == 0) {
        snprintf(err, len, "workload.shared_prefix.groups: a shared prefix needs at least one group");
        return NULL;
    }
    struct ks_workload *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    w->kind = ar->kind;
    w->rate = ar->rate;
    w->concurrency = ar->concurrency;
    w->limit = wl->requests;
    w->max_context = s->model.max_context;
    w->turns = wl->sessions.turns ? wl->sessions.turns : 1;
    w->think = wl->sessions.think_time;
    w->prefix_tokens = wl->shared_prefix.tokens;
    w->groups = wl->shared_prefix.groups;
    w->fraction = wl->shared_prefix.fraction;
    ks_rng_seed(&w->arrival_rng, stream_seed(s->seed, STREAM_ARRIVAL));
    ks_rng_seed(&w->prefix_rng, stream_seed(s->seed, STREAM_PREFIX));
    sampler_init(&w->prompt, &wl->prompt_tokens, w->max_context, stream_seed(s->seed, STREAM_PROMPT));
    sampler_init(&w->output, &wl->output_tokens, w->max_context, stream_seed(s->seed, STREAM_OUTPUT));
    if (ar->kind == KS_ARRIVAL_TRACE) {
        // NOTE: the trace's lengths come with its arrivals unless the scenario
        // file chose a distribution: a replay should replay the requests too.
        w->trace_prompt = left_default(s, "workload.prompt_tokens.kind");
        w->trace_output = left_default(s, "workload.output_tokens.kind");
        const char *names[3] = {"arrived_at"};
        int n = 1, pc = 0, oc = 0;
        if (w->trace_prompt)
            names[pc = n++] = "num_prefill_tokens";
        if (w->trace_output)
            names[oc = n++] = "num_decode_tokens";
        double *cols[3];
        if (read_table(ar->file, names, n, 0, 1, cols, &w->n_rows, err, len) != 0)
            goto fail;
        w->times = cols[0];
        struct ks_dist column = {.kind = KS_DIST_TRACE, .min = 1};
        if (w->trace_prompt) {
            sampler_init(&w->prompt, &column, w->max_context, stream_seed(s->seed, STREAM_PROMPT));
            w->prompt.vals = cols[pc];
            w->prompt.n = w->n_rows;
        }
        if (w->trace_output) {
            sampler_init(&w->output, &column, w->max_context, stream_seed(s->seed, STREAM_OUTPUT));
            w->output.vals = cols[oc];
            w->output.n = w->n_rows;
        }
    }
    if (w->prompt.kind == KS_DIST_TRACE && !w->prompt.vals &&
        load_dist(&w->prompt, &wl->prompt_tokens, "workload.prompt_tokens", "num_prefill_tokens", err, len) != 0)
        goto fail;
    if (w->output.kind == KS_DIST_TRACE && !w->output.vals &&
        load_dist(&w->output, &wl->output_tokens, "workload.output_tokens", "num_decode_tokens", err, len) != 0)
        goto fail;
    // detail.nodes: the sampled nodes' share of a trace. Trace arrivals keep
    // whole requests, their counts drawn whatever happens to them; under
    // other arrivals a trace's counts in file order are thinned (a trace
    // count's own generator is otherwise unused).
    w->thin = wl->keep_one_in;
    if (ar->kind != KS_ARRIVAL_TRACE)
        w->prompt.thin = w->output.thin = wl->keep_one_in;
    ks_rng_seed(&w->thin_rng, stream_seed(s->seed, STREAM_THIN));
    if (push_fresh(w) != KS_OK) {
        snprintf(err, len, "out of memory");
        goto fail;
    }
    return w;
fail:
    ks_workload_free(w);
    return NULL;
}

void ks_workload_free(struct ks_workload *w)
{
    if (!w)
        return;
    free(w->prompt.vals);
    free(w->output.vals);
    free(w->times);
    free(w->heap);
    free(w);
}

int ks_workload_next(struct ks_workload *w, struct ks_request_spec *out)
{
    if ((w->limit && w->handed >= w->limit) || w->n_heap == 0)
        return 0;
    struct pending p = heap_pop(w);
    p.r.id = w->handed++;
    int st = KS_OK;
    if (p.r.turn + 1 < w->turns)
        st = push_turn(w, &p);
    if (st == KS_OK && p.r.turn == 0)
        st = push_fresh(w);
    if (st != KS_OK)
        return st;
    *out = p.r;
    return 1;
}
