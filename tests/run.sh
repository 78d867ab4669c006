#!/usr/bin/env bash
# Run each argument as one test command. A cmocka binary counts as the tests
# it reports; any other command counts as one test, passed if it exits 0.
# Prints every command's output and how long it took, then "N passed, N
# failed" and exits non-zero if anything failed.
set -u
passed=0 failed=0 failed_cmds=()
for cmd in "$@"; do
  log=$(mktemp)
  echo "== $cmd"
  t0=$(date +%s%N)
  "$cmd" >"$log" 2>&1
  rc=$?
  cat "$log"
  echo "-- $cmd: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
    if [ $rc -eq 0 ]; then p=1; else f=1; fi
  elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1   # crashed or sanitizer error after cmocka's summary
  fi
  passed=$((passed + p)); failed=$((failed + f))
  [ $rc -ne 0 ] || [ "$f" -ne 0 ] && failed_cmds+=("$cmd (exit $rc)")
  rm -f "$log"
done
echo
for c in "${failed_cmds[@]+"${failed_cmds[@]}"}"; do echo "FAILED: $c"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
