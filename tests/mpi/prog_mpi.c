/* A user's MPI program, as issue 23 tried it: mpi.h first, then the header
 * with the implementation (so the header takes part in MPI_Init and
 * MPI_Finalize), `mpicc -DPROFILE_ENABLE`. Every rank computes and then
 * sums with MPI_Allreduce, STEPS times; one rank (argv[1], default the last
 * one) does SLOW times the work (default 3): the straggler. argv: [straggler [slow
 * [steps [work_us [what]]]]]; `what` holds "steps": a PROFILE_STEP after
 * each step (a schedule's cycles, with SCOPEPROF_SCHEDULE), "fork": after
 * MPI_Finalize each rank forks a child that records a scope "child" (its
 * file keeps the rank and its parent's clock), "abort<R>": rank R calls
 * MPI_Abort (code 7) after the last step. Prints each step's last
 * MPI_Allreduce end, as this rank's CLOCK_MONOTONIC, on stdout
 * ("allreduce_end RANK NS"), for the alignment test. */
#include <mpi.h>
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The work of a step: a sleep of `us` microseconds, not a busy loop, so that
 * ranks that outnumber the cores (mpirun --oversubscribe on a 2-core CI
 * machine, with Open MPI's waiting ranks spinning) still take the time they
 * were given and the straggler's 3x shows as 3x. */
static double work_for(long us) {
    struct timespec d = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&d, &d) != 0) {}
    return (double)us;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int straggler = argc > 1 ? atoi(argv[1]) : size - 1;
    int slow = argc > 2 ? atoi(argv[2]) : 3;
    int steps = argc > 3 ? atoi(argv[3]) : 10;
    long work = argc > 4 ? atol(argv[4]) : 5000;
    const char *what = argc > 5 ? argv[5] : "", *ab = strstr(what, "abort");
    int abort_rank = ab ? atoi(ab + 5) : -1;
    double sum = 0;
    struct timespec end = {0, 0};
    for (int s = 0; s < steps; s++) {
        PROFILE_SCOPE("step");
        double x;
        {
            PROFILE_SCOPE("compute");
            x = work_for(rank == straggler ? work * slow : work);
        }
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        clock_gettime(CLOCK_MONOTONIC, &end);
        if (strstr(what, "steps")) PROFILE_STEP();
    }
    if (rank == abort_rank) MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("allreduce_end %d %lld\n", rank, (long long)end.tv_sec * 1000000000LL + end.tv_nsec);
    fflush(stdout);
    MPI_Finalize();
    if (strstr(what, "fork")) {
        pid_t child = fork();
        if (child == 0) {
            PROFILE_SCOPE("child");
            return 0;
        }
        if (child > 0) waitpid(child, NULL, 0);
    }
    return sum < 0;
}
