#!/usr/bin/env bash
# tests/study/report_summary.sh KVSTRATA SOURCE_DIR - what `kvstrata report`
# says (issue 20; README "Commands", report):
#   one run: a headline, the summary in units (TPOT in ms, the hit rate in %)
#     with each key's description, the scenario, a page that needs no network
#     and fits a phone (viewport, scrolling tables, images at most 100% wide);
#   two runs of tests/fixtures/scenarios/dsa_small.lua with different
#     cache.l1: the differing field, and output_throughput's change against
#     the first exactly as the two runs' --json give it; a line per run on
#     every plot;
#   a result written before /summary_notes and /scenario still reports;
#   bad input (a missing file, a file that is not a result, a sweep folder
#     with a result) exits non-zero, names the file, and leaves no folder.
# Skips (77) without gnuplot.
set -euo pipefail
ks=$1 src=$2
command -v gnuplot > /dev/null || { echo "report_summary: no gnuplot (Debian gnuplot-nox): skipped"; exit 77; }
command -v jq > /dev/null || { echo "report_summary: no jq: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "report_summary: $*" >&2; exit 1; }
has() { grep -qE -- "$2" "$1" || fail "$1 lacks /$2/"; }

fixture=$src/tests/fixtures/scenarios/dsa_small.lua
"$ks" run "$fixture" --set cache.l1=40MB -o "$dir/a.h5" --json > "$dir/a.json"
"$ks" run "$fixture" --set cache.l1=10MB -o "$dir/b.h5" --json > "$dir/b.json"

# one run
"$ks" report "$dir/a.h5" -o "$dir/one" > /dev/null
page=$dir/one/index.html
has "$page" '<p class="headline">Output [0-9.]+ tokens/s; TPOT P50 [0-9.]+ ms, P99 [0-9.]+ ms'
has "$page" 'bounded by [a-zA-Z]'
has "$page" '<td>tpot_p99</td><td class="v">[0-9.]+ ms</td>'
has "$page" '<td>hit_rate_l1</td><td class="v">[0-9.]+%</td>'
has "$page" '<td>output_throughput</td><td class="v">[0-9.]+ tokens/s</td><td>output tokens per simulated second</td>'
has "$page" '<h3>Latency</h3>'
has "$page" '<td>cache.l1</td><td>40MB</td>'
has "$page" '<meta name="viewport" content="width=device-width'
has "$page" 'img\{max-width:100%'
has "$page" '<div class="scroll"><table>'
! grep -qE '(src|href)="(https?:)?//|<script|<link|@import|url\(' "$page" || fail "index.html reaches for the network"
! grep -q '<h3>Other</h3>' "$page" || fail "a summary key has no group (runfile.c's table)"

# two runs: the field that differs and the exact change of output_throughput
"$ks" report "$dir/a.h5" "$dir/b.h5" -o "$dir/two" > "$dir/out"
[ "$(cat "$dir/out")" = "$dir/two/index.html" ] || fail "printed $(cat "$dir/out")"
page=$dir/two/index.html
has "$page" '<td>cache.l1</td><td>40MB</td><td>10MB</td>'
a=$(jq -r .output_throughput "$dir/a.json") b=$(jq -r .output_throughput "$dir/b.json")
want=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a == b) print "="; else printf "%+.1f%%\n", (b - a) / a * 100 }')
row=$(grep '<td>output_throughput</td>' "$page") || fail "no output_throughput row"
[[ $row == *"<td class=\"v\">$want</td>"* ]] || fail "output_throughput's change is not $want: $row"
[ "$(grep -c '<p class="headline"><b>[12]: ' "$page")" -eq 2 ] || fail "not a headline per run"
for gp in "$dir"/two/plots/*.gp; do
    grep -q "index 1 using" "$gp" && grep -q "title '2: b" "$gp" || fail "$(basename "$gp") lacks the second run's line"
done
n=$(grep -oE 'src="[^"]+\.png"' "$page" | wc -l)
[ "$n" -eq 6 ] || fail "$n plots in the comparison, not 6"

# a result written before the notes and the scenario were stored
"$ks" report "$src/tests/fixtures/data/result_small.h5" -o "$dir/old" > /dev/null
page=$dir/old/index.html
has "$page" '<td>tpot_p99</td><td class="v">[0-9.]+ ms</td><td></td>'
! grep -q '<h2>Scenario' "$page" || fail "an old result shows a scenario"
"$ks" report "$dir/a.h5" "$src/tests/fixtures/data/result_small.h5" -o "$dir/mixed" > /dev/null
has "$dir/mixed/index.html" 'result_small.h5 has no /scenario'

# bad input: exit status, the file named, no folder
refuse() { # STATUS WORD ARGS...: kvstrata report ARGS -o DIR/bad exits STATUS naming WORD, makes no DIR/bad
    local want=$1 word=$2 st=0
    shift 2
    "$ks" report "$@" -o "$dir/bad" > "$dir/bad.out" 2> "$dir/bad.err" || st=$?
    [ "$st" -eq "$want" ] || fail "report $* exited $st, not $want"
    grep -qF -- "$word" "$dir/bad.err" || fail "report $*: the message does not name $word: $(cat "$dir/bad.err")"
    [ ! -e "$dir/bad" ] || fail "report $* left $dir/bad"
    [ ! -s "$dir/bad.out" ] || fail "report $* printed on stdout"
}
refuse 1 "$dir/nowhere.h5: No such file" "$dir/a.h5" "$dir/nowhere.h5"
refuse 1 "study.cmake: cannot be opened as an HDF5 file" "$dir/a.h5" "$src/tests/study/study.cmake"
refuse 1 "$dir/a.json: cannot be opened as an HDF5 file" "$dir/a.json" "$dir/a.h5"
mkdir "$dir/sweep"
refuse 2 "$dir/sweep is a folder (a sweep?)" "$dir/a.h5" "$dir/sweep"
echo "report_summary: one run, two compared, an old result and bad input as documented"
