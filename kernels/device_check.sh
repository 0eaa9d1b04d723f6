#!/usr/bin/env bash
# kernels/device_check.sh - the GPU checks of issues 4, 5 and 7 in one short
# run, for a lent GPU machine (an H200 through the project's `device` tool)
# that has the CUDA driver but none of the simulator's libraries and no
# network.
#
# Here, on the development machine (nvcc builds the kernels for sm_80/sm_90):
#   bash kernels/device_check.sh --prepare
# builds, then fills .device/ (git-ignored; carry it): kvstrata-device and the
# CUDA kernel test with libcmocka (they need nothing else), and bundle.tar.gz:
# kvstrata and the runtime's test with every shared library they load,
# glibc's loader included (and glibc's libdl, libpthread and librt, which
# the CUDA driver loads), so that they run whatever the machine's own
# libraries are (about 30 MB); and source.list / source.sha256, the sources
# it was built from: --run refuses a .device/ older than the tree. There:
#   bash kernels/device_check.sh --run "$OUT"
# writes into the folder (8 files at most, what the device tool brings back):
#   calib_gpu.lua    calib gpu: HBM, PCIe pinned/pageable, per-copy overhead, batched vs
#                    single copies, both directions (the measured H200 profile of issue 5)
#   kernel_cuda.txt  the CUDA kernels against the C references (test_kernel_cuda.c), then
#                    trace record --backend cuda and --backend ref with their trace stats
#   runtime.txt      the runtime's test: GPU mode against CPU mode (test_runtime.c)
#   sanitizer.txt    compute-sanitizer memcheck on both tests, racecheck on the runtime's
#   bench.json       bench kernels --backend cuda: every kernel, batch 1/8/32, 8..256
#                    blocks, 8/32/128 heads; the sparse kernel's bandwidth against a
#                    timed device copy (goal: >= 70% at >= 64 blocks and batch 32)
#   kernel_time.lua  that run's sparse decode times as a profile kernel_time table
#   validate.txt     validate --device gpu on l2_bound and ssd_bound (JSON objects one
#                    after the other), H200 datasheet profile, prefill free (as in the
#                    CPU profile)
#   log.txt          date, nvidia-smi -q, `info`, and everything else the commands printed
# in that order (the runtime first: it has never run on a GPU), each step
# given what is left of KS_DEVICE_BUDGET seconds (default 540) and skipped
# with a line in log.txt when too little is; and exits non-zero if a test
# failed or skipped (a GPU test that skips there means the GPU did not
# answer). About 6 minutes of device time; commit what comes back under
# results/ with the date and the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device

case "${1:-}" in
--prepare)
    set -e
    [ -f build/CMakeCache.txt ] || cmake -S . -B build -DKS_WERROR=ON
    cmake --build build -j "$(nproc)" --target kvstrata kvstrata-device kernels_cuda runtime_runtime
    info=$(build/kvstrata-device info) # whole: grep -q would end the pipe early (pipefail)
    grep -q "^cuda_kernels *yes" <<< "$info" ||
        { echo "device_check.sh: build/ has no CUDA kernels (nvcc missing, or -DKS_CUDA=OFF)" >&2; exit 1; }
    rm -rf "$dev"
    mkdir -p "$dev/bundle"
    cp build/kvstrata-device build/tests/kernels_cuda "$dev/"
    cp -L "$(ldconfig -p | awk '/libcmocka.so.0 /{print $NF; exit}')" "$dev/libcmocka.so.0"
    cp build/kvstrata build/tests/runtime_runtime "$dev/bundle/"
    for lib in $(ldd build/kvstrata build/tests/runtime_runtime | awk '/=>/ { print $3 } /ld-linux/ { print $1 }' | sort -u); do
        cp -L "$lib" "$dev/bundle/"
    done
    # what libcuda.so.1 loads from glibc: the bundle's glibc must have them
    for lib in libdl.so.2 libpthread.so.0 librt.so.1; do
        cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')" "$dev/bundle/"
    done
    tar -C "$dev" -czf "$dev/bundle.tar.gz" bundle
    rm -rf "$dev/bundle"
    git ls-files CMakeLists.txt kernels sim calib tests lua > "$dev/source.list"
    tr '\n' '\0' < "$dev/source.list" | xargs -0 sha256sum | sha256sum > "$dev/source.sha256"
    grep -qx "/$dev/" .git/info/exclude 2>/dev/null || echo "/$dev/" >> .git/info/exclude
    du -sh "$dev"
    echo "device_check.sh: ready; on the GPU machine: bash kernels/device_check.sh --run \"\$OUT\" (carry $dev)"
    ;;
