#!/usr/bin/env bash
# tests/report_check.sh KVSTRATA SCENARIO [ARGS...]: runs the scenario, renders
# its report, and checks that every image index.html references exists, is
# not empty and is what its name says (PNG signature, SVG root element), and
# that each plot has its data file. Skips (77) without gnuplot.
set -euo pipefail
ks=$1 sc=$2
shift 2
command -v gnuplot > /dev/null || { echo "report_check: no gnuplot (Debian gnuplot-nox): skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$sc" "$@" -o "$dir/run.h5" > /dev/null
"$ks" report "$dir/run.h5" -o "$dir/report" > "$dir/out"
[ "$(cat "$dir/out")" = "$dir/report/index.html" ] || { echo "report_check: printed $(cat "$dir/out")" >&2; exit 1; }
imgs=$(grep -o 'src="[^"]*"' "$dir/report/index.html" | sed 's/src="\(.*\)"/\1/')
svgs=$(grep -o 'href="[^"]*\.svg"' "$dir/report/index.html" | sed 's/href="\(.*\)"/\1/')
n=0
for f in $imgs $svgs; do
    p="$dir/report/$f"
    [ -s "$p" ] || { echo "report_check: $f is missing or empty" >&2; exit 1; }
    case "$f" in
    *.png) [ "$(head -c 8 "$p" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "report_check: $f is not a PNG" >&2; exit 1; } ;;
    *.svg) grep -q '<svg' "$p" || { echo "report_check: $f is not an SVG" >&2; exit 1; } ;;
    *) echo "report_check: unexpected image $f" >&2; exit 1 ;;
    esac
    [ -s "$dir/report/data/$(basename "${f%.*}").dat" ] || { echo "report_check: no data for $f" >&2; exit 1; }
    n=$((n + 1))
done
[ "$n" -eq 12 ] || { echo "report_check: $n images referenced, expected 6 PNG + 6 SVG" >&2; exit 1; }
grep -q "<td>tpot_p99</td>" "$dir/report/index.html" || { echo "report_check: no summary table" >&2; exit 1; }
echo "report_check: index.html and its 12 images are valid"
