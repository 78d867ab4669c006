#!/usr/bin/env bash
# order.sh -- the header stands before or after anything (issue 21), two
# small files compiled with -DPROFILE_ENABLE, compile only (they are not the
# implementation: no SCOPEPROF_IMPLEMENTATION, nothing is linked):
#   gnu_after.c     the header on line 1, then `#define _GNU_SOURCE` and
#                   <sys/mman.h>' mremap(..., MREMAP_MAYMOVE). glibc reads
#                   the feature macros once, at the first system header: a
#                   header that includes one fixes the feature set before the
#                   file chooses it, and mremap is undeclared (SQLite's
#                   sqlite3.c does exactly this: tests/dropin/real_sqlite.sh).
#   system_first.c  the other order: system headers first in strict ISO C
#                   (-std=c99 hides POSIX), then the header and its macros.
# gcc and clang, C99, C11 and GNU11 each, warnings as errors.
#   order.sh [INCLUDE_DIR]    (default include)
set -euo pipefail
inc=${1:-include}
WARN="-Wall -Wextra -Wpedantic -Werror"
failed=() n=0
for src in gnu_after system_first; do
  for cc in gcc clang; do
    for std in c99 c11 gnu11; do
      name="$cc -std=$std $src.c"; n=$((n + 1))
      # shellcheck disable=SC2086 # flag list
      if out=$($cc -std=$std $WARN -DPROFILE_ENABLE -I"$inc" -c -o /dev/null "tests/dropin/$src.c" 2>&1) &&
         [ -z "$out" ]; then
        echo "ok $name"
      else
        echo "FAILED $name:"; printf '%s\n' "$out" | grep -E 'error|warning' | head -6
        failed+=("$name")
      fi
    done
  done
done
echo "$n configurations, ${#failed[@]} failed"
for f in "${failed[@]+"${failed[@]}"}"; do echo "FAILED: $f"; done
[ ${#failed[@]} -eq 0 ]
