/* Aggregation arithmetic and the key_averages table, on events with known
 * timestamps fed straight to scopeprof_agg_row / scopeprof_agg_event. Built
 * with SCOPEPROF_AGGREGATION only: no recording, no exit hooks. The expected
 * tables were worked out from ../shared/spec/key_averages.md, not from the
 * code's output. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "agg_reference.h"

/* ---- helpers ---------------------------------------------------------------- */

/* The row called `name` (key = name, as the exit summary groups). */
static uint32_t row(scopeprof_agg *a, const char *name) {
    uint32_t r = scopeprof_agg_row(a, name, name, NULL);
    assert_int_not_equal(r, UINT32_MAX);
    return r;
}

/* One finished scope: thread, name, [start, end) in ns, depth when it opened. */
static void ev(scopeprof_agg *a, uint32_t thread, const char *name, uint64_t start,
               uint64_t end, uint32_t depth) {
    assert_int_equal(scopeprof_agg_event(a, thread, row(a, name), start, end, depth), 0);
}

/* A row as the table shows it: what was fed is converted first. */
static const scopeprof_row *get(scopeprof_agg *a, const char *name) {
    uint32_t r = row(a, name); /* may move a->rows: index first */
    scopeprof_agg_flush(a);
    return &a->rows[r];
}

/* The table as a string (open_memstream: the exact bytes printed). */
static char *table(scopeprof_agg *a, scopeprof_sort key, int limit) {
    scopeprof_agg_flush(a);
    /* static: gcc 12's -Wdangling-pointer mistakes the result for &buf */
    static char *buf;
    static size_t n;
    buf = NULL;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    scopeprof_table_print(f, a, key, limit);
    fclose(f);
    return buf;
}

/* Where `needle` starts in `s`, or -1. */
static long offset(const char *s, const char *needle) {
    const char *p = strstr(s, needle);
    return p ? (long)(p - s) : -1;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ---- arithmetic ------------------------------------------------------------- */

/* p [0,100) holds c [10,20), c [30,45), c [48,60) and the last c holds g
 * [50,55). Events come in close order, as the trace file stores them. */
static void test_nesting_self_time(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "c", 10, 20, 1);
    ev(&a, 0, "c", 30, 45, 1);
    ev(&a, 0, "g", 50, 55, 2);
    ev(&a, 0, "c", 48, 60, 1);
    ev(&a, 0, "p", 0, 100, 0);
    const scopeprof_row *p = get(&a, "p"), *c = get(&a, "c"), *g = get(&a, "g");
    assert_int_equal(p->count, 1);
    assert_int_equal(p->total_ns, 100);
    assert_int_equal(p->self_ns, 100 - (10 + 15 + 12)); /* direct children only */
    assert_int_equal(c->count, 3);
    assert_int_equal(c->total_ns, 10 + 15 + 12);
    assert_int_equal(c->self_ns, 10 + 15 + (12 - 5));
    assert_int_equal(g->self_ns, 5);
    assert_int_equal(g->total_ns, 5);
    assert_int_equal(a.events, 5);
    /* Self times add up to the outermost scope's inclusive time. */
    assert_int_equal(scopeprof_agg_self_total(&a), 100);
    /* Rows appear in first-seen order. */
    assert_string_equal(a.rows[0].name, "c");
    assert_string_equal(a.rows[1].name, "g");
    assert_string_equal(a.rows[2].name, "p");
    scopeprof_agg_free(&a);
}

/* f calls itself twice: f [0,100) > f [10,60) > f [20,30). As in PyTorch, the
 * total counts every nested call again; self time is not double counted. */
static void test_recursion(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "f", 20, 30, 2);
    ev(&a, 0, "f", 10, 60, 1);
    ev(&a, 0, "f", 0, 100, 0);
    const scopeprof_row *f = get(&a, "f");
    assert_int_equal(f->count, 3);
    assert_int_equal(f->total_ns, 100 + 50 + 10);
    assert_int_equal(f->self_ns, 10 + (50 - 10) + (100 - 50));
    scopeprof_agg_free(&a);
}

/* Two threads whose events arrive interleaved: each thread's children are
 * subtracted from that thread's parent only. Mixing them up would give
 * thread 0's parent a negative (clamped to 0) self time. */
static void test_threads_interleaved(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "child", 10, 20, 1);
    ev(&a, 7, "child", 5, 50, 1); /* thread slots need not be dense */
    ev(&a, 0, "parent", 0, 30, 0);
    ev(&a, 7, "child", 60, 70, 1);
    ev(&a, 7, "parent", 0, 100, 0);
    const scopeprof_row *p = get(&a, "parent"), *c = get(&a, "child");
    assert_int_equal(p->count, 2);
    assert_int_equal(p->total_ns, 30 + 100);
    assert_int_equal(p->self_ns, (30 - 10) + (100 - 45 - 10));
    assert_int_equal(c->self_ns, 10 + 45 + 10);
    scopeprof_agg_free(&a);
}

/* A longjmp out of scopes (Lua's error(), its coroutines' yields): "catch"
 * (depth 0) opened "call" (depth 1), which opened "work" twice and "alloc"
 * (depth 2), then a third "work" that jumped back to "catch", leaving it
 * and "call" open. The scopes that closed inside the abandoned "call" are
 * "catch"'s, as a trace read by time nests them: subtracted from its self
 * time, never counted twice. So is "late", opened after the jump at the
 * depth the jump left (3: nothing restores it until "catch" closes). Memory
 * made in the abandoned scope counts to "catch" as well. Before, the deeper
 * levels were dropped: "catch" showed all 100 ns as its own. */
static void test_longjmp_children(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "work", 10, 20, 2);
    ev(&a, 0, "work", 20, 25, 2);
    assert_int_equal(scopeprof_agg_mem(&a, 0, 2, 0, 64), 0); /* in "call", at depth 2 */
    ev(&a, 0, "alloc", 30, 32, 2);
    ev(&a, 0, "late", 40, 50, 3);
    ev(&a, 0, "catch", 0, 100, 0);
    const scopeprof_row *c = get(&a, "catch");
    assert_int_equal(c->total_ns, 100);
    assert_int_equal(c->self_ns, 100 - 10 - 5 - 2 - 10);
    assert_int_equal(c->cpu_mem, 64);
    assert_int_equal(c->self_cpu_mem, 64);
    assert_int_equal(scopeprof_agg_self_total(&a), 100); /* the thread's time, once */
    scopeprof_agg_free(&a);

    /* Ranges that outlive the scope they began in are not gathered: they
     * overlap the levels above them. main{ f{ BEGIN R } g{} END R }: R (at
     * depth 2, over f and g) is not main's child, whose self leaves out f
     * and g only; X{ BEGIN R; Y{ END R } }: Y (depth 2) began inside R. */
    scopeprof_agg_init(&a);
    ev(&a, 0, "f", 10, 20, 1);
    ev(&a, 0, "g", 30, 40, 1);
    ev(&a, 0, "R", 15, 50, 2);
    ev(&a, 0, "main", 0, 100, 0);
    assert_int_equal(get(&a, "main")->self_ns, 100 - 10 - 10);
    ev(&a, 1, "R", 110, 150, 1);
    ev(&a, 1, "Y", 130, 180, 2);
    ev(&a, 1, "X", 100, 200, 0);
    assert_int_equal(get(&a, "X")->self_ns, 100 - 40);
    scopeprof_agg_free(&a);
}

