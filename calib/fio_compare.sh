#!/usr/bin/env bash
# fio_compare.sh - the SSD benchmark of `kvstrata calib host` against fio, the
# independent tool, on the same drive, sizes, queue depths, file size and
# O_DIRECT, through io_uring in both, with the same windows.
#
# Usage: calib/fio_compare.sh [--quick] [--tolerance R] [--kvstrata BIN] DIR
#   DIR          a directory on the drive (disk-backed: not tmpfs)
#   --quick      3 sizes x 2 queue depths, 256 MiB file, 0.05 s windows (seconds)
#   --tolerance  largest factor - 1 between ours and fio accepted per point, either way
#                (default 0.10: ours within fio x 1.1 and fio / 1.1)
#   --kvstrata   the kvstrata binary (default build/kvstrata)
# Runs `kvstrata calib host --json --time W` (W = 0.3 s, 0.05 s with --quick;
# its DRAM part too; its profile goes to a temporary directory): each SSD
# point is the median of 5 windows of W. Then for every (read|write, size,
# queue depth) point one fio job: --rw=randread|randwrite --direct=1
# --ioengine=io_uring --bs=SIZE --iodepth=QD --size=FILE --norandommap, a
# ramp of max(W, 0.5 s) (W with --quick; ours: the first QD completions),
# then --runtime=7W + 0.3 s --write_bw_log --log_avg_msec=W: fio's
# first 5 windows of W are kept (never its last entry, the part-window it
# writes at the end) and their median taken, on a file of its own in DIR. A
# point where fio logged fewer than 5 windows says so (column fio_n, and a
# line at the end); with none it takes fio's whole-run figure (fio_n "run").
# Prints both medians, their relative difference and
# each tool's slowest-fastest window, and says whether the two ranges overlap
# (the difference is within the tools' own noise) or lie apart. Exit 0 when
# every point agrees within the tolerance, 1 when one does not, 77 (skip)
# when fio or jq is missing or DIR refuses O_DIRECT, 2 on usage errors.
set -euo pipefail

quick=0 tol=0.10 bin=build/kvstrata
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; shift ;;
        --tolerance) tol=$2; shift 2 ;;
        --kvstrata) bin=$2; shift 2 ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
if [ "$quick" = 1 ]; then mib=256; win=0.05; args+=(--quick --file-size $mib); else mib=1024; win=0.3; fi
args+=(--time $win)
if ! "$bin" "${args[@]}" > "$tmp/ours.json" 2> "$tmp/ours.err"; then
    if grep -q "O_DIRECT\|tmpfs" "$tmp/ours.err"; then
        cat "$tmp/ours.err" >&2; echo "fio_compare.sh: $dir refuses O_DIRECT: skipped" >&2; exit 77
    fi
    cat "$tmp/ours.err" >&2; exit 1
fi
# NOTE: fio's windows are ours: 5 of W each, after a ramp that lets the queue
# fill (ours counts from the QD-th completion on; at 4 MiB x QD 64 the first
# completions come ~0.45 s after the start on the development VM). A single
# fio figure over the whole run, as this script once took, counted the ramp
# and set one 0.45 s run against our median of three 0.15 s windows.
# NOTE: fio does not log from the end of its ramp on: in fio 3.33 here, with
# --ramp_time=50ms --log_avg_msec=50 its first bandwidth entry came at 250 ms
# in most runs, at 50 ms in some (the ramp's end is noticed late), a tick is
# missed now and then on a loaded VM, and its last entry is the part-window
# up to the end of the run. --runtime=5W (0.25 s with --quick) logged 0 to 5
# entries a point, and the script fell back to fio's whole-run figure
# without saying so. So fio runs 5 windows, 2 spare ones and 0.3 s for the
# late start, and the first 5 entries are kept, never the last.
win_ms=$(awk -v w="$win" 'BEGIN { print int(1000 * w + 0.5) }')
ramp_ms=$((win_ms < 500 && quick == 0 ? 500 : win_ms)) # --quick: its largest point (1 MiB x QD 8) fills in ~15 ms
runtime_ms=$((7 * win_ms + 300))

