#!/usr/bin/env bash
# What including the header costs a build (docs/PERFORMANCE.md "Code size and
# compile time"): a one-function file of a multi-file project (it includes
# <stdio.h> first, then the header) compiled at -O2 with profiling off, with
# profiling on (not the implementation), and the implementation's own file;
# CPU time (user + sys of the compiler, best of REPS) and the object's code
# (.text) and `size` text. Targets (issue 21): a file that is not the
# implementation within +0.1 s CPU and +2 KiB of text of the same file with
# profiling off; the implementation at most 64 KiB of code.
#   compile_cost.sh [REPS]     (CC list: gcc clang)
set -eu
reps=${1:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/one.c" <<'C'
#include <stdio.h>
#include "scopeprof.h"
int work(int x);
int work(int x) { PROFILE_SCOPE("work"); return x * 2; }
C
printf '#define SCOPEPROF_IMPLEMENTATION\n#include "scopeprof.h"\n' >"$dir/impl.c"
cpu() { # best user+sys seconds of REPS compiles: cpu CC FILE FLAGS...
  local cc=$1 f=$2 best=999; shift 2
  for ((r = 0; r < reps; r++)); do
    local t
    t=$( { /usr/bin/time -f '%U %S' "$cc" -std=gnu11 -O2 -Iinclude "$@" -c "$f" -o "$dir/x.o" >/dev/null; } 2>&1 | tail -1 |
        awk '{print $1 + $2}')
    best=$(awk -v a="$best" -v b="$t" 'BEGIN {print (b < a) ? b : a}')
  done
  echo "$best"
}
text() { size -A "$dir/x.o" | awk '$1 == ".text" {print $2}'; }
sizetext() { size "$dir/x.o" | awk 'NR == 2 {print $1}'; }
printf '%-6s %-34s %8s %8s %10s\n' cc file "CPU s" ".text B" "size text"
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  for v in "one.c off:" "one.c on:-DPROFILE_ENABLE" "impl.c implementation:-DPROFILE_ENABLE"; do
    f=${v%% *} rest=${v#* } label=${rest%%:*} flags=${rest#*:}
    # shellcheck disable=SC2086
    c=$(cpu "$cc" "$dir/$f" $flags)
    printf '%-6s %-34s %8s %8s %10s\n' "$cc" "$f ($label)" "$c" "$(text)" "$(sizetext)"
  done
  printf '%-6s %-34s %8s\n' "$cc" "one.c, preprocessed lines (on)" \
    "$("$cc" -std=gnu11 -DPROFILE_ENABLE -Iinclude -E "$dir/one.c" | wc -l)"
done
