#!/usr/bin/env bash
# whole_cpu.sh [RUNS] -- the whole cost per regime (issue 22), four figures:
#   recording  the recording thread's time per scope over the floor's, in the
#              same process (bench/regimes.c's own ratio);
#   process    the process's CPU (user + sys, every thread, from wait4 via
#              rusage_run) against a floor process run in the same loop:
#              regimes_floor does the floor's loop where the scopes are, so
#              (profiled CPU - 2/3 of the floor process's CPU) is what the
#              scopes cost, over 1/3 of it, the floor's (the floor being two
#              timestamp reads and a 16-byte store);
#   no table   the same with SCOPEPROF_SUMMARY=0 (the trace only: no exit
#              table, so no sums kept);
#   peak RSS   of the profiled process (default settings).
# RUNS profiled and floor processes alternate in each regime (medians
# printed). Instructions per scope: bench/whole_cost.sh. A benchmark: it
# prints, never fails on a time.
#   BUILD=build bash bench/whole_cpu.sh [RUNS]
set -eu
runs=${1:-3}
B=${BUILD:-build}/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
med() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-8s %10s %10s %10s %12s %10s\n' regime recording process "no table" "floor cpu s" "RSS MiB"
for m in fresh past threads stream; do
  : >"$tmp/rec"; : >"$tmp/proc"; : >"$tmp/proc0"; : >"$tmp/fl"; : >"$tmp/rss"
  for ((r = 0; r < runs; r++)); do
    # Default settings (the exit table's sums kept, the table printed), then
    # the same without the table (SCOPEPROF_SUMMARY=0: the trace only).
    # Each writes a new file: overwriting the last run's (ftruncate of
    # hundreds of MB) is the kernel's work, charged to the one that did it.
    SCOPEPROF_OUTPUT="$tmp/t.sprof" "$B/rusage_run" "$B/regimes" $m >"$tmp/out" 2>"$tmp/err"
    rm -f "$tmp/t.sprof"
    SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$tmp/t.sprof" "$B/rusage_run" "$B/regimes" $m >/dev/null 2>"$tmp/err0"
    "$B/rusage_run" "$B/regimes_floor" $m >/dev/null 2>"$tmp/ferr"
    rm -f "$tmp/t.sprof"
    f=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/ferr")
    for k in "" 0; do
      p=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/err$k")
      awk -v p="$p" -v f="$f" 'BEGIN {print (p - 2 * f / 3) / (f / 3)}' >>"$tmp/proc$k"
    done
    echo "$f" >>"$tmp/fl"
    sed -n 's/.*  x *\([0-9.]*\)  worst.*/\1/p' "$tmp/out" >>"$tmp/rec"
    sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$tmp/err" | awk '{print $1 / 1024}' >>"$tmp/rss"
  done
  printf '%-8s %9.2fx %9.2fx %9.2fx %12.3f %10.1f\n' $m "$(med <"$tmp/rec")" "$(med <"$tmp/proc")" \
    "$(med <"$tmp/proc0")" "$(med <"$tmp/fl")" "$(med <"$tmp/rss")"
done
