#!/usr/bin/env bash
# Regenerate the checked-in fuzz seed corpus (tests/reporter/corpus/) with
# mktrace: tiny hand-made files, one per bad-input class, and two good ones.
set -eu
BUILD=${BUILD:-build}
make --no-print-directory "$BUILD/tests/reporter/mktrace"
mkdir -p tests/reporter/corpus
"$BUILD/tests/reporter/mktrace" corpus tests/reporter/corpus
