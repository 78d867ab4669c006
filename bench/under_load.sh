#!/usr/bin/env bash
# under_load.sh [RUNS] [REPS] -- truth under load (issue 22, point 3): the
# table's times against the program's own (bench/compensation.sh on the
# issue's program: a parent with 50 ms of its own work calling a short child
# a million times) while a busy process keeps a CPU of the machine, as
# other work does on a machine whose cores are all in use. RUNS runs
# (default 5) of REPS repetitions each (default 1, the issue's protocol; 3
# averages the truth's own noise under load), the events within the
# default 64 MiB budget, so the writer runs as in a program's run. With
# BASE=DIR (another build's folder, e.g. a worktree of an earlier commit)
# each run also runs that build, the two taking turns going first. Prints
# per run and build the error of the child's total and of the parent's
# self and total time (compensated). A benchmark: it never fails on a number.
#   [BUILD=build] [BASE=DIR] bash bench/under_load.sh [RUNS] [REPS]
set -u
runs=${1:-5} reps=${2:-1}
( while :; do :; done ) &
busy=$!
trap 'kill $busy 2>/dev/null' EXIT
# one BUILD_DIR LABEL: one run of one build, its errors on one line.
one() {
    BUILD=$1 WORKLOADS=issue BENCH_COMP_BUFFER_MB=64 bash bench/compensation.sh "$reps" |
        awk -v l="$2" '$1 == "issue" { e[$2 " " $3] = $8 }
            END { printf "%-5s child total %8s   parent self %8s   parent total %8s\n", l,
                         e["child total"], e["parent self"], e["parent total"] }'
}
echo "one busy process beside; $runs runs of $reps repetition(s); errors of the compensated times"
for r in $(seq 1 "$runs"); do
    if [ -n "${BASE:-}" ] && [ $((r % 2)) = 0 ]; then one "$BASE" base; fi
    one "${BUILD:-build}" now
    if [ -n "${BASE:-}" ] && [ $((r % 2)) = 1 ]; then one "$BASE" base; fi
done
