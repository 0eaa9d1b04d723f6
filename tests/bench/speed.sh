#!/usr/bin/env bash
# tests/bench/speed.sh [--base REV | --base-bin KVSTRATA] [--quick] [--cases LIST] [--reps N]
#                      [--new KVSTRATA] [--threads N]
#
# The simulator's speed, before and after, on one machine in one run (issue
# 19). Builds the current tree into build/ (RelWithDebInfo when build/ is
# new; --new KVSTRATA uses that binary instead) and, with --base REV, builds
# REV in a temporary git worktree (--base-bin KVSTRATA: that binary is the
# base); then runs each case N times (--reps, default 3) with each
# binary, interleaved with the order turned each time (base, new, new, base,
# base, new, ...: on the VM the second of two runs in a row ran about 3%
# faster, 2026-12-07, README "followers in time"), keeps for each binary the
# repetition of median wall time, and prints one table: per case and binary
# the wall seconds (the command's own clock: the simulation, or bench cache's
# timed loop), the whole process's seconds, simulated seconds, wall seconds
# per simulated second, decode steps and block accesses per wall second, peak
# memory (RSS, /usr/bin/time -f %M) in MB and per simulated GPU (decode GPUs:
# nodes x gpus_per_node), bench cache's bytes per block, and the spread of
# the wall seconds over the repetitions ((max - min) / median); with --base,
# a third row per case: new / base for each figure, and in the spread column
# "apart" when the two binaries' ranges of wall seconds do not overlap,
# "overlap" when they do (then the ratio is within the machine's noise: more
# repetitions, or a quieter machine, may resolve it). Then one JSON line per
# case (`grep '^{'`), for a check to compare. --threads N runs the
# simulations (not bench cache) with `--threads N` (default: the binary's
# own default); `--threads 1` is how `kvstrata sweep` runs each point.
#
# Cases (--cases, comma-separated; default all; `cache` is both cache cases):
#   cluster     scenarios/cluster_64x8.lua, 512 GPUs, 10 s simulated;
#               --quick: 4 nodes (32 GPUs) at 1/16 of the arrival rate, 3 s
#   loaded      scenarios/cluster_64x8_loaded.lua, 512 GPUs x 33 requests of
#               32K tokens; --quick: 1 node (8 GPUs, 320 clients), 0.5 s
#   cluster_lod the cluster case at the levels of detail detail.gpus = 1/8 of
#               the GPUs and detail.layers = 4 (their error against full
#               detail: results/studies/detail.md)
#   loaded_lod  the loaded case at the same levels
#   cluster_nodes, loaded_nodes (not in the default list: a base older than
#               detail.nodes refuses them) the cluster and loaded cases as one
#               node standing for the 64 (detail.nodes=1, every GPU of it) at
#               detail.layers=4 (their error: README, "The simulator's speed");
#               the loaded one 2 s simulated (--quick: 0.5 s)
#   loaded_time (not in the default list: a base older than detail.follow
#               refuses it) the loaded case as 8 nodes standing for the 64,
#               the first one's GPUs in full and the others following them in
#               time (detail.nodes=8 detail.gpus=8 detail.follow=time), at
#               detail.layers=4, 2 s simulated (--quick: 0.5 s)
#   dense       scenarios/llama3_8b_h100.lua, 1000 requests of 2048+256 tokens;
#               --quick: 200 requests
#   hisparse    (not in the default list: a base older than the device
#               buffers refuses it) results/published/glm_hisparse.lua, the
#               published HiSparse run at 4K-token prompts (8 attention ranks,
#               264 clients, device buffers of one-token pages, DSA
#               selections) at detail.layers=6, admission.sh's first 40 s
#               (about 2,850 decode steps); --quick: 10 s (mostly the
#               prompts' prefill: a few hundred tokens decoded)
#   hs_one      (not in the default list, as hisparse)
#               results/published/hisparse_missrate.lua with one request:
#               one 32K-token request of GLM-5.1 decoding 256 tokens, DSA's
#               top-2048 of one-token blocks in each of 78 layers, a device
#               buffer of 4096 tokens a layer (table.md's hs_one); --quick:
#               64 tokens
#   ess         (not in the default list, as hisparse) results/published/ess.lua
#               at ess.sh's row 32k-128 (32 GPUs, 128 requests of 32K tokens
#               a rank, 4 GPUs sampled, 28 following), 12 s simulated: the
#               prompts' KV arrives, then 40 decode steps or so; the same
#               with --quick
#   cache_heat  bench cache --blocks 1000000 --topk 64 --policy heat
#   cache_lru   the same with --policy lru
# Without --quick the cluster cases take minutes (cluster) and hours (loaded);
# the full loaded case needs more than 24 GB of memory at full detail (it was
# killed at 24 GB on the development machine), loaded_lod about 3.2 GB.
# Exit: 0, 1 when a build or a run failed (the table shows what ran), 2 on
# a usage error.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit "${1:-2}"
}
fail() { echo "speed.sh: $*" >&2; exit 1; }

