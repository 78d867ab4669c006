# rules for bench/ (see the top Makefile). `make bench` builds and runs every
# benchmark and prints their tables; results are written up in
# docs/PERFORMANCE.md. A benchmark never fails on a time: it reports.
#
# Sizes (override on the command line, e.g. `make bench BENCH_N=1000000`):
# scopes per repetition in scope_cost, and repetitions (the median is shown);
# scopes of the streaming run; trace file sizes for the reporter; where the
# benchmarks' trace files go (they are removed after).
BENCH_N        ?= 10000000
BENCH_REPS     ?= 7
BENCH_STREAM_N ?= 100000000
REPORTER_SIZES ?= 1000000 10000000
BENCH_TMP      ?= /tmp

BENCH_DIR := $(BUILD)/bench
BENCH_BINS := $(BENCH_DIR)/scope_cost $(BENCH_DIR)/scope_cost_pic $(BENCH_DIR)/stream $(BENCH_DIR)/gen_trace \
              $(BENCH_DIR)/rusage_run $(BENCH_DIR)/regimes
BENCH_DEPS := bench/bench.h $(HEADER)

# loops.c three ways: profiling on, compiled out, and no macro at all. The
# last two must give the same machine code (bench/disasm_check.sh).
$(BENCH_DIR)/loops_enabled.o: bench/loops.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -DLOOP_VARIANT=enabled -c $< -o $@
$(BENCH_DIR)/loops_disabled.o: bench/loops.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DLOOP_VARIANT=disabled -c $< -o $@
$(BENCH_DIR)/loops_nomacro.o: bench/loops.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DLOOP_VARIANT=nomacro -DBENCH_NO_MACRO -c $< -o $@

# The floor is built without PROFILE_ENABLE, in its own translation unit.
$(BENCH_DIR)/scope_cost.o: bench/scope_cost.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(BENCH_DIR)/scope_cost: $(BENCH_DIR)/scope_cost.o $(BENCH_DIR)/loops_enabled.o \
                         $(BENCH_DIR)/loops_disabled.o $(BENCH_DIR)/loops_nomacro.o
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

# The same profiled loop in a shared library (-fPIC), as a program that
# profiles code in its libraries gets it; the driver finds it by $$ORIGIN.
$(BENCH_DIR)/libscope_loops.so: bench/loops.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -DLOOP_VARIANT=enabled $< -o $@ $(LDLIBS)
$(BENCH_DIR)/scope_cost_pic: $(BENCH_DIR)/scope_cost.o $(BENCH_DIR)/loops_disabled.o \
                             $(BENCH_DIR)/loops_nomacro.o $(BENCH_DIR)/libscope_loops.so
	$(CC) $(ALL_CFLAGS) $(filter %.o,$^) -L$(BENCH_DIR) -lscope_loops -Wl,-rpath,'$$ORIGIN' \
	  -o $@ $(LDLIBS)

$(BENCH_DIR)/stream: bench/stream.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)
$(BENCH_DIR)/gen_trace: bench/gen_trace.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)
$(BENCH_DIR)/regimes: bench/regimes.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)
# The floor process of bench/whole_cpu.sh: regimes.c with the floor's loop
# where the scopes are, and no profiler.
$(BENCH_DIR)/regimes_floor: bench/regimes.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DBENCH_FLOOR_PROCESS $< -o $@ -lpthread
# The MPI support's share of MPI_Init and MPI_Finalize (needs Open MPI:
# tests/deps.sh installs it). Not in `make bench`: `make bench-mpi`.
$(BENCH_DIR)/mpi_cost: bench/mpi_cost.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) mpicc $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)
.PHONY: bench-mpi
bench-mpi: $(BENCH_DIR)/mpi_cost
	@bash bench/mpi_cost.sh $(abspath $(BENCH_DIR)/mpi_cost) $(BENCH_REPS)

$(BENCH_DIR)/rusage_run: bench/rusage_run.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@

# The real peer: scope_cost.c built with -DBENCH_LTTNG and linked with an
# LTTng-UST tracepoint provider (bench/lttng_tp.[ch]). Not in BENCH_BINS:
# it needs liblttng-ust-dev, which bench/lttng_bench.sh installs if it can.
LTTNG_LIBS := -llttng-ust -ldl
$(BENCH_DIR)/scope_cost_lttng.o: bench/scope_cost.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DBENCH_LTTNG -c $< -o $@
$(BENCH_DIR)/lttng_tp.o: bench/lttng_tp.c bench/lttng_tp.h bench/bench.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ibench -c $< -o $@
# bench/regimes.c the same way: LTTng's begin/end pair in each regime's loop.
$(BENCH_DIR)/regimes_lttng: bench/regimes.c $(BENCH_DIR)/lttng_tp.o $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DBENCH_LTTNG bench/regimes.c $(BENCH_DIR)/lttng_tp.o -o $@ $(LTTNG_LIBS) -lpthread
$(BENCH_DIR)/scope_cost_lttng: $(BENCH_DIR)/scope_cost_lttng.o $(BENCH_DIR)/lttng_tp.o \
                               $(BENCH_DIR)/loops_enabled.o $(BENCH_DIR)/loops_disabled.o \
                               $(BENCH_DIR)/loops_nomacro.o
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LTTNG_LIBS) $(LDLIBS)

