#!/usr/bin/env bash
# tests/scenario/hostile_no_side_effect.sh KVSTRATA HOSTILE_DIR: scenarios that
# would write a file, start a process or load a C library (through os, io or
# package) are refused with exit 2 by `scenario check`, `run` and `sweep`, name
# what the sandbox removed, and leave nothing behind in their working folder.
set -uo pipefail
ks=$1
hostile=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/cwd" && cd "$dir/cwd" || exit 1
fail=0
check() { # WANT_TEXT COMMAND...
    local want=$1
    shift
    "$ks" "$@" > out.txt 2> err.txt
    local rc=$?
    if [ "$rc" != 2 ]; then
        echo "hostile: '$*' exited $rc; expected 2" >&2
        fail=1
    fi
    if ! grep -qF -- "$want" err.txt; then
        echo "hostile: '$*' stderr lacks '$want':" >&2
        cat err.txt >&2
        fail=1
    fi
    if [ -s out.txt ]; then
        echo "hostile: '$*' printed on stdout" >&2
        fail=1
    fi
    rm -f out.txt err.txt
    if [ -n "$(ls -A)" ]; then
        echo "hostile: '$*' left files behind: $(ls -A)" >&2
        fail=1
        rm -rf ./*
    fi
}
for f in os_execute:os io_open_write:io io_popen:io loadlib:package; do
    name=${f%%:*} lib=${f#*:}
    check "$name.lua:2: '$lib' is not available" scenario check "$hostile/$name.lua"
    check "'$lib' is not available" run "$hostile/$name.lua" -o out.h5
done
# a sweep whose base scenario is hostile fails at its point, before any run
cat > "$dir/sweep.lua" <<EOS
return {name = "hostile", base = "$hostile/io_open_write.lua"}
EOS
check "'io' is not available" sweep "$dir/sweep.lua" --dry-run
check "'io' is not available" sweep "$dir/sweep.lua" -o out
[ "$fail" = 0 ] && echo "hostile: no side effect"
exit "$fail"
