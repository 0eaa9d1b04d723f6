#!/usr/bin/env bash
# tests/cli/output_guard.sh KVSTRATA SCENARIO_DIR: -o never destroys an input of the
# run (the files a scenario includes among them) or anything that is not a regular
# file, and a scenario's name never leads a result out of results/ (issue 16,
# class 6). Each refusal: exit 1, a message naming
# the reason, the target untouched. A FIFO given as the scenario is refused at once
# (exit 2) instead of blocking.
set -uo pipefail
ks=$1
scd=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "output_guard: $*" >&2; exit 1; }
cp "$scd/closed_form.lua" "$dir/sc.lua"
cp "$scd/policies.lua" "$dir/pol.lua"
sum() { md5sum < "$1"; }

# refused NAME REASON TARGET CMD...: exit 1 with REASON, TARGET unchanged
refused() {
    local name=$1 reason=$2 target=$3
    shift 3
    local before
    before=$(stat -c '%F %i' "$target")
    [ -f "$target" ] && before="$before $(sum "$target")"
    timeout 60 "$@" > "$dir/$name.out" 2> "$dir/$name.err"
    local rc=$?
    [ $rc -eq 1 ] || fail "$name: exit $rc, not 1: $(cat "$dir/$name.err")"
    grep -q -- "$reason" "$dir/$name.err" || fail "$name: no '$reason' in: $(cat "$dir/$name.err")"
    local after
    after=$(stat -c '%F %i' "$target")
    [ -f "$target" ] && after="$after $(sum "$target")"
    [ "$before" = "$after" ] || fail "$name: $target changed ($before -> $after)"
}

# the scenario being run, by its name and through a symbolic link
refused run_self "an input of this run" "$dir/sc.lua" "$ks" run "$dir/sc.lua" -o "$dir/sc.lua"
ln -s sc.lua "$dir/link.h5"
refused run_self_link "an input of this run" "$dir/sc.lua" "$ks" run "$dir/sc.lua" -o "$dir/link.h5"
refused record_self "an input of this run" "$dir/pol.lua" \
    "$ks" trace record "$dir/pol.lua" --requests 1 --steps 4 -o "$dir/pol.lua"
# a file the scenario includes (include "FILE.lua", relative to the scenario's folder)
printf 'return include "sc.lua"\n' > "$dir/wrap.lua"
refused run_included "an input of this run" "$dir/sc.lua" "$ks" run "$dir/wrap.lua" -o "$dir/sc.lua"
# the trace a run replays
"$ks" trace record "$dir/pol.lua" --requests 1 --steps 8 -o "$dir/t.h5" > /dev/null || fail "trace record failed"
refused run_trace "an input of this run" "$dir/t.h5" \
    "$ks" run "$dir/pol.lua" --set sparse.policy=trace --set sparse.file="$dir/t.h5" -o "$dir/t.h5"
# not regular files: a folder, a FIFO, a device node (made here: never a real /dev entry)
mkdir "$dir/folder"
refused run_folder "is a folder, not a regular file" "$dir/folder" "$ks" run "$dir/sc.lua" -o "$dir/folder"
mkfifo "$dir/fifo"
refused run_fifo "is a FIFO, not a regular file" "$dir/fifo" "$ks" run "$dir/sc.lua" -o "$dir/fifo"
if mknod "$dir/null" c 1 3 2> /dev/null; then
    refused run_device "is a device, not a regular file" "$dir/null" "$ks" run "$dir/sc.lua" -o "$dir/null"
    [ -c "$dir/null" ] || fail "run_device: the device node is gone"
else
    echo "output_guard: mknod not permitted here: the device case is skipped" >&2
fi

# a FIFO as the scenario: refused at once, not a blocked read
timeout 20 "$ks" run "$dir/fifo" > "$dir/fifo_sc.out" 2> "$dir/fifo_sc.err"
rc=$?
[ $rc -eq 2 ] || fail "fifo scenario: exit $rc, not 2: $(cat "$dir/fifo_sc.err")"
grep -q "fifo: is a FIFO, not a regular file" "$dir/fifo_sc.err" || fail "fifo scenario: $(cat "$dir/fifo_sc.err")"

# a scenario named ../../x: its default result stays in results/
mkdir -p "$dir/a/b"
(cd "$dir/a/b" && "$ks" run "$dir/sc.lua" --set 'name=../../x' > /dev/null 2> "$dir/name.err") ||
    fail "name: $(cat "$dir/name.err")"
[ ! -e "$dir/x.h5" ] || fail "name: the result escaped to $dir/x.h5"
n=$(find "$dir/a/b/results" -type f -name '*.h5' | wc -l)
[ "$n" = 1 ] || fail "name: $n results under results/: $(find "$dir/a" -type f)"

# and a regular output that is no input is written
"$ks" run "$dir/sc.lua" -o "$dir/ok.h5" > /dev/null || fail "a plain -o failed"
[ -s "$dir/ok.h5" ] || fail "a plain -o wrote nothing"
exit 0
