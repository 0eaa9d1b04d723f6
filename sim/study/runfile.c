// runfile.c - a run's summary figures and its HDF5 result file (runfile.h).
//
// The summary's keys are the same on stdout (text or --json) and as the
// attributes of /summary in the result file; /requests holds one record per
// request. The result is written whole or not at all (results.h).
//
// A figure that was not measured (a quantile or mean of an empty histogram:
// no request reached its first token, or a second one, or finished) is null
// in JSON and NaN in the file, never 0, so it cannot pass for a measurement.
// The seed is an identifier, not a figure: it is kept exact (a JSON integer
// and an integer attribute up to 2^63 - 1, a decimal string above).
//
// Each key's note and the resolved scenario travel in the file too
// (/summary_notes, /scenario), so that a report can say what a figure is and
// how two runs differ; a file written before them reads back without.

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
    {"tpot", KS_F_F64, offsetof(struct ks_request_record, tpot),
     "seconds: (finish - first_token) / (generated - 1); -1: unfinished or one token"},
    {"e2el", KS_F_F64, offsetof(struct ks_request_record, e2el), "seconds: finish - arrival; -1: unfinished"},
    {"itl_max", KS_F_F64, offsetof(struct ks_request_record, itl_max),
     "seconds: the longest gap between two consecutive tokens"},
};

static const struct ks_field step_fields[] = {
    {"t", KS_F_F64, offsetof(struct ks_step_record, t), "seconds"},
    {"gpu", KS_F_U32, offsetof(struct ks_step_record, gpu), NULL},
    {"batch", KS_F_U32, offsetof(struct ks_step_record, batch), "requests decoding"},
    {"pending", KS_F_U32, offsetof(struct ks_step_record, pending),
     "requests waiting for admission (retracted ones included)"},
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
    {"tokens", KS_F_U64, offsetof(struct ks_step_record, tokens), "output tokens so far on this GPU"},
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

// A latency's figures: NAME_mean, _p50, _p90, _p99 (null: none measured).
static void latency(struct ks_run_summary *s, const char *name, const struct ks_hist *h, const char *what)
{
    static const struct {
        const char *suffix;
        double q; // the quantile; < 0: the mean
    } stat[] = {{"mean", -1}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}};
    for (size_t i = 0; i < sizeof stat / sizeof stat[0]; i++) {
        char key[64], note[256];
        snprintf(key, sizeof key, "%s_%s", name, stat[i].suffix);
        snprintf(note, sizeof note, "seconds, %s: %s (null: none measured)", what, stat[i].suffix);
        num(s, key, stat[i].q < 0 ? hist_mean(h) : hist_quantile(h, stat[i].q), note);
    }
}

// The scenario's objectives on the run's figures, in the order they are
// shown: slo.NAME bounds the figure NAME (a mean or the P99 of a histogram).
enum { TTFT, TPOT, ITL, E2EL };
static const struct objective {
    const char *name;
    size_t off;   // in struct ks_scenario_slo
    int hist;     // TTFT ... E2EL
    double q;     // the quantile; < 0: the mean
} objectives[] = {
    {"ttft_mean", offsetof(struct ks_scenario_slo, ttft_mean), TTFT, -1},
    {"ttft_p99", offsetof(struct ks_scenario_slo, ttft_p99), TTFT, 0.99},
    {"tpot_mean", offsetof(struct ks_scenario_slo, tpot_mean), TPOT, -1},
    {"tpot_p99", offsetof(struct ks_scenario_slo, tpot_p99), TPOT, 0.99},
    {"itl_mean", offsetof(struct ks_scenario_slo, itl_mean), ITL, -1},
    {"itl_p99", offsetof(struct ks_scenario_slo, itl_p99), ITL, 0.99},
    {"e2el_mean", offsetof(struct ks_scenario_slo, e2el_mean), E2EL, -1},
    {"e2el_p99", offsetof(struct ks_scenario_slo, e2el_p99), E2EL, 0.99},
};
enum { N_OBJECTIVES = sizeof objectives / sizeof objectives[0] };