/* A "child" that does not lie inside its parent (it started before it: what
 * a mismatched BEGIN/END produces) is not subtracted from the parent. */
static void test_non_contained_child(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "early", 5, 15, 1);
    ev(&a, 0, "parent", 10, 30, 0);
    assert_int_equal(get(&a, "parent")->self_ns, 20);
    assert_int_equal(get(&a, "early")->self_ns, 10);
    /* A later, well nested pair is not affected by the stray one. */
    ev(&a, 0, "inside", 40, 45, 1);
    ev(&a, 0, "parent", 35, 50, 0);
    assert_int_equal(get(&a, "parent")->self_ns, 20 + 10);
    assert_int_equal(get(&a, "parent")->total_ns, 20 + 15);
    assert_int_equal(a.unordered, 0);
    scopeprof_agg_free(&a);
}

/* Events out of close order (a file we did not write): a child that ends
 * after its would-be parent is not subtracted from it, and every event that
 * closes before an earlier one of its thread is counted, with the thread of
 * the first, so the reporter can say the table is not to be trusted. */
static void test_unordered_input(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 1, "parent", 1000, 2000, 0);
    ev(&a, 1, "child", 1200, 1500, 1); /* after its parent: counted */
    ev(&a, 1, "early", 100, 300, 0);   /* back in time: counted */
    ev(&a, 0, "other", 10, 20, 0);     /* another thread: its own order */
    assert_int_equal(a.unordered, 2);
    assert_int_equal(a.unordered_thread, 1);
    /* "child" [1200, 1500) does not lie in "early" [100, 300): not its child. */
    assert_int_equal(get(&a, "early")->self_ns, 200);
    scopeprof_agg_free(&a);
}

/* Siblings at depth 0 never subtract from each other, and a scope with no
 * children keeps its whole duration. */
static void test_siblings_and_leaves(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "a", 0, 10, 0);
    ev(&a, 0, "b", 10, 30, 0);
    ev(&a, 0, "x", 35, 36, 1);
    ev(&a, 0, "a", 30, 40, 0); /* parent of x */
    assert_int_equal(get(&a, "a")->self_ns, 10 + 9);
    assert_int_equal(get(&a, "b")->self_ns, 20);
    /* Average (the "CPU time avg" column) is total / count, checked in the
     * table tests; here: the key is the row identity, not the name. */
    uint32_t r1 = scopeprof_agg_row(&a, "a@file.c:3", "a", "file.c:3");
    uint32_t r2 = scopeprof_agg_row(&a, "a@file.c:9", "a", "file.c:9");
    assert_int_not_equal(r1, r2);
    assert_int_equal(scopeprof_agg_row(&a, "a@file.c:3", "ignored", NULL), r1);
    assert_string_equal(a.rows[r1].extra, "file.c:3");
    scopeprof_agg_free(&a);
}

/* Many rows force the row array and hash table to grow; lookups must still
 * find every row. */
static void test_many_rows(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "row%d", i);
        ev(&a, 0, name, (uint64_t)i * 10, (uint64_t)i * 10 + (uint64_t)i, 0);
    }
    assert_int_equal(a.nrows, 1000);
    scopeprof_agg_flush(&a);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "row%d", i);
        assert_int_equal(row(&a, name), i);
        assert_int_equal(a.rows[i].total_ns, i);
    }
    scopeprof_agg_free(&a);
}

/* ---- sorting ---------------------------------------------------------------- */

static void test_sort_parse(void **state) {
    (void)state;
    static const struct { const char *s; scopeprof_sort k; } ok[] = {
        {"cpu_time_total", SCOPEPROF_SORT_CPU_TIME_TOTAL},
        {"self_cpu_time_total", SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL},
        {"cpu_time", SCOPEPROF_SORT_CPU_TIME},
        {"count", SCOPEPROF_SORT_COUNT},
        {"gpu_time_total", SCOPEPROF_SORT_GPU_TIME_TOTAL},
        {"self_gpu_time_total", SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL},
        {"gpu_time", SCOPEPROF_SORT_GPU_TIME},
        {"cpu_memory_usage", SCOPEPROF_SORT_CPU_MEMORY_USAGE},
        {"self_cpu_memory_usage", SCOPEPROF_SORT_SELF_CPU_MEMORY_USAGE},
        {"gpu_memory_usage", SCOPEPROF_SORT_GPU_MEMORY_USAGE},
        {"self_gpu_memory_usage", SCOPEPROF_SORT_SELF_GPU_MEMORY_USAGE},
        /* PyTorch's spellings */
        {"cuda_time_total", SCOPEPROF_SORT_GPU_TIME_TOTAL},
        {"self_cuda_time_total", SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL},
        {"cuda_time", SCOPEPROF_SORT_GPU_TIME},
        {"cuda_memory_usage", SCOPEPROF_SORT_GPU_MEMORY_USAGE},
        {"self_cuda_memory_usage", SCOPEPROF_SORT_SELF_GPU_MEMORY_USAGE},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        scopeprof_sort k = (scopeprof_sort)-1;
        assert_int_equal(scopeprof_sort_parse(ok[i].s, &k), 0);
        assert_int_equal(k, ok[i].k);
    }
    static const char *const bad[] = {"", "bogus", "cpu_time_totalx", "CPU_TIME_TOTAL",
                                      "cuda_", "self_cuda_", "cuda_cpu_time", "cpu_time_total "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        scopeprof_sort k = SCOPEPROF_SORT_COUNT;
        assert_int_equal(scopeprof_sort_parse(bad[i], &k), -1);
        assert_int_equal(k, SCOPEPROF_SORT_COUNT); /* untouched on error */
    }
    assert_int_equal(scopeprof_sort_parse(NULL, NULL), -1);
    assert_non_null(strstr(scopeprof_sort_keys(), "self_cpu_time_total"));
}

/* Rows whose every attribute is chosen so that each sort key gives a
 * different order; equal values must keep first-seen order. */
