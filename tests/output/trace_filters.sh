#!/usr/bin/env bash
# `scopeprof trace` for big traces: filters, gzip output, progress.
set -eu
BUILD=${BUILD:-build}
SP=${SP:-$BUILD/tests/output/scopeprof_asan}
SP_PLAIN=${SP_PLAIN:-$BUILD/scopeprof}   # for 4M events: ASan would take its time
work=$(mktemp -d /tmp/sp_trace_filters.XXXXXX)
trap 'rm -rf "$work"' EXIT
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/demo.sprof" "$BUILD/samples/train_cpu" >/dev/null
# known: header start 1000 ns; main [0,1000000], A [100000,400000],
# B [150000,250000], A [500000,600000], a long name [700000,800000] (tests/reporter/tw.h)
"$BUILD/tests/reporter/mktrace" known "$work/known.sprof" 7
"$SP" trace "$work/demo.sprof" -o "$work/all.json"
"$SP" trace "$work/demo.sprof" -o "$work/conv.json" --name 'conv*'
"$SP" trace "$work/demo.sprof" -o "$work/back.json" --name backward
"$SP" trace "$work/demo.sprof" -o "$work/loader.json" --thread data_loader
"$SP" trace "$work/demo.sprof" -o "$work/long.json" --min-dur 1ms
"$SP" trace "$work/known.sprof" -o "$work/win.json" --window 450us:0.65ms
"$SP" trace "$work/known.sprof" -o "$work/win2.json" --window 450:
"$SP" trace "$work/demo.sprof" -o "$work/all.json.gz"
"$SP" trace "$work/known.sprof" -o "$work/p.json" --progress 2>"$work/progress"
"$SP" trace "$work/known.sprof" -o "$work/k.json"
"$SP" trace "$work/demo.sprof" -o "$work/q.json" 2>"$work/quiet"   # stderr is a file: no progress
"$SP" table "$work/demo.sprof" --format json >"$work/table.json"
python3 - "$work" <<'PY'
import gzip, json, sys
w = sys.argv[1]
def xs(name):
    return [e for e in json.load(open(f"{w}/{name}"))["traceEvents"] if e["ph"] == "X"]
