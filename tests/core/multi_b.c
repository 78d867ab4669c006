/* Second translation unit of multi_main: same header, no extra definitions. */
#include "scopeprof.h"

void b_func(void);
void b_func(void) { PROFILE_SCOPE("tu_b_scope"); }
