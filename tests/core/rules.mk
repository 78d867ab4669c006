# Core tests (issue 2). Everything builds under $(BUILD)/tests/core:
#   test_agg[_asan]            aggregation and table, events with known times
#   test_sums[_asan]           the exit summary's sums against the reporter's
#                              aggregation, on random records
#   test_wake[_asan]           the background writer's wake-up rules
#   test_record[_asan|_tsan]   runs the prog_* / multi_* programs of the same
#                              variant as child processes and checks their
#                              exit summary and trace file
#   check_disabled, check_cxx  scripts (one test each): disabled build leaves
#                              nothing; the header compiles as C++
#   regressions[...]           one test per header bug found (see the file)
# Variants: "" plain ($(ALL_CFLAGS)), _asan (+ASan/UBSan), _tsan (+TSan).
CORE    := $(BUILD)/tests/core
CORE_H  := $(HEADER) tests/common/child.h tests/common/trace.h
CORE_PROGS := prog_basic prog_threads prog_mismatch prog_stream prog_dlclose prog_shape prog_xopen
CORE_VARIANTS := plain asan tsan
core_sfx_plain :=
core_sfx_asan  := _asan
core_sfx_tsan  := _tsan
core_flags_plain :=
core_flags_asan  = $(ASAN_FLAGS)
core_flags_tsan  = $(TSAN_FLAGS)
# test_record only starts the programs and reads what they leave, on one
# thread: TSan checks the programs, not it.
core_runner_plain :=
core_runner_asan  = $(ASAN_FLAGS)
core_runner_tsan  :=
CORE_LIBS := $(LDLIBS) -ldl

# $(1) = variant. Programs, the two shared libraries, the multi-module
# program (linked to libsp_linked, found next to it through $ORIGIN; built
# without -rdynamic), and the runners.
define core_variant
$(foreach p,$(CORE_PROGS),$(CORE)/$(p)$(core_sfx_$(1))): $(CORE)/%$(core_sfx_$(1)): tests/core/%.c $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(core_flags_$(1)) -DPROFILE_ENABLE -DVARIANT='"$(core_sfx_$(1))"' $$< -o $$@ $$(CORE_LIBS)

$(CORE)/libsp_linked$(core_sfx_$(1)).so: tests/core/multi_linked.c $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(core_flags_$(1)) -DPROFILE_ENABLE -fPIC -shared $$< -o $$@ $$(LDLIBS)

$(CORE)/libsp_dl$(core_sfx_$(1)).so: tests/core/multi_dl.c $(HEADER)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(core_flags_$(1)) -DPROFILE_ENABLE -fPIC -shared $$< -o $$@ $$(LDLIBS)

$(CORE)/multi_main$(core_sfx_$(1)): tests/core/multi_main.c tests/core/multi_b.c $(HEADER) $(CORE)/libsp_linked$(core_sfx_$(1)).so $(CORE)/libsp_dl$(core_sfx_$(1)).so
	$$(CC) $$(ALL_CFLAGS) $(core_flags_$(1)) -DPROFILE_ENABLE -DVARIANT='"$(core_sfx_$(1))"' tests/core/multi_main.c tests/core/multi_b.c -o $$@ -L$(CORE) -lsp_linked$(core_sfx_$(1)) -Wl,-rpath,'$$$$ORIGIN' $$(CORE_LIBS)

$(CORE)/test_record$(core_sfx_$(1)): tests/core/test_record.c $(CORE_H) $(foreach p,$(CORE_PROGS) multi_main,$(CORE)/$(p)$(core_sfx_$(1)))
	$$(CC) $$(ALL_CFLAGS) $(core_runner_$(1)) -DVARIANT='"$(core_sfx_$(1))"' -Itests/common $$< -o $$@ -lcmocka

$(CORE)/regressions$(core_sfx_$(1)): tests/core/regressions.c tests/core/enable_empty.c $(CORE_H) $(CORE)/test_record$(core_sfx_$(1))
	$$(CC) $$(ALL_CFLAGS) $(core_flags_$(1)) -DVARIANT='"$(core_sfx_$(1))"' -Itests/common tests/core/regressions.c tests/core/enable_empty.c -o $$@ -lcmocka $$(LDLIBS)

TEST_BINS += $(CORE)/test_record$(core_sfx_$(1)) $(CORE)/regressions$(core_sfx_$(1))
TEST_CMDS += $(CORE)/regressions$(core_sfx_$(1))
TEST_CMDS += $(CORE)/test_record$(core_sfx_$(1))
endef
$(foreach v,$(CORE_VARIANTS),$(eval $(call core_variant,$(v))))

