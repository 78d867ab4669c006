#!/usr/bin/env bash
# A short libFuzzer run (20000 inputs) of the Chrome reader, seeded with
# tests/chrome/corpus and the kept campaign corpus (fuzz_corpus.tar.gz: a
# 10-minute campaign to its coverage plateau, merged; docs/CHROME.md). New
# inputs go to a scratch folder; a crash is kept in $BUILD as
# fuzz-chrome-crash-*. `make fuzz-chrome` runs longer (FUZZ_TIME seconds).
set -eu
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/sp_fuzzc.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/new"
tar -xzf tests/chrome/fuzz_corpus.tar.gz -C "$work"
"$BUILD/fuzz_chrome" -runs=20000 -max_len=8192 -rss_limit_mb=2048 -seed=1 -artifact_prefix="$BUILD/fuzz-chrome-" \
    "$work/new" "$work/fuzz_corpus" tests/chrome/corpus 2>&1 | tail -3
