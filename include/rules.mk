# rules for include/ (see the top Makefile): the shipped header.
#   make header        include/scopeprof.h from the parts, in this order
#   make check-header  fails if the committed header is not that (CI runs it)
# The parts follow an event's path: what every including file sees (api,
# gpu_api, format), then the implementation (SCOPEPROF_IMPLEMENTATION): the
# codec and the table, the registry and its clock, the environment, buffers,
# steps and memory, the exit summary's sums, the trace file, the writer,
# survival, ranks and clocks across an MPI job (mpi.h), the GPU backend.
# Each part begins in the shipped file with a line naming its source.
HEADER_PARTS := $(addprefix include/parts/,api.h gpu_api.h format.h codec.h table.h state.h \
  clock.h env.h registry.h buffers.h steps.h summary.h file.h writer.h survival.h mpi.h gpu.h wrap.h end.h)
AMALGAMATE = for p in $(HEADER_PARTS); do printf '/* ==== part: %s ==== */\n' "$$p"; cat "$$p"; done

.PHONY: header check-header
header: $(HEADER)
$(HEADER): $(HEADER_PARTS) include/rules.mk
	@$(AMALGAMATE) >$@.tmp && mv $@.tmp $@

check-header:
	@$(AMALGAMATE) | cmp -s - $(HEADER) || { echo "check-header: $(HEADER) is not the concatenation of include/parts (run make header and commit it)" >&2; exit 1; }
	@echo "check-header: $(HEADER) is the concatenation of $(words $(HEADER_PARTS)) parts"
