/* test_life.c -- issues 5 and 6 end to end. Each test runs prog_life (or
 * prog_wrap) of this build variant as a child process with a mode and
 * environment, then checks its exit status, stdout, stderr (the exit table
 * and scopeprof's messages) and its trace file(s), read with trace.h.
 * Timing is never asserted; counts, nesting, byte values and names are. */
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

static const int sanitized = sizeof(VARIANT) > 1; /* "_asan" or "_tsan" */

/* ---- helpers ---------------------------------------------------------------- */

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

/* Read a trace that must be whole: every chunk valid, END present and equal
 * to the number of events read. */
static void read_whole(const char *path, tr_trace *t) {
    if (!tr_read(path, t)) fail_msg("trace %s: %s", path, t->err);
    if (!t->has_end) fail_msg("trace %s has no END chunk", path);
    assert_int_equal(t->end_total, tr_end_expected(t));
}

static int summaries(const child *r) { return child_lines_with(r->err, "Self CPU time total:"); }

/* A cell of row `name` under column `head` of the exit table. */
static const char *cell(const child *r, const char *name, const char *head) {
    static char cells[32][64];
    int col = child_table_col(r->err, head);
    if (col < 0) fail_msg("no column '%s' in the table:\n%s", head, r->err);
    int n = child_table_row(r->err, name, cells, 32);
    if (n <= col) fail_msg("no row '%s' (or too short) in the table:\n%s", name, r->err);
    return cells[col];
}

static void expect_cell(const child *r, const char *name, const char *head, const char *want) {
    const char *got = cell(r, name, head);
    if (strcmp(got, want) != 0)
        fail_msg("row '%s', column '%s': '%s', want '%s'\n%s", name, head, got, want, r->err);
}

/* No event recorded twice: on every thread, scopes at depth 0 never overlap,
 * so in file order (close order) each starts after the previous one ended. */
static void expect_no_duplicates(const tr_trace *t) {
    for (uint32_t th = 0; th < t->nthreads; th++) {
        uint64_t last_end = 0;
        int have = 0;
        for (uint64_t i = 0; i < t->nev; i++) {
            const tr_event *e = &t->ev[i];
            if (e->thread != th || (e->depth & TR_MEM_FLAG) || (e->depth & 0x3FFFFFFFu) != 0) continue;
            if (have && e->start < last_end)
                fail_msg("thread %u: '%s' at %llu starts before the previous ended (%llu): "
                         "duplicated or out of order", th, tr_name(t, e->site),
                         (unsigned long long)e->start, (unsigned long long)last_end);
            last_end = e->end;
            have = 1;
        }
    }
}

static char *path_in(const child *r, const char *name) {
    static char p[PATH_MAX + 300];
    snprintf(p, sizeof p, "%s/%.255s", r->dir, name); /* names of child_list_files: under 256 */
    return p;
}

/* ==== Issue 5: memory ========================================================= */

static void test_mem_table(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("mem"), ENV("SCOPEPROF_ROW_LIMIT=0"));
    expect_exit(&r, 0);
    assert_string_equal(r.out, "mem done\n");
    /* outer: +1000 +50 directly, inner's net -700 below it. */
    expect_cell(&r, "outer", "CPU Mem", "350 b");
    expect_cell(&r, "outer", "Self CPU Mem", "1.03 Kb");
    expect_cell(&r, "inner", "CPU Mem", "-700 b");
    expect_cell(&r, "inner", "Self CPU Mem", "-700 b");
    expect_cell(&r, "outer", "GPU Mem", "0 b");
    expect_cell(&r, "gpu_part", "GPU Mem", "1.00 Mb");
    expect_cell(&r, "gpu_part", "Self GPU Mem", "2.00 Mb");
    expect_cell(&r, "gpu_inner", "GPU Mem", "-1.00 Mb");
    expect_cell(&r, "gpu_inner", "Self GPU Mem", "-1.00 Mb");
    expect_cell(&r, "gpu_part", "CPU Mem", "0 b");
    expect_cell(&r, "bad_free", "Self CPU Mem", "0 b");
    /* Peaks: A+B live = 1300 b; GPU 2 MiB + 1 MiB. */
    assert_int_equal(child_lines_with(r.err, "Peak CPU memory: 1.27 Kb"), 1);
    assert_int_equal(child_lines_with(r.err, "Peak GPU 0 memory: 3.00 Mb"), 1);
    /* The unknown free: counted and reported with its place, not fatal. */
    assert_int_equal(child_lines_with(r.err, "scopeprof: 1 free(s) of pointers not recorded by PROFILE_ALLOC"), 1);
    assert_int_equal(child_lines_with(r.err, "prog_life.c:"), 1);
    child_free(&r);
}

static void test_mem_sort_keys(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("mem"),
             ENV("SCOPEPROF_ROW_LIMIT=0", "SCOPEPROF_SORT=self_cpu_memory_usage"));
    expect_exit(&r, 0);
    /* Descending: outer (1050 b) first, inner (-700 b) last of the five rows. */
    const char *o = strstr(r.err, " outer "), *i = strstr(r.err, " inner "),
               *g = strstr(r.err, " gpu_part ");
    assert_non_null(o);
    assert_non_null(i);
    assert_non_null(g);
    assert_true(o < g && g < i);
    child_free(&r);
    child_run_args(&r, "prog_life", ARGS("mem"),
             ENV("SCOPEPROF_ROW_LIMIT=1", "SCOPEPROF_SORT=self_gpu_memory_usage"));
    expect_exit(&r, 0);
    assert_non_null(strstr(r.err, " gpu_part "));
    assert_null(strstr(r.err, " outer "));
    child_free(&r);
}

static void test_mem_trace(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("mem"), NULL);
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(r.trace, &t);
    /* The MEM events, in the order they happened: bytes, device, depth. */
    static const struct { int64_t bytes; uint32_t dev, depth; } want[] = {
        {1000, 0, 1}, {300, 0, 2}, {-1000, 0, 2}, {50, 0, 1},
        {2 << 20, 1, 1}, {1 << 20, 1, 2}, {-(2 << 20), 1, 2}};
    uint32_t k = 0;
    for (uint64_t i = 0; i < t.nev; i++) {
        const tr_event *e = &t.ev[i];
        if (!(e->depth & TR_MEM_FLAG)) continue;
        if (k >= sizeof want / sizeof *want) fail_msg("more MEM events than allocations and frees");
        if ((int64_t)e->end != want[k].bytes || ((e->depth >> 24) & 63u) != want[k].dev ||
            (e->depth & 0xFFFFFFu) != want[k].depth)
            fail_msg("MEM event %u: %lld bytes, device %u, depth %u; want %lld, %u, %u", k,
                     (long long)e->end, (e->depth >> 24) & 63u, e->depth & 0xFFFFFFu,
                     (long long)want[k].bytes, want[k].dev, want[k].depth);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof *want); /* the unknown free adds none */
    /* MEMORY chunk: peak and final per device, the unknown free counted. */
    assert_int_equal(t.memory_chunks, 1);
    assert_int_equal(t.nmem, 2);
    assert_int_equal(t.mem[0].device, 0);
    assert_int_equal(t.mem[0].peak, 1300);
    assert_int_equal(t.mem[0].final, 350);
    assert_int_equal(t.mem[0].unknown_frees, 1);
    assert_int_equal(t.mem[1].device, 1);
    assert_int_equal(t.mem[1].peak, 3 << 20);
    assert_int_equal(t.mem[1].final, 1 << 20);
    assert_int_equal(tr_count(&t, "outer"), 1);
    tr_free(&t);
    child_free(&r);
}

/* The malloc wrappers; in the _asan variant, under ASan+UBSan. */
static void test_wrap_malloc(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_wrap", NULL, ENV("SCOPEPROF_ROW_LIMIT=0"));
    expect_exit(&r, 0);
    assert_string_equal(r.out, "wrap done\n");
    assert_null(strstr(r.err, "Sanitizer"));
    expect_cell(&r, "wrap_alloc", "Self CPU Mem", "4.00 Kb");
    expect_cell(&r, "wrap_calloc", "Self CPU Mem", "1000 b");
    expect_cell(&r, "wrap_realloc", "Self CPU Mem", "4.00 Kb");
    expect_cell(&r, "wrap_free", "Self CPU Mem", "-8.98 Kb");
    expect_cell(&r, "wrap_unknown", "Self CPU Mem", "0 b");
    assert_int_equal(child_lines_with(r.err, "Peak CPU memory: 8.98 Kb"), 1);
    assert_int_equal(child_lines_with(r.err, "scopeprof: 1 free(s) of pointers not recorded"), 1);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(t.nmem, 1);
    assert_int_equal(t.mem[0].peak, 9192);
    assert_int_equal(t.mem[0].final, 0);
    assert_int_equal(t.mem[0].unknown_frees, 1);
    tr_free(&t);
    child_free(&r);
}

/* ==== Issue 5: steps and schedules ============================================ */

/* A cycle file holds exactly the scopes of `steps` (step_<i> once each, two
 * "work" per step), and STEPS records for exactly those steps, each scope
 * inside its step's range. `total` is the number of steps the program ran. */
static void expect_cycle(const char *path, const int *steps, int n, int total) {
    tr_trace t;
    read_whole(path, &t);
    for (int i = 0; i < total; i++) {
        char name[32];
        int in = 0;
        for (int k = 0; k < n; k++) in |= steps[k] == i;
        snprintf(name, sizeof name, "step_%d", i);
        if (tr_count(&t, name) != (uint64_t)in)
            fail_msg("%s: %llu events of %s, want %d", path, (unsigned long long)tr_count(&t, name), name, in);
    }
    assert_int_equal(tr_count(&t, "work"), 2 * n);
    assert_int_equal(t.nsteps, n);
    for (int k = 0; k < n; k++) {
        assert_int_equal(t.steps[k].n, steps[k]);
        assert_true(t.steps[k].start <= t.steps[k].end);
        char name[32];
        snprintf(name, sizeof name, "step_%d", steps[k]);
        for (uint64_t i = 0; i < t.nev; i++)
            if (strcmp(tr_name(&t, t.ev[i].site), name) == 0)
                assert_true(t.ev[i].start >= t.steps[k].start && t.ev[i].end <= t.steps[k].end);
    }
    tr_free(&t);
}

typedef struct sched_case {
    const char *env;      /* SCOPEPROF_SCHEDULE, or NULL */
    const char *call[5];  /* PROFILE_SCHEDULE arguments, or {NULL} */
    int steps;
    int ncycles;
    int cycle[4][4];      /* kept steps per cycle, -1 terminated */
} sched_case;

