#!/usr/bin/env bash
# tests/bench/speed_check.sh KVSTRATA: `tests/bench/speed.sh --quick` on the
# dense case and bench cache, one repetition, KVSTRATA as both binaries (no
# build), prints its table (a row per case and binary, and new/base) and one
# JSON line per case, every figure positive, one repetition's range its
# figure and its spread 0; the same simulation twice
# simulates the same seconds (ratio 1) and bench cache the same bytes per block.
# With --threads 1, which the simulation's command shows and bench cache's
# does not take. The header names the CPU.
set -euo pipefail
ks=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "speed_check: $*" >&2; cat "$dir/out" >&2 2> /dev/null || true; exit 1; }

"$here/speed.sh" --quick --reps 1 --cases dense,cache --new "$ks" --base-bin "$ks" --threads 1 > "$dir/out" 2> "$dir/err" ||
    { cat "$dir/err" >&2; fail "speed.sh failed"; }
# the header names the machine's CPU, as /proc/cpuinfo gives it
cpu=$("$ks" info --json | jq -r .cpu)
head -n 1 "$dir/out" | grep -Fq ", $cpu, $(nproc) cores, median of 1" || fail "the header does not name the CPU"
grep -Eq '^case +binary +wall_s +process_s +sim_s +wall/sim +steps/s +accesses/s +rss_MB +MB/GPU +B/block +spread$' \
    "$dir/out" || fail "no table header"

# table rows: CASE BINARY, 9 figures ("-" only where a figure does not
# apply) and the spread: a percentage (0% of one repetition) for a binary,
# apart or overlap for new/base (one repetition each: apart unless equal)
awk -v want="dense cache_heat cache_lru" '
    $2 == "base" || $2 == "new" || $2 == "new/base" {
        if (NF != 12) { print "row with " NF " fields: " $0; bad = 1; next }
        rows[$1 " " $2] = 1
        if ($2 == "new/base" ? $12 !~ /^(apart|overlap)$/ : $12 != "0%") { print "bad spread in: " $0; bad = 1 }
        for (i = 3; i <= 11; i++) {
            dash = $1 == "dense" ? i == 11 : (i == 5 || i == 6 || i == 10)
            v = $i
            sub(/M$/, "", v)
            if (dash ? $i != "-" : !(v + 0 > 0)) { print "bad field " i " in: " $0; bad = 1 }
        }
    }
    END {
        n = split(want, c, " ")
        for (k = 1; k <= n; k++)
            if (!((c[k] " base") in rows && (c[k] " new") in rows && (c[k] " new/base") in rows)) {
                print "missing rows of " c[k]; bad = 1
            }
        exit bad
    }' "$dir/out" || fail "bad table"

grep '^{' "$dir/out" > "$dir/lines" || fail "no JSON line"
[ "$(wc -l < "$dir/lines")" = 3 ] || fail "expected 3 JSON lines"
jq -e -s '
    def pos: type == "number" and . > 0;
    (map(.case) == ["dense", "cache_heat", "cache_lru"]) and all(.[];
        .mode == "quick" and .reps == 1 and
        all(.new, .base; (.wall_s | pos) and (.process_s | pos) and (.steps_per_s | pos)
                         and (.accesses_per_s | pos) and (.rss_mb | pos)
                         and .wall_min == .wall_s and .wall_max == .wall_s and .spread == 0) and
        (.apart | type == "boolean") and
        all(.ratio | .[]; . == null or pos) and
        (if .case == "dense" then
            (.command | endswith(" --threads 1")) and (.new.sim_s | pos) and (.new.wall_per_sim_s | pos) and (.new.rss_mb_per_gpu | pos) and .new.gpus == 1
            and .ratio.sim_s == 1
         else
            (.command | contains("--threads") | not) and (.new.bytes_per_block | pos) and .ratio.bytes_per_block == 1 and .new.sim_s == null
         end))' "$dir/lines" > /dev/null || fail "bad JSON lines"
echo "speed_check: ok ($(grep -c '^[a-z_]* *new ' "$dir/out") cases)"
