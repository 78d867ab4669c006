/* The background writer's wake-up rules (buffers.h): when a recording
 * thread that queued a chunk wakes the writer (scopeprof__writer_wake_due),
 * when the writer, with nothing due, looks next (scopeprof__writer_next_look)
 * whether a poll's look writes (scopeprof__writer_look_due) and how much a
 * drain writes (scopeprof__drain_goes_on). While
 * chunks keep coming the writer polls (a look writes what is queued once it
 * fills a batch) and no thread wakes it for a drain that is due: a wake
 * from the switching thread put the writer's drain in the self time of the
 * scope open there. A writer asleep till its timed flush is woken as soon
 * as work is due, and a polling one when the spare chunks run low or a
 * quarter of the budget is queued. The rules are checked on a state made by
 * hand, as the chunk lock's holder sees it; no thread runs.
 * Built with profiling on: the writer exists only there. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

static const size_t MiB = (size_t)1 << 20;
static const size_t CHUNK = SCOPEPROF__CHUNK_BYTES; /* a chunk as the budget counts it: its pages */

/* A running writer with a budget of `budget` bytes, every spare chunk
 * there, nothing queued. */
static scopeprof__state *writer_state(size_t budget) {
    scopeprof__state *g = (scopeprof__state *)calloc(1, sizeof *g);
    assert_non_null(g);
    g->wr.state = SCOPEPROF__WRITER_RUNNING;
    g->cfg.budget = budget;
    g->buf.nspare = SCOPEPROF__SPARE;
    g->buf.bytes = SCOPEPROF__SPARE * CHUNK;
    return g;
}

static void test_polling_writer_not_woken_for_a_drain(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    g->buf.queued = SCOPEPROF__DRAIN_AT; /* a drain is due */
    assert_true(scopeprof__writer_has_work(g));
    assert_false(scopeprof__writer_wake_due(g)); /* it polls: it will see it */
    g->buf.queued = g->cfg.budget / 4 - 1; /* just under a quarter of the budget */
    assert_false(scopeprof__writer_wake_due(g));
    g->buf.queued = 0;
    g->buf.nspare = SCOPEPROF__SPARE / 2 - 1; /* a refill is due: under half left */
    assert_true(scopeprof__writer_has_work(g));
    assert_false(scopeprof__writer_wake_due(g)); /* a poll refills it in time */
    g->buf.nspare = SCOPEPROF__SPARE_LOW; /* a quarter left: still no wake */
    assert_true(scopeprof__writer_has_work(g));
    assert_false(scopeprof__writer_wake_due(g));
    free(g);
}

static void test_polling_writer_woken_when_far_behind(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    g->buf.queued = 16 * MiB; /* a quarter of the budget */
    assert_true(scopeprof__writer_wake_due(g));
    g->buf.queued = 0;
    g->buf.nspare = SCOPEPROF__SPARE_LOW - 1; /* under a quarter of the spare chunks */
    assert_true(scopeprof__writer_wake_due(g));
    g->buf.bytes = g->cfg.budget; /* ... but no room in the budget to refill */
    assert_false(scopeprof__writer_wake_due(g));
    free(g);

    g = writer_state(1 * MiB); /* SCOPEPROF_BUFFER_MB=1: a quarter is 256 KiB */
    g->buf.queued = MiB / 4 - 1;
    assert_false(scopeprof__writer_wake_due(g));
    g->buf.queued = MiB / 4;
    assert_true(scopeprof__writer_wake_due(g));
    free(g);
}

static void test_asleep_writer_woken_when_work_is_due(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    g->wr.asleep = 1;
    assert_false(scopeprof__writer_wake_due(g)); /* nothing due */
    g->buf.queued = SCOPEPROF__DRAIN_AT - 1;
    assert_false(scopeprof__writer_wake_due(g));
    g->buf.queued = SCOPEPROF__DRAIN_AT;
    assert_true(scopeprof__writer_wake_due(g));
    g->buf.queued = 0;
    g->buf.nspare = SCOPEPROF__SPARE / 2 - 1; /* a refill, with room */
    assert_true(scopeprof__writer_wake_due(g));
    g->buf.bytes = g->cfg.budget;
    assert_false(scopeprof__writer_wake_due(g));
    free(g);
}

