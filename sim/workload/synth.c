// synth.c - synthetic attention keys and queries (see synth.h).
//
// Every random quantity is a hash of its coordinates (seed, stream, request,
// layer, head, index), never a draw from a sequential generator, so any key
// or query can be rebuilt alone. Vectors are filled channel by channel from a
// 32-bit mix of (token hash, channel), which the compiler vectorises; the
// per-channel values are uniform with variance 1 (not Gaussian: what matters
// is their dot products over ~100 channels, which the central limit theorem
// makes Gaussian anyway).
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "status.h"

#define GOLD UINT64_C(0x9e3779b97f4a7c15)
#define ROPE_ANCHOR 32 // tokens between exactly computed rotary angles

// Hash streams: one per kind of random quantity, so no two kinds share values.
enum stream {
    S_SEGMENT = 1, // topic of a prompt span
    S_SWITCH,      // does the topic change at this step
    S_TOPIC,       // the topic it changes to
    S_RETRIEVE,    // does a retrieval episode start at this step
    S_TARGET,      // its target token
    S_TOKEN,       // a key's noise and heavy-hitter flag
    S_TOPICVEC,    // topic direction of a (layer, KV head)
    S_PHRASE,      // phrase direction
    S_DRIFT,       // drift anchor of a (layer, query head)
    S_HEAD,        // head mixture weights
    S_LAYER,       // layer noise
};

enum term { T_SINK, T_REC, T_TOPIC, T_RET, T_HEAVY, T_DRIFT, T_TERMS };

struct ks_synth {
    struct ks_synth_params p;
    uint32_t q_heads;   // n_kv_heads * group
    uint32_t c0, c1;    // content channels [c0, c1); then the heavy-hitter and the sink channel
    double p_event;     // per-step probability of a topic draw (the draw may repeat the topic)
    float inv_sqrt_m;   // 1 / sqrt(rope_pairs): the rotary part of a key has norm 1
    double *omega;      // [rope_pairs] rad/token
    float *rot;         // [ROPE_ANCHOR][rope_pairs][2]: cos, sin of omega * k
    uint32_t *salt;     // [head_dim] per-channel constants of the element hash
    float *weight;      // [n_layers][q_heads][T_TERMS] logits of each term, layer and head effects included
    float *zero;        // [head_dim] zeros
};

static inline uint64_t mix64(uint64_t z)
{
    return ks_rng_mix(z);
}

static inline uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    return x ^ (x >> 16);
}

static inline uint64_t hash_at(uint64_t h, uint64_t i) { return mix64(h + GOLD * (i + 1)); }

// The hash of (seed, stream, a, b, c, d); unused coordinates are 0.
static uint64_t hash6(const struct ks_synth *s, enum stream k, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t h = mix64(s->p.seed ^ GOLD * (uint64_t)k);
    h = hash_at(h, a);
    h = hash_at(h, b);
    h = hash_at(h, c);
    return hash_at(h, d);
}

static inline double unit(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; }

static inline uint32_t below(uint64_t h, uint32_t n) { return (uint32_t)(((h >> 32) * (uint64_t)n) >> 32); }

// out[j] = base[j] + x_j for the content channels, x_j uniform with variance
// 1 from the hash h: each 32-bit mix of (h, channel) gives two 16-bit
// values. Tokens whose 32-bit halves of h collide still differ: both halves
// enter every mix. (Writing out in one pass, rather than adding to it, avoids
// reloading freshly stored floats as a vector.)
static inline void noise(const struct ks_synth *s, uint64_t h, const float *base, float *out)
{
    uint32_t lo = (uint32_t)h, hi = (uint32_t)(h >> 32);
    size_t j = s->c0, end = s->c1;
    const float k = (float)(1.7320508075688772 / 32768.0); // sqrt(3) / 2^15: variance 1
    // NOTE: groups of a fixed 8 lanes, so that -O2's vectoriser (which
    // leaves runtime-bounded loops alone) turns each group into SIMD code.
    for (; j + 8 <= end; j += 8) {
        const uint32_t *salt = s->salt + j;
        const float *b = base + j;
        float *o = out + j;
        for (int l = 0; l < 4; l++) {
            uint32_t x = mix32((salt[l] ^ lo) + hi);
            o[l] = b[l] + (float)((int32_t)(x << 16) >> 16) * k;
            o[l + 4] = b[l + 4] + (float)((int32_t)x >> 16) * k;
        }
    }
    for (; j < end; j++)
        out[j] = base[j] + (float)((int32_t)mix32((s->salt[j] ^ lo) + hi) >> 16) * k;
}

