/* lttng_tp.h -- the LTTng-UST tracepoint provider of the benchmark
 * (provider "scopeprof_bench", events "begin" and "end").
 *
 * The events carry what scopeprof records for a scope: the site id (a 32-bit
 * integer) and, at begin, the address of the site's name (not the string: a
 * scopeprof scope does not copy its name either). LTTng adds its own
 * timestamp and event header to each of the two events; the depth is implied
 * by the begin/end nesting. Written for LTTng-UST 2.13's API
 * (LTTNG_UST_TRACEPOINT_EVENT, lttng_ust_field_*); bench/lttng_tp.c builds
 * the probes and the measured loop.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER scopeprof_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(SCOPEPROF_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SCOPEPROF_BENCH_LTTNG_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    scopeprof_bench, begin,
    LTTNG_UST_TP_ARGS(uint32_t, site, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, site, site)
        lttng_ust_field_integer_hex(uintptr_t, name, (uintptr_t)name)))

LTTNG_UST_TRACEPOINT_EVENT(
    scopeprof_bench, end,
    LTTNG_UST_TP_ARGS(uint32_t, site),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint32_t, site, site)))

#endif /* SCOPEPROF_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
