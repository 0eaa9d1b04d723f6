#!/usr/bin/env bash
# fio_compare.sh - the SSD benchmark of `kvstrata calib host` against fio, the
# independent tool, on the same drive, sizes, queue depths, file size and
# O_DIRECT, through io_uring in both.
#
# Usage: calib/fio_compare.sh [--quick] [--tolerance R] [--kvstrata BIN] DIR
#   DIR          a directory on the drive (disk-backed: not tmpfs)
#   --quick      3 sizes x 2 queue depths, 256 MiB file, 0.1 s windows (seconds)
#   --tolerance  largest |ours - fio| / fio accepted per point (default 0.10)
#   --kvstrata   the kvstrata binary (default build/kvstrata)
# Runs `kvstrata calib host --json` (its DRAM part too; its profile goes to a
# temporary directory), then for every (read|write, size, queue depth) point
# one fio job: --rw=randread|randwrite --direct=1 --ioengine=io_uring
# --bs=SIZE --iodepth=QD --size=FILE --runtime=(3 windows) --time_based on a
# file of its own in DIR, and prints both throughputs and their relative
# difference. Exit 0 when every point agrees within the tolerance, 1 when
# one does not, 77 (skip) when fio or jq is missing or DIR refuses O_DIRECT,
# 2 on usage errors.
set -euo pipefail

quick=0 tol=0.10 bin=build/kvstrata
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; shift ;;
        --tolerance) tol=$2; shift 2 ;;
        --kvstrata) bin=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fio_compare.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: fio_compare.sh [--quick] [--tolerance R] [--kvstrata BIN] DIR" >&2; exit 2; }
dir=$1
command -v fio > /dev/null || { echo "fio_compare.sh: fio is not installed (apt-get install fio): skipped" >&2; exit 77; }
command -v jq > /dev/null || { echo "fio_compare.sh: jq is not installed (apt-get install jq): skipped" >&2; exit 77; }
[ -x "$bin" ] || { echo "fio_compare.sh: no kvstrata binary at $bin (--kvstrata)" >&2; exit 2; }

tmp=$(mktemp -d)
fiofile="$dir/ks_fio_$$.dat"
cleanup() { rm -rf "$tmp"; rm -f "$fiofile"; }
trap cleanup EXIT

args=(calib host --dir "$dir" -o "$tmp/fio_compare.lua" --json)
if [ "$quick" = 1 ]; then args+=(--quick --time 0.1 --file-size 256); mib=256; win=0.1; else mib=1024; win=0.15; fi
if ! "$bin" "${args[@]}" > "$tmp/ours.json" 2> "$tmp/ours.err"; then
    if grep -q "O_DIRECT\|tmpfs" "$tmp/ours.err"; then
        cat "$tmp/ours.err" >&2; echo "fio_compare.sh: $dir refuses O_DIRECT: skipped" >&2; exit 77
    fi
    cat "$tmp/ours.err" >&2; exit 1
fi
# fio's runtime: the three windows our benchmark spends on a point, at least 100 ms
runtime_ms=$(awk -v w="$win" 'BEGIN { r = int(3 * w * 1000 + 0.5); print (r < 100 ? 100 : r) }')

printf '%-6s %8s %4s %12s %12s %8s\n' op bytes qd ours_MB/s fio_MB/s diff
bad=0 n=0 worst=0
for op in read write; do
    rw=rand$op
    while read -r bytes qd ours; do
        fio --name=p --filename="$fiofile" --size="${mib}M" --direct=1 --ioengine=io_uring --rw="$rw" \
            --bs="$bytes" --iodepth="$qd" --runtime="${runtime_ms}ms" --time_based --randrepeat=0 \
            --output-format=json > "$tmp/fio.json" 2> "$tmp/fio.err" || { cat "$tmp/fio.err" >&2; exit 1; }
        theirs=$(jq ".jobs[0].$op.bw_bytes" "$tmp/fio.json")
        line=$(awk -v a="$ours" -v b="$theirs" -v t="$tol" 'BEGIN {
            d = (a - b) / b; ad = d < 0 ? -d : d
            printf "%12.1f %12.1f %+7.1f%% %s %.6f", a / 1e6, b / 1e6, 100 * d, (ad <= t ? "ok" : "MISS"), ad }')
        set -- $line
        printf '%-6s %8s %4s %12s %12s %8s %s\n' "$op" "$bytes" "$qd" "$1" "$2" "$3" "$4"
        n=$((n + 1))
        [ "$4" = ok ] || bad=$((bad + 1))
        worst=$(awk -v a="$worst" -v b="$5" 'BEGIN { print (b > a ? b : a) }')
    done < <(jq -r ".ssd_$op[] | \"\(.bytes) \(.qd) \(.bytes_per_s)\"" "$tmp/ours.json")
done
awk -v w="$worst" -v n="$n" -v b="$bad" -v t="$tol" 'BEGIN {
    printf "fio agreement: %d of %d points within %.0f%%, worst %.1f%%\n", n - b, n, 100 * t, 100 * w }'
[ "$bad" = 0 ]
