#!/usr/bin/env bash
# tests/study/report_check.sh KVSTRATA run SCENARIO [ARGS...]
# tests/study/report_check.sh KVSTRATA sweep SWEEP.lua IMAGES
# Runs the scenario (or the sweep), renders its report, and checks that every
# image index.html references exists, is not empty and is what its name says
# (PNG signature, SVG root element) and has its data file; a run's report has
# 12 images, a sweep's IMAGES. Skips (77) without gnuplot.
set -euo pipefail
ks=$1 mode=$2 input=$3
shift 3
command -v gnuplot > /dev/null || { echo "report_check: no gnuplot (Debian gnuplot-nox): skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "$mode" = run ]; then
    "$ks" run "$input" "$@" -o "$dir/run.h5" > /dev/null
    src=$dir/run.h5 want=12
else
    "$ks" sweep "$input" -o "$dir/sweep" -j 2 > /dev/null
    src=$dir/sweep want=$1
fi
"$ks" report "$src" -o "$dir/report" > "$dir/out"
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
[ "$n" -eq "$want" ] || { echo "report_check: $n images referenced, expected $want" >&2; exit 1; }
grep -q "tpot_p99</t[dh]>" "$dir/report/index.html" || { echo "report_check: no summary table" >&2; exit 1; }
if [ "$mode" = sweep ]; then # one line per value of the other axis, labelled with it
    for g in "$dir"/report/plots/axis*_tpot_p99.gp; do
        grep -q "index 1 using" "$g" && grep -Eq "title '[^=']+=[^']+'" "$g" ||
            { echo "report_check: $(basename "$g") lacks one labelled line per other-axis value" >&2; exit 1; }
    done
fi
echo "report_check: index.html and its $n images are valid"
