/* Every macro of the public API, for check_disabled.sh. Lines ending in
 * "macro" are deleted to make the reference source: compiled without
 * PROFILE_ENABLE (or with PROFILE_ENABLE=0) both must give the same .text. */
#include "scopeprof.h"

int work(int n);
int work(int n) {
    PROFILE_FUNCTION(); /* macro */
    PROFILE_THREAD_NAME("worker"); /* macro */
    int s = 0;
    for (int i = 0; i < n; i++) {
        PROFILE_SCOPE("loop"); /* macro */
        PROFILE_SCOPE_DYN(n > 3 ? "big" : "small"); /* macro */
        PROFILE_SCOPE_SHAPE("gemm", n, i, 16); /* macro */
        PROFILE_SCOPE_SHAPES("conv", PROFILE_DIMS(n, i), PROFILE_NO_DIMS); /* macro */
        s += i * i;
    }
    PROFILE_BEGIN("range"); /* macro */
    s ^= n;
    PROFILE_END(); /* macro */
    {
        PROFILE_GPU_SCOPE("gpu", 0); /* macro */
        s += 7;
    }
    PROFILE_FLUSH(); /* macro */
    return s;
}