// A unit vector over the content channels (zero elsewhere).
static void unit_vec(const struct ks_synth *s, uint64_t h, float *v)
{
    memset(v, 0, sizeof *v * s->p.head_dim);
    noise(s, h, s->zero, v);
    double n2 = 0;
    for (uint32_t j = s->c0; j < s->c1; j++)
        n2 += (double)v[j] * v[j];
    float inv = n2 > 0 ? (float)(1.0 / sqrt(n2)) : 0.0f;
    for (uint32_t j = s->c0; j < s->c1; j++)
        v[j] *= inv;
}

// Rotary channels of position t, times scale: pair i is (cos, sin)(omega_i t).
// The angle is computed exactly at the anchor below t and rotated by a
// table, so a token's value never depends on the range it was asked with.
static void rope(const struct ks_synth *s, uint32_t t, float scale, float *out, uint32_t *anchor, float *cs)
{
    uint32_t m = s->p.rope_pairs, a = t - t % ROPE_ANCHOR;
    if (*anchor != a) {
        for (uint32_t i = 0; i < m; i++) {
            double x = s->omega[i] * (double)a;
            cs[2 * i] = (float)cos(x);
            cs[2 * i + 1] = (float)sin(x);
        }
        *anchor = a;
    }
    const float *r = s->rot + (size_t)(t - a) * m * 2;
    for (uint32_t i = 0; i < m; i++) {
        float c = cs[2 * i], sn = cs[2 * i + 1], rc = r[2 * i], rs = r[2 * i + 1];
        out[2 * i] = (c * rc - sn * rs) * scale;
        out[2 * i + 1] = (sn * rc + c * rs) * scale;
    }
}

void ks_synth_params_default(struct ks_synth_params *p)
{
    ks_synth_preset("drifting", p);
}

// Shape and the terms every preset shares.
static void base_params(struct ks_synth_params *p)
{
    *p = (struct ks_synth_params){
        .seed = 0x5eed,
        .n_layers = 32,
        .n_kv_heads = 8,
        .group = 4,
        .head_dim = 128,
        .sink_tokens = 8,
        .sink_logit = 14.0f,
        .rope_pairs = 16,
        .recency_tokens = 1024,
        .recency_logit = 3.0f,
        .n_topics = 32,
        .topic_tokens = 1024,
        .topic_logit = 3.0f,
        .retrieval_steps = 4,
        .retrieval_min_distance = 4096,
        .phrase_tokens = 32,
        .retrieval_logit = 6.0f,
        .heavy_frac = 0.005,
        .heavy_logit = 4.0f,
        .key_signal = 2.0f,
        .early_layers = 2.0f,
        .early_flatten = 0.6f,
        .early_local = 1.0f,
        .layer_noise = 0.3f,
        .head_spread = 0.25f,
    };
}

// The presets differ only in how fast the query moves. Mean overlap of
// consecutive steps' top-64 of 1024 blocks (block-mean scoring, 12 layer and
// head pairs, 17 seeds; tests/workload/test_synth.c): stable 0.98-1.0, drifting
// 0.90-0.97, noisy 0.22-0.30.
int ks_synth_preset(const char *name, struct ks_synth_params *p)
{
    if (!name)
        return KS_EINVAL;
    base_params(p);
    if (!strcmp(name, "stable")) {
        p->topic_switch = 0.002; // one topic for ~500 steps
        p->retrieval_prob = 0.002;
        p->drift_logit = 1.0f;
        p->drift_steps = 256;
    } else if (!strcmp(name, "drifting")) {
        p->topic_switch = 0.02;
        p->retrieval_prob = 0.01;
        p->drift_logit = 1.5f;
        p->drift_steps = 8;
    } else if (!strcmp(name, "noisy")) {
        p->topic_switch = 0.3; // a new topic every ~3 steps
        p->retrieval_prob = 0.15;
        p->drift_logit = 4.0f;
        p->drift_steps = 1; // a fresh content direction every step
    } else {
        return KS_EINVAL;
    }
    return KS_OK;
}

