#!/usr/bin/env bash
# results/report/make.sh [KVSTRATA] - README's screenshot of a comparison:
# scenarios/default.lua with every block in HBM (cache.l1 = 100%, the
# reference) against the same run tiered (its L1 of 25%), compared by
# `kvstrata report`, the page's top 1400 px at 1000 px wide in headless
# Chromium (Debian's chromium). Writes results/report/default_hbm_vs_tiered.png.
# About a minute on this project's 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
browser=$(command -v chromium || command -v chromium-browser) || { echo "make.sh: needs chromium" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ks" run scenarios/default.lua --set cache.l1=100% -o "$tmp/all_in_hbm.h5" > /dev/null
"$ks" run scenarios/default.lua -o "$tmp/tiered.h5" > /dev/null
"$ks" report "$tmp/all_in_hbm.h5" "$tmp/tiered.h5" -o "$tmp/report"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1400 \
    --screenshot=results/report/default_hbm_vs_tiered.png "file://$tmp/report/index.html" 2> /dev/null
echo "wrote results/report/default_hbm_vs_tiered.png"
