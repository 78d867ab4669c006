#!/usr/bin/env bash
# The header drops into strict builds (README "Supported"): compile only,
# tests/dropin/use.c (every macro, declarations after the declaring ones),
# with the warning sets big C projects use, as errors. The combinations are
# picked to find different faults, not to be exhaustive:
#   - every C standard with gcc and clang, enabled, header included first
#     (feature macros, C99/C11 differences, the strict warning set);
#   - included after system headers (glibc has fixed the feature set): a file
#     that is not the implementation compiles in every mode (it includes no C
#     library header); the implementation's file compiles first in strict
#     modes, and after system headers must stop with ONE error that names the
#     fix, and C89 enabled likewise;
#   - disabled, in C89 and C99, first and after (the no-op macros must be
#     declarations: no "mixed declarations and code" at the user's lines);
#   - C++11/14/17/20 with g++ and clang++, enabled and disabled;
#   - two full -O2 compiles (warnings that need the optimizer), with the
#     malloc wrappers (nested wrapped calls);
#   - PROFILE_HIP with the allocation wrappers, as C and C++.
#   matrix.sh [INCLUDE_DIR]    (default include; another dir tests an old header)
set -u
inc=${1:-include}
src=tests/dropin/use.c
STRICT_C="-Wall -Wextra -Wpedantic -Werror -Wdeclaration-after-statement -Wmissing-prototypes
  -Wstrict-prototypes -Wcast-qual -Wredundant-decls -Wshadow -Wstrict-aliasing -Wundef
  -Wconversion -Wsign-conversion -Wold-style-definition -Wmissing-declarations"
# The same set less the C-only options (g++ warns that they do not apply).
STRICT_CXX="-Wall -Wextra -Wpedantic -Werror -Wcast-qual -Wredundant-decls -Wshadow
  -Wstrict-aliasing -Wundef -Wconversion -Wsign-conversion -Wmissing-declarations"
# What C++ projects add for their own code, for the header in every file
# (LULESH review: -Wold-style-cast warned at each scope). The
# implementation's one file is held to STRICT_CXX only (README).
CXX_OWN="-Wold-style-cast -Wzero-as-null-pointer-constant"
fail=0 n=0
# ok NAME COMPILER FLAGS...: compiles with no diagnostic at all.
ok() {
  local name=$1; shift
  local out; n=$((n + 1))
  # shellcheck disable=SC2086 # flag lists
  if out=$("$@" -I"$inc" "$src" 2>&1) && [ -z "$out" ]; then
    echo "ok: $name"
  else
    echo "FAILED: $name"; printf '%s\n' "$out" | head -8; fail=1
  fi
}
# refused NAME PATTERN COMPILER FLAGS...: fails with exactly one error line,
# which matches PATTERN (names the fix), not a page of them.
refused() {
  local name=$1 pat=$2; shift 2
  local out errs; n=$((n + 1))
  out=$("$@" -I"$inc" "$src" 2>&1)
  errs=$(grep -c 'error:' <<<"$out")
  if [ "$errs" = 1 ] && grep -q -- "$pat" <<<"$out"; then
    echo "ok: $name (one error naming the fix)"
  else
    echo "FAILED: $name: $errs errors, wanted one matching '$pat'"; printf '%s\n' "$out" | head -8; fail=1
  fi
}
syn="-fsyntax-only"
for cc in gcc clang; do
  for std in c99 c11 c17 gnu99 gnu11 gnu17; do
    ok "$cc -std=$std enabled, header first" $cc -std=$std $STRICT_C $syn -DPROFILE_ENABLE
  done
  for std in gnu99 gnu17; do
    ok "$cc -std=$std enabled, after system headers" $cc -std=$std $STRICT_C $syn -DPROFILE_ENABLE -DDROPIN_AFTER
  done
  ok "$cc -std=c99 -D_POSIX_C_SOURCE=200809L enabled, after" \
    $cc -std=c99 -D_POSIX_C_SOURCE=200809L $STRICT_C $syn -DPROFILE_ENABLE -DDROPIN_AFTER
  # A file that is not the implementation includes no C library header:
  # strict ISO modes after system headers compile too (issue 21).
  for std in c99 c11 c17; do
    ok "$cc -std=$std enabled, after system headers" $cc -std=$std $STRICT_C $syn -DPROFILE_ENABLE -DDROPIN_AFTER
  done
  # The implementation's file needs POSIX: first in strict C it asks for it
  # itself; after a system header it stops with one error naming the fixes.
  for std in c99 c11; do
    ok "$cc -std=$std enabled, implementation, header first" \
      $cc -std=$std $STRICT_C $syn -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION
  done
  refused "$cc -std=c11 enabled, implementation after system headers" "_POSIX_C_SOURCE=200809L" \
    $cc -std=c11 $STRICT_C $syn -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -DDROPIN_AFTER
  refused "$cc -std=gnu11 -D_XOPEN_SOURCE=600 enabled, implementation (Lua's lprefix.h)" "feature macro asking for less" \
    $cc -std=gnu11 -D_XOPEN_SOURCE=600 $STRICT_C $syn -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION
  refused "$cc -std=c89 enabled" "needs C99" $cc -std=c89 $STRICT_C $syn -DPROFILE_ENABLE
  for std in c89 gnu89 c99; do
    ok "$cc -std=$std disabled, header first" $cc -std=$std $STRICT_C $syn
    ok "$cc -std=$std disabled, after system headers" $cc -std=$std $STRICT_C $syn -DDROPIN_AFTER
  done
  ok "$cc -std=c99 PROFILE_ENABLE=0" $cc -std=c99 $STRICT_C $syn -DPROFILE_ENABLE=0
  ok "$cc -std=gnu11 -O2 enabled + malloc wrappers, after system headers (full compile)" \
    $cc -std=gnu11 $STRICT_C -O2 -c -o /dev/null -DPROFILE_ENABLE -DSCOPEPROF_WRAP_MALLOC -DDROPIN_AFTER
  ok "$cc -std=gnu11 implementation after a project's deprecated and banned C functions (Redis, git)" \
    $cc -std=gnu11 $STRICT_C $syn -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -DDROPIN_AFTER -DDROPIN_DEPRECATED
  ok "$cc -std=gnu11 -O2 implementation + malloc wrappers, after system headers (full compile)" \
    $cc -std=gnu11 $STRICT_C -O2 -c -o /dev/null -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -DSCOPEPROF_WRAP_MALLOC -DDROPIN_AFTER
