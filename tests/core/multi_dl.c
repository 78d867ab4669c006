/* libsp_dl.so: a plugin multi_main (and dlclose_prog) opens with dlopen. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

void dl_func(void);
void dl_func(void) { PROFILE_SCOPE("dl_lib_scope"); }

/* The plugin's first call in multi_main: it closes a range the executable
 * began, before this module has read its clock choice. */
void dl_end(void);
void dl_end(void) { PROFILE_END(); }
