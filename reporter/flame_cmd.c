/* flame_cmd.c -- `scopeprof flame`: the stacks of all files (aggregate.c, as
 * `scopeprof stacks` counts them) drawn as one SVG flame graph (flame.c).
 * docs/REPORTER.md. */
#define SCOPEPROF_AGGREGATION
#include <stdio.h>

#include "aggregate.h"
#include "buf.h"
#include "exit.h"
#include "flame.h"
#include "picture.h"

int sp_cmd_flame(char **files, int nfiles, int per_thread, const char *output, const char *name, FILE *out,
                 FILE *err) {
    scopeprof_agg a;
    int usable;
    int rc = sp_aggregate(files, nfiles, per_thread ? SP_FOLDED_PER_THREAD : 1, NULL, &a, NULL,
                          &usable, err);
    if (!usable) {
        scopeprof_agg_free(&a);
        return rc;
    }
    sp_flame *f = sp_picture_flame(&a);
    scopeprof_agg_free(&a);
    sp_out m;
    sp_out_init(&m, NULL);
    if (!f) m.err = 1;
    else {
        char title[300];
        snprintf(title, sizeof title, "Flame graph: %s%s (self CPU time)", sp_base_name(files[0]),
                 nfiles > 1 ? " and more" : "");
        sp_flame_svg(f, &m, 1200, 1, title);
    }
    sp_flame_free(f);
    int wr = sp_picture_write(output, name, &m, out, err);
    sp_out_free(&m);
    return wr != SP_EXIT_OK ? wr : rc;
}
