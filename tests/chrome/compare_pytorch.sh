#!/usr/bin/env bash
# Our table of each PyTorch fixture trace against the table PyTorch printed
# (tests/chrome/compare.py says what must match and what may differ). Runs the
# ASan+UBSan build of chrome_table. Both the legacy export (NAME.json) and the
# Kineto-layout export with shapes (NAME.kineto.json, --group-by shape) count.
set -u
BUILD=${BUILD:-build}
bin=$BUILD/tests/chrome/chrome_table_asan
fx=tests/chrome/fixtures
rc=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for w in mlp conv nested; do
  "$bin" "$fx/$w.json" >"$tmp" || { echo "reader failed on $w.json"; rc=1; }
  python3 tests/chrome/compare.py "$tmp" "$fx/$w.table.txt" "$fx/$w.json" || rc=1
  "$bin" "$fx/$w.kineto.json" shape >"$tmp" || { echo "reader failed on $w.kineto.json"; rc=1; }
  python3 tests/chrome/compare.py "$tmp" "$fx/$w.shape.txt" "$fx/$w.kineto.json" || rc=1
done
exit $rc
