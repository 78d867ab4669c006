# `make install` (issue 16): install.sh installs into temporary prefixes
# (with PREFIX, and staged with DESTDIR), builds a program against the
# installed header with pkg-config and with CMake's find_package, runs it,
# reads its trace with the installed reporter, renders the man pages, and
# checks that `make uninstall` removes every file.
TEST_BINS += $(BUILD)/scopeprof
TEST_CMDS += tests/install/install.sh
