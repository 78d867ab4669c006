/* output.h -- where a command's -o OUT goes, written so that no run destroys
 * data (docs/REPORTER.md, "Output files").
 *
 * A regular file is written to a temporary file beside it and renamed into
 * place only when the command succeeded: a failed or interrupted run leaves
 * an existing OUT as it was, and OUT can never be truncated before the inputs
 * are read. An OUT that is one of the inputs (the same file, by device and
 * inode, whatever path names it) is refused. What is not a regular file (a
 * terminal, a pipe, /dev/null, /dev/stdout) is written directly. An OUT
 * whose name ends in .gz is gzip-compressed (gz.h's sp_output_open). */
#ifndef SP_OUTPUT_H
#define SP_OUTPUT_H

#include <stdio.h>

typedef struct sp_dest {
    const char *path; /* OUT as given, for messages */
    char *final;      /* where the temporary file is renamed to */
    char *tmp;        /* the temporary file; NULL when written directly */
    FILE *f;
    int existed;      /* OUT was there before: a failed write leaves it unchanged */
} sp_dest;

/* Open OUT for writing, after checking it against the inputs (path "-":
 * standard input, not checked). Returns 0, or after a message on err the
 * exit status: SP_EXIT_USAGE for an output that is an input, SP_EXIT_OUTPUT
 * when it cannot be created. */
int sp_dest_open(sp_dest *o, const char *path, char *const *inputs, int ninputs, FILE *err);

/* Finish: with keep set, flush and move the result into place; without it,
 * discard the result (OUT stays as it was). Returns 0, or -1 after saying on
 * err (unless NULL: the caller said it already) that OUT could not be
 * written. */
int sp_dest_close(sp_dest *o, int keep, FILE *err);

/* Say on err that the output `name` could not be written, and why (errno e;
 * 0: a write failed before, its cause not kept). */
void sp_output_failed(FILE *err, const char *name, int e);

#endif
