/* liblife_dl.c -- a plugin that records, for the dlclose tests: prog_life
 * dlopens it, calls life_lib_work(n) and dlcloses it. Its scope names must
 * survive the unload (the registry copies them). */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>

static volatile unsigned lib_sink;

__attribute__((visibility("default"))) void life_lib_work(int n) {
    for (int i = 0; i < n; i++) {
        PROFILE_SCOPE("lib_scope");
        lib_sink++;
    }
    for (int k = 0; k < 3; k++) { /* run-time names, interned by the registry */
        char name[32];
        snprintf(name, sizeof name, "lib_dyn_%d", k);
        PROFILE_SCOPE_DYN(name);
        lib_sink++;
    }
}
