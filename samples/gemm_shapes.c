/* gemm_shapes.c -- scopes with input shapes (PROFILE_SCOPE_SHAPE): a small
 * GEMM and a direct 2-D convolution, each run at a few sizes, as a model's
 * layers would. The time of a kernel depends on its sizes, so the table
 * grouped by shape (SCOPEPROF_GROUP_BY=shape, or `scopeprof table
 * --group-by shape`) gives each size its row, as PyTorch's
 * key_averages(group_by_input_shape=True) does for aten::mm or
 * aten::conv2d. README, "Input shapes", shows its output.
 *
 *   make build/samples/gemm_shapes
 *   SCOPEPROF_GROUP_BY=shape build/samples/gemm_shapes
 */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>
#include <stdlib.h>

/* C[m x n] = A[m x k] * B[k x n], naive: the sizes are what the scope records. */
static void gemm(int m, int n, int k, const float *a, const float *b, float *c) {
    PROFILE_SCOPE_SHAPE("gemm", m, n, k);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
            c[i * n + j] = s;
        }
}

/* out[n][kk][h][w] = sum over c, r, s of in[n][c][h+r][w+s] * wt[kk][c][r][s]
 * (no padding, stride 1). Three inputs as PyTorch lists conv2d's: the input,
 * the weight, and the bias (none: a scalar, []). */
static void conv2d(int n, int c, int h, int w, int kk, int r, int s, const float *in, const float *wt,
                   float *out) {
    PROFILE_SCOPE_SHAPES("conv2d", PROFILE_DIMS(n, c, h, w), PROFILE_DIMS(kk, c, r, s), PROFILE_NO_DIMS);
    int oh = h - r + 1, ow = w - s + 1;
    for (int b = 0; b < n; b++)
        for (int o = 0; o < kk; o++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    float sum = 0;
                    for (int ci = 0; ci < c; ci++)
                        for (int dy = 0; dy < r; dy++)
                            for (int dx = 0; dx < s; dx++)
                                sum += in[((b * c + ci) * h + y + dy) * w + x + dx] *
                                       wt[((o * c + ci) * r + dy) * s + dx];
                    out[((b * kk + o) * oh + y) * ow + x] = sum;
                }
}

static float *filled(size_t n) {
    float *p = malloc(n * sizeof *p);
    if (!p) {
        perror("malloc");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = (float)(i % 7) * 0.25f;
    return p;
}

int main(void) {
    PROFILE_FUNCTION();
    enum { BIG = 256 * 256 };
    float *a = filled(BIG), *b = filled(BIG), *c = filled(BIG);
    float *in = filled(2 * 16 * 34 * 34), *wt = filled(32 * 16 * 3 * 3), *out = filled(2 * 32 * 32 * 32);
    /* Three GEMM sizes, called as often as a model's layers would call them. */
    static const int sizes[3][3] = {{64, 64, 64}, {128, 32, 256}, {256, 256, 16}};
    static const int calls[3] = {8, 4, 2};
    for (int step = 0; step < 2; step++) {
        PROFILE_SCOPE("step");
        for (int l = 0; l < 3; l++)
            for (int i = 0; i < calls[l]; i++) gemm(sizes[l][0], sizes[l][1], sizes[l][2], a, b, c);
        conv2d(2, 16, 34, 34, 32, 3, 3, in, wt, out);
        conv2d(1, 16, 18, 18, 16, 3, 3, in, wt, out);
    }
    printf("checksum %.1f\n", (double)(c[0] + c[BIG - 1] + out[0]));
    free(a), free(b), free(c), free(in), free(wt), free(out);
    return 0;
}
