#!/usr/bin/env bash
# tests/engine/signal_stop.sh KVSTRATA SCENARIO: SIGINT or SIGTERM during `kvstrata run`
# (issue 16, class 4) stops it at the next decode step with "interrupted by SIGINT",
# exit 1, and nothing under the output name, not even OUT.h5.part-PID. A signal at any
# moment, the HDF5 write included, never crashes the run: it either finished (exit 0,
# a complete result) or was interrupted (exit 1, no file).
set -uo pipefail
ks=$1
sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "signal_stop: $*" >&2; exit 1; }

# 1. mid-run: the default scenario simulates ten minutes in about 30 s of wall time
for sig in INT TERM; do
    out="$dir/$sig"
    mkdir -p "$out"
    "$ks" run "$sc" -o "$out/r.h5" > "$out/stdout" 2> "$out/stderr" &
    pid=$!
    sleep 2
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    [ $rc -eq 1 ] || fail "SIG$sig mid-run: exit $rc, not 1: $(cat "$out/stderr")"
    grep -q "interrupted by SIG$sig at .* s of simulated time; no result" "$out/stderr" ||
        fail "SIG$sig mid-run: $(cat "$out/stderr")"
    [ ! -s "$out/stdout" ] || fail "SIG$sig mid-run: a summary on stdout"
    [ -z "$(ls -A "$out" | grep -v -e '^stdout$' -e '^stderr$')" ] || fail "SIG$sig mid-run: left $(ls -A "$out")"
done

# 2. at every moment of a short run (write and rename included): never a crash, and the
# outcome is all or nothing
done_n=0 stopped_n=0
for i in $(seq 1 30); do
    out="$dir/t$i"
    mkdir -p "$out"
    "$ks" run "$sc" --set duration=10s -o "$out/r.h5" > /dev/null 2> "$out/stderr" &
    pid=$!
    sleep "$(awk -v i="$i" 'BEGIN { printf "%.3f", i * 0.02 }')"
    kill -s INT "$pid" 2> /dev/null
    wait "$pid"
    rc=$?
    left=$(ls -A "$out" | grep -v '^stderr$')
    case $rc in
    0) [ "$left" = r.h5 ] || fail "try $i: exit 0 but left '$left'"
       done_n=$((done_n + 1));;
    1) stopped_n=$((stopped_n + 1))
       grep -q interrupted "$out/stderr" || fail "try $i: exit 1: $(cat "$out/stderr")"
       [ -z "$left" ] || fail "try $i: interrupted but left '$left'";;
    *) fail "try $i: exit $rc: $(cat "$out/stderr")";;
    esac
done
echo "signal_stop: $done_n runs finished before the signal, $stopped_n were interrupted"
exit 0
