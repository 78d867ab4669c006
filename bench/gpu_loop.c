/* gpu_loop.c -- the CPU side of PROFILE_GPU_SCOPE, for scope_cost's "gpu"
 * case (build/bench/scope_cost_gpu, bench/rules.mk).
 *
 * Built with -DPROFILE_ENABLE -DPROFILE_HIP -D__HIP_PLATFORM_AMD__ against the
 * real HIP headers (Debian libamdhip64-dev) and linked with the HIP test double
 * tests/gpu/hip_double.c instead of libamdhip64: no GPU is needed and none is
 * used. The double reports one device, so the scopes are really GPU scopes:
 * each one takes two events from the thread's pool and records them on the
 * stream (hipEventRecord at open and at close), and every 64 closes the
 * profiler polls what has completed (hipEventQuery, two hipEventElapsedTime per
 * scope). gpu_check() tells the driver whether that happened.
 *
 * What is measured is scopeprof's own CPU work around the runtime calls plus
 * the double's: each double function takes a mutex and counts the call, and
 * its hipEventRecord reads CLOCK_MONOTONIC. A real hipEventRecord enqueues a
 * command into the runtime's queue and costs far more (microseconds, not
 * nanoseconds): the figure is scopeprof's overhead, not what a GPU scope
 * costs against the real runtime.
 */
#include <stdint.h>
#include <stdio.h>

#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include "bench.h"
#include "hip_double.h"

void gpu_setup(void);
void gpu_scope_loop(uint64_t n);
void gpu_flush(void);
int gpu_check(char *why, size_t len, uint64_t scopes);

/* One device, device 0 current (the double's defaults, set explicitly). */
void gpu_setup(void) { double_set_devices(1, 0); }

/* n GPU scopes on user stream 1, with the loop body of every other case. No
 * work is enqueued: the stream's simulated clock stands still, and every
 * event is complete at once (the double's default "instant GPU"). */
void gpu_scope_loop(uint64_t n) {
    hipStream_t s = double_stream(1);
    for (uint64_t i = 0; i < n; i++) {
        PROFILE_GPU_SCOPE("bench_gpu", s);
        BENCH_BODY(i);
    }
}

/* Untimed, between repetitions: writes (or aggregates and recycles) the
 * calling thread's events; GPU scopes are resolved and their records taken. */
void gpu_flush(void) { PROFILE_FLUSH(); }

/* 1 if GPU timing was on and `scopes` GPU scopes recorded two events each;
 * else 0 and why. */
int gpu_check(char *why, size_t len, uint64_t scopes) {
    long rec = double_calls(D_EventRecord) - double_counter(DC_ANCHOR_RECORDS);
    if (scopeprof__gm.status != 1) {
        snprintf(why, len, "GPU timing is off in scopeprof (status %d): scopes recorded their CPU "
                           "side only", scopeprof__gm.status);
        return 0;
    }
    if ((uint64_t)rec != 2 * scopes) {
        snprintf(why, len, "%ld hipEventRecord calls on the user stream for %llu GPU scopes "
                           "(expected 2 per scope)", rec, (unsigned long long)scopes);
        return 0;
    }
    snprintf(why, len, "GPU timing on: %ld hipEventRecord on the stream (2 per scope), %ld "
                       "hipEventQuery, %ld hipEventElapsedTime, %ld events created, %ld clock "
                       "anchors",
             rec, double_calls(D_EventQuery), double_calls(D_EventElapsedTime),
             double_calls(D_EventCreateWithFlags), double_counter(DC_ANCHOR_RECORDS));
    return 1;
}
