/* scopeprof_impl.c -- the one file of the reporter that compiles the
 * header's aggregation and table printer (scopeprof.h, stb style: the other
 * files include the header for its declarations, with SCOPEPROF_AGGREGATION
 * as before, and only a file that defines SCOPEPROF_IMPLEMENTATION as well
 * holds the code). Every program built from reporter/ sources links it.
 * The reporter's one call of the header's internals is here too. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"

#include "aggregate.h"

/* For aggregate.c: the one rule of what was clamped (table.h). */
int sp_comp_clamped(const scopeprof_agg *a, const scopeprof_row *r) { return scopeprof__comp_clamped(a, r); }
