/* test_reporter.c -- the reporter's commands run in-process (sp_main) on
 * trace files written byte by byte (tw.h), with known timestamps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "read.h"
#include "tw.h"
#include "files.h"

/* The corpus generator, for the bad files. */
#define main mktrace_main
#include "mktrace.c"
#undef main


static int setup(void **state) {
    (void)state;
    if (files_setup("sp_reporter_test") != 0) return -1;
    tw w = {0, 0, 0};
    tw_known(&w, 7);
    if (tw_save(&w, path("known.sprof"))) return -1;
    w.n = 0;
    tw_known(&w, 8);
    if (tw_save(&w, path("known8.sprof"))) return -1;
    free(w.b);
    return corpus(dir);
}

static const char golden[] =
    "-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
    "-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "                                                   main        50.00%     500.000us       100.00%       1.000ms       1.000ms             1  \n"
    "                                                      A        30.00%     300.000us        40.00%     400.000us     200.000us             2  \n"
    "                                                      B        10.00%     100.000us        10.00%     100.000us     100.000us             1  \n"
    "a_very_long_scope_name_that_is_longer_than_the_colum...        10.00%     100.000us        10.00%     100.000us     100.000us             1  \n"
    "-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "Self CPU time total: 1.000ms\n"
    "CPU time is wall time on the thread, as in PyTorch: a thread's waits (locks, I/O, sleep) count as its self time\n";

static void test_golden_table(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("known.sprof"), NULL), 0);
    assert_string_equal(out, golden);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* Row order: the names at the start of each data row, in order (the rows
 * end at the third line of dashes; the notes follow). */
static void rows_of(const char *table, char *buf, size_t n) {
    buf[0] = 0;
    const char *p = table;
    int seps = *p == '-';
    for (int line = 0; (p = strchr(p, '\n')) != NULL && seps < 3; line++) {
        p++;
        seps += *p == '-';
        if (line < 2 || *p == '-' || *p == 'S' || !*p) continue;
        char name[64];
        if (sscanf(p, "%63s", name) == 1) {
            strncat(buf, name, n - strlen(buf) - 2);
            strcat(buf, " ");
        }
    }
}

static void test_sort_and_limit(void **state) {
    (void)state;
    char *out, *err, order[256];
    assert_int_equal(run(&out, &err, "table", "--sort", "count", path("known.sprof"), NULL), 0);
    rows_of(out, order, sizeof order);
    /* A (2 calls) first; ties (1 call) in first-seen (close) order: B, C, main. */
    assert_string_equal(order, "A B a_very_long_scope_name_that_is_longer_than_the_colum... main ");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", path("known.sprof"), "--sort",
                         "self_cpu_time_total", "--limit", "2", NULL), 0);
    rows_of(out, order, sizeof order);
    assert_string_equal(order, "main A ");
    /* Percentages and the total still cover all rows. */
    assert_non_null(strstr(out, "50.00%"));
    assert_non_null(strstr(out, "Self CPU time total: 1.000ms\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--sort", "cpu_time", path("known.sprof"), NULL), 0);
    rows_of(out, order, sizeof order);
    assert_string_equal(order, "main A B a_very_long_scope_name_that_is_longer_than_the_colum... ");
    free(out);
    free(err);
    /* cuda_* are aliases of gpu_*. */
    assert_int_equal(run(&out, &err, "table", "--sort", "cuda_time_total", path("known.sprof"), NULL), 0);
    free(out);
    free(err);
}

static void test_usage_errors(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--sort", "bogus", path("known.sprof"), NULL), 2);
    assert_non_null(strstr(err, "'bogus'"));
    assert_non_null(strstr(err, "self_cpu_time_total"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    const char *bad[][3] = {{"--limit", "x"}, {"--group-by", "stack:0"}, {"--format", "xml"}, {"--nope", "1"}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(run(&out, &err, "table", bad[i][0], bad[i][1], path("known.sprof"), NULL), 2);
        assert_true(strlen(err) > 0);
        free(out);
        free(err);
    }
    assert_int_equal(run(&out, &err, "table", NULL), 2);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "frobnicate", NULL), 2);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "--version", NULL), 0);
    assert_non_null(strstr(out, SCOPEPROF_VERSION_STRING));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "--help", NULL), 0);
    assert_non_null(strstr(out, "stacks"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--help", NULL), 0);
    assert_non_null(strstr(out, "--group-by"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", "--metric", "wall", path("known.sprof"), NULL), 2);
    free(out);
    free(err);
}

static void test_csv_json(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("known.sprof"), NULL), 0);
    assert_string_equal(out,
                        "name,count,self_cpu_time_total_ns,cpu_time_total_ns,cpu_time_avg_ns,"
                        "self_cpu_percent,cpu_total_percent\n"
                        "main,1,500000,1000000,1000000,50.00,100.00\n"
                        "A,2,300000,400000,200000,30.00,40.00\n"
                        "B,1,100000,100000,100000,10.00,10.00\n"
                        TW_LONG_NAME ",1,100000,100000,100000,10.00,10.00\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "json", "--limit", "2", path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\"self_cpu_time_total_ns\":1000000,\"rows\":["));
    assert_non_null(strstr(out, "{\"name\":\"A\",\"count\":2,\"self_cpu_time_total_ns\":300000,"
                                "\"cpu_time_total_ns\":400000,\"cpu_time_avg_ns\":200000}"));
    assert_null(strstr(out, "\"B\"")); /* cut by --limit */
    free(out);
    free(err);
}

static void test_group_by(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    static const tw_ev ev[] = {{10, 20, 1, 1}, {30, 50, 2, 1}, {0, 100, 3, 0}};
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 11, "same", "x.c", "f");
    tw_site(&w, 2, 22, "same", "y.c", "g");
    tw_site(&w, 3, 33, "top", "z.c", "h");
    tw_events(&w, 0, ev, 3);
    assert_int_equal(tw_save(&w, path("sites.sprof")), 0);
    free(w.b);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--group-by", "name", path("sites.sprof"), NULL), 0);
    assert_non_null(strstr(out, " same "));
    assert_non_null(strstr(out, "0.030us       0.015us             2  \n")); /* one row, both calls */
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "site", "--format", "csv", path("sites.sprof"), NULL), 0);
    assert_non_null(strstr(out, ",source_location\n"));
    assert_non_null(strstr(out, "same,1,20,20,20,20.00,20.00,y.c:22\n"));
    assert_non_null(strstr(out, "same,1,10,10,10,10.00,10.00,x.c:11\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "site", path("sites.sprof"), NULL), 0);
    assert_non_null(strstr(out, "Source Location  \n"));
    free(out);
    free(err);
    /* Stacks: the innermost N enclosing scopes, outermost first. */
    assert_int_equal(run(&out, &err, "table", "--group-by", "stack:1", "--format", "csv", path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, ",stack\n"));
    assert_non_null(strstr(out, "\nB,1,100000,100000,100000,10.00,10.00,A\n"));
    assert_non_null(strstr(out, "\nA,2,300000,400000,200000,30.00,40.00,main\n"));
    assert_non_null(strstr(out, "\nmain,1,500000,1000000,1000000,50.00,100.00,\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "stack:5", "--format", "csv", path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nB,1,100000,100000,100000,10.00,10.00,main;A\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "stack:2", path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, "   Stack  \n"));
    free(out);
    free(err);
}

static void test_stacks(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "stacks", path("known.sprof"), NULL), 0);
    assert_string_equal(out, "main;A;B 100000\nmain;A 300000\nmain;" TW_LONG_NAME " 100000\nmain 500000\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", "--metric", "total_cpu", path("known.sprof"), NULL), 0);
    assert_string_equal(out, "main;A;B 100000\nmain;A 400000\nmain;" TW_LONG_NAME " 100000\nmain 1000000\n");
    free(out);
    free(err);
}

/* A thread's events inside a scope that closes last (main's) are held
 * until it closes, up to a limit (reporter/tree.c: a quarter of memory; this
 * test's build sets SP_TREE_LIMIT=4096). Under it every stack has main;
 * past it the events handed over early lack it, and a warning says how
 * many (before, nothing was said and half of xmlwf's stacks lacked main). */
static void test_stacks_past_the_tree_limit(void **state) {
    (void)state;
    for (int big = 0; big < 2; big++) {
        enum { N = 5000 };
        const uint32_t leaves = big ? N : 4000;
        static tw_ev ev[N + 1];
        for (uint32_t i = 0; i < leaves; i++) ev[i] = (tw_ev){10 + 10 * (uint64_t)i, 15 + 10 * (uint64_t)i, 2, 1};
        ev[leaves] = (tw_ev){0, 10 + 10 * (uint64_t)leaves, 1, 0};
        tw w = {0, 0, 0};
        tw_header(&w, 1, "p");
        tw_site(&w, 1, 1, "main", "m.c", "main");
        tw_site(&w, 2, 2, "leaf", "m.c", "leaf");
        tw_events(&w, 0, ev, leaves + 1);
        tw_end(&w, leaves + 1);
        assert_int_equal(tw_save(&w, path("big_main.sprof")), 0);
        free(w.b);
        char *out, *err;
        assert_int_equal(run(&out, &err, "stacks", path("big_main.sprof"), NULL), 0);
        char want[128];
        if (!big) {
            snprintf(want, sizeof want, "main;leaf %u\n", 5 * leaves);
            assert_non_null(strstr(out, want));
            assert_null(strstr(err, "warning"));
        } else {
            /* 4096 handed over early (their stacks start at leaf), the
             * other 904 and main held until main closed. */
            assert_true(strncmp(out, "leaf 20480\n", 11) == 0 || strstr(out, "\nleaf 20480\n"));
            snprintf(want, sizeof want, "main;leaf %u\n", 5 * (leaves - 4096));
            assert_non_null(strstr(out, want));
            assert_non_null(strstr(err, "big_main.sprof: warning: 4096 event(s) of a thread came inside scopes "
                                        "still open after 4096 of them"));
        }
        free(out);
        free(err);
    }
}

/* Stacks a few hundred deep, as an interpreter's: the folded key of every
 * prefix, by ancestry, however the rows are found (aggregate.c keeps a node
 * per stack; this test's build drops them every 64, SP_STACK_NODES). Two
 * sites named "f" alternate, the other way round in the second subtree:
 * other nodes, the same rows. The leaf's site is defined only after the
 * first subtree (<unknown> there), its name has a ';' and a line break, and
 * the thread is renamed in between (--per-thread: a new root). */
static char *deep_expect(char *p, const char *root, const char *leaf, uint32_t d, unsigned v) {
    p += sprintf(p, "%s%smain", root ? root : "", root ? ";" : "");
    for (uint32_t i = 1; i <= d; i++) p += sprintf(p, ";%s", i == d && leaf ? leaf : "f");
    return p + sprintf(p, " %u\n", v);
}