printf '%-6s %8s %4s %10s %19s %10s %19s %5s %8s %s\n' op bytes qd ours_MB/s ours_windows fio_MB/s fio_windows fio_n \
    diff ranges
bad=0 n=0 worst=0 apart=0 short=
for op in read write; do
    rw=rand$op
    while read -r bytes qd ours lo hi; do
        rm -f "$tmp"/bw_bw*.log
        fio --name=p --filename="$fiofile" --size="${mib}M" --direct=1 --ioengine=io_uring --rw="$rw" \
            --bs="$bytes" --iodepth="$qd" --ramp_time="${ramp_ms}ms" --runtime="${runtime_ms}ms" --time_based \
            --randrepeat=0 --norandommap --write_bw_log="$tmp/bw" --log_avg_msec="$win_ms" \
            --output-format=json > "$tmp/fio.json" 2> "$tmp/fio.err" || { cat "$tmp/fio.err" >&2; exit 1; }
        # the first 5 windows' bandwidths (KiB/s in the log; the last entry, a
        # part-window, left out): median, slowest, fastest, how many
        read -r theirs tlo thi tn < <(cat "$tmp"/bw_bw*.log 2> /dev/null | awk -F', *' '{ e[m++] = 1024 * $2 } END {
            n = m - 1 < 5 ? m - 1 : 5
            if (n <= 0) { print "0 0 0 0"; exit }
            for (i = 0; i < n; i++) v[i] = e[i]
            for (i = 1; i < n; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            print v[int((n - 1) / 2)], v[0], v[n - 1], n }')
        if [ "$tn" = 0 ]; then
            theirs=$(jq ".jobs[0].$op.bw_bytes" "$tmp/fio.json"); tlo=$theirs thi=$theirs tn=run
        fi
        [ "$tn" = 5 ] || short="$short $op ${bytes}x$qd ($tn)"
        line=$(awk -v a="$ours" -v b="$theirs" -v t="$tol" -v alo="$lo" -v ahi="$hi" -v blo="$tlo" -v bhi="$thi" 'BEGIN {
            # a factor both ways: ours may be neither 1 + t times fio nor 1 / (1 + t) of it (nor 0)
            d = (a - b) / b; ad = a <= 0 || b <= 0 ? 1e300 : (a > b ? a / b : b / a) - 1
            printf "%10.1f %9.1f-%-9.1f %10.1f %9.1f-%-9.1f %+7.1f%% %s %s %.6f", a / 1e6, alo / 1e6, ahi / 1e6,
                b / 1e6, blo / 1e6, bhi / 1e6, 100 * d, (alo <= bhi && blo <= ahi ? "overlap" : "apart"),
                (ad <= t ? "ok" : "MISS"), ad }')
        set -- $line
        printf '%-6s %8s %4s %10s %19s %10s %19s %5s %8s %-7s %s\n' "$op" "$bytes" "$qd" "$1" "$2" "$3" "$4" "$tn" "$5" \
            "$6" "$7"
        n=$((n + 1))
        [ "$7" = ok ] || bad=$((bad + 1))
        [ "$6" = overlap ] || apart=$((apart + 1))
        worst=$(awk -v a="$worst" -v b="$8" 'BEGIN { print (b > a ? b : a) }')
    done < <(jq -r ".ssd_$op[] | \"\(.bytes) \(.qd) \(.bytes_per_s) \(.bytes_per_s_min) \(.bytes_per_s_max)\"" "$tmp/ours.json")
done
awk -v w="$worst" -v n="$n" -v b="$bad" -v t="$tol" -v a="$apart" 'BEGIN {
    printf "fio agreement: %d of %d points within %.0f%%, worst %.1f%%; at %d of %d points the two tools'"'"' ranges of windows lie apart\n", n - b, n, 100 * t, 100 * w, a, n }'
if [ -n "$short" ]; then
    echo "fio logged fewer than 5 windows at (op size x qd (windows; run: none, its whole-run figure taken)):$short"
else
    echo "fio logged 5 windows at every point"
fi
[ "$bad" = 0 ]
