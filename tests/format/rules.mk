# Trace format tests: damage (issue 17) and files of older formats. What is
# built goes under $(BUILD)/tests/format:
#   prog_flip                  a profiled program: a small real trace
#   test_format[_asan]         cmocka: every bit of the file header, the chunk
#                              headers and END flipped, read by the reporter
#                              in-process; resync after a damaged length; the
#                              END count checked
#   old_format.sh              files the format 3.2 and 4.0 writers wrote
#                              (tests/format/old) read by the reporter and
#                              its ASan+UBSan build: the 3.2 reporter's
#                              tables byte for byte, the trace JSON parsed
#                              back (python3)
FMT_T := $(BUILD)/tests/format

$(FMT_T)/prog_flip: tests/format/prog_flip.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

$(FMT_T)/test_format: tests/format/test_format.c tests/common/child.h $(REPORTER_SRCS) $(REPORTER_HDRS) $(FMT_T)/prog_flip
	$(CC) $(ALL_CFLAGS) -Ireporter -Itests/common tests/format/test_format.c $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

$(FMT_T)/test_format_asan: tests/format/test_format.c tests/common/child.h $(REPORTER_SRCS) $(REPORTER_HDRS) $(FMT_T)/prog_flip
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter -Itests/common -DVARIANT='"_asan"' tests/format/test_format.c $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

TEST_BINS += $(FMT_T)/test_format $(FMT_T)/test_format_asan $(BUILD)/scopeprof \
             $(BUILD)/tests/output/scopeprof_asan
TEST_CMDS += $(FMT_T)/test_format $(FMT_T)/test_format_asan tests/format/old_format.sh