static void test_sort_orders(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    /*           name  count total self gpu_t gpu_s  mem  smem gmem sgmem */
    static const struct { const char *n; uint64_t c; int64_t v[8]; } R[] = {
        {"A", 1, {50, 10, 5, 1, 300, 7, -5, 2}},
        {"B", 4, {80, 30, 5, 9, -10, 7, 40, 2}},
        {"C", 2, {80, 20, 60, 3, 100, 9, 40, 8}},
        {"D", 4, {10, 10, 1, 1, 300, 1, 0, 1}},
    };
    for (int i = 0; i < 4; i++) {
        uint32_t ri = row(&a, R[i].n); /* may move a.rows: index first */
        scopeprof_row *r = &a.rows[ri];
        r->count = R[i].c;
        r->total_ns = R[i].v[0];
        r->self_ns = R[i].v[1];
        r->gpu_total_ns = R[i].v[2];
        r->gpu_self_ns = R[i].v[3];
        r->cpu_mem = R[i].v[4];
        r->self_cpu_mem = R[i].v[5];
        r->gpu_mem = R[i].v[6];
        r->self_gpu_mem = R[i].v[7];
    }
    static const struct { const char *key, *order; } want[] = {
        {"cpu_time_total", "BCAD"},      /* B, C tie at 80: B seen first */
        {"self_cpu_time_total", "BCAD"}, /* A, D tie at 10 */
        {"cpu_time", "ACBD"},            /* avg: 50, 20, 40, 2.5 */
        {"count", "BDCA"},
        {"gpu_time_total", "CABD"},      /* A, B tie at 5 */
        {"cuda_time_total", "CABD"},
        {"self_gpu_time_total", "BCAD"}, /* A, D tie at 1 */
        {"self_cuda_time_total", "BCAD"},
        {"gpu_time", "CABD"},            /* avg: 5, 1.25, 30, 0.25 */
        {"cpu_memory_usage", "ADCB"},    /* A, D tie at 300; B negative */
        {"self_cpu_memory_usage", "CABD"},
        {"gpu_memory_usage", "BCDA"},
        {"cuda_memory_usage", "BCDA"},
        {"self_gpu_memory_usage", "CABD"},
        {"self_cuda_memory_usage", "CABD"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        scopeprof_sort k;
        assert_int_equal(scopeprof_sort_parse(want[i].key, &k), 0);
        uint32_t *idx = scopeprof_agg_sorted(&a, k);
        assert_non_null(idx);
        char got[5];
        for (int j = 0; j < 4; j++) got[j] = a.rows[idx[j]].name[0];
        got[4] = 0;
        free(idx);
        if (strcmp(got, want[i].order) != 0)
            fail_msg("sort by %s: got %s, want %s", want[i].key, got, want[i].order);
    }
    scopeprof_agg_free(&a);
}

/* A stable sort must keep first-seen order for long runs of ties too (a
 * merge sort over more than one pass). */
static void test_sort_ties_many(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    char name[16];
    for (int i = 0; i < 37; i++) {
        snprintf(name, sizeof name, "r%02d", i);
        uint32_t ri = row(&a, name);
        a.rows[ri].count = (uint64_t)(i % 3); /* 0 1 2 0 1 2 ... */
    }
    uint32_t *idx = scopeprof_agg_sorted(&a, SCOPEPROF_SORT_COUNT);
    assert_non_null(idx);
    uint32_t prev = 0;
    for (int j = 0; j < 37; j++) {
        const scopeprof_row *r = &a.rows[idx[j]];
        if (j > 0) {
            const scopeprof_row *p = &a.rows[prev];
            assert_true(p->count >= r->count);
            if (p->count == r->count) assert_true(prev < idx[j]); /* first seen first */
        }
        prev = idx[j];
    }
    free(idx);
    scopeprof_agg_free(&a);
}

/* ---- formatting ------------------------------------------------------------- */

static void test_format_time(void **state) {
    (void)state;
    char b[64];
    assert_string_equal(scopeprof_format_time(b, sizeof b, 0), "0.000us");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 422), "422.000us");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 999.5), "999.500us");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 1000), "1.000ms");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 26179), "26.179ms");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 999999), "999.999ms");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 1e6), "1.000s");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 1081000), "1.081s");
    assert_string_equal(scopeprof_format_time(b, sizeof b, 3600e6), "3600.000s");
}

static void test_format_mem(void **state) {
    (void)state;
    char b[64];
    assert_string_equal(scopeprof_format_mem(b, sizeof b, 0), "0 b");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, 144), "144 b");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, 1023), "1023 b");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, -100), "-100 b");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, 1024), "1.00 Kb");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, -391219), "-382.05 Kb");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, 3 << 20), "3.00 Mb");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, -(3 << 20)), "-3.00 Mb");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, (int64_t)3 << 29), "1.50 Gb");
    assert_string_equal(scopeprof_format_mem(b, sizeof b, -((int64_t)5 << 30)), "-5.00 Gb");
}

