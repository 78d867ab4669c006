#!/usr/bin/env bash
# The shipped binary's table of each PyTorch fixture trace against the table
# PyTorch printed (tests/chrome/compare.py says what must match and what may
# differ): `scopeprof table` for the legacy export (NAME.json) and
# `scopeprof table --group-by shape` for the Kineto-layout export with shapes
# (NAME.kineto.json). The ASan+UBSan build of chrome_table (the reader and the
# header's printer without cli.c) must print the same tables, byte for byte.
set -u
BUILD=${BUILD:-build}
bin=$BUILD/scopeprof
asan=$BUILD/tests/chrome/chrome_table_asan
fx=tests/chrome/fixtures
rc=0
tmp=$(mktemp) tmp2=$(mktemp)
trap 'rm -f "$tmp" "$tmp2"' EXIT
check() { # TRACE PYTORCH_TABLE GROUP
  # Every row: the fixtures' tables have them all (and text shows 100 by default).
  local args=(--limit 0); [ "$3" = shape ] && args+=(--group-by shape)
  "$bin" table "${args[@]}" "$1" >"$tmp" || { echo "scopeprof table failed on $1"; rc=1; }
  python3 tests/chrome/compare.py "$tmp" "$2" "$1" || rc=1
  "$asan" "$1" "$3" >"$tmp2" 2>/dev/null || { echo "chrome_table_asan failed on $1"; rc=1; }
  cmp -s "$tmp" "$tmp2" || { echo "$1: scopeprof table and chrome_table differ"; diff "$tmp" "$tmp2" | head; rc=1; }
}
for w in mlp conv nested; do
  check "$fx/$w.json" "$fx/$w.table.txt" name
  check "$fx/$w.kineto.json" "$fx/$w.shape.txt" shape
done
exit $rc
