/* exit.h -- the reporter's exit statuses (docs/REPORTER.md, "Exit status and
 * bad input"), and the rule that turns a reader's status into one. */
#ifndef SP_EXIT_H
#define SP_EXIT_H

#include "read.h"

/* Exit statuses (docs/REPORTER.md). */
enum {
    SP_EXIT_OK = 0,      /* also: a truncated file, reported on `err` */
    SP_EXIT_INPUT = 1,   /* a file unreadable, foreign or corrupt */
    SP_EXIT_USAGE = 2,   /* bad command line */
    SP_EXIT_OUTPUT = 3,  /* cannot write the output */
    SP_EXIT_REGRESSED = 4 /* `diff --threshold`: a row got slower beyond it */
};

/* The exit status after a file read with status st, when it was `a` before:
 * a truncated file is still read up to its last whole chunk. */
static inline int sp_exit_worst(int a, int st) {
    return (st == SP_OK || st == SP_TRUNCATED) ? a : SP_EXIT_INPUT;
}

#endif
