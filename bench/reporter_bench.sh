#!/usr/bin/env bash
# reporter_bench.sh -- time the reporter's `table` and `trace` over generated
# trace files, and compare the JSON it writes with what `cat` moves; then
# `table`, `stacks`, `flame` and `html` on a file of deep stacks.
#
#   BUILD=build BENCH_TMP=/tmp bash bench/reporter_bench.sh [SCOPES...]   (default: 1M 10M)
#
# Deep stacks: $BUILD/tests/reporter/mktrace deep writes DEEP_SCOPES scopes
# (default 1M) in recursions up to 998 deep under one main, as an
# interpreter's; skipped when mktrace is not built (make
# build/tests/reporter/mktrace). DEEP_TRACES="FILE..." times recordings of
# your own the same way (Lua's test suite: 3M scopes, stacks to 998).
#
# Trace files come from $BUILD/bench/gen_trace (scopeprof itself writes them).
# Each command runs 3 times; the median wall time and the peak RSS of that run
# are shown. Wall time is taken around the command (date +%s%N); peak RSS from
# /usr/bin/time -f %M, or from $BUILD/bench/rusage_run (wait4) when
# /usr/bin/time is not installed. If $BUILD/scopeprof does not exist yet, the
# files are generated and the reporter part is skipped (exit status 0).
set -u
BUILD=${BUILD:-build}
TMPD=${BENCH_TMP:-/tmp}
GEN=$BUILD/bench/gen_trace
REP=$BUILD/scopeprof
RUSAGE=$BUILD/bench/rusage_run
REPS=3
[ $# -gt 0 ] || set -- 1000000 10000000

[ -x "$GEN" ] || { echo "reporter_bench: $GEN is not built (make bench-build)"; exit 1; }
work=$(mktemp -d "$TMPD/scopeprof_reporter.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -x /usr/bin/time ]; then TIMER=gnu; else TIMER=wait4; fi

# run_measured OUT CMD...: runs CMD (stdout to /dev/null unless redirected by
# the caller's command), prints "seconds maxrss_kb".
run_measured() {
    local err=$work/time.err t0 t1 rss
    t0=$(date +%s%N)
    if [ $TIMER = gnu ]; then
        /usr/bin/time -f 'maxrss_kb=%M' -o "$err" "$@" >/dev/null 2>"$work/cmd.err" || {
            echo "FAILED: $*" >&2; cat "$work/cmd.err" >&2; return 1; }
    else
        "$RUSAGE" "$@" >/dev/null 2>"$err" || { echo "FAILED: $*" >&2; cat "$err" >&2; return 1; }
    fi
    t1=$(date +%s%N)
    rss=$(sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$err" | tail -1)
    awk -v a="$t0" -v b="$t1" -v r="${rss:-0}" 'BEGIN { printf "%.6f %d\n", (b - a) / 1e9, r }'
}

# median_of CMD...: runs it $REPS times, prints the run with the median time.
median_of() {
    local i
    for ((i = 0; i < REPS; i++)); do run_measured "$@" || return 1; done |
        sort -n | awk -v n=$REPS 'NR == int((n + 1) / 2)'
}

echo "timer: $([ $TIMER = gnu ] && echo '/usr/bin/time -f %M (peak RSS) + date +%s%N (wall)' || echo "$RUSAGE (wait4)"); median of $REPS runs"
declare -A files
for n in "$@"; do
    f=$work/gen_$n.sprof
    t0=$(date +%s%N)
    got=$(SCOPEPROF_OUTPUT=$f SCOPEPROF_SUMMARY=0 "$GEN" "$n") || { echo "gen_trace $n failed"; exit 1; }
    t1=$(date +%s%N)
    files[$n]=$f
    printf 'generated %s scopes: %s, %.1f MiB (%.2f bytes/scope), %.2f s\n' "$got" "$f" \
        "$(awk -v s="$(stat -c %s "$f")" 'BEGIN { print s / 1048576 }')" \
        "$(awk -v s="$(stat -c %s "$f")" -v n="$got" 'BEGIN { print s / n }')" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')"
done

if [ ! -x "$REP" ]; then
    echo "SKIPPED: $REP does not exist yet (the reporter is not built); the table/trace timings need it."
    exit 0
fi

printf '\n%-10s %-6s %9s %12s %10s %11s %10s %11s\n' scopes cmd "time s" "events/s" "peak RSS" "JSON MiB" "JSON MB/s" "cat MB/s"
declare -A tt rr
for n in "$@"; do
    f=${files[$n]}
    read -r t r < <(median_of "$REP" table "$f") || { echo "table failed on $f"; continue; }
    tt[table_$n]=$t; rr[table_$n]=$r
    printf '%-10s %-6s %9.3f %12s %8.1f M %11s %10s %11s\n' "$n" table "$t" \
        "$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2fM", n / t / 1e6 }')" \
        "$(awk -v r="$r" 'BEGIN { print r / 1024 }')" - - -
    j=$work/out_$n.json
    read -r t r < <(median_of "$REP" trace "$f" -o "$j") || { echo "trace failed on $f"; continue; }
    tt[trace_$n]=$t; rr[trace_$n]=$r
    js=$(stat -c %s "$j")
    # What the disk and page cache give for the same bytes: cat of the JSON.
    read -r tc _ < <(median_of cat "$j")
    printf '%-10s %-6s %9.3f %12s %8.1f M %11.1f %10.1f %11.1f\n' "$n" trace "$t" \
        "$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2fM", n / t / 1e6 }')" \
        "$(awk -v r="$r" 'BEGIN { print r / 1024 }')" \
        "$(awk -v s="$js" 'BEGIN { print s / 1048576 }')" \
        "$(awk -v s="$js" -v t="$t" 'BEGIN { print s / t / 1e6 }')" \
        "$(awk -v s="$js" -v t="$tc" 'BEGIN { print s / t / 1e6 }')"
    rm -f "$j"
done

# Growth from the smallest to the largest size: time should grow like the
# event count; table's memory should stay flat.
if [ $# -ge 2 ]; then
    a=$1; b=${!#}
    echo
    for c in table trace; do
        [ -n "${tt[${c}_$a]:-}" ] && [ -n "${tt[${c}_$b]:-}" ] || continue
        awk -v c="$c" -v a="$a" -v b="$b" -v ta="${tt[${c}_$a]}" -v tb="${tt[${c}_$b]}" \
            -v ra="${rr[${c}_$a]}" -v rb="${rr[${c}_$b]}" 'BEGIN {
            printf "%s: %s -> %s scopes (x%.1f): time x%.2f, peak RSS x%.2f\n",
                   c, a, b, b / a, tb / ta, (ra > 0 ? rb / ra : 0) }'
    done
fi

# Deep stacks: stacks, flame and html key rows by the whole stack, which a
# recursive interpreter makes a thousand frames deep; `table` reads the same
# events, so the ratio says what the stacks cost.
MK=$BUILD/tests/reporter/mktrace
deep_files=()
if [ -x "$MK" ]; then
    f=$work/deep_${DEEP_SCOPES:-1000000}.sprof
    "$MK" deep "$f" "${DEEP_SCOPES:-1000000}" && deep_files+=("$f") || echo "mktrace deep failed"
else
    echo
    echo "deep stacks: SKIPPED the generated file: $MK is not built (make $MK)"
fi
for f in ${DEEP_TRACES:-}; do deep_files+=("$f"); done
[ ${#deep_files[@]} -gt 0 ] && printf '\n%-24s %-6s %9s %10s %9s\n' "deep stacks" cmd "time s" "peak RSS" "x table"
for f in "${deep_files[@]}"; do
    t_table=
    for c in table stacks flame html; do
        read -r t r < <(median_of "$REP" "$c" "$f") || { echo "$c failed on $f"; continue; }
        [ "$c" = table ] && t_table=$t
        printf '%-24s %-6s %9.3f %8.1f M %9s\n' "$(basename "$f")" "$c" "$t" \
            "$(awk -v r="$r" 'BEGIN { print r / 1024 }')" \
            "$(awk -v a="${t_table:-0}" -v b="$t" 'BEGIN { if (a > 0) printf "%.1f", b / a; else print "-" }')"
    done
done
