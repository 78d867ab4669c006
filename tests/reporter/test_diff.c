/* test_diff.c -- `scopeprof diff` run in-process (sp_main) on runs written
 * byte by byte (tw.h), whose times are chosen: medians, the runs' spread,
 * --threshold and --min-time, rows of one side, ranks grouped into runs,
 * each output format, usage errors. tests/reporter/diff.sh does the same on
 * a real program built twice. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tw.h"
#include "files.h"

/* One run: main [0, a + b + 100us] holding A [0, a] and B [a, a + b]
 * (microseconds), and, when c > 0, C after them; rank: 0xFFFFFFFF for none. */
static void write_run(const char *name, uint64_t pid, uint32_t rank, uint64_t a, uint64_t b, uint64_t c) {
    tw w = {0, 0, 0};
    tw_header_rank(&w, pid, "prog", rank);
    tw_site(&w, 1, 10, "main", "main.c", "main");
    tw_site(&w, 2, 20, "A", "a.c", "fa");
    tw_site(&w, 3, 30, "B", "b.c", "fb");
    tw_site(&w, 4, 40, "C", "c.c", "fc");
    tw_thread(&w, 0, pid, "main");
    uint64_t us = 1000, end = (a + b + c + 100) * us;
    tw_ev ev[4] = {{0, a * us, 2, 1}, {a * us, (a + b) * us, 3, 1}, {(a + b) * us, (a + b + c) * us, 4, 1},
                   {0, end, 1, 0}};
    if (c) {
        tw_events(&w, 0, ev, 4);
    } else {
        ev[2] = ev[3];
        tw_events(&w, 0, ev, 3);
    }
    tw_end(&w, c ? 4 : 3);
    assert_int_equal(tw_save(&w, path(name)), 0);
    free(w.b);
}

static int setup(void **state) {
    (void)state;
    if (files_setup("sp_diff_test") != 0) return -1;
    /* BASE: A about 1 ms, B about 500 us. SAME: another three runs of the
     * same build. SLOW: A twice as slow, B as before. */
    static const uint64_t base[3][2] = {{1000, 500}, {1010, 505}, {990, 495}};
    static const uint64_t same[3][2] = {{1005, 502}, {995, 498}, {1002, 500}};
    static const uint64_t slow[3][2] = {{2000, 502}, {2020, 498}, {1980, 500}};
    char n[32];
    for (int i = 0; i < 3; i++) {
        snprintf(n, sizeof n, "base%d.sprof", i + 1);
        write_run(n, 100 + (uint64_t)i, 0xFFFFFFFFu, base[i][0], base[i][1], 0);
        snprintf(n, sizeof n, "same%d.sprof", i + 1);
        write_run(n, 200 + (uint64_t)i, 0xFFFFFFFFu, same[i][0], same[i][1], 0);
        snprintf(n, sizeof n, "slow%d.sprof", i + 1);
        write_run(n, 300 + (uint64_t)i, 0xFFFFFFFFu, slow[i][0], slow[i][1], 0);
    }
    return 0;
}

/* The CSV line of a row, from its name to the end of the line. */
static const char *csv_row(const char *csv, const char *name, char *buf, size_t n) {
    char want[64];
    snprintf(want, sizeof want, "\n%s,", name);
    const char *p = strstr(csv, want);
    if (!p) return "";
    p++;
    size_t l = strcspn(p, "\n");
    snprintf(buf, n, "%.*s", (int)(l < n ? l : n - 1), p);
    return buf;
}

/* Three runs a side: A twice as slow is flagged, B (its change inside the
 * runs' spread) is not, nor main, whose self time is 100 us (under the
 * default --min-time of 1 ms). Medians: A 1000 -> 2000 us. */