base_rev="" base_bin="" quick=0 cases="cluster,loaded,cluster_lod,loaded_lod,dense,cache" reps=3 new_bin="" threads=""
while [ $# -gt 0 ]; do
    case "$1" in
        --base) base_rev=${2:?--base needs a revision}; shift 2 ;;
        --quick) quick=1; shift ;;
        --cases) cases=${2:?--cases needs a list}; shift 2 ;;
        --reps) reps=${2:?--reps needs a number}; shift 2 ;;
        --new) new_bin=${2:?--new needs a binary}; shift 2 ;;
        --base-bin) base_bin=${2:?--base-bin needs a binary}; shift 2 ;;
        --threads) threads=${2:?--threads needs a number}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "speed.sh: unknown option '$1'" >&2; usage 2 ;;
    esac
done
[ -z "$base_rev" ] || [ -z "$base_bin" ] || { echo "speed.sh: --base and --base-bin exclude each other" >&2; exit 2; }
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "speed.sh: --reps must be a positive whole number" >&2; exit 2; }
[ -z "$threads" ] || [[ "$threads" =~ ^[1-9][0-9]*$ ]] ||
    { echo "speed.sh: --threads must be a positive whole number" >&2; exit 2; }
list=()
IFS=',' read -ra asked <<< "$cases"
for c in "${asked[@]}"; do
    case "$c" in
        cluster|loaded|cluster_lod|loaded_lod|cluster_nodes|loaded_nodes|loaded_time|dense|hisparse|hs_one|ess|cache_heat|cache_lru) list+=("$c") ;;
        cache) list+=(cache_heat cache_lru) ;;
        *) echo "speed.sh: unknown case '$c' (cluster, loaded, cluster_lod, loaded_lod, cluster_nodes, loaded_nodes, loaded_time, dense, hisparse, hs_one, ess, cache_heat, cache_lru, cache)" >&2; exit 2 ;;
    esac
