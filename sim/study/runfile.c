// runfile.c - a run's summary figures and its HDF5 result file (runfile.h).
//
// The summary's keys are the same on stdout (text or --json) and as the
// attributes of /summary in the result file; /requests holds one record per
// request. The result is written whole or not at all (results.h).
//
// A figure that was not measured (a quantile or mean of an empty histogram:
// no request reached its first token, or a second one) is null in JSON and
// NaN in the file, never 0, so it cannot pass for a measurement. The seed
// is an identifier, not a figure: it is kept exact (a JSON integer and an
// integer attribute up to 2^63 - 1, a decimal string above).

#include "runfile.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "h5read.h"
#include "json.h"
#include "results.h"
#include "status.h"

static const struct ks_field request_fields[] = {
    {"id", KS_F_U64, offsetof(struct ks_request_record, id), "request id, in arrival order"},
    {"session", KS_F_U64, offsetof(struct ks_request_record, session), "session (one per single-turn request)"},
    {"turn", KS_F_U32, offsetof(struct ks_request_record, turn), "turn within the session, from 0"},
    {"gpu", KS_F_U32, offsetof(struct ks_request_record, gpu), "GPU that served it"},
    {"prompt", KS_F_U32, offsetof(struct ks_request_record, prompt), "prompt tokens"},
    {"output", KS_F_U32, offsetof(struct ks_request_record, output), "output tokens asked for"},
    {"generated", KS_F_U32, offsetof(struct ks_request_record, generated), "output tokens produced"},
    {"arrival", KS_F_F64, offsetof(struct ks_request_record, arrival), "seconds"},
    {"admitted", KS_F_F64, offsetof(struct ks_request_record, admitted), "seconds"},
    {"first_token", KS_F_F64, offsetof(struct ks_request_record, first_token), "seconds; -1: none"},
    {"finish", KS_F_F64, offsetof(struct ks_request_record, finish), "seconds; -1: cut off by the end of the run"},
    {"tpot_mean", KS_F_F64, offsetof(struct ks_request_record, tpot_mean), "seconds per output token after the first"},
    {"tpot_max", KS_F_F64, offsetof(struct ks_request_record, tpot_max), "seconds"},
};

static const struct ks_field step_fields[] = {
    {"t", KS_F_F64, offsetof(struct ks_step_record, t), "seconds"},
    {"gpu", KS_F_U32, offsetof(struct ks_step_record, gpu), NULL},
    {"batch", KS_F_U32, offsetof(struct ks_step_record, batch), "requests decoding"},
    {"pending", KS_F_U32, offsetof(struct ks_step_record, pending), "requests waiting for admission"},
    {"occupancy_l1", KS_F_U32, offsetof(struct ks_step_record, occupancy[KS_L1]), "pages in use"},
    {"occupancy_l2", KS_F_U32, offsetof(struct ks_step_record, occupancy[KS_L2]), "pages in use"},
    {"occupancy_l3", KS_F_U32, offsetof(struct ks_step_record, occupancy[KS_L3]), "pages in use"},
    {"step_time", KS_F_F64, offsetof(struct ks_step_record, step_time), "seconds, the last decode step"},
    {"stall", KS_F_F64, offsetof(struct ks_step_record, stall), "seconds of that step waiting for blocks"},
    {"found_l1", KS_F_U64, offsetof(struct ks_step_record, found[KS_L1]), "accesses so far found in L1"},
    {"found_l2", KS_F_U64, offsetof(struct ks_step_record, found[KS_L2]), "accesses so far found in L2"},
    {"found_l3", KS_F_U64, offsetof(struct ks_step_record, found[KS_L3]), "accesses so far found in L3"},
    {"bytes_up", KS_F_U64, offsetof(struct ks_step_record, bytes_up), "bytes migrated so far towards L1"},
    {"bytes_down", KS_F_U64, offsetof(struct ks_step_record, bytes_down), "bytes migrated so far away from L1"},
};

static const struct ks_field link_fields[] = {
    {"name", KS_F_S32, offsetof(struct ks_link_record, name), "SimGrid link (platform.h names them)"},
    {"bandwidth", KS_F_F64, offsetof(struct ks_link_record, bandwidth), "bytes/s"},
    {"latency", KS_F_F64, offsetof(struct ks_link_record, latency), "seconds"},
    {"bytes", KS_F_F64, offsetof(struct ks_link_record, bytes), "bytes carried over the run"},
    {"utilisation", KS_F_F64, offsetof(struct ks_link_record, utilisation), "bytes / (bandwidth * sim_time)"},
};