static void run_sched_case(const sched_case *c) {
    child r;
    char nsteps[16], env[128];
    snprintf(nsteps, sizeof nsteps, "%d", c->steps);
    snprintf(env, sizeof env, "SCOPEPROF_SCHEDULE=%s", c->env ? c->env : "");
    const char *argv[10] = {"steps", nsteps};
    if (c->call[0]) {
        argv[2] = "sched";
        for (int i = 0; i < 5; i++) argv[3 + i] = c->call[i];
    }
    const char *envv[] = {c->env ? env : "SCOPEPROF_ROW_LIMIT=5", NULL};
    child_run_args(&r, "prog_life", argv, envv);
    expect_exit(&r, 0);
    assert_int_equal(child_lines_with(r.err, "scopeprof: ignoring"), 0);
    /* The callback: once per cycle, in order, with the cycle file's path. */
    char want_out[2048] = "";
    size_t l = 0;
    for (int k = 0; k < c->ncycles; k++)
        l += (size_t)snprintf(want_out + l, sizeof want_out - l, "cycle %d %s/trace.cycle%04d.sprof\n",
                              k + 1, r.dir, k + 1);
    assert_string_equal(r.out, want_out);
    char names[16][256];
    int nf = child_list_files(&r, ".sprof", names, 16);
    if (nf != c->ncycles) fail_msg("%d trace files, want %d (one per cycle)", nf, c->ncycles);
    for (int k = 0; k < c->ncycles; k++) {
        char want[64];
        snprintf(want, sizeof want, "trace.cycle%04d.sprof", k + 1);
        assert_string_equal(names[k], want);
        int n = 0;
        while (n < 4 && c->cycle[k][n] >= 0) n++;
        expect_cycle(path_in(&r, names[k]), c->cycle[k], n, c->steps);
        char line[64];
        snprintf(line, sizeof line, "scopeprof: cycle %d (", k + 1);
        assert_int_equal(child_lines_with(r.err, line), 1); /* each cycle summarised */
    }
    child_free(&r);
}

/* A trace that cannot be created is said once, not again at each cycle's
 * file; that the summary is still printed, only when it is. */
static void test_schedule_unwritable_said_once(void **state) {
    (void)state;
    const char *argv[] = {"steps", "6", NULL};
    for (int summary = 1; summary >= 0; summary--) {
        const char *env[] = {"SCOPEPROF_SCHEDULE=active=1,repeat=3", "SCOPEPROF_OUTPUT=/nonexistent/dir/t.sprof",
                             summary ? "SCOPEPROF_SUMMARY=1" : "SCOPEPROF_SUMMARY=0", NULL};
        child r;
        child_run_args(&r, "prog_life", argv, env);
        expect_exit(&r, 0);
        assert_int_equal(child_lines_with(r.err, "scopeprof: cannot create trace file"), 1);
        assert_int_equal(child_lines_with(r.err, "No such file or directory"), 1);
        assert_int_equal(child_lines_with(r.err, "the summaries are still printed"), summary);
        assert_int_equal(child_lines_with(r.err, "scopeprof: cycle "), summary ? 3 : 0);
        child_free(&r);
    }
}

/* The step after a cycle ends starts after the cycle's file, table and
 * callback (here 200 ms of it), as torch's next step starts after
 * on_trace_ready: it took them all. */
static void test_schedule_next_step_after_cycle(void **state) {
    (void)state;
    const char *argv[] = {"steps", "3", NULL};
    const char *env[] = {"SCOPEPROF_SCHEDULE=active=1,repeat=3", "LIFE_CYCLE_SLEEP_MS=200", NULL};
    child r;
    child_run_args(&r, "prog_life", argv, env);
    expect_exit(&r, 0);
    for (int k = 2; k <= 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "trace.cycle%04d.sprof", k);
        tr_trace t;
        read_whole(path_in(&r, name), &t);
        assert_int_equal(t.nsteps, 1);
        uint64_t ns = t.steps[0].end - t.steps[0].start;
        if (ns >= 100000000u) fail_msg("%s: step %llu took %llu ns, the callback's 200 ms in it", name,
                                       (unsigned long long)t.steps[0].n, (unsigned long long)ns);
        tr_free(&t);
    }
    child_free(&r);
}

/* A signal during a step that no file records (a wait or warm-up step
 * after a cycle) writes no file, and the line that names the trace file
 * written is not said: it named the next cycle's, never made. */
static void test_schedule_signal_outside_window(void **state) {
    (void)state;
    const char *argv[] = {"steps", "8", NULL};
    const char *env[] = {"SCOPEPROF_SCHEDULE=wait=1,warmup=1,active=2", "LIFE_KILL_AT_STEP=5", NULL};
    child r;
    child_run_args(&r, "prog_life", argv, env);
    expect_killed(&r, SIGTERM);
    assert_int_equal(child_lines_with(r.err, "trace written to"), 0);
    char names[4][256];
    assert_int_equal(child_list_files(&r, ".sprof", names, 4), 1); /* cycle 1's */
    assert_string_equal(names[0], "trace.cycle0001.sprof");
    /* Killed in its active steps, the cycle's file is written and named. */
    child_free(&r);
    const char *env2[] = {"SCOPEPROF_SCHEDULE=wait=1,warmup=1,active=2", "LIFE_KILL_AT_STEP=7", NULL};
    child_run_args(&r, "prog_life", argv, env2);
    expect_killed(&r, SIGTERM);
    assert_int_equal(child_lines_with(r.err, "trace.cycle0002.sprof'"), 1);
    assert_int_equal(child_list_files(&r, ".sprof", names, 4), 2);
    child_free(&r);
}

static void test_schedule_env_repeat(void **state) {
    (void)state;
    /* wait 1, warmup 1, active 2, twice: steps 0 w, 1 wu, 2-3 kept; 4 w, 5 wu,
     * 6-7 kept; 8-11 after the last cycle, not recorded. */
    sched_case c = {"wait=1,warmup=1,active=2,repeat=2", {NULL}, 12, 2,
                    {{2, 3, -1}, {6, 7, -1}}};
    run_sched_case(&c);
}

static void test_schedule_skip_first_repeat0(void **state) {
    (void)state;
    /* skip 3, then warmup 1 + active 1 until the end: 3 wu, 4; 5 wu, 6; 7 wu,
     * 8; 9 wu (the program ends before its active step). */
    sched_case a = {"skip_first=3,warmup=1,active=1", {NULL}, 10, 3, {{4, -1}, {6, -1}, {8, -1}}};
    run_sched_case(&a);
    /* repeat=0 spelled out, no warm-up: 0 w, 1-2; 3 w, 4-5; 6 w, 7-8. */
    sched_case b = {"active=2,wait=1,repeat=0", {NULL}, 9, 3, {{1, 2, -1}, {4, 5, -1}, {7, 8, -1}}};
    run_sched_case(&b);
}

/* A run that ends before the schedule's first active step (0 steps: a
 * first-time user with no PROFILE_STEP in the program), or as it begins (3),
 * records nothing: no file, no table, and one line says why (before:
 * nothing at all). A run through it (4) does not say it. */
static void test_schedule_never_active(void **state) {
    (void)state;
    for (int steps = 0; steps <= 4; steps += steps ? 1 : 3) {
        char n[8];
        snprintf(n, sizeof n, "%d", steps);
        child r;
        child_run_args(&r, "prog_life", ARGS("steps", n),
                       ENV("SCOPEPROF_SCHEDULE=skip_first=1,wait=1,warmup=1,active=3,repeat=2"));
        expect_exit(&r, 0);
        char want[200];
        snprintf(want, sizeof want, "scopeprof: the run ended after %d PROFILE_STEP call(s), before the schedule's "
                 "first active step was done (it comes after 3: skip_first=1, wait=1, warmup=1): nothing was "
                 "recorded", steps);
        assert_int_equal(child_lines_with(r.err, "scopeprof:"), steps < 4);
        assert_int_equal(child_lines_with(r.err, want), steps < 4);
        assert_int_equal(summaries(&r), steps < 4 ? 0 : 1);
        char names[4][256];
        assert_int_equal(child_list_files(&r, ".sprof", names, 4), steps < 4 ? 0 : 1);
        child_free(&r);
    }
}

static void test_schedule_call(void **state) {
    (void)state;
    /* PROFILE_SCHEDULE(1, 1, 0, 1, 3): 0 skipped; 1 w, 2; 3 w, 4; 5 w, 6; done. */
    sched_case c = {NULL, {"1", "1", "0", "1", "3"}, 10, 3, {{2, -1}, {4, -1}, {6, -1}}};
    run_sched_case(&c);
}

/* Memory under a schedule: each cycle's summary and file give that cycle's
 * peak. Step i holds (12 - i) * 100 bytes: cycle 1 (steps 0-3) peaks at
 * 1200 b in step 0, cycle 2 (steps 4-7) at 800 b in step 4 (not the 1200 b
 * of cycle 1, nor the 1100 b of step 1, which was recorded in its warm-up). */
static void test_schedule_memory_peaks(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("steps", "12"),
             ENV("SCOPEPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=2", "LIFE_STEP_MEM=1"));
    expect_exit(&r, 0);
    assert_int_equal(child_lines_with(r.err, "Peak CPU memory: 1.17 Kb"), 1);
    assert_int_equal(child_lines_with(r.err, "Peak CPU memory: 800 b"), 1);
    static const int64_t peaks[] = {1200, 800};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "trace.cycle%04d.sprof", k + 1);
        tr_trace t;
        read_whole(path_in(&r, name), &t);
        assert_int_equal(t.nmem, 1);
        assert_int_equal(t.mem[0].peak, peaks[k]);
        assert_int_equal(t.mem[0].final, 0);
        tr_free(&t);
    }
    child_free(&r);
}

/* Without a schedule (or with a bad one): one file, every step in STEPS. */
static void expect_unscheduled(const child *r, int steps) {
    expect_exit(r, 0);
    assert_string_equal(r->out, ""); /* the cycle callback never ran */
    char names[8][256];
    assert_int_equal(child_list_files(r, ".sprof", names, 8), 1);
    int all[16];
    for (int i = 0; i < steps; i++) all[i] = i;
    expect_cycle(r->trace, all, steps, steps);
    assert_int_equal(summaries(r), 1);
}

static void test_schedule_bad(void **state) {
    (void)state;
    static const char *const bad[] = {"wait=1,active=0", "wait=x", "bogus=2", "active=2;wait=1",
                                      "warmup=-1", "", "wait=1,", "wait=1,wait=2,active=2", "wait= 1",
                                      "active=+2", "wait=1,,active=2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        child r;
        char env[128], msg[160];
        snprintf(env, sizeof env, "SCOPEPROF_SCHEDULE=%s", bad[i]);
        child_run_args(&r, "prog_life", ARGS("steps", "5"), ENV(env));
        snprintf(msg, sizeof msg, "scopeprof: ignoring SCOPEPROF_SCHEDULE='%s'", bad[i]);
        if (child_lines_with(r.err, msg) != 1) fail_msg("'%s' not reported:\n%s", bad[i], r.err);
        expect_unscheduled(&r, 5);
        child_free(&r);
    }
    child r;
    child_run_args(&r, "prog_life", ARGS("steps", "5", "sched", "0", "0", "0", "0", "0"), NULL);
    assert_int_equal(child_lines_with(r.err, "PROFILE_SCHEDULE(0, 0, 0, 0, 0) ignored"), 1);
    expect_unscheduled(&r, 5);
    child_free(&r);
    /* The call replaces the variable's schedule, and one line says so. */
    for (int both = 0; both < 2; both++) {
        child_run_args(&r, "prog_life", ARGS("steps", "5", "sched", "0", "0", "0", "1", "1"),
                       both ? ENV("SCOPEPROF_SCHEDULE=wait=2,active=2,repeat=1") : NULL);
        expect_exit(&r, 0);
        assert_int_equal(child_lines_with(r.err, "PROFILE_SCHEDULE replaces the schedule set before it"), both);
        if (child_lines_with(r.err, "scopeprof: cycle 1 (") != 1) fail_msg("stderr:\n%s", r.err); /* the call's schedule */
        assert_int_equal(child_lines_with(r.err, "scopeprof:"), 1 + both);
        child_free(&r);
    }
}

