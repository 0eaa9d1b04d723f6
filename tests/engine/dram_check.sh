#!/usr/bin/env bash
# tests/engine/dram_check.sh KVSTRATA SCENARIO [ARGS...]: on one node every byte that
# a device moves to or from host memory crosses n0-dram once (sim/engine/platform.h):
# each byte over a GPU's PCIe link (to or from L2, or through the bounce
# buffer of an SSD or the network), each byte the SSDs read or write, each
# byte the prefill pool or the remote pool sends or receives. So in /links the
# bytes of n0-dram equal the sum of those of n0-gpu*-pcie, n0-ssd*-rd/wr,
# prefill-link and remote-link, exactly; and some bytes must have moved.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ks=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/run.h5" --json > "$dir/run.json"
"$here/../h5_rows.sh" "$dir/run.h5" /links > "$dir/links"
awk -F, '
    $1 ~ /^n0-gpu[0-9]+-pcie_(UP|DOWN)$/ || $1 ~ /^n0-ssd[0-9]+-(rd|wr)$/ || $1 ~ /^(prefill|remote)-link_(UP|DOWN)$/ {
        sum += $4; parts++
    }
    $1 == "n0-dram" { dram = $4; found = 1 }
    END {
        if (!found) { print "dram_check: no n0-dram link in /links" > "/dev/stderr"; exit 1 }
        if (dram != sum || dram <= 0) {
            printf "dram_check: n0-dram carried %.17g bytes, its %d device links %.17g\n", dram, parts, sum > "/dev/stderr"
            exit 1
        }
        printf "dram_check: n0-dram carried %.17g bytes = the sum over its %d device links\n", dram, parts
    }' "$dir/links"
