/* Recording end to end: programs built with -DPROFILE_ENABLE (prog_*.c,
 * multi_*.c) run as child processes; the tests read the exit summary they
 * print on stderr and the trace file they write. Timing is never asserted,
 * only structure: counts, nesting, parent >= children, self + children =
 * total up to the table's rounding. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "child.h"
#include "trace.h"

#define MAXROWS 64

/* Assert that the summary has row `name` with `calls` calls; return it. */
static const child_row *expect_row(const child_row *rows, int n, const char *name, unsigned long calls) {
    const child_row *r = child_find_row(rows, n, name);
    if (!r) fail_msg("no row '%s' in the summary", name);
    if (r->calls != calls) fail_msg("row '%s': %lu calls, want %lu", name, r->calls, calls);
    assert_true(r->self_us <= r->total_us + 2e-3);
    return r;
}

/* Every event of site `child_name` lies inside an event of `parent_name` of
 * the same thread, one level up. */
static void expect_nested(const tr_trace *t, const char *child_name, const char *parent_name) {
    for (uint64_t i = 0; i < t->nev; i++) {
        const tr_event *c = &t->ev[i];
        if (strcmp(tr_name(t, c->site), child_name) != 0) continue;
        int found = 0;
        for (uint64_t j = 0; j < t->nev && !found; j++) {
            const tr_event *p = &t->ev[j];
            found = p->thread == c->thread && p->depth + 1 == c->depth &&
                    strcmp(tr_name(t, p->site), parent_name) == 0 && p->start <= c->start &&
                    c->end <= p->end;
        }
        if (!found) fail_msg("a '%s' event is not inside a '%s' event", child_name, parent_name);
    }
}

/* Every event of site `name` was recorded at depth `depth`. */
static void expect_depth(const tr_trace *t, const char *name, uint32_t depth) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++) {
        if (strcmp(tr_name(t, t->ev[i].site), name) != 0) continue;
        n++;
        if (t->ev[i].depth != depth)
            fail_msg("'%s' recorded at depth %u, want %u", name, t->ev[i].depth, depth);
        assert_true(t->ev[i].end >= t->ev[i].start);
    }
    assert_true(n > 0);
}

static void read_trace(const child *c, tr_trace *t) {
    if (!tr_read(c->trace, t)) fail_msg("trace file %s: %s", c->trace, t->err);
    assert_true(t->has_end);
    assert_int_equal(t->end_total, tr_end_expected(t));
}

/* prog_basic's summary rows, in the default layout. */
static int basic_rows(const child *c, child_row *rows) {
    int n = child_table_rows(c->err, rows, MAXROWS);
    assert_int_equal(child_lines_with(c->err, "Self CPU time total: "), 1);
    return n;
}

/* ---- 2. the basic program -------------------------------------------------- */

/* prog_basic's table and trace, under `env`. */
static void basic_summary(const char *const *env, int monotonic) {
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3); /* its own exit code, untouched */
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0); /* no warnings */
    assert_int_equal(child_lines_with(c.err, "Dense scopes:"), 0); /* scopes around real work */
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    assert_int_equal(n, 9);
    const child_row *step = expect_row(rows, n, "step", 5), *fwd = expect_row(rows, n, "forward", 5),
               *mm = expect_row(rows, n, "matmul", 10), *bwd = expect_row(rows, n, "backward", 5);
    expect_row(rows, n, "early_return", 6);   /* return out of the block */
    expect_row(rows, n, "loop_body", 4);      /* break out of the loop body */
    expect_row(rows, n, "goto_scope", 3);     /* goto out of the block */
    expect_row(rows, n, "dyn_0", 2);          /* PROFILE_SCOPE_DYN, interned */
    expect_row(rows, n, "dyn_1", 1);
    /* Sorted by CPU total, descending: step holds everything else of its own. */
    assert_string_equal(rows[0].name, "step");
    for (int i = 1; i < n; i++) assert_true(rows[i - 1].total_us >= rows[i].total_us);
    /* Inclusive >= children; self + direct children = inclusive. */
    assert_true(step->total_us + 2e-3 >= fwd->total_us + bwd->total_us);
    assert_true(fwd->total_us + 2e-3 >= mm->total_us);
    assert_true(child_about_equal(step->self_us + fwd->total_us + bwd->total_us, step->total_us));
    assert_true(child_about_equal(fwd->self_us + mm->total_us, fwd->total_us));
    assert_true(child_about_equal(mm->self_us, mm->total_us)); /* a leaf */
    assert_true(child_about_equal(bwd->self_us, bwd->total_us));
    assert_true(child_about_equal(step->avg_us * 5, step->total_us));
    /* The program runs in milliseconds: a scope that opened on one clock
     * and closed on the other would show hours. */
    if (!(step->total_us > 0 && step->total_us < 1e6)) fail_msg("step: %f us\n%s", step->total_us, c.err);

    /* The trace file holds the same 41 events, properly nested. */
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 5 + 5 + 10 + 5 + 6 + 4 + 3 + 2 + 1);
    assert_int_equal(tr_count_all(&t, "step"), 5);
    assert_int_equal(tr_count_all(&t, "matmul"), 10);
    assert_int_equal(tr_count_all(&t, "backward"), 5);
    assert_int_equal(tr_count_all(&t, "early_return"), 6);
    assert_int_equal(tr_count_all(&t, "loop_body"), 4);
    assert_int_equal(tr_count_all(&t, "goto_scope"), 3);
    /* A scope left early must give its depth back, or every later scope
     * would be recorded one level deeper. */
    expect_depth(&t, "step", 0);
    expect_depth(&t, "forward", 1);
    expect_depth(&t, "backward", 1);
    expect_depth(&t, "matmul", 2);
    expect_depth(&t, "early_return", 0);
    expect_depth(&t, "loop_body", 0);
    expect_depth(&t, "goto_scope", 0);
    expect_depth(&t, "dyn_0", 0);
    expect_nested(&t, "matmul", "forward");
    expect_nested(&t, "forward", "step");
    expect_nested(&t, "backward", "step");
    /* Sites know their file and line. */
    for (uint64_t i = 0; i < t.nev; i++) {
        uint32_t s = t.ev[i].site;
        assert_non_null(strstr(tr_file(&t, s), "prog_basic.c"));
        assert_true(tr_line(&t, s) > 0);
    }
    assert_int_equal(t.nthreads, 1);
    /* Ticks are CLOCK_MONOTONIC ns where asked: the rate is 1 exactly
     * (docs/FORMAT.md, TICKS). */
    if (monotonic) assert_true(t.ns_per_tick == 1.0);
    tr_free(&t);
    child_free(&c);
}

