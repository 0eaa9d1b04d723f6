// trace.c - access traces in HDF5 (see trace.h; schema in results/README.md).
//
// The writer goes through results.c (chunked tables, a partial file renamed
// into place); the reader reads both tables whole with memory types built by
// field name, so a trace written by another tool with other integer or float
// widths converts on read, and then checks every invariant of trace.h.
#include "trace.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5read.h"
#include "results.h"
#include "status.h"

static const struct ks_field step_fields[] = {
    {"request", KS_F_U32, offsetof(struct ks_trace_step, request), "request, from 0"},
    {"step", KS_F_U32, offsetof(struct ks_trace_step, step), "decode step of the request, from 0"},
    {"layer", KS_F_U32, offsetof(struct ks_trace_step, layer), NULL},
    {"context", KS_F_U32, offsetof(struct ks_trace_step, context), "tokens in the KV cache"},
    {"first", KS_F_U64, offsetof(struct ks_trace_step, first), "row of the first selected block in /selected"},
    {"n", KS_F_U32, offsetof(struct ks_trace_step, n), "blocks selected"},
    {"kernel_time", KS_F_F64, offsetof(struct ks_trace_step, kernel_time), "seconds; < 0: not measured"},
};
static const struct ks_field sel_fields[] = {
    {"block", KS_F_U32, offsetof(struct ks_trace_sel, block), "block index in the request's sequence"},
    {"mass", KS_F_F32, offsetof(struct ks_trace_sel, mass), "attention mass the block received"},
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

// ---- the order and content rules, shared by writer and reader ---------------

struct order {
    int started;
    uint32_t request, step, layer;
    uint8_t *seen; // one byte per block of the current record
    size_t seen_cap;
};

// Checks that (request, step, layer) follows the previous record; 0 or -1
// with the reason in why.
static int next_in_order(struct order *o, const struct ks_trace_meta *m, uint32_t request, uint32_t step,
                         uint32_t layer, char *why, size_t len)
{
    int ok;
    if (!o->started)
        ok = request == 0 && step == 0 && layer == 0;
    else if (request == o->request && step == o->step)
        ok = layer == o->layer + 1;
    else if (request == o->request)
        ok = step == o->step + 1 && layer == 0 && o->layer + 1 == m->layers;
    else
        ok = request == o->request + 1 && step == 0 && layer == 0 && o->layer + 1 == m->layers;
    if (!ok) {
        if (!o->started)
            snprintf(why, len, "the first record is request %u step %u layer %u, not 0 0 0", request, step, layer);
        else
            snprintf(why, len,
                     "request %u step %u layer %u cannot follow request %u step %u layer %u (records go by request, "
                     "step, layer; every step holds layers 0..%u)",
                     request, step, layer, o->request, o->step, o->layer, m->layers - 1);
        return -1;
    }
    if (layer >= m->layers) {
        snprintf(why, len, "layer %u is not below the trace's %u layers", layer, m->layers);
        return -1;
    }
    o->started = 1;
    o->request = request;
    o->step = step;
    o->layer = layer;
    return 0;
}

// A kernel time is finite seconds, or negative (not measured). 0 or -1
// with the reason in why.
static int check_kernel_time(double t, char *why, size_t len)
{
    if (isfinite(t) || t < 0)
        return 0;
    snprintf(why, len, "kernel_time is %g; it is finite seconds, or negative (not measured)", t);
    return -1;
}

size_t ks_trace_blocks(const struct ks_trace_meta *m, uint32_t context)
{
    return ((size_t)context + m->block_size - 1) / m->block_size;
}

// Blocks inside the context, each once, masses finite and >= 0.
// blocks[i] and mass[i] sit bstride and mstride bytes apart.
static int check_selection(struct order *o, const struct ks_trace_meta *m, uint32_t context, const uint32_t *blocks,
                           size_t bstride, const float *mass, size_t mstride, uint32_t n, char *why, size_t len)
{
    size_t nb = ks_trace_blocks(m, context);
    if (n > nb) {
        snprintf(why, len, "%u blocks selected out of the %zu blocks of a %u-token context", n, nb, context);
        return -1;
    }
    if (nb > o->seen_cap) {
        uint8_t *p = realloc(o->seen, nb);
        if (!p) {
            snprintf(why, len, "out of memory");
            return -1;
        }
        o->seen = p;
        o->seen_cap = nb;
    }
    if (nb) // a context of 0 tokens: no buffer yet (memset of NULL is undefined, even for 0 bytes)
        memset(o->seen, 0, nb);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = *(const uint32_t *)((const char *)blocks + i * bstride);
        float x = *(const float *)((const char *)mass + i * mstride);
        if (b >= nb) {
            snprintf(why, len, "block %u is past the %zu blocks of a %u-token context", b, nb, context);
            return -1;
        }
        if (o->seen[b]++) {
            snprintf(why, len, "block %u is selected twice", b);
            return -1;
        }
        if (!isfinite(x) || x < 0) {
            snprintf(why, len, "block %u has mass %g; a mass is finite and not negative", b, (double)x);
            return -1;
        }
    }
    return 0;
}

