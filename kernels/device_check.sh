#!/usr/bin/env bash
# kernels/device_check.sh - the GPU checks in one short run, for a lent GPU
# machine (an H200 through the project's `device` tool) that has the CUDA
# driver but none of the simulator's libraries, no network, and perhaps not
# even binutils or jq.
#
# Here, on the development machine (nvcc builds the kernels for sm_80/sm_90):
#   bash kernels/device_check.sh --prepare
# builds (in $KS_BUILD_DIR, default build/), then fills .device/ ($KS_DEVICE_DIR;
# git-ignored; carry it): bundle.tar.gz, with kvstrata, kvstrata-device, the
# CUDA kernel test, the wrappers' test and the runtime's test and every
# shared library they load,
# glibc's loader included (and glibc's libdl, libpthread and librt, which the
# CUDA driver loads), so that each runs through that loader whatever the
# machine's own libraries are (about 30 MB); source_dir, the folder they were
# built from (where kvstrata looks for its profiles and the tests for their
# fixtures); and source.list / source.sha256, the sources: --run refuses a
# .device/ built from other sources than the tree it runs in. There:
#   bash kernels/device_check.sh --run "$OUT"
# runs, in this order, each step given what is left of KS_DEVICE_BUDGET
# seconds (default 540) and skipped with a line in the log when under 30 s
# are left (what has never run on a GPU goes after what must not be lost):
#   1. the CUDA kernels against the C references (test_kernel_cuda.c), then
#      the stream, event, copy and pinned-memory wrappers (test_gpu_wrappers.c)
#   2. bench kernels --backend cuda: every kernel, batch 1/8/32, 8..256 blocks,
#      8/32/128 heads, the sparse kernel's bandwidth against a timed device
#      copy (goal: >= 70% at >= 64 blocks and batch 32), and its times as a
#      profile kernel_time table
#   3. calib gpu: HBM, PCIe pinned/pageable, per-copy overhead, batched vs
#      single copies, both directions (the measured H200 profile)
#   4. trace record --backend cuda and --backend ref, with their trace stats
#   5. the runtime's GPU test: GPU mode against CPU mode (runtime_runtime gpu,
#      test_runtime.c)
#   6. validate --device gpu on l2_bound and ssd_bound, H200 datasheet profile
#   7. compute-sanitizer memcheck on both tests, racecheck on the runtime's
# The runtime's L3 file goes to the first of $PWD, /var/tmp, /tmp that takes
# an O_DIRECT write (dd oflag=direct); io_uring disabled by the kernel
# (/proc/sys/kernel/io_uring_disabled) is said in the log and the summary.
# It writes 7 files into OUT (the device tool brings back what it finds):
#   summary.txt      every goal, one line each: met, missed or skipped, and why
#   log.txt          date, nvidia-smi -q, the probes, each step's command and exit
#   kernel_cuda.txt  steps 1 (both tests), 4 and the kernel test's memcheck
#   bench.json       step 2 (JSON)
#   kernel_time.lua  step 2's profile table
#   calib_gpu.lua    step 3
#   runtime.txt      steps 5 and 6 (validate's JSON objects one after the
#                    other) and the runtime test's memcheck and racecheck
# and exits non-zero if a goal was missed or skipped: a GPU test that skips
# there means the GPU did not answer the bundled programs. On a machine
# without a GPU the same run is the check of its flow (tests/kernels:
# device_check_flow): every goal comes out missed or skipped, fast. Commit
# what comes back under results/ with the date and the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
dev=${KS_DEVICE_DIR:-.device}
build=${KS_BUILD_DIR:-build}
programs=(kvstrata kvstrata-device kernels_cuda runtime_gpu_wrappers runtime_runtime)

# where the build put each program
built() {
    case "$1" in
    kvstrata | kvstrata-device) echo "$build/$1" ;;
    *) echo "$build/tests/$1" ;;
    esac
}

