/* test_words.c -- the command line as torch.profiler users type it and the
 * small things around it, run in-process (sp_main): torch's option and sort
 * key spellings, --group-by stack and input_shape, --format markdown, the
 * default row limit and the line that says rows were cut, `scopeprof FILE`,
 * `scopeprof help COMMAND`, and `trace` refusing a terminal. */
#define _GNU_SOURCE /* posix_openpt */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tw.h"
#include "files.h"

/* Run with the output going to a terminal (a pseudo-terminal's slave). */
static int run_tty(char **err, ...) {
    char *argv[16] = {"scopeprof"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 15;) argv[argc++] = a;
    va_end(ap);
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    FILE *tty = fopen(ptsname(m), "w"), *e = tmpfile();
    assert_non_null(tty);
    assert_true(isatty(fileno(tty)));
    int rc = sp_main(argc, argv, tty, e);
    fclose(tty);
    close(m);
    *err = slurp(e);
    return rc;
}

static int setup(void **state) {
    (void)state;
    if (files_setup("sp_words_test") != 0) return -1;
    tw w = {0, 0, 0};
    tw_known(&w, 7);
    if (tw_save(&w, path("known.sprof"))) return -1;
    w.n = 0;
    tw_rich(&w, 9, 0xFFFFFFFFu); /* GPU times and memory */
    if (tw_save(&w, path("rich.sprof"))) return -1;
    free(w.b);
    /* 150 names, one scope each: more rows than the default limit. */
    tw m = {0, 0, 0};
    tw_header(&m, 8, "many");
    tw_ev ev[150];
    for (uint32_t i = 0; i < 150; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%03u", i);
        tw_site(&m, i + 1, i, name, "m.c", name);
        ev[i] = (tw_ev){i * 1000, i * 1000 + 500 + i, i + 1, 0};
    }
    tw_thread(&m, 0, 8, "main");
    tw_events(&m, 0, ev, 150);
    tw_end(&m, 150);
    int rc = tw_save(&m, path("many.sprof"));
    free(m.b);
    return rc;
}

/* Two runs give the same output and status. */
static void same(const char *what, int rc1, char *o1, char *e1, int rc2, char *o2, char *e2) {
    if (rc1 != rc2 || strcmp(o1, o2) != 0) fprintf(stderr, "%s:\n%s\n-- versus --\n%s\n%s%s", what, o1, o2, e1, e2);
    assert_int_equal(rc1, rc2);
    assert_string_equal(o1, o2);
    free(o1), free(e1), free(o2), free(e2);
}

