// hip_streams.cpp -- a HIP C++ program as users write one: kernels on
// several streams inside PROFILE_GPU_SCOPE, built with hipcc -Wall -Wextra
// -Werror (tests/gpu/user_builds.sh). Without a device it profiles a CPU
// version of the same work and exits 3, so the test can tell its own exit
// status from the profiler's.
#include <hip/hip_runtime.h>

#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>
#include <stdlib.h>

__global__ void scale(float *x, float a, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) x[i] *= a;
}

static void scale_cpu(float *x, float a, int n) {
    for (int i = 0; i < n; i++) x[i] *= a;
}

int main() {
    const int n = 1 << 16, nstreams = 3;
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
        // No device: the same steps on the CPU, still profiled (the GPU
        // scopes record their CPU side).
        float *x = (float *)calloc((size_t)n, sizeof *x);
        if (!x) return 1;
        for (int step = 0; step < 4; step++) {
            PROFILE_SCOPE("step");
            for (int s = 0; s < nstreams; s++) {
                PROFILE_GPU_SCOPE("scale", (hipStream_t)0);
                scale_cpu(x, 1.5f, n);
            }
        }
        free(x);
        printf("no device: CPU steps done\n");
        return 3;
    }
    hipStream_t streams[nstreams];
    float *x[nstreams];
    for (int s = 0; s < nstreams; s++) {
        if (hipStreamCreateWithFlags(&streams[s], hipStreamNonBlocking) != hipSuccess) return 1;
        if (hipMalloc((void **)&x[s], n * sizeof(float)) != hipSuccess) return 1;
    }
    for (int step = 0; step < 4; step++) {
        PROFILE_SCOPE("step");
        for (int s = 0; s < nstreams; s++) {
            PROFILE_GPU_SCOPE("scale", streams[s]);
            hipLaunchKernelGGL(scale, dim3((n + 255) / 256), dim3(256), 0, streams[s], x[s], 1.5f, n);
        }
    }
    for (int s = 0; s < nstreams; s++) {
        if (hipStreamSynchronize(streams[s]) != hipSuccess) return 1;
        hipFree(x[s]);
        hipStreamDestroy(streams[s]);
    }
    printf("GPU steps done\n");
    return 0;
}