static int meta_ok(const struct ks_trace_meta *m, char *why, size_t len)
{
    if (m->block_size == 0 || m->layers == 0 || m->kv_heads == 0 || m->q_heads == 0 || m->head_dim == 0) {
        snprintf(why, len, "block_size, layers, kv_heads, q_heads and head_dim must all be at least 1");
        return -1;
    }
    return 0;
}

// ---- writing -------------------------------------------------------------

struct ks_trace_writer {
    struct ks_results *h;
    struct ks_table *steps, *sel;
    struct ks_trace_meta meta;
    struct order order;
    uint64_t rows;
    char path[4096];
    char *err;      // the caller's (borrowed): the reason of the last failure
    size_t err_len;
};

struct ks_trace_writer *ks_trace_writer_open(const char *path, const struct ks_trace_meta *m, char *err, size_t len)
{
    char why[256];
    if (meta_ok(m, why, sizeof why) != 0) {
        snprintf(err, len, "%s: %s", path, why);
        return NULL;
    }
    struct ks_trace_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    w->meta = *m;
    w->err = err;
    w->err_len = len;
    snprintf(w->path, sizeof w->path, "%s", path);
    if (!(w->h = ks_results_open(path, err, len))) {
        free(w);
        return NULL;
    }
    int st = ks_results_attr_str(w->h, "/", "format", KS_TRACE_FORMAT);
    st = st ? st : ks_results_attr_int(w->h, "/", "version", KS_TRACE_VERSION);
    st = st ? st : ks_results_attr_int(w->h, "/", "block_size", m->block_size);
    st = st ? st : ks_results_attr_int(w->h, "/", "layers", m->layers);
    st = st ? st : ks_results_attr_int(w->h, "/", "kv_heads", m->kv_heads);
    st = st ? st : ks_results_attr_int(w->h, "/", "q_heads", m->q_heads);
    st = st ? st : ks_results_attr_int(w->h, "/", "head_dim", m->head_dim);
    st = st ? st : ks_results_attr_str(w->h, "/", "dtype", m->dtype[0] ? m->dtype : "fp16");
    st = st ? st : ks_results_attr_str(w->h, "/", "source", m->source[0] ? m->source : "unknown");
    if (st == KS_OK) {
        w->steps = ks_results_table(w->h, "/steps", step_fields, N_OF(step_fields), sizeof(struct ks_trace_step), 0);
        w->sel = w->steps ? ks_results_table(w->h, "/selected", sel_fields, N_OF(sel_fields),
                                             sizeof(struct ks_trace_sel), 65536)
                          : NULL;
    }
    if (st != KS_OK || !w->sel) { // the reason is in err
        ks_trace_writer_abort(w);
        return NULL;
    }
    return w;
}

int ks_trace_writer_add(struct ks_trace_writer *w, uint32_t request, uint32_t step, uint32_t layer,
                        uint32_t context, const uint32_t *blocks, const float *mass, uint32_t n,
                        double kernel_time)
{
    char why[256];
    if (next_in_order(&w->order, &w->meta, request, step, layer, why, sizeof why) != 0 ||
        check_kernel_time(kernel_time, why, sizeof why) != 0 ||
        check_selection(&w->order, &w->meta, context, blocks, sizeof *blocks, mass, sizeof *mass, n, why,
                        sizeof why) != 0) {
        snprintf(w->err, w->err_len, "%s", why);
        return KS_EINVAL;
    }
    struct ks_trace_sel buf[256];
    struct ks_trace_step rec = {.request = request, .step = step, .layer = layer, .context = context,
                                .first = w->rows, .n = n, .kernel_time = kernel_time};
    for (uint32_t i = 0; i < n;) {
        uint32_t k = 0;
        for (; k < N_OF(buf) && i < n; k++, i++)
            buf[k] = (struct ks_trace_sel){.block = blocks[i], .mass = mass[i]};
        if (ks_results_append(w->sel, buf, k) != KS_OK)
            return KS_EIO; // the reason is in w->err
    }
    w->rows += n;
    if (ks_results_append(w->steps, &rec, 1) != KS_OK)
        return KS_EIO; // the reason is in w->err
    return KS_OK;
}

