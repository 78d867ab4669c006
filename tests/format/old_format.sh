#!/usr/bin/env bash
# Files of an older format still read: tests/format/old/v3.2.sprof, written
# by the format 3.2 writer (commit 10f4e67, the last before format 4), read
# by today's reporter, which must print what the 3.2 reporter printed for it,
# byte for byte:
#   v3.2.table.txt  `scopeprof table FILE` (overhead compensated, as by default)
#   v3.2.site.csv   `scopeprof table --group-by site --format csv --no-compensate FILE`
#                   (raw nanoseconds and bytes, file:line)
# with exit status 0 and nothing on stderr (among what that catches: the END
# chunk counts 38 events, where format 4's count of 16-byte units would be
# 42). `scopeprof trace` of it must be valid JSON holding the same events:
# per name as many slices as the CSV's calls, their durations adding up to
# its raw totals, the two steps, and one memory counter sample per MEM
# record (prog.c's 2 allocations and 2 frees). Both the shipped reporter and
# its ASan+UBSan build (tests/output) are checked.
#
# The fixture was made from the repository root with the 3.2 header and
# reporter, by these commands (its times are the run's; its shape is prog.c's):
#   OLD=$(mktemp -d) && git archive 10f4e67 | tar -x -C "$OLD" && make -C "$OLD" build/scopeprof
#   cc -std=gnu11 -Wall -Wextra -Werror -O2 -I"$OLD/include" -DPROFILE_ENABLE \
#      tests/format/old/prog.c -o "$OLD/prog_v3" -lpthread
#   SCOPEPROF_OUTPUT=tests/format/old/v3.2.sprof "$OLD/prog_v3" >/dev/null
#   "$OLD/build/scopeprof" table tests/format/old/v3.2.sprof >tests/format/old/v3.2.table.txt
#   "$OLD/build/scopeprof" table --group-by site --format csv --no-compensate \
#      tests/format/old/v3.2.sprof >tests/format/old/v3.2.site.csv
#   rm -rf "$OLD"
set -u
BUILD=${BUILD:-build}
old=tests/format/old
work=$(mktemp -d /tmp/sp_old_format.XXXXXX)
trap 'rm -rf "$work"' EXIT
rc=0

# same SP EXPECTED ARGS...: `SP ARGS... FIXTURE` prints EXPECTED, exits 0, says nothing on stderr.
same() {
  local sp=$1 want=$2
  shift 2
  "$sp" "$@" "$old/v3.2.sprof" >"$work/out" 2>"$work/err"
  local st=$?
  if [ $st -ne 0 ] || [ -s "$work/err" ]; then
    echo "$sp $* $old/v3.2.sprof: exit $st, stderr:"; cat "$work/err"; rc=1
  fi
  if ! cmp -s "$want" "$work/out"; then
    echo "$sp $*: not what the 3.2 reporter printed ($want):"; diff -u "$want" "$work/out" | head -40; rc=1
  fi
}

for sp in "$BUILD/scopeprof" "$BUILD/tests/output/scopeprof_asan"; do
  echo "== $sp"
  same "$sp" "$old/v3.2.table.txt" table
  same "$sp" "$old/v3.2.site.csv" table --group-by site --format csv --no-compensate
  rm -f "$work/trace.json"
  if ! "$sp" trace -o "$work/trace.json" "$old/v3.2.sprof" 2>"$work/err" || [ -s "$work/err" ]; then
    echo "$sp trace failed:"; cat "$work/err"; rc=1; continue
  fi
  python3 - "$work/trace.json" "$old/v3.2.site.csv" <<'PY' || rc=1
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
for n in want:   # no name nests in itself: its total is its slices' sum
    got = ns([e for e in scopes if e["name"] == n])
    assert got == int(rows[n]["cpu_time_total_ns"]), (n, got, rows[n])
assert len(steps) == int(rows["ProfilerStep*"]["count"]) == 2, steps
assert ns(steps) == int(rows["ProfilerStep*"]["cpu_time_total_ns"]), steps
assert [e["args"]["allocated"] for e in mem] == [4096, 0, 4096, 0], mem
threads = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name")
assert threads == ["Steps", "prog_v3", "worker"], threads
print("trace:", len(scopes), "scopes,", len(steps), "steps,", len(mem), "memory samples")
PY
done
exit $rc
