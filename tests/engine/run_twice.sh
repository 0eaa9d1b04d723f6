#!/usr/bin/env bash
# tests/engine/run_twice.sh KVSTRATA LATE_FAILING SCENARIO [ARGS...]: the same
# scenario and seed give the same result twice (README "kvstrata run"): the
# JSON summary, wall-clock and result path aside, and every record of the
# result file's /requests, /steps, /tiers and /links; the run must decode,
# migrate and read from L3 for that to mean something. A run refused at load,
# and one that fails midway (LATE_FAILING: a scenario whose Lua policy fails
# after steps that produced tokens), leave no result file, partial or whole.
set -euo pipefail
ks=$1
late=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
strip() { grep -v -e '"wall_s"' -e '"result"'; }
for r in a b; do
    "$ks" run "$@" -o "$dir/$r.h5" --json > "$dir/$r.raw"
    strip < "$dir/$r.raw" > "$dir/$r.json"
    for d in requests steps tiers links; do
        bash "$here/h5_rows.sh" "$dir/$r.h5" "/$d" > "$dir/$r.$d"
    done
done
jq -e '.tokens > 0 and .steps > 0 and .migrated_bytes_l2_l1 > 0 and .migrated_bytes_l3_l1 > 0' "$dir/a.raw" \
    > /dev/null || { echo "run_twice: the run must decode, migrate and read L3:" >&2; cat "$dir/a.raw" >&2; exit 1; }
for f in json requests steps tiers links; do
    if ! cmp -s "$dir/a.$f" "$dir/b.$f"; then
        echo "run_twice: $f differs between two runs:" >&2
        diff "$dir/a.$f" "$dir/b.$f" | head -20 >&2 || true
        exit 1
    fi
done
# fails: CASE ARGS...: the run exits 1, prints nothing on stdout, leaves no file
fails() {
    local c=$1
    shift
    if "$ks" run "$@" -o "$dir/$c.h5" > "$dir/$c.out" 2> "$dir/$c.err"; then
        echo "run_twice: $c: the run succeeded" >&2
        exit 1
    fi
    [ ! -e "$dir/$c.h5" ] || { echo "run_twice: $c: a failed run left a result file" >&2; exit 1; }
    [ ! -s "$dir/$c.out" ] || { echo "run_twice: $c: a failed run printed on stdout" >&2; exit 1; }
    if ls "$dir" | grep -q part; then echo "run_twice: $c: a partial file was left" >&2; exit 1; fi
}
fails bad "$@" --set cache.block_size=-1 # refused at load
fails late "$late"                        # fails midway
grep -q "fails on purpose" "$dir/late.err" || { echo "run_twice: late: not the policy's failure:" >&2; cat "$dir/late.err" >&2; exit 1; }
echo "run_twice: $(wc -l < "$dir/a.json") summary lines, $(wc -l < "$dir/a.requests") requests," \
    "$(wc -l < "$dir/a.steps") step records identical; the failed runs left nothing"
