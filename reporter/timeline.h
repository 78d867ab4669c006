/* timeline.h -- the timeline of `scopeprof html`: every thread's scopes as
 * slices on lanes by depth, each file's steps (PROFILE_STEP) on a track of
 * their own, and its memory records as counter tracks (net bytes allocated
 * over time, per device), all on one time axis, drawn as SVG that the page's
 * script (report.js) zooms and pans. It sees the events through the
 * aggregation's tap (aggregate.h) while html.c counts the stacks. */
#ifndef SP_TIMELINE_H
#define SP_TIMELINE_H

#include <stdint.h>

#include "aggregate.h"
#include "buf.h"

typedef struct sp_timeline sp_timeline;

/* files: the names the tracks are labelled with (by their last component). */
sp_timeline *sp_timeline_new(char **files);
/* What sp_aggregate calls with each file's events and at each file's end. */
sp_tap sp_timeline_tap(sp_timeline *t);
/* One sentence on what is drawn and what was left out (slices beyond the
 * cap, nesting beyond the lanes), as HTML text. */
void sp_timeline_caption(const sp_timeline *t, sp_out *o);
/* The <svg class="timeline"> element, laid out `width` px wide. */
void sp_timeline_svg(sp_timeline *t, sp_out *o, int width);
int sp_timeline_oom(const sp_timeline *t);
void sp_timeline_free(sp_timeline *t);

#endif
