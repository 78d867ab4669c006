# Tests. Each folder under tests/ adds to TEST_CMDS (commands the runner
# executes, one per word: use a script for anything with arguments) and to
# TEST_BINS (what must be built first). tests/run.sh runs them all, adds up
# cmocka's counts and closes with "N passed, N failed".
TEST_CMDS :=
TEST_BINS :=
include $(sort $(wildcard tests/*/rules.mk))

# deps first (it may install packages), then build and run everything.
test:
	@bash tests/deps.sh
	@$(MAKE) --no-print-directory test-run

# Everything the tests run, built but not run.
.PHONY: test-build
test-build: $(TEST_BINS)

test-run: $(TEST_BINS)
	@bash tests/run.sh $(TEST_CMDS)
