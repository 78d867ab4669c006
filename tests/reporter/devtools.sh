#!/usr/bin/env bash
# Integration test with a real consumer: the trace JSON loaded by Chrome
# DevTools' own trace model (npm package @paulirish/trace_engine, pinned in
# tests/reporter/devtools/package-lock.json), for a run of the CPU training
# sample and for a hand-made file with GPU scopes, memory and steps. See
# devtools/check.mjs for what is checked. Needs node and npm; the first run
# needs the npm registry (later ones use npm's cache). If the package cannot
# be installed the test FAILS, saying why: it never passes without running.
set -eu
BUILD=${BUILD:-build}
dir=tests/reporter/devtools
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "error: devtools.sh needs $tool (Node.js 18 or later)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/sp_devtools.XXXXXX)
trap 'rm -rf "$work"' EXIT
# npm ci installs exactly what the lock file says, from the cache when it can.
if ! (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline) >"$work/npm.log" 2>&1; then
  echo "error: 'npm ci' in $dir failed: cannot install @paulirish/trace_engine" >&2
  echo "(it needs the npm registry, or npm's cache from an earlier run); npm said:" >&2
  tail -15 "$work/npm.log" >&2
  exit 1
fi
# A real run of a sample.
SCOPEPROF_OUTPUT="$work/train.sprof" "$BUILD/samples/train_cpu" >/dev/null 2>&1
"$BUILD/scopeprof" trace -o "$work/train.json" "$work/train.sprof"
# Raw times (--no-compensate): the trace JSON DevTools reads holds them.
"$BUILD/scopeprof" table --no-compensate --format json "$work/train.sprof" >"$work/train_table.json"
node "$dir/check.mjs" "$work/train.json" "$work/train_table.json" --ticks
# GPU tracks, flow arrows, counters and steps (tw.h's tw_rich).
"$BUILD/tests/reporter/mktrace" rich "$work/rich.sprof"
"$BUILD/scopeprof" trace -o "$work/rich.json" "$work/rich.sprof"
"$BUILD/scopeprof" table --no-compensate --format json "$work/rich.sprof" >"$work/rich_table.json"
node "$dir/check.mjs" "$work/rich.json" "$work/rich_table.json" --gpu
# The check can fail: the sample's trace against the hand-made file's table.
if node "$dir/check.mjs" "$work/train.json" "$work/rich_table.json" --ticks >"$work/neg.log" 2>&1; then
  echo "error: check.mjs accepted a table that does not match the trace" >&2
  exit 1
fi
echo "a mismatched table is rejected: $(grep -c FAIL "$work/neg.log") problem(s) found"