static void test_stacks_deep_shared_frames(void **state) {
    (void)state;
    enum { D = 300 };
    static tw_ev ev[D + 1];
    tw w = {0, 0, 0};
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "main", "m.c", "main");
    tw_site(&w, 2, 2, "f", "m.c", "f");
    tw_site(&w, 4, 4, "f", "m.c", "f");
    tw_thread(&w, 0, 5, "T1");
    for (uint32_t sub = 0; sub < 2; sub++) {
        if (sub) {
            tw_site(&w, 3, 3, "leaf;x\ny", "m.c", "leaf");
            tw_thread(&w, 0, 5, "T2");
        }
        for (uint32_t d = D + 1; d-- > 0;) { /* close order: innermost first */
            uint32_t site = d == 0 ? 1 : d == D ? 3 : (d + sub) % 2 ? 2 : 4;
            ev[D - d] = (tw_ev){10000 * sub + d, 10000 * sub + 2 * D + 2 - d, site, d};
        }
        tw_events(&w, 0, ev, D + 1);
    }
    tw_end(&w, 2 * (D + 1));
    assert_int_equal(tw_save(&w, path("deep_shared.sprof")), 0);
    free(w.b);
    /* Each scope's self time is 2 ns; the frames above the leaf are one row
     * for both subtrees. */
    char *want = malloc((size_t)(2 * D + 2) * (4 * D + 64)), *p = want;
    p = deep_expect(p, NULL, "<unknown>", D, 2);
    for (uint32_t d = D; d-- > 0;) p = deep_expect(p, NULL, NULL, d, 4);
    deep_expect(p, NULL, "leaf:x y", D, 2);
    char *out, *err;
    assert_int_equal(run(&out, &err, "stacks", path("deep_shared.sprof"), NULL), 0);
    assert_string_equal(out, want);
    free(out), free(err);
    p = want;
    for (uint32_t sub = 0; sub < 2; sub++)
        for (uint32_t d = D + 1; d-- > 0;) p = deep_expect(p, sub ? "T2" : "T1", d < D ? NULL : sub ? "leaf:x y" : "<unknown>", d, 2);
    assert_int_equal(run(&out, &err, "stacks", "--per-thread", path("deep_shared.sprof"), NULL), 0);
    assert_string_equal(out, want);
    free(out), free(err);
    free(want);
    /* By stack:2, f under f;f: depths 3..D-1 of both subtrees. */
    assert_int_equal(run(&out, &err, "table", "--group-by", "stack:2", "--format", "csv", path("deep_shared.sprof"), NULL), 0);
    char row[64];
    snprintf(row, sizeof row, "\nf,%u,%u,", 2 * (D - 3), 4 * (D - 3)); /* count, self */
    const char *r = strstr(out, row), *eol = r ? strchr(r + 1, '\n') : NULL;
    assert_non_null(eol);
    assert_true(eol - r > 5 && strncmp(eol - 4, ",f;f", 4) == 0);
    free(out), free(err);
}

static void test_merge(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("known.sprof"), path("known8.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nA,4,600000,800000,200000,30.00,40.00\n"));
    assert_non_null(strstr(out, "\nmain,2,1000000,2000000,1000000,50.00,100.00\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--per-process", path("known.sprof"), path("known8.sprof"), NULL), 0);
    const char *second = strstr(out, "\n== ");
    assert_non_null(second);
    assert_true(strncmp(out, "== ", 3) == 0);
    assert_non_null(strstr(second, "known8.sprof\n"));
    /* Each table on its own: A has 2 calls in both. */
    const char *a1 = strstr(out, "400.000us     200.000us             2  \n");
    assert_non_null(a1);
    assert_true(a1 < second);
    assert_non_null(strstr(second, "400.000us     200.000us             2  \n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--per-process", "--format", "csv", path("known.sprof"), path("known8.sprof"), NULL), 0);
    assert_true(strncmp(out, "file,name,", 10) == 0);
    assert_non_null(strstr(out, "known8.sprof,A,2,"));
    free(out);
    free(err);
    /* The stack grouping keeps each file's threads apart. */
    assert_int_equal(run(&out, &err, "stacks", path("known.sprof"), path("known8.sprof"), NULL), 0);
    assert_non_null(strstr(out, "main;A;B 200000\n"));
    free(out);
    free(err);
}

/* Format 2 files hold the same events as format 1 files in fewer bytes:
 * every command prints the same for both. */
static void expect_same_output(const char *cmd, const char *opt, const char *v1, const char *v2) {
    char *o1, *e1, *o2, *e2;
    int rc1 = opt ? run(&o1, &e1, cmd, "--format", opt, path(v1), NULL) : run(&o1, &e1, cmd, path(v1), NULL);
    int rc2 = opt ? run(&o2, &e2, cmd, "--format", opt, path(v2), NULL) : run(&o2, &e2, cmd, path(v2), NULL);
    assert_int_equal(rc1, 0);
    assert_int_equal(rc2, 0);
    assert_true(strlen(o1) > 40);
    if (strcmp(o1, o2) != 0) fail_msg("%s %s: %s and %s differ:\n%s\n--\n%s", cmd, opt ? opt : "", v1, v2, o1, o2);
    free(o1), free(e1), free(o2), free(e2);
}

static void test_format_versions(void **state) {
    (void)state;
    const char *pairs[][2] = {{"known", "v2_known"}, {"known_long", "v2_known_long"}, {"rich", "v2_rich"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        expect_same_output("table", NULL, pairs[i][0], pairs[i][1]);
        expect_same_output("table", "csv", pairs[i][0], pairs[i][1]);
        expect_same_output("stacks", NULL, pairs[i][0], pairs[i][1]);
    }
    /* The scaled set did take the long form: its table shows seconds. */
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("v2_known_long"), NULL), 0);
    assert_non_null(strstr(out, "Self CPU time total: 10.000s"));
    free(out), free(err);
}

/* Input shapes (format 5, PROFILE_SCOPE_SHAPE): mktrace's shaped(), whose
 * rows are worked out there. */
static const char shapes_csv[] =
    "name,count,self_cpu_time_total_ns,cpu_time_total_ns,cpu_time_avg_ns,self_cpu_percent,cpu_total_percent,input_shapes\n"
    "main,1,450,1000,1000,36.00,80.00,[]\n"
    "gemm,3,400,400,133,32.00,32.00,\"[[64, 32, 16]]\"\n"
    "conv2d,1,200,300,300,16.00,24.00,\"[[128, 64, 56, 56], [64, 64, 3, 3], [], [-1]]\"\n"
    "gemm,2,150,150,75,12.00,12.00,[]\n"
    "gemm,1,50,50,50,4.00,4.00,\"[[8, 8, 8]]\"\n";

static void test_input_shapes(void **state) {
    (void)state;
    char *out, *err;
    /* One row per name and shape; a record with an empty list of inputs is
     * in gemm's [] row, with the scope recorded without shapes. */
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "csv", path("v5_shapes"), NULL), 0);
    assert_string_equal(out, shapes_csv);
    assert_string_equal(err, "");
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "input_shape", path("v5_shapes"), NULL), 0);
    assert_non_null(strstr(out, "    # of Calls                                   Input Shapes  \n"));
    assert_non_null(strstr(out, "             1  [[128, 64, 56, 56], [64, 64, 3, 3], [], [-1]]  \n"));
    assert_non_null(strstr(out, "             3                                 [[64, 32, 16]]  \n"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "json", path("v5_shapes"), NULL), 0);
    assert_non_null(strstr(out, "\"input_shapes\":\"[[8, 8, 8]]\""));
    free(out), free(err);
    /* By name, shapes do not split rows. */
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("v5_shapes"), NULL), 0);
    assert_non_null(strstr(out, "\ngemm,6,600,600,100,48.00,48.00\n"));
    assert_null(strstr(out, "[["));
    free(out), free(err);
    /* The trace: Kineto's "Input Dims" among the args (none for a scope
     * without shapes), read back by the Chrome reader into the same rows. */
    assert_int_equal(run(&out, &err, "trace", path("v5_shapes"), NULL), 0);
    assert_non_null(strstr(out, "\"func\":\"conv\",\"Input Dims\":[[128, 64, 56, 56], [64, 64, 3, 3], [], [-1]]}}"));
    assert_non_null(strstr(out, "\"ts\":0.400,\"dur\":0.100,\"pid\":77,\"tid\":77,\"args\":{\"file\":\"m.c\",\"line\":20,\"func\":\"gemm\"}}"));
    assert_non_null(strstr(out, "\"func\":\"gemm\",\"Input Dims\":[]}}"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "trace", "-o", path("v5_shapes.json"), path("v5_shapes"), NULL), 0);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "csv", path("v5_shapes.json"), NULL), 0);
    assert_string_equal(out, shapes_csv);
    free(out), free(err);
    /* diff pairs rows by name and shape. */
    assert_int_equal(run(&out, &err, "diff", "--group-by", "shape", "--format", "csv", path("v5_shapes"),
                         path("v5_shapes.json"), NULL), 0);
    assert_true(strncmp(out, "name,input_shapes,base_count,new_count,", 39) == 0);
    assert_non_null(strstr(out, "\ngemm,\"[[64, 32, 16]]\",3,3,400,400,"));
    assert_non_null(strstr(out, "\ngemm,[],2,2,150,150,"));
    assert_null(strstr(out, "only"));
    free(out), free(err);
}

/* Shapes that do not parse are damage, told as other damage (exit 1,
 * the offset of the chunk), the chunks before them still counted; a format
 * 4 file's field in that place is reserved, whatever it holds. */
static void test_input_shapes_bad(void **state) {
    (void)state;
    const char *bad[][2] = {{"v5_shape_m_past", "offset 179: EVENTS chunk: event 1 has malformed input shapes"},
                            {"v5_shape_dims_past", "offset 179: EVENTS chunk: event 1 has malformed input shapes"},
                            {"v5_shape_too_many", "offset 179: EVENTS chunk: event 1 has malformed input shapes"},
                            {"v5_shape_units_past",
                             "offset 179: EVENTS chunk: event 1: its input shapes (9 units) run past the chunk"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *out, *err;
        assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "csv", path(bad[i][0]), NULL), 1);
        if (!strstr(err, bad[i][1])) fail_msg("%s: stderr '%s' lacks '%s'", bad[i][0], err, bad[i][1]);
        assert_non_null(strstr(out, "\ns,1,10,10,10,100.00,100.00,[]\n")); /* the chunk before */
        free(out), free(err);
        assert_int_equal(run(&out, &err, "trace", "-o", path("bad_shape.json"), path(bad[i][0]), NULL), 1);
        assert_non_null(strstr(err, bad[i][1]));
        free(out), free(err);
    }
    expect_same_output("table", "csv", "v4_reserved", "v4_reserved_zero");
    expect_same_output("trace", NULL, "v4_reserved", "v4_reserved_zero");
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "csv", path("v4_reserved"), NULL), 0);
    assert_non_null(strstr(out, "\ns,2,1099511627776,1099511627786,549755813893,100.00,100.00,[]\n"));
    assert_string_equal(err, "");
    free(out), free(err);
}

static void expect_error(const char *file, int rc_want, const char *msg) {
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path(file), NULL), rc_want);
    if (!strstr(err, msg) || !strstr(err, file)) fail_msg("%s: stderr '%s' lacks '%s'", file, err, msg);
    free(out);
    free(err);
}

static void test_bad_inputs(void **state) {
    (void)state;
    expect_error("empty", 1, "offset 0: empty file");
    expect_error("bad_magic", 1, "offset 0: not a scopeprof trace");
    expect_error("wrong_version", 1, "offset 8: unsupported format version 99.0");
    expect_error("bad_chunk_magic", 1, "offset 95: bad chunk magic");
    expect_error("bad_crc", 1, "offset 95: bad chunk CRC");
    expect_error("absurd_length", 1, "offset 95: absurd chunk length");
    expect_error("event_count_overflow", 1, "offset 49: EVENTS chunk: 1000000 events run past");
    {   /* The deepest depth the writer's 30-bit field holds is read (issue 16). */
        char *o, *e;
        assert_int_equal(run(&o, &e, "table", "--format", "csv", path("absurd_depth"), NULL), 0);
        assert_non_null(strstr(o, "\n<unknown>,1,10,10,"));
        assert_null(strstr(e, "(limit"));
        free(o);
        free(e);
    }
    expect_error("site_length_overflow", 1, "string lengths run past the chunk");
    expect_error("site_id_zero", 1, "id 0");
    expect_error("no_such_file", 1, "cannot open");
    expect_error("header_cut", 0, "truncated at byte 30");
    expect_error("v2_long_cut", 1, "EVENTS chunk: event 1 runs past the chunk");
    /* The trace command reports the same and exits the same. */
    char *out, *err;
    assert_int_equal(run(&out, &err, "trace", "-o", path("bad.json"), path("bad_crc"), NULL), 1);
    assert_non_null(strstr(err, "offset 95: bad chunk CRC"));
    free(out);
    free(err);
}

