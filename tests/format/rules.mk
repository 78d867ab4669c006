# Trace format damage tests (issue 17). Everything builds under $(BUILD)/tests/format:
#   prog_flip                  a profiled program: a small real trace
#   test_format[_asan]         cmocka: every bit of the file header, the chunk
#                              headers and END flipped, read by the reporter
#                              in-process; resync after a damaged length; the
#                              END count checked
FMT_T := $(BUILD)/tests/format

$(FMT_T)/prog_flip: tests/format/prog_flip.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

$(FMT_T)/test_format: tests/format/test_format.c tests/common/child.h $(REPORTER_SRCS) $(REPORTER_HDRS) $(FMT_T)/prog_flip
	$(CC) $(ALL_CFLAGS) -Ireporter -Itests/common tests/format/test_format.c $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

$(FMT_T)/test_format_asan: tests/format/test_format.c tests/common/child.h $(REPORTER_SRCS) $(REPORTER_HDRS) $(FMT_T)/prog_flip
	$(CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -Ireporter -Itests/common -DVARIANT='"_asan"' tests/format/test_format.c $(REPORTER_SRCS) -o $@ -lcmocka $(REPORTER_LIBS)

TEST_BINS += $(FMT_T)/test_format $(FMT_T)/test_format_asan
TEST_CMDS += $(FMT_T)/test_format $(FMT_T)/test_format_asan
