// tracestats.c - statistics of an access trace (definitions in tracestats.h).
//
// One pass per (request, layer) stream keeps, per block of the context, the
// step it was last selected at, whether the layer below selected it at the
// step being read (that record is read again, marking its blocks: the
// adjacent-layer overlap) and its count in each working-set window, so every
// selection costs O(1) besides the per-record sort for the mass shares.
// Per-block arrays hold step + 1 (0: never) and are cleared between
// streams. The OPT simulation precomputes next uses by a backward scan and
// evicts from a max-heap on next use with lazy deletion.
#include "tracestats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "status.h"

const uint32_t ks_tracestats_window[KS_TRACESTATS_WINDOWS] = {1, 4, 16, 256};
const uint32_t ks_tracestats_ws_window[KS_TRACESTATS_WS] = {16, 256};
const uint32_t ks_tracestats_top[KS_TRACESTATS_TOP] = {1, 8, 32};
const double ks_tracestats_opt_fraction[KS_TRACESTATS_OPT] = {0.25, 0.5, 1, 2};

#define NEVER SIZE_MAX

// Bucket of reuse distance d >= 1: 0 for 1, else ceil(log2 d).
static unsigned bucket_of(uint64_t d)
{
    unsigned k = 0;
    while (k < KS_TRACESTATS_BUCKETS - 1 && (UINT64_C(1) << k) < d)
        k++;
    return k;
}

static int by_mass_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

// ---- OPT -------------------------------------------------------------------

struct heap_entry {
    size_t next; // index of the key's next access, NEVER when none
    uint32_t key;
};

// The entry used farthest ahead leaves the heap first.
static int later_use(const void *a, const void *b)
{
    size_t x = ((const struct heap_entry *)a)->next, y = ((const struct heap_entry *)b)->next;
    return (x < y) - (x > y);
}

int ks_tracestats_opt_hits(const uint32_t *keys, size_t n, uint32_t n_keys, uint32_t capacity, uint64_t *hits)
{
    *hits = 0;
    if (capacity == 0)
        return KS_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (keys[i] >= n_keys)
            return KS_EINVAL;
    if (n == 0)
        return KS_OK;
    size_t *next = malloc(n * sizeof *next);
    size_t *cur = malloc((size_t)n_keys * sizeof *cur); // first the scan's "seen at", then the resident's next use
    unsigned char *resident = calloc(n_keys, 1);
    // NOTE: lazy deletion pushes one entry per access, so n bounds the heap.
    struct heap_entry *heap = malloc(n * sizeof *heap);
    if (!next || !cur || !resident || !heap) {
        free(next);
        free(cur);
        free(resident);
        free(heap);
        return KS_ENOMEM;
    }
    for (uint32_t k = 0; k < n_keys; k++)
        cur[k] = NEVER;
    for (size_t i = n; i-- > 0;) {
        next[i] = cur[keys[i]];
        cur[keys[i]] = i;
    }
    size_t heap_n = 0;
    uint32_t held = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = keys[i];
        if (resident[k]) {
            ++*hits;
        } else {
            if (held == capacity) {
                for (;;) { // skip entries superseded by a later access or an eviction
                    struct heap_entry e;
                    ks_heap_pop(heap, heap_n--, sizeof *heap, &e, later_use);
                    if (resident[e.key] && cur[e.key] == e.next) {
                        resident[e.key] = 0;
                        held--;
                        break;
                    }
                }
            }
            resident[k] = 1;
            held++;
        }
        cur[k] = next[i];
        ks_heap_push(heap, heap_n++, sizeof *heap, &(struct heap_entry){next[i], k}, later_use);
    }
    free(next);
    free(cur);
    free(resident);
    free(heap);
    return KS_OK;
}

// ---- the stream pass ---------------------------------------------------------

struct work {
    uint32_t *last;                   // [max_blocks] step + 1 of the block's last selection, 0: never
    uint32_t *now;                    // [max_blocks] step + 1 when the block is in the step being read
    uint32_t *below;                  // [max_blocks] step + 1 when the layer below selected it at that step
    uint32_t *ws_cnt[KS_TRACESTATS_WS]; // [max_blocks] selections of the block inside the window
    double *ws_sum[KS_TRACESTATS_WS];   // [max_steps] sum over streams of the working set at a step
    uint64_t *ws_n[KS_TRACESTATS_WS];   // [max_steps] streams that contributed at a step
    float *mass;                        // [max_selected] one record's masses, sorted
    uint32_t *keys;                     // [largest request's selections] OPT stream
};

