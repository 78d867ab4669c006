/* compensation.c -- how close the table's times come to the program's own
 * times without the profiler (overhead compensation, docs/DESIGN.md).
 *
 *   compensation issue|nested [REPS]
 *
 * Runs REPS times, interleaved: the plain build of the workload
 * (bench/comp_work.c), timed with its own clock, then the profiled build,
 * recorded. Prints the truth, summed over the runs, as lines
 * "truth NAME TOTAL_NS SELF_NS"; bench/compensation.sh reads the trace with
 * `scopeprof table --format csv`, raw and compensated, and compares.
 *
 * Truth: a function's total is its number of calls times its time per call
 * in a loop of its own (`parent` and `top`: timed around the call); a self
 * time is the total less the children's totals. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "comp_work.h"

volatile int comp_iters_child = 52, comp_iters_parent = 36, comp_iters_mid = 200,
             comp_iters_leaf = 24, comp_iters_tiny = 3;

/* ns of n calls of f. */
static double loop(void (*f)(void), int n) {
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < n; i++) f();
    return (double)(bench_now_ns() - t0);
}

int main(int argc, char **argv) {
    int issue = argc > 1 && strcmp(argv[1], "issue") == 0;
    int nested = argc > 1 && strcmp(argv[1], "nested") == 0;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if ((!issue && !nested) || reps < 1) {
        fprintf(stderr, "usage: %s issue|nested [REPS]\n", argv[0]);
        return 2;
    }
    double c = 0, p = 0, t = 0, l = 0, m = 0, tp = 0;
    const double nt = COMP_NESTED_MIDS * (4 + 8 * 2), nl = COMP_NESTED_MIDS * 8, nm = COMP_NESTED_MIDS;
    for (int r = 0; r < reps; r++) {
        if (issue) {
            c += loop(plain_child, COMP_ISSUE_CALLS);
            p += loop(plain_parent, 1);
            prof_parent();
        } else {
            t += loop(plain_tiny, (int)nt);
            l += loop(plain_leaf, (int)nl);
            m += loop(plain_mid, (int)nm);
            tp += loop(plain_top, 1);
            prof_top();
        }
    }
    if (issue) {
        printf("truth child %.0f %.0f\n", c, c);
        printf("truth parent %.0f %.0f\n", p, p - c);
    } else {
        printf("truth tiny %.0f %.0f\n", t, t);
        printf("truth leaf %.0f %.0f\n", l, l - t * 2 * nl / nt);
        printf("truth mid %.0f %.0f\n", m, m - l - t * 4 * nm / nt);
        printf("truth top %.0f %.0f\n", tp, tp - m);
    }
    return 0;
}
