#!/usr/bin/env bash
# where_time_goes.sh -- instructions per scope, counted by callgrind (exact
# and repeatable, unlike times on a shared machine), and perf stat when the
# machine exposes hardware counters.
#
#   BUILD=build bash bench/where_time_goes.sh [N]     (N scopes per case, default 1M)
#
# Each case of scope_cost runs alone under callgrind with --toggle-collect on
# its loop function, so only that loop and what it calls are counted:
# "incl" is everything (slow paths such as a chunk change included), "self"
# the loop function alone (the inlined fast path). The last case records
# while streaming to a file under an 8 MiB budget, and shows which functions
# the writing costs.
set -u
BUILD=${BUILD:-build}
N=${1:-1000000}
SC=$BUILD/bench/scope_cost
tmp=$(mktemp -d /tmp/scopeprof_where.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind is not installed: skipped (apt-get install valgrind)"
else
    echo "callgrind ($(valgrind --version)), $N scopes per case, instructions (Ir) per scope:"
    printf '  %-10s %-32s %8s %8s\n' case "function" incl self
    # case function scopes binary env...
    cg() {
        local key=$1 fn=$2 n=$3 bin=$4; shift 4
        local out=$tmp/cg.$key
        env SCOPEPROF_SUMMARY=0 "$@" valgrind --tool=callgrind --toggle-collect="$fn" \
            --callgrind-out-file="$out" "$bin" --only "${key%%_*}" -n "$n" --dyn-n "$n" -r 1 \
            >"$tmp/log.$key" 2>&1 || {
            echo "  $key: valgrind failed"; tail -3 "$tmp/log.$key"; return; }
        local incl self
        incl=$(sed -n 's/^totals: *//p' "$out")
        # self: the function's own instructions. With inlining, callgrind lists
        # them per source file (loops.c:fn, scopeprof.h:fn): add them up.
        self=$(callgrind_annotate --auto=no "$out" 2>/dev/null | grep -E ":$fn( \[|$)" |
               awk '{ c = $1; gsub(",", "", c); s += c } END { print s + 0 }')
        printf '  %-10s %-32s %8.2f %8.2f\n' "$key" "$fn" \
            "$(awk -v a="$incl" -v n="$n" 'BEGIN { print a / n }')" \
            "$(awk -v a="${self:-0}" -v n="$n" 'BEGIN { print a / n }')"
        if grep -q "clock_gettime (TSC" "$tmp/log.$key"; then
            echo "    (note: under valgrind scopeprof saw no invariant TSC and used clock_gettime)"
        fi
    }
    mem="SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none"
    # shellcheck disable=SC2086 # $mem is a list of VAR=value words for env
    {
        cg floor24 floor24_loop "$N" "$SC" $mem
        cg floor16 floor16_loop "$N" "$SC" $mem
        cg naive naive_loop "$N" "$SC" $mem
        cg scope enabled_scope_loop "$N" "$SC" $mem
        cg dyn enabled_scope_loop_dyn $((N / 10)) "$SC" $mem
        cg disabled disabled_scope_loop "$N" "$SC" $mem
        if [ -x "$BUILD/bench/scope_cost_pic" ]; then
            cg scope_pic enabled_scope_loop "$N" "$BUILD/bench/scope_cost_pic" $mem
        fi
    }
    echo "  (scope_pic: the same loop in a shared library built with -fPIC)"
    cg scope_stream enabled_scope_loop "$N" "$SC" SCOPEPROF_BUFFER_MB=8 \
        SCOPEPROF_OUTPUT="$tmp/stream.sprof"
    echo "  scope_stream: 8 MiB budget, writing to a file; inclusive cost by function, per scope:"
    callgrind_annotate --auto=no --inclusive=yes "$tmp/cg.scope_stream" 2>/dev/null |
        grep -E '^ *[0-9,]+ \(' | grep -v -E 'PROGRAM TOTALS|below main|libc_start|:main |\?\?\?:' |
        head -10 | awk -v n="$N" '{ c = $1; gsub(",", "", c); $1 = ""; $2 = "";
                                   sub(/^ +/, ""); sub(/ \[.*/, "");
                                   printf "    %8.2f  %s\n", c / n, $0 }'
fi

echo
if ! command -v perf >/dev/null 2>&1; then
    echo "perf: not installed; skipped"
elif perf stat -x, -e instructions true 2>&1 | grep -q '<not supported>\|<not counted>' ||
     ! perf stat -x, -e instructions true >/dev/null 2>&1; then
    echo "perf: hardware counters are not available here ('perf stat -e instructions true'" \
         "says <not supported>: a VM without a virtual PMU); skipped"
else
    echo "perf stat, $N scopes per case (whole process: start-up included):"
    for key in floor24 scope naive; do
        SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 \
            perf stat -x, -e instructions,cycles -o "$tmp/perf.$key" "$SC" --only "$key" -n "$N" -r 1 >/dev/null
        awk -F, -v k="$key" -v n="$N" '$3 == "instructions" || $3 ~ /^instructions/ { i = $1 }
            $3 ~ /^cycles/ { c = $1 }
            END { printf "  %-10s %8.2f instructions/scope %8.2f cycles/scope\n", k, i / n, c / n }' \
            "$tmp/perf.$key"
    done
fi