static void test_truncated(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("truncated_mid_chunk"), NULL), 0);
    assert_non_null(strstr(err, "truncated at byte 470 (last whole chunk ends at 412)"));
    /* The first EVENTS chunk (B, then A) was read; the second was not. */
    assert_string_equal(strchr(out, '\n') + 1, "A,1,200000,300000,300000,66.67,100.00\n"
                                               "B,1,100000,100000,100000,33.33,33.33\n");
    free(out);
    free(err);
    /* At the reader's level: everything up to the last whole chunk. */
    tw w = {0, 0, 0};
    tw_known(&w, 7);
    sp_callbacks cb = {NULL, NULL, NULL, NULL};
    sp_result res;
    for (size_t cut = 0; cut < w.n; cut++) {
        int st = sp_read_mem(w.b, cut, &cb, &res);
        if (cut >= 48 + 5) {
            /* Cut between two chunks, the file looks whole but lacks END. */
            if (st == SP_OK) assert_true(res.good_end == cut && !res.saw_end);
            else assert_int_equal(st, SP_TRUNCATED);
            assert_true(res.good_end <= cut);
            assert_int_equal(res.offset, cut);
            assert_int_equal(res.events, cut >= 508 ? 5 : cut >= 412 ? 2 : 0);
        }
    }
    assert_int_equal(sp_read_mem(w.b, w.n, &cb, &res), SP_OK);
    assert_int_equal(res.events, 5);
    assert_true(res.saw_end);
    free(w.b);
}

static void test_skips_and_empty(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("unknown_chunk"), NULL), 0);
    assert_string_equal(err, "");
    assert_non_null(strstr(out, "\ns,1,10,10,10,100.00,100.00\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", path("zero_events"), NULL), 0);
    assert_non_null(strstr(out, "Self CPU time total: 0.000us\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", path("header_only"), NULL), 0);
    free(out);
    free(err);
    /* Site ids and thread indexes far out of range: no giant tables. */
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("huge_ids"), NULL), 0);
    assert_non_null(strstr(out, "<unknown>,1,"));
    free(out);
    free(err);
    /* GPU interval paired by launch time; a 4 KiB free counted in "outer". */
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("gpu_mem"), NULL), 0);
    assert_non_null(strstr(out, "\ngpu,1,100,100,100,33.33,33.33,100,100,100,100.00,0,0\n"));
    assert_non_null(strstr(out, "\nouter,1,200,300,300,66.67,100.00,0,100,100,0.00,-4096,-4096\n"));
    free(out);
    free(err);
    /* GPU tracks as Kineto lays them out (issue 13): pid = the device, tid =
     * a small stream number named "stream N", category gpu_user_annotation
     * (the CPU side and the arrows too: DevTools binds arrows by category),
     * "ac2g" arrows with the id as "correlation". Two threads' intervals on
     * one stream that overlap without nesting go to two tracks (lanes); the
     * per-thread default stream is a stream per thread. */
    assert_int_equal(run(&out, &err, "trace", path("gpu_shared"), NULL), 0);
    assert_non_null(strstr(out, "{\"name\":\"k\",\"cat\":\"gpu_user_annotation\",\"ph\":\"X\",\"ts\":0.150,"
                                "\"dur\":0.100,\"pid\":1,\"tid\":3,\"args\":{\"file\":\"g.c\",\"line\":1,"
                                "\"func\":\"fn\",\"launch_ts\":0.100,\"correlation\":3}}"));
    assert_non_null(strstr(out, "\"ts\":0.200,\"dur\":0.100,\"pid\":1,\"tid\":4,"));
    assert_non_null(strstr(out, "{\"name\":\"ac2g\",\"cat\":\"gpu_user_annotation\",\"ph\":\"s\",\"id\":3,\"ts\":0.100,\"pid\":5000,\"tid\":4242}"));
    assert_non_null(strstr(out, "{\"name\":\"ac2g\",\"cat\":\"gpu_user_annotation\",\"ph\":\"f\",\"bp\":\"e\",\"id\":3,\"ts\":0.150,\"pid\":1,\"tid\":3}"));
    assert_non_null(strstr(out, "\"pid\":1,\"tid\":3,\"args\":{\"name\":\"stream 3\"}"));
    assert_non_null(strstr(out, "\"pid\":1,\"tid\":4,\"args\":{\"name\":\"stream 3 (2)\"}"));
    assert_non_null(strstr(out, "\"pid\":1,\"tid\":1,\"args\":{\"name\":\"stream 1 (per-thread default, tid 4242)\"}"));
    assert_non_null(strstr(out, "\"pid\":1,\"tid\":2,\"args\":{\"name\":\"stream 2 (per-thread default, tid 4243)\"}"));
    assert_non_null(strstr(out, "\"pid\":1,\"tid\":0,\"args\":{\"name\":\"GPU 1: unknown device\"}"));
    assert_non_null(strstr(out, "{\"name\":\"k\",\"cat\":\"gpu_user_annotation\",\"ph\":\"X\",\"ts\":0.100,\"dur\":0.100,\"pid\":5000,"));
    free(out);
    free(err);
}

