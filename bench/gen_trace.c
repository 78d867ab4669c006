/* gen_trace.c -- write a trace file of N scopes for the reporter benchmark.
 *
 *   SCOPEPROF_OUTPUT=/tmp/t.sprof SCOPEPROF_SUMMARY=0 gen_trace N [THREADS]
 *
 * Each iteration records a small training-step-like tree of 4 scopes
 * (step > forward, step > backward > grad) spread over 8 step names (step_0..step_7), so the
 * reporter sees nesting, several rows and, with THREADS > 1, several threads.
 * The file is written by scopeprof itself (streaming past its buffer budget,
 * then at exit), so it is exactly what a profiled program produces.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include "bench.h"

/* forward and backward > grad: the children of every step. noinline keeps
 * them real calls, as in a program. */
__attribute__((noinline)) static void forward(uint64_t i) {
    PROFILE_SCOPE("forward");
    BENCH_BODY(i);
}

__attribute__((noinline)) static void backward(uint64_t i) {
    PROFILE_SCOPE("backward");
    {
        PROFILE_SCOPE("grad");
        BENCH_BODY(i);
    }
}

/* 4 scopes per call. PROFILE_SCOPE takes a string literal (its site is a
 * static initialised with it), so each of the 8 step names gets its own
 * PROFILE_SCOPE through a switch: "step_0" ... "step_7". The macro puts one
 * scope per expansion: scopeprof names its variables after __LINE__. */
static void one_step(uint64_t i) {
    switch (i & 7) {
#define STEP_CASE(k)                                                                               \
    case k: {                                                                                      \
        PROFILE_SCOPE("step_" #k);                                                                 \
        forward(i);                                                                                \
        backward(i);                                                                               \
        break;                                                                                     \
    }
        STEP_CASE(0)
        STEP_CASE(1)
        STEP_CASE(2)
        STEP_CASE(3)
        STEP_CASE(4)
        STEP_CASE(5)
        STEP_CASE(6)
        STEP_CASE(7)
#undef STEP_CASE
    }
}

static void *worker(void *p) {
    uint64_t steps = *(const uint64_t *)p;
    for (uint64_t i = 0; i < steps; i++) one_step(i);
    return NULL;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? bench_parse_count(argv[1]) : 0;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (n < 4 || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: gen_trace SCOPES [THREADS]   (SCOPES >= 4, e.g. 10M)\n");
        return 2;
    }
    uint64_t steps = n / 4 / (uint64_t)threads;
    pthread_t th[64];
    for (int k = 0; k < threads; k++)
        if (pthread_create(&th[k], NULL, worker, &steps) != 0) {
            fprintf(stderr, "gen_trace: pthread_create failed\n");
            return 1;
        }
    for (int k = 0; k < threads; k++) pthread_join(th[k], NULL);
    printf("%llu\n", (unsigned long long)(steps * 4 * (uint64_t)threads));
    return 0;
}
