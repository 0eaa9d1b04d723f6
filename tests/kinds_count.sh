#!/bin/sh
# kinds_count.sh BUILD [README] - the suite's strength: its tests by kind
# (tests/kinds.cmake), one line, "tests by kind: closed_form N, ...".
# With README: exits 1 unless README.md gives that same line (its words may
# wrap), so that a test added or removed changes the README's count with it.
set -eu
line=$(ctest --test-dir "$1" --show-only=json-v1 | jq -r '
    [.tests[] | [.properties[]? | select(.name == "LABELS") | .value[]] as $l
     | ("unit", "closed_form", "golden", "smoke", "contract", "script") as $k | select($l | index($k)) | $k]
    | group_by(.) | map("\(.[0]) \(length)") | "tests by kind: " + join(", ")')
echo "$line"
[ $# -lt 2 ] && exit 0
tr '\n' ' ' < "$2" | tr -s ' ' | grep -qF -- "$line" ||
    { echo "README.md does not give: $line" >&2; exit 1; }
