#!/usr/bin/env bash
# The trace JSON parsed back (python3): object form, metadata, per-thread
# start order and proper nesting, escaping round trip, one pid per file.
set -eu
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/sp_trace_json.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$BUILD/tests/reporter/mktrace" known "$work/known.sprof" 7
"$BUILD/tests/reporter/mktrace" nasty "$work/nasty.sprof"
"$BUILD/tests/reporter/mktrace" known "$work/again.sprof" 7   # same pid as the first
"$BUILD/scopeprof" trace -o "$work/out.json" "$work/known.sprof" "$work/nasty.sprof" "$work/again.sprof"
python3 - "$work/out.json" <<'PY'
import json, sys
from collections import defaultdict
doc = json.load(open(sys.argv[1], encoding="utf-8"))   # strict: fails on bad JSON
assert isinstance(doc, dict) and doc["displayTimeUnit"] == "ns", doc.keys()
ev = doc["traceEvents"]
xs = [e for e in ev if e["ph"] == "X"]
meta = [e for e in ev if e["ph"] == "M"]
assert len(xs) == 5 + 7 + 5, len(xs)
pids = sorted({e["pid"] for e in xs})
assert len(pids) == 3 and 7 in pids and 4242 in pids, pids   # the duplicate pid got another
procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
assert procs[4242] == 'nasty "prog" (pid 4242)', procs
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
assert threads[(4242, 4243)] == 'worker "1"', threads
# Every X event belongs to a named thread of a named process.
for e in xs:
    assert (e["pid"], e["tid"]) in threads and e["pid"] in procs, e
# Per thread: sorted by start, then longer first; properly nested.
by = defaultdict(list)
for e in xs:
    by[(e["pid"], e["tid"])].append(e)
for key, lst in by.items():
    for a, b in zip(lst, lst[1:]):
        assert (a["ts"], -a["dur"]) <= (b["ts"], -b["dur"]), (key, a, b)
    stack = []
    for e in lst:
        s, t = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or t <= stack[-1], ("overlap", key, e)
        stack.append(t)
# Times keep nanoseconds: B of the known set is at 150000 ns for 100000 ns.
b = [e for e in xs if e["name"] == "B" and e["pid"] == 7][0]
assert b["ts"] == 150.0 and b["dur"] == 100.0 and b["args"] == {"file": "b.c", "line": 30, "func": "fb"}, b
n = [e for e in xs if e["pid"] == 4242]
names = {e["name"] for e in n}
want = {'quote" back\\slash', "ctl\x01\x1f\ttab\nnl", "utf8 \u00e9 \U0001F600",
        "bad \ufffd\ufffd utf8 \ufffd\ufffd\ufffd", "semi;colon"}
assert names == want, names
# Equal starts: the parent (longer) comes first; the zero-length child is kept.
t0 = [e for e in n if e["tid"] == 4242]
assert [e["name"] for e in t0[:3]] == ['quote" back\\slash', "ctl\x01\x1f\ttab\nnl", "utf8 \u00e9 \U0001F600"], t0[:3]
assert t0[2]["dur"] == 0 and abs(t0[2]["ts"] - 0.1) < 1e-9
print("trace JSON ok:", len(xs), "slices,", len(by), "threads,", len(pids), "processes")
PY