static const struct ks_field link_sample_fields[] = {
    {"t", KS_F_F64, offsetof(struct ks_link_sample, t), "seconds"},
    {"link", KS_F_U32, offsetof(struct ks_link_sample, link), "row of /links"},
    {"bytes", KS_F_F64, offsetof(struct ks_link_sample, bytes), "bytes carried up to t"},
};

static const struct ks_field tier_fields[] = {
    {"gpu", KS_F_U32, offsetof(struct ks_tier_record, gpu), NULL},
    {"tier", KS_F_U32, offsetof(struct ks_tier_record, tier), "0 = L1, 1 = L2, 2 = L3"},
    {"capacity", KS_F_U32, offsetof(struct ks_tier_record, capacity), "pages"},
    {"used", KS_F_U32, offsetof(struct ks_tier_record, used), "pages in use at the end"},
    {"peak", KS_F_U32, offsetof(struct ks_tier_record, peak), "most pages in use at once"},
    {"block_bytes", KS_F_U64, offsetof(struct ks_tier_record, block_bytes), "bytes a block takes here"},
    {"mig_in", KS_F_U64, offsetof(struct ks_tier_record, mig_in), "blocks that arrived by migration"},
    {"mig_out", KS_F_U64, offsetof(struct ks_tier_record, mig_out), "blocks that left by migration"},
    {"alloc_fails", KS_F_U64, offsetof(struct ks_tier_record, alloc_fails), "page requests that found it full"},
};

static void num(struct ks_run_summary *s, const char *key, double v, const char *note)
{
    s->err |= ks_json_set_num(s->fig, key, v);
    s->err |= ks_json_set_str(s->notes, key, note);
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

// A histogram's figure, NaN (null in JSON) when it holds no value.
static double measured(const struct ks_hist *h, double v)
{
    return h && h->count ? v : NAN;
}

static double hist_quantile(const struct ks_hist *h, double q)
{
    return measured(h, h ? ks_hist_quantile(h, q) : 0);
}

static double hist_mean(const struct ks_hist *h)
{
    return measured(h, h ? ks_hist_mean(h) : 0);
}

static void seed_figure(struct ks_run_summary *s, uint64_t seed)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRIu64, seed);
    json_t *v = seed <= INT64_MAX ? json_integer((json_int_t)seed) : json_string(text);
    s->err |= json_object_set_new(s->fig, "seed", v);
    s->err |= ks_json_set_str(s->notes, "seed", "random seed (exact; a string above 2^63 - 1)");
}

// The scenario's objectives, in the order they are shown.
struct objective {
    const char *name; // the figure it bounds, and slo.NAME
    double limit;     // seconds; 0: not set
    double value;     // the run's figure; NaN: not measured
};

// slo_NAME (the objective) and slo_margin_NAME ((limit - value) / limit:
// >= 0 met, < 0 missed, null not measured) for every objective set; then
// slo_met, true only when every objective is measured and met and the run
// produced a token; and slo_missed, what failed ("none" when nothing did).
static void slo_verdict(struct ks_run_summary *s, const struct ks_scenario *sc, const struct ks_run_result *r)
{
    const struct objective obj[] = {
        {"tpot_p99", sc->slo.tpot_p99, hist_quantile(r->tpot, 0.99)},
        {"tpot_mean", sc->slo.tpot_mean, hist_mean(r->tpot)},
        {"ttft_p99", sc->slo.ttft_p99, hist_quantile(r->ttft, 0.99)},
    };
    enum { N_OBJ = sizeof obj / sizeof obj[0] };
    int any = 0;
    for (int i = 0; i < N_OBJ; i++)
        any |= obj[i].limit > 0;
    if (!any)
        return;
    char missed[512] = "", key[64];
    size_t used = 0;
    int met = 1;
    if (r->tokens == 0) {
        met = 0;
        used += (size_t)snprintf(missed, sizeof missed, "no output token");
    }
    for (int i = 0; i < N_OBJ; i++) {
        if (!(obj[i].limit > 0))
            continue;
        double margin = (obj[i].limit - obj[i].value) / obj[i].limit; // NaN when not measured
        snprintf(key, sizeof key, "slo_%s", obj[i].name);
        num(s, key, obj[i].limit, "objective, seconds");
        snprintf(key, sizeof key, "slo_margin_%s", obj[i].name);
        num(s, key, margin, "(objective - measured) / objective: >= 0 met, < 0 missed, null not measured");
        if (margin >= 0)
            continue;
        met = 0;
        char one[128];
        if (isnan(margin))
            snprintf(one, sizeof one, "%s (not measured)", obj[i].name);
        else
            snprintf(one, sizeof one, "%s (margin %.1f%%)", obj[i].name, 100 * margin);
        if (used < sizeof missed)
            used += (size_t)snprintf(missed + used, sizeof missed - used, "%s%s", used ? ", " : "", one);
    }
    s->err |= ks_json_set_bool(s->fig, "slo_met", met);
    s->err |= ks_json_set_str(s->notes, "slo_met",
                              "every objective set is measured and met, and the run produced a token");
    s->err |= ks_json_set_str(s->fig, "slo_missed", met ? "none" : missed);
    s->err |= ks_json_set_str(s->notes, "slo_missed", "the objectives missed, with their margins");
}