static void test_regression_flagged(void **state) {
    (void)state;
    char *out, *err, row[256];
    assert_int_equal(run(&out, &err, "diff", "--threshold", "30", path("base1.sprof"), path("base2.sprof"),
                         path("base3.sprof"), "--", path("slow1.sprof"), path("slow2.sprof"), path("slow3.sprof"),
                         "--format", "csv", NULL),
                     4);
    assert_string_equal(err, "");
    assert_int_equal(strncmp(out, "name,base_count,new_count,base_self_cpu_time_total_ns,", 54), 0);
    /* Largest change first. */
    assert_int_equal(strncmp(strchr(out, '\n') + 1, "A,", 2), 0);
    assert_string_equal(csv_row(out, "A", row, sizeof row),
                        "A,1,1,1000000,2000000,1000000,2000000,1000000,2000000,1000000,100.00,"
                        "990000,1010000,1980000,2020000,regressed");
    /* B: 500 us on both sides' medians (500 vs 500): no change at all. */
    assert_string_equal(csv_row(out, "B", row, sizeof row),
                        "B,1,1,500000,500000,500000,500000,500000,500000,0,0.00,495000,505000,498000,502000,");
    free(out);
    free(err);
    /* The text table names the row, and says why. */
    assert_int_equal(run(&out, &err, "diff", "--threshold=30", path("base1.sprof"), path("base2.sprof"),
                         path("base3.sprof"), "--", path("slow1.sprof"), path("slow2.sprof"), path("slow3.sprof"),
                         NULL),
                     4);
    assert_non_null(strstr(out, "BASE  3 run(s): "));
    assert_non_null(strstr(out, "Regressed: 1 row(s)"));
    assert_non_null(strstr(out, "\n  A  +100.00% (1.000ms -> 2.000ms)\n"));
    assert_non_null(strstr(out, "    +1.000ms        +100.00%  regressed"));
    free(out);
    free(err);
    /* Without --threshold the table is the same and the exit status 0. */
    assert_int_equal(run(&out, &err, "diff", path("base1.sprof"), path("base2.sprof"), "--", path("slow1.sprof"),
                         NULL),
                     0);
    assert_null(strstr(out, "Regressed"));
    free(out);
    free(err);
    /* --min-time above A's 2 ms: nothing trips. */
    assert_int_equal(run(&out, &err, "diff", "--threshold", "30", "--min-time", "5ms", path("base1.sprof"),
                         path("slow1.sprof"), NULL),
                     0);
    assert_non_null(strstr(out, "No regression"));
    free(out);
    free(err);
    /* A threshold above the change: nothing trips either. */
    assert_int_equal(run(&out, &err, "diff", "--threshold", "150%", path("base1.sprof"), path("slow1.sprof"), NULL),
                     0);
    free(out);
    free(err);
}

/* Two sets of runs of the same build: every change within the runs'
 * spread, exit 0 even at --threshold 0. With one run a side there is no
 * spread to judge by: A's 0.5% trips a 0.1% threshold, B's 0.4% does not
 * (502 us, under the default --min-time). */
static void test_same_build_quiet(void **state) {
    (void)state;
    char *out, *err, row[256];
    assert_int_equal(run(&out, &err, "diff", "--threshold", "0", "--min-time", "0", path("base1.sprof"),
                         path("base2.sprof"), path("base3.sprof"), "--", path("same1.sprof"), path("same2.sprof"),
                         path("same3.sprof"), "--format", "csv", NULL),
                     0);
    /* A: medians 1000 and 1002 us; 1002 lies within BASE's 990..1010. */
    assert_string_equal(csv_row(out, "A", row, sizeof row),
                        "A,1,1,1000000,1002000,1000000,1002000,1000000,1002000,2000,0.20,990000,1010000,995000,"
                        "1005000,within_spread");
    free(out);
    free(err);
    /* One run each: no spread; A 1000 -> 1005 us trips a 0.1% threshold. */
    assert_int_equal(run(&out, &err, "diff", "--threshold", "0.1", path("base1.sprof"), path("same1.sprof"), NULL),
                     4);
    assert_non_null(strstr(out, "\n  A  +0.50% (1.000ms -> 1.005ms)\n"));
    assert_null(strstr(out, "within spread"));
    free(out);
    free(err);
}

