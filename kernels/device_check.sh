#!/usr/bin/env bash
# kernels/device_check.sh - the GPU checks of issues 4, 5 and 7 in one short
# run, for a lent GPU machine (an H200 through the project's `device` tool)
# that has the CUDA driver but none of the simulator's libraries and no
# network.
#
# Here, on the development machine (nvcc builds the kernels for sm_80/sm_90):
#   bash kernels/device_check.sh --prepare
# builds, then fills .device/ (git-ignored; carry it): kvstrata-device and the
# CUDA kernel test with libcmocka (they need nothing else), and bundle.tar.xz:
# kvstrata and the runtime's test with every shared library they load,
# glibc's loader included, so that they run whatever the machine's own
# libraries are (about 20 MB). There:
#   bash kernels/device_check.sh --run "$OUT"
# writes into the folder (8 files at most, what the device tool brings back):
#   calib_gpu.lua    calib gpu: HBM, PCIe pinned/pageable, per-copy overhead, batched vs
#                    single copies, both directions (the measured H200 profile of issue 5)
#   kernel_cuda.txt  the CUDA kernels against the C references (test_kernel_cuda.c)
#   runtime.txt      the runtime's test: GPU mode against CPU mode (test_runtime.c)
#   sanitizer.txt    compute-sanitizer memcheck on both tests, racecheck on the runtime's
#   bench.json       bench kernels --backend cuda: every kernel, batch 1/8/32, 8..256
#                    blocks, 8/32/128 heads; the sparse kernel's bandwidth against a
#                    timed device copy (goal: >= 70% at >= 64 blocks and batch 32)
#   kernel_time.lua  that run's sparse decode times as a profile kernel_time table
#   validate.txt     validate --device gpu on l2_bound and ssd_bound (JSON, one a line),
#                    H200 datasheet profile, prefill free (as in the CPU profile)
#   log.txt          date, nvidia-smi -q, `info`, and everything else the commands printed
# and exits non-zero if a test failed. It needs about 6 minutes of device time;
# commit what comes back under results/ with the date and the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device

case "${1:-}" in
--prepare)
    set -e
    [ -f build/CMakeCache.txt ] || cmake -S . -B build -DKS_WERROR=ON
    cmake --build build -j "$(nproc)" --target kvstrata kvstrata-device kernel_cuda runtime_run
    build/kvstrata-device info | grep -q "^cuda_kernels *yes" ||
        { echo "device_check.sh: build/ has no CUDA kernels (nvcc missing, or -DKS_CUDA=OFF)" >&2; exit 1; }
    rm -rf "$dev"
    mkdir -p "$dev/bundle"
    cp build/kvstrata-device build/tests/kernel_cuda "$dev/"
    cp -L "$(ldconfig -p | awk '/libcmocka.so.0 /{print $NF; exit}')" "$dev/libcmocka.so.0"
    cp build/kvstrata build/tests/runtime_run "$dev/bundle/"
    for lib in $(ldd build/kvstrata build/tests/runtime_run | awk '/=>/ { print $3 } /ld-linux/ { print $1 }' | sort -u); do
        cp -L "$lib" "$dev/bundle/"
    done
    tar -C "$dev" -cJf "$dev/bundle.tar.xz" bundle
    rm -rf "$dev/bundle"
    grep -qx "/$dev/" .git/info/exclude 2>/dev/null || echo "/$dev/" >> .git/info/exclude
    du -sh "$dev"
    echo "device_check.sh: ready; on the GPU machine: bash kernels/device_check.sh --run \"\$OUT\" (carry $dev)"
    ;;
--run)
    out=${2:?"usage: device_check.sh --run OUTDIR"}
    mkdir -p "$out"
    [ -x "$dev/kvstrata-device" ] || { echo "device_check.sh: no $dev/ (run --prepare here, carry $dev)" >&2; exit 2; }
    log=$out/log.txt
    export LD_LIBRARY_PATH="$PWD/$dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    b=/tmp/ks_bundle
    rm -rf "$b" && mkdir -p "$b" && tar -C "$b" -xJf "$dev/bundle.tar.xz" && b=$b/bundle
    # the bundled programs through the bundled loader; the machine's own
    # libraries (the CUDA driver) after the bundle's
    run_b=("$b/ld-linux-x86-64.so.2" --library-path "$b:$LD_LIBRARY_PATH")
    # kvstrata finds its profiles where it was built (KS_PROFILE_SRC_DIR)
    src=$(strings "$b/kvstrata" | grep -m1 '/calib/profiles$' | sed 's,/calib/profiles$,,')
    if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
    { date -u +%FT%TZ; nvidia-smi -q 2>&1 | head -60; "$dev/kvstrata-device" info; } > "$log" 2>&1
    "$dev/kvstrata-device" info
    rc=0
    timeout 300 "$dev/kernel_cuda" > "$out/kernel_cuda.txt" 2>&1 || rc=$?
    echo "kernel_cuda: exit $rc"; tail -4 "$out/kernel_cuda.txt"
    r=0
    timeout 300 "${run_b[@]}" "$b/runtime_run" > "$out/runtime.txt" 2>&1 || r=$?
    echo "runtime_run: exit $r"; tail -6 "$out/runtime.txt"; [ "$r" = 0 ] || rc=$r
    if command -v compute-sanitizer > /dev/null; then
        {
            echo "== memcheck kernel_cuda"; timeout 300 compute-sanitizer --tool memcheck "$dev/kernel_cuda" 2>&1 | tail -5
            echo "== memcheck runtime_run"; timeout 300 compute-sanitizer --tool memcheck "${run_b[@]}" "$b/runtime_run" 2>&1 | tail -5
            echo "== racecheck runtime_run"; timeout 300 compute-sanitizer --tool racecheck "${run_b[@]}" "$b/runtime_run" 2>&1 | tail -5
        } > "$out/sanitizer.txt" 2>&1
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer.txt"
    fi
    timeout 400 "$dev/kvstrata-device" bench kernels --backend cuda --json --profile "$out/kernel_time.lua" \
        > "$out/bench.json" 2>> "$log" || { echo "bench kernels failed"; rc=1; }
    grep -o '"goal_ratio": [^,]*, "goal_met": [^,]*' "$out/bench.json"
    timeout 300 "${run_b[@]}" "$b/kvstrata" calib gpu -o "$out/calib_gpu.lua" >> "$log" 2>&1 ||
        { echo "calib gpu failed"; rc=1; }
    grep -E "^-- .*(hbm|pcie|overhead)" "$out/calib_gpu.lua" 2>/dev/null | head -6
    for s in l2_bound ssd_bound; do
        timeout 300 "${run_b[@]}" "$b/kvstrata" validate "scenarios/validation/$s.lua" --device gpu --dir "$PWD" --json \
            --set platform.profile=h200_sxm_pcie5 --set platform.hbm_bytes=24MB \
            --set platform.flops=1000000PFLOPS >> "$out/validate.txt" 2>> "$log" || { echo "validate $s failed"; rc=1; }
    done
    tail -c 400 "$out/validate.txt"; echo
    exit "$rc"
    ;;
*)
    sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ]
    ;;
esac
