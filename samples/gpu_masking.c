/* gpu_masking.c -- a "masking" step done two ways, to show in the table where
 * the time goes (plain C + the HIP runtime; no kernels needed):
 *
 *   round trip:  copy the batch host -> device, mask it there, copy it back,
 *                every step (what code that keeps its data on the host does);
 *   on device:   the batch stays on the device; each step only masks it.
 *
 * The mask is a padding mask: in each row of the batch, the positions past
 * the row's length are zeroed (hipMemset on the row's tail). Each phase is a
 * PROFILE_GPU_SCOPE (GPU time of the work on the stream) inside CPU scopes.
 *
 *   make build/samples/gpu_masking && build/samples/gpu_masking
 *
 * Without a GPU (or without the runtime) the profiler prints one line and
 * records CPU times only; hipMalloc then fails, the program says so, runs
 * the same masking on the CPU so the table still shows a profile, and exits 0. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 256, COLS = 4096, STEPS = 20 };

static int row_len(int r) { return COLS / 4 + (int)((unsigned)r * 2654435761u % (3 * COLS / 4)); }

/* Zero each row past its length: the mask, on host memory. */
static void mask_host(float *x) {
    PROFILE_FUNCTION();
    for (int r = 0; r < ROWS; r++)
        memset(x + (size_t)r * COLS + row_len(r), 0, (size_t)(COLS - row_len(r)) * sizeof *x);
}

/* The same on device memory: one hipMemset per row tail. */
static hipError_t mask_device(float *d) {
    for (int r = 0; r < ROWS; r++) {
        hipError_t e = hipMemset(d + (size_t)r * COLS + row_len(r), 0,
                                 (size_t)(COLS - row_len(r)) * sizeof *d);
        if (e != hipSuccess) return e;
    }
    return hipSuccess;
}

static void fill(float *x) {
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++) x[i] = (float)(i % 97) * 0.5f;
}

static double checksum(const float *x) {
    double s = 0;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++) s += x[i];
    return s;
}

#define TRY(call)                                                                   \
    do {                                                                            \
        hipError_t e_ = (call);                                                     \
        if (e_ != hipSuccess) {                                                     \
            fprintf(stderr, "gpu_masking: %s failed: %s\n", #call, hipGetErrorString(e_)); \
            goto fail;                                                              \
        }                                                                           \
    } while (0)

int main(void) {
    size_t bytes = (size_t)ROWS * COLS * sizeof(float);
    float *host = malloc(bytes), *dev = NULL;
    hipStream_t stream = 0; /* the null stream: hipMemcpy and hipMemset run there */
    if (!host) return 1;
    fill(host);
    hipError_t e;
    {
        /* A GPU scope: the first one starts the profiler's GPU side, so a
         * missing device is reported here, in one line. */
        PROFILE_GPU_SCOPE("setup", stream);
        e = hipMalloc((void **)&dev, bytes);
    }
    if (e != hipSuccess) {
        /* No device (or no runtime): say so, and profile the CPU path. */
        fprintf(stderr, "gpu_masking: hipMalloc failed (%s): no usable GPU; running the "
                        "masking on the CPU only\n", hipGetErrorString(e));
        for (int s = 0; s < STEPS; s++) {
            PROFILE_SCOPE("step_cpu_only");
            fill(host);
            mask_host(host);
        }
        printf("checksum (CPU): %.1f\n", checksum(host));
        free(host);
        return 0;
    }
    /* 1: the batch lives on the host; every step is a round trip. */
    for (int s = 0; s < STEPS; s++) {
        PROFILE_SCOPE("step_round_trip");
        {
            PROFILE_GPU_SCOPE("copy_to_device", stream);
            TRY(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
        }
        {
            PROFILE_GPU_SCOPE("mask_on_device", stream);
            TRY(mask_device(dev));
        }
        {
            PROFILE_GPU_SCOPE("copy_to_host", stream);
            TRY(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost));
        }
    }
    /* 2: the batch stays on the device; one copy in, one copy out. */
    {
        PROFILE_GPU_SCOPE("copy_to_device_once", stream);
        TRY(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
    }
    for (int s = 0; s < STEPS; s++) {
        PROFILE_SCOPE("step_on_device");
        PROFILE_GPU_SCOPE("mask_on_device", stream);
        TRY(mask_device(dev));
    }
    {
        PROFILE_GPU_SCOPE("copy_to_host_once", stream);
        TRY(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost));
    }
    printf("checksum (GPU): %.1f\n", checksum(host));
    hipFree(dev);
    free(host);
    return 0;
fail:
    hipFree(dev);
    free(host);
    return 1;
}