/* The same program with each clock: where the clock is read out of line
 * (SCOPEPROF_CLOCK=monotonic), every scope opens and closes on the slow
 * path (api.h, scopeprof__tls_hot), which must record the same. A value
 * that is neither is named and ignored. */
static void test_basic_summary(void **state) {
    (void)state;
    basic_summary(NULL, 0);
    static const char *const mono[] = {"SCOPEPROF_CLOCK=monotonic", NULL};
    basic_summary(mono, 1);
    static const char *const tsc[] = {"SCOPEPROF_CLOCK=tsc", NULL};
    basic_summary(tsc, 0);
    static const char *const bad[] = {"SCOPEPROF_CLOCK=hpet", NULL};
    child c;
    child_run(&c, "prog_basic", bad);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 1);
    assert_int_equal(child_lines_with(c.err, "scopeprof: ignoring SCOPEPROF_CLOCK='hpet': expected tsc or monotonic"), 1);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41);
    tr_free(&t);
    child_free(&c);
}

/* Without SCOPEPROF_OUTPUT the file is <program>.<pid>.sprof in the working
 * directory. */
static void test_default_output_path(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_OUTPUT=-", NULL};
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3);
    assert_int_equal(child_count_files(&c), 1);
    DIR *d = opendir(c.dir);
    char name[300] = "";
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') snprintf(name, sizeof name, "%s", e->d_name);
    closedir(d);
    char want_prefix[64];
    snprintf(want_prefix, sizeof want_prefix, "prog_basic%s.", VARIANT);
    assert_int_equal(strncmp(name, want_prefix, strlen(want_prefix)), 0);
    size_t l = strlen(name);
    assert_true(l > 6 && strcmp(name + l - 6, ".sprof") == 0);
    snprintf(c.trace, sizeof c.trace, "%s/%s", c.dir, name);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41);
    tr_free(&t);
    child_free(&c);
}

/* ---- 8. the environment ---------------------------------------------------- */

static void test_env_sort_and_limit(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_SORT=count", "SCOPEPROF_ROW_LIMIT=3", NULL};
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    assert_int_equal(n, 3);
    /* matmul 10, early_return 6, then the first seen of the 5-call rows:
     * forward closes before backward and step. */
    assert_string_equal(rows[0].name, "matmul");
    assert_string_equal(rows[1].name, "early_return");
    assert_string_equal(rows[2].name, "forward");
    /* The rows left out are said, once, as the reporter's --limit says them. */
    assert_int_equal(child_lines_with(c.err, "... 6 more rows (SCOPEPROF_ROW_LIMIT=3 of 9; 0 shows all)"), 1);
    child_free(&c);

    /* PyTorch's spellings are accepted too (cuda_*, and device_* as its
     * current names say), and 0 or -1 means every row: none left to say. */
    static const char *const env2[][4] = {
        {"SCOPEPROF_SORT=self_cuda_time_total", "SCOPEPROF_ROW_LIMIT=0", "SCOPEPROF_SUMMARY=1", NULL},
        {"SCOPEPROF_SORT=device_time_total", "SCOPEPROF_ROW_LIMIT=-1", NULL, NULL},
        {"SCOPEPROF_SORT=self_device_memory_usage", "SCOPEPROF_ROW_LIMIT=9", NULL, NULL}};
    for (int i = 0; i < 3; i++) {
        child_run(&c, "prog_basic", env2[i]);
        assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
        assert_int_equal(basic_rows(&c, rows), 9);
        assert_int_equal(child_lines_with(c.err, "more rows"), 0);
        child_free(&c);
    }
}

/* strtol takes leading blanks and a '+': a value the docs do not allow is
 * named and ignored as any other (" 5" was taken as 5 rows). */
static void test_env_number_forms(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_ROW_LIMIT= 5", "SCOPEPROF_FLUSH_MS=+50", NULL};
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_ROW_LIMIT=' 5'"), 1);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_FLUSH_MS='+50'"), 1);
    child_row rows[MAXROWS];
    assert_int_equal(basic_rows(&c, rows), 9); /* the default limit (20): every row */
    child_free(&c);
}

static void test_env_bad_values(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_ROW_LIMIT=abc", "SCOPEPROF_SORT=bogus",
                                      "SCOPEPROF_BUFFER_MB=-3", "SCOPEPROF_SUMMARY=maybe", NULL};
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3);
    /* Each is named, with its value, once. */
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_ROW_LIMIT='abc'"), 1);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_SORT='bogus'"), 1);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_BUFFER_MB='-3'"), 1);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_SUMMARY='maybe'"), 1);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 4);
    /* ... and ignored: the defaults apply (sort by total, 20 rows, summary on). */
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    assert_int_equal(n, 9);
    assert_string_equal(rows[0].name, "step");
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41);
    tr_free(&t);
    child_free(&c);

    /* Out of range, trailing junk, overflow. */
    static const char *const env2[] = {"SCOPEPROF_ROW_LIMIT=99999999999999999999",
                                       "SCOPEPROF_BUFFER_MB=0", "SCOPEPROF_SORT=", NULL};
    child_run(&c, "prog_basic", env2);
    assert_int_equal(c.status, 3);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_ROW_LIMIT="), 1);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_BUFFER_MB='0'"), 1);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_SORT=''"), 1);
    assert_int_equal(basic_rows(&c, rows), 9);
    child_free(&c);
    static const char *const env3[] = {"SCOPEPROF_ROW_LIMIT=2x", NULL};
    child_run(&c, "prog_basic", env3);
    assert_int_equal(child_lines_with(c.err, "SCOPEPROF_ROW_LIMIT='2x'"), 1);
    assert_int_equal(basic_rows(&c, rows), 9);
    child_free(&c);
}