/* The standard check value of CRC-32/IEEE, and that pieces chain. */
static void test_crc32(void **state) {
    (void)state;
    assert_int_equal(scopeprof_crc32(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(scopeprof_crc32(scopeprof_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    assert_int_equal(scopeprof_crc32(0, "", 0), 0);
}

/* ---- event records ---------------------------------------------------------- */

/* Each event round-trips; those that fit take 16 bytes, the rest 32. The
 * cases sit on both sides of every limit of the short form. */
static void test_event_records(void **state) {
    (void)state;
    const uint64_t t0 = 0x0123456789ABCDEFull;
    const uint32_t G = SCOPEPROF_DEPTH_GPU, M = SCOPEPROF_DEPTH_MEM;
    const struct { scopeprof_event e; size_t size; } cases[] = {
        {{t0, t0 + 25, 1, 0}, 16},
        {{t0, t0, 7, 3}, 16},                                   /* zero length */
        {{t0, t0 + 0xFFFFFFFEull, 1, 0}, 16},                   /* longest short */
        {{t0, t0 + 0xFFFFFFFFull, 1, 0}, 32},                   /* duration = the mark */
        {{t0, t0 + (1ull << 40), 1, 0}, 32},
        {{t0, t0 + 5, (1u << 19) - 1, 0}, 16},                  /* highest short site */
        {{t0, t0 + 5, 1u << 19, 0}, 32},
        {{t0, t0 + 5, 2, 4095}, 16},                            /* deepest short */
        {{t0, t0 + 5, 2, 4096}, 32},
        {{t0, t0 + 5, 2, 9999}, 32},
        {{t0, t0 + 5, (1u << 19) - 1, 4095 | G}, 16},           /* GPU flag kept */
        {{t0, t0 + 5, 3, 5000 | G}, 32},
        {{t0, (uint64_t)-4096, 4, M | 2u << 24 | 17}, 32},      /* a free on GPU 1 */
        {{t0, 1ull << 33, 4, M | 3}, 32},                       /* an allocation */
        {{t0, t0 - 1, 1, 0}, 32},                               /* end before start */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char b[40];
        memset(b, 0xAA, sizeof b);
        size_t n = scopeprof_rec_encode(b, &cases[i].e);
        if (n != cases[i].size) fail_msg("case %zu: %zu bytes, want %zu", i, n, cases[i].size);
        assert_int_equal(b[n], 0xAA); /* nothing written past the record */
        scopeprof_event d;
        memset(&d, 0, sizeof d);
        assert_int_equal(scopeprof_rec_decode(b, n, &d), n);
        if (d.start != cases[i].e.start || d.end != cases[i].e.end || d.site != cases[i].e.site ||
            d.depth != cases[i].e.depth)
            fail_msg("case %zu: decoded differently", i);
        /* Cut short by one byte: not decodable. */
        assert_int_equal(scopeprof_rec_decode(b, n - 1, &d), 0);
    }
    /* The file's bytes, as docs/FORMAT.md draws them: start, duration, key. */
    unsigned char b[32];
    scopeprof_event e = {0x0102030405060708ull, 0x0102030405060708ull + 0x10, 5, 2 | G};
    assert_int_equal(scopeprof_rec_encode(b, &e), 16);
    static const unsigned char want[16] = {8, 7, 6, 5, 4, 3, 2, 1, 0x10, 0, 0, 0, 5, 0, 0x10, 0x80};
    assert_memory_equal(b, want, 16);
}

/* ---- the table -------------------------------------------------------------- */

#define LONG_NAME "this_is_a_deliberately_long_scope_name_to_test_truncation" /* 57 chars */

/* outer [0, 2 s) holds four 250 ms inner scopes; leaf runs twice for 1.5 us;
 * a 57-character name runs once for 0.5 us. */
static void build_known(scopeprof_agg *a) {
    scopeprof_agg_init(a);
    for (uint64_t i = 0; i < 4; i++)
        ev(a, 0, "inner", 100000000 + i * 400000000, 350000000 + i * 400000000, 1);
    ev(a, 0, "outer", 0, 2000000000, 0);
    ev(a, 0, "leaf", 2000000000, 2000001500, 0);
    ev(a, 0, "leaf", 2000002000, 2000003500, 0);
    ev(a, 1, LONG_NAME, 0, 500, 0);
}

static const char known_table[] =
    "-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
    "-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "                                                  outer        50.00%        1.000s       100.00%        2.000s        2.000s             1  \n"
    "                                                  inner        50.00%        1.000s        50.00%        1.000s     250.000ms             4  \n"
    "                                                   leaf         0.00%       3.000us         0.00%       3.000us       1.500us             2  \n"
    "this_is_a_deliberately_long_scope_name_to_test_trunc...         0.00%       0.500us         0.00%       0.500us       0.500us             1  \n"
    "-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
    "Self CPU time total: 2.000s\n";

static void test_table_golden(void **state) {
    (void)state;
    scopeprof_agg a;
    build_known(&a);
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    assert_string_equal(t, known_table);
    free(t);
    /* row_limit -1 also means every row */
    t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, -1);
    assert_string_equal(t, known_table);
    free(t);
    scopeprof_agg_free(&a);
}

/* Another sort key through the table: by count, ties in first-seen order. */
static void test_table_sort_by_count(void **state) {
    (void)state;
    scopeprof_agg a;
    build_known(&a);
    char *t = table(&a, SCOPEPROF_SORT_COUNT, 0);
    /* Order by count: inner (4), leaf (2), outer (1), long (1, seen after outer). */
    long pi = offset(t, " inner "), pl = offset(t, " leaf "), po = offset(t, " outer "),
         pn = offset(t, "trunc...");
    assert_true(pi >= 0 && pl >= 0 && po >= 0 && pn >= 0);
    assert_true(pi < pl && pl < po && po < pn);
    free(t);
    scopeprof_agg_free(&a);
}

static void test_table_row_limit(void **state) {
    (void)state;
    scopeprof_agg a;
    build_known(&a);
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 2);
    /* 3 separators + header + 2 rows + total line */
    assert_int_equal(count_lines(t), 7);
    assert_non_null(strstr(t, " outer "));
    assert_non_null(strstr(t, " inner "));
    assert_null(strstr(t, " leaf "));
    /* Percentages and the total still use every row, not only those shown. */
    assert_non_null(strstr(t, "Self CPU time total: 2.000s\n"));
    free(t);
    /* By self time outer and inner tie at 1 s: inner was seen first. */
    t = table(&a, SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL, 1);
    assert_int_equal(count_lines(t), 6);
    assert_non_null(strstr(t, " inner "));
    assert_null(strstr(t, " outer "));
    free(t);
    scopeprof_agg_free(&a);
}

/* Column widths come from every row, not only the rows shown (PyTorch's
 * _build_table): a long name below the row limit still widens Name. A source
 * column is at most 75 wide; a longer cell keeps its end behind "...". */
static void test_table_widths(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    a.extra_header = "Source Location";
    char longx[200];
    memset(longx, 'x', sizeof longx - 1);
    longx[sizeof longx - 1] = 0;
    longx[sizeof longx - 2] = 'E'; /* a cut keeps the end, behind "..." (PyTorch's trim_path) */
    uint32_t big = scopeprof_agg_row(&a, "big", "big", "a.c:1");
    uint32_t wide = scopeprof_agg_row(&a, "a_name_of_twenty_six_chars", "a_name_of_twenty_six_chars", longx);
    assert_int_equal(scopeprof_agg_event(&a, 0, big, 0, 100, 0), 0);
    assert_int_equal(scopeprof_agg_event(&a, 0, wide, 200, 210, 0), 0);
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 1);
    assert_null(strstr(t, "a_name_of_twenty_six_chars")); /* not shown... */
    /* ...but Name is 26 + 4 wide: 27 spaces, then "big". */
    assert_non_null(strstr(t, "\n                           big  "));
    assert_int_equal(strncmp(t, "------------------------------  ", 32), 0);
    free(t);
    t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    char cut[96];
    snprintf(cut, sizeof cut, "  ...%.72s  \n", longx + sizeof longx - 1 - 72);
    assert_non_null(strstr(t, cut));
    assert_non_null(strstr(cut, "xE  \n"));
    /* Every line (separators, header, rows) is as wide as the first. */
    size_t w = strcspn(t, "\n");
    for (const char *l = t; *l && strncmp(l, "Self CPU", 8) != 0; l += strcspn(l, "\n") + 1)
        assert_int_equal(strcspn(l, "\n"), w);
    free(t);
    scopeprof_agg_free(&a);
}

/* All durations zero: percentages divide by zero and print NaN. */
static void test_table_nan(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "a", 5, 5, 0);
    ev(&a, 0, "a", 9, 9, 0);
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    assert_string_equal(t,
        "-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        " Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
        "-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "    a           NaN       0.000us           NaN       0.000us       0.000us             2  \n"
        "-----  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "Self CPU time total: 0.000us\n");
    free(t);
    scopeprof_agg_free(&a);
}

/* Memory columns come after the time columns and before "# of Calls". */
static void test_table_memory_columns(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "alloc", 0, 1000, 0);
    ev(&a, 0, "alloc", 1000, 2000, 0);
    ev(&a, 0, "free", 2000, 5000, 0);
    ev(&a, 0, "alloc", 5000, 6000, 0);
    /* Times and memory set directly (the recorder does not measure memory
     * yet): alloc self 2 us of 5 us total, over 3 calls. */
    scopeprof_agg_flush(&a);
    scopeprof_row *al = &a.rows[0], *fr = &a.rows[1];
    al->self_ns = 2000;
    al->total_ns = 5000;
    al->cpu_mem = (int64_t)3 << 29;
    al->self_cpu_mem = -391219;
    fr->cpu_mem = -(3 << 20);
    fr->self_cpu_mem = 144;
    a.has_mem = 1;
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    assert_string_equal(t,
        "---------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "     Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg       CPU Mem  Self CPU Mem    # of Calls  \n"
        "---------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "    alloc        40.00%       2.000us       100.00%       5.000us       1.667us       1.50 Gb    -382.05 Kb             3  \n"
        "     free        60.00%       3.000us        60.00%       3.000us       3.000us      -3.00 Mb         144 b             1  \n"
        "---------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "Self CPU time total: 5.000us\n");
    free(t);
    scopeprof_agg_free(&a);
}

/* GPU columns, when any GPU time exists: Self GPU, Self GPU %, GPU total,
 * GPU time avg, after the CPU ones, and a "Self GPU time total" line. */
static void test_table_gpu_columns(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    ev(&a, 0, "k", 0, 4000, 0);
    scopeprof_agg_flush(&a);
    scopeprof_row *k = &a.rows[0];
    k->gpu_self_ns = 3000;
    k->gpu_total_ns = 3000;
    a.has_gpu = 1;
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    assert_non_null(strstr(t, "CPU time avg      Self GPU    Self GPU %     GPU total  GPU time avg    # of Calls  \n"));
    assert_non_null(strstr(t, "4.000us       3.000us       100.00%       3.000us       3.000us             1  \n"));
    assert_non_null(strstr(t, "\nSelf CPU time total: 4.000us\nSelf GPU time total: 3.000us\n"));
    free(t);
    scopeprof_agg_free(&a);
}

/* An empty aggregation still prints a well-formed (empty) table. */
static void test_table_empty(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    char *t = table(&a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    assert_int_equal(count_lines(t), 5);
    assert_non_null(strstr(t, "Self CPU time total: 0.000us\n"));
    free(t);
    scopeprof_agg_free(&a);
}

/* ---- Overhead compensation (docs/DESIGN.md) ------------------------------------
 * A scope costs I inside its own interval and O outside it, in its parent's:
 * total = D - I - nested * (I + O), self = total - the children's totals
 * (= measured self - I - children * O); an event may come out negative, a
 * row's sum not. Expected values worked out by hand below. */
static void comp_tree(scopeprof_agg *a) {
    ev(a, 0, "g", 100, 120, 2);  /* grandchildren of p, children of the first c */
    ev(a, 0, "g", 130, 150, 2);
    ev(a, 0, "c", 90, 200, 1);   /* 2 children, 2 nested */
    ev(a, 0, "c", 300, 310, 1);
    ev(a, 0, "c", 400, 401, 1);  /* shorter than I: -1 ns, the row stays positive */
    ev(a, 0, "p", 0, 1000, 0);   /* 3 children, 5 nested */
}

static void test_comp_arithmetic(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 2000, 3000, 1); /* I = 2 ns, O = 3 ns */
    comp_tree(&a);
    /* g: 20 - 2 each, no children. */
    assert_int_equal(get(&a, "g")->total_ns, 36);
    assert_int_equal(get(&a, "g")->self_ns, 36);
    /* c: 110 - 2 - 2 * 5 = 98 and self 98 - 36 = 62 (= 70 - 2 - 2 * 3);
     * 10 - 2 = 8; 1 - 2 = -1. */
    assert_int_equal(get(&a, "c")->total_ns, 98 + 8 - 1);
    assert_int_equal(get(&a, "c")->self_ns, 62 + 8 - 1);
    /* p: 1000 - 2 - 5 * 5 = 973; self 973 - 105 = 868 (= 879 - 2 - 3 * 3). */
    assert_int_equal(get(&a, "p")->total_ns, 973);
    assert_int_equal(get(&a, "p")->self_ns, 868);
    assert_int_equal(get(&a, "p")->count, 1);
    /* Self + children = total, as for raw times: the self times sum to p's total. */
    assert_int_equal(scopeprof_agg_self_total(&a), 973);
    scopeprof_agg_free(&a);
}

/* No calibration, or one recorded but not applied: the measured times. */
static void test_comp_off_is_raw(void **state) {
    (void)state;
    for (int applied = 0; applied < 2; applied++) {
        scopeprof_agg a;
        scopeprof_agg_init(&a);
        if (applied) scopeprof_agg_calibration(&a, 2000, 3000, 0);
        comp_tree(&a);
        assert_int_equal(get(&a, "g")->total_ns, 40);
        assert_int_equal(get(&a, "c")->total_ns, 110 + 10 + 1);
        assert_int_equal(get(&a, "c")->self_ns, 70 + 10 + 1);
        assert_int_equal(get(&a, "p")->total_ns, 1000);
        assert_int_equal(get(&a, "p")->self_ns, 879);
        assert_int_equal(a.comp_state, applied ? SCOPEPROF_COMP_OFF_RAW : SCOPEPROF_COMP_NONE);
        scopeprof_agg_free(&a);
    }
}

/* Picoseconds until the row: 1000 children of 5 - 1.4 ns make 3600 ns (not
 * 1000 * 4), and their parent loses 1.4 + 1000 * 1.4 ns. */
static void test_comp_rounds_once(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 1400, 0, 1);
    for (uint64_t i = 0; i < 1000; i++) ev(&a, 0, "kid", 10 + i * 10, 15 + i * 10, 1);
    ev(&a, 0, "top", 0, 20000, 0);
    assert_int_equal(get(&a, "kid")->total_ns, 3600);
    assert_int_equal(get(&a, "kid")->self_ns, 3600);
    assert_int_equal(get(&a, "top")->total_ns, 18598);     /* 18598.6 */
    assert_int_equal(get(&a, "top")->self_ns, 14998);      /* 18598.6 - 3600 */
    scopeprof_agg_free(&a);
}

