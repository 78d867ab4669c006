/* test_writer.c -- the background writer's hand-offs (issue 15 item 1) and
 * the loss bound on SIGKILL (issue 17 item 6). Each test runs prog_writer of
 * this build variant as a child and checks its exit, stderr and trace. No
 * timing is asserted: where time matters the child waits many flush periods
 * before it acts, and the control run shows what the timed flush adds. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "child.h"
#include "trace.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_exit(const child *r, int code) {
    if (r->timed_out) fail_msg("the program hung (killed after %d s); stderr:\n%s", CHILD_TIMEOUT_S, r->err);
    if (!r->exited || r->code != code)
        fail_msg("exit: exited=%d code=%d signal=%d, want exit code %d; stderr:\n%s", r->exited,
                 r->code, r->sig, code, r->err);
}

static void expect_killed(const child *r, int sig) {
    if (r->timed_out) fail_msg("the program hung (killed after %d s); stderr:\n%s", CHILD_TIMEOUT_S, r->err);
    if (!r->signaled || r->sig != sig)
        fail_msg("exit: exited=%d code=%d signal=%d, want killed by signal %d; stderr:\n%s",
                 r->exited, r->code, r->sig, sig, r->err);
}

static void read_whole(const char *path, tr_trace *t) {
    if (!tr_read(path, t)) fail_msg("trace %s: %s", path, t->err);
    if (!t->has_end) fail_msg("trace %s has no END chunk", path);
    assert_int_equal(t->end_total, tr_end_expected(t));
}

/* Scopes at depth 0 of one thread never overlap: in file order each starts
 * after the previous one ended, else an event was written twice. */
static void expect_no_duplicates(const tr_trace *t) {
    for (uint32_t th = 0; th < t->nthreads; th++) {
        uint64_t last_end = 0;
        int have = 0;
        for (uint64_t i = 0; i < t->nev; i++) {
            const tr_event *e = &t->ev[i];
            if (e->thread != th || (e->depth & TR_MEM_FLAG) || (e->depth & 0x3FFFFFFFu) != 0) continue;
            if (have && e->start < last_end)
                fail_msg("thread %u: '%s' written twice or out of order", th, tr_name(t, e->site));
            last_end = e->end;
            have = 1;
        }
    }
}

/* Lines of scopeprof's other than the writer's "fell behind" note (which
 * a small budget may cause, and which says nothing was lost) and the count
 * of scopes open on other threads at exit (exit_busy's threads, when the
 * exit finds them inside one). */
static int other_lines(const char *err) {
    return child_lines_with(err, "scopeprof:") - child_lines_with(err, "fell behind") -
           child_lines_with(err, "scope(s) were still open on "); /* threads busy in scopes at exit */
}

/* Events of `name` in a trace killed before its END: what it holds, 0 when
 * there is no file. A chunk cut by the kill may end it (readers skip it). */
static uint64_t killed_count(const char *path, const char *name) {
    if (access(path, F_OK) != 0) return 0;
    tr_trace t;
    if (!tr_read(path, &t) && strncmp(t.err, "bad or cut chunk", 16) != 0 &&
        strncmp(t.err, "partial chunk header", 20) != 0)
        fail_msg("trace %s: %s", path, t.err);
    assert_false(t.has_end);
    uint64_t n = tr_count(&t, name);
    tr_free(&t);
    return n;
}

/* Steps in a trace killed before its END (0 when there is no file). */
static uint32_t killed_steps(const char *path) {
    if (access(path, F_OK) != 0) return 0;
    tr_trace t;
    tr_read(path, &t); /* a cut last chunk: killed_count says what is allowed */
    uint32_t n = t.nsteps;
    for (uint32_t i = 0; i < n; i++) assert_int_equal(t.steps[i].n, i);
    tr_free(&t);
    return n;
}

/* SIGKILL loses at most what was recorded in the last flush period: the
 * child records 60000 scopes (14 full chunks and a partial one) in 4 steps,
 * waits 20 periods of 50 ms, and kills itself; every event and every step
 * is in the file. The control, with the period an hour, shows that the
 * partial chunk and the steps are the timed flush's doing: the writer,
 * which polls while chunks come, may have written full chunks (buffers.h,
 * scopeprof__writer_look_due), but the partial one, still the thread's
 * own, is lost, and the steps were written only at the end. */
static void test_sigkill_loss_bound(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_writer", ARGS("sigkill", "60000", "1000"), ENV("SCOPEPROF_FLUSH_MS=50"));
    expect_killed(&r, SIGKILL);
    assert_int_equal(killed_count(r.trace, "killed_work"), 60000);
    assert_int_equal(killed_steps(r.trace), 4);
    child_free(&r);

    child_run_args(&r, "prog_writer", ARGS("sigkill", "60000", "1000"),
                   ENV("SCOPEPROF_FLUSH_MS=3600000"));
    expect_killed(&r, SIGKILL);
    assert_true(killed_count(r.trace, "killed_work") < 60000);
    assert_int_equal(killed_steps(r.trace), 0);
    child_free(&r);
}

/* Threads that end while their chunks wait in the queue: every event
 * written once, in order (the thread's state is freed only after its last
 * queued chunk is written: ASan would see a use after free). */