# PROFILE_GPU_SCOPE's CPU side: scope_cost.c built with -DBENCH_GPU and linked
# with bench/gpu_loop.c (PROFILE_HIP, the real HIP headers, as tests/gpu/rules.mk
# builds the HIP path in C) and the HIP test double tests/gpu/hip_double.c
# instead of -lamdhip64 (-rdynamic: the header finds the runtime with dlsym).
# Not in BENCH_BINS: it needs libamdhip64-dev (make deps).
BENCH_HIP := -DPROFILE_HIP -D__HIP_PLATFORM_AMD__ -Itests/gpu
$(BENCH_DIR)/scope_cost_gpu.o: bench/scope_cost.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DBENCH_GPU -c $< -o $@
$(BENCH_DIR)/gpu_loop.o: bench/gpu_loop.c tests/gpu/hip_double.h $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION $(BENCH_HIP) -c $< -o $@
$(BENCH_DIR)/hip_double.o: tests/gpu/hip_double.c tests/gpu/hip_double.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(BENCH_HIP) -c $< -o $@
$(BENCH_DIR)/scope_cost_gpu: $(BENCH_DIR)/scope_cost_gpu.o $(BENCH_DIR)/gpu_loop.o \
                             $(BENCH_DIR)/hip_double.o $(BENCH_DIR)/loops_enabled.o \
                             $(BENCH_DIR)/loops_disabled.o $(BENCH_DIR)/loops_nomacro.o
	$(CC) $(ALL_CFLAGS) $^ -o $@ -rdynamic $(LDLIBS)

.PHONY: bench-regimes bench-build bench-cost bench-disasm bench-stream bench-reporter bench-where bench-lttng \
        bench-gpu
bench-build: $(BENCH_BINS) $(BENCH_DIR)/loops_disabled.o $(BENCH_DIR)/loops_nomacro.o

bench: bench-build
	@echo "== machine: $$(nproc) CPUs, $$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $$(uname -r)"
	@$(MAKE) --no-print-directory bench-whole bench-regimes bench-cost bench-gpu bench-lttng bench-disasm bench-stream \
	  bench-reporter bench-where bench-compensation bench-lz4 bench-sqlite

# The whole cost (issue 22): per regime, the recording thread against the
# floor, the process's CPU (every thread) against a floor process run in the
# same loop, peak RSS (bench/whole_cpu.sh); instructions per scope over the
# whole process with callgrind (bench/whole_cost.sh); where the process's CPU
# per scope goes, flat and nested (bench/cpu_split.sh).
.PHONY: bench-whole
bench-whole: $(BENCH_DIR)/regimes $(BENCH_DIR)/regimes_floor $(BENCH_DIR)/rusage_run \
             $(BENCH_DIR)/write_cost $(BENCH_DIR)/write_cost_off
	@echo
	@echo "== the whole cost per regime: recording thread and process CPU over the floor (medians of 3)"
	@BUILD="$(BUILD)" bash bench/whole_cpu.sh 3
	@echo "== instructions per scope, whole process (callgrind)"
	@BIN=$(BENCH_DIR)/write_cost OFF=$(BENCH_DIR)/write_cost_off sh bench/whole_cost.sh 2000000
	@echo "== where the process's CPU per scope goes: recording, the exit table's sums, the file (medians of 5)"
	@BUILD="$(BUILD)" bash bench/cpu_split.sh 5

# 1. Cost of a scope against the floor: once with a budget that holds every
#    event (nothing written), once streaming to a file under the default
#    64 MiB budget (writing is then part of the measured cost).
bench-cost: $(BENCH_DIR)/scope_cost $(BENCH_DIR)/scope_cost_pic
	@echo
	@echo "== 1a. scope cost, events kept in memory (budget 1024 MiB, no file)"
	SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 \
	  $(BENCH_DIR)/scope_cost -n $(BENCH_N) -r $(BENCH_REPS)
	@echo
	@echo "== 1b. scope cost, streaming to $(BENCH_TMP) (default 64 MiB budget)"
	SCOPEPROF_OUTPUT=$(BENCH_TMP)/scopeprof_bench_cost.sprof SCOPEPROF_SUMMARY=0 \
	  $(BENCH_DIR)/scope_cost -n $(BENCH_N) -r $(BENCH_REPS) --only floor24,floor16,scope,scopex2,dyn
	@rm -f $(BENCH_TMP)/scopeprof_bench_cost.sprof
	@echo
	@echo "== 1c. scope cost, profiled loop in a shared library built with -fPIC (in memory)"
	SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 \
	  $(BENCH_DIR)/scope_cost_pic -n $(BENCH_N) -r $(BENCH_REPS) --only floor16,floor24,scope,scopex2

