#!/usr/bin/env bash
# tests/engine/sessions_check.sh KVSTRATA THINK_S SCENARIO [ARGS...]: in /requests,
# every turn k > 0 arrives exactly (to 1 ns) when its session's turn k - 1
# finished plus THINK_S seconds (README "Scenarios", workload.sessions), and
# some later turn did arrive.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ks=$1 think=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/run.h5" --json > /dev/null
# fields: id session turn gpu prompt output generated arrival admitted first_token finish ...
"$here/../h5_rows.sh" "$dir/run.h5" /requests > "$dir/rows"
awk -F, -v think="$think" '
    { arrival[$2 "," $3] = $8; finish[$2 "," $3] = $11 }
    END {
        later = 0; bad = 0
        for (k in arrival) {
            split(k, p, ","); if (p[2] == 0) continue
            later++
            prev = p[1] "," (p[2] - 1)
            d = arrival[k] - (finish[prev] + think)
            if (!(prev in finish) || finish[prev] < 0 || d < -1e-9 || d > 1e-9) {
                printf "sessions_check: session %s turn %s arrived at %s, previous turn finished at %s\n", p[1], p[2], arrival[k], (prev in finish) ? finish[prev] : "never" > "/dev/stderr"
                bad++
            }
        }
        if (later == 0) { print "sessions_check: no later turn arrived" > "/dev/stderr"; exit 1 }
        if (bad > 0) { printf "sessions_check: %d of %d later turns off\n", bad, later > "/dev/stderr"; exit 1 }
        printf "sessions_check: %d later turns, each at its previous turn + %s s\n", later, think
    }' "$dir/rows"
