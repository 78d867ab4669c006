#!/usr/bin/env bash
# make install / uninstall into temporary prefixes; a program built against
# the installed files with pkg-config and with CMake.
set -eu
BUILD=${BUILD:-build}
CC=${CC:-cc}
here=tests/install
work=$(mktemp -d /tmp/sp_install.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
version=$(sed -n 's/^#define SCOPEPROF_VERSION_STRING "\(.*\)"/\1/p' include/scopeprof.h)
files="include/scopeprof.h bin/scopeprof lib/pkgconfig/scopeprof.pc lib/cmake/scopeprof/scopeprofConfig.cmake
lib/cmake/scopeprof/scopeprofConfigVersion.cmake share/man/man1/scopeprof.1 share/man/man3/scopeprof.3"

# 1. PREFIX: everything in place, the reporter runs from there.
p="$work/prefix"
make -s --no-print-directory install PREFIX="$p" BUILD="$BUILD" >"$work/log" 2>&1 || { cat "$work/log"; fail "make install"; }
for f in $files; do [ -f "$p/$f" ] || fail "not installed: $f"; done
[ -x "$p/bin/scopeprof" ] || fail "bin/scopeprof not executable"
cmp -s include/scopeprof.h "$p/include/scopeprof.h" || fail "installed header differs"
"$p/bin/scopeprof" --version | grep -q "scopeprof $version" || fail "installed reporter --version"

# 2. pkg-config: flags, version, the enable flag; a profiled program.
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
[ "$(pkg-config --modversion scopeprof)" = "$version" ] || fail "pkg-config version"
cf=$(pkg-config --cflags scopeprof); cf=${cf% }
[ "$cf" = "-I$p/include" ] || fail "cflags: $cf"
pkg-config --libs scopeprof | grep -q -- -lpthread || fail "libs"
[ "$(pkg-config --variable=enable_flag scopeprof)" = "-DPROFILE_ENABLE" ] || fail "enable_flag"
# shellcheck disable=SC2046
$CC $(pkg-config --cflags scopeprof) $(pkg-config --variable=enable_flag scopeprof) "$here/app.c" \
  -o "$work/app_pc" $(pkg-config --libs scopeprof) || fail "build with pkg-config"
(cd "$work" && SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/pc.sprof" ./app_pc >/dev/null) || fail "run app_pc"
"$p/bin/scopeprof" table "$work/pc.sprof" --format csv | grep -q '^installed_scope,3,' || fail "app_pc's trace"

# 3. CMake: find_package(scopeprof 0.2), both targets; a version too new
# fails, and so does 0.1 (0.2 needs SCOPEPROF_IMPLEMENTATION: 0.x minors do
# not mix).
cmake -S "$here" -B "$work/cm" -DCMAKE_PREFIX_PATH="$p" >"$work/log" 2>&1 || { cat "$work/log"; fail "cmake configure"; }
cmake --build "$work/cm" >"$work/log" 2>&1 || { cat "$work/log"; fail "cmake build"; }
(cd "$work" && SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/cm.sprof" "$work/cm/app_on" >/dev/null) || fail "run app_on"
"$p/bin/scopeprof" table "$work/cm.sprof" --format csv | grep -q '^installed_scope,3,' || fail "app_on's trace"
(cd "$work" && SCOPEPROF_OUTPUT="$work/off.sprof" "$work/cm/app_off" >/dev/null) || fail "run app_off"
[ ! -e "$work/off.sprof" ] || fail "scopeprof::scopeprof alone must leave profiling compiled out"
! nm "$work/cm/app_off" | grep -q scopeprof || fail "app_off holds scopeprof symbols"
for want in 99.0 0.1; do
  mkdir -p "$work/want_$want" && cp "$here/app.c" "$work/want_$want/"
  sed "s/find_package(scopeprof 0.2 REQUIRED)/find_package(scopeprof $want REQUIRED)/" "$here/CMakeLists.txt" \
    >"$work/want_$want/CMakeLists.txt"
  if cmake -S "$work/want_$want" -B "$work/cm_$want" -DCMAKE_PREFIX_PATH="$p" >"$work/log" 2>&1; then
    fail "find_package(scopeprof $want) accepted version $version"
  fi
done

# 4. Man pages: render without groff warnings, name what they document.
for page in man1/scopeprof.1 man3/scopeprof.3; do
  w=$(groff -man -Tutf8 -ww -z "$p/share/man/$page" 2>&1) || fail "groff $page"
  [ -z "$w" ] || fail "groff warnings in $page: $w"
  head -1 "$p/share/man/$page" | grep -q "\"scopeprof $version\"" || fail "$page: version is not $version"
done
MANWIDTH=80 man -l "$p/share/man/man1/scopeprof.1" 2>/dev/null >"$work/m1" || nroff -man "$p/share/man/man1/scopeprof.1" >"$work/m1"
MANWIDTH=80 man -l "$p/share/man/man3/scopeprof.3" 2>/dev/null >"$work/m3" || nroff -man "$p/share/man/man3/scopeprof.3" >"$work/m3"
for cmd in table trace stacks html flame; do grep -q "^       $cmd" "$work/m1" || fail "scopeprof(1) lacks $cmd"; done
for m in PROFILE_SCOPE PROFILE_FUNCTION PROFILE_BEGIN PROFILE_STEP PROFILE_ENABLE SCOPEPROF_OUTPUT; do
  grep -q "$m" "$work/m3" || fail "scopeprof(3) lacks $m"
done
# Every command of the reporter is in the page (a new one must be documented).
./"$BUILD"/scopeprof --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p' | while read -r cmd; do
  grep -q "^       $cmd" "$work/m1" || fail "scopeprof(1) lacks the command $cmd"
done

# 5. Uninstall removes every file it installed.
make -s --no-print-directory uninstall PREFIX="$p" BUILD="$BUILD" >"$work/log" 2>&1 || { cat "$work/log"; fail "make uninstall"; }
left=$(find "$p" -type f)
[ -z "$left" ] || fail "left after uninstall: $left"

# 6. DESTDIR: staged under it, paths inside the files without it.
s="$work/stage"
make -s --no-print-directory install DESTDIR="$s" PREFIX=/opt/sp BUILD="$BUILD" >"$work/log" 2>&1 || { cat "$work/log"; fail "install DESTDIR"; }
for f in $files; do [ -f "$s/opt/sp/$f" ] || fail "not staged: $f"; done
grep -q '^prefix=/opt/sp$' "$s/opt/sp/lib/pkgconfig/scopeprof.pc" || fail "staged .pc prefix"
cflags=$(PKG_CONFIG_PATH="$s/opt/sp/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$s" pkg-config --cflags scopeprof)
cflags=${cflags% }
[ "$cflags" = "-I$s/opt/sp/include" ] || fail "sysroot cflags: $cflags"
make -s --no-print-directory uninstall DESTDIR="$s" PREFIX=/opt/sp BUILD="$BUILD" >/dev/null 2>&1
[ -z "$(find "$s" -type f)" ] || fail "left after staged uninstall"
echo "install.sh: all passed"
