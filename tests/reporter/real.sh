#!/usr/bin/env bash
# Real recordings the reporter must read (issue 16), made by the library
# itself (tests/reporter/prog_robust.c): recursion 70,000 deep, 70,000
# threads over one run, a process killed with SIGKILL after a flush (no END
# record), and PROFILE_STEP steps.
set -eu
BUILD=${BUILD:-build}
prog="$BUILD/tests/reporter/prog_robust" sp="$BUILD/scopeprof"
work=$(mktemp -d /tmp/sp_real.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
record() { SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/$1.sprof" "$prog" "$@"; }
table() { "$sp" table --format csv "$work/$1.sprof" >"$work/out" 2>"$work/err"; }

record deep 70000
table deep || fail "deep: exit $?: $(cat "$work/err")"
grep -q '^recurse,70000,' "$work/out" || fail "deep: $(cat "$work/out")"
[ ! -s "$work/err" ] || fail "deep: stderr: $(cat "$work/err")"
"$sp" trace -o "$work/deep.json" "$work/deep.sprof" || fail "deep: trace exit $?"
python3 -c 'import json,sys; x=[e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"]=="X"]; assert len(x)==70000, len(x)' "$work/deep.json"

record threads 70000
table threads || fail "threads: exit $?: $(cat "$work/err")"
grep -q '^thread_work,70000,' "$work/out" || fail "threads: $(cat "$work/out")"
[ ! -s "$work/err" ] || fail "threads: stderr: $(cat "$work/err")"
# Raw times: thread_work is an empty scope, whose compensated time (its
# duration less the calibrated cost of a scope) is often 0 on every thread,
# and stacks leaves out stacks of no time (clang CI: no line at all).
"$sp" stacks --no-compensate "$work/threads.sprof" | grep -q '^thread_work [0-9]*$' || fail "threads: stacks"

set +e
record killed 1000 2>/dev/null
rc=$?
set -e
[ $rc -eq 137 ] || fail "killed: the program exited $rc, not by SIGKILL"
table killed || fail "killed: exit $?: $(cat "$work/err")"
grep -q '^before_flush,1000,' "$work/out" || fail "killed: the flushed scopes: $(cat "$work/out")"
grep -q 'after_flush' "$work/out" && fail "killed: scopes never flushed are in the table"
grep -q "killed.sprof: warning: no end record: the run did not finish" "$work/err" || fail "killed: stderr: $(cat "$work/err")"

record steps 5
table steps || fail "steps: exit $?"
grep -q '^ProfilerStep\*,5,0,' "$work/out" || fail "steps: $(cat "$work/out")"
echo "real recordings: 70000 deep, 70000 threads, killed (no END), steps: read"