static void test_summary_off(void **state) {
    (void)state;
    static const char *const values[] = {"SCOPEPROF_SUMMARY=0", "SCOPEPROF_SUMMARY=off",
                                         "SCOPEPROF_SUMMARY=false"};
    for (int i = 0; i < 3; i++) {
        const char *env[] = {values[i], NULL};
        child c;
        child_run(&c, "prog_basic", env);
        assert_int_equal(c.status, 3);
        assert_string_equal(c.err, ""); /* nothing at all on stderr */
        tr_trace t;                     /* the trace file is still written */
        read_trace(&c, &t);
        assert_int_equal(t.nev, 41);
        tr_free(&t);
        child_free(&c);
    }
}

static void test_output_unwritable(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_OUTPUT=/nonexistent/dir/x.sprof", NULL};
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3);
    /* One clear line, naming the path; nothing else from scopeprof. */
    assert_int_equal(child_lines_with(c.err, "/nonexistent/dir/x.sprof"), 1);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 1);
    assert_int_equal(child_lines_with(c.err, "scopeprof: cannot create trace file"), 1);
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows); /* the summary is still printed, in full */
    assert_int_equal(n, 9);
    expect_row(rows, n, "matmul", 10);
    assert_int_equal(child_count_files(&c), 0);
    child_free(&c);
}

/* A file that set _XOPEN_SOURCE itself (glibc then hides syscall(2)): its
 * threads are still named by their kernel ids, as perf and top -H show
 * them. Before, by pthread_self's address (the pigz review). */
static void test_thread_ids_own_feature_set(void **state) {
    (void)state;
    child c;
    child_run(&c, "prog_xopen", NULL);
    assert_int_equal(c.status, 0);
    unsigned long long want[2] = {0, 0};
    const char *p = c.out;
    for (int i = 0; i < 2; i++) {
        p = strstr(p, "tid ");
        assert_non_null(p);
        want[i] = strtoull(p + 4, NULL, 10);
        p += 4;
    }
    tr_trace t;
    read_trace(&c, &t);
    int found = 0;
    for (uint32_t i = 0; i < t.nthreads; i++) {
        if (!t.threads[i].events) continue;
        if (t.threads[i].tid != want[0] && t.threads[i].tid != want[1])
            fail_msg("thread %u: tid %llu, not %llu or %llu", i, (unsigned long long)t.threads[i].tid, want[0], want[1]);
        found++;
    }
    assert_int_equal(found, 2);
    tr_free(&t);
    child_free(&c);
}

/* SCOPEPROF_OUTPUT naming a directory (one that exists, or any path ending
 * in '/'): the default name (program, pid, rank when known) in it. Before,
 * MPI ranks given a directory wrote "DIR.rank0" beside it, or hidden
 * "DIR/.rank0" files, and a program without MPI refused it. */
static void test_output_directory(void **state) {
    (void)state;
    char dir[] = "/tmp/scopeprof-outdir-XXXXXX", env[PATH_MAX + 32], want[PATH_MAX + 64], names[4][256];
    assert_non_null(mkdtemp(dir));
    for (int slash = 0; slash < 2; slash++) {
        snprintf(env, sizeof env, "SCOPEPROF_OUTPUT=%s%s", dir, slash ? "/" : "");
        const char *const envv[] = {env, NULL};
        child c;
        child_run(&c, "prog_basic", envv);
        assert_int_equal(c.status, 3);
        assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
        assert_int_equal(child_count_files(&c), 0); /* nothing in the working directory */
        snprintf(want, sizeof want, "Trace file: %s/prog_basic%s.%d.sprof (", dir, VARIANT, c.pid);
        if (child_lines_with(c.err, want) != 1) fail_msg("no '%s' in:\n%s", want, c.err);
        child_free(&c);
    }
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            assert_int_equal(strncmp(e->d_name, "prog_basic", 10), 0);
            snprintf(want, sizeof want, "%s/%s", dir, e->d_name);
            tr_trace t;
            if (!tr_read(want, &t)) fail_msg("%s: %s", want, t.err);
            assert_int_equal(t.nev, 41);
            tr_free(&t);
            unlink(want);
            n++;
        }
    if (d) closedir(d);
    assert_int_equal(n, 2);
    /* A directory that does not exist: one line names the file, in it. */
    snprintf(env, sizeof env, "SCOPEPROF_OUTPUT=%s/missing/", dir);
    const char *const envv[] = {env, NULL};
    child c;
    child_run(&c, "prog_basic", envv);
    assert_int_equal(c.status, 3);
    snprintf(want, sizeof want, "scopeprof: cannot create trace file '%s/missing/prog_basic%s.%d.sprof'", dir, VARIANT, c.pid);
    if (child_lines_with(c.err, want) != 1) fail_msg("no '%s' in:\n%s", want, c.err);
    assert_int_equal(child_list_files(&c, "", names, 4), 0);
    child_free(&c);
    rmdir(dir);
}

/* The trace's name and the 99 after it all taken (symbolic links, never
 * followed): one line names the path given, the table is still printed. */
