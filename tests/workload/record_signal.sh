#!/usr/bin/env bash
# tests/workload/record_signal.sh KVSTRATA SCENARIO: SIGINT or SIGTERM during
# `kvstrata trace record` (issue 16, class 4) stops the recording within its current
# request's layer with "interrupted ... by SIGINT; no trace written", exit 1, and
# nothing under the output name, not even OUT.h5.part-PID.
set -uo pipefail
ks=$1
sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "record_signal: $*" >&2; exit 1; }

for sig in INT TERM; do
    out="$dir/$sig"
    mkdir -p "$out"
    # many requests of many steps: the recording runs far longer than the wait below
    "$ks" trace record "$sc" --requests 1000 --steps 64 -o "$out/t.h5" > "$out/stdout" 2> "$out/stderr" &
    pid=$!
    sleep 1
    kill -s "$sig" "$pid"
    t0=$(date +%s)
    wait "$pid"
    rc=$?
    waited=$(( $(date +%s) - t0 ))
    [ $rc -eq 1 ] || fail "SIG$sig: exit $rc, not 1: $(cat "$out/stderr")"
    grep -q "interrupted .* by SIG$sig; no trace written" "$out/stderr" || fail "SIG$sig: $(cat "$out/stderr")"
    [ "$waited" -le 20 ] || fail "SIG$sig: it took ${waited}s to stop"
    [ ! -s "$out/stdout" ] || fail "SIG$sig: output on stdout"
    [ -z "$(ls -A "$out" | grep -v -e '^stdout$' -e '^stderr$')" ] || fail "SIG$sig: left $(ls -A "$out")"
done
echo "record_signal: ok"