/* A row shows the sum of its scopes' compensated times, or 0 while that sum
 * is negative. */
static void test_comp_row_never_negative(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 10000, 0, 1); /* I = 10 ns */
    ev(&a, 0, "e", 0, 3, 0);                  /* -7 */
    assert_int_equal(get(&a, "e")->total_ns, 0);
    assert_int_equal(get(&a, "e")->self_ns, 0);
    ev(&a, 0, "e", 10, 35, 0);                /* +15: 8 in all */
    assert_int_equal(get(&a, "e")->total_ns, 8);
    assert_int_equal(get(&a, "e")->self_ns, 8);
    scopeprof_agg_free(&a);
}

/* The notes under the table of `a` (its pending events flushed first), in
 * a string to free. */
static char *notes_text_shown(scopeprof_agg *a, int row_limit) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    scopeprof_agg_flush(a);
    if (row_limit < 0) scopeprof_table_notes(f, a);
    else scopeprof_table_notes_shown(f, a, SCOPEPROF_SORT_CPU_TIME_TOTAL, row_limit);
    fclose(f);
    return buf;
}
static char *notes_text(scopeprof_agg *a) { return notes_text_shown(a, -1); }

/* A row whose compensated sum was clamped is named in a line under the
 * table (its cells keep PyTorch's layout); a row that was not clamped is
 * not named there. */
