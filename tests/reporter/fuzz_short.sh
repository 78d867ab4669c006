#!/usr/bin/env bash
# A short libFuzzer run (20000 inputs) over the reader, the aggregation and
# the trace writer, seeded with the hand-made corpus. New inputs go to a
# scratch folder: the checked-in corpus stays as it is. `make fuzz` runs longer.
set -eu
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/sp_fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$BUILD/fuzz_read" -runs=20000 -max_len=4096 -rss_limit_mb=2048 -seed=1 \
    "$work" tests/reporter/corpus 2>&1 | tail -3
