# GPU scope tests (issue 4). Everything builds under $(BUILD)/tests/gpu:
#   gpu_prog[_asan|_tsan]   profiled programs (one per argv mode), built with
#                           -DPROFILE_HIP and linked with the HIP test double
#                           (hip_double.c) instead of -lamdhip64; -rdynamic,
#                           as the header finds the runtime with dlsym
#   test_gpu[_asan|_tsan]   cmocka: runs gpu_prog of the same variant as child
#                           processes and checks trace, table and the double's
#                           counters; the plain one also runs real_hip*
#   real_hip, real_hip_dlopen  the real libamdhip64 (linked / found with
#                           dlopen) on a machine without a GPU
#   tests/gpu/cuda_build.sh the header under -DPROFILE_CUDA with gcc and clang
#                           (and samples/gpu_spin.cu with nvcc when present)
#   tests/gpu/user_builds.sh  built as users build (documented link lines under
#                           --as-needed, g++, hipcc, nvcc -Werror all-warnings)
# Variants: "" plain ($(ALL_CFLAGS)), _asan (+ASan/UBSan), _tsan (+TSan).
GPUT     := $(BUILD)/tests/gpu
GPUT_H   := $(HEADER) tests/gpu/hip_double.h
GPUT_TEST_H := tests/common/child.h tests/common/trace.h
GPUT_HIP := -DPROFILE_ENABLE -DPROFILE_HIP -D__HIP_PLATFORM_AMD__
gput_sfx_plain :=
gput_sfx_asan  := _asan
gput_sfx_tsan  := _tsan
gput_flags_plain :=
gput_flags_asan  = $(ASAN_FLAGS)
gput_flags_tsan  = $(TSAN_FLAGS)
gput_real_plain := -DREAL_HIP_TESTS

# $(1) = variant. The later flags (-O1 of the sanitizer sets) override -O2.
define gput_variant
$(GPUT)/gpu_prog$(gput_sfx_$(1)): tests/gpu/gpu_prog.c tests/gpu/hip_double.c $(GPUT_H)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $(gput_flags_$(1)) $(GPUT_HIP) tests/gpu/gpu_prog.c tests/gpu/hip_double.c -o $$@ -rdynamic $$(LDLIBS)

$(GPUT)/test_gpu$(gput_sfx_$(1)): tests/gpu/test_gpu.c tests/gpu/hip_double.c $(GPUT_TEST_H) $(GPUT_H) $(GPUT)/gpu_prog$(gput_sfx_$(1))
	$$(CC) $$(ALL_CFLAGS) $(gput_flags_$(1)) $(GPUT_HIP) $(gput_real_$(1)) -DCHILD_NAME='"gpu_prog$(gput_sfx_$(1))"' -Itests/common tests/gpu/test_gpu.c tests/gpu/hip_double.c -o $$@ -rdynamic -lcmocka $$(LDLIBS)

TEST_BINS += $(GPUT)/test_gpu$(gput_sfx_$(1))
endef
$(foreach v,plain asan tsan,$(eval $(call gput_variant,$(v))))

# The real runtime: linked, and not linked (the header's dlopen fallback).
$(GPUT)/real_hip: tests/gpu/real_hip.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(GPUT_HIP) $< -o $@ -lamdhip64 $(LDLIBS)

$(GPUT)/real_hip_dlopen: tests/gpu/real_hip.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(GPUT_HIP) $< -o $@ $(LDLIBS) -ldl

$(GPUT)/test_gpu: $(GPUT)/real_hip $(GPUT)/real_hip_dlopen

TEST_CMDS += $(GPUT)/test_gpu $(GPUT)/test_gpu_asan $(GPUT)/test_gpu_tsan
TEST_CMDS += tests/gpu/cuda_build.sh tests/gpu/user_builds.sh
