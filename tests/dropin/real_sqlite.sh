#!/usr/bin/env bash
# real_sqlite.sh -- the header stands first in a real project: SQLite's
# amalgamation (sqlite3.c, 243,000 lines) compiled with scopeprof.h before it,
# as a user adds the profiler to a project without reading its sources.
#
# Why (issue 21): glibc fixes the feature set (_GNU_SOURCE, _POSIX_C_SOURCE,
# ...) when the first system header reads <features.h>, once per translation
# unit. sqlite3.c defines _GNU_SOURCE near its top and uses mremap and
# MREMAP_MAYMOVE. A scopeprof.h that includes system headers, standing first,
# makes that choice before SQLite does: mremap is then undeclared (gcc: 2
# errors, clang: 7, in every language mode). A file that does not define
# SCOPEPROF_IMPLEMENTATION must get nothing from the C library, so that the
# header can stand before or after anything.
#
#   real_sqlite.sh CACHE_DIR [INCLUDE_DIR]    (default include)
#
# 1. SQLite 3.40.1's source: Debian bookworm's sqlite3_3.40.1.orig.tar.xz,
#    from the Debian archive apt uses here, checked against the SHA-256 that
#    Debian's sqlite3_3.40.1-2+deb12u2.dsc lists, kept in CACHE_DIR. No
#    network (or no Debian archive in apt's sources): one SKIPPED line, exit 0.
# 2. The tarball is SQLite's source tree, not the amalgamation: its own
#    `configure && make sqlite3.c` builds that (about 7 s, needs tclsh; the
#    result is kept in CACHE_DIR, nothing else is).
# 3. Each configuration compiles sqlite3.c three times with the same flags:
#    without the header (the baseline), with a two-line file
#    `#include "scopeprof.h"` / `#include "sqlite3.c"` (first-line), and with
#    `-include scopeprof.h` (-include). The header's file does not define
#    SCOPEPROF_IMPLEMENTATION: compile only, nothing is linked.
#    A configuration passes if both compile and give no diagnostic that the
#    baseline does not give. Not plain -Werror: SQLite itself warns under
#    -Wall here (clang 14: 'sqlite3IsMemdb' unused, in every mode; gcc 12 too
#    with -c), and a future compiler may find more in SQLite; those are not
#    the header's. gcc's baseline with -fsyntax-only has no warning at all,
#    so there this is -Werror.
# Matrix (about 25 s on 2 cores; 40 s the first time, download and build
# included): C99, C11, GNU11 and C17 with gcc and clang, -fsyntax-only
# (enough to see the undeclared mremap: a front-end error), and one full
# compile (-O0 -c) per compiler, for the warnings that only code generation
# gives (gcc's unused static function). One line per configuration,
# `ok gcc -std=c99 -fsyntax-only first-line`; a failure prints its new
# diagnostics, and the failed configurations are listed again at the end.
set -euo pipefail
cache=${1:?usage: real_sqlite.sh CACHE_DIR [INCLUDE_DIR]}
inc=${2:-include}

# 1-2. The amalgamation (tests/dropin/sqlite_source.sh says how it is made).
amal=$(bash "$(dirname "$0")/sqlite_source.sh" "$cache") || { [ $? -eq 77 ] && exit 0; exit 1; }
printf '#include "scopeprof.h"\n#include "sqlite3.c"\n' > "$amal/first_line.c"

# 3. The compiles.

# diagnostics FILE: its warning and error lines, the folder left off the file
# name (the baseline names sqlite3.c by another path than the wrapper does).
diagnostics() {
  grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error|fatal error):' "$1" | sed -E 's#^([^ :]*/)?##' | sort -u || true
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=() n=0
# check CC FLAGS...: one configuration: its baseline, first-line, -include.
check() {
  local cc=$1; shift
  local name base v new rc
  local flags=(-DPROFILE_ENABLE -Wall -Wextra -I"$inc" "$@" -o /dev/null)
  # gcc's -Wmisleading-indentation takes 5.5 of its 6 s on sqlite3.c (one
  # enormous file); it looks at SQLite's indentation, not at the header.
  [ "$cc" = gcc ] && flags+=(-Wno-misleading-indentation)
  if ! $cc "${flags[@]}" "$amal/sqlite3.c" > "$out/base" 2>&1; then
    name="$cc $* baseline (without the header)"
    echo "FAILED $name: SQLite does not compile here, not the header's fault"; head -8 "$out/base"
    failed+=("$name"); return
  fi
  base=$(diagnostics "$out/base")
  for v in first-line -include; do
    name="$cc $* $v"; n=$((n + 1))
    if [ $v = first-line ]; then
      $cc "${flags[@]}" "$amal/first_line.c" > "$out/$v" 2>&1 && rc=0 || rc=$?
    else
      $cc "${flags[@]}" -include scopeprof.h "$amal/sqlite3.c" > "$out/$v" 2>&1 && rc=0 || rc=$?
    fi
    new=$(comm -13 <(printf '%s\n' "$base") <(diagnostics "$out/$v") | sed '/^$/d')
    if [ "$rc" -eq 0 ] && [ -z "$new" ]; then
      echo "ok $name"
    else
      echo "FAILED $name (exit $rc), diagnostics the baseline does not give:"
      if [ -n "$new" ]; then printf '%s\n' "$new" | head -8; else head -8 "$out/$v"; fi
      failed+=("$name")
    fi
  done
}

echo "SQLite ${amal##*/sqlite-} amalgamation ($amal/sqlite3.c), header from $inc/"
for std in c99 c11 gnu11 c17; do
  check gcc -std=$std -fsyntax-only
  check clang -std=$std -fsyntax-only
done
check gcc -std=gnu11 -O0 -c
check clang -std=gnu11 -O0 -c
echo "$n configurations, ${#failed[@]} failed"
for f in "${failed[@]+"${failed[@]}"}"; do echo "FAILED: $f"; done
[ ${#failed[@]} -eq 0 ]
