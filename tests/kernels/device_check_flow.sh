#!/usr/bin/env bash
# tests/kernels/device_check_flow.sh BUILD_DIR - kernels/device_check.sh on a
# machine without a GPU: the flow the lent machine will run (issue 22).
# --prepare bundles the four programs from BUILD_DIR (their targets are
# built already: a no-op build) into a folder that fits the device tool's
# carry limit; --run then goes through every step fast, since nothing
# answers on a GPU, and must: order the steps kernel test, benchmark,
# calibration, traces, then the runtime and validate (never run on a GPU)
# and the sanitizer; write at most the seven files it names; list every goal
# once in summary.txt; fail (exit 1) because the GPU goals cannot be met;
# and still meet what needs no GPU (trace record --backend ref). A .device/
# built from other sources is refused (exit 2). Exits 77 (skipped) where the
# build has no CUDA kernels.
set -uo pipefail
build=$(cd "${1:?usage: device_check_flow.sh BUILD_DIR}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "device_check_flow: $*" >&2; exit 1; }

# (the info read whole first: grep -q leaving a pipe early killed the writer, and
# pipefail took that for "no kernels")
info=$("$build/kvstrata-device" info 2> /dev/null) || true
grep -q "^cuda_kernels *yes" <<< "$info" ||
    { echo "device_check_flow: no CUDA kernels in this build: skipped"; exit 77; }
[ -d "$root/.git" ] || { echo "device_check_flow: not a git checkout (--prepare lists its sources with git): skipped"; exit 77; }

export KS_BUILD_DIR=$build KS_DEVICE_DIR=$tmp/dev
bash "$root/kernels/device_check.sh" --prepare > "$tmp/prepare.txt" 2>&1 || { cat "$tmp/prepare.txt"; fail "--prepare failed"; }
bytes=$(du -sb "$tmp/dev" | cut -f1)
[ "$bytes" -lt $((60 * 1024 * 1024)) ] || fail "the bundle takes $bytes B: over the device tool's 64 MiB carry limit"
for f in bundle.tar.gz source_dir source.list source.sha256; do
    [ -s "$tmp/dev/$f" ] || fail "--prepare left no $f"
done
tar -tzf "$tmp/dev/bundle.tar.gz" > "$tmp/list.txt" || fail "bundle.tar.gz does not read"
for p in kvstrata kvstrata-device kernels_cuda runtime_gpu_wrappers runtime_runtime ld-linux-x86-64.so.2 libc.so.6; do
    grep -qx "bundle/$p" "$tmp/list.txt" || fail "bundle.tar.gz lacks $p"
done

rc=0
KS_DEVICE_BUDGET=400 bash "$root/kernels/device_check.sh" --run "$tmp/out" > "$tmp/run.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/run.txt"; fail "--run exited $rc without a GPU (1 expected: GPU goals missed)"; }
out=$tmp/out
n=$(find "$out" -type f | wc -l)
[ "$n" -le 7 ] || fail "--run wrote $n files (7 at most come back)"
for f in $(cd "$out" && ls); do
    case "$f" in
    summary.txt | log.txt | kernel_cuda.txt | bench.json | kernel_time.lua | calib_gpu.lua | runtime.txt) ;;
    *) fail "--run wrote $f, which its header does not name" ;;
    esac
done
for f in summary.txt log.txt kernel_cuda.txt runtime.txt; do
    [ -s "$out/$f" ] || fail "$f is empty or missing"
done
goals=("CUDA kernels match the C references" "CUDA wrappers: streams, events, copies, pinned memory"
    "sparse decode >= 70% of a device copy"
    "calib gpu: the measured profile" "trace record --backend cuda" "trace record --backend ref"
    "runtime: GPU mode agrees with CPU mode" "validate --device gpu l2_bound" "validate --device gpu ssd_bound"
    "compute-sanitizer memcheck kernels_cuda" "compute-sanitizer memcheck runtime_runtime"
    "compute-sanitizer racecheck runtime_runtime")
for g in "${goals[@]}"; do
    [ "$(grep -cF "$g" "$out/summary.txt")" = 1 ] || { cat "$out/summary.txt"; fail "summary.txt lists \"$g\" other than once"; }
done
[ "$(wc -l < "$out/summary.txt")" = "${#goals[@]}" ] || { cat "$out/summary.txt"; fail "summary.txt has other lines"; }
grep -F "CUDA kernels match the C references" "$out/summary.txt" | grep -q " missed " ||
    fail "the kernel test cannot pass without a GPU, yet summary.txt does not say missed"
grep -F "runtime: GPU mode agrees with CPU mode" "$out/summary.txt" | grep -q " missed " ||
    fail "the runtime's GPU test cannot pass without a GPU, yet summary.txt does not say missed"
grep -F "trace record --backend ref" "$out/summary.txt" | grep -q " met " ||
    { cat "$out/summary.txt"; fail "trace record --backend ref needs no GPU, yet it is not met"; }
# the steps in their order: what must not be lost first, the never-run runtime after
order=$(grep -oE '^== step [a-z.]+( [a-z0-9_]+)?' "$out/log.txt" | sed 's/^== step //' | tr '\n' ',')
want="kernels.cuda,gpu.wrappers,bench kernels,calib gpu,trace record,runtime.runtime,validate l2_bound,validate ssd_bound,"
case "$order" in
"$want"*) ;;
*) fail "steps ran in the order $order (want $want then the sanitizer)" ;;
esac
grep -q "^L3 folder (O_DIRECT): /" "$out/log.txt" || fail "log.txt does not name the L3 folder the probe chose"

# a .device/ built from other sources is refused
echo "0  -" > "$tmp/dev/source.sha256"
rc=0
bash "$root/kernels/device_check.sh" --run "$tmp/out2" > "$tmp/stale.txt" 2>&1 || rc=$?
if [ "$rc" != 2 ] || ! grep -q "built from other sources" "$tmp/stale.txt"; then
    fail "a stale .device/ was not refused (exit $rc)"
fi
echo "device_check_flow: ok (${#goals[@]} goals, $n files, order $order)"
