/* driver.c -- bench/lz4_shares.sh's program: compresses a file with LZ4's
 * HC compressor (level 9 by default) and decompresses it, REPS times, and
 * prints its own timing of each phase, so that the profiled build's table
 * can be set against the time the program takes without the profiler.
 *
 *   driver FILE [REPS [LEVEL]]
 */
#define _POSIX_C_SOURCE 200809L
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lz4.h"
#include "lz4hc.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    PROFILE_SCOPE("main");
    FILE *f;
    long n;
    char *src, *dst, *back;
    int reps, level, bound, csize = 0, r;
    double tc = 0, td = 0, t0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [REPS [LEVEL]]\n", argv[0]);
        return 2;
    }
    reps = argc > 2 ? atoi(argv[2]) : 3;
    level = argc > 3 ? atoi(argv[3]) : 9;
    f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || n > 1L << 30 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
        return 2;
    }
    src = malloc((size_t)n);
    bound = LZ4_compressBound((int)n);
    dst = malloc((size_t)bound);
    back = malloc((size_t)n);
    if (!src || !dst || !back || fread(src, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
        return 2;
    }
    fclose(f);
    for (r = 0; r < reps; r++) {
        t0 = now();
        {
            PROFILE_SCOPE("compress");
            csize = LZ4_compress_HC(src, dst, (int)n, bound, level);
        }
        tc += now() - t0;
        t0 = now();
        {
            PROFILE_SCOPE("decompress");
            if (LZ4_decompress_safe(dst, back, csize, (int)n) != n) return 3;
        }
        td += now() - t0;
        if (memcmp(src, back, (size_t)n) != 0) return 4;
    }
    printf("%ld bytes -> %d; compress %.6f s, decompress %.6f s (%d reps)\n", n, csize, tc, td, reps);
    free(src);
    free(dst);
    free(back);
    return 0;
}
