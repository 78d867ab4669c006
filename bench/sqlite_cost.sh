#!/usr/bin/env bash
# sqlite_cost.sh [RUNS] [SIZE] -- the whole cost on a real code base (issue
# 22): SQLite's own benchmark, speedtest1, with 16 of SQLite's functions
# given a PROFILE_SCOPE, as a user instruments a library by hand. ns of CPU
# per scope (user + sys, from wait4 via rusage_run), the program's thread
# apart from the rest, and the process's CPU and wall time against the same
# program without profiling.
#
#   BUILD=build CC=cc bash bench/sqlite_cost.sh [RUNS] [SIZE]
#
# 1. SQLite 3.40.1's amalgamation and test/speedtest1.c, made once by
#    tests/dropin/sqlite_source.sh in $BUILD/tests/dropin/cache (the drop-in
#    test's copy). No download possible: one SKIPPED line, exit 0.
# 2. sqlite3.c edited as a user would: a PROFILE_SCOPE at the top of each
#    function in FUNCS below, from the statement loop (sqlite3_step) down to
#    record comparisons of 5-20 ns (vdbeRecordCompareInt,
#    sqlite3VdbeSerialGet). Built twice, -O2, profiling off and on (the
#    implementation in a file of its own, as the README says).
# 3. `speedtest1 --memdb --size SIZE` (default 50: about 40M scopes, 1 s
#    without profiling, the database in memory so that no disk is timed),
#    RUNS times (default 5) each of, in turn:
#      plain    profiling compiled out (the base);
#      record   SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT=none: the recording and
#               a writer that only recycles chunks;
#      sums     SCOPEPROF_OUTPUT=none: the exit table's sums too;
#      file     default settings: the sums and the trace file written.
# Prints the medians of each: the process's CPU, its own thread's (getrusage
# RUSAGE_THREAD at exit, after the profiler's exit work there), the rest
# (the writer's, and the process's exit), wall time and peak RSS; and per
# scope, each against plain. bench/cpu_split.sh splits the same parts on a
# loop of empty scopes. A benchmark: it prints, never fails on a time.
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
RUNS=${1:-5}
SIZE=${2:-50}
FUNCS=sqlite3_step,sqlite3VdbeExec,sqlite3BtreeInsert,sqlite3BtreeIndexMoveto,sqlite3BtreeTableMoveto,balance,insertCell,patternCompare,vdbeRecordCompareString,vdbeRecordCompareInt,getAndInitPage,getPageNormal,sqlite3BtreeNext,sqlite3VdbeRecordUnpack,sqlite3VdbeSerialGet,sqlite3VdbeMemRelease
RUSAGE=$BUILD/bench/rusage_run
DIR=$BUILD/bench/sqlite

