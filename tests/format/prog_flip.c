/* prog_flip.c -- a small real trace for the bit-flip sweep (test_format.c):
 * every chunk type the CPU writer makes (SITES, THREAD, EVENTS in several
 * chunks, MEMORY, STEPS, END), two threads, rank 3 in the header.
 *   main:   3 steps, each "step" { "inner" x4, an allocation }, a flush
 *           after each step (one EVENTS chunk per step)
 *   worker: "work" x10 */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <stdio.h>

static unsigned sink;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 10; i++) {
        PROFILE_SCOPE("work");
        __atomic_add_fetch(&sink, 1u, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void) {
    static char buf[64];
    PROFILE_SET_RANK(3);
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    for (int s = 0; s < 3; s++) {
        {
            PROFILE_SCOPE("step");
            for (int i = 0; i < 4; i++) {
                PROFILE_SCOPE("inner");
                __atomic_add_fetch(&sink, 1u, __ATOMIC_RELAXED);
            }
            PROFILE_ALLOC(buf, 64u * (unsigned)(s + 1));
            PROFILE_FREE(buf);
        }
        PROFILE_STEP();
        PROFILE_FLUSH();
    }
    printf("done\n");
    return 0;
}
