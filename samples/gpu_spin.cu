// gpu_spin.cu -- a kernel of known length, timed with PROFILE_GPU_SCOPE
// (CUDA backend). Needs an NVIDIA GPU; samples/gpu_check.sh builds, runs and
// checks it:
//   nvcc -O2 -DPROFILE_ENABLE -DPROFILE_CUDA -Iinclude samples/gpu_spin.cu -o build/gpu_spin
//
// The kernel spins on clock64() for a fixed number of SM cycles, so its
// length is cycles / clock rate. The program prints that expected length,
// then the profiler's exit table shows the measured GPU time of "spin"
// (GPU time avg) and the trace holds each interval. It also prints the CPU
// cost of one GPU scope around an empty region.
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                 \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "gpu_spin: %s: %s\n", #call, cudaGetErrorString(e_));   \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main(int argc, char **argv) {
    double target_ms = argc > 1 ? atof(argv[1]) : 20.0;
    int reps = 10;
    int dev = 0, khz = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    long long cycles = (long long)(target_ms * (double)khz); // kHz * ms = cycles
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    spin<<<1, 1, 0, s>>>(cycles / 10); // warm-up: module load, first launch
    CHECK(cudaStreamSynchronize(s));
    printf("clock rate: %d kHz; spin: %lld cycles; expected %.3f ms per kernel\n", khz, cycles,
           (double)cycles / (double)khz);
    for (int i = 0; i < reps; i++) {
        PROFILE_GPU_SCOPE("spin", s);
        spin<<<1, 1, 0, s>>>(cycles);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    // CPU cost of one GPU scope: an empty one (two event records, pool,
    // queue) against an empty loop. Every 64th close also polls the queue.
    const int n = 100000;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        PROFILE_GPU_SCOPE("empty_gpu_scope", s);
    }
    double t1 = now_s();
    for (int i = 0; i < n; i++) __asm__ volatile("" ::: "memory");
    double t2 = now_s();
    printf("CPU overhead of one GPU scope: %.3f us\n", ((t1 - t0) - (t2 - t1)) / n * 1e6);
    printf("expected_ms=%.6f\n", (double)cycles / (double)khz);
    return 0;
}
