/* test_robust.c -- the reporter never destroys data and reads every file the
 * library writes (issue 16): outputs written beside their target and renamed
 * on success, outputs that are inputs refused, write errors blamed on the
 * output; depth and thread counts as the writer makes them; a file without
 * its END record; strict command lines; gzip input. The commands run
 * in-process (sp_main) on files written byte by byte (tw.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tw.h"
#include "files.h"


/* The bytes of a file ("" if missing), malloc'd; *n its size. */
static char *file_bytes(const char *p, size_t *n) {
    FILE *f = fopen(p, "rb");
    if (!f) {
        *n = 0;
        return calloc(1, 1);
    }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    return slurp(f);
}

#define HAS(s, sub) do { if (!strstr((s), (sub))) fail_msg("'%s' lacks '%s'", (s), (sub)); } while (0)

static void put_file(const char *name, const char *text) {
    FILE *f = fopen(path(name), "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* A trace of n top-level scopes "tick" on one thread, 10 ns each. */
static void write_ticks(const char *name, uint32_t n, int end) {
    tw w = {0, 0, 0};
    tw_major = 2;
    tw_header(&w, 5, "ticks");
    tw_site(&w, 1, 1, "tick", "t.c", "tick");
    tw_thread(&w, 0, 5, "main");
    tw_ev *ev = malloc(n * sizeof *ev);
    for (uint32_t i = 0; i < n; i++) ev[i] = (tw_ev){1000 + 20ull * i, 1010 + 20ull * i, 1, 0};
    tw_events(&w, 0, ev, n);
    if (end) tw_end(&w, n);
    assert_int_equal(tw_save(&w, path(name)), 0);
    free(ev);
    free(w.b);
}

static int setup(void **state) {
    (void)state;
    if (files_setup("sp_robust_test") != 0) return -1;
    tw w = {0, 0, 0};
    tw_major = 1;
    tw_known(&w, 7);
    if (tw_save(&w, path("known.sprof"))) return -1;
    free(w.b);
    write_ticks("big.sprof", 200000, 1);
    return 0;
}

/* Files in dir whose name starts with '.': left-over temporaries. */
static int temporaries(void) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

/* ---- 1. Data safety ---------------------------------------------------------- */
static void test_output_is_input(void **state) {
    (void)state;
    char *out, *err, *before, *after;
    size_t n0, n1;
    before = file_bytes(path("known.sprof"), &n0);
    assert_true(n0 > 0);
    /* The same name, another spelling of it, a hard link: all refused. */
    char other[300];
    snprintf(other, sizeof other, "%s/./known.sprof", dir);
    assert_int_equal(link(path("known.sprof"), path("hard.sprof")), 0);
    const char *outs[] = {path("known.sprof"), other, path("hard.sprof")};
    const char *cmds[] = {"trace", "table", "stacks"};
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++) {
            assert_int_equal(run(&out, &err, cmds[c], path("known.sprof"), "-o", outs[i], NULL), 2);
            HAS(err, "is the input");
            after = file_bytes(path("known.sprof"), &n1);
            assert_int_equal(n0, n1);
            assert_memory_equal(before, after, n0);
            free(after);
            free(out);
            free(err);
        }
    unlink(path("hard.sprof"));
    free(before);
}

static void test_failed_run_keeps_output(void **state) {
    (void)state;
    char *out, *err, *b;
    size_t n;
    put_file("keep.json", "precious\n");
    assert_int_equal(run(&out, &err, "trace", path("missing.sprof"), "-o", path("keep.json"), NULL), 1);
    HAS(err, "cannot open");
    HAS(err, "left unchanged");
    b = file_bytes(path("keep.json"), &n);
    assert_string_equal(b, "precious\n");
    free(b);
    free(out);
    free(err);
    /* --output=OUT for table; a corrupt input fails the run: kept too. */
    put_file("bad.sprof", "NOT A TRACE FILE, NOT JSON EITHER");
    assert_int_equal(run(&out, &err, "table", "--output", path("keep.json"), path("bad.sprof"), NULL), 1);
    b = file_bytes(path("keep.json"), &n);
    assert_string_equal(b, "precious\n");
    free(b);
    free(out);
    free(err);
    assert_int_equal(temporaries(), 0);
    /* A run that succeeds replaces it, and leaves no temporary behind. */
    assert_int_equal(run(&out, &err, "trace", path("known.sprof"), "-o", path("keep.json"), NULL), 0);
    assert_string_equal(err, "");
    assert_string_equal(out, "");
    b = file_bytes(path("keep.json"), &n);
    HAS(b, "\"traceEvents\"");
    free(b);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", path("known.sprof"), "-o", path("st.txt"), NULL), 0);
    b = file_bytes(path("st.txt"), &n);
    HAS(b, "main;A;B 100000\n");
    free(b);
    free(out);
    free(err);
    assert_int_equal(temporaries(), 0);
}

static void test_write_error_names_output(void **state) {
    (void)state;
    char *out, *err;
    if (access("/dev/full", W_OK) != 0) skip();
    /* Small (written at the end) and big (written while reading). */
    const char *ins[] = {path("known.sprof"), path("big.sprof")};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run(&out, &err, "trace", ins[i], "-o", "/dev/full", NULL), 3);
        HAS(err, "cannot write the output '/dev/full': No space left on device");
        if (strstr(err, "reader's client")) fail_msg("blames the reader: %s", err);
        free(out);
        free(err);
    }
    assert_int_equal(run(&out, &err, "table", path("big.sprof"), "-o", "/dev/full", NULL), 3);
    HAS(err, "cannot write the output '/dev/full': No space left on device");
    free(out);
    free(err);
    /* Not a regular file: written in place. */
    assert_int_equal(run(&out, &err, "table", path("known.sprof"), "-o", "/dev/null", NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* ---- 2. Depth and threads as the writer makes them --------------------------- */
/* Recursion `depth` deep: f at depth d spans [1000 + d, 1000 + 2 * depth - d]
 * (so each has 2 ns of self time, the innermost 1 + ... ), in close order. */
static void write_deep(const char *name, uint32_t depth) {
    tw w = {0, 0, 0};
    tw_major = 2;
    tw_header(&w, 9, "deep");
    tw_site(&w, 1, 1, "f", "f.c", "f");
    tw_thread(&w, 0, 9, "main");
    tw_ev *ev = malloc((size_t)depth * sizeof *ev);
    for (uint32_t k = 0; k < depth; k++) {
        uint32_t d = depth - 1 - k;
        ev[k] = (tw_ev){1000 + d, 1000 + 2ull * depth - d, 1, d};
    }
    tw_events(&w, 0, ev, depth);
    tw_end(&w, depth);
    assert_int_equal(tw_save(&w, path(name)), 0);
    free(ev);
    free(w.b);
}

static void test_deep_recursion(void **state) {
    (void)state;
    char *out, *err;
    write_deep("deep.sprof", 70001);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("deep.sprof"), NULL), 0);
    assert_string_equal(err, "");
    /* 70001 calls; total = sum of spans = sum over d of 2*(70001-d); self 2 ns
     * each (the innermost spans 2 ns and has no child). */
    HAS(out, "\nf,70001,140002,4900210002,");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--group-by", "stack:2", "--format", "csv", path("deep.sprof"), NULL), 0);
    assert_string_equal(err, "");
    HAS(out, "\nf,69999,139998,");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", path("deep.sprof"), "-o", path("deep.json"), NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

static void test_many_threads(void **state) {
    (void)state;
    char *out, *err;
    const uint32_t n = 70000;
    tw w = {0, 0, 0};
    tw_major = 2;
    tw_header(&w, 9, "threads");
    tw_site(&w, 1, 1, "work", "w.c", "work");
    tw_site(&w, 2, 2, "inner", "w.c", "work");
    for (uint32_t t = 0; t < n; t++) {
        tw_thread(&w, t, 100 + t, "worker");
        tw_ev ev[2] = {{2000 + 10ull * t, 2003 + 10ull * t, 2, 1}, {2000 + 10ull * t, 2005 + 10ull * t, 1, 0}};
        tw_events(&w, t, ev, 2);
    }
    tw_end(&w, 2 * n);
    assert_int_equal(tw_save(&w, path("threads.sprof")), 0);
    free(w.b);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("threads.sprof"), NULL), 0);
    assert_string_equal(err, "");
    HAS(out, "\nwork,70000,140000,350000,");
    HAS(out, "\ninner,70000,210000,210000,");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", path("threads.sprof"), NULL), 0);
    assert_string_equal(err, "");
    HAS(out, "work;inner 210000\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", path("threads.sprof"), "-o", path("threads.json"), NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* ---- 3. A file without its END record ---------------------------------------- */
static void test_no_end_record(void **state) {
    (void)state;
    char *out, *err;
    write_ticks("noend.sprof", 100, 0);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("noend.sprof"), NULL), 0);
    HAS(out, "\ntick,100,1000,1000,");
    HAS(err, "noend.sprof: warning: no end record: the run did not finish");
    HAS(err, "read 100 event(s)");
    HAS(err, "missing: the events not yet flushed");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", path("noend.sprof"), NULL), 0);
    HAS(out, "\"name\":\"tick\"");
    HAS(err, "no end record");
    free(out);
    free(err);
    /* With its END record: not a word. */
    write_ticks("end.sprof", 100, 1);
    assert_int_equal(run(&out, &err, "table", path("end.sprof"), NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* ---- 4. Strict command lines --------------------------------------------------- */
static void test_strict_cli(void **state) {
    (void)state;
    char *out, *err;
    char other[300];
    snprintf(other, sizeof other, "%s/./known.sprof", dir);
    /* The same file twice, under two names: refused, nothing counted. */
    assert_int_equal(run(&out, &err, "table", path("known.sprof"), other, NULL), 2);
    HAS(err, "are the same file");
    assert_string_equal(out, "");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", path("known.sprof"), path("known.sprof"), NULL), 2);
    free(out);
    free(err);
    /* JSON that is no trace. */
    put_file("foo.json", "{\"foo\":1}\n");
    assert_int_equal(run(&out, &err, "table", path("foo.json"), NULL), 1);
    HAS(err, "foo.json: offset 9: a JSON object without a \"traceEvents\" array");
    free(out);
    free(err);
    put_file("empty_trace.json", "{\"traceEvents\":[]}\n");
    assert_int_equal(run(&out, &err, "table", path("empty_trace.json"), NULL), 0);
    free(out);
    free(err);
    /* A directory. */
    assert_int_equal(run(&out, &err, "table", dir, NULL), 1);
    HAS(err, ": is a directory");
    free(out);
    free(err);
    /* --limit: not negative; --name=value for every option. */
    assert_int_equal(run(&out, &err, "table", "--limit", "-5", path("known.sprof"), NULL), 2);
    HAS(err, "--limit wants a row count");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--limit=1", "--format=csv", "--sort=count",
                         "--group-by=name", path("known.sprof"), NULL), 0);
    assert_string_equal(strchr(out, '\n') + 1, "A,2,300000,400000,200000,30.00,40.00\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "stacks", "--metric=total_cpu", path("known.sprof"), NULL), 0);
    HAS(out, "main 1000000\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "trace", "--output=-", path("known.sprof"), NULL), 0);
    HAS(out, "\"traceEvents\"");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--per-process=yes", path("known.sprof"), NULL), 2);
    HAS(err, "takes no value");
    free(out);
    free(err);
}

/* gzip input, told by its magic: a .json.gz (torch.profiler's handler), a
 * gzipped .sprof under a name that says nothing, and a cut stream. */
static void test_gzip_input(void **state) {
    (void)state;
    char *out, *err, cmd[1024];
    assert_int_equal(run(&out, &err, "trace", path("known.sprof"), "-o", path("k.json"), NULL), 0);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "gzip -c '%s' >'%s' && gzip -c '%s' >'%s' && head -c 300 '%s' >'%s'",
             path("k.json"), path("k.json.gz"), path("known.sprof"), path("sprof_gz"),
             path("k.json.gz"), path("cut.json.gz"));
    assert_int_equal(system(cmd), 0);
    const char *ins[] = {path("k.json.gz"), path("sprof_gz")};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run(&out, &err, "table", "--format", "csv", ins[i], NULL), 0);
        assert_string_equal(err, "");
        HAS(out, "\nA,2,300000,400000,200000,");
        free(out);
        free(err);
    }
    assert_int_equal(run(&out, &err, "table", path("cut.json.gz"), NULL), 0);
    HAS(err, "gzip data cut short");
    free(out);
    free(err);
}