// The per-request objectives (active.c judges each finished request by
// them): goodput counts the requests that meet every one set.
static const struct objective per_request[] = {
    {"ttft", offsetof(struct ks_scenario_slo, ttft), TTFT, 0},
    {"tpot", offsetof(struct ks_scenario_slo, tpot), TPOT, 0},
    {"e2el", offsetof(struct ks_scenario_slo, e2el), E2EL, 0},
};
enum { N_PER_REQUEST = sizeof per_request / sizeof per_request[0] };

static double limit_of(const struct ks_scenario_slo *o, const struct objective *ob)
{
    return *(const double *)((const char *)o + ob->off);
}

static int any_set(const struct ks_scenario_slo *o, const struct objective *obs, int n)
{
    for (int i = 0; i < n; i++)
        if (limit_of(o, &obs[i]) > 0)
            return 1;
    return 0;
}

int ks_run_slo_set(const struct ks_scenario_slo *o)
{
    return any_set(o, objectives, N_OBJECTIVES);
}

// slo_NAME (the objective) and slo_margin_NAME ((limit - value) / limit:
// >= 0 met, < 0 missed, null not measured) for every objective on the run's
// figures set; then slo_met, true only when every one is measured and met
// and the run produced a token, and slo_missed, what failed ("none" when
// nothing did). Then slo_NAME for each per-request objective set.
static void slo_verdict(struct ks_run_summary *s, const struct ks_scenario *sc, const struct ks_run_result *r)
{
    const struct ks_scenario_slo *o = &sc->slo;
    const struct ks_hist *hists[] = {[TTFT] = r->ttft, [TPOT] = r->tpot, [ITL] = r->itl, [E2EL] = r->e2el};
    int any = ks_run_slo_set(o);
    char missed[1024] = "", key[64];
    size_t used = 0;
    int met = 1;
    if (any && r->tokens == 0) {
        met = 0;
        used += (size_t)snprintf(missed, sizeof missed, "no output token");
    }
    for (int i = 0; i < N_OBJECTIVES; i++) {
        const struct objective *ob = &objectives[i];
        double limit = limit_of(o, ob);
        if (!(limit > 0))
            continue;
        const struct ks_hist *h = hists[ob->hist];
        double value = ob->q < 0 ? hist_mean(h) : hist_quantile(h, ob->q);
        double margin = (limit - value) / limit; // NaN when not measured
        snprintf(key, sizeof key, "slo_%s", ob->name);
        num(s, key, limit, "objective, seconds");
        snprintf(key, sizeof key, "slo_margin_%s", ob->name);
        num(s, key, margin, "(objective - measured) / objective: >= 0 met, < 0 missed, null not measured");
        if (margin >= 0)
            continue;
        met = 0;
        char one[128];
        if (isnan(margin))
            snprintf(one, sizeof one, "%s (not measured)", ob->name);
        else
            snprintf(one, sizeof one, "%s (margin %.1f%%)", ob->name, 100 * margin);
        if (used < sizeof missed)
            used += (size_t)snprintf(missed + used, sizeof missed - used, "%s%s", used ? ", " : "", one);
    }
    if (any) {
        s->err |= ks_json_set_bool(s->fig, "slo_met", met);
        s->err |= ks_json_set_str(s->notes, "slo_met",
                                  "every objective on the run's figures is measured and met, and the run produced "
                                  "a token");
        s->err |= ks_json_set_str(s->fig, "slo_missed", met ? "none" : missed);
        s->err |= ks_json_set_str(s->notes, "slo_missed", "the objectives missed, with their margins");
    }
    for (int i = 0; i < N_PER_REQUEST; i++) {
        double limit = limit_of(o, &per_request[i]);
        if (limit > 0) {
            snprintf(key, sizeof key, "slo_%s", per_request[i].name);
            num(s, key, limit, "per-request objective, seconds: goodput counts the requests that meet it");
        }
    }
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
    num(s, "request_throughput", ratio((double)r->finished, r->sim_time), "finished requests per simulated second");
    num(s, "output_throughput", ratio((double)r->tokens, r->sim_time), "output tokens per simulated second");
    num(s, "total_token_throughput", ratio((double)(r->prompt_tokens + r->tokens), r->sim_time),
        "prompt tokens (of the requests past their first token) and output tokens per simulated second");
    if (any_set(&sc->slo, per_request, N_PER_REQUEST))
        num(s, "goodput", ratio((double)r->good, r->sim_time),
            "finished requests per simulated second that met every per-request objective (slo.ttft, tpot, e2el)");
    latency(s, "ttft", r->ttft, "arrival to first token, each request that produced one");
    latency(s, "tpot", r->tpot,
            "per finished request of two tokens or more, (finish - first token) / (output tokens - 1)");
    latency(s, "itl", r->itl, "between consecutive output tokens of a request, every gap");
    latency(s, "e2el", r->e2el, "arrival to last token, each finished request");
    double acc = (double)c->accesses;
    num(s, "block_accesses", acc,
        "block accesses the cache managers handled (the selected blocks of each request and layer), all GPUs");
    num(s, "hit_rate_l1", ratio((double)c->found[KS_L1], acc), "block accesses that found the block in L1");
    num(s, "hit_rate_l2", ratio((double)c->found[KS_L2], acc), "block accesses that found it in L2");
    num(s, "hit_rate_l3", ratio((double)c->found[KS_L3], acc), "block accesses that found it in L3");
    num(s, "accesses_aggregated", (double)c->aggregated,
        "block accesses the cache manager accounted in aggregate, all GPUs (cache.accounting; the figures are the same)");
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
    num(s, "steps_followed", (double)r->steps_followed,
        "decode steps followers took from a sampled GPU's shape, all GPUs (detail.gpus; the others ran in full)");
    num(s, "host_fraction", ratio(r->host_time, r->host_time + r->stall + r->busy),
        "decode GPU time spent on host costs (scheduling, table rebuilds)");
    num(s, "prefill_seconds", r->prefill_time, "seconds of prefill compute, all GPUs (or the prefill pool)");
    num(s, "kv_sent_bytes", (double)r->kv_sent, "prompt KV bytes the prefill pool sent (disaggregated)");
    num(s, "copy_bandwidth", ratio((double)r->copy_bytes, r->copy_seconds),
        "bytes/s a migration batch achieved while it ran (bytes over lane time, all batches)");
    num(s, "sat_out", (double)r->sat_out,
        "decode steps requests sat out, producing no token, while their cold region warmed up (cache.cold_share)");
    num(s, "retracted", (double)r->retracted,
        "requests retracted when their outputs outgrew the reservations (scheduler.reserve = estimate); "
        "each recomputes its context when readmitted");
    num(s, "backup_bytes", r->backup_bytes,
        "new KV bytes copied to the host as they were written (cache.organisation = per_request), all GPUs");
    num(s, "weight_read_bytes", r->weight_read_bytes,
        "weight bytes decode steps read, all GPUs (dense weights, and the experts their tokens used)");
    num(s, "index_read_bytes", r->index_read_bytes, "index-key bytes decode steps scanned (model.indexer), all GPUs");
    num(s, "decode_flops", r->decode_flops,
        "flops of decode steps, all GPUs: weights, output head, attention over the selection, indexer");
    num(s, "compute_bound_fraction", ratio(r->compute_bound_time, r->busy),
        "busy GPU time in fused iterations (prefill or decode) whose compute outlasted their memory traffic");
    num(s, "comm_fraction", ratio(r->comm_time, r->stall + r->busy),
        "GPU time in collectives, over NVLink and between nodes (parallel.tp > 1, an expert group over nodes); "
        "with two-batch overlap their whole time, hidden or not");
    num(s, "draft_fraction", ratio(r->draft_time, r->stall + r->busy),
        "GPU time the draft model's passes took (speculative decoding)");
    num(s, "sync_fraction", ratio(r->sync_time, r->sync_time + r->host_time + r->stall + r->busy),
        "decode GPU time spent waiting for the other attention ranks of the expert group (parallel.ranks = "
        "lockstep): at an iteration's start and at MoE layers");
    slo_verdict(s, sc, r);
    num(s, "wall_s", r->wall_s, "wall-clock seconds the simulation took");
}