static void test_output_names_taken(void **state) {
    (void)state;
    char dir[] = "/tmp/scopeprof-taken-XXXXXX", link[PATH_MAX], env[PATH_MAX + 32];
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 100; i++) {
        if (i) snprintf(link, sizeof link, "%s/t.%d.sprof", dir, i);
        else snprintf(link, sizeof link, "%s/t.sprof", dir);
        assert_int_equal(symlink("/dev/null", link), 0);
    }
    snprintf(env, sizeof env, "SCOPEPROF_OUTPUT=%s/t.sprof", dir);
    const char *const envv[] = {env, NULL};
    child c;
    child_run(&c, "prog_basic", envv);
    assert_int_equal(c.status, 3);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof want, "scopeprof: cannot create trace file '%s/t.sprof': it and the 99 names after it "
             "are taken (SCOPEPROF_OUTPUT sets the path); the summary is still printed at exit", dir);
    assert_int_equal(child_lines_with(c.err, want), 1);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 1);
    child_row rows[MAXROWS];
    assert_int_equal(basic_rows(&c, rows), 9);
    child_free(&c);
    for (int i = 0; i < 100; i++) {
        if (i) snprintf(link, sizeof link, "%s/t.%d.sprof", dir, i);
        else snprintf(link, sizeof link, "%s/t.sprof", dir);
        unlink(link);
    }
    rmdir(dir);
}

/* "none": no file, silently. An empty value is most likely a shell
 * variable that was not set: one line says so, and the default file is
 * written, so nothing recorded is lost. */
static void test_output_none(void **state) {
    (void)state;
    static const char *const values[] = {"SCOPEPROF_OUTPUT=none", "SCOPEPROF_OUTPUT="};
    for (int i = 0; i < 2; i++) {
        const char *env[] = {values[i], NULL};
        child c;
        child_run(&c, "prog_basic", env);
        assert_int_equal(c.status, 3);
        assert_int_equal(child_lines_with(c.err, "scopeprof:"), i);
        assert_int_equal(child_lines_with(c.err, "SCOPEPROF_OUTPUT is empty: writing the default file"), i);
        child_row rows[MAXROWS];
        assert_int_equal(basic_rows(&c, rows), 9);
        assert_int_equal(child_count_files(&c), i); /* none: no file, not even "none" */
        child_free(&c);
    }
}

/* A JSON name (issue 24): the recorder writes its own format, so the trace
 * goes to NAME.sprof, never binary bytes under NAME.json (or an uncompressed
 * file under NAME.json.gz), and one line says where and how to convert. */
static void test_output_json_name(void **state) {
    (void)state;
    static const char *const values[][2] = {{"SCOPEPROF_OUTPUT=x.json", "x"}, {"SCOPEPROF_OUTPUT=y.json.gz", "y"}};
    for (int i = 0; i < 2; i++) {
        const char *env[] = {values[i][0], NULL};
        child c;
        child_run(&c, "prog_basic", env);
        assert_int_equal(c.status, 3);
        char line[256], names[4][256], want[16];
        snprintf(want, sizeof want, "%s.sprof", values[i][1]);
        snprintf(line, sizeof line, "the recorder writes its own trace format, not JSON; writing '%s' instead "
                 "(for Chrome or Perfetto JSON: scopeprof trace -o %s %s)", want, values[i][0] + 17, want);
        assert_int_equal(child_lines_with(c.err, line), 1);
        assert_int_equal(child_lines_with(c.err, "scopeprof:"), 1); /* that line only */
        assert_int_equal(child_list_files(&c, "", names, 4), 1);  /* no .json, no .json.gz */
        assert_string_equal(names[0], want);
        tr_trace t;
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", c.dir, want);
        if (!tr_read(path, &t)) fail_msg("%s: %s", path, t.err);
        assert_int_equal(t.nev, 41);
        tr_free(&t);
        child_free(&c);
    }
    /* In a job, each rank writes x.rankR.sprof: rank 0 names them all, once
     * (CoMD review: each rank said 'x.sprof', which no rank wrote). */
    for (int rank = 0; rank < 2; rank++) {
        const char *env[] = {"SCOPEPROF_OUTPUT=x.json", rank ? "OMPI_COMM_WORLD_RANK=1" : "OMPI_COMM_WORLD_RANK=0",
                             NULL};
        child c;
        child_run(&c, "prog_basic", env);
        assert_int_equal(c.status, 3);
        char names[4][256], want[32];
        assert_int_equal(child_lines_with(c.err, "not JSON"), !rank);
        assert_int_equal(child_lines_with(c.err, "JSON; writing 'x.rank*.sprof' instead (for Chrome or Perfetto "
                                                 "JSON: scopeprof trace -o x.json x.rank*.sprof)"), !rank);
        assert_int_equal(child_list_files(&c, "", names, 4), 1);
        snprintf(want, sizeof want, "x.rank%d.sprof", rank);
        assert_string_equal(names[0], want);
        child_free(&c);
    }
}

/* ---- overhead compensation (docs/DESIGN.md) ---------------------------------- */

/* The start-up calibration is in the file (one OVERHEAD chunk, before any
 * event) and named under the summary; its own scopes are not. Its values
 * are timings: only their sanity is checked (the arithmetic is test_agg's). */
