/* The exit summary's sums against the reporter's aggregation. The writer adds
 * each record it writes to its call site's sums (summary.h, writer.h:
 * scopeprof__sum_span for a chunk's records, scopeprof__sum_event for one
 * off the common path, scopeprof__sum_mem for an allocation); the reporter
 * feeds the same records, one by one, to scopeprof_agg_event_gpu and
 * scopeprof_agg_mem (table.h). The exit table and `scopeprof table` print
 * the same digits only if both make the same sums, whatever the records are.
 *
 * Random sequences of one thread's records, in close order as a thread
 * writes them, with everything that breaks the plain nesting: runs of one
 * leaf scope, allocations inside scopes, GPU scopes, a signal handler's
 * scope written before the scope whose close it interrupted (one level
 * below it, or at its level), ranges that began before the scope they
 * close in, scopes a longjmp left open, records at a depth that nothing
 * opened. After each sequence every site's sums must be equal: count,
 * total, self, nested, children, the short ones of the three counts, GPU
 * total and self, and the four memory sums; without compensation, with it
 * (self sums are then not clamped at 0), and with its short class too
 * (durations under 1 to 4 ticks: runs of one leaf then break where the
 * class changes).
 * Built with profiling on: the writer's sums exist only there. */
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

enum { SITES = 6, MAX_RECORDS = 4096, MAX_OPEN = 8 };

typedef enum { SCOPE, MEM, GPU } kind;
typedef struct {
    kind k;
    uint32_t site, depth, device;
    uint64_t start, end;
    int64_t gpu_ns, bytes;
} record;

static uint64_t seed = 88172645463325252ull;
static uint32_t below(uint32_t n) { /* xorshift64, 0 .. n-1 */
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (uint32_t)(seed % n);
}

static record recs[MAX_RECORDS];
static int nrecs;

static record *add(kind k, uint32_t site, uint32_t depth, uint64_t start, uint64_t end) {
    record *r = &recs[nrecs++];
    memset(r, 0, sizeof *r);
    r->k = k, r->site = site, r->depth = depth, r->start = start, r->end = end < start ? start : end;
    r->gpu_ns = -1;
    return r;
}

/* One sequence: a stack of open scopes, opened and closed at random, with
 * the oddities above mixed in. Sites 1..SITES-1 (0 is "<unknown>"). */
static void make_sequence(void) {
    uint64_t t = 1000, open_start[MAX_OPEN];
    uint32_t open_site[MAX_OPEN], open = 0;
    nrecs = 0;
    for (int step = 0, steps = 50 + (int)below(300); step < steps && nrecs < MAX_RECORDS - 16; step++) {
        uint32_t r = below(100), site = 1 + below(SITES - 1);
        t += below(5);
        if (r < 40 && open < MAX_OPEN) { /* open */
            open_site[open] = site, open_start[open++] = t;
        } else if (r < 80 && open > 0) { /* close, perhaps after a handler's scope written first */
            uint64_t end = t;
            open--;
            if (below(10) == 0 || below(15) == 0) { /* began after `end`: below it, or at its level */
                uint64_t hs = t + 1 + below(3), he = hs + below(10);
                add(SCOPE, site, open + (below(2) ? 1 : 0), hs, he);
                t = he;
            }
            record *c = add(SCOPE, open_site[open], open, open_start[open], end);
            if (below(8) == 0) c->k = GPU, c->gpu_ns = below(50);
        } else if (r < 88) { /* a run of one leaf, now and then one starting before the last ended */
            /* up to 12: past its second record the writer takes a run four
             * records at a time (writer.h, scopeprof__run_len) */
            for (uint32_t j = 0, n = 1 + below(12); j < n; j++) {
                uint64_t a = t + below(3), b = a + below(4);
                add(SCOPE, site, open, a, b);
                t = below(6) == 0 && b > 3 ? b - below(3) : b;
            }
        } else if (r < 93) { /* an allocation or free in the scopes open now */
            record *m = add(MEM, 0, open, 0, 0);
            m->device = below(2), m->bytes = (int64_t)below(100) - 30;
        } else if (r < 96) { /* any depth, any interval */
            uint64_t a = t - below(20);
            add(SCOPE, site, below(10), a, a + below(30));
        } else if (r < 98 && open > 0) { /* a range that began before the outermost scope */
            add(SCOPE, site, open, open_start[0] - below(5), t);
        } else if (open > 1) { /* a longjmp out of some scopes: never closed */
            open -= 1 + below(open - 1);
        }
    }
    while (open > 0) {
        open--, t += below(3);
        add(SCOPE, open_site[open], open, open_start[open], t);
    }
}