// /summary: one attribute per figure; /summary_notes: its note, where it has one.
static int write_summary(struct ks_results *h, const struct ks_run_summary *s)
{
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
        const char *note = json_string_value(json_object_get(s->notes, key));
        if (st == KS_OK && note)
            st = ks_results_attr_str(h, "/summary_notes", key, note);
    }
    return st;
}

static int scenario_attr(const struct ks_scenario_item *it, void *ud)
{
    return ks_results_attr_str(ud, "/scenario", it->path, it->text);
}

int ks_run_write(const char *path, const struct ks_run_summary *s, const struct ks_scenario *sc,
                 const struct ks_run_result *r, char *err, size_t len)
{
    struct ks_results *h = ks_results_open(path, err, len);
    if (!h)
        return KS_EIO;
    int st = write_summary(h, s);
    if (st == KS_OK && sc)
        st = ks_scenario_foreach(sc, scenario_attr, h);
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

// ---- reading a summary back ---------------------------------------------------

// Whether the root of f links `name`, found by listing the root by index.
// NOTE: a lookup by name of a name the file lacks would take a path through
// the root's B-tree that h5read's probe child never took on this file (it
// looks up the names it lists, and a fixed few others), so an older file's
// missing group is never looked up.
static int has_group(hid_t f, const char *name)
{
    H5G_info_t gi;
    if (H5Gget_info(f, &gi) < 0)
        return 0;
    for (hsize_t i = 0; i < gi.nlinks; i++) {
        char link[64];
        ssize_t n = H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, link, sizeof link, H5P_DEFAULT);
        if (n > 0 && (size_t)n < sizeof link && strcmp(link, name) == 0)
            return 1;
    }
    return 0;
}

