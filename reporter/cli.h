/* cli.h -- the scopeprof command line, callable from tests. */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stdio.h>

/* Exit statuses (docs/REPORTER.md). */
enum {
    SP_EXIT_OK = 0,      /* also: a truncated file, reported on `err` */
    SP_EXIT_INPUT = 1,   /* a file unreadable, foreign or corrupt */
    SP_EXIT_USAGE = 2,   /* bad command line */
    SP_EXIT_OUTPUT = 3   /* cannot write the output */
};

/* Run `scopeprof argv[1]...`: results to `out`, diagnostics to `err`. */
int sp_main(int argc, char **argv, FILE *out, FILE *err);

#endif
