#!/bin/sh
# overhead_input.sh KVSTRATA SOURCE_DIR - the GLM-5.1 scenarios' layer_overhead
# is the fit of results/published/overhead_fit.sh: with it, DeepSeek-V3 in
# SGLang on 8xH200 at batch 1 (dsv3_sglang.lua, the calibration input)
# makes the published 30.29 output tok/s, a request's 256 tokens in
# 256 / 30.29 = 8.45163 s, within 2e-4 (the value is written with 4 digits).
# A change to the step's cost that moves this point needs the fit rerun.
set -eu
ks=$1 src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
v=$(sed -n 's/.*layer_overhead = "\([0-9.e-]*ms\)".*/\1/p' "$src/results/published/glm_baseline.lua")
[ -n "$v" ] || { echo "no layer_overhead in glm_baseline.lua" >&2; exit 1; }
"$ks" run "$src/results/published/dsv3_sglang.lua" --set "scheduler.layer_overhead=$v" -o "$dir/r.h5" --json \
    > "$dir/r.json"
jq -e '.requests_finished > 0 and (.e2el_mean / (256 / 30.29) - 1 | fabs) < 2e-4' "$dir/r.json" > /dev/null ||
    { echo "layer_overhead $v: e2el_mean $(jq .e2el_mean "$dir/r.json") s, not 256 / 30.29 s" >&2; exit 1; }
# README ("8.8 times the step kvstrata computed from bytes and FLOPs alone"): without it the same request
# takes 1/8.8 of that
"$ks" run "$src/results/published/dsv3_sglang.lua" -o "$dir/r0.h5" --json > "$dir/r0.json"
jq -e --slurpfile z "$dir/r0.json" '.e2el_mean / $z[0].e2el_mean | . > 8.6 and . < 9.0' "$dir/r.json" > /dev/null ||
    { echo "with / without the overhead: not about 8.8" >&2; exit 1; }
echo "layer_overhead $v: e2el_mean $(jq .e2el_mean "$dir/r.json") s"
