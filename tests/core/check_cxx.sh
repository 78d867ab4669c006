#!/usr/bin/env bash
# The header compiles as C++ with g++ and clang++ (-Wall -Wextra -Werror):
# enabled, disabled and aggregation-only; the enabled build also runs and
# prints its table. It also compiles as strict ISO C (no GNU dialect), with
# only the POSIX feature macro, and as C99 with GNU extensions. Run through the wrapper rules.mk writes, which passes a
# scratch directory.
set -u
dir=$1
mkdir -p "$dir"
src=$dir/use.cpp
cat >"$src" <<'CPP'
#include "scopeprof.h"
#include <cstdio>
static int fib(int n) {
    PROFILE_FUNCTION();
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
int main() {
    PROFILE_THREAD_NAME("main");
    { PROFILE_SCOPE("outer"); std::printf("%d\n", fib(10)); }
    PROFILE_BEGIN("range");
    PROFILE_SCOPE_DYN("dyn");
    PROFILE_END();
    for (int k = 1; k <= 2; k++) { PROFILE_SCOPE_SHAPE("gemm", 4, 8, 16 * k); }
    PROFILE_FLUSH();
    return 0;
}
CPP
fail=0
for cxx in g++ clang++; do
  if ! command -v "$cxx" >/dev/null; then echo "FAILED: $cxx not installed"; fail=1; continue; fi
  for mode in "-DPROFILE_ENABLE" "" "-DPROFILE_ENABLE=0" "-DSCOPEPROF_AGGREGATION"; do
    if "$cxx" -std=c++17 -Wall -Wextra -Werror -O2 -Iinclude $mode -DSCOPEPROF_IMPLEMENTATION "$src" -o "$dir/use" -lpthread; then
      echo "ok: $cxx $mode"
    else
      echo "FAILED: $cxx $mode"; fail=1; continue
    fi
    if [ "$mode" = -DPROFILE_ENABLE ]; then
      err=$(SCOPEPROF_OUTPUT=none "$dir/use" 2>&1 >/dev/null)
      if grep -q "Self CPU time total" <<<"$err" && grep -q " fib " <<<"$err"; then
        echo "ok: $cxx build runs and prints its table"
      else
        echo "FAILED: $cxx build's table:"; echo "$err"; fail=1
      fi
      err=$(SCOPEPROF_OUTPUT=none SCOPEPROF_GROUP_BY=shape "$dir/use" 2>&1 >/dev/null)
      if grep -q " gemm .* 1  *\[\[4, 8, 16\]\]  $" <<<"$err" && grep -q " gemm .* 1  *\[\[4, 8, 32\]\]  $" <<<"$err"; then
        echo "ok: $cxx build's shaped scopes split by shape"
      else
        echo "FAILED: $cxx build's table by shape:"; echo "$err"; fail=1
      fi
    fi
  done
done
# Strict C: the same program as C (the C++ headers swapped for C ones).
csrc=$dir/use.c
sed -e 's/<cstdio>/<stdio.h>/' -e 's/std::printf/printf/' "$src" >"$csrc"
for cc in gcc clang; do
  for std in "-std=c11 -D_POSIX_C_SOURCE=200809L" "-std=gnu99"; do
    if "$cc" $std -Wall -Wextra -Werror -O2 -Iinclude -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION "$csrc" -o "$dir/usec" -lpthread &&
       SCOPEPROF_OUTPUT=none "$dir/usec" 2>&1 >/dev/null | grep -q "Self CPU time total"; then
      echo "ok: $cc $std builds, runs and prints its table"
    else
      echo "FAILED: $cc $std"; fail=1
    fi
  done
done
exit $fail
