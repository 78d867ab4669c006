# Extreme inputs (issue 6): gen_extreme writes them with tests/reporter/tw.h;
# extreme.sh runs the reporter on them (in make test); huge.sh streams 2^31+1
# events through it (`make test-huge`, about two minutes).
EXT := $(BUILD)/tests/extreme

$(EXT)/gen_extreme: tests/extreme/gen_extreme.c tests/reporter/tw.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/reporter $< -o $@

TEST_BINS += $(EXT)/gen_extreme $(BUILD)/scopeprof
TEST_CMDS += tests/extreme/extreme.sh

.PHONY: test-huge
test-huge: $(EXT)/gen_extreme $(BUILD)/scopeprof
	@bash tests/extreme/huge.sh
