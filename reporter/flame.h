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

sp_flame *sp_flame_new(void);
/* Add value (ns, > 0; others are ignored) to the stack `folded`: frames
 * separated by ';'. Returns 0, or -1 when out of memory. */
int sp_flame_add(sp_flame *f, const char *folded, int64_t value);
/* Frames drawn (those at least 0.5 px wide), after sp_flame_svg. */
uint32_t sp_flame_drawn(const sp_flame *f);
/* Write the graph as an <svg> element `width` px wide. standalone: a whole
 * SVG file (XML declaration, namespace, its own style) rather than an element
 * inside an HTML page. */
void sp_flame_svg(sp_flame *f, sp_out *o, int width, int standalone, const char *title);
void sp_flame_free(sp_flame *f);

#endif
