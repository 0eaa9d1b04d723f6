#!/usr/bin/env bash
# tests/engine/routers.sh KVSTRATA CLOSED_FORM: the routers (README
# "The simulator", router) in closed form on closed_form.lua's requests over
# 4 GPUs, read from /requests (the GPU of each request id):
#   - round_robin, one client: request i goes to GPU i mod 4;
#   - least_loaded, one client: every request finds every GPU idle (the one
#     before it has left its GPU when the client sends the next) and the
#     lowest index wins: all on GPU 0;
#   - least_loaded, four clients: one request per GPU at all times, each
#     finished request's client refills its GPU: 10 of the 40 on each;
#   - prefix_affinity, four clients, every prompt with one of 2 shared
#     prefixes: each group stays on the GPU its first request went to (no
#     home ever holds more than 4 requests above the least loaded): 2 GPUs;
#   - prefix_affinity, one prefix group, N clients sending N requests at
#     once (README "unless that GPU is more than 4 requests busier than the
#     least loaded"): request 0 makes GPU 0 the group's home, and request k
#     finds it k requests busier than the idle GPUs. N = 5: request 4 finds
#     it exactly 4 busier and stays (all 5 on GPU 0); N = 6: request 5 finds
#     it 5 busier and goes to the least loaded, GPU 1.
set -euo pipefail
ks=$1 cf=$2
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# gpus NAME ARGS...: "id gpu" per request in $dir/NAME
gpus() {
    local n=$1
    shift
    "$ks" run "$cf" --set platform.gpus_per_node=4 --set duration=600s "$@" -o "$dir/$n.h5" --json > "$dir/$n.json"
    jq -e '.requests_finished == .requests_arrived and .requests_finished > 0' "$dir/$n.json" > /dev/null
    bash "$here/h5_rows.sh" "$dir/$n.h5" /requests | awk -F, '{ print $1, $4 }' | sort -n > "$dir/$n"
}
check() { # NAME AWK_PROGRAM (exit 0 when the rows satisfy it)
    if ! awk "$2" "$dir/$1"; then
        echo "routers: $1: request -> GPU:" >&2
        tr '\n' ' ' < "$dir/$1" >&2
        echo >&2
        exit 1
    fi
}
gpus rr1 --set router=round_robin --set workload.requests=10
check rr1 '{ n++; if ($2 != $1 % 4) bad = 1 } END { exit !(n == 10 && !bad) }'
gpus ll1 --set router=least_loaded --set workload.requests=10
check ll1 '{ n++; if ($2 != 0) bad = 1 } END { exit !(n == 10 && !bad) }'
four=(--set workload.arrival.concurrency=4 --set workload.requests=40 --set workload.output_tokens=50)
gpus ll4 --set router=least_loaded "${four[@]}"
check ll4 '{ c[$2]++ } END { exit !(c[0] == 10 && c[1] == 10 && c[2] == 10 && c[3] == 10) }'
gpus pa4 --set router=prefix_affinity "${four[@]}" --set workload.shared_prefix.tokens=1024 \
    --set workload.shared_prefix.groups=2 --set workload.shared_prefix.fraction=1
check pa4 '{ if (!($2 in c)) k++; c[$2]++; n++ } END { exit !(n == 40 && k == 2) }'
one=(--set router=prefix_affinity --set workload.output_tokens=50 --set workload.shared_prefix.tokens=1024
     --set workload.shared_prefix.groups=1 --set workload.shared_prefix.fraction=1)
gpus pa_at4 "${one[@]}" --set workload.arrival.concurrency=5 --set workload.requests=5
check pa_at4 '{ n++; if ($2 != 0) bad = 1 } END { exit !(n == 5 && !bad) }'
gpus pa_past4 "${one[@]}" --set workload.arrival.concurrency=6 --set workload.requests=6
check pa_past4 '{ n++; if ($2 != ($1 < 5 ? 0 : 1)) bad = 1 } END { exit !(n == 6 && !bad) }'
echo "routers: round_robin, least_loaded (one and four clients), prefix_affinity (two groups; one group at 4 and 5 requests busier) as their closed forms"