static void test_overhead_calibration(void **state) {
    (void)state;
    child c;
    child_run(&c, "prog_basic", NULL);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    assert_int_equal(child_lines_with(c.err, "CPU time is wall time on the thread"), 1);
    assert_int_equal(child_lines_with(c.err, "Overhead compensation: "), 1);
    assert_int_equal(child_lines_with(c.err, " per nested scope taken out (calibrated at start-up"), 1);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41); /* no calibration scope */
    assert_int_equal(t.overhead_chunks, 1);
    assert_int_equal(t.events_before_overhead, 0);
    /* An empty scope costs something (its I is 0 only where its clock reads
     * overlap; and its parent sees it), and short means under twice its
     * duration: at least a tick. With work in it, a scope may cost ~0
     * where the clock reads hide in the work (clock.h). Under 100 us a
     * scope, sanitizer builds included. */
    assert_true((uint64_t)t.overhead_short_inside_ps + t.overhead_short_outside_ps > 0);
    assert_true(t.overhead_short_below >= 1 && t.overhead_short_below <= 1000000);
    /* The short bound is twice an empty scope's recorded duration, which
     * is at least what the scope records beyond an empty call (its I). */
    double below_ps = t.overhead_short_below * t.ns_per_tick * 1e3;
    assert_true(t.overhead_short_inside_ps <= below_ps / 2 + 1000);
    assert_true((uint64_t)t.overhead_inside_ps + t.overhead_outside_ps < 100000000u);
    assert_true((uint64_t)t.overhead_short_inside_ps + t.overhead_short_outside_ps < 100000000u);
    assert_int_equal(t.overhead_scopes, 2 * 256 * 8); /* with work and empty */
    tr_free(&t);
    child_free(&c);

    /* Off: nothing measured (an OVERHEAD chunk of zeros, so that the
     * reporter says it too), said under the table. */
    static const char *const off[] = {"SCOPEPROF_COMPENSATE=0", NULL};
    child_run(&c, "prog_basic", off);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    assert_int_equal(child_lines_with(c.err, "Overhead compensation: off (SCOPEPROF_COMPENSATE=0)"), 1);
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41);
    assert_int_equal(t.overhead_chunks, 1);
    assert_int_equal(t.overhead_scopes, 0);
    assert_int_equal(t.overhead_inside_ps, 0);
    assert_int_equal(t.overhead_short_below, 0);
    assert_int_equal(t.overhead_short_inside_ps, 0);
    assert_int_equal(t.overhead_outside_ps, 0);
    tr_free(&t);
    child_free(&c);

    /* The 0/1 variables take off/on and false/true too. */
    static const char *const words[] = {"SCOPEPROF_COMPENSATE=off", "SCOPEPROF_SIGNALS=false", "SCOPEPROF_WRITER=on", NULL};
    child_run(&c, "prog_basic", words);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    assert_int_equal(child_lines_with(c.err, "Overhead compensation: off (SCOPEPROF_COMPENSATE=0)"), 1);
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41);
    assert_int_equal(t.overhead_scopes, 0);
    tr_free(&t);
    child_free(&c);

    /* A bad value is named and ignored (on). */
    static const char *const bad[] = {"SCOPEPROF_COMPENSATE=yes", NULL};
    child_run(&c, "prog_basic", bad);
    assert_int_equal(child_lines_with(c.err, "ignoring SCOPEPROF_COMPENSATE='yes'"), 1);
    assert_int_equal(child_lines_with(c.err, " per nested scope taken out"), 1);
    child_free(&c);
}

/* A SCOPEPROF_ variable the header does not read (a typo) is named once;
 * the known ones and other programs' variables are not, and the run goes
 * on with its defaults: the table is printed, the trace written where
 * SCOPEPROF_OUTPUT says. */
static void test_env_unknown_name(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_OUT=elsewhere.sprof", "SCOPEPROF_ROW_LIMIT=5",
                                      "SCOPEPROFX=1", "MY_SCOPEPROF_OUTPUT=x", NULL};
    child c;
    child_run(&c, "prog_basic", env);
    assert_int_equal(c.status, 3); /* prog_basic's own exit code */
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 1);
    assert_int_equal(child_lines_with(c.err, "scopeprof: ignoring unknown variable SCOPEPROF_OUT: "
                                             "the header reads SCOPEPROF_OUTPUT,"), 1);
    assert_int_equal(child_lines_with(c.err, "CPU time is wall time on the thread"), 1);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 41);
    tr_free(&t);
    child_free(&c);
}

/* ---- 3. threads -------------------------------------------------------------- */

static void test_threads(void **state) {
    (void)state;
    child c;
    /* Raw times: its scopes are about as short as the calibrated cost, so
     * compensated rows hover around 0 and the self/total identities below
     * hold only for raw times (compensation: test_overhead_calibration). */
    static const char *const raw[] = {"SCOPEPROF_COMPENSATE=0", NULL};
    child_run(&c, "prog_threads", raw);
    assert_int_equal(c.status, 0);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    assert_int_equal(n, 4);
    const child_row *work = expect_row(rows, n, "work", 4000), *inner = expect_row(rows, n, "inner", 4000);
    expect_row(rows, n, "early_work", 100); /* its thread exited first */
    expect_row(rows, n, "main_after", 10);
    assert_true(work->total_us + 2e-3 >= inner->total_us);
    assert_true(child_about_equal(work->self_us + inner->total_us, work->total_us));

    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 100 + 8000 + 10);
    assert_int_equal(t.nthreads, 6);
    /* Per thread: 100 (early), 2000 for each worker, 10 for main; indexes
     * are given in order of first event, which the test does not fix. */
    int early = 0, workers = 0, mains = 0;
    for (uint32_t i = 0; i < t.nthreads; i++) {
        early += t.threads[i].events == 100;
        workers += t.threads[i].events == 2000;
        mains += t.threads[i].events == 10;
    }
    assert_int_equal(early, 1);
    assert_int_equal(workers, 4);
    assert_int_equal(mains, 1);
    int by_macro = 0, by_setname = 0;
    for (uint32_t i = 0; i < t.nthreads; i++) {
        by_macro += strcmp(tr_thread_name(&t, i), "named-by-macro") == 0;
        by_setname += strcmp(tr_thread_name(&t, i), "setname-early") == 0;
        assert_true(tr_thread_name(&t, i)[0] != 0); /* every thread has some name */
    }
    assert_int_equal(by_macro, 1);
    assert_int_equal(by_setname, 1);
    expect_depth(&t, "work", 0);
    expect_depth(&t, "inner", 1);
    tr_free(&t);
    child_free(&c);
}

/* ---- 6. mismatched BEGIN/END ------------------------------------------------ */

