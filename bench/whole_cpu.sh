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
# printed). With BASE=DIR (another build's folder, e.g. a worktree of an
# earlier commit), each run also starts that build's profiled process, just
# before this one's in even runs and just after it in odd ones (use an even
# RUNS for equal turns), and a second line per regime gives its figures: the
# two builds side by side in one loop, which is how to compare them on a
# shared machine (runs minutes apart move by 0.1-0.3x). Instructions per
# scope: bench/whole_cost.sh. A benchmark: it prints, never fails on a time.
# REGIMES picks some (default all four); NOTABLE=0 leaves out the runs
# without the table (their column then reads -), for twice the runs in the
# same time.
#   BUILD=build [BASE=DIR] [REGIMES=...] [NOTABLE=0] bash bench/whole_cpu.sh [RUNS]
set -eu
runs=${1:-3}
B=${BUILD:-build}/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
med() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-8s %10s %10s %10s %12s %10s\n' regime recording process "no table" "floor cpu s" "RSS MiB"
# run BUILD_DIR SUFFIX: one profiled process of BUILD_DIR (default settings,
# then SCOPEPROF_SUMMARY=0), its figures appended to the files named SUFFIX.
run() {
  local b=$1/bench k=$2
  SCOPEPROF_OUTPUT="$tmp/t.sprof" "$b/rusage_run" "$b/regimes" $m >"$tmp/out" 2>"$tmp/err"
  rm -f "$tmp/t.sprof"
  sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/err" >>"$tmp/cpu$k"
  sed -n 's/.*  x *\([0-9.]*\)  worst.*/\1/p' "$tmp/out" >>"$tmp/rec$k"
  sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$tmp/err" | awk '{print $1 / 1024}' >>"$tmp/rss$k"
  [ "${NOTABLE:-1}" = 0 ] && return
  SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$tmp/t.sprof" "$b/rusage_run" "$b/regimes" $m >/dev/null 2>"$tmp/err0"
  rm -f "$tmp/t.sprof"
  sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/err0" >>"$tmp/cpu0$k"
}
# ratio CPU_FILE: (profiled CPU - 2/3 of the floor process's) / (1/3 of it), per run.
ratio() { paste "$1" "$tmp/fl" | awk '{print ($1 - 2 * $2 / 3) / ($2 / 3)}' | med; }
line() { # line LABEL SUFFIX
  local off=-
  [ "${NOTABLE:-1}" = 0 ] || off=$(printf '%.2fx' "$(ratio "$tmp/cpu0$2")")
  printf '%-8s %9.2fx %9.2fx %10s %12.3f %10.1f\n' "$1" "$(med <"$tmp/rec$2")" "$(ratio "$tmp/cpu$2")" \
    "$off" "$(med <"$tmp/fl")" "$(med <"$tmp/rss$2")"
}
for m in ${REGIMES:-fresh past threads stream}; do
  for k in "" _base; do : >"$tmp/rec$k"; : >"$tmp/cpu$k"; : >"$tmp/cpu0$k"; : >"$tmp/rss$k"; done
  : >"$tmp/fl"
  for ((r = 0; r < runs; r++)); do
    # Default settings (the exit table's sums kept, the table printed), then
    # the same without the table (SCOPEPROF_SUMMARY=0: the trace only).
    # Each writes a new file: overwriting the last run's (ftruncate of
    # hundreds of MB) is the kernel's work, charged to the one that did it.
    # With BASE, the two builds take turns going first: the second of a
    # pair meets the first one's dirty pages in writeback (stream: 1.6 GB),
    # which moved it by 0.3x (session 13).
    if [ -n "${BASE:-}" ] && ((r % 2 == 0)); then run "$BASE" _base; fi
    run "${BUILD:-build}" ""
    if [ -n "${BASE:-}" ] && ((r % 2 == 1)); then run "$BASE" _base; fi
    "$B/rusage_run" "$B/regimes_floor" $m >/dev/null 2>"$tmp/ferr"
    sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/ferr" >>"$tmp/fl"
  done
  line $m ""
  if [ -n "${BASE:-}" ]; then line "  (base)" _base; fi
done