struct attr_reader {
    json_t *into;
    int numbers; // 1: numbers as figures; 0: strings only (notes, the scenario)
    int nomem;
};

// A JSON string of text; bytes that are not UTF-8 become '?'.
static json_t *text_value(char *text)
{
    json_t *v = json_string(text);
    if (v)
        return v;
    for (char *c = text; *c; c++)
        if ((unsigned char)*c >= 0x80)
            *c = '?';
    return json_string(text);
}

// One attribute into r->into: a string, an integer (the seed, a verdict) or a
// number (ks_json_num: whole numbers as integers, NaN as null, as
// ks_run_summarise made them); "(unreadable)" when it is none of them, so
// that one odd attribute does not hide the rest.
static herr_t read_attr(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    (void)info;
    struct attr_reader *r = ud;
    char text[4096], why[256];
    int64_t i = 0;
    double d = 0;
    json_t *v;
    if (ks_h5read_attr_str(loc, name, text, sizeof text, why, sizeof why) == KS_OK)
        v = text_value(text);
    else if (r->numbers && ks_h5read_attr_int(loc, name, &i, why, sizeof why) == KS_OK)
        v = json_integer((json_int_t)i);
    else if (r->numbers && ks_h5read_attr_num(loc, name, &d, why, sizeof why) == KS_OK)
        v = ks_json_num(d);
    else
        v = json_string("(unreadable)");
    if (!v || json_object_set_new(r->into, name, v) != 0)
        r->nomem = 1;
    return r->nomem ? -1 : 0;
}

// Every attribute of group `name` of f, when f has it, into `into`.
static int read_group(hid_t f, const char *name, json_t *into, int numbers)
{
    struct attr_reader r = {.into = into, .numbers = numbers};
    int there = 0;
    H5E_BEGIN_TRY
    {
        there = has_group(f, name);
        hid_t g = there ? H5Gopen2(f, name, H5P_DEFAULT) : -1;
        if (g >= 0) {
            hsize_t idx = 0;
            H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, read_attr, &r);
            H5Gclose(g);
        }
    }
    H5E_END_TRY;
    return r.nomem ? KS_ENOMEM : there ? KS_OK : 1;
}

