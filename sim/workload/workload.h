// workload.h - the request stream of a scenario, deterministic given its seed.
//
// A workload turns workload.* of a scenario into requests, one at a time, in
// arrival order: ids 0, 1, 2, ... with non-decreasing arrival times. The
// stream depends on the scenario and its seed only; each random choice draws
// from its own generator (arrivals, prompt lengths, output lengths, prefixes),
// so changing one of them leaves the others' draws as they were.
//
// Arrivals:
//   poisson: exponential gaps with workload.arrival.rate, from time 0 (the
//            first request arrives after one gap);
//   trace  : the arrived_at column of a CSV trace (header arrived_at,
//            num_prefill_tokens, num_decode_tokens, in any order, extra
//            columns ignored), times as in the file, non-decreasing;
//   closed : every arrival is 0: the engine keeps workload.arrival.concurrency
//            requests in flight and releases the next one each time a slot
//            frees, in the order this stream gives.
// The stream ends after workload.requests requests, or at the end of the
// trace file; poisson and closed with requests = 0 never end (the engine
// stops at the scenario's duration).
//
// Lengths: prompt and output counts are drawn from their distributions,
// rounded, clamped to the distribution's [min, max] (trace: [min, max] when
// given, else [min, max_context]), then to model.max_context in total:
// prompt + output <= max_context, cutting the output first (down to 1 token)
// and then the prompt. Every request has prompt >= 1 and output >= 1.
// A trace distribution reads one count per line (blank lines skipped); when
// its first line holds a comma it is a CSV with a header instead, and
// prompt_tokens reads its num_prefill_tokens column, output_tokens its
// num_decode_tokens column. Counts are whole numbers >= 0, cycled in file
// order.
// With trace arrivals, prompt and output lengths come from the arrival
// trace's num_prefill_tokens / num_decode_tokens columns, the row of each
// arrival, unless the scenario file sets prompt_tokens / output_tokens
// (then those distributions win, each on its own). A scenario built in C
// (origin == NULL) is taken as setting both. Later turns of sessions draw
// from those columns in file order, cycled, from the first row.
//
// Shared prefix: with shared_prefix.tokens > 0, a session carries a prefix
// with probability shared_prefix.fraction, of a group drawn uniformly from
// 0..groups-1; its prefix_tokens is min(shared_prefix.tokens, prompt): the
// prompt includes the prefix, and a prompt shorter than the prefix shares
// only its first prompt tokens.
//
// Sessions: each fresh arrival opens a session of workload.sessions.turns
// turns. Turn k > 0 keeps the session's prefix group; its prompt is the
// previous turn's prompt + output (the conversation history) plus a new user
// message drawn from prompt_tokens (clamped to that distribution), and its
// output is drawn afresh; the max_context clamp then applies (a long
// conversation is cut, as a server truncating old history would). The
// prompt of a later turn can exceed prompt_tokens.max. Its arrival is the
// previous turn's arrival + think_time, a lower bound only: the engine may
// hold a turn until its previous turn (prev_id) finished, plus think_time.
// With closed arrivals, sessions come in waves of `concurrency`: turn 0 of
// sessions 0..c-1, then their turn 1, ..., then the next c sessions.
#ifndef KS_WORKLOAD_H
#define KS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

#define KS_WORKLOAD_NO_ID UINT64_MAX // prev_id of a session's first turn

struct ks_request_spec {
    uint64_t id;             // 0, 1, ... in arrival order
    double arrival;          // seconds; sessions' later turns: a lower bound (see above)
    uint32_t prompt_tokens;  // tokens, >= 1, includes prefix_tokens and history_tokens
    uint32_t output_tokens;  // tokens to decode, >= 1; prompt + output <= model.max_context
    uint32_t prefix_group;   // shared prefix group, or KS_NONE
    uint32_t prefix_tokens;  // tokens of the group's prefix at the prompt's start; 0 when no group
    uint64_t session;        // 0, 1, ... in the order sessions open
    uint32_t turn;           // 0 .. sessions.turns - 1
    uint32_t history_tokens; // tokens repeating the previous turn's prompt + output (0 for turn 0)
    uint64_t prev_id;        // id of the session's previous turn, or KS_WORKLOAD_NO_ID
};

struct ks_workload;

// Builds the workload of s, reading every trace file now; s is not kept
// (what is needed is copied). Returns the workload (freed with
// ks_workload_free), or NULL with the reason in err: a trace file that
// cannot be read, is empty, or holds a bad value (file, line and value), or
// no memory.
struct ks_workload *ks_workload_new(const struct ks_scenario *s, char *err, size_t len);

// Frees w; NULL is a no-op.
void ks_workload_free(struct ks_workload *w);

// Fills *out with the next request and returns 1; returns 0 when the stream
// is exhausted (and keeps returning 0), or KS_ENOMEM (w is then only fit
// for ks_workload_free).
int ks_workload_next(struct ks_workload *w, struct ks_request_spec *out);

#endif
