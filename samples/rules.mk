# Samples: each is built with profiling on. `make demo` runs one and shows the
# table it prints at exit, then the reporter's view of its trace file.
SAMPLES := $(BUILD)/samples/train_cpu $(BUILD)/samples/gemm_shapes $(BUILD)/samples/gpu_masking
# The GPU sample needs the HIP headers and library (Debian: libamdhip64-dev).
# Without them `make` builds the rest and says in one line what it skipped.
HAVE_HIP ?= $(shell printf '\043include <hip/hip_runtime.h>\n' | $(CC) -D__HIP_PLATFORM_AMD__ -E -x c - >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_HIP),1)
all: $(SAMPLES)
else
all: $(BUILD)/samples/train_cpu $(BUILD)/samples/gemm_shapes skipped-gpu-sample
.PHONY: skipped-gpu-sample
skipped-gpu-sample:
	@echo "skipped: $(BUILD)/samples/gpu_masking (the GPU sample): no HIP headers; install libamdhip64-dev (Debian) to build it"
endif

$(BUILD)/samples/%: samples/%.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS) -lm

# GPU sample: HIP runtime (runs without a GPU: one fallback line, CPU table).
$(BUILD)/samples/gpu_masking: samples/gpu_masking.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DPROFILE_HIP -D__HIP_PLATFORM_AMD__ $< -o $@ -lamdhip64 $(LDLIBS)

DEMO_TRACE := $(BUILD)/demo.sprof
demo: $(BUILD)/samples/train_cpu $(BUILD)/scopeprof
	@echo "== running samples/train_cpu.c with profiling on (table printed at exit)"
	SCOPEPROF_OUTPUT=$(DEMO_TRACE) $(BUILD)/samples/train_cpu
	@echo
	@echo "== trace file: $(DEMO_TRACE) ($$(wc -c <$(DEMO_TRACE)) bytes)"
	@echo "== $(BUILD)/scopeprof table $(DEMO_TRACE) --sort self_cpu_time_total --limit 8"
	@$(BUILD)/scopeprof table $(DEMO_TRACE) --sort self_cpu_time_total --limit 8
	@$(BUILD)/scopeprof trace $(DEMO_TRACE) -o $(BUILD)/demo.json
	@echo "== Chrome/Perfetto trace: $(BUILD)/demo.json (open it in https://ui.perfetto.dev or chrome://tracing)"