done
for cxx in g++ clang++; do
  own="$CXX_OWN"
  for std in c++11 c++14 c++17 c++20; do
    ok "$cxx -std=$std enabled" $cxx -x c++ -std=$std $STRICT_CXX $own $syn -DPROFILE_ENABLE
  done
  ok "$cxx -std=c++17 enabled, implementation" $cxx -x c++ -std=c++17 $STRICT_CXX $syn -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION
  ok "$cxx -std=c++17 enabled, after system headers" $cxx -x c++ -std=c++17 $STRICT_CXX $own $syn -DPROFILE_ENABLE -DDROPIN_AFTER
  for std in c++11 c++20; do
    ok "$cxx -std=$std disabled" $cxx -x c++ -std=$std $STRICT_CXX $own $syn
  done
done
# The HIP backend and the allocation wrappers (real HIP headers: deps.sh
# installs libamdhip64-dev; nothing here runs).
hip="-DPROFILE_ENABLE -DPROFILE_HIP -D__HIP_PLATFORM_AMD__ -DSCOPEPROF_WRAP_MALLOC -DSCOPEPROF_WRAP_GPU_MALLOC"
if echo '#include <hip/hip_runtime_api.h>' | gcc -D__HIP_PLATFORM_AMD__ -E -x c - >/dev/null 2>&1; then
  for cc in gcc clang; do
    ok "$cc -std=c11 PROFILE_HIP + wrappers" $cc -std=c11 $STRICT_C $syn $hip
    ok "$cc -std=c11 PROFILE_HIP + wrappers, implementation" $cc -std=c11 $STRICT_C $syn $hip -DSCOPEPROF_IMPLEMENTATION
  done
  for cxx in g++ clang++; do
    ok "$cxx -std=c++11 PROFILE_HIP + wrappers" $cxx -x c++ -std=c++11 $STRICT_CXX $syn $hip
  done
else
  echo "no HIP headers (hip/hip_runtime_api.h): PROFILE_HIP combinations skipped"
fi
echo "$n combinations"
exit $fail
