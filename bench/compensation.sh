#!/usr/bin/env bash
# Overhead compensation against the program's own times (bench/compensation.c):
# per workload, one process runs the plain and the profiled build REPS times,
# interleaved, and prints the truth (summed over the runs); the table of its
# trace, raw (--no-compensate) and compensated, sums the same runs. Prints
# the error of each against the truth; never fails on a number.
#   compensation.sh [REPS]      (BUILD, BENCH_TMP from the environment;
#                                WORKLOADS: some of "issue nested", default both)
set -u
BUILD=${BUILD:-build}
TMP=${BENCH_TMP:-/tmp}
REPS=${1:-5}
# Every event in memory: the cost of writing past the budget (on the
# recording thread) is not a scope's cost, and not compensated.
BUF=${BENCH_COMP_BUFFER_MB:-1024}
prog=$BUILD/bench/compensation
bin=$BUILD/scopeprof
trace=$TMP/scopeprof_bench_comp.$$.sprof
out=$(mktemp)
trap 'rm -f "$trace" "$out"' EXIT

for w in ${WORKLOADS:-issue nested}; do
  SCOPEPROF_OUTPUT=$trace SCOPEPROF_SUMMARY=0 SCOPEPROF_BUFFER_MB=$BUF "$prog" "$w" "$REPS" | sed "s/^truth /plain $w /" >>"$out"
  # CSV: name,count,self_cpu_time_total_ns,cpu_time_total_ns,...
  "$bin" table --format csv "$trace" | awk -F, -v w="$w" 'NR > 1 { print "comp", w, $1, $4, $3 }' >>"$out"
  "$bin" table --no-compensate --format csv "$trace" |
    awk -F, -v w="$w" 'NR > 1 { print "raw", w, $1, $4, $3 }' >>"$out"
  "$bin" table "$trace" | grep '^Overhead compensation' | sed "s/^/$w: /"
done

python3 - "$out" <<'PY'
import sys
vals = {}
for line in open(sys.argv[1]):
    kind, w, name, total, self_ = line.split()
    vals[(kind, w, name, "total")] = float(total)
    vals[(kind, w, name, "self")] = float(self_)
print("%-7s %-7s %-6s %12s %12s %8s %12s %8s" % ("program", "row", "time", "truth ms", "raw ms",
                                                 "raw err", "comp ms", "comp err"))
for (kind, w, name, what) in sorted(k for k in vals if k[0] == "plain"):
    t = vals[(kind, w, name, what)]
    raw, comp = vals.get(("raw", w, name, what), 0), vals.get(("comp", w, name, what), 0)
    err = lambda v: "%+7.1f%%" % (100 * (v - t) / t) if t > 0 else "      -"
    print("%-7s %-7s %-6s %12.3f %12.3f %8s %12.3f %8s" % (w, name, what, t / 1e6, raw / 1e6,
                                                        err(raw), comp / 1e6, err(comp)))
PY
