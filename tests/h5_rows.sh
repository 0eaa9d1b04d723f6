#!/usr/bin/env bash
# tests/h5_rows.sh FILE.h5 DATASET: prints a compound dataset one record per
# line, fields comma-separated in the dataset's order, numbers at full
# precision (%.17g), strings without their quotes.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
h5dump -m %.17g -y -w 0 -d "$2" -o "$dir/rows" "$1" > /dev/null
tr -d ' \n"{' < "$dir/rows" | tr '}' '\n' | sed -e 's/^,//' -e '/^$/d'