static void test_mismatch(void **state) {
    (void)state;
    child c;
    child_run(&c, "prog_mismatch", NULL);
    assert_int_equal(c.status, 0);
    int end_line = 0, open_line = 0;
    const char *p = strstr(c.out, "END_LINE ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "END_LINE %d\nOPEN_LINE %d", &end_line, &open_line), 2);

    /* The stray END: once, though hit three times, with file:line. */
    char site[64];
    snprintf(site, sizeof site, "prog_mismatch.c:%d", end_line);
    assert_int_equal(child_lines_with(c.err, "has no matching PROFILE_BEGIN"), 1);
    assert_int_equal(child_lines_with(c.err, site), 1);
    /* The range left open at thread exit: reported with its name and site. */
    snprintf(site, sizeof site, "prog_mismatch.c:%d", open_line);
    /* Two ranges are left open: one by a thread at its exit, one by the
     * main thread at program exit; each reported once, with its site. */
    assert_int_equal(child_lines_with(c.err, "still open"), 2);
    assert_int_equal(child_lines_with(c.err, site), 1);
    assert_int_equal(child_lines_with(c.err, "\"left_open\""), 1);
    assert_int_equal(child_lines_with(c.err, "when its thread exited"), 1);
    assert_int_equal(child_lines_with(c.err, "\"main_open\""), 1);
    assert_int_equal(child_lines_with(c.err, "when the program exited"), 1);

    /* The rest of the profile is intact. */
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    expect_row(rows, n, "before", 1);
    const child_row *after = expect_row(rows, n, "after", 5),
               *after_child = expect_row(rows, n, "after_child", 5);
    expect_row(rows, n, "range", 1);
    expect_row(rows, n, "in_range", 1);
    const child_row *lo = expect_row(rows, n, "left_open", 1), *io = expect_row(rows, n, "inside_open", 1);
    expect_row(rows, n, "last", 1);
    assert_true(child_about_equal(after->self_us + after_child->total_us, after->total_us));
    assert_true(lo->total_us + 2e-3 >= io->total_us);
    assert_true(child_about_equal(lo->self_us + io->total_us, lo->total_us));

    tr_trace t;
    read_trace(&c, &t);
    expect_depth(&t, "before", 0);
    expect_depth(&t, "after", 0); /* the stray END did not shift depths */
    expect_depth(&t, "after_child", 1);
    expect_depth(&t, "range", 0);
    expect_depth(&t, "in_range", 1);
    expect_depth(&t, "last", 0);
    expect_depth(&t, "left_open", 0);
    expect_depth(&t, "inside_open", 1);
    expect_nested(&t, "inside_open", "left_open");
    expect_nested(&t, "in_range", "range");
    tr_free(&t);
    child_free(&c);
}

/* ---- 7. streaming ------------------------------------------------------------- */

static void test_streaming_keeps_every_event(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_BUFFER_MB=1", NULL};
    child c;
    child_run(&c, "prog_stream", env);
    assert_int_equal(c.status, 0);
    /* One writer behind two threads and a 1 MiB budget: the threads may
     * have written chunks themselves, which is said, and nothing else. */
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), child_lines_with(c.err, "fell behind"));
    /* 300000 x 16 bytes = 4.6 MiB went through a 1 MiB budget: most of it
     * was already in the file before exit. */
    long long mid = -1;
    const char *p = strstr(c.out, "MIDSIZE ");
    assert_non_null(p);
    sscanf(p, "MIDSIZE %lld", &mid);
    assert_true(mid >= 3 * 1024 * 1024);
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    assert_int_equal(n, 1);
    expect_row(rows, n, "s", 300000);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.end_total, 300000);
    assert_int_equal(t.nev, 300000);
    assert_int_equal(tr_count_all(&t, "s"), 300000);
    /* Short scopes take 16 bytes each in the file (format 2 and 3). */
    assert_int_equal(t.major, SCOPEPROF_FORMAT_MAJOR);
    assert_int_equal(t.long_records, 0);
    assert_int_equal(t.event_bytes, 16 * 300000);
    int full = 0;
    for (uint32_t i = 0; i < t.nthreads; i++) full += t.threads[i].events == 150000;
    assert_int_equal(full, 2);
    /* Each thread's name once (a THREAD chunk before its first EVENTS
     * chunk; its name never changed), not once per chunk: 37 chunks each. */
    for (uint32_t i = 0; i < t.nthreads; i++) {
        if (t.threads[i].events != 150000) continue;
        assert_true(t.threads[i].events_chunks >= 37);
        assert_int_equal(t.threads[i].name_chunks, 1);
    }
    /* The profiler's own cost, the summary's last line: every call's
     * calibrated cost by its class (the file's OVERHEAD chunk, each event's
     * duration against its short bound), and the writer's CPU, which wrote
     * 4.6 MiB here. */
    double want_us = 0;
    for (uint64_t i = 0; i < t.nev; i++)
        want_us += (t.ev[i].ticks < t.overhead_short_below
                        ? (double)t.overhead_short_inside_ps + t.overhead_short_outside_ps
                        : (double)t.overhead_inside_ps + t.overhead_outside_ps) / 1e6;
    assert_int_equal(child_lines_with(c.err, "Profiler's own cost: "), 1);
    const char *own = strstr(c.err, "Profiler's own cost: 300000 calls, about ");
    assert_non_null(own);
    assert_true(own > strstr(c.err, "Trace file: ")); /* after the lines the reporter prints too */
    double rec = 0;
    char unit[4] = "";
    assert_int_equal(sscanf(own + strlen("Profiler's own cost: 300000 calls, about "), "%lf%2s", &rec, unit), 2);
    rec *= unit[0] == 'm' ? 1e3 : unit[0] == 's' ? 1e6 : 1; /* "us", "ms" or "s" (scopeprof_format_time) */
    assert_true(rec - want_us <= want_us * 1e-3 + 1e-3 && want_us - rec <= want_us * 1e-3 + 1e-3);
    assert_non_null(strstr(own, " of the recording threads' time (taken out above), "));
    assert_non_null(strstr(own, " of CPU in the background writer\n"));
    /* Empty scopes back to back: their calibrated cost is most of the time
     * in scopes, and the next line says what that does, naming the row of
     * most calls. (prog_basic's 41 scopes of real work: no such line.) */
    const char *dense = strstr(own, "\nDense scopes: their calibrated cost is over 5% of the time in scopes (one every ");
    assert_non_null(dense);
    assert_non_null(strstr(dense, "): for times to trust, leave out the most called, s (300000 calls)\n"));
    tr_free(&t);
    child_free(&c);

    /* Without a writer (the threads wrote), or without compensation, that
     * part is left out. */
    static const char *const nowriter[] = {"SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_WRITER=0", NULL};
    child_run(&c, "prog_stream", nowriter);
    own = strstr(c.err, "Profiler's own cost: 300000 calls, about ");
    assert_non_null(own);
    assert_null(strstr(c.err, "background writer"));
    child_free(&c);
    static const char *const nocomp[] = {"SCOPEPROF_BUFFER_MB=1", "SCOPEPROF_COMPENSATE=0", NULL};
    child_run(&c, "prog_stream", nocomp);
    assert_int_equal(child_lines_with(c.err, "Profiler's own cost: 300000 calls, "), 1);
    assert_int_equal(child_lines_with(c.err, " of CPU in the background writer"), 1);
    assert_int_equal(child_lines_with(c.err, "of the recording threads' time"), 0);
    child_free(&c);

    /* The control: with no background writer, within the default 64 MiB
     * budget and the timed flush an hour away, nothing is written before
     * exit, so MIDSIZE above measured what was streamed. (With a writer,
     * 4.6 MiB always streams now: it writes while chunks come, and a drain
     * is due at 1 MiB queued, or an eighth of the budget if less,
     * buffers.h.) */
    static const char *const hour[] = {"SCOPEPROF_WRITER=0", "SCOPEPROF_FLUSH_MS=3600000", NULL};
    child_run(&c, "prog_stream", hour);
    p = strstr(c.out, "MIDSIZE ");
    assert_non_null(p);
    sscanf(p, "MIDSIZE %lld", &mid);
    assert_true(mid <= 0);
    read_trace(&c, &t);
    assert_int_equal(t.nev, 300000);
    tr_free(&t);
    child_free(&c);
}