static void test_torch_spellings(void **state) {
    (void)state;
    const char *k = path("known.sprof");
    char *o1, *e1, *o2, *e2;
    int r1 = run(&o1, &e1, "table", "--sort_by", "self_cpu_time_total", "--row_limit", "2", k, NULL);
    int r2 = run(&o2, &e2, "table", "--sort", "self_cpu_time_total", "--limit", "2", k, NULL);
    same("--sort_by/--row_limit", r1, o1, e1, r2, o2, e2);
    r1 = run(&o1, &e1, "table", "--sort-by=count", "--row-limit=3", k, NULL);
    r2 = run(&o2, &e2, "table", "--sort", "count", "--limit", "3", k, NULL);
    same("--sort-by=/--row-limit=", r1, o1, e1, r2, o2, e2);
    /* torch's current names of the device columns. */
    static const char *const dev[][2] = {{"device_time_total", "gpu_time_total"},
                                         {"self_device_time_total", "self_gpu_time_total"},
                                         {"device_time", "gpu_time"},
                                         {"device_memory_usage", "gpu_memory_usage"},
                                         {"self_device_memory_usage", "self_gpu_memory_usage"}};
    for (int i = 0; i < 5; i++) {
        r1 = run(&o1, &e1, "table", "--sort", dev[i][0], "--format", "csv", path("rich.sprof"), NULL);
        r2 = run(&o2, &e2, "table", "--sort", dev[i][1], "--format", "csv", path("rich.sprof"), NULL);
        assert_int_equal(r1, 0);
        same(dev[i][0], r1, o1, e1, r2, o2, e2);
    }
    /* (a GPU sort: gemm has the most self time on the GPU, step_body none) */
    assert_int_equal(run(&o1, &e1, "table", "--sort", "self_device_time_total", "--format", "csv", path("rich.sprof"),
                         NULL), 0);
    assert_int_equal(strncmp(strchr(o1, '\n') + 1, "gemm,", 5), 0);
    free(o1), free(e1);
    assert_int_equal(run(&o1, &e1, "table", "--sort", "device_bogus", k, NULL), 2);
    assert_non_null(strstr(e1, "'device_bogus'"));
    assert_non_null(strstr(e1, "device_* = gpu_*"));
    free(o1), free(e1);
    /* --group-by stack: torch's group_by_stack_n=5; input_shape: shape. */
    r1 = run(&o1, &e1, "table", "--group-by", "stack", k, NULL);
    r2 = run(&o2, &e2, "table", "--group-by", "stack:5", k, NULL);
    assert_non_null(strstr(o1, "Stack"));
    same("stack", r1, o1, e1, r2, o2, e2);
    FILE *f = fopen(path("shapes.json"), "w");
    assert_non_null(f);
    fputs("[{\"ph\":\"X\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10,"
          "\"args\":{\"Input Dims\":[[2,3],[3,4]]}}]\n", f);
    fclose(f);
    r1 = run(&o1, &e1, "table", "--group-by", "input_shape", path("shapes.json"), NULL);
    r2 = run(&o2, &e2, "table", "--group-by", "shape", path("shapes.json"), NULL);
    assert_non_null(strstr(o1, "[[2, 3], [3, 4]]"));
    same("input_shape", r1, o1, e1, r2, o2, e2);
}

/* Text and markdown show 100 rows unless told (torch's row_limit), and say
 * what they cut; csv and json carry every row unless told. */
static void test_row_limits(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("many.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\n... 50 more rows (--limit 100 of 150; --limit 0 shows all)\n"));
    assert_non_null(strstr(out, " f149 ")); /* the longest first */
    assert_non_null(strstr(out, " f050 "));
    assert_null(strstr(out, " f049 "));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--limit", "0", path("many.sprof"), NULL), 0);
    assert_null(strstr(out, "more rows"));
    assert_non_null(strstr(out, " f000 "));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("many.sprof"), NULL), 0);
    int lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')) != NULL; p++) lines++;
    assert_int_equal(lines, 151);
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "json", "--limit", "10", path("many.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\"more_rows\":140,"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--limit", "2", path("known.sprof"), NULL), 0);
    assert_non_null(strstr(out, "\nSelf CPU time total: 1.000ms\n... 2 more rows (--limit 2 of 4; --limit 0 shows all)\n"));
    free(out), free(err);
    assert_int_equal(run(&out, &err, "table", "--limit", "3", path("known.sprof"), NULL), 0); /* "1 more row" */
    assert_non_null(strstr(out, "\n... 1 more row (--limit 3 of 4; --limit 0 shows all)\n"));
    free(out), free(err);
    /* -1 is all, as 0: torch's row_limit=-1, the header's SCOPEPROF_ROW_LIMIT. */
    char *o1, *e1, *o2, *e2;
    int r1 = run(&o1, &e1, "table", "--limit", "-1", path("many.sprof"), NULL);
    int r2 = run(&o2, &e2, "table", "--limit", "0", path("many.sprof"), NULL);
    assert_int_equal(r1, 0);
    assert_non_null(strstr(o1, " f000 "));
    same("--limit -1", r1, o1, e1, r2, o2, e2);
    r1 = run(&o1, &e1, "table", "--row_limit=-1", "--format", "markdown", path("many.sprof"), NULL);
    r2 = run(&o2, &e2, "table", "--limit", "0", "--format", "markdown", path("many.sprof"), NULL);
    same("--row_limit=-1", r1, o1, e1, r2, o2, e2);
    assert_int_equal(run(&out, &err, "table", "--limit", "-2", path("many.sprof"), NULL), 2);
    assert_string_equal(err, "scopeprof: --limit wants a row count (0 or -1 = all), not '-2'\n");
    free(out), free(err);
}

