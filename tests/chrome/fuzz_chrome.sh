#!/usr/bin/env bash
# A short libFuzzer run (20000 inputs) of the Chrome reader, seeded with
# tests/chrome/corpus; new inputs go to a scratch folder. `make fuzz-chrome`
# runs longer (FUZZ_TIME seconds).
set -eu
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/sp_fuzzc.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$BUILD/fuzz_chrome" -runs=20000 -max_len=8192 -rss_limit_mb=2048 -seed=1 \
    "$work" tests/chrome/corpus 2>&1 | tail -3