# 0. Regimes (issue 15): fresh memory, past the budget, two threads,
#    streaming, each a new process with default settings, against the floor
#    of the same process; then the same with SCOPEPROF_WRITER=0 (recording
#    threads write, as before the background writer).
REGIMES ?= fresh past threads stream
bench-regimes: $(BENCH_DIR)/regimes
	@echo
	@echo "== 0. regimes: default settings, floor in the same process, worst 1024-scope batch"
	@for m in $(REGIMES); do for w in 1 0; do \
	  SCOPEPROF_WRITER=$$w SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT=$(BENCH_TMP)/scopeprof_bench_regime.sprof \
	    $(BENCH_DIR)/regimes $$m; rm -f $(BENCH_TMP)/scopeprof_bench_regime.sprof; done; done

# 1e. PROFILE_GPU_SCOPE's CPU side against the HIP test double, in the same run
#     as the floors and PROFILE_SCOPE (in memory, as 1a). Needs the HIP headers
#     (libamdhip64-dev, `make deps`): says SKIPPED without them, never fails.
HIP_HEADER_CHECK = echo '\#include <hip/hip_runtime_api.h>' | \
  $(CC) -D__HIP_PLATFORM_AMD__ -E -x c - >/dev/null 2>&1
bench-gpu: $(BENCH_DIR)/loops_enabled.o $(BENCH_DIR)/loops_disabled.o $(BENCH_DIR)/loops_nomacro.o
	@echo
	@echo "== 1e. PROFILE_GPU_SCOPE CPU side, HIP test double (no GPU), in memory"
	@if ! $(HIP_HEADER_CHECK); then \
	  echo "bench-gpu: SKIPPED: no <hip/hip_runtime_api.h> (install libamdhip64-dev: make deps)"; \
	else \
	  $(MAKE) --no-print-directory $(BENCH_DIR)/scope_cost_gpu >/dev/null && \
	  echo "SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0" \
	    "$(BENCH_DIR)/scope_cost_gpu -n $(BENCH_N) -r $(BENCH_REPS) --only floor16,floor24,scope,gpu,gpu_q" && \
	  SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 \
	    $(BENCH_DIR)/scope_cost_gpu -n $(BENCH_N) -r $(BENCH_REPS) --only floor16,floor24,scope,gpu,gpu_q; \
	fi

# 1d. The real peer, LTTng-UST, in the same run as the floor and PROFILE_SCOPE.
#     Installs the packages if it can (root or sudo -n), else says SKIPPED;
#     never fails on a missing package or a session it cannot start.
bench-lttng: $(BENCH_DIR)/loops_enabled.o $(BENCH_DIR)/loops_disabled.o $(BENCH_DIR)/loops_nomacro.o
	@echo
	@echo "== 1d. the real peer: LTTng-UST tracepoints, same run as the floor and PROFILE_SCOPE"
	@BUILD="$(BUILD)" BENCH_TMP="$(BENCH_TMP)" CC="$(CC)" \
	  bash bench/lttng_bench.sh $(BENCH_N) $(BENCH_REPS)

# 2. The disabled build: same machine code as no macro, with gcc and clang.
bench-disasm: $(BENCH_DIR)/loops_disabled.o $(BENCH_DIR)/loops_nomacro.o
	@echo
	@echo "== 2. disabled build vs. no macro (objdump -d of the loop functions)"
	@CC="$(CC)" CFLAGS="$(ALL_CFLAGS)" BUILD="$(BUILD)" bash bench/disasm_check.sh
	@if command -v $(CLANG) >/dev/null 2>&1; then \
	  CC="$(CLANG)" CFLAGS="$(ALL_CFLAGS)" BUILD="$(BUILD)" bash bench/disasm_check.sh; fi

# 3. Streaming: many scopes under a small budget.
bench-stream: $(BENCH_DIR)/stream
	@echo
	@echo "== 3. streaming: $(BENCH_STREAM_N) scopes, 8 MiB budget, file in $(BENCH_TMP)"
	SCOPEPROF_BUFFER_MB=8 SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT=$(BENCH_TMP)/scopeprof_bench_stream.sprof \
	  $(BENCH_DIR)/stream $(BENCH_STREAM_N)
	@rm -f $(BENCH_TMP)/scopeprof_bench_stream.sprof