/* DIR/NAME holds text (a JSON input, or a trace to read back). */
static void put_file(const char *name, const char *text) {
    FILE *f = fopen(path(name), "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_trace_json_text(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "trace", path("known.sprof"), NULL), 0);
    assert_true(strncmp(out, "{\"traceEvents\":[", 16) == 0);
    assert_non_null(strstr(out, "\"displayTimeUnit\":\"ns\""));
    /* Sub-microsecond precision: B starts at 150000 ns. */
    assert_non_null(strstr(out, "{\"name\":\"B\",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":150.000,\"dur\":100.000,"
                                "\"pid\":7,\"tid\":7,\"args\":{\"file\":\"b.c\",\"line\":30,\"func\":\"fb\"}}"));
    /* Start order: main, A, B, A, C. */
    const char *m = strstr(out, "\"name\":\"main\",\"cat\""), *a = strstr(out, "\"name\":\"A\""),
               *b = strstr(out, "\"name\":\"B\"");
    assert_true(m && a && b && m < a && a < b);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", "-o", path("nasty.json"), path("nasty"), NULL), 0);
    assert_string_equal(out, "");
    free(out);
    free(err);
    FILE *f = fopen(path("nasty.json"), "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    char *js = slurp(f);
    assert_non_null(strstr(js, "\"quote\\\" back\\\\slash\""));
    assert_non_null(strstr(js, "\"ctl\\u0001\\u001f\\u0009tab\\u000anl\""));
    assert_non_null(strstr(js, "\"bad \\ufffd\\ufffd utf8 \\ufffd\\ufffd\\ufffd\""));
    assert_non_null(strstr(js, "\"utf8 \xc3\xa9 \xf0\x9f\x98\x80\""));
    free(js);
    /* A top-level slice (its end shared with whatever follows) whose ts +
     * dur, added in doubles, would miss its end's double: dur is the
     * difference of the doubles, %.17g, as `help trace` says; read back and
     * rounded to the ns, it is the exact 1007 ns. */
    tw w = {0, 0, 0};
    tw_header(&w, 3, "far");
    tw_site(&w, 1, 10, "late", "l.c", "f");
    static const tw_ev ev[] = {{75186531411283ull, 75186531412290ull, 1, 0}};
    tw_events(&w, 0, ev, 1);
    tw_end(&w, 1);
    assert_int_equal(tw_save(&w, path("far.sprof")), 0);
    free(w.b);
    assert_int_equal(run(&out, &err, "trace", path("far.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\"ph\":\"X\",\"ts\":75186531411.283,\"dur\":1.006988525390625,"));
    put_file("far.json", out);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("far.json"), NULL), 0);
    assert_non_null(strstr(out, "\nlate,1,1007,1007,1007,"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "help", "trace", NULL), 0);
    assert_non_null(strstr(out, "ts and dur have three decimals (the exact nanosecond), except the dur of a\n"));
    assert_non_null(strstr(out, "printed %.17g (2000.1489868164062)"));
    free(out);
    free(err);
}


/* ---- Chrome trace JSON through the CLI (reporter/chrome.c) ----------------- */
/* PyTorch's GPU case: aten::linear -> aten::addmm -> cudaLaunchKernel, and
 * the kernel gemm (4 us) of addmm's External id. PyTorch's _build_table:
 * addmm self GPU 4 us, gemm's row 4 us, Self CUDA time total 4 us (device
 * events only), so both rows show 100%. */
static const char gpu_json[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10,\"args\":{\"External id\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":8,\"args\":{\"External id\":2,\"Input Dims\":[[4,8],[8,8],[]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":3,\"args\":{\"External id\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":4,\"args\":{\"External id\":2,\"device\":0,\"stream\":7}}\n"
    "]}\n";

static const char gpu_golden[] =
    "--------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "                Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg      Self GPU    Self GPU %     GPU total  GPU time avg    # of Calls  \n"
    "--------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "        aten::linear        20.00%       2.000us       100.00%      10.000us      10.000us       0.000us         0.00%       4.000us       4.000us             1  \n"
    "         aten::addmm        50.00%       5.000us        80.00%       8.000us       8.000us       4.000us       100.00%       4.000us       4.000us             1  \n"
    "    cudaLaunchKernel        30.00%       3.000us        30.00%       3.000us       3.000us       0.000us         0.00%       0.000us       0.000us             1  \n"
    "                gemm         0.00%       0.000us         0.00%       0.000us       0.000us       4.000us       100.00%       4.000us       4.000us             1  \n"
    "--------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "Self CPU time total: 10.000us\n"
    "Self GPU time total: 4.000us\n"
    "CPU time is wall time on the thread, as in PyTorch: a thread's waits (locks, I/O, sleep) count as its self time\n";

static void test_chrome_gpu_total(void **state) {
    (void)state;
    char *out, *err;
    put_file("gpu.json", gpu_json);
    put_file("gpu_rank1.json", gpu_json); /* the same file twice is refused */
    assert_int_equal(run(&out, &err, "table", path("gpu.json"), NULL), 0);
    assert_string_equal(out, gpu_golden);
    assert_string_equal(err, "");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("gpu.json"), NULL), 0);
    assert_non_null(strstr(out, "\naten::addmm,1,5000,8000,8000,50.00,80.00,4000,4000,4000,100.00\n"));
    assert_non_null(strstr(out, "\ngemm,1,0,0,0,0.00,0.00,4000,4000,4000,100.00\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "json", path("gpu.json"), NULL), 0);
    assert_non_null(strstr(out, "\"self_gpu_time_total_ns\":4000,\"rows\""));
    free(out);
    free(err);
    /* The rule holds through the stack grouping (device sites noted before
     * the tree) and over two files (8 us, still 50% + 50% = 100% per side). */
    assert_int_equal(run(&out, &err, "table", "--group-by", "stack:1", path("gpu.json"), NULL), 0);
    assert_non_null(strstr(out, "Self GPU time total: 4.000us\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--per-rank", path("gpu.json"), path("gpu_rank1.json"), NULL), 0);
    assert_non_null(strstr(out, "Self GPU time total: 8.000us\n"));
    free(out);
    free(err);
    /* A .sprof file's GPU scopes: every row counts, as before. */
    tw w = {0, 0, 0};
    tw_rich(&w, 100, 0xFFFFFFFFu);
    assert_int_equal(tw_save(&w, path("rich.sprof")), 0);
    free(w.b);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("rich.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\ngemm,2,200,200,100,5.88,5.88,550,550,275,91.67,"));
    assert_non_null(strstr(out, "\ncopy,1,100,100,100,2.94,2.94,50,50,50,8.33,"));
    free(out);
    free(err);
}

static void test_chrome_input(void **state) {
    (void)state;
    char *out, *err;
    /* The bare-array form, with leading space: the same rows. */
    put_file("arr.json", "\n  [{\"ph\":\"X\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},\n"
                         "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":4}]\n");
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("arr.json"), NULL), 0);
    assert_non_null(strstr(out, "\nouter,1,6000,10000,10000,60.00,100.00\n"));
    assert_non_null(strstr(out, "\ninner,1,4000,4000,4000,40.00,40.00\n"));
    assert_string_equal(err, "");
    free(out);
    free(err);
    /* Chrome JSON and a .sprof file merge into one table. */
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("arr.json"), path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nouter,1,"));
    assert_non_null(strstr(out, "\nmain,1,"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", path("gpu.json"), NULL), 0);
    assert_string_equal(out, "aten::linear;aten::addmm;cudaLaunchKernel 3000\naten::linear;aten::addmm 5000\n"
                             "aten::linear 2000\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", path("gpu.json"), NULL), 0);
    /* the op is a CPU slice; its kernel alone is on the GPU stream's track */
    assert_non_null(strstr(out, "{\"name\":\"aten::addmm\",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":1.000,\"dur\":8.000,"));
    assert_non_null(strstr(out, "{\"name\":\"gemm\",\"cat\":\"gpu\",\"ph\":\"X\",\"ts\":5.000,\"dur\":4.000,"));
    assert_non_null(strstr(out, "\"name\":\"stream 7\""));
    free(out);
    free(err);
    /* --group-by shape: name + "Input Dims", PyTorch's input_shapes text. */
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "csv", path("gpu.json"), NULL), 0);
    assert_non_null(strstr(out, ",input_shapes\n"));
    assert_non_null(strstr(out, "\naten::addmm,1,5000,8000,8000,50.00,80.00,4000,4000,4000,100.00,\"[[4, 8], [8, 8], []]\"\n"));
    assert_non_null(strstr(out, "\naten::linear,1,2000,10000,10000,20.00,100.00,0,4000,4000,0.00,[]\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", path("gpu.json"), NULL), 0);
    assert_non_null(strstr(out, "Input Shapes  \n"));
    assert_non_null(strstr(out, "[[4, 8], [8, 8], []]  \n"));
    free(out);
    free(err);
    /* ...and with a .sprof file (format 5 holds shapes; these scopes have
     * none: []), one table over both. */
    assert_int_equal(run(&out, &err, "table", "--group-by", "shape", "--format", "csv", path("gpu.json"),
                         path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\naten::addmm,1,5000,8000,8000,"));
    assert_non_null(strstr(out, "\nmain,1,500000,1000000,1000000,"));
    assert_non_null(strstr(out, ",100.00,[]\n"));
    assert_string_equal(err, "");
    free(out);
    free(err);
    /* Malformed JSON: the file, the byte offset, exit 1; what came before is
     * still reported. */
    put_file("bad.json", "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5}, {\"ph\":\"X\" \"name\":\"b\"}]");
    assert_int_equal(run(&out, &err, "table", path("bad.json"), NULL), 1);
    assert_non_null(strstr(err, "bad.json: offset 65: expected ',' or '}'"));
    assert_non_null(strstr(out, "\n    a  "));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", path("bad.json"), NULL), 1);
    assert_non_null(strstr(err, "bad.json: offset 65:"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", path("bad.json"), NULL), 1);
    assert_non_null(strstr(err, "bad.json: offset 65:"));
    free(out);
    free(err);
}

/* --per-rank: a row missing from a file counts as 0 there (min, mean, max). */
static void test_per_rank_missing(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    tw_header_rank(&w, 9, "part", 1);
    tw_site(&w, 1, 10, "main", "main.c", "main");
    tw_site(&w, 2, 20, "A", "a.c", "fa");
    tw_thread(&w, 0, 9, "main");
    static const tw_ev ev[] = {{100000, 300000, 2, 1}, {0, 1000000, 1, 0}};
    tw_events(&w, 0, ev, 2);
    tw_end(&w, 2);
    assert_int_equal(tw_save(&w, path("part.sprof")), 0);
    free(w.b);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--per-rank", "--format", "csv", path("known.sprof"),
                         path("part.sprof"), NULL), 0);
    /* B: 100us in known.sprof, absent from part.sprof: min 0, mean 50us. */
    assert_non_null(strstr(out, "\nB,1,100000,100000,100000,5.00,5.00,0,50000,100000,"));
    assert_non_null(strstr(out, "\nA,3,"));
    assert_non_null(strstr(out, ",200000,300000,400000,"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--per-rank", path("known.sprof"), path("part.sprof"), NULL), 0);
    /* B: calls 0 (in part.sprof, rank 1) to 1 (known.sprof, no rank: file 1). */
    assert_non_null(strstr(out, "Across 2 files (file 1, rank 1);"));
    assert_non_null(strstr(out, "\nB                                                                0 r1          0.50          1 f1"
                                "        0.000us r1      50.000us      100.000us f1        0.000us r1      50.000us      "
                                "100.000us f1          2.00\n"));
    free(out);
    free(err);
}

/* --group-by thread of a trace JSON whose thread_name metadata comes after
 * the thread's events (as `scopeprof trace` writes them): the rows are
 * labelled with the name, not the tid they were made under. 1000 children
 * of main: enough for the table to take rows before the reader reaches the
 * name (with 300, it had them all only at the end). */
static void test_group_by_thread_late_name(void **state) {
    (void)state;
    enum { KIDS = 1000 };
    size_t cap = 100 * (KIDS + 4), n = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    n += (size_t)snprintf(json + n, cap - n, "{\"traceEvents\":[\n"
                          "{\"name\":\"main\",\"ph\":\"X\",\"ts\":0,\"dur\":100000,\"pid\":1,\"tid\":7},\n");
    for (int i = 0; i < KIDS; i++)
        n += (size_t)snprintf(json + n, cap - n,
                              "{\"name\":\"child\",\"ph\":\"X\",\"ts\":%d,\"dur\":50,\"pid\":1,\"tid\":7},\n",
                              i * 100 + 10);
    snprintf(json + n, cap - n, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":7,"
                                "\"args\":{\"name\":\"worker\"}}]}\n");
    put_file("late_name.json", json);
    free(json);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--group-by", "thread", "--format", "csv", path("late_name.json"), NULL), 0);
    assert_non_null(strstr(out, "\nmain,1,50000000,100000000,100000000,50.00,100.00,worker\n"));
    assert_non_null(strstr(out, "\nchild,1000,50000000,50000000,50000,50.00,50.00,worker\n"));
    free(out);
    free(err);
}

/* A run of two steps, [1, 2] and [2, 3] us, each holding a scope "body"
 * (800 and 500 ns) on thread "main"; rank 0xFFFFFFFF: none. */
static void write_steps_file(const char *name, uint64_t pid, uint32_t rank) {
    tw w = {0, 0, 0};
    tw_header_rank(&w, pid, "steps", rank);
    tw_site(&w, 1, 10, "body", "s.c", "f");
    tw_thread(&w, 0, pid, "main");
    static const tw_ev ev[] = {{1100, 1900, 1, 0}, {2100, 2600, 1, 0}};
    tw_events(&w, 0, ev, 2);
    static const uint64_t st[][3] = {{1, 1000, 2000}, {2, 2000, 3000}};
    tw_steps(&w, st, 2);
    tw_end(&w, 2);
    assert_int_equal(tw_save(&w, path(name)), 0);
    free(w.b);
}

/* --per-rank: the imbalance of a row without self time on any rank (the
 * steps' ProfilerStep*: 0 / 0) is '-', not 0.00. */
static void test_per_rank_no_self_time(void **state) {
    (void)state;
    write_steps_file("steps_r0.sprof", 20, 0);
    write_steps_file("steps_r1.sprof", 21, 1);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--per-rank", path("steps_r0.sprof"), path("steps_r1.sprof"), NULL), 0);
    const char *row = strstr(out, "\nProfilerStep*");
    assert_non_null(row);
    const char *eol = strchr(row + 1, '\n');
    assert_non_null(eol);
    assert_true(eol - row > 3 && memcmp(eol - 3, "  -", 3) == 0);
    row = strstr(out, "\nbody ");
    assert_non_null(row);
    eol = strchr(row + 1, '\n');
    assert_true(memcmp(eol - 6, "  1.00", 6) == 0); /* the same self time on both ranks */
    free(out);
    free(err);
}

/* --group-by rank: the steps' ProfilerStep* row is a row per rank, as every
 * other row (it was one row over the ranks, its Rank empty). */
static void test_group_by_rank_steps(void **state) {
    (void)state;
    write_steps_file("steps_r0.sprof", 20, 0);
    write_steps_file("steps_r1.sprof", 21, 1);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--group-by", "rank", "--format", "csv", path("steps_r0.sprof"),
                         path("steps_r1.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nProfilerStep*,2,0,2000,1000,0.00,76.92,rank 0\n"));
    assert_non_null(strstr(out, "\nProfilerStep*,2,0,2000,1000,0.00,76.92,rank 1\n"));
    assert_non_null(strstr(out, "\nbody,2,1300,1300,650,50.00,50.00,rank 1\n"));
    assert_null(strstr(out, ",\n")); /* no row without its rank */
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* Issue 23: files of several hosts on one clock (reporter/clocks.c,
 * docs/MPI.md). The known set once per rank, with a CLOCK chunk (format
 * 3.2) spliced in after the header:
 *   rank 0 on host a: offsets 0 (rank 0's clock is the job's);
 *   rank 1 on host b: rank 0's clock is 5 ms ahead at 0 and 5.002 ms at
 *     2 ms (a drift of 1 us per ms), so main [0, 1 ms] maps to
 *     [5 ms, 6.001 ms];
 *   rank 2 on host c: no offsets, its realtime offset 3 ms above rank 0's,
 *     so main maps to [3 ms, 4 ms], and stderr says why.
 * A point: local time, offset, best round trip (ns). */
static void clock_file(const char *name, uint64_t pid, uint32_t rank, const char *host, int64_t realtime,
                       uint32_t npts, const int64_t (*pts)[3]) {
    tw w = {0, 0, 0}, p = {0, 0, 0};
    tw_known_rank(&w, pid, rank, 1);
    for (int i = 0; i < 8; i++) w.b[32 + i] = (unsigned char)((uint64_t)realtime >> (8 * i));
    size_t hl = 48 + strlen("known"); /* format 1: no header CRC */
    tw_u32(&p, rank);
    tw_u32(&p, 3);
    tw_u32(&p, npts);
    tw_u32(&p, (uint32_t)strlen(host));
    for (uint32_t i = 0; i < npts; i++) {
        tw_u64(&p, (uint64_t)pts[i][0]);
        tw_u64(&p, (uint64_t)pts[i][1]);
        tw_u64(&p, (uint64_t)pts[i][2]); /* round trip */
        tw_u32(&p, i);
        tw_u32(&p, 0);
    }
    tw_put(&p, host, strlen(host));
    assert_int_equal(tw_save_with_first(&w, hl, SCOPEPROF_CHUNK_CLOCK, &p, path(name)), 0);
}

static void test_clock_alignment(void **state) {
    (void)state;
    static const int64_t zero[2][3] = {{0, 0, 2000}, {2000000, 0, 2000}};
    static const int64_t drift[2][3] = {{0, 5000000, 2000}, {2000000, 5002000, 2000}};
    clock_file("clk0.sprof", 9, 0, "a", 0, 2, zero);
    clock_file("clk1.sprof", 10, 1, "b", 0, 2, drift);
    clock_file("clk2.sprof", 11, 2, "c", 3000000, 0, NULL);
    char *out, *err;
    assert_int_equal(run(&out, &err, "trace", path("clk2.sprof"), path("clk1.sprof"), path("clk0.sprof"), NULL), 0);
    assert_non_null(strstr(out, "{\"name\":\"main\",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":5000.000,\"dur\":1001.000,\"pid\":10,"));
    assert_non_null(strstr(out, "{\"name\":\"main\",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":3000.000,\"dur\":1000.000,\"pid\":11,"));
    assert_non_null(strstr(out, "{\"name\":\"main\",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":0.000,\"dur\":1000.000,\"pid\":9,"));
    /* Labelled with rank and host, sorted by rank whatever the order given. */
    assert_non_null(strstr(out, "\"pid\":10,\"tid\":0,\"args\":{\"name\":\"known (pid 10, rank 1, host b)\"}"));
    assert_non_null(strstr(out, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":11,\"tid\":0,\"args\":{\"sort_index\":2}}"));
    assert_non_null(strstr(err, "1 file(s) on another clock than "));
    assert_non_null(strstr(err, "clk0.sprof (host a) and without MPI clock offsets: aligned by the realtime offsets"));
    free(out);
    free(err);
    /* --window counts from the earliest start on the common clock (rank 0's
     * main at 1 us): 4.5 ms..5.5 ms holds rank 1's main only. */
    assert_int_equal(run(&out, &err, "trace", "--window", "4.5ms:5.5ms", path("clk0.sprof"), path("clk1.sprof"),
                         path("clk2.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\"ts\":5000.000,\"dur\":1001.000,\"pid\":10,"));
    assert_null(strstr(out, "\"ts\":3000.000,\"dur\":1000.000,\"pid\":11,"));
    assert_null(strstr(out, "\"ts\":0.000,\"dur\":1000.000,\"pid\":9,"));
    free(out);
    free(err);
    /* Without the alignment (table): times are not touched, the ranks are
     * the columns of --per-rank and the rows of --group-by rank. */
    assert_int_equal(run(&out, &err, "table", "--per-rank", path("clk0.sprof"), path("clk1.sprof"), path("clk2.sprof"),
                         NULL), 0);
    assert_non_null(strstr(out, "Across 3 ranks (0-2);"));
    assert_non_null(strstr(out, "Straggler: rank 0, "));
    assert_null(strstr(err, "of the job's"));
    free(out);
    free(err);
    /* Two of the job's three ranks (their CLOCK chunks say 3): said (CoMD
     * review: 3 of 4 ranks' files gave no sign). */
    assert_int_equal(run(&out, &err, "table", "--group-by", "rank", "--format", "csv", path("clk0.sprof"),
                         path("clk2.sprof"), NULL), 0);
    assert_non_null(strstr(err, "scopeprof: note: these files hold 2 of the job's 3 ranks (rank 1 among those "
                                "missing): what is shown is theirs only\n"));
    assert_non_null(strstr(out, ",rank\n"));
    assert_non_null(strstr(out, "\nmain,1,500000,1000000,1000000,25.00,50.00,rank 0\n"));
    assert_non_null(strstr(out, "\nmain,1,500000,1000000,1000000,25.00,50.00,rank 2\n"));
    free(out);
    free(err);
    /* --group-by process, for files of a server's processes: the same */
    char *same;
    assert_int_equal(run(&same, &err, "table", "--group-by", "process", "--format", "csv", path("clk0.sprof"),
                         path("clk2.sprof"), NULL), 0);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "rank", "--format", "csv", path("clk0.sprof"),
                         path("clk2.sprof"), NULL), 0);
    assert_string_equal(same, out);
    free(same);
    free(out);
    free(err);
}

/* Noisy points (CoMD, `mpirun --oversubscribe -np 2` on a loaded 2-CPU
 * host: rank 1's MPI_Init point was 1.6 ms off with an 8 ms round trip; the
 * line through it put 12 of 102 MPI_Sendrecv pairs out of causal order by
 * up to 883 us). The known set (main [0, 1 ms]) per rank:
 *   rank 0 on host a: its points 0;
 *   rank 1 on host a (rank 0's clock): CoMD's points; mapped as rank 0 is,
 *     main at 0 (the line gave -1634 us; its MPI_Finalize point alone, 13 ns);
 *   rank 2 on host a, realtime as rank 0's, but points 5 ms off with 2 us
 *     round trips (a same-named host booted in the same second: on one
 *     clock an offset is within half its round trip): its own, main at 5 ms;
 *   rank 3 on host b: its MPI_Init point 0.8 ms off with a 2 ms round trip,
 *     MPI_Finalize's 5 ms with 1 us: the good point alone, main [5, 6 ms]
 *     (the line gave [5.8, 6.4 ms]);
 *   rank 4 on host c: the same with the bad point at MPI_Finalize, 7 ms.
 * Round trips 10 times apart but under 100 us keep the line (rank 5 on host
 * d: 5 and 60 us, 1 us of drift per ms), as do two bad ones (rank 6 on host
 * e: 2 and 3 ms, 0.1 ms of drift per ms). */
static void test_clock_noisy_points(void **state) {
    (void)state;
    static const int64_t zero[2][3] = {{0, 0, 0}, {2000000, 0, 0}};
    static const int64_t comd[2][3] = {{0, -1634034, 7990060}, {2000000, 13, 331}};
    static const int64_t other[2][3] = {{0, 5000000, 2000}, {2000000, 5000000, 2000}};
    static const int64_t bad_init[2][3] = {{0, 5800000, 2000000}, {2000000, 5000000, 1000}};
    static const int64_t bad_fin[2][3] = {{0, 7000000, 1000}, {2000000, 7900000, 3000000}};
    static const int64_t small[2][3] = {{0, 9000000, 5000}, {2000000, 9002000, 60000}};
    static const int64_t both_bad[2][3] = {{0, 11000000, 2000000}, {2000000, 11200000, 3000000}};
    clock_file("noisy0.sprof", 20, 0, "a", 0, 2, zero);
    clock_file("noisy1.sprof", 21, 1, "a", 0, 2, comd);
    clock_file("noisy2.sprof", 22, 2, "a", 500000000, 2, other);
    clock_file("noisy3.sprof", 23, 3, "b", 0, 2, bad_init);
    clock_file("noisy4.sprof", 24, 4, "c", 0, 2, bad_fin);
    clock_file("noisy5.sprof", 25, 5, "d", 0, 2, small);
    clock_file("noisy6.sprof", 26, 6, "e", 0, 2, both_bad);
    char *out, *err;
    assert_int_equal(run(&out, &err, "trace", path("noisy1.sprof"), path("noisy0.sprof"), path("noisy2.sprof"),
                         path("noisy3.sprof"), path("noisy4.sprof"), path("noisy5.sprof"), path("noisy6.sprof"),
                         NULL), 0);
    static const char *const want[] = {
        "\"ts\":0.000,\"dur\":1000.000,\"pid\":20,", "\"ts\":0.000,\"dur\":1000.000,\"pid\":21,",
        "\"ts\":5000.000,\"dur\":1000.000,\"pid\":22,", "\"ts\":5000.000,\"dur\":1000.000,\"pid\":23,",
        "\"ts\":7000.000,\"dur\":1000.000,\"pid\":24,", "\"ts\":9000.000,\"dur\":1001.000,\"pid\":25,",
        "\"ts\":11000.000,\"dur\":1100.000,\"pid\":26,"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(out, want[i])) fail_msg("no main with %s in:\n%s", want[i], out);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* One rank's file of a job (program `prog`, its process started at `start`
 * ns): main [0, 1 ms] holding compute [100, 400 us] and MPI_Allreduce [400,
 * 900 us]. */
static void job_file(const char *name, uint64_t pid, uint32_t rank, const char *prog, uint64_t start) {
    tw w = {0, 0, 0};
    tw_header_rank(&w, pid, prog, rank);
    for (int i = 0; i < 8; i++) w.b[24 + i] = (unsigned char)(start >> (8 * i)); /* format 1: no header CRC */
    tw_site(&w, 1, 10, "main", "job.c", "main");
    tw_site(&w, 2, 20, "compute", "job.c", "main");
    tw_site(&w, 3, 30, "MPI_Allreduce", "job.c", "main");
    tw_thread(&w, 0, pid, "main");
    static const tw_ev ev[] = {{100000, 400000, 2, 1}, {400000, 900000, 3, 1}, {0, 1000000, 1, 0}};
    tw_events(&w, 0, ev, 3);
    tw_end(&w, 3);
    assert_int_equal(tw_save(&w, path(name)), 0);
    free(w.b);
}

/* The files a command merges are one job's: the same job run twice in one
 * folder (app.rank*.sprof matches both runs) gave `Across 4 ranks (0, 0, 1,
 * 1)` and a merged trace with two rank 0s. Every command that merges its
 * files refuses two processes of one program claiming one rank, naming
 * both, exit 2. Not refused: a rank's forked child and its schedule's
 * cycles (the process's start and realtime offset), files without a rank,
 * another program with the rank (a helper inheriting the launcher's
 * variable); nor diff (its sides are runs) and --per-process (each file
 * alone). */
static void test_rank_twice(void **state) {
    (void)state;
    job_file("job.rank0.100.sprof", 100, 0, "job", 1000);
    job_file("job.rank1.101.sprof", 101, 1, "job", 1000);
    job_file("job.rank0.200.sprof", 200, 0, "job", 5000); /* the job run again */
    job_file("job.rank1.201.sprof", 201, 1, "job", 5000);
    char want[1024], *out, *err;
    snprintf(want, sizeof want, "scopeprof: two files for rank 0: '%s' and '%s', two processes of job started "
             "4.000us apart (two runs of the job? give one run's files)\n", path("job.rank0.100.sprof"),
             path("job.rank0.200.sprof"));
    static const char *const cmds[][3] = {{"table", NULL, NULL}, {"table", "--per-rank", NULL},
                                          {"table", "--group-by", "rank"}, {"trace", NULL, NULL},
                                          {"stacks", NULL, NULL}, {"flame", NULL, NULL}, {"html", NULL, NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        int rc = run(&out, &err, cmds[i][0], path("job.rank0.100.sprof"), path("job.rank1.101.sprof"),
                     path("job.rank0.200.sprof"), path("job.rank1.201.sprof"), cmds[i][1], cmds[i][2], NULL);
        if (rc != 2 || strcmp(err, want) != 0 || out[0])
            fail_msg("%s %s: exit %d, stderr: %s", cmds[i][0], cmds[i][1] ? cmds[i][1] : "", rc, err);
        free(out);
        free(err);
    }
    /* One run's files with what goes with them. */
    job_file("job.rank0.150.sprof", 150, 0, "job", 1000);           /* rank 0's forked child */
    job_file("job.rank1.101.cycle0001.sprof", 101, 1, "job", 1000); /* rank 1's first cycle */
    job_file("solo.1.sprof", 1, 0xFFFFFFFFu, "job", 1000);          /* no rank */
    job_file("solo.2.sprof", 2, 0xFFFFFFFFu, "job", 9000);
    job_file("helper.rank0.300.sprof", 300, 0, "helper", 7000);     /* rank 0 ran it */
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        int rc = run(&out, &err, cmds[i][0], path("job.rank0.100.sprof"), path("job.rank1.101.sprof"),
                     path("job.rank0.150.sprof"), path("job.rank1.101.cycle0001.sprof"), path("solo.1.sprof"),
                     path("solo.2.sprof"), path("helper.rank0.300.sprof"), cmds[i][1], cmds[i][2], NULL);
        if (rc != 0 || err[0])
            fail_msg("%s %s: exit %d, stderr: %s", cmds[i][0], cmds[i][1] ? cmds[i][1] : "", rc, err);
        free(out);
        free(err);
    }
    /* A rank's child and cycle are columns of their own, counted as files
     * (LULESH review: 8 ranks' two cycles read "Across 16 ranks"). */
    assert_int_equal(run(&out, &err, "table", "--per-rank", path("job.rank0.100.sprof"), path("job.rank1.101.sprof"),
                         path("job.rank0.150.sprof"), path("job.rank1.101.cycle0001.sprof"), NULL), 0);
    if (!strstr(out, "Across 4 files of 2 ranks (0, 1, 0, 1);")) fail_msg("%s", out);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "diff", path("job.rank0.100.sprof"), path("job.rank1.101.sprof"), "--",
                         path("job.rank0.200.sprof"), path("job.rank1.201.sprof"), NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--per-process", path("job.rank0.100.sprof"),
                         path("job.rank0.200.sprof"), NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
    /* A rank that only the CLOCK chunk gives (the file was opened before
     * MPI_Init told it): the same rule. */
    static const int64_t zero[1][3] = {{0, 0, 2000}};
    clock_file("late.a.sprof", 60, 2, "a", 0, 1, zero);
    clock_file("late.b.sprof", 61, 2, "a", 5000000, 1, zero);
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(path(k ? "late.b.sprof" : "late.a.sprof"), "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, 40, SEEK_SET), 0); /* the header's rank: none */
        assert_int_equal(fwrite("\xff\xff\xff\xff", 1, 4, f), 4);
        fclose(f);
    }
    snprintf(want, sizeof want, "scopeprof: two files for rank 2: '%s' and '%s', two processes of known started "
             "5.000ms apart (two runs of the job? give one run's files)\n", path("late.a.sprof"),
             path("late.b.sprof"));
    assert_int_equal(run(&out, &err, "table", path("late.a.sprof"), path("late.b.sprof"), NULL), 2);
    assert_string_equal(err, want);
    free(out);
    free(err);
}

/* --per-rank --limit: the line that says what was cut comes right under the
 * table and its totals, as under `table`'s, not after the straggler and the
 * waits that follow; one row cut is "1 more row". */
static void test_per_rank_limit(void **state) {
    (void)state;
    job_file("lim.rank0.sprof", 40, 0, "lim", 1000);
    job_file("lim.rank1.sprof", 41, 1, "lim", 1000);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--per-rank", "--limit", "2", path("lim.rank0.sprof"),
                         path("lim.rank1.sprof"), NULL), 0);
    const char *more = strstr(out, "; Imbalance: max / mean of self CPU time\n"
                                   "... 1 more row (--limit 2 of 3; --limit 0 shows all)\nStraggler: rank ");
    assert_non_null(more);
    const char *wait = strstr(out, "\nWaited in MPI_Allreduce: ");
    assert_true(wait && more < wait);
    assert_null(strstr(out, "more rows"));
    free(out);
    free(err);
}

