/* libsp_dl.so: a plugin multi_main (and dlclose_prog) opens with dlopen. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

void dl_func(void);
void dl_func(void) { PROFILE_SCOPE("dl_lib_scope"); }
