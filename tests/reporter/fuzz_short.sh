#!/usr/bin/env bash
# A short libFuzzer run (20000 inputs) over the readers (native and Chrome
# JSON), the aggregation and the trace writer, seeded with the hand-made
# corpus and the kept campaign corpus (fuzz_corpus.tar.gz: the inputs of a
# 10-minute campaign that reached its coverage plateau, merged to the
# smallest set with the same coverage; see docs/REPORTER.md). New inputs go
# to a scratch folder; a crash is kept in $BUILD as fuzz-crash-*.
set -eu
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/sp_fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/new"
tar -xzf tests/reporter/fuzz_corpus.tar.gz -C "$work"
"$BUILD/fuzz_read" -runs=20000 -max_len=4096 -rss_limit_mb=2048 -seed=1 -artifact_prefix="$BUILD/fuzz-" \
    "$work/new" "$work/fuzz_corpus" tests/reporter/corpus 2>&1 | tail -3