static void work_free(struct work *w)
{
    free(w->last);
    free(w->now);
    free(w->below);
    for (int i = 0; i < KS_TRACESTATS_WS; i++) {
        free(w->ws_cnt[i]);
        free(w->ws_sum[i]);
        free(w->ws_n[i]);
    }
    free(w->mass);
    free(w->keys);
}

struct layer_acc {
    uint64_t sel, records, r1_num, r1_den, nb_num, nb_den, adj_num;
};

// Reads stream (r, l), adding to s and the accumulators.
static void stream_pass(const struct ks_trace *t, uint32_t r, uint32_t l, struct work *w, struct ks_tracestats *s,
                        uint64_t *num, uint64_t *nb_hit, uint64_t *nb_new_hit, struct layer_acc *la)
{
    const uint32_t L = t->meta.layers, T = t->req_steps[r];
    const size_t mb = s->max_blocks;
    uint32_t distinct[KS_TRACESTATS_WS] = {0};
    if (mb) { // no block in any context: no buffers (memset of NULL is undefined, even for 0 bytes)
        memset(w->last, 0, mb * sizeof *w->last);
        memset(w->now, 0, mb * sizeof *w->now);
        memset(w->below, 0, mb * sizeof *w->below);
        for (int i = 0; i < KS_TRACESTATS_WS; i++)
            memset(w->ws_cnt[i], 0, mb * sizeof *w->ws_cnt[i]);
    }
    const struct ks_trace_step *prev = NULL;
    for (uint32_t step = 0; step < T; step++) {
        const struct ks_trace_step *rec = &t->steps[t->req_first[r] + (size_t)step * L + l];
        const struct ks_trace_sel *sel = t->sel + rec->first;
        for (uint32_t i = 0; i < rec->n; i++)
            w->now[sel[i].block] = step + 1;
        if (l > 0) { // the layer below at this step: the record just before this one
            const struct ks_trace_step *lo = rec - 1;
            for (uint32_t i = 0; i < lo->n; i++)
                w->below[t->sel[lo->first + i].block] = step + 1;
            for (uint32_t i = 0; i < rec->n; i++)
                la->adj_num += w->below[sel[i].block] == step + 1;
        }
        if (prev) { // neighbours: prev is S_{step-1}; last[] still describes it
            size_t nb = ks_trace_blocks(&t->meta, rec->context);
            const struct ks_trace_sel *ps = t->sel + prev->first;
            for (uint32_t i = 0; i < prev->n; i++) {
                uint32_t b = ps[i].block;
                if ((size_t)b + 1 >= nb)
                    continue;
                int hit = w->now[b + 1] == step + 1;
                s->neighbour_trials++;
                *nb_hit += hit;
                la->nb_den++;
                la->nb_num += hit;
                if (w->last[b + 1] != step) { // b + 1 not in S_{step-1}
                    s->neighbour_new_trials++;
                    *nb_new_hit += hit;
                }
            }
        }
        for (uint32_t i = 0; i < rec->n; i++) {
            uint32_t b = sel[i].block;
            if (w->last[b] == 0) {
                s->cold++;
            } else {
                uint32_t d = step + 1 - w->last[b];
                s->reuse_hist[bucket_of(d)]++;
                for (int k = 0; k < KS_TRACESTATS_WINDOWS; k++)
                    if (step >= ks_tracestats_window[k] && d <= ks_tracestats_window[k])
                        num[k]++;
                la->r1_num += step >= 1 && d == 1;
            }
            for (int k = 0; k < KS_TRACESTATS_WINDOWS; k++)
                s->reuse_eligible[k] += step >= ks_tracestats_window[k];
            la->r1_den += step >= 1;
            w->last[b] = step + 1;
        }
        for (int k = 0; k < KS_TRACESTATS_WS; k++) {
            uint32_t win = ks_tracestats_ws_window[k];
            for (uint32_t i = 0; i < rec->n; i++)
                distinct[k] += w->ws_cnt[k][sel[i].block]++ == 0;
            if (step >= win) { // S_{step - win} leaves the window
                const struct ks_trace_step *old = &t->steps[t->req_first[r] + (size_t)(step - win) * L + l];
                for (uint32_t i = 0; i < old->n; i++)
                    distinct[k] -= --w->ws_cnt[k][t->sel[old->first + i].block] == 0;
            }
            if (step + 1 >= win) {
                w->ws_sum[k][step] += distinct[k];
                w->ws_n[k][step]++;
            }
        }
        la->sel += rec->n;
        la->records++;
        prev = rec;
    }
}

