#!/usr/bin/env python3
"""Compare our table of a PyTorch trace with the table PyTorch printed.
    compare.py OURS.txt PYTORCH.txt TRACE.json
Rows are matched by name (+ Input Shapes when both have the column; names
PyTorch cut to 52 characters + "..." are compared cut). Names, call counts,
CPU total and avg must be equal as printed. Self CPU must be equal, except for
one known difference: PyTorch's self time of a call can be negative (children
that overlap each other after its integer-us rounding), the header's
aggregation counts such a call as 0. TRACE.json is replayed with PyTorch's
nesting rule to compute, per row, how much that clamp adds; our Self CPU must
equal PyTorch's plus exactly that. Percentages (whose denominator moves by
the clamp total) are compared only when nothing was clamped. A "[memory]" row
is allowed to be missing when the trace holds no [memory] events (torch's
legacy exporter does not write them). Exit 1 on any other difference."""
import collections
import json
import sys


def cut(name):
    if name.endswith("..."):
        name = name[:-3]
    return name[:52]


def clamp_excess(path):
    """Per (name, shapes): sum over calls of max(0, -self), PyTorch's rule."""
    data = json.load(open(path))
    evs = data["traceEvents"] if isinstance(data, dict) else data
    evs = [e for e in evs if e.get("ph") == "X"]
    excess, mem = collections.defaultdict(float), any(e.get("name") == "[memory]" for e in evs)
    by_tid = collections.defaultdict(list)
    for e in evs:
        by_tid[(e.get("pid"), e.get("tid"))].append(e)
    for lst in by_tid.values():
        lst.sort(key=lambda e: (e["ts"], -(e["ts"] + e.get("dur", 0))))
        stack, kids = [], collections.defaultdict(float)
        for i, e in enumerate(lst):
            s, en = e["ts"], e["ts"] + e.get("dur", 0)
            while stack and (s >= stack[-1][1] or en > stack[-1][1]):
                stack.pop()
            if stack:
                kids[stack[-1][2]] += e.get("dur", 0)
            stack.append((s, en, i))
        for i, e in enumerate(lst):
            own = e.get("dur", 0) - kids[i]
            if own < 0:
                shp = str(e.get("args", {}).get("Input Dims", []))
                excess[(cut(e["name"]), shp)] -= own
                excess[(cut(e["name"]), None)] -= own
    return excess, mem


def parse(path):
    lines = open(path).read().splitlines()
    seps = [i for i, l in enumerate(lines) if l.startswith("---")]
    head = lines[seps[0] + 1]
    widths = [len(c) for c in lines[seps[0]].split("  ")[:-1]]
    def cells(line):
        out, pos = [], 0
        for w in widths:
            out.append(line[pos:pos + w].strip())
            pos += w + 2
        return out
    cols = cells(head)
    rows = {}
    for l in lines[seps[1] + 1:seps[2]]:
        c = dict(zip(cols, cells(l)))
        key = (cut(c["Name"]), c.get("Input Shapes", None))
        if key in rows:
            raise SystemExit("%s: duplicate row %r" % (path, key))
        rows[key] = c
    return rows, "Input Shapes" in cols


def us(s):
    for suf, k in (("us", 1), ("ms", 1e3), ("s", 1e6)):
        if s.endswith(suf):
            return float(s[:-len(suf)]) * k
    raise ValueError(s)


excess, has_mem = clamp_excess(sys.argv[3])
clamped = sum(v for k, v in excess.items() if k[1] is None)
ours, oshape = parse(sys.argv[1])
theirs, tshape = parse(sys.argv[2])
bad, negative = [], []
if oshape != tshape:
    bad.append("Input Shapes column: ours %s, PyTorch %s" % (oshape, tshape))
for k in sorted(set(ours) | set(theirs)):
    if k not in ours and k[0] == "[memory]" and not has_mem:
        continue
    if k not in ours or k not in theirs:
        bad.append("row %r only in %s" % (k, "ours" if k in ours else "PyTorch"))
        continue
    o, t = ours[k], theirs[k]
    for col in ("# of Calls", "CPU total", "CPU time avg"):
        if o[col] != t[col]:
            bad.append("%r %s: ours %s, PyTorch %s" % (k, col, o[col], t[col]))
    if o["Self CPU"] != t["Self CPU"]:
        x = excess.get(k, 0)
        if x and abs(us(o["Self CPU"]) - us(t["Self CPU"]) - x) < 0.0015 * max(1, abs(us(t["Self CPU"]))):
            negative.append(k)
        else:
            bad.append("%r Self CPU: ours %s, PyTorch %s" % (k, o["Self CPU"], t["Self CPU"]))
    for col in ("Self CPU %", "CPU total %"):
        if not clamped and o[col] != t[col]:
            bad.append("%r %s: ours %s, PyTorch %s" % (k, col, o[col], t[col]))
print("%s: %d rows, %d identical; %d rows differ only by calls with negative self time "
      "counted as 0 (%.3fus in all) %s"
      % (sys.argv[2], len(theirs), len(theirs) - len(bad) - len(negative), len(negative), clamped,
         [n for n, _ in negative]))
for b in bad:
    print("  DIFF", b)
sys.exit(1 if bad else 0)
