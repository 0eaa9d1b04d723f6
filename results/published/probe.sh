# results/published/probe.sh - sourced by concurrency.sh, contexts.sh,
# qwen_contexts.sh and prefetch.sh: the probes that size a run to saturation,
# the runs, and readers of their figures. They use the caller's $ks (kvstrata)
# and $tmp (a scratch folder), and $ranks (attention ranks, 8 unless the
# caller sets it); ARGS are `run` arguments (--set ...).
#
# concurrency.sh and contexts.sh measure steady decode after the ramp, which
# needs a batch that keeps its size: they run with whole outputs reserved
# ($full). With SGLang's estimated reservations (glm_baseline.lua's) the
# batch admitted first shrinks as outputs grow, and retracted requests are
# recomputed: admission.sh measures that over whole request lifetimes.
full=(--set scheduler.reserve=full)
ranks=${ranks:-8}

# probe_prefill SCENARIO ARGS...: seconds one attention rank takes to
# prefill one prompt (one one-token request per rank)
probe_prefill() {
    local sc=$1
    shift
    "$ks" run "results/published/$sc" --set workload.arrival.concurrency="$ranks" --set workload.requests="$ranks" \
        --set workload.output_tokens=1 --set duration=600s "${full[@]}" "$@" -o "$tmp/pre.h5" --json 2> "$tmp/pre.err" |
        jq -r .sim_time || { cat "$tmp/pre.err" >&2; exit 1; }
    rm -f "$tmp/pre.h5"
}

# probe_capacity SCENARIO ARGS...: requests an attention rank admits at once
# (1 s at 480 clients)
probe_capacity() {
    local sc=$1
    shift
    "$ks" run "results/published/$sc" --set workload.arrival.concurrency=480 --set duration=1s "${full[@]}" "$@" \
        -o "$tmp/cap.h5" --json 2> "$tmp/cap.err" | jq -r --argjson r "$ranks" '.requests_admitted / $r | floor' ||
        { cat "$tmp/cap.err" >&2; exit 1; }
    rm -f "$tmp/cap.h5"
}

# saturated_duration REQUESTS PREFILL: how long a run lasts for a rank to
# prefill REQUESTS prompts of PREFILL seconds each (fused iterations of two
# prompts beside the others' decode step: 1.3 x their prefill) and decode 8 s
# more, before its first requests finish and new prompts are prefilled
saturated_duration() {
    awk -v n="$1" -v p="$2" 'BEGIN { printf "%.3fs", 1.3 * n * p + 8 }'
}

# saturated_steady NAME SCENARIO ARGS...: SCENARIO's steady decode throughput
# at saturation: on every rank the requests one admits at once
# (probe_capacity), for saturated_duration; steady.py's figures in
# $tmp/NAME.steady
saturated_steady() {
    local name=$1 sc=$2 cap dur
    shift 2
    cap=$(probe_capacity "$sc" "$@")
    dur=$(saturated_duration "$cap" "$(probe_prefill "$sc" "$@")")
    echo "$name: $cap requests per rank, $dur simulated" >&2
    "$ks" run "results/published/$sc" "${full[@]}" "$@" --set "workload.arrival.concurrency=$((cap * ranks))" \
        --set "duration=$dur" -o "$tmp/$name.h5" --json > "$tmp/$name.json" 2> "$tmp/$name.err" ||
        { cat "$tmp/$name.err" >&2; exit 1; }
    /usr/bin/python3 results/published/steady.py "$tmp/$name.h5" > "$tmp/$name.steady"
    rm -f "$tmp/$name.h5"
}

# steady_point NAME SCENARIO CONCURRENCY PREFILL CAPACITY ARGS...: SCENARIO
# at CONCURRENCY clients, lasting until a rank has prefilled the requests it
# admits (CONCURRENCY / ranks, at most CAPACITY, of PREFILL seconds each) and
# decoded 8 s more (saturated_duration); $tmp/NAME.json and steady.py's
# figures in $tmp/NAME.steady
steady_point() {
    local name=$1 sc=$2 c=$3 pre=$4 cap=$5
    shift 5
    local per=$(((c + ranks - 1) / ranks)) dur
    [ "$per" -gt "$cap" ] && per=$cap
    dur=$(saturated_duration "$per" "$pre")
    echo "$name ($dur simulated)" >&2
    "$ks" run "results/published/$sc" --set "workload.arrival.concurrency=$c" --set "duration=$dur" "${full[@]}" "$@" \
        -o "$tmp/$name.h5" --json > "$tmp/$name.json" 2> "$tmp/$name.err" || { cat "$tmp/$name.err" >&2; exit 1; }
    /usr/bin/python3 results/published/steady.py "$tmp/$name.h5" > "$tmp/$name.steady"
    rm -f "$tmp/$name.h5"
}

# field NAME KEY: a figure of the run's summary ($tmp/NAME.json)
field() { jq -r ".$2" "$tmp/$1.json"; }
# steady NAME FIELD: a figure of $tmp/NAME.steady (1 tokens/s, 2 batch, 3 step s)
steady() { awk -v i="$2" '{ print $i }' "$tmp/$1.steady"; }
