/* real_hip.c -- GPU scopes with the real HIP runtime on a machine without a
 * GPU. Built twice: linked with -lamdhip64 (real_hip), and not linked at all
 * (real_hip_dlopen: the header then finds libamdhip64.so with dlopen). Either
 * way the profiler must print one "no HIP device" line and keep the CPU
 * table. No HIP function is called here: without a device there is nothing
 * to launch, and the stream handle is only passed through. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>

static volatile double sink;

int main(void) {
    hipStream_t stream = 0; /* the null stream */
    for (int i = 0; i < 5; i++) {
        PROFILE_GPU_SCOPE("real_gpu", stream);
        PROFILE_SCOPE("cpu_work");
        for (int k = 0; k < 1000; k++) sink += k * 0.5;
    }
    return 0;
}