--run)
    out=${2:?"usage: device_check.sh --run OUTDIR"}
    mkdir -p "$out"
    [ -x "$dev/kvstrata-device" ] || { echo "device_check.sh: no $dev/ (run --prepare here, carry $dev)" >&2; exit 2; }
    if ! tr '\n' '\0' < "$dev/source.list" | xargs -0 sha256sum 2> /dev/null | sha256sum | cmp -s - "$dev/source.sha256"; then
        echo "device_check.sh: $dev/ was built from other sources than this tree: run --prepare again and carry it" >&2
        exit 2
    fi
    deadline=$((SECONDS + ${KS_DEVICE_BUDGET:-540}))
    log=$out/log.txt
    rc=0
    # step NAME SECONDS_WANTED: prints the seconds the step may take, or
    # fails (saying so on stderr and in the log) when under 30 s are left
    step() {
        local left=$((deadline - SECONDS))
        if [ "$left" -lt 30 ]; then
            echo "$1: skipped, ${left}s left of the budget" | tee -a "$log" >&2
            return 1
        fi
        if [ "$left" -lt "$2" ]; then echo "$left"; else echo "$2"; fi
    }
    export LD_LIBRARY_PATH="$PWD/$dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    b=/tmp/ks_bundle
    rm -rf "$b" && mkdir -p "$b" && tar -C "$b" -xzf "$dev/bundle.tar.gz" && b=$b/bundle ||
        { echo "device_check.sh: cannot unpack $dev/bundle.tar.gz" >&2; exit 2; }
    # the bundled programs through the bundled loader; the machine's own
    # libraries (the CUDA driver) after the bundle's
    run_b=("$b/ld-linux-x86-64.so.2" --library-path "$b:$LD_LIBRARY_PATH")
    # kvstrata finds its profiles where it was built (KS_PROFILE_SRC_DIR)
    src=$(strings "$b/kvstrata" | grep -m1 '/calib/profiles$' | sed 's,/calib/profiles$,,')
    if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
    { date -u +%FT%TZ; nvidia-smi -q 2>&1 | head -60; "$dev/kvstrata-device" info; } > "$log" 2>&1
    "$dev/kvstrata-device" info
    # 1. the runtime's GPU mode against its CPU mode (never run before)
    if ! t=$(step runtime.runtime 150); then rc=1; else
        r=0
        KS_RUNTIME_DIR=$PWD timeout "$t" "${run_b[@]}" "$b/runtime_runtime" > "$out/runtime.txt" 2>&1 || r=$?
        echo "runtime.runtime: exit $r"; tail -8 "$out/runtime.txt"
        [ "$r" = 0 ] || rc=1
        grep -q SKIPPED "$out/runtime.txt" && { echo "runtime.runtime: a test skipped (no GPU answered?)"; rc=1; }
    fi
    # 2. validate --device gpu
    for s in l2_bound ssd_bound; do
        t=$(step "validate $s" 120) || { rc=1; continue; }
        timeout "$t" "${run_b[@]}" "$b/kvstrata" validate "scenarios/validation/$s.lua" --device gpu --dir "$PWD" --json \
            --set platform.profile=h200_sxm_pcie5 --set platform.hbm_bytes=24MB \
            --set platform.flops=1000000PFLOPS >> "$out/validate.txt" 2>> "$log" || { echo "validate $s failed"; rc=1; }
    done
    tail -c 400 "$out/validate.txt" 2> /dev/null; echo
    # 3. the CUDA kernels against the references
    if ! t=$(step kernels.cuda 120); then rc=1; else
        r=0
        timeout "$t" "$dev/kernels_cuda" > "$out/kernel_cuda.txt" 2>&1 || r=$?
        echo "kernels.cuda: exit $r"; tail -4 "$out/kernel_cuda.txt"
        [ "$r" = 0 ] || rc=1
        grep -q SKIPPED "$out/kernel_cuda.txt" && { echo "kernels.cuda: a test skipped (no GPU answered?)"; rc=1; }
    fi
    # 3b. trace record on the CUDA kernels (appended to kernel_cuda.txt): the
    # trace's stats, then the same recording on the references for comparison
    if ! t=$(step "trace record" 90); then rc=1; else
        for be in cuda ref; do
            echo "== trace record --backend $be" >> "$out/kernel_cuda.txt"
            timeout "$t" "${run_b[@]}" "$b/kvstrata" trace record tests/fixtures/scenarios/policies.lua --requests 2 --steps 32 \
                --backend "$be" -o "/tmp/ks_trace_$be.h5" --json >> "$out/kernel_cuda.txt" 2>> "$log" &&
                "${run_b[@]}" "$b/kvstrata" trace stats "/tmp/ks_trace_$be.h5" --json >> "$out/kernel_cuda.txt" 2>> "$log" ||
                { echo "trace record --backend $be failed"; rc=1; }
        done
    fi
    # 4. the kernel benchmark and the measured H200 profile
    if ! t=$(step "bench kernels" 200); then rc=1; else
        timeout "$t" "$dev/kvstrata-device" bench kernels --backend cuda --json --profile "$out/kernel_time.lua" \
            > "$out/bench.json" 2>> "$log" || { echo "bench kernels failed"; rc=1; }
        grep -o '"goal_ratio": [^,]*, "goal_met": [^,]*' "$out/bench.json"
    fi
    if ! t=$(step "calib gpu" 120); then rc=1; else
        timeout "$t" "${run_b[@]}" "$b/kvstrata" calib gpu -o "$out/calib_gpu.lua" >> "$log" 2>&1 ||
            { echo "calib gpu failed"; rc=1; }
        grep -E "^-- .*(hbm|pcie|overhead)" "$out/calib_gpu.lua" 2>/dev/null | head -6
    fi
    # 5. compute-sanitizer, last: the slowest and the least likely to matter
    if command -v compute-sanitizer > /dev/null; then
        for tool in "memcheck kernels_cuda" "memcheck runtime_runtime" "racecheck runtime_runtime"; do
            set -- $tool
            t=$(step "$1 $2" 150) || { rc=1; continue; }
            echo "== $1 $2" >> "$out/sanitizer.txt"
            if [ "$2" = kernels_cuda ]; then
                timeout "$t" compute-sanitizer --tool "$1" "$dev/kernels_cuda" >> "$out/sanitizer.txt" 2>&1
            else
                KS_RUNTIME_DIR=$PWD timeout "$t" compute-sanitizer --tool "$1" "${run_b[@]}" "$b/runtime_runtime" \
                    >> "$out/sanitizer.txt" 2>&1
            fi
        done
        grep -E "^==|ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer.txt"
    else
        echo "compute-sanitizer: not on this machine" | tee -a "$log"
    fi
    echo "device_check.sh: $((SECONDS))s, exit $rc"
    exit "$rc"
    ;;
*)
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ]
    ;;
esac
