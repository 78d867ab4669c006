#!/bin/sh
# write_cost.sh [N] -- the write side's instructions per event (callgrind),
# for each case of bench/write_cost.c: past a 1 MiB budget, so that nearly
# every event is converted, aggregated, encoded, checksummed and written by
# scopeprof__write_span; its inclusive count over N is the per-event cost.
# BIN=path picks the binary (default build/bench/write_cost).
set -e
n=${1:-1000000}
bin=${BIN:-build/bench/write_cost}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-7s %14s %14s %14s\n' case "write/event" "CRC/event" "program/event"
for m in flat nested mem; do
    SCOPEPROF_BUFFER_MB=1 SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$tmp/t.sprof" \
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" $m "$n" > /dev/null 2>&1
    callgrind_annotate --inclusive=yes "$tmp/cg" 2> /dev/null | awk -v n="$n" -v m="$m" '
        { gsub(",", "", $1) }
        /PROGRAM TOTALS/ { total = $1 }
        /:scopeprof__write_span \[/ { write = $1 }
        /:scopeprof_crc32 \[/ { crc = $1 }
        END { printf "%-7s %14.1f %14.1f %14.1f\n", m, write / n, crc / n, total / n }'
done