static void test_no_writer_never_woken(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    g->wr.asleep = 1;
    g->buf.queued = 32 * MiB;
    g->buf.nspare = 0;
    assert_true(scopeprof__writer_wake_due(g));
    g->wr.state = SCOPEPROF__WRITER_NEVER; /* SCOPEPROF_WRITER=0, or it could not start */
    assert_false(scopeprof__writer_wake_due(g));
    g->wr.state = SCOPEPROF__WRITER_NONE; /* not started yet */
    assert_false(scopeprof__writer_wake_due(g));
    free(g);
}

static void test_next_look(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    const uint64_t now = 5000000000u, flush_at = now + 90000000u; /* the timed flush in 90 ms */
    /* Nothing queued since the last look: asleep till the timed flush. */
    assert_int_equal(scopeprof__writer_next_look(g, now, flush_at), flush_at);
    assert_true(g->wr.asleep);
    assert_false(g->wr.polled);
    /* A chunk queued since: polled (the next look writes what is queued), awake. */
    g->buf.chunks_queued += 3;
    assert_int_equal(scopeprof__writer_next_look(g, now, flush_at), now + SCOPEPROF__WRITER_POLL_NS);
    assert_false(g->wr.asleep);
    assert_true(g->wr.polled);
    /* And none since that look: asleep again. */
    assert_int_equal(scopeprof__writer_next_look(g, now, flush_at), flush_at);
    assert_true(g->wr.asleep);
    assert_false(g->wr.polled);
    /* A timed flush sooner than a poll (a small SCOPEPROF_FLUSH_MS) comes first. */
    g->buf.chunks_queued++;
    assert_int_equal(scopeprof__writer_next_look(g, now, now + 1000), now + 1000);
    assert_false(g->wr.asleep);
    free(g);
}

static void test_poll_look_writes_a_batch(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    g->buf.queued = SCOPEPROF__BATCH * CHUNK;
    assert_false(scopeprof__writer_look_due(g)); /* asleep or not polled: no look */
    g->buf.chunks_queued++;
    scopeprof__writer_next_look(g, 0, 100000000u);
    assert_true(g->wr.polled);
    assert_true(scopeprof__writer_look_due(g));
    g->buf.queued = (SCOPEPROF__BATCH - 1) * CHUNK; /* less than a batch: the next look */
    assert_false(scopeprof__writer_look_due(g));
    free(g);
}

static void test_drain_goes_on_by_batches(void **state) {
    (void)state;
    scopeprof__state *g = writer_state(64 * MiB);
    g->buf.queued = SCOPEPROF__BATCH * CHUNK; /* a whole batch: on */
    assert_true(scopeprof__drain_goes_on(g, 0));
    g->buf.queued = (SCOPEPROF__BATCH - 1) * CHUNK; /* less: left to the next look */
    assert_false(scopeprof__drain_goes_on(g, 0));
    assert_true(scopeprof__drain_goes_on(g, 1)); /* the timed flush writes it all */
    g->buf.queued = 0;
    assert_false(scopeprof__drain_goes_on(g, 1));
    free(g);
    /* A budget whose eighth is under a batch: on while a drain is due. */
    g = writer_state(SCOPEPROF__BATCH * CHUNK);
    g->buf.queued = SCOPEPROF__BATCH * CHUNK / 8;
    assert_true(scopeprof__drain_due(g));
    assert_true(scopeprof__drain_goes_on(g, 0));
    g->buf.queued = SCOPEPROF__BATCH * CHUNK / 8 - 1;
    assert_false(scopeprof__drain_goes_on(g, 0));
    free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_polling_writer_not_woken_for_a_drain),
        cmocka_unit_test(test_polling_writer_woken_when_far_behind),
        cmocka_unit_test(test_asleep_writer_woken_when_work_is_due),
        cmocka_unit_test(test_no_writer_never_woken),
        cmocka_unit_test(test_next_look),
        cmocka_unit_test(test_poll_look_writes_a_batch),
        cmocka_unit_test(test_drain_goes_on_by_batches),
    };
    return cmocka_run_group_tests_name("wake" VARIANT, tests, NULL, NULL);
}
