#!/usr/bin/env bash
# tests/study/sweep_points.sh KVSTRATA SOURCE_DIR: how a sweep file becomes points
# (checked with --dry-run, which runs nothing): the product of the axes, then
# the variants a Lua function adds, each over the seeds, overrides in order;
# ids that keep when the sweep is unchanged and change with a point's
# settings; and bad sweeps refused with exit 2, naming the file and the
# culprit, before anything runs.
set -euo pipefail
ks=$1
src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "sweep_points: $*" >&2; exit 1; }
base=$src/tests/fixtures/scenarios/closed_form.lua

cat > "$dir/mixed.lua" <<EOF
local ks = require "kvstrata"
return {
  name = "mixed",
  base = "$base",
  set = {cache = {evict = "lru"}},
  axes = {
    {field = "cache.l1", values = {ks.percent(90), "100%"}},
    {field = "cache.block_size", values = {16, 32}},
  },
  points = function(add)
    for _, w in ipairs{1, 2} do add{["cache.prefetch_window"] = w} end
    return {{workload = {output_tokens = 3}}}
  end,
  seeds = {7, 8},
}
EOF
"$ks" sweep "$dir/mixed.lua" --dry-run -o "$dir/out" > "$dir/plan.txt"
[ ! -e "$dir/out" ] || fail "--dry-run created the output folder"
grep '^p' "$dir/plan.txt" > "$dir/points.txt"
# (2 x 2 axis points + 3 variants) x 2 seeds
[ "$(wc -l < "$dir/points.txt")" = 14 ] || fail "expected 14 points:$(cat "$dir/plan.txt")"
cat > "$dir/want.txt" <<'EOF'
cache.evict=lru cache.l1=90% cache.block_size=16 seed=7
cache.evict=lru cache.l1=90% cache.block_size=16 seed=8
cache.evict=lru cache.l1=90% cache.block_size=32 seed=7
cache.evict=lru cache.l1=90% cache.block_size=32 seed=8
cache.evict=lru cache.l1=100% cache.block_size=16 seed=7
cache.evict=lru cache.l1=100% cache.block_size=16 seed=8
cache.evict=lru cache.l1=100% cache.block_size=32 seed=7
cache.evict=lru cache.l1=100% cache.block_size=32 seed=8
cache.evict=lru cache.prefetch_window=1 seed=7
cache.evict=lru cache.prefetch_window=1 seed=8
cache.evict=lru cache.prefetch_window=2 seed=7
cache.evict=lru cache.prefetch_window=2 seed=8
cache.evict=lru workload.output_tokens=3 seed=7
cache.evict=lru workload.output_tokens=3 seed=8
EOF
cut -d' ' -f2- "$dir/points.txt" > "$dir/got.txt"
cmp -s "$dir/want.txt" "$dir/got.txt" || { diff "$dir/want.txt" "$dir/got.txt" >&2; fail "points or their order"; }
cut -d' ' -f1 "$dir/points.txt" | grep -qvE '^p00(0[0-9]|1[0-3])-[0-9a-f]{8}$' && fail "bad ids"
[ "$(cut -d' ' -f1 "$dir/points.txt" | cut -d- -f2 | sort -u | wc -l)" = 14 ] || fail "setting hashes repeat"
grep -q -- "run $base --set cache.evict=lru --set cache.l1=90% --set cache.block_size=16 --set seed=7 -o $dir/out/points/p0000-" \
    "$dir/plan.txt" || fail "the first command: $(sed -n 2p "$dir/plan.txt")"
"$ks" sweep "$dir/mixed.lua" --dry-run --json -o "$dir/out" > "$dir/plan.json"
grep -q '"points": 14' "$dir/plan.json" || fail "--dry-run --json: no point count"
[ "$(grep -c '"command": ' "$dir/plan.json")" = 14 ] || fail "--dry-run --json: 14 commands expected"

# ids: the same sweep gives the same ids; a changed value changes only its points' ids
"$ks" sweep "$dir/mixed.lua" --dry-run | grep '^p' | cut -d' ' -f1 > "$dir/ids1"
cut -d' ' -f1 "$dir/points.txt" | cmp -s - "$dir/ids1" || fail "ids changed between two dry runs"
sed 's/"100%"/"95%"/' "$dir/mixed.lua" > "$dir/mixed2.lua"
"$ks" sweep "$dir/mixed2.lua" --dry-run | grep '^p' | cut -d' ' -f1 > "$dir/ids2"
[ "$(paste -d' ' "$dir/ids1" "$dir/ids2" | awk '$1 != $2' | wc -l)" = 4 ] || fail "changing cache.l1=100% should renew 4 ids"
paste -d' ' "$dir/ids1" "$dir/ids2" | sed -n 5,8p | awk '$1 == $2 { exit 1 }' || fail "the changed points kept their ids"

# refusals: exit 2, nothing on stdout, the sweep file and the culprit named, nothing run
refuse() { # refuse NAME TEXT... (the sweep's body on stdin)
    local name=$1
    shift
    cat > "$dir/$name.lua"
    local st=0
    "$ks" sweep "$dir/$name.lua" -o "$dir/$name.out" > "$dir/$name.stdout" 2> "$dir/$name.stderr" || st=$?
    [ "$st" = 2 ] || fail "$name: exit status $st, expected 2: $(cat "$dir/$name.stderr")"
    [ ! -s "$dir/$name.stdout" ] || fail "$name: printed on stdout"
    [ ! -e "$dir/$name.out" ] || fail "$name: created its output folder"
    for t in "$@"; do
        grep -qF -- "$t" "$dir/$name.stderr" || fail "$name: stderr lacks '$t': $(cat "$dir/$name.stderr")"
    done
}
refuse bad_field "$dir/bad_field.lua" "cache.blok_size" "unknown field" "nothing was run" <<EOF
return {base = "$base", axes = {{field = "cache.blok_size", values = {16, 32}}}}
EOF
refuse bad_value "$dir/bad_value.lua" "point p0001-" "cache.block_size=-1" <<EOF
return {base = "$base", axes = {{field = "cache.block_size", values = {16, -1}}}}
EOF
refuse bad_key "$dir/bad_key.lua" "unknown field 'axis'" <<EOF
return {base = "$base", axis = {{field = "cache.l1", values = {"50%"}}}}
EOF
refuse no_base "$dir/no_base.lua" "base:" <<EOF
return {axes = {{field = "cache.l1", values = {"50%"}}}}
EOF
refuse missing_base "$dir/missing_base.lua" "cannot read" <<EOF
return {base = "nowhere.lua"}
EOF
refuse empty_values "$dir/empty_values.lua" "axes[1].values (cache.l1)" <<EOF
return {base = "$base", axes = {{field = "cache.l1", values = {}}}}
EOF
refuse lua_error "$dir/lua_error.lua" "no such variant" <<EOF
return {base = "$base", points = function(add) error("no such variant") end}
EOF
refuse lua_return "$dir/lua_return.lua" "points: the function returned a number" <<EOF
return {base = "$base", points = function(add) return 5 end}
EOF
refuse syntax "$dir/syntax.lua" "syntax.lua:1:" <<EOF
return {base = "$base",, }
EOF
refuse bad_seed "$dir/bad_seed.lua" "seeds[2]" <<EOF
return {base = "$base", seeds = {1, "two"}}
EOF
echo "sweep_points: 14 points in order, stable ids, 10 bad sweeps refused"
