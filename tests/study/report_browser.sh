#!/usr/bin/env bash
# tests/study/report_browser.sh KVSTRATA [SCREENSHOT.png] - a report as a
# reader sees it (issue 20): two short runs of the seed's scenario (L1 85%
# against 100% of the pool) compared by `kvstrata report A.h5 B.h5`, the page
# opened in headless Chromium (Debian's chromium) inside a phone-width frame
# (390 px) by a page of this test's own, whose script then checks what the
# browser laid out: every image of the report loaded (complete, with a
# width), no table cell's text runs past its cell, and the page is no wider
# than the frame (wide tables scroll in their own box). The same for the
# report of one run. With SCREENSHOT.png, also writes a 1000 px wide
# screenshot of the comparison there (README's). A negative control proves
# each check can fail. Exits 77 (skipped) without Chromium.
set -uo pipefail
ks=${1:?usage: report_browser.sh KVSTRATA [SCREENSHOT.png]}
shot=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "report_browser: no chromium (Debian package chromium): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_browser: $*" >&2; exit 1; }

sc=$root/tests/fixtures/scenarios/seed_default.lua
"$ks" run "$sc" --set duration=3s -o "$tmp/tiered.h5" > /dev/null 2>&1 || fail "the first run failed"
"$ks" run "$sc" --set duration=3s --set cache.l1=100% -o "$tmp/hbm.h5" > /dev/null 2>&1 || fail "the second run failed"
"$ks" report "$tmp/hbm.h5" "$tmp/tiered.h5" -o "$tmp/cmp" > /dev/null || fail "report of two runs failed"
"$ks" report "$tmp/tiered.h5" -o "$tmp/one" > /dev/null || fail "report of one run failed"

# check DIR: what Chromium laid out, as the checking page's result line
check() {
    local page
    page=$tmp/check_$(basename "$1").html
    cat > "$page" << EOF
<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<pre id="r">RESULT none: the frame never loaded</pre>
<iframe id="f" src="file://$1/index.html" style="width:390px;height:900px;border:0"></iframe>
<script>
const f = document.getElementById('f');
function done(t) { document.getElementById('r').textContent = t; }
f.addEventListener('load', () => setTimeout(() => {
  const d = f.contentDocument;
  if (!d) { done('RESULT none: no access to the frame'); return; }
  const imgs = [...d.images];
  const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
  const over = [...d.querySelectorAll('td, th')].filter(c => c.scrollWidth > c.clientWidth + 1)
    .map(c => c.textContent.trim().slice(0, 40));
  const wide = d.documentElement.scrollWidth - f.clientWidth;
  done('CHECKED images=' + imgs.length + ' broken=' + broken.length + ' overflowing=' + over.length +
       ' too_wide_px=' + Math.max(0, wide) + ' ' + JSON.stringify({broken: broken, overflowing: over.slice(0, 5)}));
}, 1000));
</script></body></html>
EOF
    "$browser" --headless --no-sandbox --disable-gpu --allow-file-access-from-files --virtual-time-budget=20000 \
        --dump-dom "file://$page" 2> "$tmp/chromium.log" | grep -oE 'CHECKED images=[0-9]+ [^<]*'
}
for dir in "$tmp/cmp" "$tmp/one"; do
    line=$(check "$dir") || { tail -5 "$tmp/chromium.log"; fail "Chromium gave no result for $(basename "$dir")"; }
    echo "report_browser: $(basename "$dir"): $line"
    imgs=$(sed -E 's/.*images=([0-9]+).*/\1/' <<< "$line")
    [ "${imgs:-0}" -ge 6 ] || fail "$(basename "$dir"): $imgs images laid out (6 plots expected)"
    grep -q " broken=0 " <<< "$line" || fail "$(basename "$dir"): an image did not load: $line"
    grep -q " overflowing=0 " <<< "$line" || fail "$(basename "$dir"): text runs past its table cell: $line"
    grep -q " too_wide_px=0 " <<< "$line" || fail "$(basename "$dir"): the page is wider than a phone's: $line"
done
# negative control: each check catches what it is for, in a copy of the one-run report with an
# image removed, a cell whose text cannot fit it and a block wider than a phone
cp -r "$tmp/one" "$tmp/bad"
rm "$(find "$tmp/bad" -maxdepth 1 -name '*.png' | head -1)"
sed -i 's|</body>|<table><tr><td style="max-width:40px;overflow:hidden;white-space:nowrap">a_cell_far_too_narrow_for_its_text</td></tr></table><div style="width:1500px">wide</div></body>|' \
    "$tmp/bad/index.html"
line=$(check "$tmp/bad") || fail "Chromium gave no result for the negative control"
echo "report_browser: negative control: $line"
grep -q " broken=1 " <<< "$line" || fail "the removed image went unseen: $line"
grep -q " overflowing=1 " <<< "$line" || fail "the overflowing cell went unseen: $line"
grep -q " too_wide_px=0 " <<< "$line" && fail "the wide block went unseen: $line"
if [ -n "$shot" ]; then
    "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1400 \
        --screenshot="$shot" "file://$tmp/cmp/index.html" 2>> "$tmp/chromium.log" || fail "no screenshot"
    [ -s "$shot" ] || fail "the screenshot is empty"
fi
echo "report_browser: ok"