static void test_steps_chunk(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("steps", "5"), NULL);
    expect_unscheduled(&r, 5);
    /* The profiler's own cost counts the 15 scopes, not the 5 steps' row
     * (no scope's calls, nothing taken out of it). */
    assert_int_equal(child_lines_with(r.err, "Profiler's own cost: 15 calls, "), 1);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(t.steps_chunks, 1);
    /* The first step starts when profiling started; steps are contiguous. */
    assert_int_equal(t.steps[0].start, t.start_ns);
    for (uint32_t i = 0; i + 1 < t.nsteps; i++) assert_int_equal(t.steps[i].end, t.steps[i + 1].start);
    tr_free(&t);
    child_free(&r);
}

/* ==== Issue 5 and 6: fork ===================================================== */

static int child_pid_of(const child *r) {
    int pid = 0, st = -1;
    if (sscanf(r->out, "child %d status %d", &pid, &st) != 2 || st != 0)
        fail_msg("no 'child <pid> status 0' line: '%s'", r->out);
    return pid;
}

/* Parent's file: its own events only; nothing of the child. */
static void expect_parent_file(const char *path) {
    tr_trace t;
    read_whole(path, &t);
    assert_int_equal(tr_count(&t, "parent_thread"), 100);
    assert_int_equal(tr_count(&t, "parent_before"), 3);
    assert_int_equal(tr_count(&t, "parent_after"), 2);
    assert_int_equal(tr_count(&t, "child_work"), 0);
    assert_int_equal(tr_count(&t, "execd_work"), 0);
    assert_int_equal(tr_scopes(&t), 105);
    tr_free(&t);
}

/* Child's file: `name` x n and nothing else (no parent events). */
static void expect_child_file(const char *path, int pid, const char *name, int n) {
    tr_trace t;
    read_whole(path, &t);
    assert_int_equal(t.pid, pid);
    assert_int_equal(tr_count(&t, name), n);
    assert_int_equal(tr_scopes(&t), n);
    assert_int_equal(t.nthreads, 1);
    tr_free(&t);
}

static void test_fork_explicit_output(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("fork"), NULL);
    expect_exit(&r, 0);
    int pid = child_pid_of(&r);
    char names[8][256], child_name[64];
    assert_int_equal(child_list_files(&r, ".sprof", names, 8), 2);
    expect_parent_file(r.trace);
    snprintf(child_name, sizeof child_name, "trace.%d.sprof", pid); /* run.sprof -> run.<pid>.sprof */
    expect_child_file(path_in(&r, child_name), pid, "child_work", 5);
    child_free(&r);
}

/* A schedule's cycles in a forked child are named after the child's path
 * (its pid in them): with an explicit path and with the default, no file
 * of the parent's is overwritten by the child's cycles (the child took the
 * parent's names for its later cycles, and the parent's cycle was lost). */
static void test_fork_schedule(void **state) {
    (void)state;
    for (int dflt = 0; dflt < 2; dflt++) {
        child r;
        child_run_args(&r, "prog_life", ARGS("fork_steps"),
                       dflt ? ENV("SCOPEPROF_SCHEDULE=active=1", "SCOPEPROF_OUTPUT=-") : ENV("SCOPEPROF_SCHEDULE=active=1"));
        expect_exit(&r, 0);
        int pid = child_pid_of(&r);
        char names[32][256], mark[32];
        int n = child_list_files(&r, ".sprof", names, 32), in_child = 0, in_parent = 0;
        snprintf(mark, sizeof mark, ".%d.", pid);
        for (int i = 0; i < n; i++) {
            tr_trace t;
            read_whole(path_in(&r, names[i]), &t);
            int childs = strstr(names[i], mark) != NULL;
            if (tr_count(&t, childs ? "parent_step" : "child_step") != 0)
                fail_msg("%s holds the other process's steps (child pid %d)", names[i], pid);
            in_child += tr_count(&t, "child_step"), in_parent += tr_count(&t, "parent_step");
            tr_free(&t);
        }
        if (in_child != 3 || in_parent != 5) fail_msg("child_step %d (want 3), parent_step %d (want 5)", in_child, in_parent);
        child_free(&r);
    }
}

/* A scope that closes on another thread than it opened on (an untied
 * OpenMP task that moved): left out, never written into the first thread's
 * buffer from the second (two threads on one buffer broke the file), and
 * said at exit, with or without a scope around it on its first thread
 * (which then also counts it as left when it closes). */
static void test_scope_moved_thread(void **state) {
    (void)state;
    /* With each clock. The moved scope's close takes the slow path under
     * both (the thread it closes on opened no scope); where the clock is
     * read out of line (SCOPEPROF_CLOCK=monotonic), so do the first
     * thread's own scopes, which must not be taken for moved ones. */
    for (int k = 0; k < 4; k++) {
        const int bare = k & 1;
        child r;
        child_run_args(&r, "prog_life", bare ? ARGS("moved", "bare") : ARGS("moved"),
                       k < 2 ? NULL : ENV("SCOPEPROF_CLOCK=monotonic"));
        expect_exit(&r, 0);
        tr_trace t;
        read_whole(r.trace, &t);
        assert_int_equal(tr_count(&t, "moved"), 0);
        assert_int_equal(tr_count(&t, "stays"), 1);
        assert_int_equal(tr_count(&t, "after"), 3);
        assert_int_equal(tr_count(&t, "outer"), !bare);
        assert_int_equal(t.end_missing, 1); /* left (found by "outer"), or still open at the end */
        tr_free(&t);
        if (child_lines_with(r.err, "scopeprof: 1 scope(s) closed on another thread than the one they opened on "
                             "(untied OpenMP tasks that the runtime moved; tied tasks, the default, stay), "
                             "first 'moved' at ") != 1 ||
            child_lines_with(r.err, "1 scope(s) were left without closing") != !bare)
            fail_msg("stderr:\n%s", r.err);
        child_free(&r);
    }
}

/* Default names: <prog>.<pid>.sprof for each process. */
static void expect_fork_default(const char *mode, const char *child_scope, int n) {
    child r;
    child_run_args(&r, "prog_life", ARGS(mode), ENV("SCOPEPROF_OUTPUT=-"));
    expect_exit(&r, 0);
    int pid = child_pid_of(&r);
    char names[8][256], want[64];
    if (child_list_files(&r, ".sprof", names, 8) != 2) fail_msg("want 2 trace files, stdout %s", r.out);
    snprintf(want, sizeof want, ".%d.sprof", r.pid);
    int parent = strstr(names[0], want) ? 0 : 1;
    assert_non_null(strstr(names[parent], want));
    assert_int_equal(strncmp(names[parent], "prog_life", 9), 0);
    expect_parent_file(path_in(&r, names[parent]));
    snprintf(want, sizeof want, ".%d.sprof", pid);
    assert_non_null(strstr(names[1 - parent], want));
    expect_child_file(path_in(&r, names[1 - parent]), pid, child_scope, n);
    child_free(&r);
}

static void test_fork_default_output(void **state) {
    (void)state;
    expect_fork_default("fork", "child_work", 5);
}

static void test_fork_exec_default_output(void **state) {
    (void)state;
    expect_fork_default("forkexec", "execd_work", 4);
}

/* fork() inside an open scope, as a server forks its workers: the child
 * exits inside it and inside one scope of its own; its table's title says
 * whose it is (the workers' tables share the server's log). Only its own
 * is said missing, at exit and in its file's END (the inherited one is the
 * parent's, which records it). With "drop" the child cannot create its
 * file (it changed user): the line says why, and no "Trace file:" line
 * names a file it never made (before: its parent's path was stat'ed, and
 * the child's name was printed with the parent's size). */
static void test_fork_inside_scope(void **state) {
    (void)state;
    for (int drop = 0; drop < 2; drop++) {
        child r;
        child_run_args(&r, "prog_life", drop ? ARGS("fork_inside", "drop") : ARGS("fork_inside"), NULL);
        chmod(r.dir, 0700); /* "drop" without root made it read-only */
        expect_exit(&r, 0);
        int pid = child_pid_of(&r);
        if (strstr(r.out, " status 0\n") == NULL) fail_msg("stdout: %s", r.out);
        char line[128];
        snprintf(line, sizeof line, "scopeprof: the program ended inside 1 open scope(s) of thread %d (", pid);
        if (child_lines_with(r.err, line) != 1 || child_lines_with(r.err, "the program ended inside") != 1 ||
            child_lines_with(r.err, "PROFILE_BEGIN(\"serve\")") != 0)
            fail_msg("want the child's own open scope said, once, and not the parent's range:\n%s", r.err);
        char names[8][256];
        int n = child_list_files(&r, ".sprof", names, 8);
        assert_int_equal(n, 2 - drop);
        for (int i = 0; i < n; i++) {
            snprintf(line, sizeof line, ".%d.sprof", pid);
            int is_child = strstr(names[i], line) != NULL;
            tr_trace t;
            read_whole(path_in(&r, names[i]), &t);
            assert_int_equal(tr_count(&t, "spawn"), !is_child);
            assert_int_equal(tr_count(&t, "serve"), !is_child); /* a range: the parent's too */
            assert_int_equal(tr_count(&t, "before"), !is_child);
            assert_int_equal(tr_count(&t, "child_work"), is_child ? 3 : 0);
            assert_int_equal(t.end_missing, (uint64_t)is_child);
            tr_free(&t);
        }
        assert_int_equal(child_lines_with(r.err, "Trace file: "), 2 - drop); /* "drop": the parent's only */
        snprintf(line, sizeof line, "scopeprof: process %d (forked from %d), its own table\n", pid, r.pid);
        if (!strstr(r.err, line)) fail_msg("no '%s' over the child's table:\n%s", line, r.err);
        snprintf(line, sizeof line, ".%d.sprof': Permission denied (SCOPEPROF_OUTPUT sets the path); this process "
                                    "runs as uid ", pid);
        if (child_lines_with(r.err, line) != drop) fail_msg("stderr:\n%s", r.err);
        child_free(&r);
    }
}

/* A forked child that ends with _exit() (Redis's BGSAVE child) runs no
 * exit handler: it leaves no file ("bare"). PROFILE_FINISH() before it
 * does what the exit does: its file, whole (END), and its table; a scope
 * after it is not kept. */
