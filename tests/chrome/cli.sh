#!/usr/bin/env bash
# The shipped `scopeprof` on Chrome trace JSON, where in-process tests cannot
# go: standard input (a pipe: one pass, the format told from the first byte),
# both forms, and the trace JSON of a Chrome input parsed back by python3.
set -u
BUILD=${BUILD:-build}
bin=$BUILD/scopeprof
fx=tests/chrome/fixtures
rc=0
fail() { echo "FAIL: $*"; rc=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Object form (Kineto layout) and bare array (torch's legacy export): a file
# and the same bytes through a pipe give the same table.
for f in "$fx/nested.kineto.json" "$fx/nested.json"; do
  "$bin" table "$f" >"$tmp/file.txt" || fail "table $f"
  "$bin" table - <"$f" >"$tmp/pipe.txt" || fail "table - <$f"
  cat "$f" | "$bin" table - >"$tmp/pipe2.txt" || fail "cat $f | table -"
  cmp -s "$tmp/file.txt" "$tmp/pipe.txt" && cmp -s "$tmp/file.txt" "$tmp/pipe2.txt" || fail "$f: stdin table differs"
  grep -q '^ *aten::mm ' "$tmp/file.txt" || fail "$f: no aten::mm row"
done
cat "$fx/nested.kineto.json" | "$bin" table --group-by shape - | grep -q 'Input Shapes' || fail "shape from a pipe"
# A .sprof file still reads from a pipe (the sniffed head is handed back).
"$BUILD/tests/reporter/mktrace" known "$tmp/k.sprof" 7 || fail mktrace
"$bin" table - <"$tmp/k.sprof" | grep -q '^ *main ' || fail "sprof from a pipe"
# stacks and trace of a Chrome input.
"$bin" stacks "$fx/nested.kineto.json" | grep -q '^rec;rec;aten::mm [0-9]*$' || fail "stacks: no rec;rec;aten::mm"
"$bin" trace "$fx/mlp.kineto.json" -o "$tmp/t.json" || fail "trace"
python3 - "$tmp/t.json" <<'PY' || rc=1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"]
assert len(x) > 100, len(x)
assert any(e["name"] == "aten::addmm" for e in x), "no aten::addmm"
PY
# A GPU annotation (gpu_user_annotation) is a device row, linked to its
# user_annotation by External id like any device event, and left out of the
# Self GPU total only (PyTorch's _build_table); the kernel alone makes it.
cat >"$tmp/ann.json" <<'EOF'
{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"Optimizer.step","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":5}},
{"ph":"X","cat":"cpu_op","name":"aten::add_","pid":1,"tid":1,"ts":10,"dur":50,"args":{"External id":6}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":10,"args":{"External id":6,"correlation":40}},
{"ph":"X","cat":"kernel","name":"add_kernel","pid":0,"tid":7,"ts":40,"dur":30,"args":{"External id":6,"correlation":40}},
{"ph":"X","cat":"gpu_user_annotation","name":"Optimizer.step#GPU","pid":0,"tid":7,"ts":35,"dur":40,"args":{"External id":5}}
]}
EOF
"$bin" table --format json "$tmp/ann.json" | python3 -c '
import json, sys
t = json.load(sys.stdin)["tables"][0]
r = {x["name"]: x for x in t["rows"]}
a, s = r.get("Optimizer.step#GPU"), r["Optimizer.step"]
assert a and a["count"] == 1 and a["cpu_time_total_ns"] == 0 and a["self_gpu_time_total_ns"] == 40000, a
assert s["self_gpu_time_total_ns"] == 40000 and s["gpu_time_total_ns"] == 70000, s
assert t["self_gpu_time_total_ns"] == 30000, t["self_gpu_time_total_ns"]
' || fail "gpu_user_annotation"
# `trace` of a .sprof file writes a GPU scope's CPU side and its GPU interval
# in category gpu_user_annotation ("gpu_dur" / "launch_ts" in args): read
# back, the CPU side is the scope's row again (CPU columns of the .sprof
# file's table), the interval is no device row.
"$BUILD/tests/reporter/mktrace" rich "$tmp/rich.sprof" || fail "mktrace rich"
"$bin" trace "$tmp/rich.sprof" -o "$tmp/rich.json" || fail "trace rich"
for f in rich.sprof rich.json; do
  "$bin" table --no-compensate --format csv "$tmp/$f" | cut -d, -f1-4 | sort >"$tmp/$f.csv" || fail "table $f"
done
cmp -s "$tmp/rich.sprof.csv" "$tmp/rich.json.csv" || fail "GPU scopes read back: $(diff "$tmp/rich.sprof.csv" "$tmp/rich.json.csv")"
# Two processes' runtime calls with one correlation id (a merged trace):
# their kernels credit no op, and one note says so; one process alone, none.
for procs in 1 2; do
  { printf '{"traceEvents":[\n'
    for p in $(seq 1 $procs); do
      printf '{"ph":"X","cat":"cpu_op","name":"op%s","pid":%s,"tid":1,"ts":0,"dur":100,"args":{"External id":1}},\n' $p $p
      printf '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%s,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},\n' $p
    done
    printf '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":40,"args":{"correlation":1}}]}\n'
  } >"$tmp/corr$procs.json"
  "$bin" table --format csv "$tmp/corr$procs.json" >/dev/null 2>"$tmp/err" || fail "corr$procs: exit"
  n=$(grep -c 'share correlation ids (a merged trace)' "$tmp/err")
  [ "$n" = $((procs - 1)) ] || fail "corr$procs: $n notes: $(cat "$tmp/err")"
done
# Malformed JSON from a pipe: the byte offset, exit 1.
printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,}]}' | "$bin" table - >/dev/null 2>"$tmp/err"
st=$?
[ $st = 1 ] || fail "malformed: exit $st"
grep -q '^-: offset [0-9]*: ' "$tmp/err" || fail "malformed: $(cat "$tmp/err")"
[ $rc = 0 ] && echo "cli.sh: all passed"
exit $rc