void ks_run_summarise(struct ks_run_summary *s, const struct ks_scenario *sc, const struct ks_run_result *r)
{
    const struct ks_cache_stats *c = &r->cache;
    s->err |= ks_json_set_str(s->fig, "name", sc->name);
    s->err |= ks_json_set_str(s->notes, "name", "scenario");
    seed_figure(s, sc->seed);
    num(s, "sim_time", r->sim_time, "seconds simulated");
    num(s, "truncated", r->truncated,
        "1: the duration ended the run before its workload.requests had all finished; 0 otherwise");
    num(s, "requests_arrived", (double)r->arrived, "requests released by the router");
    num(s, "requests_admitted", (double)r->admitted, "requests that started decoding");
    num(s, "requests_finished", (double)r->finished, "requests that produced all their tokens");
    num(s, "tokens", (double)r->tokens, "output tokens produced");
    num(s, "throughput_tokens", ratio((double)r->tokens, r->sim_time), "output tokens per simulated second");
    num(s, "throughput_requests", ratio((double)r->finished, r->sim_time), "finished requests per simulated second");
    num(s, "ttft_mean", hist_mean(r->ttft), "seconds from arrival to first token, mean (null: none measured)");
    num(s, "ttft_p50", hist_quantile(r->ttft, 0.5), "seconds");
    num(s, "ttft_p99", hist_quantile(r->ttft, 0.99), "seconds");
    num(s, "tpot_mean", hist_mean(r->tpot), "seconds per output token after the first, mean (null: none measured)");
    num(s, "tpot_p50", hist_quantile(r->tpot, 0.5), "seconds");
    num(s, "tpot_p99", hist_quantile(r->tpot, 0.99), "seconds");
    double acc = (double)c->accesses;
    num(s, "hit_rate_l1", ratio((double)c->found[KS_L1], acc), "block accesses that found the block in L1");
    num(s, "hit_rate_l2", ratio((double)c->found[KS_L2], acc), "block accesses that found it in L2");
    num(s, "hit_rate_l3", ratio((double)c->found[KS_L3], acc), "block accesses that found it in L3");
    num(s, "stall_fraction", ratio(r->stall, r->stall + r->busy), "GPU time spent waiting for needed blocks");
    num(s, "prefetch_accuracy", ratio((double)c->pf_used, (double)c->pf_issued), "prefetched blocks later accessed");
    num(s, "migrated_bytes_l1_l2", (double)c->mig_bytes[KS_L1][KS_L2], "bytes demoted from L1 to L2");
    num(s, "migrated_bytes_l2_l1", (double)c->mig_bytes[KS_L2][KS_L1], "bytes promoted from L2 to L1");
    num(s, "migrated_bytes_l2_l3", (double)c->mig_bytes[KS_L2][KS_L3], "bytes demoted from L2 to L3");
    num(s, "migrated_bytes_l3_l1", (double)c->mig_bytes[KS_L3][KS_L1], "bytes promoted from L3 to L1");
    num(s, "steps", (double)r->steps, "decode steps, all GPUs");
    num(s, "peak_batch", (double)r->peak_batch, "most requests decoding at once on one GPU");
    num(s, "misses_unplanned", (double)r->unplanned, "misses (or new blocks) that found no page");
    num(s, "outside_reads", (double)r->outside_reads,
        "selected blocks read outside L1 (their promotion found no room), one by one before their layer");
    num(s, "table_rebuilds", (double)r->table_rebuilds, "resident-pointer table rebuilds (L1 mapping changed)");
    num(s, "host_fraction", ratio(r->host_time, r->host_time + r->stall + r->busy),
        "decode GPU time spent on host costs (scheduling, table rebuilds)");
    num(s, "prefill_seconds", r->prefill_time, "seconds of prefill compute, all GPUs (or the prefill pool)");
    num(s, "kv_sent_bytes", (double)r->kv_sent, "prompt KV bytes the prefill pool sent (disaggregated)");
    num(s, "copy_bandwidth", ratio((double)r->copy_bytes, r->copy_seconds),
        "bytes/s a migration batch achieved while it ran (bytes over lane time, all batches)");
    slo_verdict(s, sc, r);
    num(s, "wall_s", r->wall_s, "wall-clock seconds the simulation took");
}

