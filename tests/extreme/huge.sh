#!/usr/bin/env bash
# 2^31 + 1 events (51 GB, streamed through a pipe, never on disk) through
# `scopeprof table -`: the count and the totals past 32 bits, and the peak
# memory. About two minutes: `make test-huge`, not part of `make test`.
set -euo pipefail
BUILD=${BUILD:-build}
n=$(( (1 << 31) + 1 ))
out=$(mktemp /tmp/sp_huge.XXXXXX)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
"$BUILD/tests/extreme/gen_extreme" huge $n | /usr/bin/time -f '%M' -o "$out.rss" "$BUILD/scopeprof" table - >"$out"
cat "$out"
grep -qE "^ *tick  .*10\.737s  .*  $n  $" "$out" || { echo "FAIL: want $n calls of 5 ns (10.737s)"; exit 1; }
echo "huge: $n events in $(( $(date +%s) - start )) s, peak RSS $(cat "$out.rss") KB"
rm -f "$out.rss"
