#!/usr/bin/env bash
# cpu_split.sh [RUNS] [N] -- where the whole process's CPU goes per scope
# (issue 22), in ns of CPU (user + sys, every thread, from wait4 via
# rusage_run), for the cases of bench/write_cost.c: flat (leaf scopes) and
# nested (a tree of depth 4). Five processes per run, in turn:
#   off      the program with profiling compiled out (the base);
#   floor    the floor of a scope in the same loop (write_cost floor): two
#            rdtsc and a 16-byte store, no profiling;
#   record   profiling on, SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT=none: the
#            recording threads and a writer that only recycles chunks;
#   sums     the same with the exit table's sums kept (SCOPEPROF_SUMMARY=1);
#   file     default settings: the sums and the trace file written.
# Printed per case, medians of RUNS: off itself, floor - off, record - off
# (what recording costs, the two clock reads included), sums - record (the writer's per-event
# sums), file - sums (writing: CRC and the kernel's copy into the page cache).
# Instructions per scope for the same cases: bench/whole_cost.sh. CPU time
# weighs what instruction counts do not (a clock read is one instruction and
# tens of cycles), so the two tell different things. A benchmark: it
# prints, never fails on a time.
#   BUILD=build bash bench/cpu_split.sh [RUNS] [N]
set -eu
runs=${1:-5} n=${2:-4000000}
B=${BUILD:-build}/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
med() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
cpu() { # cpu SUMMARY OUTPUT BIN CASE: the process's CPU seconds
  SCOPEPROF_SUMMARY=$1 SCOPEPROF_OUTPUT=$2 "$B/rusage_run" "$3" "$4" "$n" 2>&1 >/dev/null |
    sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p'
  rm -f "$tmp/t.sprof"
}
printf '%-7s %8s %8s %8s %8s %8s   (ns of CPU per scope, medians of %d runs of %d scopes)\n' \
  case off floor record sums file "$runs" "$n"
for c in flat nested; do
  : >"$tmp/d"
  for ((r = 0; r < runs; r++)); do
    off=$(cpu 1 none "$B/write_cost_off" $c)
    fl=$(cpu 1 none "$B/write_cost_off" floor)
    rec=$(cpu 0 none "$B/write_cost" $c)
    sums=$(cpu 1 none "$B/write_cost" $c)
    file=$(cpu 1 "$tmp/t.sprof" "$B/write_cost" $c)
    echo "$off $fl $rec $sums $file" >>"$tmp/d"
  done
  # col K: column K less the one it is built on (off for floor and record)
  col() {
    awk -v k="$1" -v n="$n" '{ b = k == 1 ? 0 : k <= 3 ? $1 : $(k - 1); print ($k - b) * 1e9 / n }' "$tmp/d" | med
  }
  printf '%-7s %8.1f %+8.1f %+8.1f %+8.1f %+8.1f\n' $c "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)"
done
