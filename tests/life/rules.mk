# Life-cycle tests (issues 5 and 6): memory, steps and schedules, fork, ranks,
# full disk, signals and crashes, exit paths, dlclose, thread storms, deep
# recursion, huge names. Everything builds under $(BUILD)/tests/life:
#   prog_life[_asan|_tsan]     the profiled program (mode chosen by argv[1])
#   prog_life_off              the same program without PROFILE_ENABLE, to
#                              compare exit statuses and output with
#   prog_wrap[...]             the SCOPEPROF_WRAP_MALLOC program
#   prog_hlock[...]            a handler's scope inside malloc while the writer
#                              waits in malloc (every allocation behind one mutex)
#   prog_safety[...]           issue 25's program: names taken, setuid, the
#                              environment, cancellation, ulimit -f, chdir
#   liblife_dl[...].so         a plugin that records, for the dlclose tests
#   test_life[_asan|_tsan]     cmocka runner: runs the programs of its own
#                              variant as children and checks what they left
#   test_safety[...]           the same for prog_safety (and the reporter); its
#                              security tests need root (nobody, a setuid copy)
#   same_table.sh              the exit tables against `scopeprof table`, byte for byte
# `make check-leaks`: a sample under valgrind, definite leaks fail.
LIFE    := $(BUILD)/tests/life
LIFE_H  := $(HEADER) tests/common/child.h tests/common/trace.h
LIFE_VARIANTS := plain asan tsan
life_sfx_plain :=
life_sfx_asan  := _asan
life_sfx_tsan  := _tsan
life_flags_plain :=
life_flags_asan  = $(ASAN_FLAGS)
life_flags_tsan  = $(TSAN_FLAGS)
# The runners only start the programs and read what they leave, on one
# thread: TSan checks the programs. (A TSan runner took 4 minutes to read
# test_scope_in_signal_handler's 140 MB trace, which its program wrote in 3 s.)
life_runner_plain :=
life_runner_asan  = $(ASAN_FLAGS)
life_runner_tsan  :=

define life_variant
$(LIFE)/prog_life$(life_sfx_$(1)): tests/life/prog_life.c tests/common/unwound.h tests/common/peak_rss.h $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(life_flags_$(1)) -DPROFILE_ENABLE -DVARIANT='"$(life_sfx_$(1))"' -Itests/common $$< -o $$@ $$(LDLIBS) -ldl

$(LIFE)/prog_wrap$(life_sfx_$(1)): tests/life/prog_wrap.c $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(life_flags_$(1)) -DPROFILE_ENABLE $$< -o $$@ $$(LDLIBS)

$(LIFE)/liblife_dl$(life_sfx_$(1)).so: tests/life/liblife_dl.c $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(life_flags_$(1)) -DPROFILE_ENABLE -fPIC -shared $$< -o $$@ $$(LDLIBS)

# Every allocation through one mutex (tests/life/prog_hlock.c).
$(LIFE)/prog_hlock$(life_sfx_$(1)): tests/life/prog_hlock.c $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(life_flags_$(1)) -DPROFILE_ENABLE $$< -o $$@ $$(LDLIBS) \
	  -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free

$(LIFE)/prog_writer$(life_sfx_$(1)): tests/life/prog_writer.c tests/common/peak_rss.h $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(life_flags_$(1)) -DPROFILE_ENABLE -Itests/common $$< -o $$@ $$(LDLIBS)

# The background writer's hand-offs and the SIGKILL loss bound; the budget
# with 2-slot chunks (prog_writer_tiny, plain only).
$(LIFE)/test_writer$(life_sfx_$(1)): tests/life/test_writer.c $(LIFE_H) $(LIFE)/prog_writer$(life_sfx_$(1)) \
                                     $(LIFE)/prog_writer_tiny
	$$(CC) $$(ALL_CFLAGS) $(life_runner_$(1)) -DVARIANT='"$(life_sfx_$(1))"' -Itests/common $$< -o $$@ -lcmocka

TEST_BINS += $(LIFE)/test_writer$(life_sfx_$(1))
TEST_CMDS += $(LIFE)/test_writer$(life_sfx_$(1))

$(LIFE)/prog_safety$(life_sfx_$(1)): tests/life/prog_safety.c tests/common/unwound.h $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(life_flags_$(1)) -DPROFILE_ENABLE -Itests/common $$< -o $$@ $$(LDLIBS)

# Issue 25: the program stays as safe and as alive as without the profiler.
$(LIFE)/test_safety$(life_sfx_$(1)): tests/life/test_safety.c $(LIFE_H) $(LIFE)/prog_safety$(life_sfx_$(1)) $(BUILD)/scopeprof
	$$(CC) $$(ALL_CFLAGS) $(life_runner_$(1)) -DVARIANT='"$(life_sfx_$(1))"' -Itests/common $$< -o $$@ -lcmocka

TEST_BINS += $(LIFE)/test_safety$(life_sfx_$(1))
TEST_CMDS += $(LIFE)/test_safety$(life_sfx_$(1))

$(LIFE)/test_life$(life_sfx_$(1)): tests/life/test_life.c $(LIFE_H) $(LIFE)/prog_life$(life_sfx_$(1)) $(LIFE)/prog_wrap$(life_sfx_$(1)) $(LIFE)/prog_hlock$(life_sfx_$(1)) $(LIFE)/liblife_dl$(life_sfx_$(1)).so $(LIFE)/prog_life_off
	$$(CC) $$(ALL_CFLAGS) $(life_runner_$(1)) -DVARIANT='"$(life_sfx_$(1))"' -Itests/common $$< -o $$@ -lcmocka

TEST_BINS += $(LIFE)/test_life$(life_sfx_$(1))
TEST_CMDS += $(LIFE)/test_life$(life_sfx_$(1))
endef
$(foreach v,$(LIFE_VARIANTS),$(eval $(call life_variant,$(v))))

$(LIFE)/prog_writer_tiny: tests/life/prog_writer.c tests/common/peak_rss.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DSCOPEPROF_EVENTS_PER_CHUNK=2 -Itests/common $< -o $@ $(LDLIBS)

$(LIFE)/prog_life_off: tests/life/prog_life.c tests/common/unwound.h tests/common/peak_rss.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/common $< -o $@ $(LDLIBS) -ldl

# Leak check: the CPU training sample (threads, ranges, the exit summary and
# trace) under valgrind. The registry stays reachable at exit on purpose
# ("still reachable"); only definite leaks fail.
check-leaks: $(BUILD)/samples/train_cpu
	@mkdir -p $(LIFE)
	cd $(LIFE) && SCOPEPROF_OUTPUT=leaks.sprof valgrind -q --leak-check=full --error-exitcode=1 \
	  --errors-for-leak-kinds=definite $(abspath $(BUILD)/samples/train_cpu) >/dev/null 2>leaks.log; \
	  rc=$$?; grep -E '==[0-9]+==' leaks.log; \
	  if [ $$rc -eq 0 ]; then echo "check-leaks: train_cpu clean under valgrind (no definite leaks, no errors)"; \
	  else echo "check-leaks: FAILED (valgrind exit $$rc), see $(LIFE)/leaks.log"; exit 1; fi

# One table everywhere (issue 24): the exit summary against `scopeprof table`
# of the same file, byte for byte.
TEST_BINS += $(LIFE)/prog_life $(BUILD)/samples/train_cpu $(BUILD)/samples/gemm_shapes $(BUILD)/tests/core/prog_shape $(BUILD)/scopeprof
TEST_CMDS += tests/life/same_table.sh
