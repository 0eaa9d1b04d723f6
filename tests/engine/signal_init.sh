#!/usr/bin/env bash
# tests/engine/signal_init.sh KVSTRATA SCENARIO: a SIGINT that arrives while SimGrid
# starts (inside simgrid_init, where SimGrid's own handler would exit(1) with no word)
# is held and then stops the run like any other: "interrupted by SIGINT", exit 1, no
# file. gdb stops the run as simgrid_init returns and sends the signal there.
set -uo pipefail
ks=$1
sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "signal_init: $*" >&2; exit 1; }
gdb -batch -ex "handle SIGINT nostop noprint pass" -ex "break simgrid_init" -ex run -ex finish \
    -ex "signal SIGINT" --args "$ks" run "$sc" --set duration=10s -o "$dir/r.h5" > "$dir/gdb" 2>&1
grep -q "interrupted by SIGINT at .* s of simulated time; no result" "$dir/gdb" || fail "no interruption: $(cat "$dir/gdb")"
grep -q "exited with code 01" "$dir/gdb" || fail "not exit 1: $(cat "$dir/gdb")"
[ -z "$(ls -A "$dir" | grep -v '^gdb$')" ] || fail "left $(ls -A "$dir")"
echo "signal_init: a SIGINT inside simgrid_init stopped the run"
