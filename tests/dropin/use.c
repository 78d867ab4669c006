/* A user's file, as the drop-in matrix compiles it (tests/dropin/matrix.sh):
 * every macro, where a declaration may stand, with declarations after the
 * declaring macros (C90 rules: both builds must accept them the same way).
 * -DDROPIN_AFTER includes system headers first, as most projects do;
 * -DDROPIN_DEPRECATED then deprecates C library functions for the
 * project's own code, as Redis does, and bans some by macro, as git's
 * banned.h does. */
#ifdef DROPIN_AFTER
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#endif
#ifdef DROPIN_DEPRECATED
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls" /* the project's own lines */
char *strcpy(char *, const char *) __attribute__((deprecated("use redis_strlcpy")));
void *malloc(size_t) __attribute__((deprecated));
void free(void *) __attribute__((deprecated));
#pragma GCC diagnostic pop
#define strcpy(x, y) sorry_strcpy_is_a_banned_function
#define strcat(x, y) sorry_strcat_is_a_banned_function
#define sprintf(...) sorry_sprintf_is_a_banned_function
#endif
#include "scopeprof.h"
#ifndef DROPIN_AFTER
#include <stdio.h>
#include <stdlib.h>
#endif

int dropin_work(int n, const char *tag);
int dropin_work(int n, const char *tag) {
    PROFILE_FUNCTION();
    int s = 0;
    int i;
    for (i = 0; i < n; i++) {
        PROFILE_SCOPE("loop");
        PROFILE_SCOPE_DYN(n > 3 ? "big" : "small");
        int sq = i * i;
        s += sq;
    }
    {
#ifdef PROFILE_HIP
        hipStream_t stream = 0; /* used by the macro only */
#else
        int stream = 0;
#endif
        PROFILE_GPU_SCOPE("gpu", stream);
        int t = s + 1;
        s = t;
    }
#ifdef SCOPEPROF__SHAPES /* variadic macros: C99, C++11 */
    {
        /* Sizes of several types, read only by the macros. */
        size_t m = 64;
        int k = 3;
        unsigned char b = 2;
        long long big = 1LL << 40;
        PROFILE_SCOPE_SHAPE("gemm", m, k, b);
        PROFILE_SCOPE_SHAPES("conv2d", PROFILE_DIMS(m, k, 56, 56), PROFILE_NO_DIMS, PROFILE_DIMS(big));
        int v = s;
        s = v + 1;
    }
#endif
    {
        PROFILE_SCOPE_DYN(tag);
        PROFILE_SCOPE("a"); PROFILE_SCOPE("b"); /* two on one line */
        int u = s;
        s = u ^ n;
    }
    {
        /* Variables that only the macros use: used in both builds. */
        const char *thread = "worker";
        int skip = 0, wait = 1, warm = 1, active = 2, repeat = 1, rank = 0;
        int *p = &s;
        size_t bytes = sizeof s;
        unsigned long handle = 4096; /* an integer device pointer (CUDA's CUdeviceptr) */
        PROFILE_BEGIN("range"); /* names of sites are constants */
        s ^= n;
        PROFILE_END();
        PROFILE_THREAD_NAME(thread);
        PROFILE_SCHEDULE(skip, wait, warm, active, repeat);
        PROFILE_SET_RANK(rank);
        PROFILE_ALLOC(p, bytes);
        PROFILE_FREE(p);
        PROFILE_GPU_ALLOC(p, bytes, rank);
        PROFILE_GPU_FREE(p, rank);
        PROFILE_GPU_ALLOC(handle, bytes, rank);
        PROFILE_GPU_FREE(handle, rank);
#ifdef __cplusplus
        { /* C casts it to const void * (-Wcast-qual): C++ only */
            volatile int *vp = p;
            PROFILE_ALLOC(vp, bytes);
            PROFILE_FREE(vp);
        }
#endif
    }
#ifdef SCOPEPROF_WRAP_MALLOC
    free(realloc(malloc(1), 2)); /* wrapped calls nest */
#endif
    PROFILE_STEP();
    PROFILE_FLUSH();
    return s;
}

int main(void) {
    printf("%d\n", dropin_work(5, "dyn"));
    return 0;
}
