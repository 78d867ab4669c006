// cuda_streams.cu -- the CUDA twin of hip_streams.cpp, built with
// nvcc -Werror all-warnings (tests/gpu/user_builds.sh).
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <cuda_runtime.h>
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
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        float *x = (float *)calloc((size_t)n, sizeof *x);
        if (!x) return 1;
        for (int step = 0; step < 4; step++) {
            PROFILE_SCOPE("step");
            for (int s = 0; s < nstreams; s++) {
                PROFILE_GPU_SCOPE("scale", (cudaStream_t)0);
                scale_cpu(x, 1.5f, n);
            }
        }
        free(x);
        printf("no device: CPU steps done\n");
        return 3;
    }
    cudaStream_t streams[nstreams];
    float *x[nstreams];
    for (int s = 0; s < nstreams; s++) {
        if (cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking) != cudaSuccess) return 1;
        if (cudaMalloc((void **)&x[s], n * sizeof(float)) != cudaSuccess) return 1;
    }
    for (int step = 0; step < 4; step++) {
        PROFILE_SCOPE("step");
        for (int s = 0; s < nstreams; s++) {
            PROFILE_GPU_SCOPE("scale", streams[s]);
            scale<<<(n + 255) / 256, 256, 0, streams[s]>>>(x[s], 1.5f, n);
        }
    }
    for (int s = 0; s < nstreams; s++) {
        if (cudaStreamSynchronize(streams[s]) != cudaSuccess) return 1;
        cudaFree(x[s]);
        cudaStreamDestroy(streams[s]);
    }
    printf("GPU steps done\n");
    return 0;
}
