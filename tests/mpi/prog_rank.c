/* A program without MPI, for what issue 23 asks of any rank's process:
 *   prog_rank at REALTIME_NS   sleep until that Unix time (CLOCK_REALTIME,
 *                              ns), then record the scope "tick" (1 ms):
 *                              two processes on different clocks (a time
 *                              namespace) start it at the same instant,
 *                              which the reporter's realtime alignment must
 *                              show
 *   prog_rank work N           N scopes "work" (the shared-path case: each
 *                              process's file must hold all of its own)
 * The rank comes from the launcher's variable (OMPI_COMM_WORLD_RANK). */
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "at") == 0) {
        long long at = atoll(argv[2]);
        struct timespec t = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
        { PROFILE_SCOPE("before"); } /* the registry (and the file's clock) exist before the wait */
        while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &t, NULL) != 0) {}
        PROFILE_SCOPE("tick");
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "work") == 0) {
        int n = atoi(argv[2]);
        volatile double x = 0;
        for (int i = 0; i < n; i++) {
            PROFILE_SCOPE("work");
            x += i;
        }
        return x < 0;
    }
    fprintf(stderr, "usage: prog_rank at REALTIME_NS | work N\n");
    return 2;
}
