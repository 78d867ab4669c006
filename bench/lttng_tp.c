/* lttng_tp.c -- LTTng-UST probes for bench/lttng_tp.h and the loop that the
 * benchmark measures with them (scope_cost_lttng, built from scope_cost.c with
 * -DBENCH_LTTNG; see bench/lttng_bench.sh).
 *
 * The loop has the shape of bench/loops.c: one begin and one end per
 * iteration around the same empty body. With no session enabling the events,
 * each tracepoint is a load and a not-taken branch on the tracepoint's state;
 * with one, each calls the probe, which reserves space in the per-CPU ring
 * buffer, takes a timestamp and writes the event.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"

#include "bench.h"

void lttng_scope_loop(uint64_t n);
int lttng_tp_enabled(void);

/* The site id and name the begin/end pair records (scopeprof's PROFILE_SCOPE
 * in loops.c records its site id, whose name is a string literal). */
static const char lttng_site_name[] = "bench_scope";
#define LTTNG_SITE_ID 1u

void lttng_scope_loop(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        lttng_ust_tracepoint(scopeprof_bench, begin, LTTNG_SITE_ID, lttng_site_name);
        BENCH_BODY(i);
        lttng_ust_tracepoint(scopeprof_bench, end, LTTNG_SITE_ID);
    }
}

/* 1 when a session has enabled both events in this process, else 0. */
int lttng_tp_enabled(void) {
    return lttng_ust_tracepoint_enabled(scopeprof_bench, begin) &&
                   lttng_ust_tracepoint_enabled(scopeprof_bench, end)
               ? 1
               : 0;
}
