#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS | --runs [N]] - builds the libFuzzer targets
# (tests/fuzz/fuzz.cmake) with clang in their own tree and fuzzes each one,
# single process, with -seed=1:
#   SECONDS    for SECONDS each (default 60): for long runs by hand. With a
#              time limit, how far a run gets depends on the machine's speed
#              and load, so two runs explore differently.
#   --runs     for a fixed number of executions each (-runs, no time limit),
#              the counts below (about 60 s each on a 2-core machine): what
#              CI runs. The inputs tried are then the same from run to run,
#              up to what the targets themselves vary: Lua seeds its string
#              hash from the time and addresses, so the order of a scenario
#              table's keys, and with it fuzz_scenario's path, can still
#              differ; the HDF5 targets repeat.
#   --runs N   for N executions each.
#
# Installs clang and its libFuzzer runtime when missing (apt-get, as tests/run.sh
# does; tests/run.sh installs the rest), configures KS_BUILD (default
# build-fuzz) with -DKS_FUZZ=ON, builds the three targets, and runs each with
# -seed=1 on a fresh copy of its seed corpus, gathered from tests/ and
# scenarios/ (the repository's files are never written to). Exits non-zero when
# a target crashes, leaks, times out or runs out of memory; its log and the
# input that did it are kept and named. Prints each target's executions and
# coverage at the end.
# Environment: KS_BUILD=DIR, KS_JOBS=N (build jobs), KS_FUZZ_KEEP=DIR (keep the
# corpora, logs and artifacts in DIR instead of a temporary folder removed on success).
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: tests/fuzz/run.sh [SECONDS | --runs [N]]"
build=${KS_BUILD:-build-fuzz}
# --runs: each target's executions, about 60 s each on a 2-core Debian 12
# machine (measured with tests/fuzz/run.sh 60; ASan and UBSan included)
runs_scenario=70000
runs_trace=4500
runs_result=4500
secs=60
runs=
case "${1:-}" in
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    --runs)
        runs=default
        if [ $# -ge 2 ]; then runs=$2; fi
        case "$runs" in '' | *[!0-9]*) [ "$runs" = default ] || { echo "$usage" >&2; exit 2; } ;; esac
        [ "$runs" != 0 ] || { echo "$usage" >&2; exit 2; }
        [ $# -le 2 ] || { echo "$usage" >&2; exit 2; } ;;
    '') [ $# -le 1 ] || { echo "$usage" >&2; exit 2; } ;;
    *[!0-9]*) echo "$usage" >&2; exit 2 ;;
    *) secs=$1; [ $# -le 1 ] || { echo "$usage" >&2; exit 2; } ;;
esac

bash tests/install.sh tests/fuzz/run.sh clang libclang-rt-14-dev

# tests/run.sh installs the other dependencies, configures and builds
targets="fuzz_scenario fuzz_trace fuzz_result"
KS_BUILD=$build KS_TEST=0 KS_TARGETS=$targets \
    KS_CMAKE_ARGS="-DCMAKE_C_COMPILER=clang -DKS_FUZZ=ON -DKS_TESTS=OFF -DKS_CUDA=OFF" bash tests/run.sh

work=${KS_FUZZ_KEEP:-$(mktemp -d)}
mkdir -p "$work"

# Seed corpora, copied: scenario files of every kind, each test's --set strings
# (a first line "--set", then PATH=VALUE: fuzz_scenario.c), the traces and results.
seed() { # seed TARGET FILES...
    local dir=$work/corpus/$1
    shift
    mkdir -p "$dir"
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr / _)"
    done
}
seed scenario tests/fixtures/scenarios/*.lua scenarios/*.lua scenarios/*/*.lua tests/fixtures/hostile/*.lua
n=0
while IFS= read -r s; do
    n=$((n + 1))
    printf -- '--set\n%s\n' "$s" > "$work/corpus/scenario/set_$n"
done < <(grep -rhoE -e "--set +'?[a-z_.]+=[^ )\"']*" tests | sed -E "s/^--set +'?//" | sort -u)
seed trace tests/fixtures/data/*.h5 tests/fixtures/hostile/trace_*.h5
rm -f "$work"/corpus/trace/*result*
seed result tests/fixtures/data/*.h5 tests/fixtures/hostile/result_*.h5
rm -f "$work"/corpus/result/*trace*

# HDF5's own leaks on damaged files are not ours (lsan.supp says which)
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# NOTE: symbolize=0: every HDF5 crash the probe child contains would start
# llvm-symbolizer (a second or so); a failure's input is replayed symbolized below
export ASAN_OPTIONS="symbolize=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
status=0
for t in scenario trace result; do
    art=$work/artifacts/$t
    mkdir -p "$art"
    # fuzz_scenario: print() in a fuzzed scenario writes to stderr, so stderr is
    # closed (libFuzzer and the sanitizers keep their own copy). The HDF5
    # targets keep it: h5read.c's probe child sends its stderr to /dev/null.
    mask=0
    [ "$t" = scenario ] && mask=2
    if [ -n "$runs" ]; then
        n=$runs
        if [ "$n" = default ]; then
            case $t in scenario) n=$runs_scenario ;; trace) n=$runs_trace ;; result) n=$runs_result ;; esac
        fi
        # -reload=0: nothing else writes the corpus, and its rereading is timed
        limit=(-runs="$n" -reload=0)
        what="$n executions"
    else
        limit=(-max_total_time="$secs")
        what="${secs} s"
    fi
    echo "tests/fuzz/run.sh: fuzz_$t for $what on $(ls "$work/corpus/$t" | wc -l) seeds" >&2
    rc=0
    "$build/fuzz_$t" -seed=1 "${limit[@]}" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
        -close_fd_mask=$mask -artifact_prefix="$art/" "$work/corpus/$t" > "$work/$t.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "tests/fuzz/run.sh: fuzz_$t failed (exit $rc); log $work/$t.log, input(s) in $art:" >&2
        ls "$art" >&2
        # the input that failed the parent is the newest artifact
        last=$(ls -t "$art" | head -1)
        if [ -n "$last" ]; then
            echo "tests/fuzz/run.sh: replaying $art/$last:" >&2
            ASAN_OPTIONS=symbolize=1 "$build/fuzz_$t" -runs=1 "$art/$last" 2>&1 | grep -vE "^INFO:|^\*\*\*" | head -60 >&2 || true
        else
            tail -40 "$work/$t.log" >&2
        fi
    fi
done

echo
printf '%-14s %10s %8s %8s %8s %8s %7s  %s\n' target executions exec/s cov ft corpus seconds result
for t in scenario trace result; do
    log=$work/$t.log
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)
    speed=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log" | tail -1)
    took=$(sed -nE 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/p' "$log" | tail -1)
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$last")
    corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<< "$last")
    # an artifact without a failure: HDF5 crashed in h5read.c's probe child,
    # which refused the file as it should (README: Build and test, fuzzing)
    contained=$(find "$work/artifacts/$t" -type f | wc -l)
    res=ok
    grep -qE '^Done [0-9]+ runs' "$log" || res=FAILED
    [ "$res" = ok ] && [ "$contained" -gt 0 ] && res="ok ($contained crash(es) contained in the probe child)"
    printf '%-14s %10s %8s %8s %8s %8s %7s  %s\n' "fuzz_$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}" "${took:-?}" "$res"
done
if [ "$status" -eq 0 ] && [ -z "${KS_FUZZ_KEEP:-}" ]; then
    rm -rf "$work"
else
    echo "tests/fuzz/run.sh: corpora, logs and artifacts in $work" >&2
fi
exit "$status"
