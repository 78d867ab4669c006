#!/usr/bin/env bash
# `scopeprof html` and `scopeprof flame`, parsed back by python3.
set -eu
BUILD=${BUILD:-build}
SP=${SP:-$BUILD/tests/output/scopeprof_asan}
work=$(mktemp -d /tmp/sp_pictures.XXXXXX)
trap 'rm -rf "$work"' EXIT
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/demo.sprof" "$BUILD/samples/train_cpu" >/dev/null
"$BUILD/tests/reporter/mktrace" nasty "$work/nasty.sprof"
# Names that would be markup if written as they are.
cat >"$work/evil.json" <<'JSON'
{"traceEvents":[
 {"name":"<script>document.title='pwned'</script>","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
 {"name":"a&b\"c'd <img src=x onerror=alert(1)>","ph":"X","ts":10,"dur":50,"pid":1,"tid":1},
 {"name":"]]></svg></div><b>bold</b>","ph":"X","ts":20,"dur":20,"pid":1,"tid":1},
 {"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"<i>t</i>"}}]}
JSON

# The page's parser, for the checks below: every element closed where it
# opened, and what the checks read.
PAGE_PY=$work/page.py
cat >"$PAGE_PY" <<'PY'
from html.parser import HTMLParser

class Page(HTMLParser):
    """Tags, the table's rows (cells' text and data-v), pre.notes' text, <title>s."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.stack, self.pre, self.rows, self.titles = [], [], "", [], []
        self.row = self.cell = None
        self.table, self.classed = "", []   # (the row's table class, row)
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in ("meta", "input", "br", "img", "link", "hr"): return   # void elements
        if tag == "table": self.table = a.get("class") or ""
        self.stack.append((tag, a))
        if tag == "tr" and any(t == "tbody" for t, _ in self.stack): self.row = []
        if tag == "td" and self.row is not None: self.cell = ["", a.get("data-v")]
    def handle_startendtag(self, tag, attrs):   # <rect .../>: no content
        self.tags.append((tag, dict(attrs)))
    def handle_endtag(self, tag):
        t, a = self.stack.pop()
        assert t == tag, (t, tag)          # well nested: nothing broke out
        if tag == "td" and self.cell is not None:
            self.row.append(tuple(self.cell)); self.cell = None
        if tag == "tr" and self.row is not None:
            self.rows.append(self.row); self.classed.append((self.table, self.row)); self.row = None
    def handle_data(self, d):
        names = [t for t, _ in self.stack]
        if "pre" in names: self.pre += d
        if self.cell is not None: self.cell[0] += d
        if names and names[-1] == "title": self.titles.append(d)

def page(path):
    p = Page(); p.feed(open(path, encoding="utf-8").read()); p.close()
    assert not p.stack, p.stack
    return p
PY

"$SP" html "$work/demo.sprof" -o "$work/demo.html"
"$SP" table "$work/demo.sprof" >"$work/demo.table"
"$SP" table "$work/demo.sprof" --format json >"$work/demo.table.json"
"$SP" flame "$work/demo.sprof" -o "$work/demo.svg"
"$SP" html "$work/evil.json" -o "$work/evil.html"
"$SP" flame "$work/evil.json" >"$work/evil.svg"
"$SP" flame "$work/nasty.sprof" -o "$work/nasty.svg"
"$SP" html "$work/nasty.sprof" "$work/demo.sprof" -o "$work/two.html"
"$SP" table --per-rank --format csv "$work/nasty.sprof" "$work/demo.sprof" >"$work/two.csv"

python3 - "$work" "$PAGE_PY" <<'PY'
import csv, html, json, re, sys, xml.etree.ElementTree as ET
w = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"

exec(open(sys.argv[2]).read())   # Page, page(): $PAGE_PY

def frames(svg_root):
    out = []
    for g in svg_root.iter(NS + "g"):
        if g.get("class") != "frame": continue
        r = g.find(NS + "rect")
        out.append((g.find(NS + "title").text, float(r.get("x")), float(r.get("y")), float(r.get("width"))))
    return out

# -- the table holds `scopeprof table`'s rows and figures, one <tr> each
p = page(f"{w}/demo.html")
table = open(f"{w}/demo.table", encoding="utf-8").read()
rows = json.load(open(f"{w}/demo.table.json"))["tables"][0]["rows"]
assert len(p.rows) == len(rows) and len(rows) > 5, (len(p.rows), len(rows))
for html_row, r in zip(p.rows, rows):   # both sorted by CPU total
    assert html_row[0][0] == r["name"], (html_row[0], r["name"])
    # Self CPU, CPU total and calls: the raw numbers, and the text the table shows.
    assert float(html_row[2][1]) == r["self_cpu_time_total_ns"], (html_row, r)
    assert float(html_row[4][1]) == r["cpu_time_total_ns"], (html_row, r)
    assert float(html_row[-1][1]) == r["count"], (html_row, r)
    line = [l for l in table.splitlines() if l.split() and l.split()[0] == r["name"]][0]
    assert html_row[2][0] in line.split() and html_row[4][0] in line.split(), (html_row, line)
# The lines under the table are the text table's.
under = table[table.index("Self CPU time total"):]
assert p.pre == under, (p.pre, under)
# -- self-contained: one inline script, no loads of anything
for tag, a in p.tags:
    assert "src" not in a and "href" not in a, (tag, a)
    assert tag not in ("link", "iframe", "img", "object", "embed"), tag
src = open(f"{w}/demo.html", encoding="utf-8").read()
assert "url(" not in src and "@import" not in src
assert [t for t, _ in p.tags].count("script") == 1
assert "default-src 'none'" in src
# -- timeline: one slice per scope (none deeper than 24, fewer than 100000)
svgs = [a.get("class") for t, a in p.tags if t == "svg"]
# one flame graph per thread (train_cpu, data_loader), the merged one, the timeline
assert svgs == ["flamegraph", "flamegraph", "flamegraph", "timeline"], svgs
slices = sum(1 for t, a in p.tags if t == "g" and a.get("class") == "slice")
# (the steps' row ProfilerStep* is the steps, not scopes: no slices)
scopes = sum(r["count"] for r in rows if r["name"] != "ProfilerStep*")
assert slices == scopes, (slices, scopes)
src_tracks = re.findall(r'<text class="track" x="10" y="\d+">([^<]*)</text>', src)
assert sum("(tid " in t for t in src_tracks) == 2, src_tracks     # two threads
assert sum(": steps (12, PROFILE_STEP)" in t for t in src_tracks) == 1, src_tracks
assert sum(": CPU memory (peak " in t for t in src_tracks) == 1, src_tracks
steps = sum(1 for t, a in p.tags if t == "g" and a.get("class") == "step")
assert steps == 12, steps
counters = [a for t, a in p.tags if t == "path" and a.get("class") == "counter"]
assert len(counters) == 1 and counters[0]["d"].startswith("M") and counters[0]["d"].endswith("Z"), counters
# The memory counter follows the records: it peaks at the track's top.
ys = [float(v) for v in re.findall(r"V([0-9.]+)", counters[0]["d"])]
assert min(ys) < max(ys) - 30, ys

# -- flame graph: strict XML; widths add up; a frame's time is its total
root = ET.parse(f"{w}/demo.svg").getroot()
assert root.tag == NS + "svg"
fr = frames(root)
byname = {}
for title, x, y, wd in fr:
    byname.setdefault(title.split(" (")[0], []).append((title, x, y, wd))
assert byname["all"][0][3] == 1180.0, byname["all"]
# Each frame lies on the one below it: inside its x range, one row up.
for title, x, y, wd in fr:
    if title.startswith("all "): continue
    under = [f for f in fr if abs(f[2] - (y + 16)) < 0.01 and f[1] - 0.01 <= x and x + wd <= f[1] + f[3] + 0.02]
    assert len(under) == 1, (title, x, y, wd)
# main (one call, not recursive): its frame's time is its CPU total.
main = [r for r in rows if r["name"] == "main"][0]
t = byname["main"][0][0]
total_ms = float(re.search(r"\(([0-9.]+)ms", t).group(1))
assert abs(total_ms - main["cpu_time_total_ns"] / 1e6) < 0.0015, (t, main)
# Sum of the leaves' self times is the root: the graph is of self CPU time.
self_total = json.load(open(f"{w}/demo.table.json"))["tables"][0]["self_cpu_time_total_ns"]
assert abs(float(re.search(r"\(([0-9.]+)ms", byname["all"][0][0]).group(1)) - self_total / 1e6) < 0.0015

# -- names are text, never markup
evil_names = ["<script>document.title='pwned'</script>", "a&b\"c'd <img src=x onerror=alert(1)>",
              "]]></svg></div><b>bold</b>"]
p = page(f"{w}/evil.html")
tags = [t for t, _ in p.tags]
assert tags.count("script") == 1 and "img" not in tags and "b" not in tags and "i" not in tags, tags
joined = "\n".join(p.titles) + "\n".join(c[0] for r in p.rows for c in r)
for n in evil_names:
    assert n in joined, n
root = ET.parse(f"{w}/evil.svg").getroot()
titles = [f[0].split(" (")[0] for f in frames(root)]
for n in evil_names:
    assert n in titles, (n, titles)
# Control characters and bad UTF-8 become U+FFFD: still well-formed XML.
root = ET.parse(f"{w}/nasty.svg").getroot()
titles = [f[0] for f in frames(root)]
# (a newline is a space in a folded stack already, `scopeprof stacks`)
assert any(t.startswith("ctl\ufffd\ufffd\ufffdtab nl (") for t in titles), titles
assert any(t.startswith("bad \ufffd\ufffd utf8 \ufffd\ufffd\ufffd (") for t in titles), titles
# Two files: one page, both files' threads, and the table across the files
# with the figures `scopeprof table --per-rank` gives (issue 23).
two = open(f"{w}/two.html", encoding="utf-8").read()
p = page(f"{w}/two.html")
across = [r for c, r in p.classed if "ranks" in c.split()]
# (nasty.sprof's names are not all UTF-8: the CSV has their bytes, the page
# U+FFFD; both are sorted by CPU total, so rows are compared in order.)
per_rank = list(csv.DictReader(open(f"{w}/two.csv", encoding="utf-8", errors="replace")))
assert across and len(across) == len(per_rank), (len(across), len(per_rank))
files = [f"{w}/nasty.sprof", f"{w}/demo.sprof"]
for row, r in zip(across, per_rank):
    if r["name"].isascii() and r["name"].isprintable(): assert row[0][0] == r["name"], (row[0], r["name"])
    nums = [float(c[1]) for c in row[1:] if c[1] is not None]
    labels = [c[0] for c in row[1:] if c[1] is None]
    want = [float(r[k]) for k in ("count_min", "count_mean", "count_max",
                                  "self_cpu_time_total_min_ns", "self_cpu_time_total_mean_ns", "self_cpu_time_total_max_ns",
                                  "cpu_time_total_min_ns", "cpu_time_total_mean_ns", "cpu_time_total_max_ns", "imbalance")]
    assert len(nums) == len(want) and len(labels) == 6, (row, r)
    for got, exp in zip(nums, want):
        assert abs(got - exp) <= 0.0006 * max(1.0, abs(exp)) + 1, (row[0][0], nums, want)
    assert labels[5] == f"file {files.index(r['max_file']) + 1}", (labels, r["max_file"])
assert all(c.split()[-1] != "ranks" for c, _ in page(f"{w}/demo.html").classed)  # one file: no such table
tracks = re.findall(r'<text class="track" x="10" y="\d+">([^<]*)</text>', two)
assert sum("(tid " in t for t in tracks) == 4, tracks
print("pictures: ok")
PY

# html --diff: the diff table and a differential flame graph. NEW's A takes
# three times BASE's; B the same; C only in NEW, D only in BASE.
cat >"$work/base.json" <<'JSON'
{"traceEvents":[
 {"name":"main","ph":"X","ts":0,"dur":1000,"pid":1,"tid":1},
 {"name":"A","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
 {"name":"B","ph":"X","ts":200,"dur":100,"pid":1,"tid":1},
 {"name":"D","ph":"X","ts":400,"dur":100,"pid":1,"tid":1}]}
JSON
cat >"$work/new.json" <<'JSON'
{"traceEvents":[
 {"name":"main","ph":"X","ts":0,"dur":1000,"pid":1,"tid":1},
 {"name":"A","ph":"X","ts":0,"dur":300,"pid":1,"tid":1},
 {"name":"B","ph":"X","ts":400,"dur":100,"pid":1,"tid":1},
 {"name":"C<b>","ph":"X","ts":600,"dur":50,"pid":1,"tid":1}]}
JSON
"$SP" html --diff "$work/base.json" "$work/new.json" -o "$work/diff.html"
"$SP" diff --format json "$work/base.json" "$work/new.json" >"$work/diff.json"
python3 - "$work" "$PAGE_PY" <<'PY'
import json, re, sys
w = sys.argv[1]
exec(open(sys.argv[2]).read())
p = page(f"{w}/diff.html")
d = json.load(open(f"{w}/diff.json"))
assert [r[0][0] for r in p.rows] == [r["name"] for r in d["rows"]], ([r[0][0] for r in p.rows], d["rows"])
a = [r for r in p.rows if r[0][0] == "A"][0]
assert a[-1][0] == "" and a[-2][0] == "+200.00%" and float(a[-3][1]) == 200000, a
assert [r for r in p.rows if r[0][0] == "C<b>"][0][-1][0] == "new only"
assert [r for r in p.rows if r[0][0] == "D"][0][-1][0] == "base only"
src = open(f"{w}/diff.html", encoding="utf-8").read()
assert "<b>" not in src and "C&lt;b&gt;" in src
assert "<title>scopeprof diff: base.json vs new.json</title>" in src, src[:400]
assert [t for t, _ in p.tags].count("script") == 1
# The graph: widths from NEW, colours from the change: A red, B white-ish.
fr = {m[0]: (m[1], m[2]) for m in re.findall(r'<g class="frame"><title>([^<(]*) \(([^)]*)\)</title><rect [^>]*fill="([^"]*)"', src)}
assert fr["A"][0] == "NEW 300.000us, BASE 100.000us, +200.0%", fr
assert fr["A"][1] == "rgb(255,102,102)", fr["A"]            # 2/3 of the larger: 235 - 200 * 2/3
assert fr["B"][1] == "rgb(255,235,235)", fr["B"]            # no change
assert "D" not in fr, fr                                    # BASE only: no width in NEW
assert fr["C&lt;b&gt;"][0].endswith(", new"), fr
assert "1 stack(s) of BASE only are not drawn" in src
print("diff page: ok")
PY

# Past 100000 slices the timeline keeps the longest: every scope is either
# drawn or counted as left out, and none drawn is shorter than the cut.
# (A cap that kept the first slices instead would fail the last check.)
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/many.sprof" "$BUILD/bench/gen_trace" 120000 >/dev/null 2>&1
"$SP" html "$work/many.sprof" -o "$work/many.html"
"$SP" table "$work/many.sprof" --format json >"$work/many.json"
python3 - "$work" <<'PY'
import json, re, sys
w = sys.argv[1]
src = open(f"{w}/many.html", encoding="utf-8").read()
total = sum(r["count"] for r in json.load(open(f"{w}/many.json"))["tables"][0]["rows"])
m = re.search(r"<p>(\d+) slice\(s\) on \d+ thread\(s\); (\d+) of at most ([0-9.]+)(us|ms|s) left out", src)
assert m, re.search(r"<p>\d+ slice.*", src).group(0)
shown, dropped = int(m.group(1)), int(m.group(2))
assert shown == src.count('<g class="slice">') and 0 < shown <= 100000, shown
assert shown + dropped == total, (shown, dropped, total)
scale = {"us": 1, "ms": 1e3, "s": 1e6}
cut = float(m.group(3)) * scale[m.group(4)]
durs = [float(v) * scale[u] for v, u in re.findall(r'<g class="slice"><title>[^<]* \(([0-9.]+)(us|ms|s)\)</title>', src)]
assert len(durs) == shown and min(durs) >= cut - 0.0005, (min(durs), cut)
print("timeline cap: ok", shown, dropped)
PY

# A failed run leaves an existing OUT as it was; standard input is refused.
echo "old report" >"$work/keep.html"
set +e
"$SP" html "$work/missing.sprof" -o "$work/keep.html" 2>"$work/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "missing.sprof" "$work/err" && [ "$(cat "$work/keep.html")" = "old report" ] ||
  { echo "html with a missing input: rc $rc, $(cat "$work/err"), OUT now: $(head -c 80 "$work/keep.html")"; exit 1; }
set +e
"$SP" html - -o "$work/x.html" <"$work/demo.sprof" 2>"$work/err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "not standard input" "$work/err" || { echo "html from stdin: rc $rc"; exit 1; }
[ ! -e "$work/x.html" ]
# A write that fails is exit 3, naming the output.
for cmd in html flame; do
  set +e
  "$SP" $cmd "$work/demo.sprof" -o /dev/full 2>"$work/err"; rc=$?
  set -e
  [ $rc -eq 3 ] && grep -q "cannot write '/dev/full'" "$work/err" || { echo "$cmd -o /dev/full: rc $rc: $(cat "$work/err")"; exit 1; }
done
echo "pictures.sh: all passed"