int ks_run_write(const char *path, const struct ks_run_summary *s, const struct ks_run_result *r, char *err,
                 size_t len)
{
    struct ks_results *h = ks_results_open(path, err, len);
    if (!h)
        return KS_EIO;
    int st = KS_OK;
    const char *key;
    json_t *v;
    json_object_foreach(s->fig, key, v)
    {
        if (st != KS_OK)
            break;
        if (json_is_string(v))
            st = ks_results_attr_str(h, "/summary", key, json_string_value(v));
        else if (json_is_boolean(v))
            st = ks_results_attr_int(h, "/summary", key, json_is_true(v));
        else if (json_is_integer(v) && strcmp(key, "seed") == 0) // an identifier: exact
            st = ks_results_attr_int(h, "/summary", key, (int64_t)json_integer_value(v));
        else if (json_is_null(v)) // not measured
            st = ks_results_attr_num(h, "/summary", key, NAN);
        else
            st = ks_results_attr_num(h, "/summary", key, json_number_value(v));
    }
    struct ks_table *t = st == KS_OK ? ks_results_table(h, "/requests", request_fields,
                                                        sizeof request_fields / sizeof request_fields[0],
                                                        sizeof(struct ks_request_record), 0)
                                     : NULL;
    struct ks_table *steps = t ? ks_results_table(h, "/steps", step_fields, sizeof step_fields / sizeof step_fields[0],
                                                  sizeof(struct ks_step_record), 0)
                               : NULL;
    struct ks_table *tiers = steps ? ks_results_table(h, "/tiers", tier_fields,
                                                      sizeof tier_fields / sizeof tier_fields[0],
                                                      sizeof(struct ks_tier_record), 0)
                                   : NULL;
    struct ks_table *links = tiers ? ks_results_table(h, "/links", link_fields,
                                                      sizeof link_fields / sizeof link_fields[0],
                                                      sizeof(struct ks_link_record), 0)
                                   : NULL;
    struct ks_table *ls = links ? ks_results_table(h, "/link_samples", link_sample_fields,
                                                   sizeof link_sample_fields / sizeof link_sample_fields[0],
                                                   sizeof(struct ks_link_sample), 0)
                                : NULL;
    if (!t || !steps || !tiers || !links || !ls || ks_results_append(t, r->rec, r->n_rec) != KS_OK ||
        ks_results_append(steps, r->samples, r->n_samples) != KS_OK ||
        ks_results_append(tiers, r->tiers, r->n_tiers) != KS_OK ||
        ks_results_append(links, r->links, r->n_links) != KS_OK ||
        ks_results_append(ls, r->link_samples, r->n_link_samples) != KS_OK ||
        ks_results_attr_int(h, "/", "complete", 1) != KS_OK) { // last: a file without it is incomplete
        ks_results_abort(h); // the reason is in err
        return KS_EIO;
    }
    return ks_results_commit(h);
}

int ks_run_check_complete(hid_t f, char *why, size_t len)
{
    int64_t v = 0;
    char attr[256];
    if (ks_h5read_attr_int(f, "complete", &v, attr, sizeof attr) != KS_OK) {
        snprintf(why, len, "an incomplete result: attribute /complete %s (the run that wrote it did not finish, or "
                 "wrote it before this check existed); rerun it", attr);
        return KS_EINVAL;
    }
    if (v != 1) {
        snprintf(why, len, "an incomplete result: attribute /complete is %lld, not 1; rerun it", (long long)v);
        return KS_EINVAL;
    }
    return KS_OK;
}