static void test_comp_clamped_marked(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 10000, 0, 1); /* I = 10 ns */
    ev(&a, 0, "short", 0, 3, 0);                /* -7: shown 0, clamped */
    ev(&a, 0, "long", 10, 1010, 0);             /* 990: not clamped */
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    scopeprof_agg_flush(&a);
    scopeprof_table_print(f, &a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    scopeprof_table_notes(f, &a);
    fclose(f);
    const char *line = strstr(buf, "\nOverhead compensation clamped at 0 or at their total");
    assert_non_null(line);
    const char *eol = strchr(line + 1, '\n');
    assert_non_null(eol);
    assert_memory_equal(eol - 6, " short", 6); /* the one row named */
    assert_null(strstr(line, "long"));
    free(buf);
    /* Named as in the table: a control character escaped, never raw. */
    ev(&a, 0, "esc\x1b[2J", 2000, 2001, 0); /* -9: clamped */
    buf = notes_text(&a);
    assert_non_null(strstr(buf, " esc\\x1b[2J"));
    assert_null(strchr(buf, 0x1b));
    free(buf);
    /* A long name is cut as the Name column cuts it: no line grows with a
     * name (CI: a 64 KiB name clamped under load made a 64 KiB line). */
    char big[1001];
    memset(big, 'b', 1000);
    big[0] = 'B', big[1000] = 0;
    ev(&a, 0, big, 3000, 3001, 0); /* -9: clamped */
    buf = notes_text(&a);
    char cut[64];
    snprintf(cut, sizeof cut, " %.52s...", big);
    assert_non_null(strstr(buf, cut));
    assert_null(strstr(buf, big + 900));
    free(buf);
    scopeprof_agg_free(&a);
}

/* Two classes (docs/DESIGN.md, "Overhead compensation"): a scope under
 * comp_short_below (units fed) costs the short class's I and O, one with
 * work in it the other class's; worked out by hand. */
static void test_comp_short_class(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 1000, 4000, 1); /* with work: I = 1 ns, O = 4 ns */
    scopeprof_agg_short_class(&a, 9000, 11000, 20); /* under 20 ns: I = 9 ns, O = 11 ns */
    ev(&a, 0, "tiny", 10, 22, 1); /* 12: short, 12 - 9 = 3 */
    ev(&a, 0, "tiny", 30, 45, 1); /* 15: short, 6 */
    ev(&a, 0, "leaf", 50, 90, 1); /* 40: with work, 40 - 1 = 39 */
    ev(&a, 0, "top", 0, 100, 0);  /* 100 - 1 - 2 * (9 + 11) - (1 + 4) = 54; self 100 - 67 - 1 - 2 * 11 - 4 = 6 */
    ev(&a, 0, "edge", 200, 220, 0); /* 20: not under 20, 19 */
    assert_int_equal(get(&a, "tiny")->total_ns, 9);
    assert_int_equal(get(&a, "tiny")->self_ns, 9);
    assert_int_equal(get(&a, "leaf")->total_ns, 39);
    assert_int_equal(get(&a, "top")->total_ns, 54);
    assert_int_equal(get(&a, "top")->self_ns, 6);
    assert_int_equal(get(&a, "edge")->total_ns, 19);
    /* self + the children's totals = total, as with one class */
    assert_int_equal(get(&a, "top")->self_ns + get(&a, "tiny")->total_ns + get(&a, "leaf")->total_ns,
                     get(&a, "top")->total_ns);
    assert_int_equal(get(&a, "tiny")->count_short, 2);
    assert_int_equal(get(&a, "top")->count_short + get(&a, "leaf")->count_short + get(&a, "edge")->count_short, 0);
    scopeprof_agg_free(&a);

    /* Not applied without compensation (--no-compensate): raw times. */
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 1000, 4000, 0);
    scopeprof_agg_short_class(&a, 9000, 11000, 20);
    assert_int_equal(a.comp_short_below, 0);
    ev(&a, 0, "tiny", 10, 22, 0);
    assert_int_equal(get(&a, "tiny")->total_ns, 12);
    char *buf = notes_text(&a);
    assert_non_null(strstr(buf, "calibrated at start-up: 5.0 ns per nested scope; 20.0 ns per short one"));
    free(buf);
    scopeprof_agg_free(&a);
}

/* Rows most of whose calls were short, and whose time is less than one
 * short scope's cost for each call, are named in a line of their own (their times are
 * mostly the profiler's); a row named as clamped is not named again; a row
 * of mostly short calls with real time in it is not named; a name is said
 * once (rows of one name on two threads); with no short class, none is
 * named. */
