#!/usr/bin/env bash
# tests/workload/trace_preset.sh KVSTRATA SCENARIO: `trace record` takes the synthetic
# attention preset from the scenario's sparse.preset, and --preset wins over
# it. Records 1 request x 24 steps: with sparse.preset=noisy the trace says
# "synthetic noisy" and equals the one --preset noisy records, and its R(1)
# is below the stable preset's (0.62 against 0.97 on tests/fixtures/scenarios/policies.lua).
set -euo pipefail
ks=$1 sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
record() { # NAME ARGS...: records into NAME.h5, its trace stats into NAME.json
    local name=$1
    shift
    "$ks" trace record "$sc" -o "$dir/$name.h5" --requests 1 --steps 24 --json "$@" > "$dir/$name.rec"
    "$ks" trace stats "$dir/$name.h5" --json > "$dir/$name.json"
}
source_of() { sed -n 's/.*"source": "\([^"]*\)".*/\1/p' "$dir/$1.rec"; }
reuse_1() { sed -n 's/^  "reuse_1": \([0-9.e+-]*\).*/\1/p' "$dir/$1.json"; }

record noisy --set sparse.preset=noisy
record stable --set sparse.preset=stable
record flag --preset noisy
record wins --set sparse.preset=stable --preset noisy
for name in noisy flag wins; do
    if [[ "$(source_of $name)" != *"synthetic noisy"* ]]; then
        echo "trace_preset: the $name recording says '$(source_of $name)', not synthetic noisy" >&2
        exit 1
    fi
done
if [[ "$(source_of stable)" != *"synthetic stable"* ]]; then
    echo "trace_preset: sparse.preset=stable recorded '$(source_of stable)'" >&2
    exit 1
fi
for name in flag wins; do
    if ! cmp -s <(grep -v '"file":' "$dir/noisy.json") <(grep -v '"file":' "$dir/$name.json"); then
        echo "trace_preset: the $name recording's trace stats differ from sparse.preset=noisy's" >&2
        exit 1
    fi
done
n=$(reuse_1 noisy) s=$(reuse_1 stable)
if ! awk -v n="$n" -v s="$s" 'BEGIN { exit !(n != "" && s != "" && n < s) }'; then
    echo "trace_preset: reuse_1 noisy $n is not below stable $s" >&2
    exit 1
fi
echo "trace_preset: reuse_1 noisy $n, stable $s; --preset noisy gives sparse.preset=noisy's trace, and wins over it"
