# Drop-in tests (issue 14), compile-heavy, nothing timed:
#   matrix   the header in strict builds: gcc/clang x C standards x C/C++ x
#            included first/after system headers x enabled/disabled, strict
#            warning sets as errors (tests/dropin/matrix.sh: why these)
#   size     the one-implementation model on a 21-file program linked with no
#            flag: code per file, the implementation once, the link error
#            that names SCOPEPROF_IMPLEMENTATION (tests/dropin/size.sh)
DROPIN := $(BUILD)/tests/dropin

# One-word commands for the runner (wrappers passing the scripts their
# arguments, as tests/core does).
$(DROPIN)/matrix: tests/dropin/matrix.sh tests/dropin/use.c $(HEADER)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash tests/dropin/matrix.sh include\n' > $@
	chmod +x $@
$(DROPIN)/size: tests/dropin/size.sh tests/dropin/gen_multi.sh $(HEADER)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash tests/dropin/size.sh %s %s\n' '$(DROPIN)/size.d' '$(CC)' > $@
	chmod +x $@
TEST_BINS += $(DROPIN)/matrix $(DROPIN)/size
TEST_CMDS += $(DROPIN)/matrix $(DROPIN)/size

# The code-size figures of docs/PERFORMANCE.md, with gcc and clang.
.PHONY: bench-size
bench-size:
	@bash tests/dropin/size.sh $(BUILD)/bench/size-gcc gcc; bash tests/dropin/size.sh $(BUILD)/bench/size-clang clang
	@bash bench/compile_cost.sh 5
