# scopeprof -- see README.md. `make` builds the reporter and the samples,
# `make test` runs every test (installing what it needs), `make demo` shows a
# profiled sample, `make bench` runs the benchmarks.
#
# Each part of the tree adds its rules in its own fragment: reporter/rules.mk,
# samples/rules.mk, tests/rules.mk, bench/rules.mk.

CC      ?= cc
CLANG   ?= clang
BUILD   ?= build
WARN    := -Wall -Wextra -Werror
CSTD    := -std=gnu11
CFLAGS  ?= -O2 -g
ALL_CFLAGS = $(CSTD) $(WARN) $(CFLAGS) -Iinclude
LDLIBS  := -lpthread
HEADER  := include/scopeprof.h

# Sanitizer builds used by the tests.
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN_FLAGS := -O1 -g -fsanitize=thread

.PHONY: all test demo bench fuzz check-leaks clean deps
all:

$(BUILD):
	@mkdir -p $(BUILD)

include include/rules.mk
include reporter/rules.mk
include samples/rules.mk
include tests/rules.mk
include bench/rules.mk
include packaging/rules.mk

# Install (or ask for) the Debian packages the tests need.
deps:
	@bash tests/deps.sh

clean:
	rm -rf $(BUILD) *.sprof
