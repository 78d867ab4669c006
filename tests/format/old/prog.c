/* prog.c -- the program that recorded tests/format/old/v3.2.sprof with the
 * format 3.2 writer (commit 10f4e67); tests/format/old_format.sh says how to
 * record it again. Its shape is fixed (its times are not):
 *   main:   2 steps, each "step_body" { "parse" x3 { "token" x2 },
 *           "compute" { an allocation of 4096 bytes, "kernel" x2 }, the
 *           allocation's free }, then PROFILE_STEP (so "compute" holds
 *           4 Kb at its close, and "step_body" frees them itself)
 *   worker: "work" x4 { "sub" }, in a thread named "worker", run while main
 *           records its steps
 * Every scope spins a few microseconds, so that times are well above the
 * overhead compensation. Not built by the tests: only the fixture is read. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <stdlib.h>

static void spin(unsigned n) {
    for (volatile unsigned i = 0; i < n * 1000u; i++) {
    }
}

static void *worker(void *arg) {
    (void)arg;
    PROFILE_THREAD_NAME("worker");
    for (int i = 0; i < 4; i++) {
        PROFILE_SCOPE("work");
        spin(5);
        PROFILE_SCOPE("sub");
        spin(10);
    }
    return NULL;
}

int main(void) {
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    for (int s = 0; s < 2; s++) {
        {
            PROFILE_SCOPE("step_body");
            for (int i = 0; i < 3; i++) {
                PROFILE_SCOPE("parse");
                spin(2);
                for (int k = 0; k < 2; k++) {
                    PROFILE_SCOPE("token");
                    spin(3);
                }
            }
            void *p = malloc(4096);
            {
                PROFILE_SCOPE("compute");
                PROFILE_ALLOC(p, 4096);
                for (int k = 0; k < 2; k++) {
                    PROFILE_SCOPE("kernel");
                    spin(20);
                }
            }
            PROFILE_FREE(p);
            free(p);
        }
        PROFILE_STEP();
    }
    pthread_join(th, NULL);
    return 0;
}
