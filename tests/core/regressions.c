/* Regression tests: one per header bug found while writing the suite. Each
 * failed on the header of its day and passes since the fix; the comment above
 * each says what was wrong. */
#define SCOPEPROF_AGGREGATION
#include "scopeprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "child.h"
#include "trace.h"

int empty_define_enables(void);

/* Bug 0: EVENTS chunks must have type 3 (docs/FORMAT.md). The config
 * macro for events per chunk (4096) once had the same name as the enum
 * constant SCOPEPROF_CHUNK_EVENTS (chunk type 3) and, defined after the enum,
 * replaced it in every later use: the writer stamped EVENTS chunks with 4096.
 * The config macro is now SCOPEPROF_EVENTS_PER_CHUNK. */
static void test_events_chunk_type(void **state) {
    (void)state;
    child c;
    child_run(&c, "prog_basic", NULL);
    tr_trace t;
    assert_true(tr_read(c.trace, &t));
    uint32_t wrong = t.events_chunks_4096;
    uint64_t events = t.nev;
    tr_free(&t);
    child_free(&c);
    assert_int_equal(events, 41);
    assert_int_equal(wrong, 0);
}

/* Bug 1: the test "PROFILE_ENABLE + 0 != 0 || ~PROFILE_ENABLE + 1 == 1"
 * is meant to catch an empty definition, but with an empty one the second
 * half reads "~ + 1 == 1", i.e. -2 == 1: "#define PROFILE_ENABLE" compiles
 * profiling out. */
static void test_empty_define_enables(void **state) {
    (void)state;
    assert_int_equal(empty_define_enables(), 1);
}

/* prog_threads run with `env`, its trace read into t; returns how many of
 * its threads the file names `name`. */
static int threads_named(child *c, tr_trace *t, const char *const *env, const char *name) {
    child_run(c, "prog_threads", env);
    assert_int_equal(c->status, 0);
    assert_true(tr_read(c->trace, t));
    int found = 0;
    for (uint32_t i = 0; i < t->nthreads; i++) found += strcmp(tr_thread_name(t, i), name) == 0;
    return found;
}

/* Bug 2: a thread's name is read when it records its first scope, and at
 * exit only if still empty; a new thread inherits the process name, so it is
 * never empty and a pthread_setname_np after the first scope is lost. */
static void test_thread_named_after_first_scope(void **state) {
    (void)state;
    child c;
    tr_trace t;
    int found = threads_named(&c, &t, NULL, "setname-late");
    tr_free(&t);
    child_free(&c);
    assert_int_equal(found, 1);
}

/* Session 11's review: a thread renamed after its last events were written
 * (a flush) that then exits without a scope more had its state reaped with
 * its old name in the file: THREAD chunks are written when the file lacks
 * the current name, and the reap now writes the final one. */
static void test_thread_renamed_after_last_write(void **state) {
    (void)state;
    static const char *const env[] = {"PROG_RENAME_AFTER_FLUSH=1", NULL};
    child c;
    tr_trace t;
    int found = threads_named(&c, &t, env, "renamed-late");
    assert_int_equal(tr_count_all(&t, "renamer_work"), 10);
    tr_free(&t);
    child_free(&c);
    assert_int_equal(found, 1);
}

/* Bug 3: a PROFILE_BEGIN left open by the main thread when the program
 * exits is neither reported nor recorded (only other threads' exits close
 * ranges). */
static void test_main_range_open_at_exit(void **state) {
    (void)state;
    child c;
    child_run(&c, "prog_mismatch", NULL);
    assert_int_equal(c.status, 0);
    int reported = child_lines_with(c.err, "\"main_open\"");
    child_free(&c);
    assert_int_equal(reported, 1);
}

/* Bug 4: the module that creates the registry supplies the pthread key's
 * destructor and counts as a module; when it is a dlopen'd library that is
 * then dlclose'd, (a) the profile is finalized at dlclose (the summary comes
 * early, later scopes are dropped) and (b) any thread that exits afterwards
 * calls the destructor in unmapped code. */
static void test_dlclose_first_recorder(void **state) {
    (void)state;
    child c;
    child_run(&c, "prog_dlclose", NULL);
    int status = c.status;
    child_row rows[16];
    int n = child_table_rows(c.err, rows, 16);
    const child_row *after = child_find_row(rows, n, "after_dlclose"), *thr = child_find_row(rows, n, "thread_after");
    int tables = child_lines_with(c.err, "Self CPU time total");
    if (status != 0 || tables != 1 || !after || after->calls != 3 || !thr || thr->calls != 1)
        fprintf(stderr, "exit %d, %d table(s); stderr:\n%s", status, tables, c.err);
    child_free(&c);
    assert_int_equal(status, 0);
    assert_int_equal(tables, 1);
    assert_non_null(after);
    assert_non_null(thr);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_chunk_type),
        cmocka_unit_test(test_empty_define_enables),
        cmocka_unit_test(test_thread_named_after_first_scope),
        cmocka_unit_test(test_thread_renamed_after_last_write),
        cmocka_unit_test(test_main_range_open_at_exit),
        cmocka_unit_test(test_dlclose_first_recorder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
