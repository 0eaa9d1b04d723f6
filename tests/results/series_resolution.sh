#!/usr/bin/env bash
# tests/results/series_resolution.sh KVSTRATA STEP_EVERY LINK_EVERY SCENARIO [ARGS...]
# Runs a scenario of workload.requests (one GPU) and checks the resolution of
# its time series (sim/step/runresult.h): /steps holds the first step
# boundary of each STEP_EVERY-wide interval, so where every interval has one
# (decode steps shorter than it) consecutive records sit in consecutive
# intervals (floor(t / STEP_EVERY) grows by exactly 1: a finer resolution
# would put two in one interval, a coarser one skip one); /link_samples gives
# each link's bytes at k x LINK_EVERY, k = 1, 2, ..., then at the run's end
# (sim_time, past the last multiple and within one interval of it; the
# summary prints sim_time to 12 digits: 1e-10 s apart at most).
set -euo pipefail
ks=$1 step_every=$2 link_every=$3
shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/r.h5" --json > "$dir/r.json"
end=$(jq -e '.sim_time' "$dir/r.json")
bash "$here/h5_rows.sh" "$dir/r.h5" /steps > "$dir/steps"
bash "$here/h5_rows.sh" "$dir/r.h5" /link_samples > "$dir/links"
# /steps, in time order (one GPU): every step from one interval to the next
awk -F, -v e="$step_every" '
    { s = int($1 / e); if (NR > 1 && s - last != 1) { printf "series_resolution: /steps record %d at t = %.17g in interval %d, the previous in %d\n", NR, $1, s, last; bad = 1 } last = s }
    END { if (NR < 100) { print "series_resolution: only " NR " /steps records"; bad = 1 } exit bad }' "$dir/steps"
# /link_samples: per link, the k-th sample at k x LINK_EVERY but the last, at sim_time
awk -F, -v e="$link_every" -v end="$end" '
    function off(a, b) { return a > b ? a - b : b - a }
    { k[$2]++; n = k[$2]; t[$2, n] = $1 }
    END {
        links = 0
        for (l in k) {
            links++
            m = k[l]
            for (i = 1; i < m; i++)
                if (off(t[l, i], i * e) > 1e-12) { printf "series_resolution: link %s sample %d at %.17g, not %.17g\n", l, i, t[l, i], i * e; bad = 1 }
            if (off(t[l, m], end) > 1e-10 || !(end > (m - 1) * e && end <= m * e + 1e-10)) {
                printf "series_resolution: link %s last sample (%d) at %.17g; the run ended at %.17g\n", l, m, t[l, m], end; bad = 1 }
        }
        if (links == 0 || m < 20) { print "series_resolution: " links " links, " m " samples each"; bad = 1 }
        exit bad
    }' "$dir/links"
echo "series_resolution: $(wc -l < "$dir/steps") /steps records, one per ${step_every} s interval; /link_samples every ${link_every} s to the end ($end s)"
