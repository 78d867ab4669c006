#!/bin/sh
# whole_cost.sh [N] -- instructions per scope for the WHOLE process (issue
# 22): every thread (the recording threads, the background writer), start-up
# and exit, counted by callgrind (which counts all threads and does not
# depend on load), with default settings and the trace file written. The
# floor is the same program with profiling compiled out; per scope =
# (profiled - floor) / N. Cases of bench/write_cost.c: flat (leaf scopes),
# nested (a tree of depth 4), shaped (leaf scopes with input shapes, issue
# 26) and by_shape (the same, the exit table grouped by shape:
# SCOPEPROF_GROUP_BY=shape). CASES picks some (default all four). REPS=K
# counts each profiled case K times and keeps the least (default 1): a run
# of one leaf scope is summed a few instructions a record only while its
# records stay in one compensation class, and under valgrind an empty
# scope lasts about as long as the calibrated bound between the classes,
# so `flat` moves by up to 30 per scope from run to run (docs/
# PERFORMANCE.md, session 17); the least of a few is the code's own count.
#   BIN=build/bench/write_cost OFF=build/bench/write_cost_off [REPS=K] sh bench/whole_cost.sh [N]
set -e
n=${1:-2000000}
bin=${BIN:-build/bench/write_cost}
off=${OFF:-build/bench/write_cost_off}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total() { # total instructions of: total BIN MODE [GROUP_BY]
    SCOPEPROF_OUTPUT="$tmp/t.sprof" SCOPEPROF_GROUP_BY=${3:-name} \
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$1" "$2" "$n" > /dev/null 2>&1
    callgrind_annotate "$tmp/cg" 2> /dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
printf '%-8s %16s %16s %14s\n' case "profiled instr" "floor instr" "per scope"
for c in ${CASES:-flat nested shaped by_shape}; do
    m=$c g=name
    [ "$c" = by_shape ] && m=shaped g=shape
    p=$(total "$bin" "$m" "$g") f=$(total "$off" "$m") k=1
    while [ "$k" -lt "${REPS:-1}" ]; do
        q=$(total "$bin" "$m" "$g") k=$((k + 1))
        [ "$q" -lt "$p" ] && p=$q
    done
    awk -v c=$c -v p="$p" -v f="$f" -v n="$n" 'BEGIN { printf "%-8s %16d %16d %14.1f\n", c, p, f, (p - f) / n }'
done
