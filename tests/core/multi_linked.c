/* libsp_linked.so: a shared library linked into multi_main at build time. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

void linked_func(void);
void linked_func(void) { PROFILE_SCOPE("linked_lib_scope"); }