static void test_markdown(void **state) {
    (void)state;
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", "--format", "markdown", path("known.sprof"), NULL), 0);
    assert_string_equal(out,
                        "| Name | Self CPU % | Self CPU | CPU total % | CPU total | CPU time avg | # of Calls |\n"
                        "|:--|--:|--:|--:|--:|--:|--:|\n"
                        "| main | 50.00% | 500.000us | 100.00% | 1.000ms | 1.000ms | 1 |\n"
                        "| A | 30.00% | 300.000us | 40.00% | 400.000us | 200.000us | 2 |\n"
                        "| B | 10.00% | 100.000us | 10.00% | 100.000us | 100.000us | 1 |\n"
                        "| a\\_very\\_long\\_scope\\_name\\_that\\_is\\_longer\\_than\\_the\\_column\\_width\\_ | 10.00% | "
                        "100.000us | 10.00% | 100.000us | 100.000us | 1 |\n"
                        "\n"
                        "Self CPU time total: 1.000ms\n");
    free(out), free(err);
    /* Names that would be markup or break the row stay one cell of text. */
    FILE *f = fopen(path("md.json"), "w");
    assert_non_null(f);
    fputs("[{\"ph\":\"X\",\"name\":\"a|b <img src=x> *c*\\nd\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10}]\n", f);
    fclose(f);
    assert_int_equal(run(&out, &err, "table", "--format", "markdown", path("md.json"), NULL), 0);
    assert_non_null(strstr(out, "\n| a\\|b \\<img src=x\\> \\*c\\* d | 100.00% |"));
    free(out), free(err);
}

static void test_help_and_file(void **state) {
    (void)state;
    char *o1, *e1, *o2, *e2;
    /* `scopeprof FILE...` is `scopeprof table FILE...`, options included. */
    int r1 = run(&o1, &e1, path("known.sprof"), "--limit", "2", NULL);
    int r2 = run(&o2, &e2, "table", path("known.sprof"), "--limit", "2", NULL);
    assert_int_equal(r1, 0);
    same("FILE", r1, o1, e1, r2, o2, e2);
    assert_int_equal(run(&o1, &e1, path("missing.sprof"), NULL), 1); /* a missing file is said so */
    assert_non_null(strstr(e1, "missing.sprof"));
    free(o1), free(e1);
    assert_int_equal(run(&o1, &e1, "frobnicate", NULL), 2); /* neither command nor file */
    assert_non_null(strstr(e1, "unknown command 'frobnicate'"));
    free(o1), free(e1);
    /* help [COMMAND] */
    r1 = run(&o1, &e1, "help", "diff", NULL);
    r2 = run(&o2, &e2, "diff", "--help", NULL);
    assert_int_equal(r1, 0);
    assert_non_null(strstr(o1, "usage: scopeprof diff"));
    same("help diff", r1, o1, e1, r2, o2, e2);
    r1 = run(&o1, &e1, "help", NULL);
    r2 = run(&o2, &e2, "--help", NULL);
    same("help", r1, o1, e1, r2, o2, e2);
    assert_int_equal(run(&o1, &e1, "help", "bogus", NULL), 2);
    assert_non_null(strstr(e1, "'bogus'"));
    free(o1), free(e1);
}

/* trace without -o on a terminal refuses, naming -o; with -o - it writes. */
static void test_trace_terminal(void **state) {
    (void)state;
    char *err;
    assert_int_equal(run_tty(&err, "trace", path("known.sprof"), NULL), 2);
    assert_non_null(strstr(err, "-o OUT.json"));
    free(err);
    assert_int_equal(run_tty(&err, "trace", "-o", "-", path("known.sprof"), NULL), 0);
    assert_string_equal(err, "");
    free(err);
    assert_int_equal(run_tty(&err, "table", path("known.sprof"), NULL), 0); /* a table is for terminals */
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torch_spellings), cmocka_unit_test(test_row_limits),
        cmocka_unit_test(test_markdown),        cmocka_unit_test(test_help_and_file),
        cmocka_unit_test(test_trace_terminal),
    };
    return cmocka_run_group_tests(tests, setup, files_teardown);
}