/* Rows of one side only are marked, and never trip the threshold (a renamed
 * scope is not a regression). */
static void test_one_side_rows(void **state) {
    (void)state;
    write_run("withc.sprof", 400, 0xFFFFFFFFu, 1000, 500, 3000);
    char *out, *err, row[256];
    assert_int_equal(run(&out, &err, "diff", "--threshold", "10", "--format", "csv", path("base1.sprof"),
                         path("withc.sprof"), NULL),
                     0);
    assert_string_equal(csv_row(out, "C", row, sizeof row), "C,,1,,3000000,,3000000,,3000000,3000000,,,,3000000,3000000,new_only");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "diff", path("withc.sprof"), path("base1.sprof"), NULL), 0);
    assert_non_null(strstr(out, "-3.000ms        -100.00%  base only"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "diff", path("base1.sprof"), path("withc.sprof"), NULL), 0);
    assert_non_null(strstr(out, "+3.000ms             new  new only"));
    free(out);
    free(err);
}

/* --group-by thread: threads are matched across the sides by their label
 * (their places in two runs' files may differ: tests/reporter's
 * test_per_rank_group_by_thread), so two threads of one name (a pool's)
 * are one row, the pool's, not two rows of the same label. */
static void test_threads_of_one_name(void **state) {
    (void)state;
    for (int side = 0; side < 2; side++) {
        FILE *f = fopen(path(side ? "pool_new.json" : "pool_base.json"), "w");
        assert_non_null(f);
        fputs("{\"traceEvents\":[\n", f);
        for (int t = 11; t <= 12; t++)
            fprintf(f, "{\"name\":\"work\",\"ph\":\"X\",\"ts\":0,\"dur\":%d,\"pid\":1,\"tid\":%d},\n"
                       "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"w\"}}%s\n",
                    side ? 300 : 100, t, t, t == 12 ? "]}" : ",");
        fclose(f);
    }
    char *out, *err;
    assert_int_equal(run(&out, &err, "diff", "--group-by", "thread", "--format", "csv", path("pool_base.json"),
                         path("pool_new.json"), NULL), 0);
    if (!strstr(out, "\nwork,w,2,2,200000,600000,") || strstr(out, "(tid "))
        fail_msg("want the pool's one row:\n%s", out);
    free(out);
    free(err);
}

/* Files with ranks: the i-th file of each rank on a side make run i, its
 * ranks summed (A: 1 ms on each of two ranks = 2 ms a run). */
static void test_ranks_make_runs(void **state) {
    (void)state;
    write_run("r0a.sprof", 500, 0, 1000, 500, 0);
    write_run("r0b.sprof", 501, 0, 1100, 500, 0);
    write_run("r1a.sprof", 502, 1, 1000, 500, 0);
    write_run("r1b.sprof", 503, 1, 900, 500, 0);
    char *out, *err, row[256];
    assert_int_equal(run(&out, &err, "diff", "--format", "json", path("r0a.sprof"), path("r0b.sprof"),
                         path("r1a.sprof"), path("r1b.sprof"), "--", path("base1.sprof"), NULL),
                     0);
    assert_non_null(strstr(out, "\"base\":{\"files\":["));
    assert_non_null(strstr(out, "],\"runs\":2,"));
    /* Run 1: r0a + r1a: A 2000 us in 2 calls; run 2: r0b + r1b: 2000 us. */
    assert_non_null(strstr(out, "{\"name\":\"A\",\"base\":{\"runs\":2,\"count\":2,\"self_cpu_time_total_ns\":2000000,"));
    free(out);
    free(err);
    (void)row;
    /* A rank short of files: said, and still compared. */
    assert_int_equal(run(&out, &err, "diff", path("r0a.sprof"), path("r0b.sprof"), path("r1a.sprof"), "--",
                         path("base1.sprof"), NULL),
                     0);
    assert_non_null(strstr(err, "rank 1 has 1 file(s) and another rank 2"));
    free(out);
    free(err);
}

