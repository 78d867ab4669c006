/* write_cost.c -- the per-event cost of writing chunks (issue 15), in a form
 * callgrind can count: a loop of scopes far past the budget, so that nearly
 * every event is converted, aggregated, encoded, checksummed and written.
 *
 * Usage: write_cost MODE N
 *   flat    N scopes at depth 0, one site
 *   nested  N scopes in a tree of depth 4 over 5 sites
 *   mem     nested, plus a PROFILE_ALLOC/FREE pair every 8 scopes and a
 *           PROFILE_STEP every 1000
 *   shaped  N leaf scopes with input shapes, PROFILE_SCOPE_SHAPE("gemm", m,
 *           32, 16) over 4 values of m: 80-byte records (issue 26)
 *   floor   N times the floor of a scope: two rdtsc and a 16-byte store
 *           into a ring of 4096 slots, no profiling (bench/cpu_split.sh)
 * Run with SCOPEPROF_BUFFER_MB=1 SCOPEPROF_SUMMARY=0 and under
 * `valgrind --tool=callgrind`; the write side's cost per event is the
 * inclusive count of scopeprof__write_span divided by N (see
 * docs/PERFORMANCE.md). Without valgrind, it prints the loop's wall time.
 */
#include "bench.h"
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>
#include <x86intrin.h>

static char cell[64] __attribute__((unused)); /* only PROFILE_ALLOC reads it: not at all when compiled out */

__attribute__((noinline)) static void leaf(uint64_t i) {
    PROFILE_SCOPE("leaf");
    BENCH_BODY(i);
}

/* 1 + 2 + 4 + 8 = 15 scopes per call, depths 0-3 (leaves at depth 3). */
__attribute__((noinline)) static void tree(uint64_t i, int mem) {
    PROFILE_SCOPE("root");
    for (int a = 0; a < 2; a++) {
        PROFILE_SCOPE("mid");
        if (mem && (i & 7) == 0) PROFILE_ALLOC(cell, 64);
        {
            PROFILE_SCOPE("inner_a");
            leaf(i);
            leaf(i + 1);
        }
        {
            PROFILE_SCOPE("inner_b");
            leaf(i);
            leaf(i + 1);
        }
        if (mem && (i & 7) == 0) PROFILE_FREE(cell);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "flat";
    uint64_t n = argc > 2 ? bench_parse_count(argv[2]) : 20000000u;
    int mem = strcmp(mode, "mem") == 0;
    uint64_t t0 = bench_now_ns();
    if (strcmp(mode, "flat") == 0) {
        for (uint64_t i = 0; i < n; i++) {
            PROFILE_SCOPE("x");
            BENCH_BODY(i);
        }
    } else if (strcmp(mode, "floor") == 0) {
        static struct { uint64_t start; uint32_t dur, key; } ring[4096];
        for (uint64_t i = 0; i < n; i++) {
            uint64_t s = __rdtsc();
            BENCH_BODY(i);
            uint64_t e = __rdtsc();
            ring[i & 4095u].start = s, ring[i & 4095u].dur = (uint32_t)(e - s), ring[i & 4095u].key = 1;
        }
        bench_escape(ring);
    } else if (strcmp(mode, "shaped") == 0) {
        for (uint64_t i = 0; i < n; i++) {
            PROFILE_SCOPE_SHAPE("gemm", 64 << (i & 3), 32, 16);
            BENCH_BODY(i);
        }
    } else if (strcmp(mode, "nested") == 0 || mem) {
        for (uint64_t i = 0; i < n; i += 15) {
            tree(i, mem);
            if (mem && i % 15000 == 0) PROFILE_STEP();
        }
    } else {
        fprintf(stderr, "usage: write_cost flat|nested|mem|shaped|floor [N]\n");
        return 2;
    }
    uint64_t t1 = bench_now_ns();
    printf("%s %llu scopes: %.2f ns/scope\n", mode, (unsigned long long)n,
           (double)(t1 - t0) / (double)n);
    return 0;
}