static void test_comp_short_rows_named(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 0, 5000, 1); /* I = 0, O = 5 ns */
    scopeprof_agg_short_class(&a, 8000, 12000, 20); /* under 20 ns: I = 8 ns, O = 12 ns */
    ev(&a, 0, "tiny", 0, 12, 0);  /* short */
    ev(&a, 0, "tiny", 20, 36, 0); /* short */
    ev(&a, 0, "tiny", 40, 62, 0); /* not: 2 of 3 are; 12 + 16 + 22 - 2 x 8 = 34 ns < 2 x 20 */
    /* another thread's row of that name (key "tiny@1", as --group-by thread) */
    assert_int_equal(scopeprof_agg_event(&a, 1, scopeprof_agg_row(&a, "tiny@1", "tiny", NULL), 70, 80, 0), 0);
    ev(&a, 0, "wait", 100, 110, 0); /* short, */
    ev(&a, 0, "wait", 120, 130, 0); /* short, */
    ev(&a, 0, "wait", 140, 1000140, 0); /* but a millisecond in all: not the profiler's */
    /* 3 of 5 short: 3 x (12 - 8) + 2 x 25 = 62 ns shown, above the short
     * calls' 3 x 20 but below one short scope a call, 5 x 20: named */
    ev(&a, 0, "most", 0, 12, 0);
    ev(&a, 0, "most", 20, 32, 0);
    ev(&a, 0, "most", 40, 52, 0);
    ev(&a, 0, "most", 60, 85, 0);
    ev(&a, 0, "most", 90, 115, 0);
    ev(&a, 0, "half", 100, 110, 0); /* short */
    ev(&a, 0, "half", 120, 150, 0); /* not: 1 of 2 is not most */
    ev(&a, 0, "long", 200, 400, 0);
    ev(&a, 0, "gone", 600, 603, 0); /* 3 - 8: clamped, named there only */
    for (int limit = 0; limit <= 8; limit += 8) { /* all rows shown, or more allowed than there are */
        char *buf = notes_text_shown(&a, limit);
        assert_non_null(strstr(buf, "Overhead compensation: 5.0 ns per nested scope taken out (calibrated at "
                                    "start-up; 20.0 ns per short one, about as short as an empty scope; raw times"));
        const char *line = strstr(buf, "\nMostly the profiler's own cost (most calls about as short as an empty "
                                       "scope; their times are not to be trusted): tiny, most\n");
        assert_non_null(line);
        assert_non_null(strstr(buf, "clamped at 0 or at their total (scopes about as short as the calibration; "
                                    "--no-compensate shows raw times): gone\n"));
        free(buf);
    }
    /* A row limit: only the rows shown are named, the others counted. By
     * CPU total: wait, long, most (62 ns), tiny (34), half, tiny@1, gone. */
    char *buf = notes_text_shown(&a, 3);
    assert_non_null(strstr(buf, "their times are not to be trusted): most (and 2 row(s) not shown above)\n"));
    assert_non_null(strstr(buf, "--no-compensate shows raw times): 1 row(s) not shown above\n"));
    free(buf);
    buf = notes_text_shown(&a, 2);
    assert_non_null(strstr(buf, "their times are not to be trusted): 3 row(s) not shown above\n"));
    free(buf);
    scopeprof_agg_free(&a);

    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 0, 5000, 1); /* no short class */
    ev(&a, 0, "tiny", 0, 12, 0);
    buf = notes_text(&a);
    assert_null(strstr(buf, "Mostly the profiler's own cost"));
    assert_null(strstr(buf, "per short one"));
    free(buf);
    scopeprof_agg_free(&a);
}

/* Empty children (shorter than the calibration: their compensated sum is
 * negative, shown as 0) never make their parent's self exceed its total,
 * and self + the children's shown totals = total still holds. This is what
 * CI caught: prog_mismatch's empty "after_child" under ASan gave "after" a
 * self time above its total. */
static void test_comp_empty_children(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 10000, 2000, 1); /* I = 10 ns, O = 2 ns */
    for (uint64_t i = 0; i < 5; i++) {
        ev(&a, 0, "kid", i * 100 + 10, i * 100 + 14, 1); /* 4 - 10 = -6 */
        ev(&a, 0, "top", i * 100, i * 100 + 40, 0);      /* 40 - 10 - 12 = 18; self 18 + 6 */
    }
    assert_int_equal(get(&a, "kid")->total_ns, 0);
    assert_int_equal(get(&a, "top")->total_ns, 90);
    assert_int_equal(get(&a, "top")->self_ns, 90); /* its sum is 120: clamped to the total */
    /* A later longer child brings the sums back: kid -30 + 26 = -4 (still 0);
     * then kid sum 6, top self = total - 6. */
    ev(&a, 0, "kid", 1010, 1046, 1);                 /* 36 - 10 = 26 */
    ev(&a, 0, "top", 1000, 1100, 0);                 /* 100 - 22 = 78, self 52 */
    assert_int_equal(get(&a, "kid")->total_ns, 0);
    assert_int_equal(get(&a, "top")->total_ns, 168);
    assert_int_equal(get(&a, "top")->self_ns, 168); /* sum 172 */
    ev(&a, 0, "kid", 1210, 1230, 1);                 /* 20 - 10 = 10: kid sum 6 */
    ev(&a, 0, "top", 1200, 1250, 0);                 /* 50 - 22 = 28, self 18 */
    assert_int_equal(get(&a, "kid")->total_ns, 6);
    assert_int_equal(get(&a, "top")->total_ns, 196);
    assert_int_equal(get(&a, "top")->self_ns, 190); /* 196 - 6 */
    assert_int_equal(scopeprof_agg_self_total(&a), 196);
    scopeprof_agg_free(&a);
}

/* Children that do not lie inside their parent (mismatched BEGIN/END) are
 * not subtracted, and their overhead is not taken out of it either. */
static void test_comp_outside_children(void **state) {
    (void)state;
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 2000, 3000, 1);
    ev(&a, 0, "kid", 50, 150, 1);
    ev(&a, 0, "top", 100, 1000, 0);
    assert_int_equal(get(&a, "top")->total_ns, 898);
    assert_int_equal(get(&a, "top")->self_ns, 898);
    scopeprof_agg_free(&a);
}

static char *notes(const scopeprof_agg *a) {
    static char *buf;
    static size_t n;
    buf = NULL;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    scopeprof_table_notes(f, a);
    fclose(f);
    return buf;
}

/* The footer: what CPU time is, always; the compensation when known. */
static void test_comp_notes(void **state) {
    (void)state;
    static const char cpu[] = "CPU time is wall time on the thread, as in PyTorch: a thread's "
                              "waits (locks, I/O, sleep) count as its self time\n";
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    char *t = notes(&a);
    assert_string_equal(t, cpu);
    free(t);
    scopeprof_agg_calibration(&a, 5100, 7250, 1);
    t = notes(&a);
    assert_int_equal(offset(t, cpu), 0);
    assert_string_equal(t + strlen(cpu),
                        "Overhead compensation: 12.3 ns per nested scope taken out (calibrated at "
                        "start-up; raw times: SCOPEPROF_COMPENSATE=0, or scopeprof table "
                        "--no-compensate)\n");
    free(t);
    scopeprof_agg_calibration(&a, 9000, 1000, 1); /* a second file's */
    t = notes(&a);
    assert_non_null(strstr(t, "Overhead compensation: 10.0-12.3 ns per nested scope taken out"));
    free(t);
    scopeprof_agg_free(&a);
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, 5100, 7250, 0);
    t = notes(&a);
    assert_non_null(strstr(t, "\nOverhead compensation: off (--no-compensate); calibrated at "
                              "start-up: 12.3 ns per nested scope\n"));
    free(t);
    a.comp_state = SCOPEPROF_COMP_OFF_ENV;
    t = notes(&a);
    assert_non_null(strstr(t, "\nOverhead compensation: off (SCOPEPROF_COMPENSATE=0)\n"));
    free(t);
    scopeprof_agg_free(&a);
}

/* ---- the fast path against the reference ------------------------------------ */

/* Aggregation skips work that cannot change a sum (a leaf's children, sums
 * of 0): a long seeded stream of everything a reader can be fed -- nesting,
 * several threads, GPU times, memory on three devices, mismatched depths,
 * events out of close order, sums that saturate -- must give exactly the
 * numbers of the straightforward version (agg_reference.h). */