static int bad(char *err, size_t errlen, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "synth: %s", what);
    return KS_EINVAL;
}

int ks_synth_params_check(const struct ks_synth_params *p, char *err, size_t errlen)
{
    if (!p)
        return bad(err, errlen, "no parameters");
    if (!p->n_layers || !p->n_kv_heads || !p->group)
        return bad(err, errlen, "n_layers, n_kv_heads and group must be positive");
    if ((uint64_t)p->n_kv_heads * p->group > UINT32_MAX / 2)
        return bad(err, errlen, "too many query heads");
    if (p->rope_pairs > KS_SYNTH_MAX_DIM / 2 || p->head_dim < 2 * p->rope_pairs + 4 || p->head_dim > KS_SYNTH_MAX_DIM)
        return bad(err, errlen, "head_dim must be in [2 * rope_pairs + 4, KS_SYNTH_MAX_DIM]");
    if (!p->recency_tokens || !p->topic_tokens || !p->phrase_tokens || !p->retrieval_steps || !p->drift_steps)
        return bad(err, errlen, "recency_tokens, topic_tokens, phrase_tokens, retrieval_steps and drift_steps "
                                "must be positive");
    if (!p->n_topics)
        return bad(err, errlen, "n_topics must be positive");
    float logits[] = {p->sink_logit,  p->recency_logit, p->topic_logit,
                      p->retrieval_logit, p->heavy_logit, p->drift_logit};
    for (size_t i = 0; i < sizeof logits / sizeof *logits; i++)
        if (!isfinite(logits[i]))
            return bad(err, errlen, "logits must be finite");
    double max_switch = (double)(p->n_topics - 1) / p->n_topics;
    if (!(p->topic_switch >= 0 && p->topic_switch <= max_switch))
        return bad(err, errlen, "topic_switch must be in [0, (n_topics - 1) / n_topics]");
    if (!(p->retrieval_prob >= 0 && p->retrieval_prob <= 1) || !(p->heavy_frac >= 0 && p->heavy_frac <= 1))
        return bad(err, errlen, "retrieval_prob and heavy_frac must be in [0, 1]");
    if (!(p->key_signal > 0 && isfinite(p->key_signal)))
        return bad(err, errlen, "key_signal must be positive");
    if (!(p->early_layers >= 0 && isfinite(p->early_layers)) || !(p->early_flatten >= 0 && p->early_flatten < 1) ||
        !(p->early_local >= 0 && isfinite(p->early_local)))
        return bad(err, errlen, "early_layers and early_local must be >= 0, early_flatten in [0, 1)");
    if (!(p->layer_noise >= 0 && p->layer_noise < 1) || !(p->head_spread >= 0 && p->head_spread <= 4))
        return bad(err, errlen, "layer_noise must be in [0, 1), head_spread in [0, 4]");
    return KS_OK;
}