# Aggregation only: single-threaded, so plain and ASan/UBSan.
$(CORE)/test_agg: tests/core/test_agg.c tests/core/agg_reference.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ -lcmocka
$(CORE)/test_agg_asan: tests/core/test_agg.c tests/core/agg_reference.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) $< -o $@ -lcmocka
TEST_BINS += $(CORE)/test_agg $(CORE)/test_agg_asan
TEST_CMDS += $(CORE)/test_agg $(CORE)/test_agg_asan

# The exit summary's sums against the reporter's aggregation, on random
# records (profiling on: the writer's sums exist only there). Single-threaded,
# so plain and ASan/UBSan.
$(CORE)/test_sums: tests/core/test_sums.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DVARIANT='""' $< -o $@ -lcmocka $(CORE_LIBS)
$(CORE)/test_sums_asan: tests/core/test_sums.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -DPROFILE_ENABLE -DVARIANT='"_asan"' $< -o $@ -lcmocka $(CORE_LIBS)
TEST_BINS += $(CORE)/test_sums $(CORE)/test_sums_asan
TEST_CMDS += $(CORE)/test_sums $(CORE)/test_sums_asan

# The background writer's wake-up rules, on a state made by hand (profiling
# on: the writer exists only there). No thread runs: plain and ASan/UBSan.
$(CORE)/test_wake: tests/core/test_wake.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DVARIANT='""' $< -o $@ -lcmocka $(CORE_LIBS)
$(CORE)/test_wake_asan: tests/core/test_wake.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -DPROFILE_ENABLE -DVARIANT='"_asan"' $< -o $@ -lcmocka $(CORE_LIBS)
TEST_BINS += $(CORE)/test_wake $(CORE)/test_wake_asan
TEST_CMDS += $(CORE)/test_wake $(CORE)/test_wake_asan

# The disabled build: objects of disabled_use.c without PROFILE_ENABLE, with
# PROFILE_ENABLE=0, with the macro lines deleted (ref) and enabled (control),
# all with this $(CC); check_disabled compares them.
$(CORE)/disabled/ref.c: tests/core/disabled_use.c
	@mkdir -p $(@D)
	grep -v 'macro \*/$$' $< > $@
$(CORE)/disabled/off.o: tests/core/disabled_use.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(CORE)/disabled/zero.o: tests/core/disabled_use.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE=0 -c $< -o $@
$(CORE)/disabled/ref.o: $(CORE)/disabled/ref.c $(HEADER)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(CORE)/disabled/on.o: tests/core/disabled_use.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -c $< -o $@

# One-word commands for the runner: wrappers that pass the scripts their
# arguments. Rewritten whenever CC may have changed (FORCE-like: cheap).
$(CORE)/check_disabled: tests/core/check_disabled.sh $(addprefix $(CORE)/disabled/,off.o zero.o ref.o on.o)
	printf '#!/bin/sh\nexec bash tests/core/check_disabled.sh %s\n' '$(CORE)/disabled' > $@
	chmod +x $@
$(CORE)/check_cxx: tests/core/check_cxx.sh $(HEADER)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash tests/core/check_cxx.sh %s\n' '$(CORE)/cxx' > $@
	chmod +x $@
# Instructions per scope over the whole process, against a generous bound
# (tests/core/instr_guard.sh, callgrind): bench/write_cost.c on and off.
$(CORE)/instr_prof: bench/write_cost.c bench/bench.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)
$(CORE)/instr_off: bench/write_cost.c bench/bench.h $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LDLIBS)
$(CORE)/instr_guard: tests/core/instr_guard.sh $(CORE)/instr_prof $(CORE)/instr_off
	printf '#!/bin/sh\nexec bash tests/core/instr_guard.sh %s %s\n' '$(CORE)/instr_prof' '$(CORE)/instr_off' > $@
	chmod +x $@
TEST_BINS += $(CORE)/instr_guard
TEST_CMDS += $(CORE)/instr_guard

# The environment table against the docs that list it (tests/core/env_doc.sh).
$(CORE)/env_doc: tests/core/env_doc.sh
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash tests/core/env_doc.sh\n' > $@
	chmod +x $@
TEST_BINS += $(CORE)/check_disabled $(CORE)/check_cxx $(CORE)/env_doc
TEST_CMDS += $(CORE)/check_disabled $(CORE)/check_cxx $(CORE)/env_doc
