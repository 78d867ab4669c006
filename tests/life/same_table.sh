#!/usr/bin/env bash
# One table everywhere (issue 24, item 2): the table a program prints at exit
# (and at the end of each scheduled cycle) and `scopeprof table` of the trace
# file it wrote are the same bytes: the same rows, ProfilerStep* included,
# the same numbers to the printed digit, the same notes and memory footer.
# Both sum each row in the file's clock ticks and convert the sum once
# (scopeprof_agg_flush), so they cannot drift apart by rounding.
# Cases: a schedule with two cycles, steps and memory (prog_life); a program
# with a loader thread, nesting, steps and memory (samples/train_cpu), with
# overhead compensation and without it (SCOPEPROF_COMPENSATE=0); scopes with
# input shapes (samples/gemm_shapes, tests/core/prog_shape: shapes cut to
# fit, negative sizes, records across chunks) grouped by shape
# (SCOPEPROF_GROUP_BY=shape against --group-by shape) and by name; runs of
# one leaf scope (tests/life/prog_life runs), with the rows of short scopes
# named under the table; ranges across scopes
# (prog_life overlap); records out of close order (prog_life late_close).
set -eu
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/sp_same.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0

# same NAME EXIT_TEXT TRACE [ARGS...]: the exit text against `scopeprof table ARGS... TRACE`.
# With SAYS=TEXT, the reporter must also warn in a line holding TEXT (which
# the exit table has no reason to print), and exits 1 for it; that line is
# left out of the comparison.
same() {
  local name=$1 want=$2 trace=$3 rc=0
  shift 3
  "$BUILD/scopeprof" table "$@" "$trace" >"$work/got" 2>&1 || rc=$?
  if [ -n "${SAYS:-}" ]; then
    if ! grep -qF "$SAYS" "$work/got"; then
      echo "FAIL: $name: scopeprof table does not say '$SAYS':"; cat "$work/got"; failed=1; return
    fi
    grep -vF "$SAYS" "$work/got" >"$work/got.kept" || true
    mv "$work/got.kept" "$work/got"
    [ "$rc" -ne 1 ] || rc=0
  fi
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $name: scopeprof table $trace failed:"; cat "$work/got"; failed=1; return
  fi
  if ! grep -q '^Self CPU time total' "$want"; then
    echo "FAIL: $name: no table printed at exit:"; cat "$want"; failed=1; return
  fi
  if diff -u "$want" "$work/got" >"$work/diff"; then
    echo "ok: $name: $(grep -c '' "$want") lines the same"
  else
    echo "FAIL: $name: the exit table (-) and scopeprof table (+) differ:"; cat "$work/diff"; failed=1
  fi
}

# Two cycles of two active steps, each step allocating: per cycle, the lines
# after "scopeprof: cycle N (PATH)" against that cycle's file.
SCOPEPROF_OUTPUT="$work/trace.sprof" SCOPEPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=2 LIFE_STEP_MEM=1 \
  "$BUILD/tests/life/prog_life" steps 12 >/dev/null 2>"$work/sched.err"
for k in 1 2; do
  awk -v k="$k" '/^scopeprof: cycle [0-9]+ \(/ { on = ($3 == k) ; next } on' "$work/sched.err" >"$work/cycle$k"
  same "schedule, cycle $k" "$work/cycle$k" "$work/trace.cycle000$k.sprof"
  grep -q '^ *ProfilerStep\* ' "$work/cycle$k" || { echo "FAIL: cycle $k: no ProfilerStep* row"; failed=1; }
done

# A loader thread, nested scopes, steps and memory; compensated, then raw.
# At exit the summary ends with the trace file's name and size, and the
# profiler's own cost, which the reporter (reading that file) has no reason
# to print, or cannot: checked, then left out.
for comp in 1 0; do
  SCOPEPROF_OUTPUT="$work/train$comp.sprof" SCOPEPROF_COMPENSATE=$comp \
    "$BUILD/samples/train_cpu" >/dev/null 2>"$work/train$comp.all"
  last=$(sed -n '/^Trace file: /,$p' "$work/train$comp.all")
  case "$last" in
    "Trace file: $work/train$comp.sprof ("*" B)"$'\n'"Profiler's own cost: "*" calls, "* | \
    "Trace file: $work/train$comp.sprof ("*" KB)"$'\n'"Profiler's own cost: "*" calls, "*) ;;
    *) echo "FAIL: the exit summary does not end with the trace file and the own cost: '$last'"; failed=1 ;;
  esac
  sed '/^Trace file: /,$d' "$work/train$comp.all" >"$work/train$comp.err"
  same "train_cpu, SCOPEPROF_COMPENSATE=$comp" "$work/train$comp.err" "$work/train$comp.sprof"
done
grep -q '^Overhead compensation' "$work/train1.err" || { echo "FAIL: no compensation note in the compensated run"; failed=1; }

