#!/usr/bin/env bash
# tests/study/report_series.sh KVSTRATA MIN_ROWS SCENARIO [ARGS...]
# Runs the scenario, renders its report and checks the data beside two of
# its plots (sim/study/report.c). Tier occupancy: data/occupancy.dat holds
# one row per interval of simulated time that has /steps records, at the
# interval's middle, the run's last sample time t_end (the latest record of
# /steps and /link_samples) cut into 100: each row's t x 100 / t_end - 0.5
# is a whole number b from 0 to 99 (at 50 or 200 intervals it would not
# be), and the rows' b are exactly the intervals /steps has records in (at
# least MIN_ROWS of them). Links:
# plots/links.gp draws min(6, links that carried bytes) lines, the busiest
# first (the /links rows with the most bytes, ties in file order), and
# data/links.dat has a column for each. Skips (77) without gnuplot.
set -euo pipefail
ks=$1 min_rows=$2
shift 2
command -v gnuplot > /dev/null || { echo "report_series: no gnuplot (Debian gnuplot-nox): skipped"; exit 77; }
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/run.h5" > /dev/null
"$ks" report "$dir/run.h5" -o "$dir/report" > /dev/null
t_end=$( (bash "$here/h5_rows.sh" "$dir/run.h5" /steps; bash "$here/h5_rows.sh" "$dir/run.h5" /link_samples) |
    awk -F, '$1 > m { m = $1 } END { printf "%.17g", m }')
# occupancy: a row at the middle of each of the 100 intervals of [0, t_end]
# that holds a /steps record (t / t_end x 100, the last interval closed)
bash "$here/h5_rows.sh" "$dir/run.h5" /steps |
    awk -F, -v end="$t_end" '{ b = int($1 / end * 100); print (b > 99 ? 99 : b) }' | LC_ALL=C sort -n -u > "$dir/bins"
awk -v end="$t_end" '
    NF == 0 { next }
    { x = $1 * 100 / end - 0.5; b = int(x + 0.5)
      if (x - b > 1e-6 || b - x > 1e-6 || b < 0 || b > 99) {
          printf "report_series: occupancy row %d at t = %s is not the middle of one of 100 intervals of %s s (%.9g)\n", NR, $1, end, x > "/dev/stderr"; bad = 1 }
      print b }
    END { exit bad }' "$dir/report/data/occupancy.dat" > "$dir/rows"
if ! cmp -s "$dir/bins" "$dir/rows" || [ "$(wc -l < "$dir/rows")" -lt "$min_rows" ]; then
    echo "report_series: occupancy rows in intervals $(tr '\n' ' ' < "$dir/rows"); /steps records in $(tr '\n' ' ' < "$dir/bins")(at least $min_rows wanted)" >&2
    exit 1
fi
echo "report_series: $(wc -l < "$dir/rows") occupancy rows, each the middle of one of 100 intervals of $t_end s"
# links: the busiest min(6, carrying) by bytes, in that order
bash "$here/h5_rows.sh" "$dir/run.h5" /links | awk -F, '$4 > 0 { print NR "," $1 "," $4 }' |
    LC_ALL=C sort -s -t, -k3,3gr > "$dir/busy"
carrying=$(wc -l < "$dir/busy")
want=$((carrying < 6 ? carrying : 6))
head -n "$want" "$dir/busy" | cut -d, -f2 > "$dir/want"
grep -m1 "^plot " "$dir/report/plots/links.gp" | grep -o "title '[^']*'" | sed "s/title '\(.*\)'/\1/" > "$dir/drawn"
cols=$(awk 'NF > 0 { print NF; exit }' "$dir/report/data/links.dat")
if ! cmp -s "$dir/want" "$dir/drawn" || [ "$cols" != $((want + 1)) ]; then
    echo "report_series: links.gp draws $(wc -l < "$dir/drawn") lines ($(tr '\n' ' ' < "$dir/drawn")), links.dat has $cols columns;" \
         "$carrying links carried bytes, the busiest $want: $(tr '\n' ' ' < "$dir/want")" >&2
    exit 1
fi
echo "report_series: the $want busiest of $carrying links that carried bytes drawn: $(tr '\n' ' ' < "$dir/drawn")"
