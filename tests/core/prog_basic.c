/* A profiled program with a fixed scope structure, run by test_record.c.
 * Every count below is known in advance:
 *   step 5, forward 5, matmul 10, backward 5 (PROFILE_BEGIN/END),
 *   early_return 6, loop_body 4, goto_scope 3, dyn_0 2, dyn_1 1.
 * Scopes left by return, break and goto must still close (and restore the
 * depth, which the test reads back from the trace file). It exits with 3 so
 * the test can check that profiling leaves the exit status alone. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>

static volatile unsigned sink;
static void spin(int n) {
    for (int i = 0; i < n; i++) sink += (unsigned)i;
}

static int early_return(int i) {
    PROFILE_SCOPE("early_return");
    spin(100);
    if (i % 2 == 0) return i; /* half of the calls leave here */
    spin(100);
    return -i;
}

static void loop_break(void) {
    for (int i = 0; i < 10; i++) {
        PROFILE_SCOPE("loop_body");
        spin(50);
        if (i == 3) break; /* iterations 0..3: four calls */
    }
}

static void with_goto(void) {
    {
        PROFILE_SCOPE("goto_scope");
        spin(50);
        goto out;
    }
out:
    spin(10);
}

static void step(void) {
    PROFILE_FUNCTION(); /* "step" */
    {
        PROFILE_SCOPE("forward");
        spin(2000);
        { PROFILE_SCOPE("matmul"); spin(1000); }
        { PROFILE_SCOPE("matmul"); spin(1000); }
    }
    PROFILE_BEGIN("backward");
    spin(3000);
    PROFILE_END();
}

int main(void) {
    for (int i = 0; i < 5; i++) step();
    for (int i = 0; i < 6; i++) early_return(i);
    loop_break();
    for (int i = 0; i < 3; i++) with_goto();
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "dyn_%d", i % 2); /* dyn_0, dyn_1, dyn_0 */
        PROFILE_SCOPE_DYN(name);
        spin(10);
    }
    return 3;
}