static void test_finish_before_exit(void **state) {
    (void)state;
    for (int bare = 0; bare < 2; bare++) {
        child r;
        child_run_args(&r, "prog_life", bare ? ARGS("finish_exit", "bare") : ARGS("finish_exit"), NULL);
        expect_exit(&r, 0);
        int pid = child_pid_of(&r);
        char names[4][256], want[64];
        int n = child_list_files(&r, ".sprof", names, 4);
        assert_int_equal(n, 2 - bare);
        snprintf(want, sizeof want, "scopeprof: process %d (forked from %d), its own table", pid, r.pid);
        assert_int_equal(child_lines_with(r.err, want), !bare);
        /* the range said closed by it, not by an exit; its END after it quiet */
        assert_int_equal(child_lines_with(r.err, "scopeprof: PROFILE_BEGIN(\"save\") at "), !bare);
        assert_int_equal(child_lines_with(r.err, "was still open when PROFILE_FINISH was called; closed there"), !bare);
        assert_int_equal(child_lines_with(r.err, "has no matching PROFILE_BEGIN"), 0);
        snprintf(want, sizeof want, ".%d.sprof", pid);
        for (int i = 0; i < n; i++) {
            if (!strstr(names[i], want)) continue;
            tr_trace t;
            read_whole(path_in(&r, names[i]), &t);
            assert_true(t.has_end);
            assert_int_equal(tr_count(&t, "child_work"), 3);
            assert_int_equal(tr_count(&t, "save"), 1); /* closed by PROFILE_FINISH */
            assert_int_equal(tr_count(&t, "after_finish") + tr_count(&t, "parent_work"), 0);
            tr_free(&t);
        }
        child_free(&r);
    }
}

/* The exit summary goes out in one write: processes that share a stream
 * (nginx's workers, an MPI job's ranks with SCOPEPROF_SUMMARY=all)
 * interleaved their tables line by line. A SOCK_SEQPACKET stderr keeps each
 * write a message (before: about one per line, 25 here). */
static void test_summary_one_write(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("summary_writes"), ENV("SCOPEPROF_OUTPUT=-"));
    expect_exit(&r, 0);
    assert_string_equal(r.out, "writes 1, table 1, trace 1\n");
    child_free(&r);
}

/* ==== Issue 5: ranks ========================================================== */

/* Run "rank" with `env` (output unset): one file named <prog>.rank<R>.<pid>.sprof
 * with R in its header; the exit table only if `summary`. */
static void expect_rank(const char *const *argv, const char *const *env, int rank, int summary) {
    child r;
    child_run_args(&r, "prog_life", argv, env);
    expect_exit(&r, 0);
    char names[8][256], want[64];
    assert_int_equal(child_list_files(&r, ".sprof", names, 8), 1);
    if (rank >= 0) snprintf(want, sizeof want, ".rank%d.%d.sprof", rank, r.pid);
    else snprintf(want, sizeof want, ".%d.sprof", r.pid);
    if (!strstr(names[0], want) || strncmp(names[0], "prog_life", 9) != 0)
        fail_msg("trace file '%s', want prog_life*%s", names[0], want);
    if (rank < 0) assert_null(strstr(names[0], ".rank"));
    tr_trace t;
    read_whole(path_in(&r, names[0]), &t);
    assert_int_equal(t.rank, rank >= 0 ? (uint32_t)rank : 0xFFFFFFFFu);
    assert_int_equal(tr_count(&t, "ranked"), 1);
    tr_free(&t);
    if (summaries(&r) != summary) fail_msg("%d exit tables, want %d:\n%s", summaries(&r), summary, r.err);
    child_free(&r);
}

static void test_rank_variables(void **state) {
    (void)state;
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "OMPI_COMM_WORLD_RANK=3"), 3, 0);
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "PMI_RANK=4"), 4, 0);
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "SLURM_PROCID=5"), 5, 0);
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "RANK=6"), 6, 0);
    /* Rank 0 prints; no rank at all prints and names no rank. */
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "RANK=0"), 0, 1);
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-"), -1, 1);
    /* The launchers' variables in the documented order of precedence. */
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "RANK=9", "OMPI_COMM_WORLD_RANK=1"), 1, 0);
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "RANK=9", "SLURM_PROCID=2"), 2, 0);
}

static void test_rank_summary_all_and_call(void **state) {
    (void)state;
    expect_rank(ARGS("rank"), ENV("SCOPEPROF_OUTPUT=-", "SLURM_PROCID=2", "SCOPEPROF_SUMMARY=all"), 2, 1);
    expect_rank(ARGS("rank", "set", "5"), ENV("SCOPEPROF_OUTPUT=-"), 5, 0);
    /* The call wins over the environment. */
    expect_rank(ARGS("rank", "set", "0"), ENV("SCOPEPROF_OUTPUT=-", "RANK=7"), 0, 1);
    /* An explicit output path gets the rank in its name, as the default one
     * (issue 23: ranks on different nodes never share a path), and says so
     * on rank 0; the header has the rank. */
    static const int ranks[] = {8, 0};
    for (int i = 0; i < 2; i++) {
        char var[32], want[512];
        snprintf(var, sizeof var, "PMI_RANK=%d", ranks[i]);
        child r;
        child_run_args(&r, "prog_life", ARGS("rank"), ENV(var));
        expect_exit(&r, 0);
        size_t l = strlen(r.trace); /* <dir>/trace.sprof */
        snprintf(want, sizeof want, "%.*s.rank%d.sprof", (int)(l - 6), r.trace, ranks[i]);
        assert_int_equal(access(r.trace, F_OK), -1);
        tr_trace t;
        read_whole(want, &t);
        assert_int_equal(t.rank, (uint32_t)ranks[i]);
        tr_free(&t);
        if ((ranks[i] == 0) != (strstr(r.err, "is shared by the ranks: each writes") != NULL))
            fail_msg("rank %d's stderr:\n%s", ranks[i], r.err);
        child_free(&r);
    }
    /* PROFILE_SET_RANK names an explicit path as the launcher's variable
     * does; after one, the file keeps the name it has, and a line says so
     * (the header has the call's rank). */
    for (int launcher = 0; launcher < 2; launcher++) {
        char want[512];
        child r;
        child_run_args(&r, "prog_life", ARGS("rank", "set", "4"), launcher ? ENV("PMI_RANK=6") : NULL);
        expect_exit(&r, 0);
        size_t l = strlen(r.trace);
        snprintf(want, sizeof want, "%.*s.rank%d.sprof", (int)(l - 6), r.trace, launcher ? 6 : 4);
        assert_int_equal(access(r.trace, F_OK), -1);
        tr_trace t;
        read_whole(want, &t);
        assert_int_equal(t.rank, 4);
        tr_free(&t);
        if (launcher != (strstr(r.err, "PROFILE_SET_RANK: the file was named for rank 6 and keeps its name") != NULL))
            fail_msg("stderr:\n%s", r.err);
        child_free(&r);
    }
    /* Under a schedule, the cycles' names take the rank as they do from a
     * launcher's variable (ranks sharing a file system never share one). */
    for (int launcher = 0; launcher < 2; launcher++) {
        char want[512];
        child r;
        child_run_args(&r, "prog_life", launcher ? ARGS("rank") : ARGS("rank", "set", "4"),
                       launcher ? ENV("SCOPEPROF_SCHEDULE=active=1", "PMI_RANK=4") : ENV("SCOPEPROF_SCHEDULE=active=1"));
        expect_exit(&r, 0);
        size_t l = strlen(r.trace);
        snprintf(want, sizeof want, "%.*s.rank4.cycle0001.sprof", (int)(l - 6), r.trace);
        tr_trace t;
        read_whole(want, &t);
        assert_int_equal(t.rank, 4);
        assert_int_equal(tr_count(&t, "ranked"), 1);
        tr_free(&t);
        child_free(&r);
    }
}

/* ==== Issue 6: output that cannot be written ================================== */

/* prog_life_off's "print": the program's own stdout and exit code. */
static char *unprofiled_print_out(void) {
    child r;
    child_run_ex(&r, "prog_life_off", 1, ARGS("print"), NULL);
    expect_exit(&r, 3);
    assert_string_equal(r.err, "");
    char *out = strdup(r.out);
    child_free(&r);
    return out;
}

/* Writing to `path` fails with `reason`: exactly one scopeprof line, naming
 * both; exit code and stdout as without the profiler; the table printed. */
static void expect_unwritable(const char *path, const char *reason, const char *want_out) {
    child r;
    char env[PATH_MAX + 32];
    snprintf(env, sizeof env, "SCOPEPROF_OUTPUT=%s", path);
    child_run_args(&r, "prog_life", ARGS("print"), ENV(env));
    expect_exit(&r, 3);
    assert_string_equal(r.out, want_out);
    if (child_lines_with(r.err, "scopeprof:") != 1) fail_msg("want one scopeprof line:\n%s", r.err);
    const char *l = strstr(r.err, "scopeprof:");
    const char *nl = strchr(l, '\n');
    char line[PATH_MAX + 512];
    snprintf(line, sizeof line, "%.*s", (int)(nl ? nl - l : (long)strlen(l)), l);
    if (!strstr(line, path) || !strstr(line, reason))
        fail_msg("the line '%s' does not name '%s' and '%s'", line, path, reason);
    assert_int_equal(summaries(&r), 1);
    char cells[16][64];
    int n = child_table_row(r.err, "printing", cells, 16);
    assert_true(n > 1);
    assert_string_equal(cells[n - 1], "10");
    child_free(&r);
}

static void test_full_disk(void **state) {
    (void)state;
    char *want = unprofiled_print_out();
    expect_unwritable("/dev/full", "No space left on device", want);
    free(want);
}