/* --steps: only scopes inside the chosen steps (tw_rich: one step_body per
 * step, worker_task across steps 1 and 2). */
static void test_steps(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--steps", "2", "--format", "csv", path("rich.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nstep_body,1,600,800,800,"));
    assert_non_null(strstr(out, "\ngemm,1,100,100,100,"));
    assert_null(strstr(out, "worker_task"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--steps", "1:2", "--format", "csv", path("rich.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nstep_body,2,"));
    assert_non_null(strstr(out, "\nworker_task,1,"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--steps", "9", path("rich.sprof"), NULL), 0);
    assert_non_null(strstr(err, "no steps 9 (its steps are 1..3)"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--steps", "2:1", path("rich.sprof"), NULL), 2);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--steps", "1", "-", NULL), 2);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", "--steps", "3", path("rich.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\"name\":\"ProfilerStep#3\""));
    assert_null(strstr(out, "\"name\":\"ProfilerStep#2\""));
    assert_null(strstr(out, "\"name\":\"gemm\""));
    free(out);
    free(err);
    /* Chrome JSON: ProfilerStep#N ranges are the steps. */
    put_file("steps.json", "[{\"ph\":\"X\",\"name\":\"ProfilerStep#4\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},\n"
                           "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2},\n"
                           "{\"ph\":\"X\",\"name\":\"ProfilerStep#5\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":10},\n"
                           "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":11,\"dur\":3}]\n");
    assert_int_equal(run(&out, &err, "table", "--steps", "5", "--format", "csv", path("steps.json"), NULL), 0);
    assert_non_null(strstr(out, "\nop,1,3000,3000,"));
    assert_non_null(strstr(out, "\nProfilerStep*,1,7000,10000,"));
    free(out);
    free(err);
}

/* A .sprof file's steps go to the trace's Steps track; read back, they are
 * steps again: the JSON's table is the .sprof file's (ProfilerStep* with
 * the steps' time but no self time, the Self CPU total the scopes' alone),
 * and a trace of that JSON keeps its Steps track. */
static void test_steps_round_trip(void **state) {
    (void)state;
    write_steps_file("steps_rt.sprof", 5, 0xFFFFFFFFu);
    static const char *const groups[] = {"name", "thread", "stack"};
    char *out, *err, *json, *again;
    assert_int_equal(run(&json, &err, "trace", path("steps_rt.sprof"), NULL), 0);
    free(err);
    assert_non_null(strstr(json, "{\"name\":\"ProfilerStep#2\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":2.000,"));
    put_file("steps_rt.json", json);
    for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
        char *j_out;
        assert_int_equal(run(&out, &err, "table", "--group-by", groups[i], "--format", "csv", path("steps_rt.sprof"), NULL), 0);
        free(err);
        assert_int_equal(run(&j_out, &err, "table", "--group-by", groups[i], "--format", "csv", path("steps_rt.json"), NULL), 0);
        assert_string_equal(err, "");
        assert_string_equal(j_out, out);
        assert_non_null(strstr(out, "\nProfilerStep*,2,0,2000,1000,0.00,153.85"));
        free(out);
        free(err);
        free(j_out);
    }
    assert_int_equal(run(&out, &err, "table", path("steps_rt.json"), NULL), 0);
    assert_non_null(strstr(out, "\n    ProfilerStep*         0.00%       0.000us       153.85%       2.000us       1.000us             2  \n"));
    assert_non_null(strstr(out, "\nSelf CPU time total: 1.300us\n"));
    free(out);
    free(err);
    /* Traced again: the same Steps track, the same slices. */
    assert_int_equal(run(&again, &err, "trace", path("steps_rt.json"), NULL), 0);
    assert_non_null(strstr(again, "{\"name\":\"ProfilerStep#2\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":2.000,"));
    assert_non_null(strstr(again, "\"tid\":1073741823,\"args\":{\"name\":\"Steps\"}"));
    free(err);
    free(again);
    free(json);
}

/* Two processes' steps in one JSON (a trace of two files, read back)
 * overlap in time: traced again, each process's go on a Steps track of
 * their own (no track's slices cross), and are still read back as steps. */
static void test_steps_two_processes(void **state) {
    (void)state;
    put_file("steps_two.json",
             "{\"traceEvents\":[\n"
             "{\"name\":\"ProfilerStep#0\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":0,\"dur\":100,\"pid\":10,\"tid\":1073741823},\n"
             "{\"name\":\"ProfilerStep#1\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":100,\"dur\":100,\"pid\":10,\"tid\":1073741823},\n"
             "{\"name\":\"ProfilerStep#0\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":30,\"dur\":100,\"pid\":20,\"tid\":1073741823},\n"
             "{\"name\":\"ProfilerStep#1\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":130,\"dur\":100,\"pid\":20,\"tid\":1073741823},\n"
             "{\"name\":\"work\",\"ph\":\"X\",\"ts\":10,\"dur\":50,\"pid\":10,\"tid\":5}]}\n");
    char *json, *err, *out;
    assert_int_equal(run(&json, &err, "trace", path("steps_two.json"), NULL), 0);
    free(err);
    assert_non_null(strstr(json, "{\"name\":\"ProfilerStep#1\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":100.000,"));
    assert_non_null(strstr(json, "\"ts\":0.000,\"dur\":100.000,\"pid\":1,\"tid\":1073741823,"));
    assert_non_null(strstr(json, "\"ts\":100.000,\"dur\":100.000,\"pid\":1,\"tid\":1073741823,"));
    assert_non_null(strstr(json, "\"ts\":30.000,\"dur\":100.000,\"pid\":1,\"tid\":1073741822,"));
    assert_non_null(strstr(json, "\"ts\":130.000,\"dur\":100.000,\"pid\":1,\"tid\":1073741822,"));
    assert_non_null(strstr(json, "\"tid\":1073741822,\"args\":{\"name\":\"Steps 2\"}"));
    put_file("steps_two_again.json", json);
    free(json);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("steps_two_again.json"), NULL), 0);
    assert_non_null(strstr(out, "\nProfilerStep*,4,0,400000,100000,"));
    free(out);
    free(err);
}

/* Two ranks' files, threads "main" (work 1000 ns) and "omp-1" (work 500
 * ns), the other way round in rank 1's file (omp_first: the thread seen
 * first, as a writer writes a thread when it first flushes). Compared
 * across files (--per-rank's columns), a thread is its label: each row
 * holds one thread of each rank (LULESH review: rank 4's main thread got a
 * second "lulesh2.0" row, and its OpenMP thread's time went to the other
 * ranks' main). */
static void thread_rank_file(const char *name, uint32_t rank, int omp_first) {
    tw w = {0, 0, 0};
    tw_header_rank(&w, 40 + rank, "omp", rank);
    tw_site(&w, 1, 10, "work", "w.c", "f");
    static const tw_ev main_ev[] = {{0, 1000, 1, 0}}, omp_ev[] = {{0, 500, 1, 0}};
    for (int k = 0; k < 2; k++) {
        int omp = k == !omp_first;
        tw_thread(&w, (uint32_t)k, 100 * (uint64_t)(omp + 1) + rank, omp ? "omp-1" : "main");
        tw_events(&w, (uint32_t)k, omp ? omp_ev : main_ev, 1);
    }
    tw_end(&w, 2);
    assert_int_equal(tw_save(&w, path(name)), 0);
    free(w.b);
}

static void test_per_rank_group_by_thread(void **state) {
    (void)state;
    thread_rank_file("thr0.sprof", 0, 0);
    thread_rank_file("thr1.sprof", 1, 1);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--per-rank", "--group-by", "thread", "--format", "csv",
                         path("thr0.sprof"), path("thr1.sprof"), NULL), 0);
    if (!strstr(out, "\nwork,2,2000,2000,1000,") || !strstr(out, "\nwork,2,1000,1000,500,") ||
        strstr(strstr(strstr(out, "\nwork,") + 1, "\nwork,") + 1, "\nwork,") ||
        !strstr(out, ",main,1000,1000,1000,") || !strstr(out, ",omp-1,500,500,500,")) /* total min, mean, max */
        fail_msg("want one row per thread label, each with both ranks:\n%s", out);
    free(out);
    free(err);
    /* diff's sides too: the same threads, the same times, nothing slower
     * (by slot, omp-1 went from 500 to 1000 ns: exit 4) */
    assert_int_equal(run(&out, &err, "diff", "--group-by", "thread", "--threshold", "10", "--min-time", "0",
                         path("thr0.sprof"), path("thr1.sprof"), NULL), 0);
    free(out);
    free(err);
}

/* --group-by thread: one row per (thread, name), shown by the thread's name,
 * else its tid. main waits on a lock (its wait is self time: wall time on
 * the thread); worker and an unnamed thread do the work. */
static void test_group_by_thread(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 10, "wait", "m.c", "f");
    tw_site(&w, 2, 20, "work", "w.c", "g");
    tw_thread(&w, 0, 9, "main");
    tw_thread(&w, 1, 10, "worker");
    tw_thread(&w, 2, 11, "");
    static const tw_ev main_ev[] = {{100, 300, 2, 1}, {0, 1000, 1, 0}};
    static const tw_ev worker_ev[] = {{0, 500, 2, 0}, {600, 700, 2, 0}};
    static const tw_ev anon_ev[] = {{0, 50, 2, 0}};
    tw_events(&w, 0, main_ev, 2);
    tw_events(&w, 1, worker_ev, 2);
    tw_events(&w, 2, anon_ev, 1);
    tw_end(&w, 5);
    assert_int_equal(tw_save(&w, path("threads.sprof")), 0);
    free(w.b);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--group-by", "thread", "--format", "csv", path("threads.sprof"), NULL),
                     0);
    assert_non_null(strstr(out, ",thread\n"));
    /* Self time of all rows: 800 + 200 + 600 + 50 = 1650 ns. */
    assert_non_null(strstr(out, "\nwait,1,800,1000,1000,48.48,"));
    assert_non_null(strstr(out, ",main\n"));
    assert_non_null(strstr(out, "\nwork,1,200,200,200,12.12,"));
    assert_non_null(strstr(out, "\nwork,2,600,600,300,36.36,"));
    assert_non_null(strstr(out, ",worker\n"));
    assert_non_null(strstr(out, "\nwork,1,50,50,50,3.03,"));
    assert_non_null(strstr(out, ",tid 11\n")); /* no name: its tid */
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "thread", path("threads.sprof"), NULL), 0);
    assert_non_null(strstr(out, "Thread  \n"));
    free(out);
    free(err);
}

