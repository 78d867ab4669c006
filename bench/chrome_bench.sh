#!/usr/bin/env bash
# Chrome trace reader benchmark (not part of make test). Generates a Kineto-like
# trace of >= 100 MB (SIZE_MB, default 120; not kept), then times and measures
# peak RSS of:
#   ours     build/scopeprof table TRACE  (the shipped binary: streaming reader,
#            header aggregation, table print), and --group-by shape
#   core     build/tests/chrome/chrome_table TRACE  (the same without cli.c)
#   json     python3 -c 'import json; json.load(open(F))'  (parsing only)
#   torch    torch.profiler's key_averages() over a profile holding the same
#            number of events (PyTorch cannot load a trace back: this times
#            what a PyTorch user runs to get the same table). Needs Debian's
#            /usr/bin/python3 with python3-torch; skipped otherwise.
# Usage: bench/chrome_bench.sh   (builds what it times)
set -eu
BUILD=${BUILD:-build}
SIZE_MB=${SIZE_MB:-120}
make --no-print-directory "$BUILD/scopeprof" "$BUILD/tests/chrome/chrome_table" >/dev/null
work=$(mktemp -d /tmp/sp_chrome_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
F=$work/trace.json
python3 - "$F" "$SIZE_MB" <<'PY'
import random, sys
path, mb = sys.argv[1], int(sys.argv[2])
random.seed(1)
ops = ["aten::linear", "aten::addmm", "aten::relu", "aten::add", "aten::mm", "aten::empty", "aten::copy_"]
out = open(path, "w")
out.write('{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [\n')
ts, ext, n, first = 1700000000000000.0, 0, 0, True
while out.tell() < mb << 20:
    # one step: an annotation, ops nested 3 deep, a launch + kernel per leaf
    ext += 1
    step_ext, t0 = ext, ts
    evs = []
    t = ts + 1.0
    for i in range(20):
        ext += 1
        op, opx = random.choice(ops), ext
        ext += 1
        leaf, lx = random.choice(ops), ext
        evs.append('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 11, "tid": 11, "ts": %.3f, "dur": %.3f, "args": {"External id": %d, "Input Dims": [[32, 64], [64]]}}' % (op, t, 8.0, opx))
        evs.append('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 11, "tid": 11, "ts": %.3f, "dur": %.3f, "args": {"External id": %d, "Input Dims": [[32, 64]]}}' % (leaf, t + 1, 5.0, lx))
        # in start order per thread: the memory record (t+1.5) before the launch (t+2)
        evs.append('{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 11, "tid": 11, "ts": %.3f, "s": "t", "args": {"Total Reserved": 0, "Total Allocated": 0, "Bytes": 8192, "Addr": 1, "Device Id": -1, "Device Type": 0}}' % (t + 1.5))
        evs.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 11, "ts": %.3f, "dur": 2.000, "args": {"External id": %d, "correlation": %d}}' % (t + 2, lx, opx))
        evs.append('{"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float>", "pid": 0, "tid": 7, "ts": %.3f, "dur": 3.250, "args": {"External id": %d, "correlation": %d, "device": 0, "stream": 7}}' % (t + 4, lx, opx))
        t += 10
    evs.insert(0, '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 11, "tid": 11, "ts": %.3f, "dur": %.3f, "args": {"External id": %d}}' % (step_ext, t0, t - t0, step_ext))
    ts = t + 5
    out.write((",\n" if not first else "") + ",\n".join(evs))
    first = False
    n += len(evs)
out.write('\n]}\n')
out.close()
open(path + ".n", "w").write(str(n))
PY
N=$(cat "$F.n")
echo "trace: $(du -m "$F" | cut -f1) MB, $N events"
measure() { # label, command...: wall seconds and peak RSS from /usr/bin/time
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { echo "$label failed"; cat "$work/err"; return 1; }
  read -r s kb <"$work/t"
  printf '%-7s %8.2f s  %8d MB peak RSS\n' "$label" "$s" $((kb / 1024))
  eval "T_$label=$s"
}
measure ours "$BUILD/scopeprof" table "$F"
measure shape "$BUILD/scopeprof" table --group-by shape "$F"
measure core "$BUILD/tests/chrome/chrome_table" "$F"
measure json python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$F"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  measure torch /usr/bin/python3 - "$N" <<'PY'
import sys, time, torch
from torch.profiler import profile, ProfilerActivity
n = int(sys.argv[1])
torch.set_num_threads(1)
a = torch.zeros(1)
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for _ in range(n):   # one recorded event per torch.add
        torch.add(a, a)
t = time.time()
prof.key_averages().table(sort_by="cpu_time_total", row_limit=20)
print("events", len(prof.events()), "key_averages+table %.2f s" % (time.time() - t), file=sys.stderr)
PY
  cat "$work/err" >&2
fi
python3 -c "import sys; o,j=float(sys.argv[1]),float(sys.argv[2]); print('json.load / ours: %.1fx' % (j/o))" "$T_ours" "$T_json"
[ -n "${T_torch:-}" ] && python3 -c "import sys; o,t=float(sys.argv[1]),float(sys.argv[2]); print('torch (record+key_averages) / ours: %.1fx' % (t/o))" "$T_ours" "$T_torch"
exit 0