/* The sequence through the writer's sums (short records a chunk at a time,
 * as written; the rest one by one) and the reporter's aggregation; then
 * every site's sums compared. `below`: the short class (ticks; 0: none). */
static void check_sequence(int comp, uint64_t below) {
    scopeprof__state *g = (scopeprof__state *)calloc(1, sizeof *g);
    assert_non_null(g);
    scopeprof_agg a;
    scopeprof_agg_init(&a);
    scopeprof_agg_calibration(&a, comp ? 1000 : 0, comp ? 500 : 0, comp);
    scopeprof_agg_short_class(&a, 3000, 2000, below);
    assert_int_equal(a.comp_short_below, comp ? below : 0);
    uint32_t row[SITES];
    for (uint32_t s = 0; s < SITES; s++) {
        char name[8] = {'s', (char)('0' + s), 0};
        row[s] = scopeprof_agg_row(&a, name, name, NULL);
    }
    assert_int_equal(scopeprof__sum_room(g, 0, UINT32_MAX, 0), 0);
    static scopeprof__slot chunk[MAX_RECORDS];
    uint32_t n = 0;
    for (int i = 0; i <= nrecs; i++) {
        const record *r = i < nrecs ? &recs[i] : NULL;
        if (r && r->k == SCOPE) {
            chunk[n].start = r->start;
            chunk[n].dur = (uint32_t)(r->end - r->start);
            chunk[n++].key = scopeprof__key_pack(r->site, r->depth);
            assert_int_equal(scopeprof_agg_event(&a, 0, row[r->site], r->start, r->end, r->depth), 0);
            continue;
        }
        if (n) scopeprof__sum_span(g, &g->sum.thr[0], 0, chunk, n, comp, a.comp_short_below); /* the short records so far */
        n = 0;
        if (!r) break;
        if (r->k == MEM) {
            scopeprof__sum_mem(g, 0, r->depth, r->device, r->bytes);
            assert_int_equal(scopeprof_agg_mem(&a, 0, r->depth, r->device, r->bytes), 0);
        } else {
            scopeprof__sum_event(g, &g->sum.thr[0], r->site, r->start, r->end, r->depth, r->gpu_ns, comp,
                                 a.comp_short_below, NULL, 0);
            assert_int_equal(scopeprof_agg_event_gpu(&a, 0, row[r->site], r->start, r->end, r->depth, r->gpu_ns), 0);
        }
    }
    for (uint32_t s = 1; s < SITES; s++) {
        scopeprof__sitesum none;
        memset(&none, 0, sizeof none);
        const scopeprof__sitesum *x = s < g->sum.site_cap ? &g->sum.site[s] : &none;
        const scopeprof_row *y = &a.rows[row[s]];
        assert_int_equal(x->t.count, y->unit.count);
        assert_int_equal(x->t.total, y->unit.total);
        assert_int_equal(x->t.self, y->unit.self);
        assert_int_equal(x->t.nested, y->unit.nested);
        assert_int_equal(x->t.children, y->unit.children);
        assert_int_equal(x->t.count_short, y->unit.count_short);
        assert_int_equal(x->t.nested_short, y->unit.nested_short);
        assert_int_equal(x->t.children_short, y->unit.children_short);
        assert_int_equal(x->gpu_total_ns, y->gpu_total_ns);
        assert_int_equal(x->gpu_self_ns, y->gpu_self_ns);
        assert_int_equal(x->cpu_mem, y->cpu_mem);
        assert_int_equal(x->self_cpu_mem, y->self_cpu_mem);
        assert_int_equal(x->gpu_mem, y->gpu_mem);
        assert_int_equal(x->self_gpu_mem, y->self_gpu_mem);
    }
    scopeprof_agg_free(&a);
    scopeprof__sum_reset(g);
    free(g);
}

static void test_sums_match_reporter(void **state) {
    (void)state;
    uint64_t shorts = 0;
    for (int i = 0; i < 6000; i++) {
        make_sequence();
        check_sequence(i % 3 != 0, i % 3 == 2 ? 1 + (uint64_t)(i / 3) % 4 : 0);
        for (int k = 0; k < nrecs && i % 3 == 2; k++) shorts += recs[k].end - recs[k].start < 1 + (uint64_t)(i / 3) % 4;
    }
    assert_true(shorts > 10000); /* the short class was there to sum */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sums_match_reporter),
    };
    return cmocka_run_group_tests_name("sums" VARIANT, tests, NULL, NULL);
}
