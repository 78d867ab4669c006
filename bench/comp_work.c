/* comp_work.c -- the workloads of bench/compensation.c, built twice: with
 * -DCOMP_VARIANT=plain (no PROFILE_ENABLE: the scopes vanish) and with
 * -DCOMP_VARIANT=prof -DPROFILE_ENABLE, so that one process runs both,
 * interleaved, and a loaded machine slows both alike.
 *   parent: ~50 ms of its own work in 10^6 pieces, each followed by a call
 *           of child (~75 ns): the issue's program
 *   top -> 20000 x mid (own work, 8 x leaf, 4 x tiny), leaf (own work, 2 x
 *           tiny): scopes of ~10 ns to ~1 us at depth 0 to 3 */
#include "scopeprof.h"

#include "comp_work.h"

static uint64_t sink;

/* A dependent chain of multiply-adds: work the compiler can neither remove
 * nor fold, about 1.3 ns an iteration here. */
static inline uint64_t work(uint64_t x, int n) {
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) void COMP(child)(void) {
    PROFILE_SCOPE("child");
    sink = work(sink, comp_iters_child);
}

__attribute__((noinline)) void COMP(parent)(void) {
    PROFILE_SCOPE("parent");
    for (int i = 0; i < COMP_ISSUE_CALLS; i++) {
        sink = work(sink, comp_iters_parent);
        COMP(child)();
    }
}

__attribute__((noinline)) void COMP(tiny)(void) {
    PROFILE_SCOPE("tiny");
    sink = work(sink, comp_iters_tiny);
}

__attribute__((noinline)) void COMP(leaf)(void) {
    PROFILE_SCOPE("leaf");
    sink = work(sink, comp_iters_leaf);
    COMP(tiny)();
    COMP(tiny)();
}

__attribute__((noinline)) void COMP(mid)(void) {
    PROFILE_SCOPE("mid");
    sink = work(sink, comp_iters_mid);
    for (int i = 0; i < 8; i++) COMP(leaf)();
    for (int i = 0; i < 4; i++) COMP(tiny)();
}

__attribute__((noinline)) void COMP(top)(void) {
    PROFILE_SCOPE("top");
    for (int i = 0; i < COMP_NESTED_MIDS; i++) COMP(mid)();
}