done
[ ${#list[@]} -gt 0 ] || { echo "speed.sh: no case to run" >&2; exit 2; }
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing (Debian package time)"
command -v jq > /dev/null || fail "jq is missing"

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
jobs=$(nproc)
tmp=$(mktemp -d)
base_tree=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ -n "$base_tree" ]; then
        git -C "$root" worktree remove --force "$base_tree" > /dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# build_in SRC: configures SRC/build (RelWithDebInfo) when it is new and
# builds the simulator there; the build's output goes to $tmp/build.log.
build_in() {
    local src=$1
    if [ ! -f "$src/build/CMakeCache.txt" ]; then
        cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >> "$tmp/build.log" 2>&1 || return 1
    fi
    cmake --build "$src/build" -j"$jobs" --target kvstrata >> "$tmp/build.log" 2>&1
}
build_type() { sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$1/CMakeCache.txt" 2>/dev/null || true; }

if [ -n "$new_bin" ]; then
    [ -x "$new_bin" ] || fail "--new $new_bin is not an executable"
    new_desc="$new_bin"
else
    echo "speed.sh: building the current tree in build/" >&2
    build_in "$root" || { tail -n 20 "$tmp/build.log" >&2; fail "the build of the current tree failed"; }
    new_bin=$root/build/kvstrata
    new_desc="build/kvstrata, $(git describe --always --dirty 2>/dev/null || echo '?'), $(build_type build)"
fi
bins=(new)
if [ -n "$base_rev" ]; then
    sha=$(git rev-parse --verify --quiet "$base_rev^{commit}") || fail "--base $base_rev: no such commit"
    base_tree=$tmp/base
    echo "speed.sh: building $base_rev (${sha:0:12}) in a temporary worktree" >&2
    git worktree add --detach "$base_tree" "$sha" > /dev/null 2>&1 || fail "git worktree add $base_rev failed"
    build_in "$base_tree" || { tail -n 20 "$tmp/build.log" >&2; fail "the build of $base_rev failed"; }
    base_bin=$base_tree/build/kvstrata
    base_desc="$base_rev = ${sha:0:12}, $(build_type "$base_tree/build")"
    bins=(base new)
elif [ -n "$base_bin" ]; then
    [ -x "$base_bin" ] || fail "--base-bin $base_bin is not an executable"
    base_desc=$base_bin
    bins=(base new)
fi

# case_cmd CASE: sets kind (run or cache), args (the command after the binary)
# and what (one line saying what runs).
case_cmd() {
    local c=$1
    kind=run
    case "$c" in
        cluster_lod|loaded_lod)
            case_cmd "${c%_lod}"
            local g=64
            [ $quick = 1 ] && { [ "$c" = cluster_lod ] && g=4 || g=1; }
            args+=(--set "detail.gpus=$g" --set detail.layers=4)
            what="$what; detail.gpus=$g, detail.layers=4" ;;
        cluster_nodes|loaded_nodes)
            local d=
            args=(run scenarios/cluster_64x8.lua)
            if [ "$c" = loaded_nodes ]; then
                d=2s
                [ $quick = 1 ] && d=0.5s
                args=(run scenarios/cluster_64x8_loaded.lua --set duration=$d)
            fi
            args+=(--set detail.nodes=1 --set detail.layers=4)
            what="64 nodes x 8 GPUs as one node standing for the 64, detail.layers=4${d:+, $d simulated}" ;;
        loaded_time)
            local d=2s
            [ $quick = 1 ] && d=0.5s
            args=(run scenarios/cluster_64x8_loaded.lua --set duration=$d --set detail.nodes=8 --set detail.gpus=8
                --set detail.follow=time --set detail.layers=4)
            what="64 nodes x 8 GPUs as 8 nodes standing for the 64, node 0's GPUs in full, the others following in time, detail.layers=4, $d simulated" ;;
        cluster)
            args=(run scenarios/cluster_64x8.lua)
            if [ $quick = 1 ]; then
                args+=(--set platform.nodes=4 --set workload.arrival.rate=12.5 --set duration=3s)
                what="quick: 4 nodes x 8 GPUs, 12.5 requests/s (the full run's load per GPU), 3 s simulated"
            else
                what="full: 64 nodes x 8 GPUs, 10 s simulated"
            fi ;;
        loaded)
            args=(run scenarios/cluster_64x8_loaded.lua)
            if [ $quick = 1 ]; then
                args+=(--set platform.nodes=1 --set workload.arrival.concurrency=320 --set duration=0.5s)
                what="quick: 1 node x 8 GPUs, 320 clients (40 per GPU, 33 decoding), 0.5 s simulated"
            else
                what="full: 64 nodes x 8 GPUs, 20480 clients, 10 s simulated"
            fi ;;
        dense)
            local n=1000
            [ $quick = 1 ] && n=200
            args=(run scenarios/llama3_8b_h100.lua --set "workload.requests=$n" --set duration=1000s)
            what="$([ $quick = 1 ] && echo quick || echo full): $n requests of 2048+256 tokens on one H100" ;;
        hisparse)
            local d=40s
            [ $quick = 1 ] && d=10s
            args=(run results/published/glm_hisparse.lua --set model.max_context=172032
                --set workload.prompt_tokens=4096 --set workload.arrival.concurrency=264 --set duration=$d
                --set detail.layers=6)
            what="HiSparse on GLM-5.1, 8 ranks, 264 clients of 4K-token prompts, detail.layers=6, $d simulated" ;;
        hs_one)
            local n=257
            [ $quick = 1 ] && n=65
            args=(run results/published/hisparse_missrate.lua --set workload.requests=1
                --set workload.arrival.concurrency=1 --set "workload.output_tokens=$n")
            what="HiSparse's path: one 32K-token request of GLM-5.1, DSA's top-2048 tokens in 78 layers, $((n - 1)) decode steps" ;;
        ess)
            args=(run results/published/ess.lua --set workload.prompt_tokens=32768 --set model.max_context=172032
                --set scheduler.max_running_requests=128 --set cache.l1=31% --set workload.arrival.concurrency=4096
                --set prefill.gpus=4096 --set duration=12s --set detail.gpus=4)
            what="ESS's deployment of DeepSeek-V3.2, 32 GPUs, 128 requests of 32K tokens a rank, detail.gpus=4, 12 s simulated" ;;
        cache_heat|cache_lru)
            kind=cache
            args=(bench cache --blocks 1000000 --topk 64 --policy "${c#cache_}")
            what="bench cache, 1000000 blocks, top-64, ${c#cache_} (10000 steps)" ;;
    esac
}

