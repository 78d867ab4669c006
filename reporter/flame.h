/* flame.h -- flame graphs as SVG, and the XML/HTML text escaping that the
 * HTML report shares (docs/REPORTER.md, "scopeprof flame" and "html").
 *
 * A flame graph is built from folded stacks ("outer;inner;leaf" and a value,
 * the rows of the stacks command): frames with the same ancestry merge,
 * each frame is as wide as the sum of the values below it, siblings are in
 * name order (as flamegraph.pl draws them), the root at the bottom. */
#ifndef SP_FLAME_H
#define SP_FLAME_H

#include <stdint.h>

#include "buf.h"

/* Text for an XML or HTML text node or attribute value: & < > " ' as
 * entities, control characters and bytes that are not valid UTF-8 as U+FFFD
 * (XML 1.0 allows no control characters, not even as references). */
void sp_out_xml(sp_out *o, const char *s);

typedef struct sp_flame sp_flame;

/* An empty graph whose bottom frame is named `root` ("all", a thread's name). */
sp_flame *sp_flame_new(const char *root);
/* Add value (ns, > 0; others are ignored) to the stack `folded`: frames
 * separated by ';'. Returns 0, or -1 when out of memory. */
int sp_flame_add(sp_flame *f, const char *folded, int64_t value);
/* A differential graph (sp_flame_set_diff first): frames as wide as their
 * time in NEW (value), coloured by the change from their time in BASE
 * (base), which is added here too. A frame of BASE only has no width and is
 * not drawn. */
void sp_flame_set_diff(sp_flame *f);
int sp_flame_add_diff(sp_flame *f, const char *folded, int64_t value, int64_t base);
/* The root's value: the graph's time. */
int64_t sp_flame_total(const sp_flame *f);
/* Frames drawn (those at least 0.5 px wide), after sp_flame_svg. */
uint32_t sp_flame_drawn(const sp_flame *f);
/* Write the graph as an <svg> element `width` px wide, with a "Reset zoom"
 * control. standalone: a whole SVG file (XML declaration, namespace, its own
 * style, a Search control and the script, flame.js) rather than an element
 * inside an HTML page, whose script (report.js, with flame.js) drives it. */
void sp_flame_svg(sp_flame *f, sp_out *o, int width, int standalone, const char *title);
void sp_flame_free(sp_flame *f);

#endif
