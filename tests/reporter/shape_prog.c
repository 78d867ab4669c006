/* shape_prog.c -- scopes with input shapes (PROFILE_SCOPE_SHAPE, _SHAPES),
 * recorded for real (shapes.sh): per step, on the main thread,
 *   gemm [[64, 32, 16]] (twice), [[128, 32, 16]], [[8, 8, 8]] in 3 steps of
 *   6, gemm without shapes, conv2d [[n, 64, 56, 56], [64, 64, 3, 3], [], [-1]]
 *   holding a gemm [[64, 32, 16]] and an allocation (freed after it: conv2d's
 *   CPU Mem is 4 Kb a call), and a worker thread's
 *   gemm [[64, 32, 16]] (the same row as main's);
 * with PROFILE_STEP between the steps. Counts per row (6 steps):
 *   gemm [[64, 32, 16]] 6*2 + 6 + 6 = 24, [[128, 32, 16]] 6, [[8, 8, 8]] 3,
 *   gemm [] 6, conv2d 6, ProfilerStep* 6, main 1, worker 1. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void gemm(int m, int n, int k) {
    PROFILE_SCOPE_SHAPE("gemm", m, n, k);
    for (int i = 0; i < m * n * k / 64; i++) sink += i * 0.5;
}

static void *worker(void *arg) {
    PROFILE_SCOPE("worker");
    for (long s = 0; s < (long)(size_t)arg; s++) gemm(64, 32, 16);
    return NULL;
}

int main(void) {
    PROFILE_FUNCTION();
    const int steps = 6;
    size_t batch = 128;
    long neg = -1;
    pthread_t th;
    if (pthread_create(&th, NULL, worker, (void *)(size_t)steps) != 0) return 1;
    for (int s = 0; s < steps; s++) {
        gemm(64, 32, 16);
        gemm(128, 32, 16);
        if (s % 2) gemm(8, 8, 8);
        gemm(64, 32, 16);
        {
            PROFILE_SCOPE("gemm");
            sink += 1;
        }
        void *p = malloc(4096);
        {
            PROFILE_SCOPE_SHAPES("conv2d", PROFILE_DIMS(batch, 64, 56, 56), PROFILE_DIMS(64, 64, 3, 3),
                                 PROFILE_NO_DIMS, PROFILE_DIMS(neg));
            PROFILE_ALLOC(p, 4096);
            gemm(64, 32, 16);
        }
        PROFILE_FREE(p);
        free(p);
        PROFILE_STEP();
    }
    pthread_join(th, NULL);
    printf("%g\n", sink);
    return 0;
}