static void test_thread_exit_queued(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_writer", ARGS("thread_exit"), ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_int_equal(other_lines(r.err), 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "quick"), 8 * 40000);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

/* fork while the writer is busy (a thread streams through a 1 MiB budget):
 * no child hangs (fork's prepare handler takes the registry lock, the chunk
 * lock and the memory lock, and the writer mallocs only under the registry
 * lock), and each child, which has no writer, writes its own chunks. */
static void test_fork_writer_busy(void **state) {
    (void)state;
    child r;
    /* TSan makes each fork of a busy process take about a second. */
    child_run_args(&r, "prog_writer", ARGS("fork", strcmp(VARIANT, "_tsan") == 0 ? "6" : "30"),
                   ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_OUTPUT=none", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_string_equal(r.out, "hung 0\n");
    child_free(&r);
}

/* SIGINT and SIGTERM while the writer drains the queue (it holds the
 * registry lock a chunk at a time): the handler waits for its unlock, which
 * writes the trace; whole, with exactly the events the program recorded. */
static void test_signal_writer_busy(void **state) {
    (void)state;
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < 2; i++) {
        char num[8];
        snprintf(num, sizeof num, "%d", sigs[i]);
        child r;
        child_run_args(&r, "prog_writer", ARGS("signal", num), ENV("SCOPEPROF_BUFFER_MB=4"));
        expect_killed(&r, sigs[i]);
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/count.bin", r.dir);
        FILE *f = fopen(p, "rb");
        assert_non_null(f);
        uint64_t count = 0;
        assert_int_equal(fread(&count, sizeof count, 1, f), 1);
        fclose(f);
        unlink(p);
        assert_true(count >= 400000);
        tr_trace t;
        read_whole(r.trace, &t);
        assert_int_equal(tr_count(&t, "work"), count);
        expect_no_duplicates(&t);
        tr_free(&t);
        char msg[PATH_MAX + 64];
        snprintf(msg, sizeof msg, "trace written to '%s'", r.trace);
        assert_int_equal(child_lines_with(r.err, msg), 1);
        child_free(&r);
    }
}

/* A full disk under the writer (/dev/full, a 1 MiB budget: the writer's
 * writes fail): one line naming the file and the reason, the summary still
 * printed with every call counted, exit 0, no hang. */
static void test_full_disk_writer(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_writer", ARGS("stream", "150000"),
                   ENV("SCOPEPROF_OUTPUT=/dev/full", "SCOPEPROF_BUFFER_MB=1"));
    expect_exit(&r, 0);
    if (other_lines(r.err) != 1 ||
        child_lines_with(r.err, "cannot write trace file '/dev/full': No space left on device") != 1)
        fail_msg("want one line about /dev/full:\n%s", r.err);
    assert_int_equal(child_lines_with(r.err, "Self CPU time total:"), 1);
    /* The summary's last line says the file is incomplete, and why. */
    assert_int_equal(child_lines_with(r.err, "Trace file: /dev/full ("), 1);
    assert_int_equal(child_lines_with(r.err, ", incomplete: No space left on device)"), 1);
    char cells[16][64];
    int n = child_table_row(r.err, "streamed", cells, 16);
    assert_true(n > 1);
    assert_string_equal(cells[n - 1], "300000");
    child_free(&r);
}

/* exit() while two threads record and the writer is mid-chunk: the trace is
 * whole (END equal to what was read), no event written twice. */
static void test_exit_writer_busy(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_writer", ARGS("exit_busy"), ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_int_equal(other_lines(r.err), 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_true(tr_count(&t, "busy") > 0);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

/* The timed flush every millisecond while two threads stream through a
 * 1 MiB budget (the writer behind, chunks of live threads queued when it
 * writes their partial chunks): every event once, each thread's in order. */
static void test_flush_order(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_writer", ARGS("stream", "150000"),
                   ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_FLUSH_MS=1", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_int_equal(other_lines(r.err), 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "streamed"), 300000);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

/* The budget counts a chunk's pages, not its size: with 2-slot chunks (56
 * bytes, a page each: prog_writer_tiny) one thread recording 2M scopes
 * through a 1 MiB budget, writing its own chunks (SCOPEPROF_WRITER=0),
 * peaked at 76 MB where default chunks peak at under 3 MB. Peak RSS is a
 * size, not a time; sanitizers change it: plain only. */
static int peak_kb(const char *prog) {
    child r;
    child_run_ex(&r, prog, 1, ARGS("hwm", "2000000"),
                 ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_WRITER=0", "SCOPEPROF_OUTPUT=none",
                     "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    int kb = -1;
    const char *l = strstr(r.out, "VmHWM:");
    if (!l || sscanf(l, "VmHWM: %d kB", &kb) != 1) fail_msg("no VmHWM line: '%s'", r.out);
    child_free(&r);
    return kb;
}

static void test_budget_counts_pages(void **state) {
    (void)state;
    if (VARIANT[0]) skip();
    int tiny = peak_kb("prog_writer_tiny"), normal = peak_kb("prog_writer");
    printf("peak RSS: %d KiB with 2-slot chunks, %d KiB with the default\n", tiny, normal);
    if (tiny > normal + 2048)
        fail_msg("peak RSS %d KiB with 2-slot chunks and a 1 MiB budget (%d KiB with the default)", tiny,
                 normal);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigkill_loss_bound),
        cmocka_unit_test(test_thread_exit_queued),
        cmocka_unit_test(test_fork_writer_busy),
        cmocka_unit_test(test_signal_writer_busy),
        cmocka_unit_test(test_full_disk_writer),
        cmocka_unit_test(test_exit_writer_busy),
        cmocka_unit_test(test_flush_order),
        cmocka_unit_test(test_budget_counts_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
