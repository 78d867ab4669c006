# Drop-in tests (issue 14), compile-heavy, nothing timed:
#   matrix   the header in strict builds: gcc/clang x C standards x C/C++ x
#            included first/after system headers x enabled/disabled, strict
#            warning sets as errors (tests/dropin/matrix.sh: why these)
#   size     the one-implementation model on a 21-file program linked with no
#            flag: code per file, the implementation once, the link error
#            that names SCOPEPROF_IMPLEMENTATION (tests/dropin/size.sh)
#   order    (issue 21) the header before `#define _GNU_SOURCE` and mremap,
#            and after system headers in strict C99 (tests/dropin/order.sh)
#   real_sqlite  (issue 21) SQLite's amalgamation compiled with the header
#            first: Debian's source tarball, downloaded once into
#            $(DROPIN)/cache (tests/dropin/real_sqlite.sh)
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
$(DROPIN)/order: tests/dropin/order.sh tests/dropin/gnu_after.c tests/dropin/system_first.c $(HEADER)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash tests/dropin/order.sh include\n' > $@
	chmod +x $@
$(DROPIN)/real_sqlite: tests/dropin/real_sqlite.sh tests/dropin/sqlite_source.sh $(HEADER)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash tests/dropin/real_sqlite.sh %s include\n' '$(DROPIN)/cache' > $@
	chmod +x $@
TEST_BINS += $(DROPIN)/matrix $(DROPIN)/size $(DROPIN)/order $(DROPIN)/real_sqlite
TEST_CMDS += $(DROPIN)/matrix $(DROPIN)/size $(DROPIN)/order $(DROPIN)/real_sqlite

# The code-size figures of docs/PERFORMANCE.md, with gcc and clang.
.PHONY: bench-size
bench-size:
	@bash tests/dropin/size.sh $(BUILD)/bench/size-gcc gcc; bash tests/dropin/size.sh $(BUILD)/bench/size-clang clang
	@bash bench/compile_cost.sh 5
