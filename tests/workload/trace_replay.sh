#!/usr/bin/env bash
# tests/workload/trace_replay.sh KVSTRATA SCENARIO: records a trace of the scenario
# (2 requests, 48 steps), checks its size, then replays it in kvstrata run
# (sparse.policy = "trace") and checks that every request finished with sane
# hit rates and that blocks moved, that Belady's L1 hit rate bounds the heat
# map's and LRU's, that the access model fitted to it drives a run, and that
# a trace drawn from that model keeps its reuse fractions within 5%.
set -euo pipefail
ks=$1 sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" trace record "$sc" -o "$dir/t.h5" --requests 2 --steps 48 --json > "$dir/rec.json"
layers=$(sed -n 's/.*"layers": \([0-9]*\).*/\1/p' "$dir/rec.json")
records=$(sed -n 's/.*"records": \([0-9]*\).*/\1/p' "$dir/rec.json")
if [ "$records" != $((2 * 48 * layers)) ]; then
    echo "trace_replay: $records records, expected 2 x 48 x $layers" >&2
    exit 1
fi
"$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/t.h5" -o "$dir/run.h5" --json > "$dir/run.json"
get() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" "$dir/run.json"; }
fin=$(get requests_finished) hit=$(get hit_rate_l1) moved=$(get migrated_bytes_l2_l1)
if ! awk -v f="$fin" -v h="$hit" -v m="$moved" 'BEGIN { exit !(f == 4 && h > 0 && h <= 1 && m > 0) }'; then
    echo "trace_replay: replay finished $fin requests, hit_rate_l1 $hit, $moved bytes promoted" >&2
    exit 1
fi
# Belady (the trace knows every next use) bounds the heat map and LRU
"$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/t.h5" --set cache.evict=belady \
    -o "$dir/bel.h5" --json > "$dir/run.json"
bel=$(get hit_rate_l1)
"$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/t.h5" --set cache.evict=lru \
    -o "$dir/lru.h5" --json > "$dir/run.json"
lru=$(get hit_rate_l1)
if ! awk -v b="$bel" -v h="$hit" -v l="$lru" 'BEGIN { exit !(b >= h && b >= l && b <= 1) }'; then
    echo "trace_replay: belady hit_rate_l1 $bel is below heat's $hit or lru's $lru" >&2
    exit 1
fi
# the access model fitted to the trace drives a run too
"$ks" run "$sc" --set sparse.policy=model --set sparse.fit="$dir/t.h5" -o "$dir/model.h5" --json > "$dir/run.json"
mfin=$(get requests_finished) mhit=$(get hit_rate_l1)
if ! awk -v f="$mfin" -v h="$mhit" 'BEGIN { exit !(f == 4 && h > 0 && h <= 1) }'; then
    echo "trace_replay: the fitted model's run finished $mfin requests, hit_rate_l1 $mhit" >&2
    exit 1
fi
echo "trace_replay: model fitted to the trace: hit_rate_l1 $mhit"
# a trace drawn from the model keeps the source's reuse fractions within 5%
"$ks" trace model "$dir/t.h5" -o "$dir/m.h5" --json > "$dir/run.json"
for w in 1 4 16; do
    e=$(get "reuse_${w}_error")
    if ! awk -v e="$e" 'BEGIN { exit !(e != "" && e >= -0.05 && e <= 0.05) }'; then
        echo "trace_replay: the model's reuse_$w is off by $e (relative) from the source's" >&2
        exit 1
    fi
    echo "trace_replay: model reuse_$w relative error $e"
done
echo "trace_replay: $records records; replay: 4 requests, hit_rate_l1 heat $hit, lru $lru, belady $bel; $moved bytes promoted (heat)"