/* Thread names in every output that shows threads: stacks and flame with
 * --per-thread (a root frame per thread: its name, else its tid), the trace's
 * thread_name metadata, the html timeline's track labels. */
static void test_thread_names_everywhere(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 10, "wait", "m.c", "f");
    tw_site(&w, 2, 20, "work", "w.c", "g");
    tw_thread(&w, 0, 9, "main");
    tw_thread(&w, 1, 10, "worker");
    tw_thread(&w, 2, 11, "");
    static const tw_ev main_ev[] = {{100, 300, 2, 1}, {0, 1000, 1, 0}};
    static const tw_ev worker_ev[] = {{0, 500, 2, 0}, {600, 700, 2, 0}};
    static const tw_ev anon_ev[] = {{0, 50, 2, 0}};
    tw_events(&w, 0, main_ev, 2);
    tw_events(&w, 1, worker_ev, 2);
    tw_events(&w, 2, anon_ev, 1);
    tw_end(&w, 5);
    assert_int_equal(tw_save(&w, path("named.sprof")), 0);
    free(w.b);
    char *out, *err;
    assert_int_equal(run(&out, &err, "stacks", "--per-thread", path("named.sprof"), NULL), 0);
    assert_string_equal(out, "main;wait;work 200\nmain;wait 800\nworker;work 600\ntid 11;work 50\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", path("named.sprof"), NULL), 0); /* default: merged */
    assert_string_equal(out, "wait;work 200\nwait 800\nwork 650\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "flame", "--per-thread", path("named.sprof"), NULL), 0);
    assert_non_null(strstr(out, "<title>main ("));
    assert_non_null(strstr(out, "<title>worker ("));
    assert_non_null(strstr(out, "<title>tid 11 ("));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", path("named.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\"thread_name\""));
    assert_non_null(strstr(out, "\"name\":\"main\""));
    assert_non_null(strstr(out, "\"name\":\"worker\""));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "html", path("named.sprof"), NULL), 0);
    assert_non_null(strstr(out, "named.sprof: main (tid 9)"));
    assert_non_null(strstr(out, "named.sprof: worker (tid 10)"));
    free(out);
    free(err);
}

