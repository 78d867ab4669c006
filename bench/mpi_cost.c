/* What MPI support adds to a job's MPI_Init and MPI_Finalize (docs/MPI.md,
 * "Cost"): the profiler's own part of each, timed on every rank, the
 * slowest rank reported by rank 0 as "init_us FINALIZE_us".
 *   mpirun -np P mpi_cost ROWS
 * MPI starts through PMPI_Init (not the wrapper), then the wrapper's work is
 * timed alone: scopeprof__mpi_start (the communicator, the rank, the first
 * clock offsets); each rank records ROWS distinct scope names (the job
 * table's rows); then scopeprof__mpi_finish (the second offsets, the flush,
 * the rows gathered on rank 0, the table printed: stderr to /dev/null to
 * leave the terminal out). The registry exists before, its clock rate
 * measured (its first scope's and first write's costs are every program's,
 * not MPI's). */
#include <mpi.h>
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 10;
    PMPI_Init(&argc, &argv);
    { PROFILE_SCOPE("start"); }
    /* The first write measures the TSC's rate over 20 ms since start-up
     * (clock.h): a program that runs longer never waits for it. */
    PROFILE_FLUSH();
    PMPI_Barrier(MPI_COMM_WORLD); /* every rank starts the timed part together */
    double t0 = now_us();
    scopeprof__mpi_start();
    double t1 = now_us();
    for (int i = 0; i < rows; i++) {
        char name[32];
        snprintf(name, sizeof name, "row%d", i);
        PROFILE_SCOPE_DYN(name);
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    double t2 = now_us();
    scopeprof__mpi_finish();
    double t3 = now_us();
    double mine[2] = {t1 - t0, t3 - t2}, worst[2];
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.0f %.0f\n", worst[0], worst[1]);
    PMPI_Finalize();
    return 0;
}