static void test_unwritable_paths(void **state) {
    (void)state;
    char *want = unprofiled_print_out();
    char dir[] = "/tmp/scopeprof-life-ro-XXXXXX", p[256];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/missing/sub/t.sprof", dir);
    expect_unwritable(p, "No such file or directory", want);
    snprintf(p, sizeof p, "%s/plain", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(p, sizeof p, "%s/plain/t.sprof", dir); /* a path through a regular file */
    expect_unwritable(p, "Not a directory", want);
    /* (A directory is no longer refused: the default name goes in it,
     * test_record's test_output_directory.) */
    if (geteuid() != 0) { /* root writes anywhere: only testable as a user */
        snprintf(p, sizeof p, "%s/ro", dir);
        assert_int_equal(mkdir(p, 0555), 0);
        snprintf(p, sizeof p, "%s/ro/t.sprof", dir);
        expect_unwritable(p, "Permission denied", want);
        snprintf(p, sizeof p, "%s/ro", dir);
        rmdir(p);
    }
    snprintf(p, sizeof p, "%s/plain", dir);
    unlink(p);
    rmdir(dir);
    free(want);
}

/* ==== Issue 6: signals and crashes ============================================ */

/* After the fault: a whole trace with every event closed before it. */
static void expect_fault_trace(const child *r) {
    tr_trace t;
    read_whole(r->trace, &t);
    assert_int_equal(tr_count(&t, "main_work"), 1000);
    assert_int_equal(tr_count(&t, "thread_work"), 1000);
    assert_int_equal(tr_count(&t, "open_at_signal"), 0); /* still open: not a whole scope */
    assert_int_equal(tr_scopes(&t), 2000);
    tr_free(&t);
    assert_string_equal(r->out, "before the fault\n");
    char msg[PATH_MAX + 64];
    snprintf(msg, sizeof msg, "trace written to '%s'", r->trace);
    assert_int_equal(child_lines_with(r->err, msg), 1);
}

/* The same fault without the profiler: the status to match. */
static int unprofiled_signal(const char *what) {
    child r;
    child_run_ex(&r, "prog_life_off", 1, ARGS("fault", what), NULL);
    assert_false(r.timed_out);
    assert_true(r.signaled);
    int sig = r.sig;
    child_free(&r);
    return sig;
}

/* SIGINT and SIGTERM write the trace and say where, then act as usual; a
 * run without a file, or whose file cannot be made, says no such thing. */
static void test_sigint_sigterm(void **state) {
    (void)state;
    static const int sigs[] = {SIGINT, SIGTERM};
    static const char *const names[] = {"SIGINT", "SIGTERM"};
    for (size_t i = 0; i < 2; i++) {
        char num[8], said[96];
        snprintf(num, sizeof num, "%d", sigs[i]);
        assert_int_equal(unprofiled_signal(num), sigs[i]);
        child r;
        child_run_args(&r, "prog_life", ARGS("fault", num), NULL);
        expect_killed(&r, sigs[i]);
        expect_fault_trace(&r);
        snprintf(said, sizeof said, "scopeprof: %s received; trace written to '", names[i]); /* which signal */
        assert_int_equal(child_lines_with(r.err, said), 1);
        child_free(&r);
        /* Opt-out: no handler, so nothing was written; same status. */
        child_run_args(&r, "prog_life", ARGS("fault", num), ENV("SCOPEPROF_SIGNALS=0"));
        expect_killed(&r, sigs[i]);
        assert_int_equal(access(r.trace, F_OK), -1);
        assert_int_equal(child_lines_with(r.err, "scopeprof:"), 0);
        child_free(&r);
        /* No file asked for: nothing said (the line named '' as written). */
        child_run_args(&r, "prog_life", ARGS("fault", num), ENV("SCOPEPROF_OUTPUT=none"));
        expect_killed(&r, sigs[i]);
        assert_int_equal(child_lines_with(r.err, "scopeprof:"), 0);
        child_free(&r);
        /* A file that cannot be made is not called written. */
        child_run_args(&r, "prog_life", ARGS("fault", num), ENV("SCOPEPROF_OUTPUT=no_such_dir/t.sprof"));
        expect_killed(&r, sigs[i]);
        snprintf(said, sizeof said, "scopeprof: %s received; the trace could not be written to '", names[i]);
        if (child_lines_with(r.err, said) != 1 ||
            child_lines_with(r.err, "/no_such_dir/t.sprof'") != 1 ||
            child_lines_with(r.err, "trace written") != 0)
            fail_msg("stderr:\n%s", r.err);
        child_free(&r);
    }
}

static void test_abort(void **state) {
    (void)state;
    assert_int_equal(unprofiled_signal("abort"), SIGABRT);
    child r;
    child_run_args(&r, "prog_life", ARGS("fault", "abort"), NULL);
    expect_killed(&r, SIGABRT);
    expect_fault_trace(&r);
    child_free(&r);
}

static void test_segv(void **state) {
    (void)state;
    if (sanitized) skip(); /* ASan and TSan own SIGSEGV: the profiler leaves it to them */
    assert_int_equal(unprofiled_signal("segv"), SIGSEGV);
    child r;
    child_run_args(&r, "prog_life", ARGS("fault", "segv"), NULL);
    expect_killed(&r, SIGSEGV);
    expect_fault_trace(&r);
    child_free(&r);
}

/* ==== Issue 17: signals while the lock is held; SIGHUP, SIGPIPE, SIGQUIT ====== */

/* SIGTERM while thread W holds the registry's lock (it is flushing): sent
 * to W itself (the handler interrupts the lock's holder) or to main (the
 * handler must not wait forever, nor give up). Either way a whole trace with
 * every event W closed (its count, kept in a shared file mapping). Before:
 * the handler's trylock failed and nothing more was written. */
static void expect_sig_locked(const char *who, const char *const *env) {
    child r;
    child_run_args(&r, "prog_life", ARGS("sig_locked", who), env);
    expect_killed(&r, SIGTERM);
    FILE *f = fopen(path_in(&r, "count.bin"), "rb");
    assert_non_null(f);
    uint64_t count = 0;
    assert_int_equal(fread(&count, sizeof count, 1, f), 1);
    fclose(f);
    tr_trace t;
    read_whole(r.trace, &t);
    if (tr_count(&t, "held_work") != count - 1)
        fail_msg("%s: %llu held_work events in the trace, the program closed %llu", who,
                 (unsigned long long)tr_count(&t, "held_work"), (unsigned long long)(count - 1));
    assert_true(count > 100000);
    assert_int_equal(tr_count(&t, "main_start"), 1);
    expect_no_duplicates(&t);
    tr_free(&t);
    char msg[PATH_MAX + 64];
    snprintf(msg, sizeof msg, "trace written to '%s'", r.trace);
    assert_int_equal(child_lines_with(r.err, msg), 1);
    child_free(&r);
}

static void test_signal_lock_held_by_target(void **state) {
    (void)state;
    expect_sig_locked("self", NULL);
}

/* With no background writer: W's flush then writes its whole round (1.6
 * MB) and holds the lock for milliseconds, as this case needs, so that W's
 * unlock is what writes the trace. A writer that drains at 1 MiB leaves
 * the flush little to do: main's flag could then come after W's unlock
 * had looked, or the writer's unlock could find it, and the trace was
 * written while W went on recording, without the events W closed
 * meanwhile (2-3 runs in 15-30 under TSan, 850-3,000 of 200,000-300,000
 * events; session 12). That is what a thread that keeps running while
 * another writes the trace gets, in any case; this test is about the
 * holder's unlock. */
static void test_signal_lock_held_by_other(void **state) {
    (void)state;
    expect_sig_locked("other", ENV("SCOPEPROF_WRITER=0"));
}

/* SIGHUP, SIGPIPE and SIGQUIT end the program as without the profiler, with
 * a whole trace. Before: no handler, no trace. */
static void test_hup_pipe_quit(void **state) {
    (void)state;
    static const int sigs[] = {SIGHUP, SIGPIPE, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char num[8];
        snprintf(num, sizeof num, "%d", sigs[i]);
        assert_int_equal(unprofiled_signal(num), sigs[i]);
        child r;
        child_run_args(&r, "prog_life", ARGS("fault", num), ENV("SCOPEPROF_SUMMARY=0"));
        expect_killed(&r, sigs[i]);
        expect_fault_trace(&r);
        child_free(&r);
    }
    /* `prog | head -1` once head has gone: a write to a pipe nobody reads. */
    child r;
    child_run_args(&r, "prog_life", ARGS("pipe"), NULL);
    expect_killed(&r, SIGPIPE);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "piped"), 100);
    tr_free(&t);
    child_free(&r);
}

/* ==== Issue 17: fork and the memory lock; the child's memory figures ========= */

/* A fork while another thread holds the memory lock: before, the child's
 * first PROFILE_ALLOC waited for it forever. */
static void test_fork_while_allocating(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("fork_alloc", "100"),
                   ENV("SCOPEPROF_OUTPUT=none", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_string_equal(r.out, "hung 0\n");
    child_free(&r);
}

/* The child's peak is what the child allocated, not the parent's 1 MiB; the
 * free of the parent's block is neither an event nor an unknown free. */
static void test_fork_memory_figures(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("fork_mem"), NULL);
    expect_exit(&r, 0);
    int pid = child_pid_of(&r);
    char name[64];
    snprintf(name, sizeof name, "trace.%d.sprof", pid);
    tr_trace t;
    read_whole(path_in(&r, name), &t);
    assert_int_equal(t.nmem, 1);
    assert_int_equal(t.mem[0].peak, 100);
    assert_int_equal(t.mem[0].final, 0);
    assert_int_equal(t.mem[0].unknown_frees, 0);
    uint64_t mem_events = 0;
    for (uint64_t i = 0; i < t.nev; i++) mem_events += (t.ev[i].depth & TR_MEM_FLAG) != 0;
    assert_int_equal(mem_events, 2); /* +100, -100 */
    tr_free(&t);
    /* Exactly one table said "Peak CPU memory: 100 b" (the child's); the
     * parent's says 1.00 Mb. */
    assert_int_equal(child_lines_with(r.err, "Peak CPU memory: 100 b"), 1);
    assert_int_equal(child_lines_with(r.err, "not recorded by PROFILE_ALLOC"), 0);
    child_free(&r);
}

/* ==== Issue 17: the trace descriptor; exec ===================================== */

/* The program takes the trace's descriptor number for a file of its own
 * (closing 3..1023, or dup2): its file holds only its 3000 bytes, and the
 * trace (reopened by its path) holds every event. Before: trace chunks went
 * into the program's file. */
static void test_trace_fd_taken(void **state) {
    (void)state;
    static const char *const how[] = {"close", "dup2"};
    for (int i = 0; i < 2; i++) {
        child r;
        child_run_args(&r, "prog_life", ARGS("fd_steal", how[i]), ENV("SCOPEPROF_SUMMARY=0"));
        expect_exit(&r, 0);
        struct stat st;
        assert_int_equal(stat(path_in(&r, "own.txt"), &st), 0);
        if (st.st_size != 3000) fail_msg("%s: own.txt has %lld bytes, the program wrote 3000", how[i], (long long)st.st_size);
        char *own = child_slurp(path_in(&r, "own.txt"));
        for (int k = 0; k < 3000; k++) assert_int_equal(own[k], 'p');
        free(own);
        tr_trace t;
        read_whole(r.trace, &t);
        assert_int_equal(tr_count(&t, "before"), 5000);
        assert_int_equal(tr_count(&t, "after"), 5000);
        tr_free(&t);
        child_free(&r);
    }
}

/* The trace's descriptor closed and its path given to another file: said
 * when it happens, and the summary's last line says the trace is lost
 * rather than give the other file's size as the trace's. */
static void test_trace_path_taken(void **state) {
    (void)state;
    child r;
    char line[128];
    child_run_args(&r, "prog_life", ARGS("fd_lost", "t.sprof"), ENV("SCOPEPROF_OUTPUT=t.sprof"));
    expect_exit(&r, 0);
    assert_int_equal(child_lines_with(r.err, "was closed and its path no longer names it"), 1);
    snprintf(line, sizeof line, "/t.sprof (lost: the path names another file now)");
    if (child_lines_with(r.err, line) != 1) fail_msg("no '%s' line:\n%s", line, r.err);
    assert_int_equal(child_lines_with(r.err, "/t.sprof (6 b"), 0);
    child_free(&r);
}

/* A program that execs itself (same pid): the first image's flushed trace
 * is kept; the second image writes NAME.exec1.sprof. Explicit path and
 * default path. Before: the second image truncated the first's file. */
static void test_reexec_keeps_trace(void **state) {
    (void)state;
    for (int dflt = 0; dflt < 2; dflt++) {
        child r;
        child_run_args(&r, "prog_life", ARGS("reexec", "1"),
                       dflt ? ENV("SCOPEPROF_OUTPUT=-", "SCOPEPROF_SUMMARY=0") : ENV("SCOPEPROF_SUMMARY=0"));
        expect_exit(&r, 0);
        char first[64], second[64];
        if (dflt) {
            snprintf(first, sizeof first, "prog_life" VARIANT ".%d.sprof", r.pid);
            snprintf(second, sizeof second, "prog_life" VARIANT ".%d.exec1.sprof", r.pid);
        } else {
            snprintf(first, sizeof first, "trace.sprof");
            snprintf(second, sizeof second, "trace.exec1.sprof");
        }
        tr_trace t;
        /* The first image never finished (exec runs no exit handler): its
         * streamed part, whole chunks, no END. */
        if (!tr_read(path_in(&r, first), &t)) fail_msg("%s: %s", first, t.err);
        assert_int_equal(tr_count(&t, "first_image"), 5000);
        assert_int_equal(tr_count(&t, "second_image"), 0);
        tr_free(&t);
        read_whole(path_in(&r, second), &t);
        assert_int_equal(tr_count(&t, "second_image"), 3);
        assert_int_equal(tr_count(&t, "first_image"), 0);
        assert_int_equal(t.pid, r.pid);
        tr_free(&t);
        child_free(&r);
    }
}

