/* report.h -- the picture commands (html.c: `scopeprof html`, and
 * `scopeprof flame`). */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include <stdio.h>

/* The commands (html.c); options as parsed by cli.c. output NULL: write to
 * out, named `name` in messages. */
int sp_cmd_html(char **files, int nfiles, const char *output, const char *name, long limit, FILE *out,
                FILE *err);
int sp_cmd_flame(char **files, int nfiles, int per_thread, const char *output, const char *name, FILE *out,
                 FILE *err);

#endif