/* Markdown for a pull-request comment, JSON for scripts. */
static void test_formats(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "diff", "--format", "markdown", "--threshold", "30", path("base1.sprof"),
                         path("slow1.sprof"), NULL),
                     4);
    assert_non_null(strstr(out, "**1 row(s) regressed** (Self CPU 30% slower or more, at least 1.000ms on NEW): A +100.00%\n"));
    assert_non_null(strstr(out, "| Name | Calls | Self CPU | CPU total | Change | Change % | Note |\n"
                                "|:--|--:|--:|--:|--:|--:|:--|\n"
                                "| A | 1 → 1 | 1.000ms → 2.000ms | 1.000ms → 2.000ms | +1.000ms | +100.00% | **regressed** |\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "diff", "--format", "json", "--limit", "1", path("base1.sprof"),
                         path("slow1.sprof"), NULL),
                     0);
    assert_non_null(strstr(out, "{\"compared\":\"self_cpu_time_total\",\"base\":{\"files\":[\""));
    assert_non_null(strstr(out, "\"threshold_percent\":null,\"min_time_ns\":1000000,\"regressed\":0,\"more_rows\":2,"));
    assert_non_null(strstr(out, "\"change_ns\":1000000,\"change_percent\":100.00,\"within_spread\":false,\"regressed\":false}]}\n"));
    free(out);
    free(err);
    /* The time compared can be the CPU total, with torch's spelling. */
    assert_int_equal(run(&out, &err, "diff", "--sort_by", "cpu_time_total", "--row_limit", "1", path("base1.sprof"),
                         path("slow1.sprof"), NULL),
                     0);
    assert_non_null(strstr(out, "Compared: CPU total (cpu_time_total)"));
    assert_non_null(strstr(out, "... 2 more rows (--limit 1 of 3; --limit 0 shows all)"));
    free(out);
    free(err);
}

static void test_usage(void **state) {
    (void)state;
    char *out, *err;
    const char *b = path("base1.sprof"), *s = path("slow1.sprof"), *t = path("same1.sprof");
    assert_int_equal(run(&out, &err, "diff", b, s, t, NULL), 2); /* three files and no -- */
    assert_non_null(strstr(err, "BASE... -- NEW..."));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", b, NULL), 2);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", b, "--", NULL), 2);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", b, "--", s, "--", t, NULL), 2);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", "--sort", "count", b, s, NULL), 2);
    assert_non_null(strstr(err, "diff compares times"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", "--threshold", "x", b, s, NULL), 2);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", "--min-time", "soon", b, s, NULL), 2);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", "--format", "xml", b, s, NULL), 2);
    free(out), free(err);
    /* A missing file on one side: exit 1, and no regression claimed. */
    assert_int_equal(run(&out, &err, "diff", "--threshold", "30", b, path("base2.sprof"), "--", s,
                         path("missing.sprof"), NULL),
                     1);
    assert_non_null(strstr(err, "missing.sprof"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", path("missing.sprof"), s, NULL), 1);
    assert_non_null(strstr(err, "nothing could be read on the BASE side"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "diff", "--help", NULL), 0);
    assert_non_null(strstr(out, "--threshold PCT"));
    free(out), free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regression_flagged), cmocka_unit_test(test_same_build_quiet),
        cmocka_unit_test(test_one_side_rows),      cmocka_unit_test(test_threads_of_one_name),      cmocka_unit_test(test_ranks_make_runs),
        cmocka_unit_test(test_formats),            cmocka_unit_test(test_usage),
    };
    return cmocka_run_group_tests(tests, setup, files_teardown);
}
