/* loops.c -- the measured loops that use the scopeprof macros.
 *
 * This one file is compiled three times (bench/rules.mk):
 *   -DPROFILE_ENABLE -DLOOP_VARIANT=enabled   the macros record
 *   -DLOOP_VARIANT=disabled                   the macros are compiled out
 *   -DLOOP_VARIANT=nomacro -DBENCH_NO_MACRO   the macros are not written at all
 * so the functions are enabled_scope_loop, disabled_scope_loop, ... and can be
 * linked into one program. bench/disasm_check.sh compares the machine code of
 * the disabled and the nomacro objects: they must be the same.
 *
 * The floor the enabled loop is compared against lives in scope_cost.c, which
 * is built without PROFILE_ENABLE.
 */
#include <stdint.h>

#include "scopeprof.h"

#include "bench.h"

#ifndef LOOP_VARIANT
#error "build with -DLOOP_VARIANT=enabled|disabled|nomacro"
#endif

#define LOOP_CAT2(a, b) a##b
#define LOOP_CAT(a, b) LOOP_CAT2(a, b)
#define LOOP_FN(name) LOOP_CAT(LOOP_CAT(LOOP_VARIANT, _), name)

#ifdef BENCH_NO_MACRO
#define LOOP_SCOPE(name) ((void)0)
#define LOOP_SCOPE_DYN(str) ((void)0)
#else
#define LOOP_SCOPE(name) PROFILE_SCOPE(name)
#define LOOP_SCOPE_DYN(str) PROFILE_SCOPE_DYN(str)
#endif

/* Declarations so -Wmissing-prototypes style checks stay quiet and the
 * functions have external linkage (the benchmark calls them). */
void LOOP_FN(scope_loop)(uint64_t n);
void LOOP_FN(scope_loop_dyn)(uint64_t n, const char *name);

/* n scopes with a literal name: one begin and one end per iteration. */
void LOOP_FN(scope_loop)(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        LOOP_SCOPE("bench_scope");
        BENCH_BODY(i);
    }
}

/* n scopes whose name is a run-time string (interned on every call). */
void LOOP_FN(scope_loop_dyn)(uint64_t n, const char *name) {
    for (uint64_t i = 0; i < n; i++) {
        LOOP_SCOPE_DYN(name);
        BENCH_BODY(i);
    }
#ifdef BENCH_NO_MACRO
    (void)name; /* the disabled PROFILE_SCOPE_DYN uses it in sizeof only */
#endif
}

#ifdef PROFILE_ENABLE
/* Helpers for the driver, which is built without PROFILE_ENABLE and so cannot
 * use the macros itself. */
void enabled_flush(void);
int enabled_uses_tsc(void);

/* Write (or, with SCOPEPROF_OUTPUT=none, aggregate and recycle) everything the
 * calling thread recorded: run between repetitions, outside the timed part. */
void enabled_flush(void) { PROFILE_FLUSH(); }

/* 1 when scopeprof reads the TSC, 0 when it falls back to clock_gettime; -1
 * before the first scope. */
int enabled_uses_tsc(void) { return scopeprof__use_tsc; }
#endif
