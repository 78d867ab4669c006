/* Scopes with input shapes (issue 26), run by test_record.c. Known counts:
 *   gemm [[64, 64, 64]] 5, [[128, 32, 16]] 3, [[8, 8, 8]] 2, [[1, 2, 3]]
 *   20000 (its 80-byte records cross chunk boundaries), and 4 plain gemm
 *   scopes ([] when grouped by shape); conv2d [[128, 64, 56, 56], [64, 64,
 *   3, 3], []] 2; neg [[3, -1]] 1 (a size_t and a negative int); wide 1, with
 *   9 inputs of 16 sizes, of which the 7 that fit 127 numbers are kept; main 1. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stddef.h>
#include <stdio.h>

static volatile unsigned sink;
static void spin(int n) {
    for (int i = 0; i < n; i++) sink += (unsigned)i;
}

static void gemm(int m, int n, int k) {
    PROFILE_SCOPE_SHAPE("gemm", m, n, k);
    spin(m + n + k);
}

int main(void) {
    PROFILE_FUNCTION();
    for (int r = 0; r < 5; r++) gemm(64, 64, 64);
    for (int r = 0; r < 3; r++) gemm(128, 32, 16);
    for (int r = 0; r < 2; r++) gemm(8, 8, 8);
    for (int r = 0; r < 4; r++) {
        PROFILE_SCOPE("gemm");
        spin(10);
    }
    for (int r = 0; r < 2; r++) {
        PROFILE_SCOPE_SHAPES("conv2d", PROFILE_DIMS(128, 64, 56, 56), PROFILE_DIMS(64, 64, 3, 3), PROFILE_NO_DIMS);
        spin(100);
    }
    {
        size_t three = 3;
        int minus = -1;
        PROFILE_SCOPE_SHAPE("neg", three, minus);
    }
    {
#define SIXTEEN PROFILE_DIMS(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
        PROFILE_SCOPE_SHAPES("wide", SIXTEEN, SIXTEEN, SIXTEEN, SIXTEEN, SIXTEEN, SIXTEEN, SIXTEEN, SIXTEEN, SIXTEEN);
    }
    for (int r = 0; r < 20000; r++) gemm(1, 2, 3);
    printf("done\n");
    return 0;
}