# measure BIN OUT: runs the case once with BIN and writes its figures, as
# one JSON object, to OUT ({"failed": REASON} when the command failed).
measure() {
    local bin=$1 out=$2 st=0
    local cmd=("$bin" "${args[@]}")
    [ "$kind" = run ] && cmd+=(-o "$tmp/run.h5")
    [ "$kind" = run ] && [ -n "$threads" ] && cmd+=(--threads "$threads")
    /usr/bin/time -f '%e %M' -o "$tmp/time" "${cmd[@]}" --json > "$tmp/out.json" 2> "$tmp/err" || st=$?
    rm -f "$tmp/run.h5"
    if [ $st != 0 ]; then
        jq -cn --arg r "exit $st: $(tail -n 3 "$tmp/err" | tr '\n' ' ')" '{failed: $r}' > "$out"
        return 1
    fi
    read -r proc_s rss_kb < <(tail -n 1 "$tmp/time")
    # the figures of one command: wall_s its own clock; sim_s, gpus and
    # bytes_per_block null where they do not apply; accesses null where the
    # binary's summary has no block_accesses (older than the key)
    jq -c --arg kind "$kind" --argjson proc "$proc_s" --argjson kb "$rss_kb" --argjson gpus "$gpus" '
        def per(a; b): if a == null or b == null or b <= 0 then null else a / b end;
        (if $kind == "run" then
            {wall_s, sim_s: .sim_time, steps, accesses: .block_accesses, gpus: $gpus, bytes_per_block: null}
         else
            {wall_s, sim_s: null, steps, accesses, gpus: null, bytes_per_block}
         end) as $f
        | {wall_s: $f.wall_s, process_s: $proc, sim_s: $f.sim_s,
           wall_per_sim_s: per($f.wall_s; $f.sim_s),
           steps_per_s: per($f.steps; $f.wall_s), accesses_per_s: per($f.accesses; $f.wall_s),
           rss_mb: ($kb / 1024), rss_mb_per_gpu: per($kb / 1024; $f.gpus),
           bytes_per_block: $f.bytes_per_block,
           steps: $f.steps, accesses: $f.accesses, gpus: $f.gpus}' "$tmp/out.json" > "$out"
}