int ks_trace_writer_commit(struct ks_trace_writer *w)
{
    if (w->order.started && w->order.layer + 1 != w->meta.layers) {
        snprintf(w->err, w->err_len, "%s: the last step holds layers 0..%u of %u", w->path, w->order.layer,
                 w->meta.layers);
        ks_trace_writer_abort(w);
        return KS_EINVAL;
    }
    int st = ks_results_commit(w->h);
    free(w->order.seen);
    free(w);
    return st;
}

void ks_trace_writer_abort(struct ks_trace_writer *w)
{
    if (!w)
        return;
    ks_results_abort(w->h);
    free(w->order.seen);
    free(w);
}

// ---- reading -------------------------------------------------------------

static int bad(char *err, size_t len, const char *path, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(err, len, "%s: %s", path, why);
    return -1;
}

// Bounds on a trace's shape, far above any model's: a value past them is a
// damaged file, refused before anything is sized by it.
enum {
    MAX_SHAPE = 1 << 16,        // layers, heads, head_dim
    MAX_BLOCK_SIZE = 1 << 20,   // tokens per block
    MAX_CONTEXT = 1 << 28,      // tokens in a record's context
    MAX_BLOCKS = 1 << 24,       // blocks of a record's context
};

static int read_int_attr(hid_t f, const char *name, uint32_t *v, uint32_t max, const char *path, char *err,
                         size_t len)
{
    int64_t x = 0;
    char why[256];
    if (ks_h5read_attr_int(f, name, &x, why, sizeof why) != KS_OK)
        return bad(err, len, path, "attribute /%s %s", name, why);
    if (x < 1 || x > max)
        return bad(err, len, path, "attribute /%s is %lld; it must be an integer from 1 to %u", name, (long long)x,
                   max);
    *v = (uint32_t)x;
    return 0;
}

// Reads a whole table into *out (rec bytes per row), members matched by
// name, every size checked first (h5read.h). 0, or -1 with the reason in err.
static int read_table(hid_t f, const char *name, const struct ks_field *fields, size_t n_fields, size_t rec,
                      uint64_t bytes, void **out, size_t *n, const char *path, char *err, size_t len)
{
    char why[512];
    if (ks_h5read_table(f, name, fields, n_fields, rec, bytes, out, n, why, sizeof why) != KS_OK)
        return bad(err, len, path, "dataset %s", why);
    return 0;
}

static int check_loaded(struct ks_trace *t, const char *path, char *err, size_t len)
{
    struct order o = {0};
    char why[256];
    int rc = 0;
    uint32_t requests = 0;
    for (size_t i = 0; i < t->n_steps && rc == 0; i++) {
        const struct ks_trace_step *s = &t->steps[i];
        if ((s->context > MAX_CONTEXT || ks_trace_blocks(&t->meta, s->context) > MAX_BLOCKS
                 ? (snprintf(why, sizeof why, "context %u tokens is more than a trace may hold (%u tokens, %u blocks)",
                             s->context, MAX_CONTEXT, MAX_BLOCKS),
                    1)
                 : 0) ||
            (s->context == 0 ? (snprintf(why, sizeof why, "context 0 tokens: a decode step reads at least its "
                                                          "prompt's"),
                                1)
                             : 0) ||
            next_in_order(&o, &t->meta, s->request, s->step, s->layer, why, sizeof why) != 0 ||
            (s->first > t->n_sel || s->n > t->n_sel - s->first
                 ? (snprintf(why, sizeof why, "rows %llu..%llu are past the %zu rows of /selected",
                             (unsigned long long)s->first, (unsigned long long)s->first + s->n, t->n_sel),
                    1)
                 : 0) ||
            check_kernel_time(s->kernel_time, why, sizeof why) != 0 ||
            check_selection(&o, &t->meta, s->context, &t->sel[s->first].block, sizeof *t->sel,
                            &t->sel[s->first].mass, sizeof *t->sel, s->n, why, sizeof why) != 0)
            rc = bad(err, len, path, "/steps record %zu: %s", i, why);
        requests = s->request + 1;
    }
    if (rc == 0 && o.started && o.layer + 1 != t->meta.layers)
        rc = bad(err, len, path, "/steps: the last step holds layers 0..%u of %u", o.layer, t->meta.layers);
    free(o.seen);
    if (rc != 0)
        return -1;
    t->n_requests = requests;
    t->req_first = calloc(requests ? requests : 1, sizeof *t->req_first);
    t->req_steps = calloc(requests ? requests : 1, sizeof *t->req_steps);
    if (!t->req_first || !t->req_steps)
        return bad(err, len, path, "out of memory");
    for (size_t i = t->n_steps; i-- > 0;) {
        const struct ks_trace_step *s = &t->steps[i];
        t->req_first[s->request] = i; // the smallest row wins
        if (s->step + 1 > t->req_steps[s->request])
            t->req_steps[s->request] = s->step + 1;
    }
    return 0;
}