int ks_run_read_summary(hid_t f, struct ks_run_summary *s, json_t **scenario, char *why, size_t len)
{
    int st = read_group(f, "summary", s->fig, 1);
    if (st >= 0)
        st = read_group(f, "summary_notes", s->notes, 0);
    if (st >= 0 && scenario) {
        *scenario = json_object();
        st = *scenario ? read_group(f, "scenario", *scenario, 0) : KS_ENOMEM;
        if (st != KS_OK) { // absent (1) or out of memory
            json_decref(*scenario);
            *scenario = NULL;
        }
    }
    if (st < 0) {
        snprintf(why, len, "out of memory reading the summary");
        return st;
    }
    return KS_OK;
}

// ---- what each key is ---------------------------------------------------------

const char *const ks_run_groups[] = {"load",    "latency",    "objectives", "cache", "migration",
                                     "compute", "simulation", "other",      NULL};

// Every key ks_run_summarise makes, by group, in the order a report shows
// them within it; NAME* matches every key that begins with NAME, and the
// first row that matches wins (slo_margin_* before slo_*). tests/study/
// test_runfile.c fails when a key ks_run_summarise makes falls to "other".
static const struct key_row {
    const char *pattern, *group;
    enum ks_run_unit unit;
} key_rows[] = {
    {"requests_*", "load", KS_RUN_UNIT_COUNT},
    {"tokens", "load", KS_RUN_UNIT_COUNT},
    {"request_throughput", "load", KS_RUN_UNIT_REQUESTS_S},
    {"output_throughput", "load", KS_RUN_UNIT_TOKENS_S},
    {"total_token_throughput", "load", KS_RUN_UNIT_TOKENS_S},
    {"goodput", "load", KS_RUN_UNIT_REQUESTS_S},
    {"steps", "load", KS_RUN_UNIT_COUNT},
    {"peak_batch", "load", KS_RUN_UNIT_COUNT},
    {"retracted", "load", KS_RUN_UNIT_COUNT},
    {"sat_out", "load", KS_RUN_UNIT_COUNT},
    {"truncated", "load", KS_RUN_UNIT_YESNO},
    {"ttft_*", "latency", KS_RUN_UNIT_MS},
    {"tpot_*", "latency", KS_RUN_UNIT_MS},
    {"itl_*", "latency", KS_RUN_UNIT_MS},
    {"e2el_*", "latency", KS_RUN_UNIT_MS},
    {"slo_met", "objectives", KS_RUN_UNIT_YESNO},
    {"slo_missed", "objectives", KS_RUN_UNIT_TEXT},
    {"slo_margin_*", "objectives", KS_RUN_UNIT_PERCENT},
    {"slo_*", "objectives", KS_RUN_UNIT_MS}, // the objectives, seconds
    {"block_accesses", "cache", KS_RUN_UNIT_COUNT},
    {"hit_rate_*", "cache", KS_RUN_UNIT_PERCENT},
    {"accesses_aggregated", "cache", KS_RUN_UNIT_COUNT},
    {"prefetch_accuracy", "cache", KS_RUN_UNIT_PERCENT},
    {"misses_unplanned", "cache", KS_RUN_UNIT_COUNT},
    {"outside_reads", "cache", KS_RUN_UNIT_COUNT},
    {"table_rebuilds", "cache", KS_RUN_UNIT_COUNT},
    {"steps_followed", "load", KS_RUN_UNIT_COUNT},
    {"migrated_bytes_*", "migration", KS_RUN_UNIT_BYTES},
    {"copy_bandwidth", "migration", KS_RUN_UNIT_BYTES_S},
    {"backup_bytes", "migration", KS_RUN_UNIT_BYTES},
    {"kv_sent_bytes", "migration", KS_RUN_UNIT_BYTES},
    {"stall_fraction", "migration", KS_RUN_UNIT_PERCENT},
    {"weight_read_bytes", "compute", KS_RUN_UNIT_BYTES},
    {"index_read_bytes", "compute", KS_RUN_UNIT_BYTES},
    {"decode_flops", "compute", KS_RUN_UNIT_FLOP},
    {"compute_bound_fraction", "compute", KS_RUN_UNIT_PERCENT},
    {"comm_fraction", "compute", KS_RUN_UNIT_PERCENT},
    {"draft_fraction", "compute", KS_RUN_UNIT_PERCENT},
    {"sync_fraction", "compute", KS_RUN_UNIT_PERCENT},
    {"host_fraction", "compute", KS_RUN_UNIT_PERCENT},
    {"prefill_seconds", "compute", KS_RUN_UNIT_S},
    {"name", "simulation", KS_RUN_UNIT_TEXT},
    {"seed", "simulation", KS_RUN_UNIT_ID},
    {"sim_time", "simulation", KS_RUN_UNIT_S},
    {"wall_s", "simulation", KS_RUN_UNIT_S},
};
enum { N_KEY_ROWS = sizeof key_rows / sizeof key_rows[0] };