status=0
mode=$([ $quick = 1 ] && echo quick || echo full)
cpu=$("$new_bin" info --json 2> /dev/null | jq -r '.cpu // "unknown CPU"') || cpu="unknown CPU"
echo "kvstrata speed, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), $cpu, $jobs cores, median of $reps"
echo "  new:  $new_desc"
[ ${#bins[@]} = 2 ] && echo "  base: $base_desc"
for c in "${list[@]}"; do
    case_cmd "$c"
    shown="${args[*]}"
    [ "$kind" = run ] && [ -n "$threads" ] && shown+=" --threads $threads"
    echo "  $c: $shown ($what)"
    gpus=null
    if [ "$kind" = run ]; then
        gpus=$("$new_bin" scenario check "${args[@]:1}" --json 2> /dev/null |
               jq '.["platform.nodes"] * .["platform.gpus_per_node"]') || gpus=null
    fi
    for b in "${bins[@]}"; do : > "$tmp/$c.$b.reps"; done
    for r in $(seq "$reps"); do
        order=("${bins[@]}")
        [ $((r % 2)) = 0 ] && [ ${#bins[@]} = 2 ] && order=("${bins[1]}" "${bins[0]}")
        for b in "${order[@]}"; do
            bin=$new_bin
            [ "$b" = base ] && bin=$base_bin
            echo "speed.sh: $c, $b, $r/$reps" >&2
            if measure "$bin" "$tmp/one.json"; then
                cat "$tmp/one.json" >> "$tmp/$c.$b.reps"
            else
                echo "speed.sh: $c with $b failed: $(jq -r .failed "$tmp/one.json")" >&2
                cp "$tmp/one.json" "$tmp/$c.$b.failed"
                status=1
            fi
        done
    done
    # the repetition of median wall time (the lower one of an even count),
    # with the wall seconds' range over the repetitions and its spread:
    # (max - min) / median
    for b in "${bins[@]}"; do
        if [ -f "$tmp/$c.$b.failed" ]; then
            cp "$tmp/$c.$b.failed" "$tmp/$c.$b.json"
        else
            jq -cs '(map(.wall_s) | min) as $lo | (map(.wall_s) | max) as $hi
                | sort_by(.wall_s) | .[(length - 1) / 2 | floor]
                | . + {wall_min: $lo, wall_max: $hi,
                       spread: (if .wall_s > 0 then ($hi - $lo) / .wall_s else null end)}' \
                "$tmp/$c.$b.reps" > "$tmp/$c.$b.json"
        fi
    done
    new_json=$(cat "$tmp/$c.new.json")
    base_json=null
    [ ${#bins[@]} = 2 ] && base_json=$(cat "$tmp/$c.base.json")
    jq -cn --arg case "$c" --arg mode "$mode" --arg what "$what" --argjson reps "$reps" \
        --arg args "$shown" --arg new_desc "$new_desc" --arg base_desc "${base_desc:-}" \
        --argjson new "$new_json" --argjson base "$base_json" '
        {speed: 1, case: $case, mode: $mode, what: $what, command: $args, reps: $reps,
         binaries: {new: $new_desc, base: (if $base == null then null else $base_desc end)},
         new: $new, base: $base,
         apart: (if $base == null or $new.failed or $base.failed then null else
                 $new.wall_max < $base.wall_min or $new.wall_min > $base.wall_max end),
         ratio: (if $base == null or $new.failed or $base.failed then null else
                 ($new | with_entries(select(.key as $k
                     | ["steps", "accesses", "gpus", "wall_min", "wall_max", "spread"] | any(. == $k) | not)
                   | .value as $v | .key as $k
                   | .value = (if $v == null or $base[$k] == null or $base[$k] <= 0 then null
                               else $v / $base[$k] end))) end)}' >> "$tmp/lines"
done

# the table: one row per case and binary, and new / base
echo
jq -r '. as $l
    | (["base", "new"] | map(select($l[.] != null)) | map([$l.case, ., $l[.]])) +
      (if $l.ratio then [[$l.case, "new/base", ($l.ratio + {spread: (if $l.apart then "apart" else "overlap" end)})]]
       else [] end)
    | .[] | [.[0], .[1]] +
      (if .[2].failed then ["failed"] else
       [.[2] | .wall_s, .process_s, .sim_s, .wall_per_sim_s, .steps_per_s, .accesses_per_s, .rss_mb,
               .rss_mb_per_gpu, .bytes_per_block,
               (.spread | if type == "number" then "\(. * 100 | round)%" else . end)] end)
    | map(if . == null then "-" else tostring end) | @tsv' "$tmp/lines" |
awk -F'\t' '
    function fmt(v, ratio) {
        if (v == "-" || v == "failed" || v ~ /%$/ || v ~ /^[a-z]/) return v
        if (ratio) return sprintf("%.3f", v)
        if (v + 0 >= 1e6) return sprintf("%.3gM", v / 1e6)
        if (v + 0 >= 1e4) return sprintf("%.0f", v)
        return sprintf("%.4g", v)
    }
    BEGIN {
        printf "%-11s %-8s %9s %9s %9s %9s %9s %10s %9s %9s %8s %8s\n", "case", "binary", "wall_s", "process_s",
               "sim_s", "wall/sim", "steps/s", "accesses/s", "rss_MB", "MB/GPU", "B/block", "spread"
    }
    {
        ratio = $2 == "new/base"
        printf "%-11s %-8s", $1, $2
        if ($3 == "failed") { printf " failed\n"; next }
        for (i = 3; i <= 12; i++) printf(" %" (i == 8 ? 10 : i >= 11 ? 8 : 9) "s", fmt($i, ratio))
        printf "\n"
    }'
echo
cat "$tmp/lines"
exit $status
