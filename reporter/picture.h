/* picture.h -- the picture commands, `scopeprof html` (html.c) and
 * `scopeprof flame` (flame_cmd.c), and what they share: the flame graph of
 * the stacks rows, a file's name for titles, and writing the finished
 * picture, which each builds in memory. docs/REPORTER.md. */
#ifndef SP_PICTURE_H
#define SP_PICTURE_H

#include <stdio.h>

#ifndef SCOPEPROF_AGGREGATION
#define SCOPEPROF_AGGREGATION
#endif
#include "buf.h"
#include "flame.h"
#include "scopeprof.h"

/* The commands; options as parsed by cli.c. output NULL: write to out,
 * named `name` in messages. */
int sp_cmd_html(char **files, int nfiles, const char *output, const char *name, long limit, FILE *out,
                FILE *err);
/* html --diff: BASE (files[0..n[0])) against NEW (the n[1] after), as
 * `scopeprof diff` compares them (diff.h). */
struct sp_diff_opts;
int sp_cmd_html_diff(char **files, const int n[2], const struct sp_diff_opts *o, const char *output,
                     const char *name, FILE *out, FILE *err);
int sp_cmd_flame(char **files, int nfiles, int per_thread, const char *output, const char *name, FILE *out,
                 FILE *err);

/* The flame graph of the stacks rows (key: folded stack, self CPU time);
 * NULL when out of memory. */
sp_flame *sp_picture_flame(const scopeprof_agg *a);
/* The last component of a path (after its last '/'), for titles. */
const char *sp_base_name(const char *p);
/* Write what was built in memory to `path` ("-" or NULL: out, which is
 * `name`: cli.c opens -o OUT itself, output.h). Only called once the inputs
 * were read, so a bad input never empties an old report. Returns the
 * exit status. */
int sp_picture_write(const char *path, const char *name, const sp_out *m, FILE *out, FILE *err);

#endif
