#!/usr/bin/env bash
# tests/results/io_full.sh KVSTRATA SCENARIO: writing a result or a trace onto a full
# file system (issue 16, class 4) ends in a clear error and a non-zero exit, leaves
# neither the file nor its partial PATH.part-PID, and never crashes (HDF5 1.10's exit
# handler used to segfault on the half-closed file: exit 139).
# The disk fills two ways: a file-size limit (ulimit -f, SIGXFSZ ignored: writes past it
# fail with EFBIG), which needs no privilege; and, where mount is permitted (root in a
# sandbox), a 16 KiB tmpfs (ENOSPC). Without mount only the first runs.
set -uo pipefail
ks=$1
sc=$2
dir=$(mktemp -d)
mnt=""
cleanup() { [ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "io_full: $*" >&2; exit 1; }

# expect NAME REASON CMD...: CMD fails with exit 1, says REASON, and leaves nothing in its folder
expect() {
    local name=$1 reason=$2 out=$3
    shift 3
    "$@" > "$dir/$name.out" 2> "$dir/$name.err"
    local rc=$?
    [ $rc -eq 1 ] || fail "$name: exit $rc, not 1: $(cat "$dir/$name.err")"
    grep -q -- "$reason" "$dir/$name.err" || fail "$name: no '$reason' in: $(cat "$dir/$name.err")"
    [ -z "$(ls -A "$out")" ] || fail "$name: left $(ls -A "$out")"
}

run_args=(run "$sc" --set duration=5s)
rec_args=(trace record "$sc" --requests 1 --steps 64 --set model.layers=2)

# 1. a file-size limit of 8 KiB: the result (about 28 KB) and the trace (about 14 KB) do not fit
mkdir -p "$dir/lim"
limited() { (trap '' XFSZ; ulimit -f 8; "$@"); }
expect limit_run "File too large" "$dir/lim" limited "$ks" "${run_args[@]}" -o "$dir/lim/out.h5"
expect limit_record "File too large" "$dir/lim" limited "$ks" "${rec_args[@]}" -o "$dir/lim/t.h5"

# 2. a full 16 KiB tmpfs, where this user may mount one
mkdir -p "$dir/mnt"
if mount -t tmpfs -o size=16k tmpfs "$dir/mnt" 2>/dev/null; then
    mnt="$dir/mnt"
    expect full_run "No space left on device" "$mnt" "$ks" "${run_args[@]}" -o "$mnt/out.h5"
    expect full_record "No space left on device" "$mnt" "$ks" "${rec_args[@]}" -o "$mnt/t.h5"
else
    echo "io_full: mount not permitted here: the tmpfs case is skipped" >&2
fi

# 3. the same commands with room to write succeed (the checks above can fail)
"$ks" "${run_args[@]}" -o "$dir/ok.h5" > /dev/null || fail "a run with room failed"
[ -s "$dir/ok.h5" ] || fail "a run with room wrote nothing"
exit 0