/* --group-by thread: threads that would show the same Thread label (unnamed
 * threads take the program's name) are told apart, by tid when that does
 * it, else by the file's thread index, else by file and index; a label only
 * one thread has stays as it is. */
static void test_group_by_thread_same_names(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    tw_header(&w, 1, "app");
    tw_site(&w, 1, 10, "main", "m.c", "main");
    tw_site(&w, 2, 20, "work", "w.c", "work");
    static const char *const names[] = {"app", "app", "app", "loader", "pool", "pool"};
    static const uint64_t tids[] = {1, 2, 3, 4, 5, 5}; /* the pool's tid reused */
    for (uint32_t i = 0; i < 6; i++) {
        tw_thread(&w, i, tids[i], names[i]);
        tw_ev ev = {0, i ? 100 * i : 1000, i ? 2 : 1, 0};
        tw_events(&w, i, &ev, 1);
    }
    tw_end(&w, 6);
    assert_int_equal(tw_save(&w, path("same_names.sprof")), 0);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--group-by", "thread", "--format", "csv", path("same_names.sprof"),
                         NULL), 0);
    assert_string_equal(out, "name,count,self_cpu_time_total_ns,cpu_time_total_ns,cpu_time_avg_ns,self_cpu_percent,"
                             "cpu_total_percent,thread\n"
                             "main,1,1000,1000,1000,40.00,40.00,app (tid 1)\n"
                             "work,1,500,500,500,20.00,20.00,pool (thread 5)\n"
                             "work,1,400,400,400,16.00,16.00,pool (thread 4)\n"
                             "work,1,300,300,300,12.00,12.00,loader\n"
                             "work,1,200,200,200,8.00,8.00,app (tid 3)\n"
                             "work,1,100,100,100,4.00,4.00,app (tid 2)\n");
    free(out);
    free(err);
    /* Two files, each a thread "w" of no tid at index 0: file and index. */
    w.n = 0;
    tw_header(&w, 2, "w");
    tw_site(&w, 1, 10, "work", "w.c", "work");
    tw_thread(&w, 0, 0, "w");
    static const tw_ev one[] = {{0, 100, 1, 0}};
    tw_events(&w, 0, one, 1);
    tw_end(&w, 1);
    assert_int_equal(tw_save(&w, path("w1.sprof")), 0);
    assert_int_equal(tw_save(&w, path("w2.sprof")), 0);
    free(w.b);
    assert_int_equal(run(&out, &err, "table", "--group-by", "thread", path("w1.sprof"), path("w2.sprof"), NULL), 0);
    assert_non_null(strstr(out, "             1  w (file 1, thread 0)  \n"));
    assert_non_null(strstr(out, "             1  w (file 2, thread 0)  \n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "thread", "--format", "csv", path("w1.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nwork,1,100,100,100,100.00,100.00,w\n")); /* alone: as it is */
    free(out);
    free(err);
}

/* A format 3.1 OVERHEAD chunk (I = 2 us inside, O = 3 us outside: large, so
 * that the table shows them) spliced in after the header of the known set
 * (docs/DESIGN.md, "Overhead compensation"; worked out by hand):
 *   B    100 - 2 = 98 us, self 98
 *   A    [300 us, 1 nested]: 300 - 2 - 1 * 5 = 293, self 200 - 2 - 1 * 3 = 195;
 *        [100 us]: 98, 98                  -> total 391, self 293
 *   C    98, 98
 *   main 1000 - 2 - 4 nested * 5 = 978; self 500 - 2 - 3 children * 3 = 489
 * Self CPU time total 978 us (= main's total: nothing was clamped). */
static void test_overhead_compensation(void **state) {
    (void)state;
    tw w = {0, 0, 0}, p = {0, 0, 0};
    tw_known(&w, 9);
    size_t hl = 48 + strlen("known"); /* format 1: no header CRC */
    tw_u32(&p, 2000000);
    tw_u32(&p, 3000000);
    tw_u32(&p, 2048);
    tw_u32(&p, 0);
    assert_int_equal(tw_save_with_first(&w, hl, SCOPEPROF_CHUNK_OVERHEAD, &p, path("overhead.sprof")), 0);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("overhead.sprof"), NULL), 0);
    assert_string_equal(err, "");
    assert_non_null(strstr(out, "   main        50.00%     489.000us       100.00%     978.000us     978.000us             1  \n"));
    assert_non_null(strstr(out, "      A        29.96%     293.000us        39.98%     391.000us     195.500us             2  \n"));
    assert_non_null(strstr(out, "      B        10.02%      98.000us        10.02%      98.000us      98.000us             1  \n"));
    assert_non_null(strstr(out, "\nSelf CPU time total: 978.000us\n"));
    assert_non_null(strstr(out, "\nOverhead compensation: 5000.0 ns per nested scope taken out"));
    free(out);
    free(err);
    /* Raw: the known set's golden table, and the calibration named as off. */
    assert_int_equal(run(&out, &err, "table", "--no-compensate", path("overhead.sprof"), NULL), 0);
    assert_int_equal(strncmp(out, golden, strlen(golden)), 0);
    assert_string_equal(out + strlen(golden), "Overhead compensation: off (--no-compensate); "
                                              "calibrated at start-up: 5000.0 ns per nested scope\n");
    free(out);
    free(err);
    /* Folded stacks are compensated the same way, and raw on request. */
    assert_int_equal(run(&out, &err, "stacks", path("overhead.sprof"), NULL), 0);
    assert_non_null(strstr(out, "main;A;B 98000\n"));
    assert_non_null(strstr(out, "main 489000\n"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", "--no-compensate", path("overhead.sprof"), NULL), 0);
    assert_non_null(strstr(out, "main 500000\n"));
    free(out);
    free(err);
    /* A file without the chunk after one with it: its events stay raw
     * (main: 489 + 500 us self, 978 + 1000 us total). */
    assert_int_equal(run(&out, &err, "table", path("overhead.sprof"), path("known8.sprof"), NULL), 0);
    assert_non_null(strstr(out, "   main        50.00%     989.000us       100.00%       1.978ms     989.000us             2  \n"));
    free(out);
    free(err);
    /* trace writes raw times (a timeline shows when things happened), as
     * `help trace` says: main's slice is its whole 1 ms, and the table of
     * the JSON is the raw golden one. */
    assert_int_equal(run(&out, &err, "trace", path("overhead.sprof"), NULL), 0);
    assert_non_null(strstr(out, "{\"name\":\"main\",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":0.000,\"dur\":1000.000,"));
    put_file("overhead.json", out);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", path("overhead.json"), NULL), 0);
    assert_string_equal(out, golden);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "help", "trace", NULL), 0);
    assert_non_null(strstr(out, "\nTimes are raw: the overhead compensation that table, stacks, html and\n"
                                "flame take out is not (a timeline shows when things happened; the\n"
                                "compensated figures are sums)"));
    free(out);
    free(err);
}

