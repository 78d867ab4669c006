/* scopeprof_impl.c -- the one file of the reporter that compiles the
 * header's aggregation and table printer (scopeprof.h, stb style: the other
 * files include the header for its declarations, with SCOPEPROF_AGGREGATION
 * as before, and only a file that defines SCOPEPROF_IMPLEMENTATION as well
 * holds the code). Every program built from reporter/ sources links it. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"
