/* bench.h -- small helpers shared by the benchmarks in bench/.
 *
 * Everything here is static inline so each benchmark stays one file plus this
 * header; nothing in it touches scopeprof, so it can be included by the
 * translation units built without PROFILE_ENABLE (the floor) as well.
 */
#ifndef SCOPEPROF_BENCH_H
#define SCOPEPROF_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The work inside every measured scope: nothing, but the compiler has to
 * believe the loop counter is used, so the loop cannot be removed or folded.
 * An empty asm with an input costs no instruction. The same body is used by
 * the floor, the profiled loops and the disabled build, so that all of them
 * have the same loop shape. */
#define BENCH_BODY(i) __asm__ volatile("" : : "r"(i))

/* Make the compiler assume `p` (and all memory) is read here, so stores into
 * a buffer nobody reads cannot be deleted. */
static inline void bench_escape(const void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v in place). For an even n, the mean of the two
 * middle values. */
static inline double bench_median(double *v, int n) {
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Parse a positive count such as "10000000", "10M" or "100m"; 0 on error. */
static inline uint64_t bench_parse_count(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return 0;
    if (*end == 'k' || *end == 'K') v *= 1000ull, end++;
    else if (*end == 'm' || *end == 'M') v *= 1000000ull, end++;
    return *end ? 0 : (uint64_t)v;
}

#endif /* SCOPEPROF_BENCH_H */
