#!/usr/bin/env bash
# tests/bench/bench_profile_check.sh KVSTRATA [ARGS...]: `kvstrata bench kernels
# ARGS... --profile FILE` writes a Lua file that loads (with lua5.4, when
# installed) into a measured kernel_time table whose blocks are the sparse
# sweep and whose seconds are as many and positive; it leaves no temporary
# file behind; and a profile that cannot be renamed into place (FILE is a
# directory) fails with exit 1 and leaves nothing either.
set -euo pipefail
ks=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "bench_profile_check: $*" >&2; exit 1; }

"$ks" bench kernels "$@" --profile "$dir/kt.lua" --json > "$dir/out.json" || fail "the command failed"
[ -f "$dir/kt.lua" ] || fail "no profile written"
head -n 1 "$dir/kt.lua" | grep -q '^-- written by kvstrata bench kernels on ' || fail "no header line"
if command -v lua5.4 > /dev/null; then
    lua5.4 - "$dir/kt.lua" <<'LUA' || fail "the profile does not hold a valid kernel_time table"
        local t = dofile(arg[1]).kernel_time
        assert(type(t) == "table", "no kernel_time table")
        assert(t.kind == "measured", "kind is not measured")
        assert(t.backend == "ref" or t.backend == "cuda", "bad backend")
        assert(t.dtype == "fp16", "bad dtype")
        assert(type(t.source) == "string" and t.source:find("kvstrata bench kernels", 1, true), "bad source")
        for _, k in ipairs({"batch", "kv_heads", "q_heads", "head_dim", "block_size"}) do
            assert(math.type(t[k]) == "integer" and t[k] > 0, "bad " .. k)
        end
        assert(#t.blocks > 0 and #t.blocks == #t.seconds, "blocks and seconds differ in length")
        for i = 1, #t.blocks do
            assert(t.seconds[i] > 0, "seconds[" .. i .. "] is not positive")
            assert(i == 1 or t.blocks[i] > t.blocks[i - 1], "blocks not ascending")
        end
        print(string.format("bench_profile_check: %d points, backend %s, batch %d", #t.blocks, t.backend, t.batch))
LUA
else
    echo "bench_profile_check: lua5.4 not installed; checking the text only" >&2
    grep -q 'kind = "measured"' "$dir/kt.lua" || fail "no kind = \"measured\""
    grep -q '^    blocks = {[0-9]' "$dir/kt.lua" || fail "no blocks"
    grep -q '^    seconds = {[0-9]' "$dir/kt.lua" || fail "no seconds"
fi
leftover=$(find "$dir" -name '*.part-*')
[ -z "$leftover" ] || fail "temporary files left: $leftover"

mkdir "$dir/taken"
status=0
"$ks" bench kernels "$@" --profile "$dir/taken" > /dev/null 2> "$dir/err" || status=$?
[ "$status" = 1 ] || fail "writing over a directory exited $status, expected 1"
grep -q -- '--profile' "$dir/err" || fail "the failure does not name --profile"
leftover=$(find "$dir" -name '*.part-*')
[ -z "$leftover" ] || fail "a failed write left $leftover"
[ -z "$(ls -A "$dir/taken")" ] || fail "a failed write put files in the directory"
echo "bench_profile_check: ok"
