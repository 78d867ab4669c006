#!/usr/bin/env bash
# bench/mpi_cost.c over job sizes and table sizes: the median of REPS runs of
# the profiler's part of MPI_Init and of MPI_Finalize (the slowest rank's),
# in microseconds. Ranks beyond the cores are oversubscribed (mpirun
# --oversubscribe), as on this 2-core machine's CI: their waiting ranks spin.
set -eu
BIN=${1:?usage: mpi_cost.sh BIN [REPS]}
REPS=${2:-7}
tmp=$(mktemp -d /tmp/sp_mpi_cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '%-6s %-6s %12s %16s\n' ranks rows init_us finalize_us
for np in 2 4 8; do
  for rows in 10 1000; do
    for i in $(seq "$REPS"); do
      (cd "$tmp" && SCOPEPROF_OUTPUT=none mpirun --allow-run-as-root --oversubscribe -np $np "$BIN" $rows 2>/dev/null)
    done >"$tmp/runs"
    med() { cut -d' ' -f"$1" "$tmp/runs" | sort -n | awk '{v[NR]=$1} END {print v[int((NR + 1) / 2)]}'; }
    printf '%-6d %-6d %12d %16d\n' $np $rows "$(med 1)" "$(med 2)"
  done
done
