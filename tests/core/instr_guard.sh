#!/usr/bin/env bash
# The whole process's instructions per scope must not creep back (issue 22):
# callgrind counts every thread (the recording one, the background writer),
# start-up and exit, independently of the machine's load; the floor is the
# same program with profiling compiled out. Bounds are generous (about 1.5x
# what bench/whole_cost.sh measured when they were set: 163 per leaf scope,
# 199 per scope in a tree), and the figures before the change (315 and 434)
# would fail them.
#   instr_guard.sh PROFILED_BIN FLOOR_BIN
set -u
prof=$1 off=$2 n=300000
command -v valgrind >/dev/null || { echo "FAILED: valgrind is not installed (tests/deps.sh installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total() {
  SCOPEPROF_OUTPUT="$tmp/t.sprof" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$1" "$2" "$n" \
    >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; echo 0; return; }
  callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
fail=0
for c in "flat 250" "nested 300"; do
  set -- $c
  p=$(total "$prof" "$1") f=$(total "$off" "$1")
  per=$(( (p - f) / n ))
  if [ "$p" -gt 0 ] && [ "$f" -gt 0 ] && [ "$per" -le "$2" ]; then
    echo "ok: $1: $per instructions per scope, whole process (bound $2)"
  else
    echo "FAILED: $1: $per instructions per scope, whole process (bound $2; profiled $p, floor $f)"; fail=1
  fi
done
exit $fail
