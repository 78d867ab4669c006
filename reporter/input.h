/* input.h -- the one place that reads an input file: every command goes
 * through it. The format sniffer: what an input holds is told from its
 * content, not its name (a .sprof file, Chrome trace JSON, or either of them
 * gzip-compressed), from a file, standard input or memory, and the input is
 * handed to its reader (read.h, chrome.h; gz.h inflates). */
#ifndef SP_INPUT_H
#define SP_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "read.h"

/* Content detection: 1 if the first non-space byte of `head` is '{' or '['. */
int sp_is_chrome(const void *head, size_t n);

/* Read an input of any format (path "-": standard input) or a buffer
 * (.sprof or Chrome JSON): statuses and messages as sp_read_file. */
int sp_read_any(const char *path, const sp_callbacks *cb, sp_result *res);
int sp_read_any_mem(const void *data, size_t n, const sp_callbacks *cb, sp_result *res);

/* Whether `path` can be read twice, for a command that makes two passes
 * (html, --steps): not standard input ("-"), nor a pipe, a socket or a
 * character device (`<(cat x.sprof)`, a FIFO), whose data the first pass
 * takes (issue 25: html's flame graph and timeline came out empty). */
int sp_input_rereadable(const char *path);

/* What an input read as it is lacks, said on err, exit status unchanged: a
 * .sprof file read to its end without the END record its writer closes it
 * with (the process never got to write it: kill -9, _exit, a crash with
 * SCOPEPROF_SIGNALS=0, still running, a full disk), whose numbers lack what
 * the process still held; GPU records that paired with no scope, whose GPU
 * time is left out; records that end before they start; a JSON input's
 * begin and end events without their other half, left out; what a JSON
 * input lost or had repaired (sp_result.notes). */
void sp_warn_incomplete(const char *path, const sp_result *res, FILE *err);

#endif
