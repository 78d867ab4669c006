#!/usr/bin/env bash
# A fresh machine (issue 16): plain `make` without the HIP development package
# or zlib's builds everything else, exits 0 and names in one line each what it
# skipped and the package that enables it. (HAVE_HIP / HAVE_ZLIB empty stand
# for the missing headers: the same variables the detection sets.)
set -eu
work=$(mktemp -d /tmp/sp_fresh_make.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory BUILD="$work/b" HAVE_HIP= HAVE_ZLIB= >"$work/log" 2>&1 || fail "make: exit $?: $(tail -5 "$work/log")"
grep -q "^skipped: $work/b/samples/gpu_masking (the GPU sample): no HIP headers; install libamdhip64-dev" "$work/log" \
  || fail "no line naming the skipped GPU sample: $(cat "$work/log")"
grep -q "^skipped: gzip input and output (.gz) in $work/b/scopeprof: no zlib.h; install zlib1g-dev" "$work/log" \
  || fail "no line naming the skipped gzip support: $(cat "$work/log")"
[ -x "$work/b/scopeprof" ] && [ -x "$work/b/samples/train_cpu" ] || fail "the reporter or the CPU sample was not built"
[ ! -e "$work/b/samples/gpu_masking" ] || fail "the GPU sample was built"
grep -q -- "-lamdhip64\|-lz " "$work/log" && fail "linked what is missing: $(cat "$work/log")"
# That reporter says what gzip input needs.
printf '{"traceEvents":[]}' | gzip -c >"$work/t.json.gz"
set +e
"$work/b/scopeprof" table "$work/t.json.gz" >/dev/null 2>"$work/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "built without zlib (Debian package zlib1g-dev)" "$work/err" || fail "gzip without zlib: exit $rc: $(cat "$work/err")"
echo "fresh make: builds without HIP and zlib, names what it skipped"