every = xs("all.json")
counts = {r["name"]: r["count"] for r in json.load(open(f"{w}/table.json"))["tables"][0]["rows"]}
# --name glob and substring: exactly the matching scopes, all of them
conv = xs("conv.json")
assert {e["name"] for e in conv} == {"conv2d", "conv2d_backward"}, {e["name"] for e in conv}
assert len(conv) == counts["conv2d"] + counts["conv2d_backward"]
back = xs("back.json")
want = {n for n in counts if "backward" in n}
assert {e["name"] for e in back} == want and len(back) == sum(counts[n] for n in want)
# --thread by name: the loader's scopes, only them
meta = json.load(open(f"{w}/all.json"))["traceEvents"]
tid = [e["tid"] for e in meta if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"] == "data_loader"][0]
loader = xs("loader.json")
assert loader and all(e["tid"] == tid for e in loader)
assert len(loader) == sum(1 for e in every if e["tid"] == tid and e["cat"] != "step"), len(loader)
# --min-dur: the scopes of at least 1 ms, all of them
long_ = xs("long.json")
assert long_ and all(e["dur"] >= 1000 for e in long_ if e["cat"] != "step")
assert len([e for e in long_ if e["cat"] != "step"]) == sum(1 for e in every if e["dur"] >= 1000 and e["cat"] != "step")
# --window, since the file's start: what overlaps 450..650 us
assert sorted(e["name"] for e in xs("win.json")) == ["A", "main"], xs("win.json")
w2 = [(e["name"], e["ts"]) for e in xs("win2.json")]   # from 450 us on: all but B and the first A
assert len(w2) == 3 and ("A", 500.0) in w2 and "B" not in [n for n, _ in w2], w2
# gzip: the same JSON, compressed
raw = open(f"{w}/all.json", "rb").read()
gz = open(f"{w}/all.json.gz", "rb").read()
assert gz[:2] == b"\x1f\x8b" and len(gz) < len(raw) / 3, len(gz)
assert gzip.decompress(gz) == raw
# progress: a last line with the count of records read; none unless asked
prog = open(f"{w}/progress").read()
assert "events from 1 file(s)" in prog, prog
n = int(prog.split("scopeprof: ")[-1].split(" events")[0])
assert n == 5, (n, prog)   # the records of known.sprof
assert open(f"{w}/quiet").read() == "", open(f"{w}/quiet").read()
assert open(f"{w}/p.json", "rb").read() == open(f"{w}/k.json", "rb").read()
print("trace filters: ok")
PY
# Progress by default only on a terminal (script(1) gives it one), and not
# when the JSON goes to that same terminal.
if command -v script >/dev/null; then
  script -qec "$SP trace $work/known.sprof -o $work/tty.json" /dev/null >"$work/tty1" </dev/null
  grep -q "scopeprof: 5 events from 1 file(s)" "$work/tty1" || { echo "no progress on a terminal: $(cat "$work/tty1")"; exit 1; }
  script -qec "$SP trace $work/known.sprof -o -" /dev/null >"$work/tty2" </dev/null
  ! grep -q "events from" "$work/tty2" || { echo "progress mixed into JSON on the terminal"; exit 1; }
  grep -q '"traceEvents"' "$work/tty2" || { echo "-o - on a terminal wrote no JSON: $(head -c 300 "$work/tty2")"; exit 1; }
  # Without -o, JSON is not poured onto a terminal: refused, naming -o.
  script -qec "$SP trace $work/known.sprof; echo rc=\$?" /dev/null >"$work/tty4" </dev/null
  grep -q "rc=2" "$work/tty4" && grep -q -- "-o OUT.json" "$work/tty4" && ! grep -q '"traceEvents"' "$work/tty4" ||
    { echo "trace to a terminal without -o: $(cat "$work/tty4")"; exit 1; }
  script -qec "$SP trace $work/known.sprof -o $work/tty.json --no-progress" /dev/null >"$work/tty3" </dev/null
  ! grep -q "events from" "$work/tty3" || { echo "--no-progress printed progress"; exit 1; }
fi

# A full disk under gzip output is exit 3 (the error comes back through
# zlib and the stdio cookie).
ln -s /dev/full "$work/full.json.gz"
set +e
"$SP" trace "$work/known.sprof" -o "$work/full.json.gz" 2>"$work/err"; rc=$?
set -e
[ $rc -eq 3 ] && grep -q "full.json.gz" "$work/err" || { echo "gzip to a full disk: rc $rc: $(cat "$work/err")"; exit 1; }

# Past 512 MB of JSON (4M scopes: about 650 MB), more than browser viewers
# open, one line on stderr says so and names the filters; the JSON is still
# written whole (the last progress line counts every event). Filtered down,
# nothing is said.
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/big.sprof" "$BUILD/bench/gen_trace" 4000000 >/dev/null 2>&1
"$SP_PLAIN" trace "$work/big.sprof" -o /dev/null 2>"$work/err"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "warning: the trace JSON passed 512 MB" "$work/err" &&
  grep -q -- "--window FROM:TO, --min-dur D or --name PAT" "$work/err" && grep -q "OUT.json.gz" "$work/err" ||
  { echo "no size warning for 650 MB of JSON: $(cat "$work/err")"; exit 1; }
"$SP_PLAIN" trace "$work/big.sprof" -o /dev/null --name step_0 2>"$work/err"   # one step name in 8
[ ! -s "$work/err" ] || { echo "a size warning for a filtered trace: $(cat "$work/err")"; exit 1; }
"$SP_PLAIN" trace "$work/big.sprof" --progress -o /dev/null 2>"$work/err"
[ "$(grep -c "warning: the trace JSON passed 512 MB" "$work/err")" -eq 1 ] &&
  grep -q "scopeprof: 4000000 events from 1 file(s), [0-9.]* MB of JSON written" "$work/err" ||
  { echo "size warning with --progress: $(cat "$work/err")"; exit 1; }
rm -f "$work/big.sprof"

# Bad values are usage errors that name the option.
for bad in "--window 3:1" "--window 1x:2" "--window 5" "--min-dur 5xs" "--min-dur -1"; do
  set +e
  # shellcheck disable=SC2086
  "$SP" trace "$work/known.sprof" -o "$work/bad.json" $bad 2>"$work/err"; rc=$?
  set -e
  opt=${bad%% *}
  [ $rc -eq 2 ] && grep -q -- "$opt" "$work/err" || { echo "$bad: rc $rc: $(cat "$work/err")"; exit 1; }
done
echo "trace_filters.sh: all passed"
