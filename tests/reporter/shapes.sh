#!/usr/bin/env bash
# Input shapes recorded for real (issue 26; shape_prog.c): a program with
# PROFILE_SCOPE_SHAPE(S) on two threads, steps and memory, run with
# SCOPEPROF_GROUP_BY=shape, compensated and raw:
#   - its exit table and `scopeprof table --group-by shape` of its trace are
#     the same bytes (the rows, their first-seen order, the Input Shapes
#     text, the ProfilerStep* row, the notes);
#   - the rows hold the calls shape_prog.c counts, conv2d its allocations;
#   - the trace JSON carries "Input Dims", parses as JSON, and read back
#     with --group-by shape gives the same rows and calls;
#   - `diff --group-by shape` of two runs pairs every row.
set -eu
BUILD=${BUILD:-build}
prog="$BUILD/tests/reporter/shape_prog" sp=${SP:-$BUILD/scopeprof}
work=$(mktemp -d /tmp/sp_shapes.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for comp in 1 0; do
  SCOPEPROF_OUTPUT="$work/run$comp.sprof" SCOPEPROF_GROUP_BY=shape SCOPEPROF_COMPENSATE=$comp \
    "$prog" >/dev/null 2>"$work/exit$comp.all"
  grep -q "^Trace file: $work/run$comp.sprof (" "$work/exit$comp.all" ||
    fail "the exit summary names no trace file: $(tail -n 2 "$work/exit$comp.all")"
  sed '/^Trace file: /,$d' "$work/exit$comp.all" >"$work/exit$comp"
  grep -q 'Input Shapes  $' "$work/exit$comp" || fail "no Input Shapes column at exit: $(cat "$work/exit$comp")"
  "$sp" table --group-by shape "$work/run$comp.sprof" >"$work/table$comp" 2>&1 ||
    fail "table --group-by shape exit $?: $(cat "$work/table$comp")"
  diff -u "$work/exit$comp" "$work/table$comp" ||
    fail "SCOPEPROF_COMPENSATE=$comp: the exit table (-) and scopeprof table --group-by shape (+) differ"
done
echo "exit table = scopeprof table --group-by shape: $(grep -c '' "$work/exit1") lines, compensated and raw"

# name, calls, input shapes of every row of a CSV table, sorted.
rows() { python3 -c '
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
for x in sorted((x["name"], x["count"], x["input_shapes"]) for x in r): print("|".join(x))' "$1"; }
"$sp" table --group-by shape --format csv --limit 0 "$work/run1.sprof" >"$work/sprof.csv"
rows "$work/sprof.csv" >"$work/sprof.rows"
cat >"$work/want.rows" <<'EOF'
ProfilerStep*|6|[]
conv2d|6|[[128, 64, 56, 56], [64, 64, 3, 3], [], [-1]]
gemm|24|[[64, 32, 16]]
gemm|3|[[8, 8, 8]]
gemm|6|[[128, 32, 16]]
gemm|6|[]
main|1|[]
worker|1|[]
EOF
diff -u "$work/want.rows" "$work/sprof.rows" || fail "the rows (-: shape_prog.c's counts)"
# The allocation inside conv2d counts to its shaped row, 4 Kb a call.
grep -q '^conv2d,6,[0-9]*,[0-9]*,[0-9]*,[0-9.]*,[0-9.]*,24576,24576,"\[\[128, ' "$work/sprof.csv" ||
  fail "conv2d's memory: $(cat "$work/sprof.csv")"

"$sp" trace -o "$work/t.json" "$work/run1.sprof" || fail "trace exit $?"
grep -q '"Input Dims":\[\[128, 64, 56, 56\], \[64, 64, 3, 3\], \[\], \[-1\]\]}}' "$work/t.json" ||
  fail "no Input Dims for conv2d in the trace"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/t.json" || fail "the trace is not JSON"
"$sp" table --group-by shape --format csv --limit 0 "$work/t.json" >"$work/json.csv" || fail "table of the trace"
# The trace's steps are slices, whose row has [] (Kineto's), as the .sprof's
# step row has (and the exit table's).
rows "$work/json.csv" >"$work/json.rows"
diff -u "$work/sprof.rows" "$work/json.rows" || fail "the trace's rows (+) are not the .sprof's (-)"
echo "trace JSON: Input Dims written, the same rows read back"

"$sp" diff --group-by shape --format csv "$work/run1.sprof" "$work/run0.sprof" >"$work/diff.csv" ||
  fail "diff --group-by shape exit $?"
python3 -c '
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert len(r) == 8, len(r)
for x in r: assert x["base_count"] == x["new_count"] and x["status"] == "", x
assert any(x["name"] == "gemm" and x["input_shapes"] == "[[64, 32, 16]]" and x["base_count"] == "24" for x in r), r
' "$work/diff.csv" || fail "diff --group-by shape: $(cat "$work/diff.csv")"
echo "diff --group-by shape: every row on both sides"
