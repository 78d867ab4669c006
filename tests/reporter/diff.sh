#!/usr/bin/env bash
# `scopeprof diff` on a real program built twice (diff_prog.c): the second
# build's compute() does twice the work. Five runs of each build, taken in
# turn so that the load of this shared machine falls on both alike, and five
# more of the first build:
#   - the first build against the second, --threshold 30: exit 4, compute
#     named as regressed and nothing else;
#   - the first build against itself (runs 1-5 against 6-10), --threshold 30
#     --min-time 5ms: exit 0, nothing regressed.
# The margins are wide: compute() is 100% slower, the threshold 30%, and a
# change within the runs' spread never trips (docs/REPORTER.md).
set -eu
BUILD=${BUILD:-build}
SP=${SP:-$BUILD/scopeprof}
T=$BUILD/tests/reporter
work=$(mktemp -d /tmp/sp_diff.XXXXXX)
trap 'rm -rf "$work"' EXIT
for i in 1 2 3 4 5; do
  SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/old$i.sprof" "$T/diff_prog1"
  SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/new$i.sprof" "$T/diff_prog2"
  SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/again$i.sprof" "$T/diff_prog1"
done
old=("$work"/old?.sprof) new=("$work"/new?.sprof) again=("$work"/again?.sprof)

set +e
"$SP" diff --threshold 30 "${old[@]}" -- "${new[@]}" >"$work/slow.txt" 2>"$work/err"; rc=$?
"$SP" diff --threshold 30 --format json "${old[@]}" -- "${new[@]}" >"$work/slow.json" 2>>"$work/err"
"$SP" diff --threshold 30 --min-time 5ms "${old[@]}" -- "${again[@]}" >"$work/same.txt" 2>>"$work/err"; rc_same=$?
set -e
cat "$work/slow.txt"
cat "$work/same.txt"
[ ! -s "$work/err" ] || { echo "FAILED: stderr: $(cat "$work/err")"; exit 1; }
[ $rc -eq 4 ] || { echo "FAILED: 2x slower compute(): exit $rc, not 4"; exit 1; }
grep -q '^  compute  +' "$work/slow.txt" || { echo "FAILED: compute not named as regressed"; exit 1; }
[ $rc_same -eq 0 ] || { echo "FAILED: the same build against itself: exit $rc_same, not 0"; exit 1; }
grep -q '^No regression' "$work/same.txt" || { echo "FAILED: no 'No regression' line"; exit 1; }
python3 - "$work/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["base"]["runs"] == 5 and d["new"]["runs"] == 5, d["base"]
assert [r["name"] for r in d["rows"] if r["regressed"]] == ["compute"], d["rows"]
c = [r for r in d["rows"] if r["name"] == "compute"][0]
# The change is the medians' (how much slower a loaded machine made it is
# not this test's to judge: a bound on it failed under load, +46%).
assert abs(c["change_percent"] - 100.0 * (c["new"]["value_ns"] - c["base"]["value_ns"]) / c["base"]["value_ns"]) < 0.01, c
assert c["base"]["min_ns"] <= c["base"]["value_ns"] <= c["base"]["max_ns"], c
assert c["base"]["count"] == 10 and c["new"]["count"] == 10, c
print("diff.sh: compute %+.1f%% (%.1f ms -> %.1f ms)" % (c["change_percent"], c["base"]["value_ns"] / 1e6,
                                                         c["new"]["value_ns"] / 1e6))
PY
echo "diff.sh: all passed"
