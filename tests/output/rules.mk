# The picture commands and the trace filters (issue 16). Builds under
# $(BUILD)/tests/output:
#   scopeprof_asan     the reporter under ASan+UBSan, which the scripts run
#   pictures.sh        `scopeprof html` and `scopeprof flame` parsed back
#                      (python3): the table is `scopeprof table`'s, the
#                      steps and memory tracks are there, html --diff, frame
#                      widths add up, one timeline slice per scope, names that
#                      try HTML/SVG injection come out as text, nothing loads
#                      from the network, a failed run leaves OUT alone
#   trace_filters.sh   `scopeprof trace` --name/--thread/--window/--min-dur,
#                      gzip output, --progress, the refusal of a terminal, the
#                      warning past 512 MB of JSON
# `make test-html` (not in `make test`: it needs Debian's chromium, ~300 MB):
#   chromium.sh        the report in headless Chromium with the network cut:
#                      scripts ran, rows, frames, slices, steps and memory in
#                      the DOM; the page and the SVG worked with real events
#                      (page_check.js, svg_check.js: sort, zoom, pan, find);
#                      the html --diff page; a screenshot
OUT_T := $(BUILD)/tests/output

$(OUT_T)/scopeprof_asan: reporter/main.c $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter reporter/main.c $(REPORTER_SRCS) -o $@ $(REPORTER_LIBS)

TEST_BINS += $(OUT_T)/scopeprof_asan $(BUILD)/scopeprof $(BUILD)/tests/reporter/mktrace $(BUILD)/samples/train_cpu \
             $(BUILD)/bench/gen_trace
TEST_CMDS += tests/output/pictures.sh tests/output/trace_filters.sh

.PHONY: test-html
test-html: $(BUILD)/scopeprof $(BUILD)/samples/train_cpu $(BUILD)/tests/reporter/mktrace
	@bash tests/deps.sh chromium
	@bash tests/run.sh tests/output/chromium.sh
