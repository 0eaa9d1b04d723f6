#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS | --runs [N]] - builds the libFuzzer targets
# (tests/fuzz/fuzz.cmake) with clang in their own tree and fuzzes each one,
# single process, with -seed=1:
#   SECONDS    for SECONDS each (default 60): for long runs by hand. With a
#              time limit, how far a run gets depends on the machine's speed
#              and load, so two runs explore differently.
#   --runs     for a fixed number of executions each (-runs, no time limit),
#              the counts below (about 60 s each on a 2-core machine): what
#              CI runs. It also turns off what else varies (see "--runs:"
#              below), so that each target tries the same inputs and ends
#              with the same coverage and corpus on every run of the same
#              code, whatever the machine's speed.
#   --runs N   for N executions each.
#
# Installs clang and its libFuzzer runtime when missing (apt-get, as tests/run.sh
# does; tests/run.sh installs the rest), configures KS_BUILD (default
# build-fuzz) with -DKS_FUZZ=ON, builds the three targets, and runs each with
# -seed=1 on a fresh copy of its seed corpus, gathered from tests/ and
# scenarios/ (the repository's files are never written to). Exits non-zero when
# a target crashes, leaks, times out or runs out of memory; its log and the
# input that did it are kept and named. With --runs, a timeout on an input that
# runs well within the limit alone (the machine stalled) gets one second run. Prints each target's executions and
# coverage at the end.
# Environment: KS_BUILD=DIR, KS_JOBS=N (build jobs), KS_FUZZ_KEEP=DIR (keep the
# corpora, logs and artifacts in DIR instead of a temporary folder removed on success).
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: tests/fuzz/run.sh [SECONDS | --runs [N]]"
build=${KS_BUILD:-build-fuzz}
# --runs: each target's executions, about 60 s each on a 2-core Debian 12
# machine with another build running (2026-12-01, ASan and UBSan included:
# fuzz_scenario 850-1,000 executions a second, fuzz_trace about 100,
# fuzz_result 60-90)
runs_scenario=50000
runs_trace=6000
runs_result=4000
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

