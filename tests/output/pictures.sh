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

"$SP" html "$work/demo.sprof" -o "$work/demo.html"
"$SP" table "$work/demo.sprof" >"$work/demo.table"
"$SP" table "$work/demo.sprof" --format json >"$work/demo.table.json"
"$SP" flame "$work/demo.sprof" -o "$work/demo.svg"
"$SP" html "$work/evil.json" -o "$work/evil.html"
"$SP" flame "$work/evil.json" >"$work/evil.svg"
"$SP" flame "$work/nasty.sprof" -o "$work/nasty.svg"
"$SP" html "$work/nasty.sprof" "$work/demo.sprof" -o "$work/two.html"

python3 - "$work" <<'PY'
import html, json, re, sys, xml.etree.ElementTree as ET
from html.parser import HTMLParser
w = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"

class Page(HTMLParser):
    """Tags, the text of pre.table and of its span.row children, <title>s."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.stack, self.pre, self.rows, self.titles = [], [], "", [], []
        self.row = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in ("meta", "input", "br", "img", "link", "hr"): return   # void elements
        self.stack.append((tag, a))
        if tag == "span" and a.get("class") == "row": self.row = ""
    def handle_startendtag(self, tag, attrs):   # <rect .../>: no content
        self.tags.append((tag, dict(attrs)))
    def handle_endtag(self, tag):
        t, a = self.stack.pop()
        assert t == tag, (t, tag)          # well nested: nothing broke out
        if tag == "span" and self.row is not None:
            self.rows.append(self.row); self.row = None
    def handle_data(self, d):
        names = [t for t, _ in self.stack]
        if "pre" in names: self.pre += d
        if self.row is not None: self.row += d
        if names and names[-1] == "title": self.titles.append(d)

def page(path):
    p = Page(); p.feed(open(path, encoding="utf-8").read()); p.close()
    assert not p.stack, p.stack
    return p

def frames(svg_root):
    out = []
    for g in svg_root.iter(NS + "g"):
        if g.get("class") != "frame": continue
        r = g.find(NS + "rect")
        out.append((g.find(NS + "title").text, float(r.get("x")), float(r.get("y")), float(r.get("width"))))
    return out

# -- the table is `scopeprof table`'s, each data row a span
p = page(f"{w}/demo.html")
table = open(f"{w}/demo.table", encoding="utf-8").read()
assert p.pre == table, (p.pre[:300], table[:300])
rows = json.load(open(f"{w}/demo.table.json"))["tables"][0]["rows"]
assert len(p.rows) == len(rows) and len(rows) > 5, (len(p.rows), len(rows))
for r in rows:
    assert any(x.split()[0] == r["name"] for x in p.rows), r["name"]
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
assert svgs == ["flamegraph", "timeline"], svgs
slices = sum(1 for t, a in p.tags if t == "g" and a.get("class") == "slice")
# (the steps' row ProfilerStep* is the steps, not scopes: no slices)
scopes = sum(r["count"] for r in rows if r["name"] != "ProfilerStep*")
assert slices == scopes, (slices, scopes)
assert sum(1 for t, a in p.tags if t == "text" and a.get("class") == "track") == 2   # two threads

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
joined = "\n".join(p.titles) + p.pre
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
# Two files: one page, both files' threads.
p = page(f"{w}/two.html")
tracks = sum(1 for t, a in p.tags if t == "text" and a.get("class") == "track")
assert tracks == 4, tracks
print("pictures: ok")
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