static uint64_t mix(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* a: the header's (its sums flushed first, in ns: the same numbers); b: the reference's. */
static void same_aggs(scopeprof_agg *a, const scopeprof_agg *b) {
    scopeprof_agg_flush(a);
    assert_int_equal(a->events, b->events);
    assert_int_equal(a->unordered, b->unordered);
    assert_int_equal(a->unordered_thread, b->unordered_thread);
    assert_int_equal(a->has_gpu, b->has_gpu);
    assert_int_equal(a->has_mem, b->has_mem);
    assert_int_equal(a->has_gpu_mem, b->has_gpu_mem);
    assert_int_equal(a->nrows, b->nrows);
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *x = &a->rows[i], *y = &b->rows[i];
        assert_int_equal(x->count, y->count);
        assert_int_equal(x->self_ns, y->self_ns);
        assert_int_equal(x->total_ns, y->total_ns);
        assert_int_equal(x->gpu_self_ns, y->gpu_self_ns);
        assert_int_equal(x->gpu_total_ns, y->gpu_total_ns);
        assert_int_equal(x->cpu_mem, y->cpu_mem);
        assert_int_equal(x->self_cpu_mem, y->self_cpu_mem);
        assert_int_equal(x->gpu_mem, y->gpu_mem);
        assert_int_equal(x->self_gpu_mem, y->self_gpu_mem);
    }
}

static void test_agg_fast_path_same(void **state) {
    (void)state;
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g"};
    scopeprof_agg fast, ref;
    scopeprof_agg_init(&fast);
    scopeprof_agg_init(&ref);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(scopeprof_agg_row(&fast, names[i], names[i], NULL), (uint32_t)i);
        assert_int_equal(scopeprof_agg_row(&ref, names[i], names[i], NULL), (uint32_t)i);
    }
    enum { THREADS = 3, MAXD = 10 };
    uint64_t now[THREADS] = {1000, 2000, 3000}, open[THREADS][MAXD];
    uint32_t depth[THREADS] = {0, 0, 0};
    uint64_t x = 0x2545F4914F6CDD1Dull;
    uint64_t kinds[6] = {0};
    for (int step = 0; step < 400000; step++) {
        uint32_t t = (uint32_t)(mix(&x) % THREADS), row = (uint32_t)(mix(&x) % 7);
        uint64_t r = mix(&x) % (step < 300000 ? 98 : 100);
        int64_t gpu = mix(&x) % 3 == 0 ? (int64_t)(mix(&x) % 5000) - (mix(&x) % 4 == 0) : -1;
        now[t] += mix(&x) % 100;
        if (r < 45 && depth[t] < MAXD) { /* open */
            open[t][depth[t]++] = now[t];
            kinds[0]++;
        } else if (r < 88 && depth[t] > 0) { /* close, in order */
            uint64_t start = open[t][--depth[t]];
            assert_int_equal(scopeprof_agg_event_gpu(&fast, t, row, start, now[t], depth[t], gpu),
                             ref_agg_event_gpu(&ref, t, row, start, now[t], depth[t], gpu));
            kinds[1]++;
        } else if (r < 94) { /* memory, in the scopes open now */
            uint32_t dev = (uint32_t)(mix(&x) % 3);
            int64_t bytes = (int64_t)(mix(&x) % 100000) - 50000;
            if (step >= 300000 && mix(&x) % 50 == 0) bytes = mix(&x) % 2 ? INT64_MAX : INT64_MIN + 1;
            assert_int_equal(scopeprof_agg_mem(&fast, t, depth[t], dev, bytes),
                             scopeprof_agg_mem(&ref, t, depth[t], dev, bytes));
            kinds[2]++;
        } else if (r < 98) { /* mismatched: any depth, any interval, maybe back in time */
            uint32_t d = mix(&x) % 2 ? depth[t] : (uint32_t)(mix(&x) % (MAXD + 3));
            uint64_t start = now[t] - mix(&x) % 20000, end = start + mix(&x) % 25000 - 1000;
            assert_int_equal(scopeprof_agg_event_gpu(&fast, t, row, start, end, d, gpu),
                             ref_agg_event_gpu(&ref, t, row, start, end, d, gpu));
            kinds[3]++;
        } else if (step >= 300000) { /* last (they stop the sums): durations and GPU times near the limits */
            uint64_t start = mix(&x) % 2 ? 0 : now[t];
            uint64_t end = start + (mix(&x) % 2 ? UINT64_MAX / 2 : UINT64_MAX - start);
            int64_t big = mix(&x) % 2 ? INT64_MAX : gpu;
            assert_int_equal(scopeprof_agg_event_gpu(&fast, t, row, start, end, depth[t], big),
                             ref_agg_event_gpu(&ref, t, row, start, end, depth[t], big));
            kinds[4]++;
        }
        if (step % 10007 == 0) same_aggs(&fast, &ref);
    }
    same_aggs(&fast, &ref);
    for (int k = 0; k < 5; k++) assert_true(kinds[k] > 500); /* every kind was fed */
    assert_true(fast.has_gpu && fast.has_mem && fast.has_gpu_mem && fast.unordered);
    scopeprof_agg_free(&fast);
    scopeprof_agg_free(&ref);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_self_time),
        cmocka_unit_test(test_recursion),
        cmocka_unit_test(test_threads_interleaved),
        cmocka_unit_test(test_longjmp_children),
        cmocka_unit_test(test_non_contained_child),
        cmocka_unit_test(test_unordered_input),
        cmocka_unit_test(test_siblings_and_leaves),
        cmocka_unit_test(test_many_rows),
        cmocka_unit_test(test_sort_parse),
        cmocka_unit_test(test_sort_orders),
        cmocka_unit_test(test_sort_ties_many),
        cmocka_unit_test(test_format_time),
        cmocka_unit_test(test_format_mem),
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_event_records),
        cmocka_unit_test(test_table_golden),
        cmocka_unit_test(test_table_sort_by_count),
        cmocka_unit_test(test_table_row_limit),
        cmocka_unit_test(test_table_widths),
        cmocka_unit_test(test_table_nan),
        cmocka_unit_test(test_table_memory_columns),
        cmocka_unit_test(test_table_gpu_columns),
        cmocka_unit_test(test_table_empty),
        cmocka_unit_test(test_comp_arithmetic),
        cmocka_unit_test(test_comp_off_is_raw),
        cmocka_unit_test(test_comp_rounds_once),
        cmocka_unit_test(test_comp_row_never_negative),
        cmocka_unit_test(test_comp_empty_children),
        cmocka_unit_test(test_comp_clamped_marked),
        cmocka_unit_test(test_comp_short_class),
        cmocka_unit_test(test_comp_short_rows_named),
        cmocka_unit_test(test_comp_outside_children),
        cmocka_unit_test(test_comp_notes),
        cmocka_unit_test(test_agg_fast_path_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
