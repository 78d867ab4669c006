# Reporter tests (issue 3). Everything builds under $(BUILD)/tests/reporter:
#   test_reporter[_asan]  cmocka: the commands run in-process on hand-made
#                         trace files (golden table, sorts, groupings, CSV/JSON,
#                         stacks, merging, every bad-input class); built with
#                         a small tree limit (SP_TREE_LIMIT, reporter/tree.c);
#                         test_reporter drops its stack nodes every 64
#                         (SP_STACK_NODES, reporter/aggregate.c), the _asan
#                         build keeps the default
#   mktrace               writes the hand-made files (and the fuzz corpus)
#   test_robust           cmocka (ASan+UBSan): issue 16's faults
#   test_diff             cmocka (ASan+UBSan): `scopeprof diff` on hand-made runs
#   test_words            cmocka (ASan+UBSan): torch's option and key spellings,
#                         --format markdown, row limits, help, FILE = table,
#                         trace to a terminal
#   diff.sh               diff_prog built twice (compute() 2x slower in the
#                         second): the regression flagged, same-build runs quiet
#   man_doc.sh            packaging/scopeprof.1 against `scopeprof help COMMAND`:
#                         every command and option in its section, none stale
#   real.sh               prog_robust's real recordings (deep, many threads,
#                         killed, steps) read by the reporter
#   trace_json.sh         the trace JSON parsed back by python3: nesting,
#                         ordering, escaping, merged pids
#   shapes.sh             shape_prog's input shapes (PROFILE_SCOPE_SHAPE):
#                         the exit table = table --group-by shape, byte for
#                         byte; the trace's "Input Dims" read back; diff
#   fuzz_short.sh         a short libFuzzer run over the corpus
#   devtools.sh           the trace JSON loaded by Chrome DevTools' own trace
#                         model (npm @paulirish/trace_engine, pinned)

REP_T   := $(BUILD)/tests/reporter
REP_TSRC := tests/reporter/test_reporter.c tests/reporter/mktrace.c tests/reporter/tw.h tests/reporter/files.h

$(REP_T)/test_reporter: $(REP_TSRC) $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DSP_TREE_LIMIT=4096 -DSP_STACK_NODES=64 -Ireporter -Itests/reporter tests/reporter/test_reporter.c $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

$(REP_T)/test_reporter_asan: $(REP_TSRC) $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -DSP_TREE_LIMIT=4096 -Iinclude -Ireporter -Itests/reporter tests/reporter/test_reporter.c $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

# test_robust: issue 16's faults (data safety, deep and wide files, files
# without END, strict command lines, gzip input).
$(REP_T)/test_robust: tests/reporter/test_robust.c tests/reporter/tw.h tests/reporter/files.h $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter -Itests/reporter $< $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

# test_diff: `scopeprof diff` on runs written by hand; test_words: torch's
# spellings and the command line's small things (both ASan+UBSan).
$(REP_T)/test_diff: tests/reporter/test_diff.c tests/reporter/tw.h tests/reporter/files.h $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter -Itests/reporter $< $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

$(REP_T)/test_words: tests/reporter/test_words.c tests/reporter/tw.h tests/reporter/files.h $(REPORTER_SRCS) $(REPORTER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter -Itests/reporter $< $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

# diff.sh's program, built twice: the second build's compute() does twice
# the work.
$(REP_T)/diff_prog1: tests/reporter/diff_prog.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DCOMPUTE_WORK=1 $< -o $@ $(LDLIBS)

$(REP_T)/diff_prog2: tests/reporter/diff_prog.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DCOMPUTE_WORK=2 $< -o $@ $(LDLIBS)

# A program recording what test_robust builds by hand (real.sh).
$(REP_T)/prog_robust: tests/reporter/prog_robust.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

# shapes.sh's program: scopes with input shapes on two threads, steps, memory.
$(REP_T)/shape_prog: tests/reporter/shape_prog.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

$(REP_T)/mktrace: tests/reporter/mktrace.c tests/reporter/tw.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@

TEST_BINS += $(REP_T)/test_reporter $(REP_T)/test_reporter_asan $(REP_T)/mktrace $(REP_T)/test_robust $(REP_T)/prog_robust \
             $(REP_T)/test_diff $(REP_T)/test_words $(REP_T)/diff_prog1 $(REP_T)/diff_prog2 $(REP_T)/shape_prog \
             $(BUILD)/scopeprof $(BUILD)/fuzz_read $(BUILD)/samples/train_cpu
TEST_CMDS += $(REP_T)/test_reporter $(REP_T)/test_reporter_asan $(REP_T)/test_robust tests/reporter/real.sh tests/reporter/trace_json.sh \
             tests/reporter/shapes.sh \
             $(REP_T)/test_diff $(REP_T)/test_words tests/reporter/diff.sh tests/reporter/man_doc.sh \
             tests/reporter/fuzz_short.sh tests/reporter/devtools.sh
