#!/usr/bin/env bash
# tests/install.sh WHO PACKAGE...: installs the Debian packages of the list that are
# missing (apt-get, as root or through sudo), saying so on stderr as WHO. Used by
# tests/run.sh and tests/fuzz/run.sh.
set -euo pipefail
who=$1
shift
missing=()
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "$who: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