// A standard normal from a hash (Box-Muller; construction time only).
static double normal(uint64_t h)
{
    double u1 = ((double)(h >> 40) + 0.5) * 0x1.0p-24, u2 = (double)(h & 0xffffff) * 0x1.0p-24;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

// Logit of each term at (layer, query head): the configured logit, times the
// early-layer profile, the layer's noise factor and the head's own weight.
static void fill_weights(struct ks_synth *s)
{
    const struct ks_synth_params *p = &s->p;
    const float base[T_TERMS] = {p->sink_logit,  p->recency_logit, p->topic_logit,
                                 p->retrieval_logit, p->heavy_logit, p->drift_logit};
    for (uint32_t l = 0; l < p->n_layers; l++) {
        double early = p->early_layers > 0 ? exp(-(double)l / p->early_layers) : 0.0;
        double flat = 1.0 - p->early_flatten * early, local = 1.0 + p->early_local * early;
        double noise = 1.0 + p->layer_noise * (2.0 * unit(hash6(s, S_LAYER, l, 0, 0, 0)) - 1.0);
        for (uint32_t h = 0; h < s->q_heads; h++) {
            float *w = s->weight + ((size_t)l * s->q_heads + h) * T_TERMS;
            for (int k = 0; k < T_TERMS; k++) {
                double f = exp(p->head_spread * normal(hash6(s, S_HEAD, l, h, (uint64_t)k, 0)));
                f *= k == T_REC ? local : flat;
                if (k == T_DRIFT)
                    f *= noise;
                w[k] = (float)(base[k] * f);
            }
        }
    }
}

struct ks_synth *ks_synth_new(const struct ks_synth_params *p, char *err, size_t errlen)
{
    if (ks_synth_params_check(p, err, errlen) != KS_OK)
        return NULL;
    struct ks_synth *s = calloc(1, sizeof *s);
    if (!s) {
        bad(err, errlen, "out of memory");
        return NULL;
    }
    s->p = *p;
    s->q_heads = p->n_kv_heads * p->group;
    s->c0 = 2 * p->rope_pairs;
    s->c1 = p->head_dim - 2;
    s->p_event = p->n_topics > 1 ? p->topic_switch * p->n_topics / (p->n_topics - 1) : 0.0;
    s->inv_sqrt_m = p->rope_pairs ? (float)(1.0 / sqrt(p->rope_pairs)) : 0.0f;
    uint32_t m = p->rope_pairs;
    s->omega = malloc(sizeof *s->omega * (m ? m : 1));
    s->rot = malloc(sizeof *s->rot * ROPE_ANCHOR * 2 * (m ? m : 1));
    s->salt = malloc(sizeof *s->salt * p->head_dim);
    s->weight = malloc(sizeof *s->weight * (size_t)p->n_layers * s->q_heads * T_TERMS);
    s->zero = calloc(p->head_dim, sizeof *s->zero);
    if (!s->omega || !s->rot || !s->salt || !s->weight || !s->zero) {
        ks_synth_free(s);
        bad(err, errlen, "out of memory");
        return NULL;
    }
    // Frequencies geometric from pi/4 to 4 pi per recency_tokens: the mean of
    // cos(omega_i d) falls from 1 to about 0 at d = recency_tokens, and past
    // that oscillates with std ~ 1 / sqrt(2 m), as RoPE's does.
    for (uint32_t i = 0; i < m; i++) {
        double x = m > 1 ? (double)i / (m - 1) : 0.5;
        s->omega[i] = 0.7853981633974483 / p->recency_tokens * pow(16.0, x);
        for (uint32_t k = 0; k < ROPE_ANCHOR; k++) {
            s->rot[(k * m + i) * 2] = (float)cos(s->omega[i] * k);
            s->rot[(k * m + i) * 2 + 1] = (float)sin(s->omega[i] * k);
        }
    }
    for (uint32_t j = 0; j < p->head_dim; j++)
        s->salt[j] = (uint32_t)hash6(s, S_TOKEN, j, UINT64_MAX, 0, 0);
    fill_weights(s);
    return s;
}

void ks_synth_free(struct ks_synth *s)
{
    if (!s)
        return;
    free(s->omega);
    free(s->rot);
    free(s->salt);
    free(s->weight);
    free(s->zero);
    free(s);
}

const struct ks_synth_params *ks_synth_params_of(const struct ks_synth *s) { return &s->p; }

// --- the per-request chains ---

static uint32_t segment_topic(const struct ks_synth *s, uint64_t req, uint32_t t)
{
    return below(hash6(s, S_SEGMENT, req, t / s->p.topic_tokens, 0, 0), s->p.n_topics);
}

// The topic the query starts decoding with: the prompt's last span's, so
// the first generated tokens continue what the prompt was about.
static uint32_t initial_topic(const struct ks_synth *s, uint64_t req, uint32_t prompt)
{
    return prompt ? segment_topic(s, req, prompt - 1) : below(hash6(s, S_TOPIC, req, 0, 0, 0), s->p.n_topics);
}

// A topic draw happens at step w >= 1 with probability p_event and picks any
// of the n topics, itself included, so the topic changes with probability
// p_event (n - 1) / n = topic_switch; a step's topic is then the last draw's,
// which a backward scan finds without any state.
static int topic_event(const struct ks_synth *s, uint64_t req, uint32_t w, uint32_t *topic)
{
    if (w == 0 || s->p_event <= 0 || unit(hash6(s, S_SWITCH, req, w, 0, 0)) >= s->p_event)
        return 0;
    *topic = below(hash6(s, S_TOPIC, req, w, 0, 0), s->p.n_topics);
    return 1;
}

static uint32_t topic_at(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t step)
{
    uint32_t z;
    if (s->p_event > 0)
        for (uint32_t w = step; w > 0; w--)
            if (topic_event(s, req, w, &z))
                return z;
    return initial_topic(s, req, prompt);
}

// A retrieval episode may start at step w; it targets a token at least
// retrieval_min_distance behind the query (and past the sinks). A start
// with no such token is void.
static int retrieval_start(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t w, uint32_t *target)
{
    if (s->p.retrieval_prob <= 0 || unit(hash6(s, S_RETRIEVE, req, w, 0, 0)) >= s->p.retrieval_prob)
        return 0;
    uint64_t pos = (uint64_t)prompt + w, lo = s->p.sink_tokens;
    if (pos < lo + s->p.retrieval_min_distance + 1)
        return 0;
    uint64_t n = pos - s->p.retrieval_min_distance - lo;
    *target = (uint32_t)(lo + below(hash6(s, S_TARGET, req, w, 0, 0), (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX)));
    return 1;
}

void ks_synth_step_at(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t step, struct ks_synth_step *st)
{
    st->req = req;
    st->prompt = prompt;
    st->step = step;
    st->topic = topic_at(s, req, prompt, step);
    st->target = st->episode = KS_SYNTH_NONE;
    uint64_t end = (uint64_t)step + 1, first = end >= s->p.retrieval_steps ? end - s->p.retrieval_steps : 0;
    for (uint64_t w = end; w-- > first;) // the latest valid start wins
        if (retrieval_start(s, req, prompt, (uint32_t)w, &st->target)) {
            st->episode = (uint32_t)w;
            break;
        }
}

void ks_synth_step_next(const struct ks_synth *s, struct ks_synth_step *st)
{
    KS_ASSERT(st->step < UINT32_MAX);
    st->step++;
    topic_event(s, st->req, st->step, &st->topic);
    uint32_t target;
    if (retrieval_start(s, st->req, st->prompt, st->step, &target)) {
        st->episode = st->step;
        st->target = target;
    } else if (st->episode != KS_SYNTH_NONE && st->step - st->episode >= s->p.retrieval_steps) {
        st->episode = st->target = KS_SYNTH_NONE;
    }
}

uint32_t ks_synth_token_topic(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t t)
{
    return t < prompt ? segment_topic(s, req, t) : topic_at(s, req, prompt, t - prompt);
}

// --- keys and queries ---

int ks_synth_keys(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t layer, uint32_t kv_head,
                  uint32_t t0, uint32_t t1, float *out)
{
    const struct ks_synth_params *p = &s->p;
    if (layer >= p->n_layers || kv_head >= p->n_kv_heads || t0 > t1)
        return KS_EINVAL;
    uint32_t d = p->head_dim, m = p->rope_pairs;
    float topic_v[KS_SYNTH_MAX_DIM], phrase_v[KS_SYNTH_MAX_DIM], base[KS_SYNTH_MAX_DIM], cs[KS_SYNTH_MAX_DIM];
    uint32_t topic = KS_SYNTH_NONE, anchor = UINT32_MAX;
    uint64_t phrase = UINT64_MAX, span = UINT64_MAX;
    uint32_t span_topic = 0;
    float a = p->key_signal;
    uint64_t tok = hash6(s, S_TOKEN, req, layer, kv_head, 0);
    uint32_t gen_topic = t1 > prompt ? topic_at(s, req, prompt, t0 > prompt ? t0 - prompt : 0) : 0;
    for (uint32_t t = t0; t < t1; t++) {
        float *k = out + (size_t)(t - t0) * d;
        uint32_t z;
        if (t < prompt) {
            if (t / p->topic_tokens != span) {
                span = t / p->topic_tokens;
                span_topic = segment_topic(s, req, t);
            }
            z = span_topic;
        } else {
            if (t > prompt && t > t0)
                topic_event(s, req, t - prompt, &gen_topic);
            z = gen_topic;
        }
        int changed = 0;
        if (z != topic) {
            unit_vec(s, hash6(s, S_TOPICVEC, layer, kv_head, z, 0), topic_v);
            topic = z;
            changed = 1;
        }
        if (t / p->phrase_tokens != phrase) {
            phrase = t / p->phrase_tokens;
            unit_vec(s, hash6(s, S_PHRASE, req, layer, kv_head, phrase), phrase_v);
            changed = 1;
        }
        if (changed)
            for (uint32_t j = s->c0; j < s->c1; j++)
                base[j] = a * (topic_v[j] + phrase_v[j]);
        if (t < p->sink_tokens) // a sink's key lives in the sink channel: it draws mass at any distance
            memset(k, 0, sizeof *k * s->c0);
        else if (m)
            rope(s, t, s->inv_sqrt_m, k, &anchor, cs);
        uint64_t h = hash_at(tok, t);
        noise(s, h, base, k);
        k[d - 2] = p->heavy_frac > 0 && unit(mix64(h ^ GOLD)) < p->heavy_frac ? 1.0f : 0.0f;
        k[d - 1] = t < p->sink_tokens ? 1.0f : 0.0f;
    }
    return KS_OK;
}

// The drifting content direction of (request, layer, query head) at a step:
// the normalised interpolation between the anchors around it.
static void drift(const struct ks_synth *s, const struct ks_synth_step *st, uint32_t layer, uint32_t q_head,
                  float *v, float *tmp)
{
    uint32_t K = s->p.drift_steps, j = st->step / K;
    float f = (float)(st->step % K) / (float)K;
    unit_vec(s, hash6(s, S_DRIFT, st->req, layer, q_head, j), v);
    if (f == 0.0f)
        return;
    unit_vec(s, hash6(s, S_DRIFT, st->req, layer, q_head, (uint64_t)j + 1), tmp);
    double n2 = 0;
    for (uint32_t c = s->c0; c < s->c1; c++) {
        v[c] = (1.0f - f) * v[c] + f * tmp[c];
        n2 += (double)v[c] * v[c];
    }
    float inv = (float)(1.0 / sqrt(n2));
    for (uint32_t c = s->c0; c < s->c1; c++)
        v[c] *= inv;
}

int ks_synth_query(const struct ks_synth *s, const struct ks_synth_step *st, uint32_t layer, uint32_t q_head,
                   float *out)
{
    const struct ks_synth_params *p = &s->p;
    if (layer >= p->n_layers || q_head >= s->q_heads)
        return KS_EINVAL;
    uint32_t d = p->head_dim, m = p->rope_pairs, kvh = q_head / p->group;
    const float *w = s->weight + ((size_t)layer * s->q_heads + q_head) * T_TERMS;
    float v[KS_SYNTH_MAX_DIM], tmp[KS_SYNTH_MAX_DIM], cs[KS_SYNTH_MAX_DIM];
    float sd = sqrtf((float)d), inv_a = 1.0f / p->key_signal;
    uint32_t anchor = UINT32_MAX;
    memset(out, 0, sizeof *out * d);
    if (m) // the positional logit is w * mean_i cos(omega_i (p - t)): each pair carries w / sqrt(m)
        rope(s, st->prompt + st->step, sd * w[T_REC] * s->inv_sqrt_m, out, &anchor, cs);
    out[d - 2] = sd * w[T_HEAVY];
    out[d - 1] = sd * w[T_SINK];
    // Content terms: a key carries key_signal * unit directions, so the query
    // carries logit / key_signal along them; the drift meets the unit-variance
    // noise channels directly.
    unit_vec(s, hash6(s, S_TOPICVEC, layer, kvh, st->topic, 0), v);
    for (uint32_t c = s->c0; c < s->c1; c++)
        out[c] += sd * w[T_TOPIC] * inv_a * v[c];
    if (st->target != KS_SYNTH_NONE) {
        unit_vec(s, hash6(s, S_PHRASE, st->req, layer, kvh, st->target / p->phrase_tokens), v);
        for (uint32_t c = s->c0; c < s->c1; c++)
            out[c] += sd * w[T_RET] * inv_a * v[c];
    }
    drift(s, st, layer, q_head, v, tmp);
    for (uint32_t c = s->c0; c < s->c1; c++)
        out[c] += sd * w[T_DRIFT] * v[c];
    return KS_OK;
}
