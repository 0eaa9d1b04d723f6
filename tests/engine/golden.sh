#!/usr/bin/env bash
# tests/engine/golden.sh KVSTRATA GOLDEN.json SCENARIO [ARGS...]: the run's JSON summary
# (wall_s and the result path aside) equals the committed golden file, byte
# for byte. A deliberate change of the model changes it: look at the diff,
# then regenerate with KS_GOLDEN_UPDATE=1 and commit it with the change.
# Either way the run's figures must hold invariants.sh's invariants: a golden
# regenerated through a change still fails when its content is incoherent.
set -euo pipefail
ks=$1 golden=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/run.h5" --json > "$dir/raw.json"
grep -v -e '"wall_s"' -e '"result"' "$dir/raw.json" > "$dir/got.json"
bash "$(dirname "$0")/invariants.sh" "$dir/raw.json" "$dir/run.h5"
if [ "${KS_GOLDEN_UPDATE:-0}" = 1 ]; then
    cp "$dir/got.json" "$golden"
    echo "golden: wrote $golden"
    exit 0
fi
if ! diff -u "$golden" "$dir/got.json"; then
    echo "golden: the summary differs from $golden (see the diff above)" >&2
    exit 1
fi
echo "golden: $(wc -l < "$golden") lines identical"