/* The background writer's timed flush: with the default budget, the events
 * of threads that have exited are in the file 20 flush periods later, before
 * the program exits (what a SIGKILL would leave). The control above (flush an
 * hour away) shows it is the timer's doing. */
/* ---- input shapes (issue 26) ---------------------------------------------- */

/* The calls of the row `name` with Input Shapes `shape` in a table of `err`
 * grouped by shape (cells split on runs of two or more spaces; the calls
 * are the next to last cell); -1 when there is none. */
static long shape_row_calls(const char *err, const char *name, const char *shape) {
    for (const char *s = err; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char cells[16][128];
        int n = 0;
        for (size_t i = 0; i < len && n < 16;) {
            while (i < len && s[i] == ' ') i++;
            size_t b = i;
            while (i < len && !(s[i] == ' ' && (i + 1 == len || s[i + 1] == ' '))) i++;
            if (i > b) snprintf(cells[n++], sizeof cells[0], "%.*s", (int)(i - b), s + b);
        }
        if (n >= 8 && strcmp(cells[0], name) == 0 && strcmp(cells[n - 1], shape) == 0) return atol(cells[n - 2]);
        s += len + (nl ? 1 : 0);
    }
    return -1;
}

/* Events of `name` in the trace whose shapes are `shape` (NULL: none). */
static uint64_t shaped_events(const tr_trace *t, const char *name, const char *shape) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++) {
        const tr_event *e = &t->ev[i];
        if (strcmp(tr_name(t, e->site), name) != 0) continue;
        n += shape ? e->shape && strcmp(e->shape, shape) == 0 : e->shape == NULL;
    }
    return n;
}

static void test_input_shapes(void **state) {
    (void)state;
    static const char *const by_shape[] = {"SCOPEPROF_GROUP_BY=shape", "SCOPEPROF_ROW_LIMIT=0", NULL};
    child c;
    child_run(&c, "prog_shape", by_shape);
    assert_int_equal(c.status, 0);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    assert_int_equal(child_lines_with(c.err, "Input Shapes  "), 1);
    assert_int_equal(shape_row_calls(c.err, "gemm", "[[64, 64, 64]]"), 5);
    assert_int_equal(shape_row_calls(c.err, "gemm", "[[128, 32, 16]]"), 3);
    assert_int_equal(shape_row_calls(c.err, "gemm", "[[8, 8, 8]]"), 2);
    assert_int_equal(shape_row_calls(c.err, "gemm", "[[1, 2, 3]]"), 20000);
    assert_int_equal(shape_row_calls(c.err, "gemm", "[]"), 4); /* the plain scopes */
    assert_int_equal(shape_row_calls(c.err, "conv2d", "[[128, 64, 56, 56], [64, 64, 3, 3], []]"), 2);
    assert_int_equal(shape_row_calls(c.err, "neg", "[[3, -1]]"), 1);
    assert_int_equal(shape_row_calls(c.err, "main", "[]"), 1);
    assert_int_equal(shape_row_calls(c.err, "gemm", "[[64, 64, 64]]x"), -1); /* the check can fail */

    /* The trace holds each scope's own shapes (the same sites, other sizes). */
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.major, 5);
    assert_int_equal(shaped_events(&t, "gemm", "[[64, 64, 64]]"), 5);
    assert_int_equal(shaped_events(&t, "gemm", "[[128, 32, 16]]"), 3);
    assert_int_equal(shaped_events(&t, "gemm", "[[8, 8, 8]]"), 2);
    assert_int_equal(shaped_events(&t, "gemm", "[[1, 2, 3]]"), 20000);
    assert_int_equal(shaped_events(&t, "gemm", NULL), 4);
    assert_int_equal(shaped_events(&t, "neg", "[[3, -1]]"), 1);
    assert_int_equal(shaped_events(&t, "main", NULL), 1);
    /* wide: 9 inputs of 16 sizes are 153 numbers; the 7 that fit 127 are kept. */
    char wide[1024] = "[";
    for (int i = 0; i < 7; i++)
        strcat(wide, i ? ", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]"
                       : "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]");
    strcat(wide, "]");
    assert_int_equal(shaped_events(&t, "wide", wide), 1);
    /* Only shaped scopes (and perhaps main, if it ran past 2^27 ticks) take
     * the long form: plain ones keep their 16 bytes. */
    uint64_t shaped = 5 + 3 + 2 + 20000 + 2 + 1 + 1;
    assert_true(t.long_records >= shaped && t.long_records <= shaped + 1);
    assert_int_equal(t.nev, shaped + 4 + 1);
    tr_free(&t);
    child_free(&c);

    /* By name (the default): one gemm row with every call, no shapes column. */
    child_run(&c, "prog_shape", NULL);
    child_row rows[MAXROWS];
    int n = child_table_rows(c.err, rows, MAXROWS);
    expect_row(rows, n, "gemm", 5 + 3 + 2 + 20000 + 4);
    expect_row(rows, n, "conv2d", 2);
    assert_int_equal(child_lines_with(c.err, "Input Shapes"), 0);
    child_free(&c);

    /* A value that does not parse is named and ignored. */
    static const char *const bad[] = {"SCOPEPROF_GROUP_BY=size", NULL};
    child_run(&c, "prog_shape", bad);
    assert_int_equal(child_lines_with(c.err, "ignoring SCOPEPROF_GROUP_BY='size': expected name or shape"), 1);
    n = child_table_rows(c.err, rows, MAXROWS);
    expect_row(rows, n, "gemm", 20014);
    child_free(&c);
}