amal=$(bash tests/dropin/sqlite_source.sh "$BUILD/tests/dropin/cache") || { [ $? -eq 77 ] && exit 0; exit 1; }
mkdir -p "$DIR"
FUNCS=$FUNCS perl -ne '
  BEGIN { %want = map { $_ => 1 } split /,/, $ENV{FUNCS}; print "#include \"scopeprof.h\"\n" }
  # A definition: a line that starts with its storage class and names the
  # function, then the line with its "{" (a prototype ends in ";" first).
  $open = $1 if !$open && /^(?:SQLITE_PRIVATE|SQLITE_API|static)\b.*?\b(\w+)\s*\(/ && $want{$1};
  if ($open && s/\{/{ PROFILE_SCOPE("$open");/) { delete $want{$open}; $open = "" }
  elsif ($open && /;\s*$/) { $open = "" }
  print;
  END { die "sqlite3.c: no definition of " . join(", ", sort keys %want) . "\n" if %want }
  ' "$amal/sqlite3.c" > "$DIR/new.c" || exit 1
cmp -s "$DIR/new.c" "$DIR/sqlite3.c" && rm "$DIR/new.c" || mv "$DIR/new.c" "$DIR/sqlite3.c"
printf '#define SCOPEPROF_IMPLEMENTATION\n#include "scopeprof.h"\n' > "$DIR/impl.c"
# Linked into both builds: the CPU of the program's own thread, said at exit
# (its atexit handler is the first registered, so it runs last, after the
# profiler's exit work on that thread); the process's less it is the writer's.
cat > "$DIR/thread_cpu.c" << 'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
static void say(void) {
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) == 0)
        fprintf(stderr, "thread_cpu_s=%.6f\n", (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                                                   (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6);
}
__attribute__((constructor(101))) static void first(void) { atexit(say); }
EOF
# Built again only when the header, the edited source, this script or the
# compiler changed (about 40 s each: sqlite3.c is 243,000 lines).
flags=(-O2 -g -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -D_GNU_SOURCE -Iinclude -I"$amal")
echo "$CC" > "$DIR/cc.new"
cmp -s "$DIR/cc.new" "$DIR/cc" && rm "$DIR/cc.new" || mv "$DIR/cc.new" "$DIR/cc"
stale() { [ ! "$1" -nt "$DIR/sqlite3.c" ] || [ ! "$1" -nt include/scopeprof.h ] || [ ! "$1" -nt "$DIR/cc" ] ||
          [ ! "$1" -nt "$0" ]; }
if stale "$DIR/speedtest1_plain"; then
    $CC "${flags[@]}" "$amal/speedtest1.c" "$DIR/sqlite3.c" "$DIR/thread_cpu.c" -o "$DIR/speedtest1_plain" -lm || exit 1
fi
if stale "$DIR/speedtest1_prof"; then
    $CC "${flags[@]}" -DPROFILE_ENABLE "$amal/speedtest1.c" "$DIR/sqlite3.c" "$DIR/impl.c" "$DIR/thread_cpu.c" \
        -o "$DIR/speedtest1_prof" -lm -lpthread || exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--memdb --size "$SIZE" --nomemstat --singlethread)
run() { # run SUMMARY OUTPUT BIN: "process_cpu_s thread_cpu_s wall_s maxrss_kb" of one run
    SCOPEPROF_SUMMARY=$1 SCOPEPROF_OUTPUT=$2 "$RUSAGE" "$3" "${args[@]}" 2>&1 >/dev/null | awk '
        /^thread_cpu_s=/ { split($0, a, "="); t = a[2] }
        /^rusage_run:/ { for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] } }
        END { print v["cpu_s"], t, v["wall_s"], v["maxrss_kb"] }'
}
# The scopes of a run (speedtest1 is deterministic): the table's calls.
SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$tmp/t.sprof" "$DIR/speedtest1_prof" "${args[@]}" > /dev/null 2>&1
n=$("$BUILD/scopeprof" table --format csv "$tmp/t.sprof" | awk -F, 'NR > 1 { n += $2 } END { print n }')
rm -f "$tmp/t.sprof"
for ((r = 0; r < RUNS; r++)); do
    echo "$(run 1 none "$DIR/speedtest1_plain") $(run 0 none "$DIR/speedtest1_prof")" \
         "$(run 1 none "$DIR/speedtest1_prof") $(run 1 "$tmp/t.sprof" "$DIR/speedtest1_prof")" >> "$tmp/d"
    rm -f "$tmp/t.sprof"
done
# Each line: process CPU, thread CPU, wall, RSS of plain, record, sums, file.
awk -v n="$n" -v runs="$RUNS" -v size="$SIZE" -v cc="$CC" '
    function med(k,   i, j, t, v) { # the median of column k over the runs
        for (i = 1; i <= NR; i++) v[i] = col[i, k]
        for (i = 2; i <= NR; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return v[int((NR + 1) / 2)]
    }
    { for (k = 1; k <= NF; k++) col[NR, k] = $k
      for (m = 0; m < 4; m++) col[NR, 20 + m] = $(4 * m + 1) - $(4 * m + 2) } # the rest: process less thread
    END {
        printf "%s, SQLite 3.40.1 speedtest1 --memdb --size %d, %d scopes a run, medians of %d runs\n", cc, size, n, runs
        printf "%-7s %12s %12s %12s %9s %9s   %s\n", "", "process CPU", "its thread", "the rest", "wall", "peak RSS",
               "ns a scope over plain: process, its thread, the rest"
        split("plain record sums file", name, " ")
        for (m = 0; m < 4; m++) {
            printf "%-7s %11.3fs %11.3fs %11.3fs %8.3fs %5.1f MiB", name[m + 1], med(4 * m + 1), med(4 * m + 2),
                   med(20 + m), med(4 * m + 3), med(4 * m + 4) / 1024
            if (m) printf "   %+.1f, %+.1f, %+.1f", (med(4 * m + 1) - med(1)) * 1e9 / n,
                          (med(4 * m + 2) - med(2)) * 1e9 / n, (med(20 + m) - med(20)) * 1e9 / n
            printf "\n"
        }
        printf "default settings against plain: process CPU %.2fx, wall %.2fx\n", med(13) / med(1), med(15) / med(3)
    }' "$tmp/d"
