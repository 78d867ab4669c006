#!/usr/bin/env bash
# `scopeprof trace` of a Kineto GPU trace, parsed back by python3: CPU ops on
# their thread (no gpu_ts: their GPU time is attributed, not an interval),
# kernels, memcpy and syncs (cuda_sync) only on GPU stream tracks with their real durations,
# arrows from the runtime call that launched them (same "correlation"), the
# process named from the JSON's process_name, the GPU named from Kineto's
# deviceProperties, no empty track for the stream's
# thread. From a pipe (one pass) the same but without arrows. With node and
# DevTools' trace model installed (tests/reporter/devtools.sh), it is loaded
# there too: every slice in its thread's tree, both arrows bound.
set -u
BUILD=${BUILD:-build}
bin=$BUILD/scopeprof
rc=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Kineto's layout: CPU pid 4242 and GPU pid 0 share tid 7; kernels come after
# the ops, with the ac2g flow events Kineto writes (not needed).
cat >"$tmp/gpu.json" <<'EOF'
{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85031714816}],
"traceEvents": [
{"ph":"M","name":"process_name","pid":4242,"tid":0,"args":{"name":"python3"}},
{"ph":"M","name":"thread_name","pid":4242,"tid":7,"args":{"name":"main"}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":4242,"tid":7,"ts":1700000000000100.000,"dur":100,"args":{"External id":1}},
{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":4242,"tid":7,"ts":1700000000000110.000,"dur":50,"args":{"External id":10}},
{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":4242,"tid":7,"ts":1700000000000115.000,"dur":40,"args":{"External id":11}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":7,"ts":1700000000000120.000,"dur":10,"args":{"External id":11,"correlation":101}},
{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":4242,"tid":7,"ts":1700000000000160.000,"dur":20,"args":{"External id":12}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":4242,"tid":7,"ts":1700000000000162.000,"dur":5,"args":{"External id":12,"correlation":102}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":4242,"tid":7,"ts":1700000000000185.000,"dur":3,"args":{"External id":0,"correlation":103}},
{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"python3"}},
{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7"}},
{"ph":"X","cat":"kernel","name":"gemm_kernel","pid":0,"tid":7,"ts":1700000000000140.000,"dur":30.5,"args":{"External id":11,"correlation":101}},
{"ph":"s","id":101,"pid":4242,"tid":7,"ts":1700000000000120.000,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":101,"pid":0,"tid":7,"ts":1700000000000140.000,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":1700000000000175.000,"dur":4,"args":{"External id":12,"correlation":102}},
{"ph":"s","id":102,"pid":4242,"tid":7,"ts":1700000000000162.000,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":102,"pid":0,"tid":7,"ts":1700000000000175.000,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":1700000000000186.000,"dur":1.5,"args":{"correlation":103}}
]}
EOF
"$bin" trace -o "$tmp/t.json" "$tmp/gpu.json" || { echo "FAIL: trace"; rc=1; }
"$bin" trace - <"$tmp/gpu.json" >/dev/null || { echo "FAIL: trace from stdin"; rc=1; }
cat "$tmp/gpu.json" | "$bin" trace -o "$tmp/pipe.json" - || { echo "FAIL: trace from a pipe"; rc=1; }
python3 - "$tmp/t.json" "$tmp/pipe.json" <<'PY' || rc=1
import json, sys
bad = []
def check(path, arrows):
    ev = json.load(open(path))["traceEvents"]
    pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    gpu = {p for p, n in pname.items() if n.startswith("GPU ")}
    cpu = set(pname) - gpu
    def want(ok, what):
        if not ok: bad.append(f"{path.split('/')[-1]}: {what}")
    want(len(cpu) == 1 and pname[min(cpu)] == "python3 (pid 4242)", f"CPU process name: {pname}")
    want(len(gpu) == 1 and "NVIDIA H100 80GB HBM3" in pname[min(gpu)], f"GPU named from deviceProperties: {pname}")
    x = [e for e in ev if e.get("ph") == "X" and e.get("cat") != "step"]
    dev = {"gemm_kernel": 30.5, "Memcpy HtoD": 4.0, "Stream Sync": 1.5}
    for name, dur in dev.items():
        s = [e for e in x if e["name"] == name]
        want(len(s) == 1, f"{name}: {len(s)} slices, want 1 (on a GPU track)")
        want(all(e["pid"] in gpu and abs(e["dur"] - dur) < 1e-6 for e in s), f"{name}: {s}")
    ops = [e for e in x if e["name"] not in dev]
    want(len(ops) == 7 and all(e["pid"] in cpu and e["tid"] == 7 for e in ops), f"CPU ops: {ops}")
    want(not any("gpu_ts" in e["args"] for e in ops), "a CPU op carries gpu_ts")
    tn = [(e["pid"], e["args"]["name"]) for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"]
    want(not any(p in cpu and n == "stream 7" for p, n in tn), f"stream thread on the CPU process: {tn}")
    s = [e for e in ev if e.get("ph") == "s"]
    f = [e for e in ev if e.get("ph") == "f"]
    if not arrows:
        return want(not s and not f, "arrows from a pipe")
    want(len(s) == 3 and len(f) == 3, f"arrows: {len(s)} s, {len(f)} f")
    want(max(map(ev.index, s)) < min(map(ev.index, f), default=0), "an arrow end before its start")
    launch = {e["name"]: e for e in ops}
    for a, b, k in ((101, "cudaLaunchKernel", "gemm_kernel"), (102, "cudaMemcpyAsync", "Memcpy HtoD"),
                    (103, "cudaStreamSynchronize", "Stream Sync")):
        sa = [e for e in s if launch[b]["ts"] == e["ts"] and launch[b]["cat"] == e["cat"] and launch[b]["tid"] == e["tid"]]
        want(len(sa) == 1, f"no arrow start on {b}")
        ke = [e for e in x if e["name"] == k][0]
        fa = [e for e in f if sa and e["id"] == sa[0]["id"]]
        want(len(fa) == 1 and (fa[0]["ts"], fa[0]["pid"], fa[0]["tid"], fa[0]["cat"]) ==
             (ke["ts"], ke["pid"], ke["tid"], ke["cat"]), f"arrow {b} -> {k}: {fa}")
check(sys.argv[1], True)
check(sys.argv[2], False)
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# DevTools' model, when tests/reporter/devtools.sh has installed it. The
# table's device rows have no CPU slices: the check compares the CPU rows.
dt=tests/reporter/devtools
if command -v node >/dev/null && [ -d "$dt/node_modules/@paulirish/trace_engine" ]; then
  "$bin" table --format json "$tmp/gpu.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["tables"]: t["rows"] = [r for r in t["rows"] if r["name"] not in ("gemm_kernel", "Memcpy HtoD", "Stream Sync")]
json.dump(d, sys.stdout)' >"$tmp/table.json"
  node "$dt/check.mjs" "$tmp/t.json" "$tmp/table.json" --gpu || rc=1
else
  echo "trace_chrome.sh: DevTools model not installed (tests/reporter/devtools.sh does it): skipped"
fi
[ $rc = 0 ] && echo "trace_chrome.sh: all passed"
exit $rc
