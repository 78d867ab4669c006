/* diff_prog.c -- the program tests/reporter/diff.sh builds twice to check
 * `scopeprof diff`: three functions doing the same amount of arithmetic,
 * ten times each; -DCOMPUTE_WORK=2 makes compute() do twice its work (the
 * "new build" that regressed). */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#ifndef COMPUTE_WORK
#define COMPUTE_WORK 1
#endif
enum { N = 3000000 }; /* about 3 ms of arithmetic per call here */

static volatile double sink;

static void spin(long n) {
    double x = 0;
    for (long i = 0; i < n; i++) x += (double)i * 0.5;
    sink = x;
}

static void parse_input(void) {
    PROFILE_FUNCTION();
    spin(N);
}

static void compute(void) {
    PROFILE_FUNCTION();
    spin((long)COMPUTE_WORK * N);
}

static void write_output(void) {
    PROFILE_FUNCTION();
    spin(N);
}

int main(void) {
    PROFILE_FUNCTION();
    for (int i = 0; i < 10; i++) {
        parse_input();
        compute();
        write_output();
    }
    return 0;
}
