#!/usr/bin/env bash
# sqlite_source.sh CACHE_DIR -- SQLite 3.40.1's amalgamation (sqlite3.c,
# sqlite3.h) and its benchmark program (speedtest1.c), made once in
# CACHE_DIR/sqlite-3.40.1 for tests/dropin/real_sqlite.sh and
# bench/sqlite_cost.sh. Prints that folder's path.
#
# 1. The source: Debian bookworm's sqlite3_3.40.1.orig.tar.xz, from the
#    Debian archive apt uses here, checked against the SHA-256 that Debian's
#    sqlite3_3.40.1-2+deb12u2.dsc lists, kept in CACHE_DIR. No network (or no
#    Debian archive in apt's sources): one SKIPPED line on stderr, exit 77.
# 2. The tarball is SQLite's source tree, not the amalgamation: its own
#    `configure && make sqlite3.c` builds that (about 7 s, needs tclsh; the
#    result is kept in CACHE_DIR with test/speedtest1.c, nothing else is).
# Exit 0 with the folder made, 77 skipped, 1 on an error (said on stderr).
set -euo pipefail
cache=${1:?usage: sqlite_source.sh CACHE_DIR}
VERSION=3.40.1
TARBALL=sqlite3_$VERSION.orig.tar.xz
SHA256=aaa776260ab4dc976db34aa7891819484c8676b5b2783123ebc6301e2ca5d655
amal=$cache/sqlite-$VERSION          # sqlite3.c, sqlite3.h, speedtest1.c
mkdir -p "$cache"

# The source tarball, downloaded once.
if ! echo "$SHA256  $cache/$TARBALL" | sha256sum -c --status 2>/dev/null; then
  # shellcheck disable=SC2016 # $(REPO_URI) is apt's field, not the shell's
  mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -m1 '/debian/$' || true)
  if [ -z "$mirror" ]; then
    echo "SKIPPED: no Debian archive in apt's sources to download $TARBALL from" >&2
    exit 77
  fi
  url=${mirror}pool/main/s/sqlite3/$TARBALL
  curl -fsSL --connect-timeout 20 --max-time 300 "$url" -o "$cache/$TARBALL" 2>/dev/null ||
    wget -q --timeout=20 "$url" -O "$cache/$TARBALL" 2>/dev/null || true
  if ! echo "$SHA256  $cache/$TARBALL" | sha256sum -c --status 2>/dev/null; then
    echo "SKIPPED: could not download $url (or its SHA-256 differs)" >&2
    exit 77
  fi
fi

# The amalgamation, built once in a scratch folder and moved into place
# whole (an interrupted build leaves no half sqlite3.c behind).
if [ ! -f "$amal/sqlite3.c" ]; then
  command -v tclsh > /dev/null || { echo "error: building sqlite3.c needs tclsh (Debian: tcl; tests/deps.sh installs it)" >&2; exit 1; }
  work=$(mktemp -d "$cache/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/src" "$work/bld"
  tar xJf "$cache/$TARBALL" -C "$work/src" --strip-components=1
  if ! (cd "$work/bld" && ../src/configure --disable-tcl && make sqlite3.c) > "$work/log" 2>&1; then
    echo "error: SQLite's configure && make sqlite3.c failed; its last lines:" >&2
    tail -15 "$work/log" >&2
    exit 1
  fi
  mkdir "$work/out"
  cp "$work/bld/sqlite3.c" "$work/bld/sqlite3.h" "$work/src/test/speedtest1.c" "$work/out/"
  rm -rf "$amal" && mv "$work/out" "$amal"
  rm -rf "$work"; trap - EXIT
fi
# A folder made before speedtest1.c was kept: it, from the tarball.
if [ ! -f "$amal/speedtest1.c" ]; then
  tar xJf "$cache/$TARBALL" -C "$amal" --strip-components=2 --wildcards '*/test/speedtest1.c'
fi
echo "$amal"
