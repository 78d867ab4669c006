/* For known_bugs.c: "#define PROFILE_ENABLE" with no value must turn
 * profiling on, as the header's comment says (the public constants below are
 * defined only when it is on). */
#define PROFILE_ENABLE
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

int empty_define_enables(void);
int empty_define_enables(void) {
#ifdef SCOPEPROF_FILE_MAGIC
    return 1;
#else
    return 0;
#endif
}