static void mass_pass(const struct ks_trace *t, struct work *w, struct ks_tracestats *s)
{
    double top[KS_TRACESTATS_TOP] = {0}, total = 0;
    uint64_t with_mass = 0;
    for (size_t i = 0; i < t->n_steps; i++) {
        const struct ks_trace_step *rec = &t->steps[i];
        double sum = 0;
        for (uint32_t j = 0; j < rec->n; j++)
            sum += (w->mass[j] = t->sel[rec->first + j].mass);
        total += sum;
        if (rec->n == 0 || !(sum > 0))
            continue;
        qsort(w->mass, rec->n, sizeof *w->mass, by_mass_desc);
        with_mass++;
        for (int k = 0; k < KS_TRACESTATS_TOP; k++) {
            double part = 0;
            for (uint32_t j = 0; j < rec->n && j < ks_tracestats_top[k]; j++)
                part += w->mass[j];
            top[k] += part / sum;
        }
    }
    s->mass_total = t->n_steps ? total / (double)t->n_steps : 0.0;
    for (int k = 0; k < KS_TRACESTATS_TOP; k++)
        s->mass_top[k] = with_mass ? top[k] / (double)with_mass : NAN;
}

static int opt_pass(const struct ks_trace *t, struct work *w, struct ks_tracestats *s)
{
    const uint32_t L = t->meta.layers;
    uint64_t hits[KS_TRACESTATS_OPT] = {0};
    for (int k = 0; k < KS_TRACESTATS_OPT; k++) {
        double c = round(ks_tracestats_opt_fraction[k] * s->mean_selected * L);
        s->opt_capacity[k] = c < 1 ? 1 : c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    }
    if ((uint64_t)L * s->max_blocks > UINT32_MAX)
        return KS_EINVAL; // (layer, block) keys would not fit 32 bits
    for (uint32_t r = 0; r < t->n_requests; r++) {
        size_t n = 0, first = t->req_first[r], end = first + (size_t)t->req_steps[r] * L;
        for (size_t i = first; i < end; i++)
            for (uint32_t j = 0; j < t->steps[i].n; j++)
                w->keys[n++] = t->steps[i].layer * s->max_blocks + t->sel[t->steps[i].first + j].block;
        for (int k = 0; k < KS_TRACESTATS_OPT; k++) {
            uint64_t h;
            int st = ks_tracestats_opt_hits(w->keys, n, L * s->max_blocks, s->opt_capacity[k], &h);
            if (st != KS_OK)
                return st;
            hits[k] += h;
        }
    }
    for (int k = 0; k < KS_TRACESTATS_OPT; k++)
        s->opt_hit[k] = s->selections ? (double)hits[k] / (double)s->selections : NAN;
    return KS_OK;
}

