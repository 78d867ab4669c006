# rules for reporter/ (see the top Makefile)
#   $(BUILD)/scopeprof       the reporter
#   make fuzz                libFuzzer run over the reader and the aggregation
#                            (FUZZ_TIME seconds, default 300; needs clang)
# The reporter's sources, by stage: inputs, counting, writing, commands
# (docs/REPORTER.md, "Source files", says what each one holds).
REPORTER_SRCS := reporter/input.c reporter/read.c reporter/clocks.c reporter/chrome.c reporter/gz.c \
                 reporter/tree.c reporter/aggregate.c reporter/ranks.c reporter/scopeprof_impl.c \
                 reporter/buf.c reporter/chrome_write.c reporter/filter.c reporter/output.c \
                 reporter/cells.c reporter/cli.c reporter/diff.c reporter/timeline.c reporter/html.c reporter/flame_cmd.c reporter/picture.c reporter/flame.c
REPORTER_HDRS := reporter/input.h reporter/read.h reporter/clocks.h reporter/chrome.h reporter/gz.h \
                 reporter/tree.h reporter/aggregate.h reporter/ranks.h \
                 reporter/buf.h reporter/digits.h reporter/hash.h reporter/chrome_write.h reporter/filter.h reporter/output.h \
                 reporter/cells.h reporter/cli.h reporter/diff.h reporter/timeline.h reporter/picture.h reporter/flame.h reporter/exit.h \
                 $(BUILD)/gen/flame_js.h $(BUILD)/gen/report_js.h $(HEADER)
# -lm: chrome.c rounds JSON numbers (llround). -lz: gzip input and output
# (gz.c), when zlib's header is there (Debian: zlib1g-dev). Without
# it, -DSP_NO_ZLIB (it reaches the compiler: every rule compiles and links in
# one command) builds a reporter that refuses gzip naming the package, and
# `make` says so.
HAVE_ZLIB ?= $(shell printf '\043include <zlib.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
# -I$(BUILD)/gen: the pictures' scripts (below), which reach the compiler the
# same way.
REPORTER_LIBS := $(if $(filter 1,$(HAVE_ZLIB)),-lz,-DSP_NO_ZLIB) -I$(BUILD)/gen -lm $(LDLIBS)

# The pictures' scripts are JavaScript files (reporter/flame.js: zoom and
# search in flame graphs; reporter/report.js: the html page), compiled in as
# C strings: sp_flame_js, sp_report_js. They go inside <script> and CDATA,
# so neither may hold "</script" or "]]>".
$(BUILD)/gen/%_js.h: reporter/%.js
	@mkdir -p $(@D)
	@if grep -n -e '</script' -e ']]>' $<; then echo "$<: '</script' or ']]>' would end the script early"; exit 1; fi
	{ echo '/* generated from $< by reporter/rules.mk: do not edit */'; echo 'static const char sp_$*_js[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $<; echo '    "";'; } >$@

ifneq ($(HAVE_ZLIB),1)
all: skipped-gzip
.PHONY: skipped-gzip
skipped-gzip:
	@echo "skipped: gzip input and output (.gz) in $(BUILD)/scopeprof: no zlib.h; install zlib1g-dev (Debian) to have them"
endif

all: $(BUILD)/scopeprof

$(BUILD)/scopeprof: reporter/main.c $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ireporter reporter/main.c $(REPORTER_SRCS) -o $@ $(REPORTER_LIBS)

# The fuzz target: always built with clang (libFuzzer is clang's). CRCs are
# not checked in it, or random mutations would almost never get past them.
$(BUILD)/fuzz_read: reporter/fuzz_read.c $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(CSTD) $(WARN) -O1 -g -Iinclude -Ireporter -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=all -DSP_FUZZ_IGNORE_CRC reporter/fuzz_read.c $(REPORTER_SRCS) -o $@ $(REPORTER_LIBS)

FUZZ_TIME ?= 300
# A campaign: grows $(BUILD)/fuzz_corpus from the hand-made and the kept
# corpus. To keep what it found (once coverage stops growing), merge it into
# the kept corpus: `make fuzz-keep` (docs/REPORTER.md).
fuzz: $(BUILD)/fuzz_read
	@mkdir -p $(BUILD)/fuzz_corpus
	tar -xzf tests/reporter/fuzz_corpus.tar.gz -C $(BUILD)
	$(BUILD)/fuzz_read -max_total_time=$(FUZZ_TIME) -max_len=4096 -rss_limit_mb=2048 \
	  -artifact_prefix=$(BUILD)/fuzz- $(BUILD)/fuzz_corpus tests/reporter/corpus

.PHONY: fuzz-keep
fuzz-keep: $(BUILD)/fuzz_read
	rm -rf $(BUILD)/fuzz_keep && mkdir -p $(BUILD)/fuzz_keep/fuzz_corpus
	$(BUILD)/fuzz_read -merge=1 $(BUILD)/fuzz_keep/fuzz_corpus $(BUILD)/fuzz_corpus tests/reporter/corpus
	tar -czf tests/reporter/fuzz_corpus.tar.gz --sort=name --owner=0 --group=0 --numeric-owner \
	  --mtime=2026-01-01 -C $(BUILD)/fuzz_keep fuzz_corpus
