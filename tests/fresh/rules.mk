# Build checks (issue 16): fresh_make.sh runs `make` as on a machine without
# the HIP development package and zlib's headers, into a build folder of its own.
TEST_CMDS += tests/fresh/fresh_make.sh
