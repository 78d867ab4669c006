#!/usr/bin/env bash
# The HTML report in a real browser: Debian's chromium, headless, with the
# network cut (a proxy that does not exist, every host name unresolvable).
# The page must render from its own bytes: its script ran (body data-ready),
# the table's rows, the flame graphs (one per thread and the merged one),
# the timeline's slices, steps and memory counter are in the DOM after it
# ran, names stay text. Then the page is worked as a person would
# (page_check.js, appended to a copy: sort the table, zoom a flame graph,
# ctrl+wheel and drag the timeline, switch to the merged graph, find), and
# so is `scopeprof flame`'s SVG file (svg_check.js: click to zoom, search),
# and the `html --diff` page is loaded. Last a screenshot, checked to be an
# image of a page with content. SHOT=docs/report.png keeps the screenshot
# there (how the README's picture is made).
set -eu
BUILD=${BUILD:-build}
SP=$(realpath "${SP:-$BUILD/scopeprof}")
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d /tmp/sp_chromium.XXXXXX)
trap 'rm -rf "$work"' EXIT
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium is not installed (make test-html installs it)"; exit 1; }
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/demo.sprof" "$BUILD/samples/train_cpu" >/dev/null
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/demo2.sprof" "$BUILD/samples/train_cpu" >/dev/null
(cd "$work" && "$SP" html demo.sprof -o report.html)   # the page names the file as given
"$SP" table "$work/demo.sprof" --format json >"$work/table.json"
"$SP" flame "$work/demo.sprof" -o "$work/flame.svg"
"$SP" html --diff "$work/demo.sprof" "$work/demo2.sprof" -o "$work/diff.html"
"$SP" html "$work/demo.sprof" "$work/demo2.sprof" -o "$work/two.html"   # with the table across files
cat >"$work/evil.json" <<'JSON'
{"traceEvents":[
 {"name":"<script>document.title='pwned'</script>","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
 {"name":"<img src=x onerror=\"document.title='pwned'\">","ph":"X","ts":10,"dur":50,"pid":1,"tid":1}]}
JSON
"$SP" html "$work/evil.json" -o "$work/evil.html"
# Copies with the checks appended after the page's own script.
python3 - "$work" "$here" <<'PY'
import sys
w, here = sys.argv[1:]
page = open(f"{w}/report.html", encoding="utf-8").read()
check = open(f"{here}/page_check.js", encoding="utf-8").read()
assert page.count("</body>") == 1
open(f"{w}/check.html", "w", encoding="utf-8").write(page.replace("</body>", f"<script>\n{check}</script>\n</body>"))
svg = open(f"{w}/flame.svg", encoding="utf-8").read()
check = open(f"{here}/svg_check.js", encoding="utf-8").read()
assert svg.endswith("</svg>\n")
open(f"{w}/check.svg", "w", encoding="utf-8").write(
    svg[:-len("</svg>\n")] + f'<script type="text/ecmascript"><![CDATA[\n{check}]]></script>\n</svg>\n')
PY

run() { # chromium with no network; args: what to do
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$work/profile" --proxy-server=http://127.0.0.1:9 \
    --host-resolver-rules='MAP * ~NOTFOUND' --disable-background-networking \
    --disable-component-update --disable-sync "$@" 2>>"$work/chromium.log"
}
run --dump-dom "file://$work/report.html" >"$work/dom.html"
run --window-size=1280,1100 --dump-dom "file://$work/check.html" >"$work/check_dom.html"
run --dump-dom "file://$work/check.svg" >"$work/check_svg.html"
run --dump-dom "file://$work/diff.html" >"$work/diff_dom.html"
run --dump-dom "file://$work/two.html" >"$work/two_dom.html"
run --dump-dom "file://$work/evil.html" >"$work/evil_dom.html"
run --window-size=1280,1100 --screenshot="$work/shot.png" "file://$work/report.html" >/dev/null
python3 - "$work" <<'PY'
import json, re, sys
w = sys.argv[1]
dom = open(f"{w}/dom.html", encoding="utf-8").read()
rows = json.load(open(f"{w}/table.json"))["tables"][0]["rows"]
m = re.search(r'data-ready="rows=(\d+) frames=(\d+) threads=(\d+) slices=(\d+) steps=(\d+) counters=(\d+)"', dom)
assert m, "the page's script did not run: " + dom[:500]
nrows, nframes, nthreads, nslices, nsteps, ncounters = map(int, m.groups())
assert nrows == len(rows), (nrows, len(rows))
# The steps' row ProfilerStep* is the steps, not scopes: it has no slices.
scopes = sum(r["count"] for r in rows if r["name"] != "ProfilerStep*")
assert nslices == scopes, (nslices, scopes)
steps = [r for r in rows if r["name"] == "ProfilerStep*"][0]["count"]
assert nsteps == steps, (nsteps, steps)
assert nthreads == 2 and ncounters == 1, (nthreads, ncounters)   # train_cpu: main and the loader; CPU memory
assert nframes >= len(rows) - 1, nframes   # every scope name is at least one frame here
for r in rows:
    assert re.search(r'<tr><td>' + re.escape(r["name"]) + "</td>", dom), r["name"]
for f in ("check_dom.html", "check_svg.html"):
    c = re.search(r'data-check="([^"]*)"', open(f"{w}/{f}", encoding="utf-8").read())
    assert c and c.group(1) == "ok", (f, c and c.group(1))
diff = open(f"{w}/diff_dom.html", encoding="utf-8").read()
m = re.search(r'data-ready="rows=(\d+) frames=(\d+) threads=0 slices=0 steps=0 counters=0"', diff)
assert m and int(m.group(1)) == len(rows) and int(m.group(2)) > 0, m and m.groups()
# Two runs of the same program: the operators' table and the table across
# the files have the same rows, both sortable by the page's script.
two = open(f"{w}/two_dom.html", encoding="utf-8").read()
m = re.search(r'data-ready="rows=(\d+) ', two)
assert m and int(m.group(1)) == 2 * len(rows), (m and m.group(1), len(rows))
assert two.count('<table class="sortable ranks">') == 1 and '<section id="ranks">' in two
evil = open(f"{w}/evil_dom.html", encoding="utf-8").read()
assert "pwned" not in re.search(r"<title>(.*?)</title>", evil).group(1)
assert evil.count("<script") == 1, evil.count("<script")
assert "<img" not in evil
assert "&lt;script&gt;document.title" in evil
png = open(f"{w}/shot.png", "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n", png[:8]
width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
assert (width, height) == (1280, 1100), (width, height)
# An empty page compresses to a few KB; the table, flame graphs and timeline
# make it tens of KB.
assert len(png) > 40000, len(png)
print(f"chromium: rows={nrows} frames={nframes} threads={nthreads} slices={nslices} steps={nsteps} "
      f"counters={ncounters}; page and SVG worked: ok; screenshot {len(png)} bytes")
PY
if [ -n "${SHOT:-}" ]; then cp "$work/shot.png" "$SHOT"; fi
echo "chromium.sh: all passed"
