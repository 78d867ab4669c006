#!/usr/bin/env bash
# Make sure the packages `make test` needs are present. Installs them with
# apt-get when it can (root, or passwordless sudo); otherwise names them and
# fails, so a missing dependency is never mistaken for a test failure.
set -u
need=()
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
# What each is for, and its size: README.md, "Platform and dependencies".
# zlib1g-dev: the reporter's gzip output; cmake, pkgconf, groff-base: the
# install test (find_package, pkg-config, man pages); hipcc: the HIP C++
# build of tests/gpu/user_builds.sh; curl, xz-utils, tcl: tests/dropin/
# real_sqlite.sh downloads SQLite's source, unpacks it and builds its
# amalgamation (with tclsh); openmpi-bin, libopenmpi-dev: tests/mpi's real
# mpirun jobs (mpicc). Arguments: more packages (`make test-html` asks for
# chromium).
for p in libcmocka-dev libamdhip64-dev libhsa-runtime-dev clang libclang-rt-14-dev valgrind \
         zlib1g-dev cmake pkgconf groff-base hipcc curl xz-utils tcl openmpi-bin libopenmpi-dev "$@"; do
  installed "$p" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "scopeprof tests need: ${need[*]}"
if [ "$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
  echo "error: install them with: sudo apt-get install ${need[*]}" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || true
if ! $SUDO apt-get install -y -qq "${need[@]}" >/tmp/scopeprof-apt.log 2>&1; then
  echo "error: apt-get install ${need[*]} failed; see /tmp/scopeprof-apt.log" >&2
  tail -5 /tmp/scopeprof-apt.log >&2; exit 1
fi
echo "installed: ${need[*]}"