# same_life MODE LABEL: tests/life/prog_life MODE's exit table against
# `scopeprof table` of its trace, compensated, then raw; the exit text is
# left in $work/MODE1.err and MODE0.err, the trace removed once compared.
same_life() {
  local mode=$1 label=$2 comp
  for comp in 1 0; do
    if ! SCOPEPROF_OUTPUT="$work/$mode$comp.sprof" SCOPEPROF_COMPENSATE=$comp \
      "$BUILD/tests/life/prog_life" "$mode" >/dev/null 2>"$work/$mode$comp.all"; then
      echo "FAIL: $label: prog_life $mode failed:"; cat "$work/$mode$comp.all"; failed=1; continue
    fi
    sed '/^Trace file: /,$d' "$work/$mode$comp.all" >"$work/$mode$comp.err"
    same "$label, SCOPEPROF_COMPENSATE=$comp" "$work/$mode$comp.err" "$work/$mode$comp.sprof"
    rm -f "$work/$mode$comp.sprof"
  done
}

# Runs of one leaf scope at depths 0 to 2 on two threads, which the writer
# sums together (summary.h, scopeprof__sum_run).
same_life runs "runs of one scope"
for comp in 1 0; do
  grep -q '^ *run_leaf  .*  37560  $' "$work/runs$comp.err" ||
    { echo "FAIL: runs: run_leaf is not 2 x (40 x 350 + 100 + ... + 139) = 37,560 calls:"; cat "$work/runs$comp.err"; failed=1; }
done

# Rows most of whose calls are about as short as an empty scope (under twice
# its duration: compensation's short class) are named under the table,
# compensated (their times are mostly the profiler's: table.h,
# scopeprof_table_notes), in both tables alike (compared above): run_leaf
# (a counter's increment in it) is, run_parent (its 400 children) is not.
# The table across files (--per-rank, one file here) keeps the short class:
# the footer's figure and the rows named. Each call's duration decides its
# class, and a loaded machine stretches them: with two busy loops on the two
# CPUs, 1 run in 30 showed run_leaf at 47 ns a call and did not name it. So
# up to 3 runs are tried for one that names them (the rule itself is checked
# exactly, without a clock, in tests/core/test_agg.c:
# test_comp_short_rows_named); a run that names run_parent fails at once.
! grep -q "^Mostly the profiler's own cost" "$work/runs0.err" || { echo "FAIL: runs: raw times name short rows"; failed=1; }
short_named() { # FILE: 0 run_leaf and run_other named; 2 run_parent or run_mid named; else 1
  local line
  line=$(grep "^Mostly the profiler's own cost (most calls about as short as an empty scope" "$1" || true)
  case "$line" in
    *run_parent* | *run_mid*) return 2 ;;
    *" run_leaf"*" run_other"*) return 0 ;;
  esac
  return 1
}
for try in 1 2 3; do
  SCOPEPROF_OUTPUT="$work/runs_rank.sprof" "$BUILD/tests/life/prog_life" runs >/dev/null 2>"$work/short.err"
  "$BUILD/scopeprof" table --per-rank "$work/runs_rank.sprof" >"$work/runs_rank.out" 2>&1 || true
  rc=0; short_named "$work/short.err" || rc=$?
  if [ "$rc" -eq 2 ]; then
    echo "FAIL: runs: run_parent or run_mid is named as mostly the profiler's cost:"; cat "$work/short.err"; failed=1; break
  fi
  if [ "$rc" -eq 0 ] && grep -q "per short one, about as short as an empty scope" "$work/runs_rank.out" &&
    grep -q "^Mostly the profiler's own cost (.*: .*run_leaf" "$work/runs_rank.out"; then
    [ "$try" -eq 1 ] || echo "ok: runs: short rows named in run $try of 3 (the machine is loaded)"
    break
  fi
  if [ "$try" -eq 3 ]; then
    echo "FAIL: runs: in 3 runs, run_leaf and run_other were not named as mostly the profiler's cost, at exit or by --per-rank:"
    cat "$work/short.err" "$work/runs_rank.out"; failed=1
  fi
  rm -f "$work/runs_rank.sprof"
done

# Ranges that outlive the scope they began in: a child that started before
# its parent, two overlapping records of one key (prog_life overlap). The
# exit table tests the children's whole span, as the reporter does.
same_life overlap "ranges across scopes"

# Records out of close order (prog_life late_close): a signal handler's
# scope that lands in a scope's close after its clock read is written first,
# one level below it, though it began after the scope ended. The exit table
# must not count it as that scope's child (its end is tested, as the
# reporter tests it). The reporter's line on records that close before an
# earlier one is required (else the case did not happen in this run).
SAYS='close before an earlier event of their thread' same_life late_close "records out of close order"

# Input shapes (issue 26): every row, grouped by shape and by name.
for prog in samples/gemm_shapes tests/core/prog_shape; do
  base=$(basename "$prog")
  for group in shape name; do
    SCOPEPROF_OUTPUT="$work/$base.$group.sprof" SCOPEPROF_GROUP_BY=$group SCOPEPROF_ROW_LIMIT=0 \
      "$BUILD/$prog" >/dev/null 2>"$work/$base.$group.all"
    sed '/^Trace file: /,$d' "$work/$base.$group.all" >"$work/$base.$group.err"
    same "$base, SCOPEPROF_GROUP_BY=$group" "$work/$base.$group.err" "$work/$base.$group.sprof" \
      --group-by $group --limit 0
  done
  grep -q 'Input Shapes  $' "$work/$base.shape.err" || { echo "FAIL: $base: no Input Shapes column"; failed=1; }
done

[ "$failed" -eq 0 ] && echo "same_table.sh: all passed"
exit "$failed"