/* A write that fails on a regular file (the file size limit, as a full
 * disk): the reason is said, and so is that the output was left as it was
 * (it is written beside it and renamed only on success), or not created. */
static void test_failed_write_keeps_output(void **state) {
    (void)state;
    put_file("keep.json", "old\n");
    unlink(path("new.json"));
    struct rlimit was, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    lim = was;
    lim.rlim_cur = 4096;
    void (*xfsz)(int) = signal(SIGXFSZ, SIG_IGN); /* write then fails with EFBIG */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char *out[2], *err[2];
    int rc[2];
    rc[0] = run(&out[0], &err[0], "trace", path("big.sprof"), "-o", path("keep.json"), NULL);
    rc[1] = run(&out[1], &err[1], "trace", path("big.sprof"), "-o", path("new.json"), NULL);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
    signal(SIGXFSZ, xfsz);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rc[i], 3);
        HAS(err[i], "': File too large");
        free(out[i]);
    }
    HAS(err[0], "keep.json' is left unchanged");
    HAS(err[1], "new.json' is not created");
    free(err[0]);
    free(err[1]);
    size_t n;
    char *b = file_bytes(path("keep.json"), &n);
    assert_string_equal(b, "old\n");
    free(b);
    assert_int_not_equal(access(path("new.json"), F_OK), 0);
    assert_int_equal(temporaries(), 0);
}