# 4. Reporter: table and trace over generated files. The reporter is built
#    if its rules exist; the script skips that part cleanly if it does not.
bench-reporter: $(BENCH_DIR)/gen_trace $(BENCH_DIR)/rusage_run
	@echo
	@echo "== 4. reporter: table and trace over $(REPORTER_SIZES) scopes"
	@if $(MAKE) -n $(BUILD)/scopeprof >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(BUILD)/scopeprof >/dev/null || true; fi
	@BUILD="$(BUILD)" BENCH_TMP="$(BENCH_TMP)" bash bench/reporter_bench.sh $(REPORTER_SIZES)

# 5. Where the time goes: callgrind instruction counts (and perf if the
#    machine exposes hardware counters).
bench-where: $(BENCH_DIR)/scope_cost $(BENCH_DIR)/scope_cost_pic
	@echo
	@echo "== 5. instructions per scope (valgrind --tool=callgrind; perf stat if available)"
	@BUILD="$(BUILD)" bash bench/where_time_goes.sh

# 6. Overhead compensation: the table's times against the program's own
#    times without the profiler (bench/compensation.c, the issue's program and
#    a fine-grained nested one), raw and compensated. The workloads are built
#    twice (bench/comp_work.c) and run interleaved in one process.
BENCH_COMP_REPS ?= 5
$(BENCH_DIR)/comp_work_plain.o: bench/comp_work.c bench/comp_work.h $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ibench -DCOMP_VARIANT=plain -c $< -o $@
$(BENCH_DIR)/comp_work_prof.o: bench/comp_work.c bench/comp_work.h $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ibench -DCOMP_VARIANT=prof -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -c $< -o $@
$(BENCH_DIR)/compensation: bench/compensation.c $(BENCH_DIR)/comp_work_plain.o $(BENCH_DIR)/comp_work_prof.o
	$(CC) $(ALL_CFLAGS) -Ibench $^ -o $@ $(LDLIBS)
# 7. Compensation on a real code base: LZ4's HC compressor, five functions
#    given a PROFILE_SCOPE, against its own timing and perf's samples
#    (downloads Debian's lz4 source once; SKIPPED without network or perf).
BENCH_LZ4_REPS ?= 6
BENCH_LZ4_RUNS ?= 3
.PHONY: bench-lz4
bench-lz4: $(BUILD)/scopeprof
	@echo
	@echo "== 7. compensation on a real code base: LZ4 1.9.4, self shares against perf"
	@BUILD="$(BUILD)" BENCH_TMP="$(BENCH_TMP)" CC="$(CC)" bash bench/lz4_shares.sh $(BENCH_LZ4_REPS) $(BENCH_LZ4_RUNS)

# 8. The whole cost on a real code base: SQLite's speedtest1, 16 functions
#    given a PROFILE_SCOPE, against its build without profiling: ns of CPU
#    per scope by part, in its own thread and the rest (downloads Debian's
#    SQLite source once, as tests/dropin does; SKIPPED without network).
BENCH_SQLITE_RUNS ?= 7
BENCH_SQLITE_SIZE ?= 50
.PHONY: bench-sqlite
bench-sqlite: $(BUILD)/scopeprof $(BENCH_DIR)/rusage_run
	@echo
	@echo "== 8. the whole cost on a real code base: SQLite 3.40.1's speedtest1"
	@BUILD="$(BUILD)" CC="$(CC)" bash bench/sqlite_cost.sh $(BENCH_SQLITE_RUNS) $(BENCH_SQLITE_SIZE)

.PHONY: bench-compensation
bench-compensation: $(BENCH_DIR)/compensation $(BUILD)/scopeprof
	@echo
	@echo "== 6. overhead compensation: table vs. the program's own times ($(BENCH_COMP_REPS) runs each, interleaved)"
	@BUILD="$(BUILD)" BENCH_TMP="$(BENCH_TMP)" bash bench/compensation.sh $(BENCH_COMP_REPS)
	@echo
	@echo "== 6b. the same under load: the issue's program beside a busy process (bench/under_load.sh)"
	@BUILD="$(BUILD)" BENCH_TMP="$(BENCH_TMP)" bash bench/under_load.sh 5 1
# The write side's cost per event (bench/write_cost.sh, callgrind) and the
# check that a writer change keeps the bytes (bench/write_check.sh, which
# builds its own). docs/PERFORMANCE.md, "Writing a chunk".
$(BENCH_DIR)/write_cost: bench/write_cost.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)
# The same program with profiling compiled out: the floor of the whole-process
# count (bench/whole_cost.sh).
$(BENCH_DIR)/write_cost_off: bench/write_cost.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LDLIBS)
bench-build: $(BENCH_DIR)/write_cost $(BENCH_DIR)/write_cost_off
