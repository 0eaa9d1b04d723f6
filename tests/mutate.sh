#!/usr/bin/env bash
# tests/mutate.sh [--list] [BUG...] - does the suite catch a wrong model?
#
# Plants each deliberate model bug of the list below, one at a time, in a
# copy of the working tree (its tracked and untracked, not ignored, files),
# builds it and runs the whole CTest suite; a bug is caught when at least
# one test fails. First the copy runs unchanged, and must pass: a suite red
# without a bug catches nothing. Prints one line per bug (caught, with the
# first tests that failed, or MISSED) and exits 1 if any bug was missed.
# BUG...: run only these (names from --list). Each bug is an exact edit of
# one line: if the line has changed, the script says so and stops (update
# the list with the code). Without CUDA (-DKS_CUDA=OFF: the bugs are in the
# simulator), -j$(nproc); about 7 minutes for the clean pass on 2 cores, then
# 1 to 7 per bug (the suite stops at its first failure).
# Environment: KS_MUTATE_DIR=DIR works there (default: a temporary folder,
# removed at the end); KS_JOBS=N.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${KS_JOBS:-$(nproc)}

# bug NAME FILE LINE BUGGY: the bug NAME replaces the line LINE of FILE by BUGGY
names=() files=() olds=() news=()
bug() {
    names+=("$1") files+=("$2") olds+=("$3") news+=("$4")
}
bug context_off_by_one sim/step/step.c \
    "        a->ctx++; // that token's K and V join the first decode step" \
    "        // (bug: the first output token's K and V never join the context)"
# the host link's bandwidth, where it binds: a GPU's PCIe link and its switch
# uplink are in series and as wide, and SimGrid gives a flow the narrower
# (a bug in the GPU's own link alone changes no figure)
bug host_link_bandwidth sim/engine/engine.c \
    "        .uplink_bw = pl->pcie_bw, // a switch uplink as wide as one GPU's link: the GPUs behind it share it" \
    "        .uplink_bw = pl->pcie_bw * 1.1,"
bug heat_ignored sim/cache/evict.c \
    "        return (protect << 63) | (heat << 25) | (last & 0x1ffffffu);" \
    "        return (protect << 63) | (last & 0x1ffffffu) | (0 * heat);"
bug wait_skipped sim/engine/decode.c \
    "    return ks_step_needed_unlanded(g->jobs, g->n_jobs, layer);" \
    "    return 0 && ks_step_needed_unlanded(g->jobs, g->n_jobs, layer);"
bug hbm_one_percent sim/step/cost.c \
    "    return ((weights + kv_hbm) / s->platform.hbm_bw + attn) / s->model.layers + s->scheduler.layer_overhead;" \
    "    return ((weights + kv_hbm) / (1.01 * s->platform.hbm_bw) + attn) / s->model.layers + s->scheduler.layer_overhead;"
bug summaries_unread sim/scenario/scenario.h \
    "    return (double)a->index_token_bytes + a->summary_token_bytes;" \
    "    return (double)a->index_token_bytes;"

if [ "${1:-}" = --list ]; then
    for i in "${!names[@]}"; do
        echo "${names[$i]} (${files[$i]})"
    done
    exit 0
fi
want=("$@")

work=${KS_MUTATE_DIR:-}
if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/src"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xmf - -C "$work/src" # -m: newer than any object built before
log=$work/log
mkdir -p "$log"

build() {
    cmake --build "$work/build" -j "$jobs" > "$log/build.txt" 2>&1 ||
        { tail -30 "$log/build.txt" >&2; return 1; }
}
# suite NAME: 0 when every test passes; the failures' names in $log/NAME.failed
suite() {
    ctest --test-dir "$work/build" -j "$jobs" --stop-on-failure > "$log/$1.txt" 2>&1 && return 0
    sed -n '/The following tests FAILED:/,$p' "$log/$1.txt" | awk '$2 == "-" { print $3 }' > "$log/$1.failed"
    return 1
}

echo "mutate.sh: building a clean copy in $work" >&2
cmake -S "$work/src" -B "$work/build" -DKS_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$log/cmake.txt" 2>&1 ||
    { tail -30 "$log/cmake.txt" >&2; exit 2; }
build || exit 2
echo "mutate.sh: the clean suite" >&2
if ! suite clean; then
    echo "mutate.sh: the suite fails without a bug ($(tr '\n' ' ' < "$log/clean.failed")): nothing to measure" >&2
    exit 2
fi

missed=0
for i in "${!names[@]}"; do
    name=${names[$i]} file=${files[$i]} old=${olds[$i]} new=${news[$i]}
    if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
        continue
    fi
    f=$work/src/$file
    n=$(grep -cxF -- "$old" "$f" || true)
    if [ "$n" != 1 ]; then
        echo "mutate.sh: $name: the line to change occurs $n times in $file (want 1); update the list" >&2
        exit 2
    fi
    cp "$f" "$f.orig"
    OLD=$old NEW=$new python3 -c '
import os, sys
p = sys.argv[1]
s = open(p).read().split("\n")
s = [os.environ["NEW"] if l == os.environ["OLD"] else l for l in s]
open(p, "w").write("\n".join(s))' "$f"
    echo "mutate.sh: $name" >&2
    if ! build; then
        echo "$name: does not build (fix the list)" >&2
        mv "$f.orig" "$f"
        exit 2
    fi
    if suite "$name"; then
        echo "$name: MISSED (every test passed)"
        missed=$((missed + 1))
    else
        echo "$name: caught by $(head -3 "$log/$name.failed" | tr '\n' ' ')"
    fi
    mv "$f.orig" "$f"
    touch "$f"
done
[ "$missed" = 0 ] || { echo "mutate.sh: $missed bug(s) missed" >&2; exit 1; }
