/* cli.h -- the scopeprof command line, callable from tests. */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "exit.h" /* what sp_main returns */

/* Run `scopeprof argv[1]...`: results to `out`, diagnostics to `err`. */
int sp_main(int argc, char **argv, FILE *out, FILE *err);

/* For the fuzzer and the tests: the table of one trace file held in memory,
 * grouped by `group` (as --group-by, or "folded" for the stacks command's
 * rows), printed to `out` as text then JSON (or folded stacks). Returns the
 * reader's status (SP_OK...), or -1 for a bad group. */
int sp_report_mem(const void *data, size_t n, const char *group, FILE *out);

#endif
