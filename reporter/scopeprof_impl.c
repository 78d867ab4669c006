/* scopeprof_impl.c -- the reporter's one copy of the header's implementation:
 * the aggregation, the table and the trace-format codec (SCOPEPROF_AGGREGATION
 * without PROFILE_ENABLE compiles only those). Every other reporter file gets
 * the declarations. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"
