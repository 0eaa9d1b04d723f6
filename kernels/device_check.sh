#!/usr/bin/env bash
# kernels/device_check.sh - the GPU checks of issues 4 and 5 in one short run,
# for a lent GPU machine (an H200 through the project's `device` tool) that has
# the CUDA driver but none of the simulator's libraries and no network.
#
# Here, on the development machine (nvcc builds the kernels for sm_80/sm_90):
#   bash kernels/device_check.sh --prepare
# builds kvstrata-device and the CUDA test, and copies them (with libcmocka,
# the test's one library the GPU machine lacks) into .device/, which git
# ignores. There, with .device carried:
#   bash kernels/device_check.sh --run "$OUT"
# writes into the folder:
#   machine.txt        nvidia-smi -q and the binary's `info`
#   kernel_cuda.txt    the CUDA kernels against the C references (test_kernel_cuda.c)
#   memcheck.txt       the same test under compute-sanitizer memcheck (when present)
#   bench.json         bench kernels --backend cuda: every kernel, batch 1/8/32,
#                      8..256 blocks, the 8/32/128 head shape; the sparse kernel's
#                      bandwidth against a timed device copy (goal: >= 70% at
#                      >= 64 blocks and batch 32)
#   kernel_time.lua    that run's sparse decode times as a profile kernel_time table
# and exits non-zero if the test failed. It takes about 3 minutes of device time;
# commit what comes back under results/ with the date and the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device

case "${1:-}" in
--prepare)
    set -e
    [ -f build/CMakeCache.txt ] || cmake -S . -B build -DKS_WERROR=ON
    cmake --build build -j "$(nproc)" --target kvstrata-device kernel_cuda
    build/kvstrata-device info | grep -q "^cuda_kernels *yes" ||
        { echo "device_check.sh: build/ has no CUDA kernels (nvcc missing, or -DKS_CUDA=OFF)" >&2; exit 1; }
    mkdir -p "$dev"
    cp build/kvstrata-device build/tests/kernel_cuda "$dev/"
    cp -L "$(ldconfig -p | awk '/libcmocka.so.0 /{print $NF; exit}')" "$dev/libcmocka.so.0"
    grep -qx "/$dev/" .git/info/exclude 2>/dev/null || echo "/$dev/" >> .git/info/exclude
    du -sh "$dev"
    echo "device_check.sh: ready; on the GPU machine run: bash kernels/device_check.sh --run \"\$OUT\" (carry $dev)"
    ;;
--run)
    out=${2:?"usage: device_check.sh --run OUTDIR"}
    mkdir -p "$out"
    [ -x "$dev/kvstrata-device" ] || { echo "device_check.sh: no $dev/ (run --prepare here, carry $dev)" >&2; exit 2; }
    export LD_LIBRARY_PATH="$PWD/$dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    { date -u +%FT%TZ; nvidia-smi -q 2>&1 | head -60; "$dev/kvstrata-device" info; } > "$out/machine.txt" 2>&1
    "$dev/kvstrata-device" info
    rc=0
    timeout 300 "$dev/kernel_cuda" > "$out/kernel_cuda.txt" 2>&1 || rc=$?
    tail -5 "$out/kernel_cuda.txt"
    echo "kernel_cuda: exit $rc"
    if command -v compute-sanitizer > /dev/null; then
        timeout 300 compute-sanitizer --tool memcheck "$dev/kernel_cuda" > "$out/memcheck.txt" 2>&1 || true
        tail -3 "$out/memcheck.txt"
    fi
    timeout 400 "$dev/kvstrata-device" bench kernels --backend cuda --json --profile "$out/kernel_time.lua" \
        > "$out/bench.json" 2> "$out/bench.err" || { echo "bench kernels failed:"; tail -3 "$out/bench.err"; rc=1; }
    tail -c 600 "$out/bench.json"; echo
    exit "$rc"
    ;;
*)
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ]
    ;;
esac