int ks_tracestats_compute(const struct ks_trace *t, struct ks_tracestats *s)
{
    memset(s, 0, sizeof *s);
    const uint32_t L = t->meta.layers;
    s->requests = t->n_requests;
    s->layers = L;
    s->block_size = t->meta.block_size;
    s->records = t->n_steps;
    s->min_selected = t->n_steps ? UINT32_MAX : 0;
    uint32_t max_steps = 0;
    size_t max_req_sel = 0;
    for (uint32_t r = 0; r < t->n_requests; r++) {
        s->steps += t->req_steps[r];
        max_steps = t->req_steps[r] > max_steps ? t->req_steps[r] : max_steps;
        size_t n = 0, first = t->req_first[r], end = first + (size_t)t->req_steps[r] * L;
        for (size_t i = first; i < end; i++)
            n += t->steps[i].n;
        max_req_sel = n > max_req_sel ? n : max_req_sel;
    }
    for (size_t i = 0; i < t->n_steps; i++) {
        size_t nb = ks_trace_blocks(&t->meta, t->steps[i].context);
        s->max_blocks = nb > s->max_blocks ? (uint32_t)nb : s->max_blocks;
        s->max_selected = t->steps[i].n > s->max_selected ? t->steps[i].n : s->max_selected;
        s->min_selected = t->steps[i].n < s->min_selected ? t->steps[i].n : s->min_selected;
        s->selections += t->steps[i].n; // the rows the records select: /selected may hold more
    }
    s->mean_selected = t->n_steps ? (double)s->selections / (double)t->n_steps : 0.0;

    struct work w = {0};
    size_t mb = s->max_blocks ? s->max_blocks : 1, ms = max_steps ? max_steps : 1;
    w.last = malloc(mb * sizeof *w.last);
    w.now = malloc(mb * sizeof *w.now);
    w.below = malloc(mb * sizeof *w.below);
    int ok = w.last && w.now && w.below;
    for (int i = 0; i < KS_TRACESTATS_WS; i++) {
        w.ws_cnt[i] = malloc(mb * sizeof *w.ws_cnt[i]);
        w.ws_sum[i] = calloc(ms, sizeof *w.ws_sum[i]);
        w.ws_n[i] = calloc(ms, sizeof *w.ws_n[i]);
        ok = ok && w.ws_cnt[i] && w.ws_sum[i] && w.ws_n[i];
    }
    w.mass = malloc((s->max_selected ? s->max_selected : 1) * sizeof *w.mass);
    w.keys = malloc((max_req_sel ? max_req_sel : 1) * sizeof *w.keys);
    s->layer = calloc(L ? L : 1, sizeof *s->layer);
    struct layer_acc *la = calloc(L ? L : 1, sizeof *la);
    if (!ok || !w.mass || !w.keys || !s->layer || !la) {
        work_free(&w);
        free(la);
        ks_tracestats_fini(s);
        return KS_ENOMEM;
    }

    uint64_t num[KS_TRACESTATS_WINDOWS] = {0}, nb_hit = 0, nb_new_hit = 0;
    for (uint32_t r = 0; r < t->n_requests; r++)
        for (uint32_t l = 0; l < L; l++)
            stream_pass(t, r, l, &w, s, num, &nb_hit, &nb_new_hit, &la[l]);
    for (unsigned k = 0; k < KS_TRACESTATS_BUCKETS; k++)
        if (s->reuse_hist[k])
            s->hist_buckets = k + 1;
    for (int k = 0; k < KS_TRACESTATS_WINDOWS; k++)
        s->reuse[k] = s->reuse_eligible[k] ? (double)num[k] / (double)s->reuse_eligible[k] : NAN;
    s->neighbour = s->neighbour_trials ? (double)nb_hit / (double)s->neighbour_trials : NAN;
    s->neighbour_new = s->neighbour_new_trials ? (double)nb_new_hit / (double)s->neighbour_new_trials : NAN;
    uint64_t adj_num = 0, adj_den = 0;
    for (uint32_t l = 0; l < L; l++) {
        s->layer[l].selections = la[l].sel;
        s->layer[l].mean_selected = la[l].records ? (double)la[l].sel / (double)la[l].records : 0.0;
        s->layer[l].overlap = la[l].r1_den ? (double)la[l].r1_num / (double)la[l].r1_den : NAN;
        s->layer[l].new_share = la[l].r1_den ? 1 - s->layer[l].overlap : NAN;
        uint64_t runs = la[l].r1_den - la[l].r1_num; // runs begun at steps >= 1
        s->layer[l].persistence = runs ? (double)la[l].r1_den / (double)runs : NAN;
        s->layer[l].neighbour = la[l].nb_den ? (double)la[l].nb_num / (double)la[l].nb_den : NAN;
        s->layer[l].adjacent = l > 0 && la[l].sel ? (double)la[l].adj_num / (double)la[l].sel : NAN;
        if (l > 0) {
            adj_num += la[l].adj_num;
            adj_den += la[l].sel;
        }
    }
    s->adjacent = adj_den ? (double)adj_num / (double)adj_den : NAN;
    free(la);

    for (int k = 0; k < KS_TRACESTATS_WS; k++) {
        struct ks_tracestats_ws *ws = &s->ws[k];
        uint32_t win = ks_tracestats_ws_window[k];
        ws->window = win;
        double sum = 0;
        uint64_t n = 0;
        for (uint32_t st = 0; st < max_steps; st++) {
            sum += w.ws_sum[k][st];
            n += w.ws_n[k][st];
        }
        ws->mean = n ? sum / (double)n : NAN;
        if (max_steps < win)
            continue;
        // points spread evenly from the first full window to the last step,
        // each the mean over the streams that have it
        uint32_t lo = win - 1, span = max_steps - 1 - lo;
        uint32_t pts = span + 1 < KS_TRACESTATS_SERIES ? span + 1 : KS_TRACESTATS_SERIES;
        for (uint32_t j = 0; j < pts; j++) {
            uint32_t st = pts == 1 ? lo : lo + (uint32_t)((uint64_t)span * j / (pts - 1));
            if (!w.ws_n[k][st])
                continue;
            ws->step[ws->points] = st;
            ws->value[ws->points++] = w.ws_sum[k][st] / (double)w.ws_n[k][st];
        }
    }

    mass_pass(t, &w, s);
    int st = opt_pass(t, &w, s);
    work_free(&w);
    if (st != KS_OK)
        ks_tracestats_fini(s);
    return st;
}

void ks_tracestats_fini(struct ks_tracestats *s)
{
    free(s->layer);
    s->layer = NULL;
}