/* ==== Issue 17: scopes open at pthread_exit / pthread_cancel; dead threads ==== */

/* Scopes a thread leaves by pthread_exit or cancellation never close (no
 * cleanup runs for C frames): each such thread is named on stderr with the
 * number of scopes lost. Before: dropped without a word. */
static void test_thread_ends_inside_scopes(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("exit_open"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_int_equal(child_lines_with(r.err, "(pthread_exit or pthread_cancel) inside 1 open scope(s)"), 2);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "inner"), 5);
    tr_free(&t);
    child_free(&r);
}

/* exit() called inside scopes: they never close (their starts are on the
 * stack), and one line says so, naming the thread; the table is printed.
 * Inside a range as well (CoMD's MPI_Abort inside its "loop"): the range
 * is closed at exit and recorded, so only the two scopes are missing, in
 * the line and in the file (before: 3, the range counted as open too). */
static void test_exit_inside_scopes(void **state) {
    (void)state;
    for (int range = 0; range < 2; range++) {
        child r;
        child_run_args(&r, "prog_life", range ? ARGS("exit_in_scopes", "range") : ARGS("exit_in_scopes"), NULL);
        expect_exit(&r, 0);
        assert_int_equal(child_lines_with(r.err, "scopeprof:"), 1 + range);
        assert_int_equal(child_lines_with(r.err, "scopeprof: PROFILE_BEGIN(\"loop\") at "), range);
        assert_int_equal(child_lines_with(r.err, "scopeprof: the program ended inside 2 open scope(s) of thread "), 1);
        assert_int_equal(child_lines_with(r.err, "(exit or MPI_Abort called in them, or a range's END there): they are not in the trace or the table"), 1);
        tr_trace t;
        read_whole(r.trace, &t);
        assert_int_equal(tr_count(&t, "before"), 1);
        assert_int_equal(tr_count(&t, "loop"), range);
        assert_int_equal(tr_count(&t, "outer") + tr_count(&t, "inner"), 0);
        assert_int_equal(t.end_missing, 2);
        tr_free(&t);
        child_free(&r);
    }
}

/* Another thread inside scopes when the program ends (a worker blocked in
 * its loop): one line counts them, naming a thread; the trace holds what
 * closed. Before: nothing said. */
static void test_exit_with_scopes_open_elsewhere(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("open_elsewhere"), NULL);
    expect_exit(&r, 0);
    assert_int_equal(child_lines_with(r.err, "scopeprof:"), 1);
    assert_int_equal(child_lines_with(r.err, "scopeprof: 2 scope(s) were still open on 1 other thread(s) when the "
                                              "program ended (thread "), 1);
    assert_int_equal(child_lines_with(r.err, "a scope is recorded when it closes, so they are not in the trace or "
                                              "the table"), 1);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "main_work"), 1);
    assert_int_equal(tr_count(&t, "worker_loop") + tr_count(&t, "wait"), 0);
    assert_int_equal(t.end_missing, 2); /* and the file says it lacks them */
    tr_free(&t);
    child_free(&r);
}

/* The exit summary keeps a slot per thread state, and a gone thread's state
 * is reused: 1000 threads one after another, each written before the next
 * starts, use one slot. The trace still tells them apart (1000 threads,
 * each with its scopes). Before: a slot per thread ever started (1024). */
static void test_summary_slots_reused(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("thread_slots", "1000"), ENV("SCOPEPROF_SUMMARY=1"));
    expect_exit(&r, 0);
    unsigned threads = 0, slots = 0;
    if (sscanf(r.out, "threads %u summary_slots %u", &threads, &slots) != 2) fail_msg("stdout: '%s'", r.out);
    assert_int_equal(threads, 1000);
    if (slots > 2) fail_msg("%u summary slots for 1000 threads that never overlapped", slots);
    /* The summary's counts are whole (its self-time stacks were reset). */
    const char *row = strstr(r.err, "short_outer");
    const char *eol = row ? strchr(row, '\n') : NULL;
    const char *calls = row ? strstr(row, " 1000 ") : NULL;
    if (!calls || !eol || calls > eol) fail_msg("summary (stderr):\n%s", r.err);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(t.nthreads, 1000);
    assert_int_equal(tr_count(&t, "short_outer"), 1000);
    uint64_t *seen = (uint64_t *)calloc(1000, sizeof *seen);
    for (uint64_t i = 0; i < t.nev; i++) {
        assert_true(t.ev[i].thread < 1000);
        seen[t.ev[i].thread]++;
    }
    for (int i = 0; i < 1000; i++) assert_int_equal(seen[i], 2); /* outer and inner */
    free(seen);
    tr_free(&t);
    child_free(&r);
}

/* Threads that are gone and written cost nothing: 20000 short threads peak
 * at about the RSS of 2000 (each used to keep ~390 bytes for good: 7 MB
 * more). Sanitizers change RSS: plain only. */
static void test_dead_threads_freed(void **state) {
    (void)state;
    if (sanitized) skip();
    long rss[2];
    static const char *const n[2] = {"2000", "20000"};
    for (int i = 0; i < 2; i++) {
        child r;
        child_run_args(&r, "prog_life", ARGS("threads", n[i]),
                       ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_SUMMARY=0", "SCOPEPROF_OUTPUT=none",
                           "LIFE_PRINT_HWM=1"));
        expect_exit(&r, 0);
        if (sscanf(r.out, "VmHWM: %ld kB", &rss[i]) != 1) fail_msg("no VmHWM line: '%s'", r.out);
        child_free(&r);
    }
    printf("peak RSS: %ld KiB (2000 threads), %ld KiB (20000)\n", rss[0], rss[1]);
    if (rss[1] - rss[0] > 2048)
        fail_msg("peak RSS %ld KiB for 20000 threads, %ld KiB for 2000", rss[1], rss[0]);
}

/* ==== Issue 17: PROFILE_SCOPE in the program's signal handler ================= */

/* The handler used to interrupt main while it held the lock (flushing) and
 * need a new buffer: it waited for its own thread forever. Signals are now
 * held while a thread holds the lock, so the handler runs between locked
 * sections: nothing hangs and nothing is lost. */
static void test_scope_in_signal_handler(void **state) {
    (void)state;
    /* Under TSan too: it reports a malloc in a signal handler (a new buffer
     * used to come from malloc there). */
    child r;
    /* A 1 MiB budget bounds what each of main's flushes writes: the worker
     * no longer waits for the registry lock at each buffer, and behind a
     * 64 MiB queue 300 back-to-back flushes took over 20 s under ASan. */
    child_run_args(&r, "prog_life", ARGS("handler_scope"), ENV("SCOPEPROF_SUMMARY=0", "SCOPEPROF_BUFFER_MB=1"));
    expect_exit(&r, 0);
    unsigned long long workers = 0;
    int alarms = 0;
    if (sscanf(r.out, "worker %llu alarms %d", &workers, &alarms) != 2) fail_msg("stdout: '%s'", r.out);
    assert_true(alarms >= 300);
    /* The background writer finds the lock taken by main's flushes and may
     * fall behind the worker, which is said (nothing is lost); nothing else. */
    assert_int_equal(child_lines_with(r.err, "scopeprof:"), child_lines_with(r.err, "fell behind"));
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "worker"), workers);
    assert_int_equal(tr_count(&t, "in_handler"), 5000ull * (unsigned)alarms);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

/* A handler's scopes that land inside malloc (main's loop, workers' loops)
 * and need the profiler's slow paths there: a new site (PROFILE_SCOPE_DYN,
 * growing the site table and the names' hash), a thread's first scope (its
 * state and first buffer), new buffers. Before, they called malloc inside
 * malloc: glibc's arena lock, taken by the free the handler interrupted,
 * deadlocked the thread (killed after the timeout). Now none of those paths
 * allocates with malloc: every signal is handled and every scope recorded,
 * with no message. Under TSan, a malloc in a handler would be reported. */
static void test_scope_in_handler_inside_malloc(void **state) {
    (void)state;
    /* Signals wait for the sanitizers' runtimes (TSan delivers them at its
     * next interceptor): fewer there, to stay well within the timeout. */
    const char *n = sanitized ? "200" : "400";
    child r;
    /* With the background writer writing every millisecond: the handler's
     * new sites meet it holding the registry lock (see test_handler_scope_
     * while_writer_in_malloc for that case made certain). */
    child_run_args(&r, "prog_life", ARGS("handler_malloc", n), ENV("SCOPEPROF_SUMMARY=0", "SCOPEPROF_FLUSH_MS=1"));
    expect_exit(&r, 0);
    unsigned long long loops = 0;
    int handled = 0, sent = 0;
    if (sscanf(r.out, "main %llu handled %d sent %d", &loops, &handled, &sent) != 3)
        fail_msg("stdout: '%s'", r.out);
    assert_int_equal(sent, atoi(n));
    assert_int_equal(handled, sent);
    assert_int_equal(child_lines_with(r.err, "scopeprof:"), 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "main_loop"), loops);
    assert_int_equal(tr_count(&t, "sig_outer"), (uint64_t)handled);
    assert_int_equal(tr_count(&t, "sig_inner"), 30ull * (unsigned)handled);
    assert_int_equal(tr_count_prefix(&t, "sig_dyn_"), (uint64_t)handled);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

/* A handler's scope that needs a new site, in a thread it interrupted
 * inside malloc, while the background writer holds the registry lock and
 * waits in malloc for the lock that thread holds (prog_hlock.c: every
 * allocation behind one mutex, so the moment is made certain rather than
 * waited for). Before, registration took the registry lock and this
 * deadlocked on the first such round (killed by its alarm); the same
 * happened by chance with real allocators (ASan's: 1 run in about 4 of
 * handler_malloc). Now sites are registered under a lock of their own that
 * no holder keeps across malloc. */