case "${1:-}" in
--prepare)
    set -e
    [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DKS_WERROR=ON
    cmake --build "$build" -j "$(nproc)" --target "${programs[@]}"
    info=$("$build/kvstrata-device" info) # whole: grep -q would end the pipe early (pipefail)
    grep -q "^cuda_kernels *yes" <<< "$info" ||
        { echo "device_check.sh: $build/ has no CUDA kernels (nvcc missing, or -DKS_CUDA=OFF)" >&2; exit 1; }
    rm -rf "$dev"
    mkdir -p "$dev/bundle"
    paths=()
    for p in "${programs[@]}"; do paths+=("$(built "$p")"); done
    cp "${paths[@]}" "$dev/bundle/"
    for lib in $(ldd "${paths[@]}" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }' | sort -u); do
        cp -L "$lib" "$dev/bundle/"
    done
    # what libcuda.so.1 loads from glibc: the bundle's glibc must have them
    for lib in libdl.so.2 libpthread.so.0 librt.so.1; do
        cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')" "$dev/bundle/"
    done
    [ -e "$dev/bundle/ld-linux-x86-64.so.2" ] || { echo "device_check.sh: no glibc loader found by ldd" >&2; exit 1; }
    tar -C "$dev" -czf "$dev/bundle.tar.gz" bundle
    rm -rf "$dev/bundle"
    pwd > "$dev/source_dir"
    git ls-files CMakeLists.txt kernels sim calib tests lua > "$dev/source.list"
    tr '\n' '\0' < "$dev/source.list" | xargs -0 sha256sum | sha256sum > "$dev/source.sha256"
    if [ "$dev" = .device ]; then
        grep -qx "/$dev/" .git/info/exclude 2> /dev/null || echo "/$dev/" >> .git/info/exclude
    fi
    du -sh "$dev"
    echo "device_check.sh: ready; on the GPU machine: bash kernels/device_check.sh --run \"\$OUT\" (carry $dev)"
    ;;
--run)
    out=${2:?"usage: device_check.sh --run OUTDIR"}
    mkdir -p "$out" || exit 2
    [ -f "$dev/bundle.tar.gz" ] || { echo "device_check.sh: no $dev/bundle.tar.gz (run --prepare here, carry $dev)" >&2; exit 2; }
    if ! tr '\n' '\0' < "$dev/source.list" | xargs -0 sha256sum 2> /dev/null | sha256sum | cmp -s - "$dev/source.sha256"; then
        echo "device_check.sh: $dev/ was built from other sources than this tree: run --prepare again and carry it" >&2
        exit 2
    fi
    deadline=$((SECONDS + ${KS_DEVICE_BUDGET:-540}))
    log=$out/log.txt summary=$out/summary.txt kc=$out/kernel_cuda.txt rt=$out/runtime.txt
    : > "$summary"
    : > "$kc"
    : > "$rt"
    rc=0
    # goal NAME met|missed|skipped WHY: one line of summary.txt; anything but
    # met fails the run
    goal() {
        printf '%-58s %-7s %s\n' "$1" "$2" "$3" | tee -a "$summary"
        [ "$2" = met ] || rc=1
    }
    # step NAME SECONDS_WANTED: prints the seconds the step may take, or
    # fails (saying so in the log) when under 30 s are left
    step() {
        local left=$((deadline - SECONDS))
        echo "== step $1 ($left s left of the budget)" >> "$log"
        if [ "$left" -lt 30 ]; then
            echo "$1: skipped, ${left}s left of the budget" >> "$log"
            return 1
        fi
        if [ "$left" -lt "$2" ]; then echo "$left"; else echo "$2"; fi
    }
    # tested FILE EXIT: met when the test program exited 0 and skipped none
    tested() {
        if [ "$2" != 0 ]; then echo "missed exit $2"
        elif grep -q SKIPPED "$1"; then echo "missed a test skipped (did the GPU answer?)"
        else echo "met passed"; fi
    }
    work=$(mktemp -d "${TMPDIR:-/tmp}/ks_bundle.XXXXXX") || exit 2
    trap 'rm -rf "$work"' EXIT
    b=$work
    if ! tar -C "$b" -xzf "$dev/bundle.tar.gz"; then
        echo "device_check.sh: cannot unpack $dev/bundle.tar.gz" >&2
        exit 2
    fi
    b=$work/bundle
    # every program through the bundled loader; the machine's own libraries
    # (the CUDA driver) after the bundle's
    ld=("$b/ld-linux-x86-64.so.2" --library-path "$b${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    # the programs find profiles and fixtures where they were built
    src=$(cat "$dev/source_dir")
    if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
    { date -u +%FT%TZ; nvidia-smi -q 2>&1 | head -60
      nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.max.sm,clocks.max.mem --format=csv 2>&1
      nproc; grep -m1 "model name" /proc/cpuinfo; "${ld[@]}" "$b/kvstrata-device" info; } > "$log" 2>&1
    # the runtime's L3 folder: the first that takes an O_DIRECT write
    l3=""
    for d in "$PWD" /var/tmp /tmp; do
        if dd if=/dev/zero of="$d/ks_direct_probe" bs=4096 count=1 oflag=direct 2>> "$log"; then
            rm -f "$d/ks_direct_probe"
            l3=$d
            break
        fi
        rm -f "$d/ks_direct_probe"
    done
    echo "L3 folder (O_DIRECT): ${l3:-none}" >> "$log"
    uring=enabled
    if [ -r /proc/sys/kernel/io_uring_disabled ] && [ "$(cat /proc/sys/kernel/io_uring_disabled)" != 0 ]; then
        uring="disabled (/proc/sys/kernel/io_uring_disabled)"
    fi
    echo "io_uring: $uring" >> "$log"

    # 1. the CUDA kernels against the references
    if t=$(step kernels.cuda 120); then
        r=0
        timeout "$t" "${ld[@]}" "$b/kernels_cuda" > "$kc" 2>&1 || r=$?
        echo "kernels.cuda: exit $r" >> "$log"
        read -r v why <<< "$(tested "$kc" "$r")"
        goal "CUDA kernels match the C references" "$v" "$why"
    else goal "CUDA kernels match the C references" skipped "out of time"; fi
    # 1b. the stream, event, copy and pinned-memory wrappers the runtime's GPU mode uses
    if t=$(step gpu.wrappers 30); then
        r=0
        timeout "$t" "${ld[@]}" "$b/runtime_gpu_wrappers" > "$work/wrappers.txt" 2>&1 || r=$?
        echo "gpu.wrappers: exit $r" >> "$log"
        read -r v why <<< "$(tested "$work/wrappers.txt" "$r")"
        { echo "== runtime_gpu_wrappers"; cat "$work/wrappers.txt"; } >> "$kc"
        goal "CUDA wrappers: streams, events, copies, pinned memory" "$v" "$why"
    else goal "CUDA wrappers: streams, events, copies, pinned memory" skipped "out of time"; fi
    # 2. the kernel benchmark, its bandwidth goal and the profile table
    if t=$(step "bench kernels" 150); then
        r=0
        timeout "$t" "${ld[@]}" "$b/kvstrata-device" bench kernels --backend cuda --json --profile "$out/kernel_time.lua" \
            > "$out/bench.json" 2>> "$log" || r=$?
        echo "bench kernels: exit $r" >> "$log"
        met=$(grep -oE '"goal_met": *(true|false)' "$out/bench.json" | grep -oE '(true|false)$' | head -1)
        ratio=$(grep -oE '"goal_ratio": *[-0-9.eE+]+' "$out/bench.json" | grep -oE '[-0-9.eE+]+$' | head -1)
        if [ "$r" != 0 ]; then goal "sparse decode >= 70% of a device copy (>= 64 blocks, batch 32)" missed "exit $r"
        elif [ "$met" = true ]; then goal "sparse decode >= 70% of a device copy (>= 64 blocks, batch 32)" met "ratio $ratio"
        else goal "sparse decode >= 70% of a device copy (>= 64 blocks, batch 32)" missed "ratio ${ratio:-none}"; fi
    else goal "sparse decode >= 70% of a device copy (>= 64 blocks, batch 32)" skipped "out of time"; fi
    # 3. the measured profile
    if t=$(step "calib gpu" 90); then
        r=0
        timeout "$t" "${ld[@]}" "$b/kvstrata" calib gpu -o "$out/calib_gpu.lua" >> "$log" 2>&1 || r=$?
        echo "calib gpu: exit $r" >> "$log"
        if [ "$r" = 0 ] && [ -s "$out/calib_gpu.lua" ]; then goal "calib gpu: the measured profile" met "calib_gpu.lua"
        else goal "calib gpu: the measured profile" missed "exit $r"; fi
    else goal "calib gpu: the measured profile" skipped "out of time"; fi
    # 4. trace record on the CUDA kernels, then on the references
    if t=$(step "trace record" 60); then
        for be in cuda ref; do
            r=0
            echo "== trace record --backend $be" >> "$kc"
            timeout "$t" "${ld[@]}" "$b/kvstrata" trace record tests/fixtures/scenarios/policies.lua --requests 2 --steps 32 \
                --backend "$be" -o "$work/trace_$be.h5" --json >> "$kc" 2>> "$log" &&
                "${ld[@]}" "$b/kvstrata" trace stats "$work/trace_$be.h5" --json >> "$kc" 2>> "$log" || r=$?
            echo "trace record --backend $be: exit $r" >> "$log"
            if [ "$r" = 0 ]; then goal "trace record --backend $be" met "stats in kernel_cuda.txt"
            else goal "trace record --backend $be" missed "exit $r"; fi
        done
    else goal "trace record --backend cuda" skipped "out of time"; fi
    # 5. the runtime's GPU mode against its CPU mode
    if [ -z "$l3" ]; then goal "runtime: GPU mode agrees with CPU mode" skipped "no folder takes O_DIRECT"
    elif t=$(step runtime.runtime 60); then
        r=0
        KS_RUNTIME_DIR=$l3 timeout "$t" "${ld[@]}" "$b/runtime_runtime" gpu >> "$rt" 2>&1 || r=$?
        echo "runtime.runtime: exit $r" >> "$log"
        read -r v why <<< "$(tested "$rt" "$r")"
        goal "runtime: GPU mode agrees with CPU mode" "$v" "$why (io_uring $uring)"
    else goal "runtime: GPU mode agrees with CPU mode" skipped "out of time"; fi
    # 6. validate --device gpu
    for s in l2_bound ssd_bound; do
        if [ -z "$l3" ]; then goal "validate --device gpu $s" skipped "no folder takes O_DIRECT"; continue; fi
        t=$(step "validate $s" 60) || { goal "validate --device gpu $s" skipped "out of time"; continue; }
        r=0
        echo "== validate --device gpu $s" >> "$rt"
        timeout "$t" "${ld[@]}" "$b/kvstrata" validate "scenarios/validation/$s.lua" --device gpu --dir "$l3" --json \
            --set platform.profile=h200_sxm_pcie5 --set platform.hbm_bytes=24MB \
            --set platform.flops=1000000PFLOPS >> "$rt" 2>> "$log" || r=$?
        echo "validate $s: exit $r" >> "$log"
        if [ "$r" = 0 ]; then goal "validate --device gpu $s" met "JSON in runtime.txt"
        else goal "validate --device gpu $s" missed "exit $r"; fi
    done
    # 7. compute-sanitizer, last: the slowest; any error it reports fails the run
    for tool in "memcheck kernels_cuda" "memcheck runtime_runtime" "racecheck runtime_runtime"; do
        read -r tl prog <<< "$tool"
        name="compute-sanitizer $tl $prog: no error"
        if ! command -v compute-sanitizer > /dev/null; then goal "$name" skipped "compute-sanitizer not on this machine"; continue; fi
        t=$(step "$tl $prog" 60) || { goal "$name" skipped "out of time"; continue; }
        f=$kc arg=""
        [ "$prog" = runtime_runtime ] && f=$rt arg=gpu # its GPU case (its CPU cases run in CI)
        echo "== compute-sanitizer --tool $tl $prog" >> "$f"
        r=0
        KS_RUNTIME_DIR=${l3:-/tmp} timeout "$t" compute-sanitizer --tool "$tl" --error-exitcode 99 \
            "${ld[@]}" "$b/$prog" ${arg:+"$arg"} >> "$f" 2>&1 || r=$?
        echo "compute-sanitizer $tl $prog: exit $r" >> "$log"
        found=$(tail -n 40 "$f" | grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+' | tail -1 | grep -oE '[0-9]+$')
        if [ "$r" = 0 ] && [ "${found:-0}" = 0 ]; then goal "$name" met "0 reported"
        else goal "$name" missed "exit $r, ${found:-?} reported"; fi
    done
    echo "device_check.sh: ${SECONDS}s, exit $rc" | tee -a "$log"
    exit "$rc"
    ;;
*)
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ]
    ;;
esac
