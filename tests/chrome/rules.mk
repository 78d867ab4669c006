# Chrome trace JSON reader (issue 8). Builds under $(BUILD)/tests/chrome:
#   test_chrome[_asan]   hand-written traces: PyTorch's GPU rule, B/E, Kineto's
#                        layout (late launches and records; a pipe's fallback),
#                        launch links by correlation, device categories, tids
#                        as strings, distributedInfo's rank, raw newlines,
#                        memory, every malformed-input class
#   chrome_table[_asan]  `table` for one Chrome trace without cli.c (reader +
#                        header aggregation + scopeprof_table_print)
#   compare_pytorch.sh   `scopeprof table` on the PyTorch fixtures vs the tables
#                        PyTorch printed (tests/chrome/compare.py), and
#                        chrome_table_asan printing the same bytes
#   cli.sh               `scopeprof` on Chrome JSON from standard input, stacks,
#                        trace parsed back, malformed input from a pipe
#   trace_chrome.sh      `scopeprof trace` of a Kineto trace: CPU ops on their
#                        threads, kernels on stream tracks, launch->kernel flows,
#                        the process named from the JSON
#   fuzz_chrome.sh       a short libFuzzer run of $(BUILD)/fuzz_chrome
CHR_T    := $(BUILD)/tests/chrome
CHR_SRCS := reporter/chrome.c reporter/read.c reporter/clocks.c reporter/input.c reporter/gz.c reporter/scopeprof_impl.c
CHR_HDRS := reporter/chrome.h reporter/read.h reporter/input.h reporter/gz.h $(HEADER)

$(CHR_T)/%: tests/chrome/%.c $(CHR_SRCS) $(CHR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ireporter $< $(CHR_SRCS) -o $@ $(REPORTER_LIBS)

$(CHR_T)/%_asan: tests/chrome/%.c $(CHR_SRCS) $(CHR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter $< $(CHR_SRCS) -o $@ $(REPORTER_LIBS)

$(BUILD)/fuzz_chrome: reporter/fuzz_chrome.c $(CHR_SRCS) $(CHR_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(CSTD) $(WARN) -O1 -g -Iinclude -Ireporter -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=all reporter/fuzz_chrome.c $(CHR_SRCS) -o $@ $(REPORTER_LIBS)

TEST_BINS += $(CHR_T)/test_chrome $(CHR_T)/test_chrome_asan $(CHR_T)/chrome_table \
             $(CHR_T)/chrome_table_asan $(BUILD)/fuzz_chrome $(BUILD)/scopeprof \
             $(BUILD)/tests/reporter/mktrace
TEST_CMDS += $(CHR_T)/test_chrome $(CHR_T)/test_chrome_asan tests/chrome/compare_pytorch.sh \
             tests/chrome/cli.sh tests/chrome/trace_chrome.sh tests/chrome/fuzz_chrome.sh

.PHONY: fuzz-chrome
fuzz-chrome: $(BUILD)/fuzz_chrome
	@mkdir -p $(BUILD)/fuzz_chrome_corpus $(BUILD)/fuzz_chrome_kept
	tar -xzf tests/chrome/fuzz_corpus.tar.gz -C $(BUILD)/fuzz_chrome_kept
	$(BUILD)/fuzz_chrome -max_total_time=$(FUZZ_TIME) -max_len=8192 -rss_limit_mb=2048 \
	  -artifact_prefix=$(BUILD)/fuzz-chrome- $(BUILD)/fuzz_chrome_corpus \
	  $(BUILD)/fuzz_chrome_kept/fuzz_corpus tests/chrome/corpus

# Keep what a campaign found (once coverage stops growing): merged into the
# kept corpus, the smallest set with the same coverage.
.PHONY: fuzz-chrome-keep
fuzz-chrome-keep: $(BUILD)/fuzz_chrome
	rm -rf $(BUILD)/fuzz_chrome_keep && mkdir -p $(BUILD)/fuzz_chrome_keep/fuzz_corpus
	$(BUILD)/fuzz_chrome -merge=1 $(BUILD)/fuzz_chrome_keep/fuzz_corpus $(BUILD)/fuzz_chrome_corpus \
	  $(BUILD)/fuzz_chrome_kept/fuzz_corpus tests/chrome/corpus
	tar -czf tests/chrome/fuzz_corpus.tar.gz --sort=name --owner=0 --group=0 --numeric-owner \
	  --mtime=2026-01-01 -C $(BUILD)/fuzz_chrome_keep fuzz_corpus