static void test_handler_scope_while_writer_in_malloc(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_hlock", ARGS("20"), ENV("SCOPEPROF_SUMMARY=0", "SCOPEPROF_FLUSH_MS=1"));
    expect_exit(&r, 0);
    int rounds = 0, caught = 0, handled = 0;
    if (sscanf(r.out, "rounds %d caught %d handled %d", &rounds, &caught, &handled) != 3)
        fail_msg("stdout: '%s'", r.out);
    assert_int_equal(handled, rounds);
    /* The deadlock's condition was met (the writer gets 0.5 s a round to
     * reach it; it needs about 1 ms), so the test tested it. */
    if (caught < rounds / 2) fail_msg("the writer blocked in malloc holding the registry lock in %d of %d rounds", caught, rounds);
    assert_int_equal(child_lines_with(r.err, "scopeprof:"), 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count_prefix(&t, "round_fresh_"), (uint64_t)rounds);
    assert_int_equal(tr_count_prefix(&t, "sig_fresh_"), (uint64_t)handled);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

/* ==== Issue 17: out of memory ================================================== */

/* A program that copes with malloc failing: the profiler stops recording,
 * says so once, and the program runs to its end. "later": what was recorded
 * before is in the trace. Before: "out of memory at start-up", abort (134).
 * Sanitizers reserve terabytes of address space: plain only. */
static void test_out_of_memory(void **state) {
    (void)state;
    if (sanitized) skip();
    for (int later = 0; later < 2; later++) {
        child r;
        child_run_args(&r, "prog_life", ARGS("oom", later ? "later" : "start"), ENV("SCOPEPROF_SUMMARY=0"));
        expect_exit(&r, 0);
        assert_string_equal(r.out, "coped\n");
        int stopped = child_lines_with(r.err, "scopeprof: out of memory: recording stopped");
        if (!later && stopped != 1) fail_msg("want one out-of-memory line:\n%s", r.err);
        if (later) {
            /* The thread has its buffer: past the budget it is written and
             * reused, so recording may well go on; if it stopped, it said
             * so once and kept what came before. */
            tr_trace t;
            read_whole(r.trace, &t);
            assert_int_equal(tr_count(&t, "before"), 100);
            if (stopped == 0) {
                /* (a site that could not be registered under pressure is
                 * recorded against site 0, "<unknown>", as documented) */
                assert_int_equal(tr_count(&t, "under_pressure") + tr_count(&t, "<unknown>"), 10000);
                assert_int_equal(tr_count(&t, "after"), 100);
            } else {
                assert_int_equal(stopped, 1);
            }
            tr_free(&t);
        }
        child_free(&r);
    }
}

/* ==== Issue 6: ways out of a program ========================================== */

static void test_exit_from_thread(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("exit_thread"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 7);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "b_work"), 500);
    assert_true(tr_count(&t, "a_spin") >= 5000);
    assert_true(tr_count(&t, "main_spin") >= 5000);
    assert_int_equal(t.nthreads, 3);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

static void test_underscore_exit(void **state) {
    (void)state;
    child r;
    /* A 1 MiB budget: full buffers were streamed before _exit (and only
     * those: the writer's timed flush, which also writes partial buffers,
     * is set an hour away). */
    child_run_args(&r, "prog_life", ARGS("_exit"),
                   ENV("SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_FLUSH_MS=3600000"));
    expect_exit(&r, 9);
    assert_string_equal(r.err, ""); /* no crash, no table: no exit handler ran */
    tr_trace t;
    /* The background writer may have been inside a write when _exit ended
     * the process: the file may end in a cut chunk, which readers skip
     * (FORMAT.md); everything before it must read. */
    if (!tr_read(r.trace, &t) && strncmp(t.err, "bad or cut chunk", 16) != 0 &&
        strncmp(t.err, "partial chunk header", 20) != 0)
        fail_msg("streamed part unreadable: %s", t.err);
    assert_false(t.has_end);
    uint64_t n = tr_count(&t, "quick");
    assert_true(n > 0 && n < 300000);
    assert_int_equal(n % 4094, 0); /* whole buffers only (SCOPEPROF_EVENTS_PER_CHUNK's default) */
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

static void test_pthread_exit_main(void **state) {
    (void)state;
    /* gcc 12's TSan never ends a process whose main thread called pthread_exit
     * (four lines without the profiler hang the same way): plain and ASan only. */
    if (strcmp(VARIANT, "_tsan") == 0) skip();
    child r;
    child_run_args(&r, "prog_life", ARGS("pthread_exit"), NULL);
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "main_work"), 100);
    assert_int_equal(tr_count(&t, "late_work"), 4000);
    tr_free(&t);
    assert_int_equal(summaries(&r), 1);
    char cells[16][64];
    int n = child_table_row(r.err, "late_work", cells, 16);
    assert_true(n > 1);
    assert_string_equal(cells[n - 1], "4000");
    child_free(&r);
}

static void expect_dlclose(const char *order, int main_first) {
    child r;
    child_run_args(&r, "prog_life", ARGS("dlclose", order), NULL);
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "lib_scope"), 4);
    assert_int_equal(tr_count(&t, "lib_dyn_0"), 1);
    assert_int_equal(tr_count(&t, "lib_dyn_1"), 1);
    assert_int_equal(tr_count(&t, "lib_dyn_2"), 1);
    assert_int_equal(tr_count(&t, "after_close"), 3);
    assert_int_equal(tr_count(&t, "main_first"), main_first);
    assert_int_equal(tr_scopes(&t), 10 + main_first);
    tr_free(&t);
    assert_int_equal(summaries(&r), 1);
    char cells[16][64];
    int n = child_table_row(r.err, "lib_scope", cells, 16);
    assert_true(n > 1);
    assert_string_equal(cells[n - 1], "4");
    assert_true(child_table_row(r.err, "lib_dyn_2", cells, 16) > 1);
    child_free(&r);
}

static void test_dlclose(void **state) {
    (void)state;
    expect_dlclose("lib_first", 0);
    expect_dlclose("main_first", 1);
}

static void test_2000_threads(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("threads", "2000"), ENV("SCOPEPROF_BUFFER_MB=2"));
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "short_outer"), 2000);
    assert_int_equal(tr_count(&t, "short_inner"), 2000);
    assert_int_equal(t.nthreads, 2000);
    /* On every thread: inner (depth 1) closed first, then outer (depth 0). */
    uint64_t *seen = (uint64_t *)calloc(2000, sizeof *seen);
    for (uint64_t i = 0; i < t.nev; i++) {
        const tr_event *e = &t.ev[i];
        assert_true(e->thread < 2000);
        int outer = strcmp(tr_name(&t, e->site), "short_outer") == 0;
        assert_int_equal(e->depth, outer ? 0 : 1);
        assert_int_equal(seen[e->thread]++, outer ? 1 : 0);
    }
    free(seen);
    tr_free(&t);
    /* Bounded memory: 2000 thread buffers of ~96 KiB would be ~190 MiB; with a
     * 2 MiB budget they are recycled. Sanitizers change RSS: plain only. */
    if (!sanitized && r.maxrss_kb > 48 * 1024)
        fail_msg("peak RSS %ld KiB with a 2 MiB buffer budget", r.maxrss_kb);
    child_free(&r);
}

/* ==== Issue 6: extremes ======================================================= */

static int by_depth(const void *a, const void *b) {
    uint32_t x = ((const tr_event *)a)->depth, y = ((const tr_event *)b)->depth;
    return x < y ? -1 : x > y;
}

/* Printed times have 3 decimals in their unit. */
static void expect_time_near(const char *printed, double want_us, const char *what) {
    double us = child_time_us(printed);
    double tol = want_us * 1.5e-3 + 1e-3 + (want_us >= 1e6 ? 1e3 : want_us >= 1e3 ? 1.0 : 1e-3);
    if (us < 0 || us - want_us > tol || want_us - us > tol)
        fail_msg("%s: printed %s, the trace says %.3fus", what, printed, want_us);
}

/* prog_life clock [late]: the scope "timed" converts to within the reads'
 * jitter of the program's own CLOCK_MONOTONIC around it. With `late`, the
 * rate must be measured from the program's start: 30 ms before the
 * registry's pair (where the ticks are the TSC). */
static void clock_case(const char *late) {
    child r;
    if (late) child_run_args(&r, "prog_life", ARGS("clock", late), NULL);
    else child_run_args(&r, "prog_life", ARGS("clock"), NULL);
    expect_exit(&r, 0);
    const char *line = strstr(r.out, "clock ");
    unsigned long long t0 = 0, t1 = 0;
    if (!line || sscanf(line, "clock %llu %llu", &t0, &t1) != 2) fail_msg("no clock line: %s", r.out);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "timed"), 1);
    if (late) {
        const char *from = strstr(r.out, "from ");
        unsigned long long from_ns = 0, ns0 = 0;
        int tsc = -1;
        if (!from || sscanf(from, "from %llu %llu %d", &from_ns, &ns0, &tsc) != 3) fail_msg("no from line: %s", r.out);
        if (tsc == 1 && from_ns + 25000000u > ns0)
            fail_msg("the rate is measured from %llu ns, the registry's pair is at %llu: not the program's start",
                     from_ns, ns0);
    }
    const uint64_t slack = 20000; /* ns: the reads' jitter, far under 1% of 3 ms */
    for (uint64_t i = 0; i < t.nev; i++) {
        const tr_event *e = &t.ev[i];
        if (strcmp(tr_name(&t, e->site), "timed") != 0) continue;
        if (e->start + slack < t0 || e->end > t1 + slack || e->end - e->start + slack < 3000000u)
            fail_msg("'timed' at [%llu, %llu] ns, the program's clock around it [%llu, %llu]",
                     (unsigned long long)e->start, (unsigned long long)e->end, t0, t1);
    }
    tr_free(&t);
    child_free(&r);
}

/* A run shorter than 20 ms: the clock rate is measured at the exit, over
 * the whole run, without waiting for 20 ms to pass (clock.h). The trace's
 * times are still the program's own CLOCK_MONOTONIC: a rate 1% off would put
 * the 3 ms scope's end 30 us out. */
static void test_short_run_clock(void **state) {
    (void)state;
    clock_case(NULL);
}

/* Profiling that starts 30 ms into the program, written at once: the rate
 * is measured from the program's start, so the first write need not wait
 * (the pair it is measured from fails without the constructor; a rate
 * taken from the start's nanoseconds but the registry's ticks puts "timed"
 * ten times too long). */
static void test_late_start_clock(void **state) {
    (void)state;
    clock_case("late");
}

static void test_deep_recursion(void **state) {
    (void)state;
    enum { DEPTH = 10000 };
    child r;
    /* The printed times are checked against raw times computed from the
     * trace: no overhead compensation (its arithmetic is test_agg's). */
    static const char *const raw[] = {"SCOPEPROF_COMPENSATE=0", NULL};
    child_run_args(&r, "prog_life", ARGS("deep", "10000"), raw);
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "rec"), DEPTH);
    assert_int_equal(tr_count(&t, "deep_outer"), 1);
    /* Depths 4096 and beyond do not fit a 16-byte record: those 5905 levels
     * (and any scope of 2^27 ticks or more) take the 32-byte form, all the
     * others 16. */
    uint64_t want_long = 0;
    for (uint64_t i = 0; i < t.nev; i++) want_long += t.ev[i].depth >= 4096 || t.ev[i].ticks >= (1u << 27);
    assert_true(want_long >= DEPTH + 1 - 4096);
    assert_int_equal(t.long_records, want_long);
    /* Level d (depth d, 0 = deep_outer) holds level d+1; self = total - child. */
    tr_event *lv = (tr_event *)malloc(t.nev * sizeof *lv);
    memcpy(lv, t.ev, t.nev * sizeof *lv);
    qsort(lv, t.nev, sizeof *lv, by_depth);
    double rec_total = 0, rec_self = 0;
    for (uint32_t d = 0; d <= DEPTH; d++) {
        assert_int_equal(lv[d].depth, d);
        uint64_t dur = lv[d].end - lv[d].start, child = 0;
        if (d < DEPTH) {
            assert_true(lv[d + 1].start >= lv[d].start && lv[d + 1].end <= lv[d].end);
            child = lv[d + 1].end - lv[d + 1].start;
        }
        if (d > 0) {
            rec_total += (double)dur / 1e3;
            rec_self += (double)(dur - child) / 1e3;
        }
    }
    double outer_self = (double)((lv[0].end - lv[0].start) - (lv[1].end - lv[1].start)) / 1e3;
    free(lv);
    tr_free(&t);
    /* The table: one row "rec", 10000 calls, sums of the per-level values. */
    char cells[16][64];
    int n = child_table_row(r.err, "rec", cells, 16);
    assert_true(n > 1);
    assert_string_equal(cells[n - 1], "10000");
    expect_time_near(cell(&r, "rec", "Self CPU"), rec_self, "rec self");
    expect_time_near(cell(&r, "rec", "CPU total"), rec_total, "rec total");
    expect_time_near(cell(&r, "deep_outer", "Self CPU"), outer_self, "deep_outer self");
    child_free(&r);
}