static int matches(const char *pattern, const char *key)
{
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*')
        return strncmp(pattern, key, n - 1) == 0;
    return strcmp(pattern, key) == 0;
}

struct ks_run_key_kind ks_run_key_kind(const char *key)
{
    for (int i = 0; i < N_KEY_ROWS; i++)
        if (matches(key_rows[i].pattern, key))
            return (struct ks_run_key_kind){key_rows[i].group, key_rows[i].unit, i};
    return (struct ks_run_key_kind){"other", KS_RUN_UNIT_TEXT, N_KEY_ROWS};
}

// x with three significant digits ("7.45", "14.1", "50"), whole from 1000
// up ("9589", never "9.59e+03").
static void digits3(char *buf, size_t len, double x)
{
    snprintf(buf, len, fabs(x) >= 1000 ? "%.0f" : "%.3g", x);
}

// x in the largest of G, M, k (decimal) that keeps it at 1 or more, GB at most.
static void scaled(char *buf, size_t len, double x, const char *unit)
{
    static const struct {
        double f;
        const char *p;
    } scale[] = {{1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (size_t i = 0; i < sizeof scale / sizeof scale[0]; i++)
        if (fabs(x) >= scale[i].f) {
            char d[64];
            digits3(d, sizeof d, x / scale[i].f);
            snprintf(buf, len, "%s %s%s", d, scale[i].p, unit);
            return;
        }
    snprintf(buf, len, "%.0f %s", x, unit);
}

void ks_run_format(const char *key, const json_t *v, char *buf, size_t len)
{
    struct ks_run_key_kind k = ks_run_key_kind(key);
    char d[64];
    double x = json_is_number(v) ? json_number_value(v) : json_is_boolean(v) ? json_is_true(v) : NAN;
    if (!v)
        snprintf(buf, len, "%s", "");
    else if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (isnan(x)) // null: not measured
        snprintf(buf, len, "not measured");
    else if (json_is_integer(v) && (k.unit == KS_RUN_UNIT_ID || k.unit == KS_RUN_UNIT_COUNT))
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        switch (k.unit) {
        case KS_RUN_UNIT_YESNO: snprintf(buf, len, "%s", x != 0 ? "yes" : "no"); break;
        case KS_RUN_UNIT_MS: digits3(d, sizeof d, x * 1e3), snprintf(buf, len, "%s ms", d); break;
        case KS_RUN_UNIT_S: digits3(d, sizeof d, x), snprintf(buf, len, "%s s", d); break;
        case KS_RUN_UNIT_TOKENS_S: digits3(d, sizeof d, x), snprintf(buf, len, "%s tokens/s", d); break;
        case KS_RUN_UNIT_REQUESTS_S: digits3(d, sizeof d, x), snprintf(buf, len, "%s requests/s", d); break;
        case KS_RUN_UNIT_PERCENT: digits3(d, sizeof d, x * 100), snprintf(buf, len, "%s%%", d); break;
        case KS_RUN_UNIT_BYTES: scaled(buf, len, x, "B"); break;
        case KS_RUN_UNIT_BYTES_S: scaled(buf, len, x, "B/s"); break;
        case KS_RUN_UNIT_FLOP: digits3(d, sizeof d, x / 1e12), snprintf(buf, len, "%s TFLOP", d); break;
        case KS_RUN_UNIT_COUNT: snprintf(buf, len, x == floor(x) && fabs(x) < 1e18 ? "%.0f" : "%.6g", x); break;
        default: snprintf(buf, len, "%.6g", x); break;
        }
}

// ---- what bounded a run ---------------------------------------------------------

// A figure as a number; NaN when absent, null or not a number.
static double fig_num(const json_t *fig, const char *key)
{
    const json_t *v = json_object_get(fig, key);
    return json_is_number(v) ? json_number_value(v) : json_is_boolean(v) ? json_is_true(v) : NAN;
}

// The rule, from the summary figures alone; the first that holds decides:
//   stall_fraction >= 0.2: a fifth of the GPU time or more went to waiting
//     for blocks from the lower tiers (over the host link);
//   compute_bound_fraction >= 0.5: most busy time was in iterations whose
//     compute outlasted their memory traffic;
//   comm_fraction >= 0.3: collectives over NVLink took 30% or more;
//   host_fraction >= 0.3: host costs (scheduling, table rebuilds) did;
//   prefill ran on the decode GPUs (kv_sent_bytes is 0: no prefill pool) and
//     prefill_seconds is half or more of prefill_seconds + steps x itl_mean
//     (decode GPU time, estimated as a step per gap between two tokens);
//   otherwise HBM bandwidth: each decode step streams the weights and the
//     selected KV from HBM (memory-bound decode, the usual case).
// HBM capacity is named as well when it held requests back: a block found no
// page (misses_unplanned > 0), requests were retracted, or more than 5% of
// the requests that arrived were never admitted. A figure a file lacks (an
// older version) is NaN and never holds.
struct ks_run_limit ks_run_bound(const json_t *fig)
{
    struct ks_run_limit l = {KS_BOUND_HBM_BANDWIDTH, 0};
    double prefill = fig_num(fig, "prefill_seconds"), gap = fig_num(fig, "itl_mean");
    double decode = fig_num(fig, "steps") * (isnan(gap) ? fig_num(fig, "tpot_mean") : gap);
    if (fig_num(fig, "stall_fraction") >= 0.2)
        l.bound = KS_BOUND_HOST_LINK;
    else if (fig_num(fig, "compute_bound_fraction") >= 0.5)
        l.bound = KS_BOUND_COMPUTE;
    else if (fig_num(fig, "comm_fraction") >= 0.3)
        l.bound = KS_BOUND_COLLECTIVES;
    else if (fig_num(fig, "host_fraction") >= 0.3)
        l.bound = KS_BOUND_HOST;
    else if (!(fig_num(fig, "kv_sent_bytes") > 0) && prefill > 0 && prefill >= 0.5 * (prefill + decode))
        l.bound = KS_BOUND_PREFILL;
    double arrived = fig_num(fig, "requests_arrived"), admitted = fig_num(fig, "requests_admitted");
    l.capacity = fig_num(fig, "misses_unplanned") > 0 || fig_num(fig, "retracted") > 0 ||
                 arrived - admitted > 0.05 * arrived;
    return l;
}

const char *ks_run_bound_text(enum ks_run_bound b)
{
    switch (b) {
    case KS_BOUND_HOST_LINK: return "waiting for blocks from lower tiers (host link)";
    case KS_BOUND_COMPUTE: return "compute";
    case KS_BOUND_COLLECTIVES: return "collectives over NVLink";
    case KS_BOUND_HOST: return "host costs (scheduling, table rebuilds)";
    case KS_BOUND_PREFILL: return "prefill on the decode GPUs";
    case KS_BOUND_HBM_BANDWIDTH: return "HBM bandwidth (memory-bound decode)";
    }
    return "?";
}
