#!/usr/bin/env bash
# The whole process's instructions per scope must not creep back (issue 22):
# bench/whole_cost.sh counts them with callgrind over every thread (the
# recording one, the background writer), start-up and exit, independently of
# the machine's load; the floor is the same program with profiling compiled
# out. Bounds are generous (about 1.35x what it measured when they were
# set, session 13: 62 per leaf scope, 138 per scope in a tree), and the
# leaf figure of session 11 (90, before a run of one leaf scope was summed
# together) would fail them. Scopes with input shapes (issue 26: 212 per
# scope, 363 with the table grouped by shape) have bounds of their own at
# about 1.4x. Each profiled count is the least of 3 runs (REPS): a run of
# one leaf scope breaks under valgrind where the compensation classes'
# bound falls among its slowed durations, and single runs of `flat` at
# 300,000 scopes read 68-85 beside a CI run (PERFORMANCE.md, session 17).
#   instr_guard.sh PROFILED_BIN FLOOR_BIN
set -u
command -v valgrind >/dev/null || { echo "FAILED: valgrind is not installed (tests/deps.sh installs it)"; exit 1; }
out=$(BIN=$1 OFF=$2 REPS=3 sh "$(dirname "$0")/../../bench/whole_cost.sh" 300000 2>&1) || { echo "$out"; echo "FAILED: bench/whole_cost.sh"; exit 1; }
fail=0
for c in "flat 84" "nested 186" "shaped 297" "by_shape 508"; do
  set -- $c
  per=$(echo "$out" | awk -v c="$1" '$1 == c && $2 > 0 && $3 > 0 { printf "%d", $4 }')
  if [ -n "$per" ] && [ "$per" -le "$2" ]; then
    echo "ok: $1: $per instructions per scope, whole process (bound $2)"
  else
    echo "FAILED: $1: ${per:-no figure} instructions per scope, whole process (bound $2)"; echo "$out"; fail=1
  fi
done
exit $fail