# Seed corpora, copied (each run of a target starts from a copy of its seeds:
# libFuzzer adds to the corpus it is given): scenario files of every kind, each test's --set strings
# (a first line "--set", then PATH=VALUE: fuzz_scenario.c), the traces and results.
seed() { # seed TARGET FILES...
    local dir=$work/seed/$1
    shift
    mkdir -p "$dir"
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr / _)"
    done
}
seed scenario tests/fixtures/scenarios/*.lua scenarios/*.lua scenarios/*/*.lua tests/fixtures/hostile/*.lua
# pattern_bomb.lua ends the process by design (the sandbox's pattern time limit:
# exit 2, sim/scenario/sandbox.h), which no in-process fuzz target survives
rm -f "$work/seed/scenario/tests_fixtures_hostile_pattern_bomb.lua"
n=0
while IFS= read -r s; do
    n=$((n + 1))
    printf -- '--set\n%s\n' "$s" > "$work/seed/scenario/set_$n"
done < <(grep -rhoE -e "--set +'?[a-z_.]+=[^ )\"']*" tests | sed -E "s/^--set +'?//" | sort -u)
seed trace tests/fixtures/data/*.h5 tests/fixtures/hostile/trace_*.h5
rm -f "$work"/seed/trace/*result*
seed result tests/fixtures/data/*.h5 tests/fixtures/hostile/result_*.h5
rm -f "$work"/seed/result/*trace*

# HDF5's own leaks on damaged files are not ours (lsan.supp says which)
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# NOTE: symbolize=0: every HDF5 crash the probe child contains would start
# llvm-symbolizer (a second or so); a failure's input is replayed symbolized below
export ASAN_OPTIONS="symbolize=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# --runs: what else makes two runs differ, taken away where the system lets
# it. The same seed gives the same mutations, but libFuzzer also mutates with
# the operands of the comparisons the targets make (-use_cmp, -use_memmem),
# which include addresses, process ids and the inputs' random file names; and
# Lua seeds its string hash from time() and addresses (tests/fuzz/fixed_time.c).
# So: no comparison-guided mutation, time() fixed and no address randomisation
# (setarch -R; a container's seccomp may refuse it, and then this says so).
# And the HDF5 targets' watchdog is put off (-timeout=600, below).
pre=()
if [ -n "$runs" ]; then
    clang -shared -fPIC -O1 -o "$work/fixed_time.so" tests/fuzz/fixed_time.c
    pre=(env "LD_PRELOAD=$work/fixed_time.so")
    if setarch "$(uname -m)" -R true 2> /dev/null; then
        pre+=(setarch "$(uname -m)" -R)
    else
        echo "tests/fuzz/run.sh: setarch -R is refused here: addresses stay random, so fuzz_scenario" \
            "may not repeat exactly" >&2
    fi
fi
status=0
retried=
for t in scenario trace result; do
    art=$work/artifacts/$t
    # fuzz_scenario: print() in a fuzzed scenario writes to stderr, so stderr is
    # closed (libFuzzer and the sanitizers keep their own copy). The HDF5
    # targets keep it: h5read.c's probe child sends its stderr to /dev/null.
    # fuzz_scenario: -timeout=2 (libFuzzer checks every 2 s, so an input is
    # stopped after 2 to 4 s) so that an input whose string pattern runs long
    # is reported as a timeout, with the input kept, before the sandbox's
    # limit (5 s of CPU) ends the process with exit 2 and no input to show.
    mask=0
    unit_timeout=25
    if [ "$t" = scenario ]; then
        mask=2
        unit_timeout=2
    fi
    if [ -n "$runs" ]; then
        n=$runs
        if [ "$n" = default ]; then
            case $t in scenario) n=$runs_scenario ;; trace) n=$runs_trace ;; result) n=$runs_result ;; esac
        fi
        # -reload=0: nothing else writes the corpus, and its rereading is timed.
        # The HDF5 targets: -timeout=600, as libFuzzer's watchdog is a SIGALRM
        # every timeout/2 + 1 s, and where it lands in a run (in a system call
        # of the reader, its probe child's or the report's) changes what an
        # input does; at 600 it first fires after 301 s, so a run of a minute
        # or two meets none and a hung input is still stopped, and kept.
        [ "$t" = scenario ] || unit_timeout=600
        limit=(-runs="$n" -reload=0 -use_cmp=0 -use_memmem=0)
        what="$n executions"
    else
        limit=(-max_total_time="$secs")
        what="${secs} s"
    fi
    try=1
    while :; do
        rm -rf "$work/corpus/$t" "$art"
        mkdir -p "$work/corpus" "$art"
        cp -r "$work/seed/$t" "$work/corpus/$t"
        echo "tests/fuzz/run.sh: fuzz_$t for $what on $(ls "$work/corpus/$t" | wc -l) seeds" >&2
        rc=0
        ${pre[@]+"${pre[@]}"} "$build/fuzz_$t" -seed=1 "${limit[@]}" -timeout=$unit_timeout -rss_limit_mb=2048 \
            -print_final_stats=1 -close_fd_mask=$mask -artifact_prefix="$art/" "$work/corpus/$t" > "$work/$t.log" 2>&1 ||
            rc=$?
        [ "$rc" -ne 0 ] || break
        # the input that failed this process, as libFuzzer names it in the log
        # (the probe child's reports go to /dev/null: those are all contained)
        last=$(sed -n 's/.*Test unit written to //p' "$work/$t.log" | tail -1)
        echo "tests/fuzz/run.sh: fuzz_$t failed (exit $rc); log $work/$t.log; input: ${last:-none written}" >&2
        replay=
        if [ -n "$last" ] && [ -f "$last" ]; then
            echo "tests/fuzz/run.sh: replaying $last alone:" >&2
            replay=$(ASAN_OPTIONS=symbolize=1 UBSAN_OPTIONS=print_stacktrace=1 timeout 300 "$build/fuzz_$t" -runs=1 "$last" 2>&1 |
                grep -vE "^INFO:|^\*\*\*" | sed -n 1,60p || true)
            echo "$replay" >&2
        fi
        if ! grep -qE "ERROR|SUMMARY" <<< "$replay"; then
            # a failure that needs the inputs run before it (HDF5 keeps state
            # between files), or a process that ended without a report
            echo "tests/fuzz/run.sh: no failure replayed; the end of the log:" >&2
            tail -40 "$work/$t.log" >&2
        fi
        # A timeout whose input ran alone well within the limit (the replay
        # printed "Executed ... in N ms") is the machine stalling, not the
        # code: a CI run once stopped an input at 2 s that ran in 141 ms alone.
        # With --runs a second run tries the same inputs in the same order, so
        # a slow input times out again there; one second run, then it counts.
        alone=$(sed -nE 's/^Executed .* in ([0-9]+) ms$/\1/p' <<< "$replay" | tail -1)
        if [ -n "$runs" ] && [ "$try" -eq 1 ] && grep -q "libFuzzer: timeout" "$work/$t.log" &&
            [ -n "$alone" ] && [ "$alone" -lt $((unit_timeout * 1000 / 4)) ]; then
            echo "tests/fuzz/run.sh: fuzz_$t timed out on an input that runs in $alone ms alone:" \
                "running it again on the same inputs" >&2
            mv "$work/$t.log" "$work/$t.timeout.log"
            retried="$retried $t"
            try=2
            continue
        fi
        status=1
        break
    done
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
    contained=$(find "$work/artifacts/$t" -type f \( -name "crash-*" -o -name "oom-*" \) | wc -l)
    res=ok
    grep -qE '^Done [0-9]+ runs' "$log" || res=FAILED
    [ "$res" = ok ] && [ "$contained" -gt 0 ] && res="ok ($contained crash(es) contained in the probe child)"
    [ "$res" = ok ] && [[ " $retried " == *" $t "* ]] && res="ok (second run: the first timed out on an input that did not repeat)"
    printf '%-14s %10s %8s %8s %8s %8s %7s  %s\n' "fuzz_$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}" "${took:-?}" "$res"
done
if [ "$status" -eq 0 ] && [ -z "${KS_FUZZ_KEEP:-}" ]; then
    rm -rf "$work"
else
    echo "tests/fuzz/run.sh: corpora, logs and artifacts in $work" >&2
fi
exit "$status"