/* A damaged gzip stream is named as such, before whatever the reader made
 * of the garbage inflated from it (a flipped byte read as a format version,
 * a cut header as an empty file); zeros after the stream are padding, and
 * anything after them is not. */
static void test_gzip_damage_named(void **state) {
    (void)state;
    char *out, *err, cmd[1024];
    snprintf(cmd, sizeof cmd, /* in the test's directory: path() keeps 8 names at a time */
             "cd '%s' && gzip -nc known.sprof >g.gz && head -c 5 g.gz >g5.gz && cp g.gz gpad.gz && "
             "head -c 512 /dev/zero >>gpad.gz && cat gpad.gz g.gz >gpad2.gz && "
             "python3 -c \"b = bytearray(open('g.gz', 'rb').read()); "
             "b[20] ^= 0xff; open('gbad.gz', 'wb').write(b)\"", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_not_equal(run(&out, &err, "table", path("gbad.gz"), NULL), 0);
    if (!strstr(err, "gbad.gz: offset") || !strstr(err, ": gzip data corrupt at compressed byte"))
        fail_msg("a corrupt gzip stream not named first: %s", err);
    free(out);
    free(err);
    run(&out, &err, "table", path("g5.gz"), NULL);
    HAS(err, "gzip data cut short");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", path("gpad.gz"), NULL), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
    assert_int_not_equal(run(&out, &err, "table", path("gpad2.gz"), NULL), 0); /* a member after zeros */
    HAS(err, "data after the zero padding");
    free(out);
    free(err);
}

/* A damaged TICKS chunk: the events after it cannot be read, and the
 * message says why, naming the damage, rather than blame the EVENTS chunk
 * for coming first. */
static void test_damaged_ticks_named(void **state) {
    (void)state;
    tw w = {0, 0, 0};
    tw_major = 4;
    tw_header(&w, 5, "ticks4");
    size_t at = tw_ticks(&w, 0, 0, 1.0);
    tw_site(&w, 1, 1, "tick", "t.c", "tick");
    tw_thread(&w, 0, 5, "main");
    tw_ev ev[2] = {{1000, 1010, 1, 0}, {1020, 1030, 1, 0}};
    tw_events(&w, 0, ev, 2);
    tw_end(&w, 2);
    w.b[at + 16 + 3] ^= 1; /* a bit of the payload: its CRC fails */
    assert_int_equal(tw_save(&w, path("ticks4.sprof")), 0);
    free(w.b);
    tw_major = 1;
    char *out, *err, want[64];
    assert_int_not_equal(run(&out, &err, "table", path("ticks4.sprof"), NULL), 0);
    snprintf(want, sizeof want, "probably in the damage at offset %zu", at);
    HAS(err, want);
    free(out);
    free(err);
}

/* JSON begin and end events without their other half are left out, and
 * said (they were dropped without a word). */
static void test_json_unmatched_said(void **state) {
    (void)state;
    put_file("unmatched.json",
             "{\"traceEvents\":[{\"name\":\"open_forever\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1},"
             "{\"name\":\"x\",\"ph\":\"X\",\"ts\":2,\"dur\":3,\"pid\":1,\"tid\":1},"
             "{\"name\":\"stray\",\"ph\":\"E\",\"ts\":9,\"pid\":1,\"tid\":2}]}\n");
    char *out, *err;
    assert_int_equal(run(&out, &err, "table", path("unmatched.json"), NULL), 0);
    HAS(err, "unmatched.json: warning: 2 begin (\"B\") or end (\"E\") event(s) without their other half");
    HAS(out, "x");
    free(out);
    free(err);
}

/* ---- 6. Steps as PyTorch shows them ------------------------------------------ */
static void test_profiler_step_rows(void **state) {
    (void)state;
    char *out, *err;
    tw w = {0, 0, 0};
    tw_major = 2;
    tw_rich(&w, 11, 0xFFFFFFFFu); /* steps 1..3 of 1000 ns each */
    assert_int_equal(tw_save(&w, path("rich.sprof")), 0);
    free(w.b);
    /* One row for all steps: 3 calls, CPU total their time, self 0 (the
     * other rows' percentages unchanged: step_body 3 x 800 - children). */
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("rich.sprof"), NULL), 0);
    HAS(out, "\nProfilerStep*,3,0,3000,1000,0.00,");
    HAS(out, "\nstep_body,3,");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--steps", "2:3", "--group-by", "site", "--format", "csv",
                         path("rich.sprof"), NULL), 0);
    HAS(out, "\nProfilerStep*,2,0,2000,1000,");
    free(out);
    free(err);
    /* A PyTorch trace re-exported keeps its ProfilerStep#N names; its
     * table still merges them. */
    put_file("steps.json", "[{\"ph\":\"X\",\"name\":\"ProfilerStep#4\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},\n"
                           "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2},\n"
                           "{\"ph\":\"X\",\"name\":\"ProfilerStep#5\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":10}]\n");
    assert_int_equal(run(&out, &err, "trace", path("steps.json"), NULL), 0);
    HAS(out, "\"name\":\"ProfilerStep#4\"");
    HAS(out, "\"name\":\"ProfilerStep#5\"");
    if (strstr(out, "ProfilerStep*")) fail_msg("re-export renamed the steps: %s", out);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "table", "--format", "csv", path("steps.json"), NULL), 0);
    HAS(out, "\nProfilerStep*,2,18000,20000,");
    free(out);
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_is_input),     cmocka_unit_test(test_failed_run_keeps_output),
        cmocka_unit_test(test_write_error_names_output), cmocka_unit_test(test_deep_recursion),
        cmocka_unit_test(test_many_threads),         cmocka_unit_test(test_no_end_record),
        cmocka_unit_test(test_strict_cli),           cmocka_unit_test(test_gzip_input),
        cmocka_unit_test(test_gzip_damage_named),    cmocka_unit_test(test_json_unmatched_said),
        cmocka_unit_test(test_damaged_ticks_named), cmocka_unit_test(test_failed_write_keeps_output),
        cmocka_unit_test(test_profiler_step_rows),
    };
    return cmocka_run_group_tests(tests, setup, files_teardown);
}