static void test_timed_flush(void **state) {
    (void)state;
    static const char *const env[] = {"SCOPEPROF_FLUSH_MS=25", "PROG_WAIT_MS=500", NULL};
    child c;
    child_run(&c, "prog_stream", env);
    assert_int_equal(c.status, 0);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    long long mid = -1;
    const char *p = strstr(c.out, "MIDSIZE ");
    assert_non_null(p);
    sscanf(p, "MIDSIZE %lld", &mid);
    assert_true(mid >= 16LL * 300000);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 300000);
    assert_int_equal(t.end_total, 300000);
    tr_free(&t);
    child_free(&c);
}

/* ---- 4. several modules -------------------------------------------------------- */

static void test_multi_module(void **state) {
    (void)state;
    child c;
    child_run(&c, "multi_main", NULL);
    assert_int_equal(c.status, 0);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    /* One table, one file. */
    assert_int_equal(child_lines_with(c.err, "Self CPU time total: "), 1);
    assert_int_equal(child_lines_with(c.err, "Self CPU %"), 1);
    assert_int_equal(child_count_files(&c), 1);
    child_row rows[MAXROWS];
    int n = basic_rows(&c, rows);
    assert_int_equal(n, 5);
    expect_row(rows, n, "main_scope", 2);
    /* A range the executable began before loading the plugin, and the
     * plugin's first call ended: both ends on one clock (the end read in ns
     * against a TSC start showed "NaN", or 0). Loading a library takes
     * microseconds at least, and the program well under a second. */
    const child_row *cross = expect_row(rows, n, "cross_range", 1);
    if (!(cross->total_us >= 1 && cross->total_us < 1e6)) fail_msg("cross_range: %f us\n%s", cross->total_us, c.err);
    expect_row(rows, n, "tu_b_scope", 3);
    expect_row(rows, n, "linked_lib_scope", 4);
    const child_row *dl = expect_row(rows, n, "dl_lib_scope", 5);
    const child_row *ms = child_find_row(rows, n, "main_scope");
    assert_true(ms->total_us + 2e-3 >= dl->total_us);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(t.nev, 2 + 3 + 4 + 5 + 1);
    assert_int_equal(t.nthreads, 1); /* one thread state shared by all modules */
    assert_int_equal(tr_count_all(&t, "dl_lib_scope"), 5);
    assert_int_equal(tr_count_all(&t, "linked_lib_scope"), 4);
    expect_depth(&t, "dl_lib_scope", 1); /* nested in main's scope across modules */
    expect_nested(&t, "dl_lib_scope", "main_scope");
    expect_depth(&t, "tu_b_scope", 0);
    expect_depth(&t, "linked_lib_scope", 0);
    /* Each site keeps its own file. */
    int files_ok = 0;
    for (uint32_t s = 1; s < t.nsites; s++) {
        if (strcmp(tr_name(&t, s), "dl_lib_scope") == 0) files_ok += !!strstr(tr_file(&t, s), "multi_dl.c");
        if (strcmp(tr_name(&t, s), "tu_b_scope") == 0) files_ok += !!strstr(tr_file(&t, s), "multi_b.c");
    }
    assert_int_equal(files_ok, 2);
    tr_free(&t);
    child_free(&c);
}

/* A scope recorded by a later pthread key destructor, in another module,
 * after the profiler's destructor took the thread's buffer: no crash, and
 * the scope is in the trace (the buffer is given back and queued again). */
static void test_late_destructor(void **state) {
    (void)state;
    child c;
    static const char *const late[] = {"late", NULL};
    child_run_args(&c, "multi_main", late, NULL);
    assert_int_equal(c.status, 0);
    assert_int_equal(child_lines_with(c.err, "scopeprof:"), 0);
    tr_trace t;
    read_trace(&c, &t);
    assert_int_equal(tr_count_all(&t, "worker_scope"), 1);
    assert_int_equal(tr_count_all(&t, "linked_lib_scope"), 2); /* in the thread, in the destructor */
    tr_free(&t);
    child_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_summary),
        cmocka_unit_test(test_default_output_path),
        cmocka_unit_test(test_env_sort_and_limit),
        cmocka_unit_test(test_env_bad_values),
        cmocka_unit_test(test_env_number_forms),
        cmocka_unit_test(test_summary_off),
        cmocka_unit_test(test_overhead_calibration),
        cmocka_unit_test(test_env_unknown_name),
        cmocka_unit_test(test_output_unwritable),
        cmocka_unit_test(test_output_names_taken),
        cmocka_unit_test(test_output_directory),
        cmocka_unit_test(test_thread_ids_own_feature_set),
        cmocka_unit_test(test_output_none),
        cmocka_unit_test(test_output_json_name),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_streaming_keeps_every_event),
        cmocka_unit_test(test_input_shapes),
        cmocka_unit_test(test_timed_flush),
        cmocka_unit_test(test_multi_module),
        cmocka_unit_test(test_late_destructor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