/* A recursion deeper than the exit table's levels: a thread keeps 65536
 * (SCOPEPROF__SUM_MAX_DEPTH), so the scopes from depth 65535 on
 * (deep_outer is depth 0) have no level for their children. The self times still add up to deep_outer's total
 * (before: each such scope took its total as self, 50 s of self time in a
 * 59 ms run), and one line counts them. */
static void test_deeper_than_levels(void **state) {
    (void)state;
    enum { DEPTH = 140000 };
    /* ThreadSanitizer keeps stacks of at most 65536 frames (its stack
     * depot's CHECK fails past that): a single-threaded case, run plain and
     * under ASan. */
    if (strcmp(VARIANT, "_tsan") == 0) skip();
    child r;
    static const char *const raw[] = {"SCOPEPROF_COMPENSATE=0", NULL};
    child_run_args(&r, "prog_life", ARGS("very_deep", "140000"), raw);
    expect_exit(&r, 0);
    char want[160];
    snprintf(want, sizeof want, "scopeprof: %d scope(s) were 65535 or more deep, past the levels the exit table "
             "keeps", DEPTH - 65535 + 1);
    assert_int_equal(child_lines_with(r.err, want), 1);
    const char *total = strstr(r.err, "Self CPU time total: ");
    char printed[32];
    assert_non_null(total);
    assert_int_equal(sscanf(total + strlen("Self CPU time total: "), "%31s", printed), 1);
    expect_time_near(printed, child_time_us(cell(&r, "deep_outer", "CPU total")), "the self times' sum");
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "rec"), DEPTH);
    tr_free(&t);
    child_free(&r);
}

/* A 150 ms scope is too long for a short buffer record (2^27 ticks: 45 ms
 * at 3 GHz, 134 ms of a clock in ns): it and its parent are buffered and
 * written in 32 bytes (format 4 writes the buffer as it is), between short
 * records. Every event keeps its times and nesting. */
static void test_long_scope(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("long"), NULL);
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(t.nev, 8);
    uint64_t want_long = 0;
    for (uint64_t i = 0; i < t.nev; i++) want_long += t.ev[i].ticks >= (1u << 27);
    assert_int_equal(want_long, 2); /* nap and long_outer */
    assert_int_equal(t.long_records, 2);
    assert_int_equal(t.event_bytes, 8 * 16 + 2 * 16);
    static const char *const order[] = {"before", "before", "before", "nap",
                                        "after",  "after",  "after",  "long_outer"};
    for (int i = 0; i < 8; i++) {
        const tr_event *e = &t.ev[i];
        assert_string_equal(tr_name(&t, e->site), order[i]);
        assert_int_equal(e->depth, i == 7 ? 0 : 1);
        assert_true(e->start >= t.ev[7].start && e->end <= t.ev[7].end);
        if (i > 0 && i < 7) assert_true(e->start >= t.ev[i - 1].end);
    }
    uint64_t nap = t.ev[3].end - t.ev[3].start;
    assert_true(nap >= 150000000u && nap < 2000000000u);
    /* 150 ms asleep in a scope, a few ms of CPU: the exit says the self
     * times hold more than the process used, and how much it used. */
    assert_int_equal(child_lines_with(r.err, "The self times add up to more than the process used: "), 1);
    assert_int_equal(child_lines_with(r.err, " of CPU (user + sys, all threads, the writer's included); the rest is "
                                             "the threads' waits and preemption inside scopes"), 1);
    tr_free(&t);
    child_free(&r);
}

/* A relative SCOPEPROF_OUTPUT and a chdir after the first scope: the trace
 * is written where the path pointed when profiling started (the path that
 * was claimed), not in the new working directory. */
static void test_chdir_relative_output(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("chdir"), ENV("SCOPEPROF_OUTPUT=rel.sprof", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    tr_trace t;
    read_whole(path_in(&r, "rel.sprof"), &t);
    assert_int_equal(tr_count(&t, "before"), 1);
    assert_int_equal(tr_count(&t, "after"), 2);
    tr_free(&t);
    char sub[PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/sub/rel.sprof", r.dir);
    assert_int_equal(access(sub, F_OK), -1);
    rmdir(path_in(&r, "sub"));
    child_free(&r);
}

/* Whether the line of text at `line` (NULL: none) holds `needle`. */
static int line_holds(const char *line, const char *needle) {
    if (!line) return 0;
    const char *nl = strchr(line, '\n'), *at = strstr(line, needle);
    return at && (!nl || at < nl);
}

static void test_64k_name(void **state) {
    (void)state;
    enum { LEN = 64 * 1024 };
    child r;
    child_run_args(&r, "prog_life", ARGS("bigname"), NULL);
    expect_exit(&r, 0);
    assert_int_equal(child_lines_with(r.err, "scopeprof:"), 0);
    char *name = (char *)malloc(LEN + 1);
    for (int i = 0; i < LEN; i++) name[i] = i == 0 ? 'N' : (char)('a' + i % 26);
    name[LEN] = 0;
    /* In the file: the whole name. */
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, name), 2);
    assert_int_equal(tr_count(&t, "small"), 1);
    tr_free(&t);
    /* In the table: cut with "...", the row intact, no line of 64 KiB. A
     * note under the table that names it (its compensated time clamped, as
     * on a loaded machine, or its calls as short as an empty scope's), and
     * the line on dense scopes, cut it the same way. */
    char cut[64];
    snprintf(cut, sizeof cut, "%.52s...", name);
    const char *clamped = strstr(r.err, "Overhead compensation clamped"), *short_calls = strstr(r.err, "Mostly the profiler's own cost");
    const char *dense = strstr(r.err, "Dense scopes: "); /* empty scopes: the row of most calls is named */
    assert_int_equal(child_lines_with(r.err, cut),
                     1 + line_holds(clamped, cut) + line_holds(short_calls, cut) + line_holds(dense, cut));
    char cells[16][64];
    int n = child_table_row(r.err, cut, cells, 16);
    assert_true(n > 1);
    assert_string_equal(cells[n - 1], "2");
    for (const char *s = r.err; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        assert_true(len < 400);
        s += len + (nl ? 1 : 0);
    }
    free(name);
    child_free(&r);
}

/* ==== Issue 6: two processes, one SCOPEPROF_OUTPUT; flushing while recording == */

/* fork + exec with an explicit SCOPEPROF_OUTPUT: the exec'd child reads the
 * same SCOPEPROF_OUTPUT as its parent, finds the path claimed by the parent
 * and writes trace.<pid>.sprof (as for fork without exec); the parent's file
 * is intact. Before the claim, the child truncated the parent's file. */
static void test_fork_exec_explicit_output(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("forkexec"), NULL);
    expect_exit(&r, 0);
    int pid = child_pid_of(&r);
    expect_parent_file(r.trace);
    char child_name[64];
    snprintf(child_name, sizeof child_name, "trace.%d.sprof", pid);
    expect_child_file(path_in(&r, child_name), pid, "execd_work", 4);
    child_free(&r);
}

/* PROFILE_FLUSH while threads start and cross chunk boundaries: every event
 * exactly once. */
static void test_flush_while_recording(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_life", ARGS("flush_storm"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_null(strstr(r.err, "ThreadSanitizer"));
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "storm"), 64 * 10000);
    expect_no_duplicates(&t);
    tr_free(&t);
    child_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mem_table),
        cmocka_unit_test(test_mem_sort_keys),
        cmocka_unit_test(test_mem_trace),
        cmocka_unit_test(test_wrap_malloc),
        cmocka_unit_test(test_schedule_unwritable_said_once),
        cmocka_unit_test(test_schedule_next_step_after_cycle),
        cmocka_unit_test(test_schedule_signal_outside_window),
        cmocka_unit_test(test_schedule_env_repeat),
        cmocka_unit_test(test_schedule_skip_first_repeat0),
        cmocka_unit_test(test_schedule_call),
        cmocka_unit_test(test_schedule_never_active),
        cmocka_unit_test(test_schedule_memory_peaks),
        cmocka_unit_test(test_schedule_bad),
        cmocka_unit_test(test_steps_chunk),
        cmocka_unit_test(test_fork_explicit_output), cmocka_unit_test(test_fork_schedule),
        cmocka_unit_test(test_scope_moved_thread),
        cmocka_unit_test(test_fork_default_output),
        cmocka_unit_test(test_fork_exec_default_output),
        cmocka_unit_test(test_fork_inside_scope),
        cmocka_unit_test(test_summary_one_write),
        cmocka_unit_test(test_finish_before_exit),
        cmocka_unit_test(test_rank_variables),
        cmocka_unit_test(test_rank_summary_all_and_call),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_unwritable_paths),
        cmocka_unit_test(test_sigint_sigterm),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_segv),
        cmocka_unit_test(test_exit_from_thread),
        cmocka_unit_test(test_underscore_exit),
        cmocka_unit_test(test_pthread_exit_main),
        cmocka_unit_test(test_dlclose),
        cmocka_unit_test(test_2000_threads),
        cmocka_unit_test(test_short_run_clock),
        cmocka_unit_test(test_late_start_clock),
        cmocka_unit_test(test_deep_recursion),
        cmocka_unit_test(test_deeper_than_levels),
        cmocka_unit_test(test_long_scope),
        cmocka_unit_test(test_64k_name),
        cmocka_unit_test(test_chdir_relative_output),
        cmocka_unit_test(test_fork_exec_explicit_output),
        cmocka_unit_test(test_flush_while_recording),
        cmocka_unit_test(test_signal_lock_held_by_target),
        cmocka_unit_test(test_signal_lock_held_by_other),
        cmocka_unit_test(test_hup_pipe_quit),
        cmocka_unit_test(test_fork_while_allocating),
        cmocka_unit_test(test_fork_memory_figures),
        cmocka_unit_test(test_trace_fd_taken),
        cmocka_unit_test(test_trace_path_taken),
        cmocka_unit_test(test_reexec_keeps_trace),
        cmocka_unit_test(test_thread_ends_inside_scopes),
        cmocka_unit_test(test_exit_inside_scopes),
        cmocka_unit_test(test_exit_with_scopes_open_elsewhere),
        cmocka_unit_test(test_dead_threads_freed),
        cmocka_unit_test(test_summary_slots_reused),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_scope_in_signal_handler),
        cmocka_unit_test(test_scope_in_handler_inside_malloc),
        cmocka_unit_test(test_handler_scope_while_writer_in_malloc),
    };
    return cmocka_run_group_tests_name("life" VARIANT, tests, NULL, NULL);
}
