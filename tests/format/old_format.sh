#!/usr/bin/env bash
# Files of older formats still read: tests/format/old/vX.Y.sprof, written by
# the format X.Y writer, read by today's reporter, which must print what the
# X.Y reporter printed for it, byte for byte:
#   vX.Y.table.txt  `scopeprof table FILE` (overhead compensated, as by default)
#   vX.Y.site.csv   `scopeprof table --group-by site --format csv --no-compensate FILE`
#                   (raw nanoseconds and bytes, file:line)
# with exit status 0 and nothing on stderr (among what that catches: the 3.2
# file's END chunk counts 38 events, where format 4's count of 16-byte units
# would be 42; the 4.0 file's long records end in a reserved field that
# format 5 reads as a count of shape units). `scopeprof trace` of each must be
# valid JSON holding the same events: per name as many slices as the CSV's
# calls, their durations adding up to its raw totals, the two steps, and one
# memory counter sample per MEM record (prog.c's 2 allocations and 2 frees).
# Both the shipped reporter and its ASan+UBSan build (tests/output) are
# checked. The fixtures:
#   v3.2  commit 10f4e67, the last 3.2 writer (program prog_v3)
#   v4.0  commit 9917c93, the last 4.0 writer (program prog_v4)
#
# Each was made from the repository root with that commit's header and
# reporter, by these commands (its times are the run's; its shape is
# prog.c's), here for 4.0:
#   OLD=$(mktemp -d) && git archive 9917c93 | tar -x -C "$OLD" && make -C "$OLD" build/scopeprof
#   cc -std=gnu11 -Wall -Wextra -Werror -O2 -I"$OLD/include" -DPROFILE_ENABLE \
#      tests/format/old/prog.c -o "$OLD/prog_v4" -lpthread
#   SCOPEPROF_OUTPUT=tests/format/old/v4.0.sprof "$OLD/prog_v4" >/dev/null
#   "$OLD/build/scopeprof" table tests/format/old/v4.0.sprof >tests/format/old/v4.0.table.txt
#   "$OLD/build/scopeprof" table --group-by site --format csv --no-compensate \
#      tests/format/old/v4.0.sprof >tests/format/old/v4.0.site.csv
#   rm -rf "$OLD"
set -u
BUILD=${BUILD:-build}
old=tests/format/old
work=$(mktemp -d /tmp/sp_old_format.XXXXXX)
trap 'rm -rf "$work"' EXIT
rc=0

# same SP V EXPECTED ARGS...: `SP ARGS... vV.sprof` prints EXPECTED, exits 0, says nothing on stderr.
same() {
  local sp=$1 v=$2 want=$3
  shift 3
  "$sp" "$@" "$old/v$v.sprof" >"$work/out" 2>"$work/err"
  local st=$?
  if [ $st -ne 0 ] || [ -s "$work/err" ]; then
    echo "$sp $* $old/v$v.sprof: exit $st, stderr:"; cat "$work/err"; rc=1
  fi
  if ! cmp -s "$want" "$work/out"; then
    echo "$sp $*: not what the $v reporter printed ($want):"; diff -u "$want" "$work/out" | head -40; rc=1
  fi
}

for sp in "$BUILD/scopeprof" "$BUILD/tests/output/scopeprof_asan"; do
 for v in 3.2 4.0; do
  echo "== $sp, format $v"
  same "$sp" $v "$old/v$v.table.txt" table
  same "$sp" $v "$old/v$v.site.csv" table --group-by site --format csv --no-compensate
  rm -f "$work/trace.json"
  if ! "$sp" trace -o "$work/trace.json" "$old/v$v.sprof" 2>"$work/err" || [ -s "$work/err" ]; then
    echo "$sp trace failed:"; cat "$work/err"; rc=1; continue
  fi
  python3 - "$work/trace.json" "$old/v$v.site.csv" "prog_v${v%%.*}" <<'PY' || rc=1
import csv, json, sys
from collections import Counter
doc = json.load(open(sys.argv[1], encoding="utf-8"))   # strict: fails on bad JSON
rows = {r["name"]: r for r in csv.DictReader(open(sys.argv[2], encoding="utf-8"))}
ev = doc["traceEvents"]
scopes = [e for e in ev if e["ph"] == "X" and e["cat"] == "scope"]
steps = [e for e in ev if e["ph"] == "X" and e["cat"] == "step"]
mem = [e for e in ev if e["ph"] == "C"]
ns = lambda es: sum(round(e["dur"] * 1000) for e in es)   # dur: us, to the ns
calls = Counter(e["name"] for e in scopes)
want = {n: int(r["count"]) for n, r in rows.items() if n != "ProfilerStep*"}
assert calls == want, ("slices per name", calls, want)
# No name nests in itself: its total is its slices' sum. Format 4 on: the
# table converts each row's sum of ticks, the trace each slice's ends, which
# differ by at most 1 ns a slice (docs/FORMAT.md, TICKS).
slack = 0 if sys.argv[3] == "prog_v3" else 1
for n in want:
    got = ns([e for e in scopes if e["name"] == n])
    assert abs(got - int(rows[n]["cpu_time_total_ns"])) <= slack * want[n], (n, got, rows[n])
assert len(steps) == int(rows["ProfilerStep*"]["count"]) == 2, steps
assert ns(steps) == int(rows["ProfilerStep*"]["cpu_time_total_ns"]), steps   # ns in every format
assert [e["args"]["allocated"] for e in mem] == [4096, 0, 4096, 0], mem
threads = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name")
assert threads == ["Steps", sys.argv[3], "worker"], threads
print("trace:", len(scopes), "scopes,", len(steps), "steps,", len(mem), "memory samples")
PY
 done
done
exit $rc