/* One rank's file with the OVERHEAD chunk above (I = 2 us, O = 3 us):
 * main [0, 1 ms] holding tiny [100 us, 100 us + tiny_ns]. A 1 us tiny is
 * compensated to -1 us: shown 0, clamped; main's self, 1000 - 1 - 2 - 3 =
 * 994 us, then exceeds its total, 1000 - 2 - 5 = 993: clamped at it. A
 * 10 us tiny: 8 us, and main's self 985 us; nothing clamped. */
static void comp_file(const char *name, uint64_t pid, uint32_t rank, uint64_t tiny_ns) {
    tw w = {0, 0, 0}, p = {0, 0, 0};
    tw_header_rank(&w, pid, "comp", rank);
    size_t hl = w.n;
    tw_site(&w, 1, 10, "main", "comp.c", "main");
    tw_site(&w, 2, 20, "tiny", "comp.c", "tiny");
    tw_thread(&w, 0, pid, "main");
    const tw_ev ev[] = {{100000, 100000 + tiny_ns, 2, 1}, {0, 1000000, 1, 0}};
    tw_events(&w, 0, ev, 2);
    tw_end(&w, 2);
    tw_u32(&p, 2000000);
    tw_u32(&p, 3000000);
    tw_u32(&p, 2048);
    tw_u32(&p, 0);
    assert_int_equal(tw_save_with_first(&w, hl, SCOPEPROF_CHUNK_OVERHEAD, &p, path(name)), 0);
}

/* The note naming rows whose compensated time was clamped is printed
 * whenever a row sums a file (a rank) where it was: `table FILE` named
 * tiny, but `table --per-rank` (rank 0's tiny clamped to 0: `Self min
 * 0.000us r0 ... Imbalance 2.00`) and `table` over the files (the sum,
 * -1 + 8 us, not clamped itself) said nothing, nor did html's notes. Rows
 * clamped nowhere are not named. */
static void test_clamped_note_across_files(void **state) {
    (void)state;
    comp_file("comp0.sprof", 50, 0, 1000);
    comp_file("comp1.sprof", 51, 1, 10000);
    comp_file("comp2.sprof", 52, 2, 10000);
    static const char note[] = "\nOverhead compensation clamped at 0 or at their total (scopes about as short as "
                               "the calibration; --no-compensate shows raw times): tiny, main\n";
    static const char *const cmds[][2] = {{"table", NULL}, {"table", "--per-rank"}, {"html", NULL}};
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("comp0.sprof"), NULL), 0);
    assert_non_null(strstr(out, note));
    free(out);
    free(err);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *cmd = cmds[i][0], *opt = cmds[i][1] ? cmds[i][1] : "";
        assert_int_equal(run(&out, &err, cmd, path("comp0.sprof"), path("comp1.sprof"), cmds[i][1], NULL), 0);
        if (!strstr(out, note)) fail_msg("%s %s: no note naming tiny and main in:\n%s", cmd, opt, out);
        free(out);
        free(err);
        assert_int_equal(run(&out, &err, cmd, path("comp1.sprof"), path("comp2.sprof"), cmds[i][1], NULL), 0);
        if (strstr(out, "clamped at 0")) fail_msg("%s %s: a note with nothing clamped", cmd, opt);
        free(out);
        free(err);
    }
    /* --per-rank: rank 0's tiny shows 0 (clamped), rank 1's 8 us. */
    assert_int_equal(run(&out, &err, "table", "--per-rank", path("comp0.sprof"), path("comp1.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\ntiny "));
    assert_non_null(strstr(out, " 0.000us r0 "));
    free(out);
    free(err);
}

/* A format 5 file, ticks in ns, one site "k" (id 1), thread 0 named: the
 * start of the hand-made files below. */
static void start_v5(tw *w) {
    tw_major = 5;
    tw_header(w, 7, "p");
    tw_ticks(w, 0, 0, 1.0);
    tw_site(w, 1, 1, "k", "g.c", "fn");
    tw_site(w, 2, 2, "outer", "g.c", "fn");
    tw_thread(w, 0, 7, "main");
}

/* GPU records that pair with no scope (docs/FORMAT.md, type 5) lose their
 * GPU time: said once per file, exit status unchanged. A record pairs only
 * with the next GPU scope of the EVENTS chunk that follows its GPU chunk,
 * whose start is its launch_ns: a wrong one blocks the rest of its chunk;
 * one left when that EVENTS chunk ends, or of a thread with no EVENTS chunk
 * after it, pairs with nothing. A file whose records all pair says nothing. */
static void test_gpu_unpaired(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    start_v5(&w);
    /* The first record pairs; the second (launch 999) matches no scope, and
     * blocks the third, whose scope is at 500. */
    static const tw_gpu_rec g[] = {{150, 250, 100, 7, 1, 0, 0}, {350, 450, 999, 7, 1, 0, 0},
                                   {550, 650, 500, 7, 1, 0, 0}};
    tw_gpu(&w, 0, g, 3);
    static const tw_ev ev[] = {{100, 200, 1, TW_GPU(1)}, {300, 400, 1, TW_GPU(1)},
                               {500, 600, 1, TW_GPU(1)}, {0, 1000, 2, 0}};
    tw_events(&w, 0, ev, 4);
    /* A record left over by the EVENTS chunk after it (no GPU scope there)
     * does not wait for a later chunk. */
    static const tw_gpu_rec g2[] = {{1150, 1250, 1100, 7, 1, 0, 0}};
    tw_gpu(&w, 0, g2, 1);
    static const tw_ev plain[] = {{1050, 1060, 2, 0}};
    tw_events(&w, 0, plain, 1);
    static const tw_ev late[] = {{1100, 1200, 1, TW_GPU(0)}};
    tw_events(&w, 0, late, 1);
    /* A thread with a GPU chunk and no EVENTS chunk after it. */
    tw_gpu(&w, 3, g, 1);
    tw_end(&w, 1 + 1 + 1 + 1 + 1 + 1);
    assert_int_equal(tw_save(&w, path("gpu_unpaired.sprof")), 0);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("gpu_unpaired.sprof"), NULL), 0);
    char want[512];
    snprintf(want, sizeof want, "%s: 4 GPU record(s) matched no scope (their GPU time is left out)\n",
             path("gpu_unpaired.sprof"));
    assert_string_equal(err, want);
    /* Only the first scope's 100 ns of GPU time are counted. */
    if (!strstr(out, "\nk,4,400,400,100,36.04,36.04,100,100,25,100.00\n")) fail_msg("%s", out);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", "-o", path("gpu_unpaired.json"), path("gpu_unpaired.sprof"), NULL), 0);
    assert_string_equal(err, want);
    free(out);
    free(err);
    /* Every record paired: nothing said. */
    assert_int_equal(run(&out, &err, "table", path("rich"), path("gpu_mem"), path("gpu_shared"), NULL), 0);
    assert_null(strstr(err, "GPU record"));
    free(out);
    free(err);
    free(w.b);
    tw_major = 1;
}

/* Records that end before they start (a long scope record, a paired GPU
 * interval, a step) in chunks whose CRCs hold: the writer's clock went back
 * (TSCs of cores that differ). Each is taken as 0 long, and one warning
 * gives their count; the file is not damaged (exit status 0). */
static void test_backwards_times(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    start_v5(&w);
    static const tw_gpu_rec g[] = {{450, 350, 300, 7, 1, 0, 0}};
    tw_gpu(&w, 0, g, 1);
    /* k [250, 200]: the long form (tw_events_payload), as a writer must. */
    static const tw_ev ev[] = {{250, 200, 1, 1}, {300, 320, 1, TW_GPU(1)}, {0, 1000, 2, 0}};
    size_t at = tw_events(&w, 0, ev, 3);
    static const uint64_t st[][3] = {{0, 0, 600}, {1, 900, 800}};
    tw_steps(&w, st, 2);
    tw_end(&w, 2 + 1 + 1);
    assert_int_equal(tw_save(&w, path("backwards.sprof")), 0);
    char *out, *err, want[512];
    snprintf(want, sizeof want, "%s: warning: offset %zu: 3 record(s) end before they start (scopes, GPU "
             "intervals or steps: a clock that went back), each taken as 0 long\n", path("backwards.sprof"), at);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("backwards.sprof"), NULL), 0);
    assert_string_equal(err, want);
    /* Still read: k's two calls, 0 and 20 ns, and no GPU time. */
    assert_non_null(strstr(out, "\nk,2,20,20,10,"));
    assert_non_null(strstr(out, "\nouter,1,980,1000,1000,"));
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", "-o", path("backwards.json"), path("backwards.sprof"), NULL), 0);
    assert_int_equal(strncmp(err, want, strlen(want)), 0);
    free(out);
    free(err);
    free(w.b);
    tw_major = 1;
}

/* An END count that disagrees is said after damage too (the count tells
 * how much the damage cost). */
static void test_end_count_after_damage(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    start_v5(&w);
    static const tw_ev a[] = {{0, 10, 1, 0}}, b[] = {{20, 30, 1, 0}};
    size_t at = tw_events(&w, 0, a, 1);
    tw_events(&w, 0, b, 1);
    tw_end(&w, 2);
    w.b[at + 16 + 8] ^= 1; /* the first record's start: its CRC fails */
    assert_int_equal(tw_save(&w, path("damaged_end.sprof")), 0);
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("damaged_end.sprof"), NULL), 1);
    assert_non_null(strstr(err, "bad chunk CRC"));
    assert_non_null(strstr(err, "; the END chunk counts 2 record unit(s) of 16 bytes, 1 were read"));
    assert_non_null(strstr(err, "1 damaged region(s), 40 byte(s) skipped"));
    free(out);
    free(err);
    free(w.b);
    tw_major = 1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_table), cmocka_unit_test(test_sort_and_limit),
        cmocka_unit_test(test_usage_errors), cmocka_unit_test(test_csv_json),
        cmocka_unit_test(test_group_by),     cmocka_unit_test(test_stacks),
        cmocka_unit_test(test_stacks_past_the_tree_limit),
        cmocka_unit_test(test_stacks_deep_shared_frames),
        cmocka_unit_test(test_thread_names_everywhere),
        cmocka_unit_test(test_merge),        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_format_versions),
        cmocka_unit_test(test_input_shapes), cmocka_unit_test(test_input_shapes_bad),
        cmocka_unit_test(test_truncated),    cmocka_unit_test(test_skips_and_empty),
        cmocka_unit_test(test_trace_json_text),
        cmocka_unit_test(test_chrome_gpu_total), cmocka_unit_test(test_chrome_input),
        cmocka_unit_test(test_per_rank_missing), cmocka_unit_test(test_clock_alignment),
        cmocka_unit_test(test_clock_noisy_points),
        cmocka_unit_test(test_steps),        cmocka_unit_test(test_steps_round_trip),
        cmocka_unit_test(test_steps_two_processes),
        cmocka_unit_test(test_per_rank_no_self_time), cmocka_unit_test(test_group_by_rank_steps),
        cmocka_unit_test(test_rank_twice),   cmocka_unit_test(test_per_rank_limit),
        cmocka_unit_test(test_group_by_thread_late_name),
        cmocka_unit_test(test_group_by_thread),
        cmocka_unit_test(test_per_rank_group_by_thread), cmocka_unit_test(test_group_by_thread_same_names),
        cmocka_unit_test(test_overhead_compensation), cmocka_unit_test(test_clamped_note_across_files),
        cmocka_unit_test(test_gpu_unpaired),  cmocka_unit_test(test_backwards_times),
        cmocka_unit_test(test_end_count_after_damage),
    };
    return cmocka_run_group_tests(tests, setup, files_teardown);
}
