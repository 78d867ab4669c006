/* report.h -- what the picture commands (html.c: `scopeprof html`, and
 * `scopeprof flame`) use of cli.c's aggregation, so that the table and the
 * stacks are computed in one place for every command. */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include <stdio.h>

#ifndef SCOPEPROF_AGGREGATION
#define SCOPEPROF_AGGREGATION
#endif
#include "read.h"
#include "scopeprof.h"

/* Called with every events callback of every file read (file: its index in
 * files[]), before the aggregation sees them. */
typedef void (*sp_tap_fn)(void *ctx, int file, const sp_reader *r, const sp_thread *t,
                          const sp_event *ev, uint32_t n);

/* Read files[0..nfiles) into *out (initialised here; the caller frees it
 * with scopeprof_agg_free), as `scopeprof table` does (folded == 0: one row
 * per name) or `scopeprof stacks` (folded != 0: one row per stack, its key
 * the folded stack). Problems are reported on err as those commands report
 * them. footer (unless NULL) gets what `table` prints below the table
 * (peak memory, unknown frees). Returns the exit status (SP_EXIT_OK or SP_EXIT_INPUT), and in *usable
 * the number of files that could be read at least in part. */
#define SP_FOLDED_PER_THREAD 2 /* folded, each stack under a frame naming its thread */
int sp_aggregate(char **files, int nfiles, int folded, sp_tap_fn tap, void *tap_ctx,
                 scopeprof_agg *out, FILE *footer, int *usable, FILE *err);

/* The commands (html.c); options as parsed by cli.c. output NULL: write to
 * out, named `name` in messages. */
int sp_cmd_html(char **files, int nfiles, const char *output, const char *name, long limit, FILE *out,
                FILE *err);
int sp_cmd_flame(char **files, int nfiles, int per_thread, const char *output, const char *name, FILE *out,
                 FILE *err);

#endif
