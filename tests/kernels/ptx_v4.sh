#!/bin/sh
# ptx_v4.sh [--expect-none] NAME PTX... - does the hot loop of the kernels
# named NAME read global memory 16 bytes per load?
#
# In the PTX files, every .entry whose (mangled) name contains NAME; in its
# body, the loops (a label and a later branch back to it); inside them, the
# global loads: ld.global[.nc][...].v4 and the others. Passes when each such
# entry has a 16-byte load inside a loop. With --expect-none it passes when
# each has loops and none of them holds a 16-byte load: pointed at the scalar
# kernel, that shows the check can fail. Exit 1 on a failed check, 2 on usage
# or when no entry matches.
set -u
expect=some
if [ "${1:-}" = --expect-none ]; then
  expect=none
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--expect-none] NAME PTX..." >&2
  exit 2
fi
name=$1
shift
# CTest passes $<TARGET_OBJECTS:...> as one ;-separated argument
IFS='
'
set -- $(printf '%s\n' "$@" | tr ';' '\n')
unset IFS
# mawk and gawk alike: no match() captures
awk -v name="$name" -v expect="$expect" '
function flush(   i, j, t, loops, v4, other, lo, hi, inloop) {
  loops = 0
  for (i = 1; i <= n; i++) inloop[i] = 0
  for (i = 1; i <= n; i++) {
    if (body[i] !~ /bra(\.uni)?[ \t]+\$L__/) continue
    t = body[i]
    sub(/.*bra(\.uni)?[ \t]+/, "", t)
    sub(/;.*/, "", t)
    if (!(t in lab) || lab[t] >= i) continue # forward branch
    loops++
    for (j = lab[t]; j <= i; j++) inloop[j] = 1
  }
  v4 = 0; other = 0
  for (i = 1; i <= n; i++) {
    if (!inloop[i] || body[i] !~ /ld\.global/) continue
    if (body[i] ~ /ld\.global[.a-zA-Z0-9:_]*\.v4\./) v4++
    else other++
  }
  printf "%s: %d loops, in them %d ld.global.v4 and %d narrower global loads\n", entry, loops, v4, other
  found++
  if (expect == "some" && v4 == 0) bad++
  if (expect == "none" && (loops == 0 || v4 > 0)) bad++
  for (t in lab) delete lab[t]
  n = 0
}
/^\.(visible |weak )*\.?entry / || /^\.entry / {
  inside = index($0, name) > 0
  if (inside) {
    entry = $0
    sub(/^[^_]*/, "", entry)
    sub(/\(.*/, "", entry)
    n = 0
  }
  next
}
inside && /^}/ { flush(); inside = 0; next }
inside {
  body[++n] = $0
  if ($0 ~ /^\$L__[A-Za-z0-9_]+:/) {
    t = $0
    sub(/:.*/, "", t)
    lab[t] = n
  }
}
END {
  if (!found) { print "no .entry matching " name > "/dev/stderr"; exit 2 }
  if (bad) { printf "%d of %d entries fail (want %s ld.global.v4 in a loop)\n", bad, found, expect > "/dev/stderr"; exit 1 }
  printf "%d entries: %s ld.global.v4 in their loops, as wanted\n", found, expect
}' "$@"
