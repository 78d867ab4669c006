#!/usr/bin/env bash
# Trace files at the edges (issue 6), through the real `scopeprof` binary:
# one event, a name table with repeats and a use before definition, events
# out of close order. Each gives the right table or says clearly what is off.
# (2^31 + 1 events: `make test-huge`, too slow for every run.)
set -eu
BUILD=${BUILD:-build}
gen="$BUILD/tests/extreme/gen_extreme" sp="$BUILD/scopeprof"
work=$(mktemp -d /tmp/sp_extreme.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
row() { grep -E "^ *$1 " "$work/out" || fail "no row '$1' in: $(cat "$work/out")"; }

# One event: its row, a trace with one slice, a folded stack.
"$gen" one "$work/one.sprof"
"$sp" table "$work/one.sprof" >"$work/out" 2>"$work/err" || fail "one: exit $?"
row only | grep -q '100.00%       3.000us  *100.00%       3.000us       3.000us             1 *$' || fail "one: $(row only)"
[ ! -s "$work/err" ] || fail "one: stderr: $(cat "$work/err")"
"$sp" stacks "$work/one.sprof" | grep -qx 'only 3000' || fail "one: stacks"
"$sp" trace -o "$work/one.json" "$work/one.sprof"
python3 -c 'import json,sys; x=[e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"]=="X"]; assert len(x)==1 and x[0]["name"]=="only" and x[0]["dur"]==3, x' "$work/one.json"

# Repeats: site 1 "a" twice (fine), then redefined as "z" (the first kept,
# said once with the chunk's offset); site 2 used before its definition.
"$gen" repeats "$work/rep.sprof"
"$sp" table "$work/rep.sprof" >"$work/out" 2>"$work/err" || fail "repeats: exit $?"
row a | grep -q ' 2 *$' || fail "repeats: 'a' should have both calls: $(row a)"
grep -q '^ *z ' "$work/out" && fail "repeats: the redefinition 'z' was used"
grep -q "rep.sprof: offset [0-9]*: site id 1 defined again differently (1 time(s)); the first definition is kept" "$work/err" \
  || fail "repeats: no redefinition message: $(cat "$work/err")"
grep -q "rep.sprof: 1 event(s) use a site id no SITES chunk had defined before them" "$work/err" \
  || fail "repeats: no undefined-site message: $(cat "$work/err")"
[ "$(wc -l <"$work/err")" -eq 2 ] || fail "repeats: stderr: $(cat "$work/err")"

# Out of close order: said, and the command fails (exit 1) although it prints.
"$gen" unordered "$work/un.sprof"
set +e
"$sp" table "$work/un.sprof" >"$work/out" 2>"$work/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "unordered: exit $rc, want 1"
grep -q "un.sprof: 2 event(s) close before an earlier event of their thread" "$work/err" || fail "unordered: $(cat "$work/err")"
row early | grep -q '0.200us' || fail "unordered: 'early' lost its self time: $(row early)"
# A native trace from a pipe is streamed, not read into memory first (it
# once was: 2^31 events took 24 GB): 20M events (480 MB) in a few MB.
"$gen" huge 20000000 | /usr/bin/time -f '%M' -o "$work/rss" "$sp" table - >"$work/out"
row tick | grep -q ' 20000000 *$' || fail "pipe: $(cat "$work/out")"
[ "$(cat "$work/rss")" -lt 65536 ] || fail "pipe: peak RSS $(cat "$work/rss") KB for a 480 MB stream"
echo "extreme inputs: one event, repeated/undefined sites, out-of-order events, a 480 MB pipe in $(cat "$work/rss") KB"