struct ks_trace *ks_trace_load(const char *path, char *err, size_t len)
{
    uint64_t bytes = 0;
    char why[512];
    hid_t f = ks_h5read_open(path, &bytes, why, sizeof why);
    if (f < 0) {
        bad(err, len, path, "%s", why);
        return NULL;
    }
    struct ks_trace *t = calloc(1, sizeof *t);
    char format[64];
    int rc = t ? 0 : bad(err, len, path, "out of memory");
    int got = rc == 0 ? ks_h5read_attr_str(f, "format", format, sizeof format, why, sizeof why) : 0;
    if (got < 0)
        rc = bad(err, len, path, "attribute /format %s", why);
    else if (got > 0)
        rc = bad(err, len, path, "not a kvstrata trace (attribute /format is missing)");
    else if (rc == 0 && strcmp(format, KS_TRACE_FORMAT) != 0)
        rc = bad(err, len, path, "not a kvstrata trace (attribute /format is \"%s\", not \"%s\")", format,
                 KS_TRACE_FORMAT);
    uint32_t version = 0;
    if (rc == 0)
        rc = read_int_attr(f, "version", &version, UINT32_MAX, path, err, len);
    if (rc == 0 && version != KS_TRACE_VERSION)
        rc = bad(err, len, path, "trace version %u; this kvstrata reads version %d", version, KS_TRACE_VERSION);
    struct ks_trace_meta *m = rc == 0 ? &t->meta : NULL;
    if (rc == 0)
        rc = read_int_attr(f, "block_size", &m->block_size, MAX_BLOCK_SIZE, path, err, len);
    if (rc == 0)
        rc = read_int_attr(f, "layers", &m->layers, MAX_SHAPE, path, err, len);
    if (rc == 0)
        rc = read_int_attr(f, "kv_heads", &m->kv_heads, MAX_SHAPE, path, err, len);
    if (rc == 0)
        rc = read_int_attr(f, "q_heads", &m->q_heads, MAX_SHAPE, path, err, len);
    if (rc == 0)
        rc = read_int_attr(f, "head_dim", &m->head_dim, MAX_SHAPE, path, err, len);
    // optional, but a value that cannot be read is refused rather than taken for ""
    if (rc == 0 && ks_h5read_attr_str(f, "dtype", m->dtype, sizeof m->dtype, why, sizeof why) < 0)
        rc = bad(err, len, path, "attribute /dtype %s", why);
    if (rc == 0 && ks_h5read_attr_str(f, "source", m->source, sizeof m->source, why, sizeof why) < 0)
        rc = bad(err, len, path, "attribute /source %s", why);
    void *p = NULL;
    if (rc == 0)
        rc = read_table(f, "/steps", step_fields, N_OF(step_fields), sizeof(struct ks_trace_step), bytes, &p,
                        &t->n_steps, path, err, len);
    if (t)
        t->steps = p;
    if (rc == 0)
        rc = read_table(f, "/selected", sel_fields, N_OF(sel_fields), sizeof(struct ks_trace_sel), bytes, &p,
                        &t->n_sel, path, err, len);
    if (rc == 0)
        t->sel = p;
    H5Fclose(f);
    if (rc == 0)
        rc = check_loaded(t, path, err, len);
    if (rc != 0) {
        ks_trace_free(t);
        return NULL;
    }
    return t;
}

void ks_trace_free(struct ks_trace *t)
{
    if (!t)
        return;
    free(t->steps);
    free(t->sel);
    free(t->req_first);
    free(t->req_steps);
    free(t);
}

const struct ks_trace_step *ks_trace_at(const struct ks_trace *t, uint32_t request, uint32_t step, uint32_t layer)
{
    if (request >= t->n_requests || step >= t->req_steps[request] || layer >= t->meta.layers)
        return NULL;
    return &t->steps[t->req_first[request] + (size_t)step * t->meta.layers + layer];
}
