#!/bin/sh
# json_figures.sh KVSTRATA [NAME JQ LO HI]... -- ARGS...
#
# Runs `KVSTRATA ARGS...`, a command that prints one JSON object, and checks
# figures derived from it: each NAME is the jq expression JQ of the object,
# which must lie in [LO, HI]. Prints every figure; exits 1 if the command
# fails or any figure is missing or outside its bounds.
set -u
kv=$1
shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/checks"
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [ $# -ge 4 ] || { echo "json_figures.sh: NAME JQ LO HI expected, got: $*" >&2; exit 2; }
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$tmp/checks"
    shift 4
done
[ "${1:-}" = "--" ] || { echo "json_figures.sh: no -- before the command's arguments" >&2; exit 2; }
shift
"$kv" "$@" > "$tmp/out.json" || { echo "FAIL: $kv $* exited with $?" >&2; exit 1; }
bad=0
tab=$(printf '\t')
while IFS=$tab read -r name expr lo hi; do
    v=$(jq -r "$expr" "$tmp/out.json") || v=
    if awk -v v="$v" -v lo="$lo" -v hi="$hi" \
        'BEGIN { exit !(v ~ /^-?[0-9.eE+-]+$/ && v + 0 >= lo + 0 && v + 0 <= hi + 0) }'; then
        echo "$name = $v in [$lo, $hi]"
    else
        echo "FAIL: $name = '$v', expected in [$lo, $hi] ($expr)" >&2
        bad=1
    fi
done < "$tmp/checks"
exit $bad
