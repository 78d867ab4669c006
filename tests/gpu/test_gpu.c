/* test_gpu.c -- GPU scopes (PROFILE_HIP) against the HIP test double.
 *
 * Most tests run a mode of gpu_prog (a profiled program linked with the
 * double) as a child process (tests/common/child.h), because the profile is
 * written at exit; they then read its trace file (tests/common/trace.h), the
 * double's exit log (counters and the log of every hipEventRecord), stdout
 * and the exit table on stderr.
 * The child is found next to this binary: CHILD_NAME (gpu_prog, or its
 * sanitizer build).
 *
 * This binary is itself built with PROFILE_ENABLE/PROFILE_HIP and the double,
 * for the in-process test of the clock arithmetic. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include "hip_double.h"
/* A hang guard, not a timing: under TSan on a loaded 2-CPU machine the
 * streaming child (100,000 GPU scopes) takes about 20 s, the default limit. */
#define CHILD_TIMEOUT_S 90
#include "child.h"
#include "trace.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHILD_NAME
#define CHILD_NAME "gpu_prog"
#endif

#define MS_NS 1000000ull

/* ---- Running a child and collecting what it left ------------------------ */
typedef struct result {
    child c;                 /* the run (tests/common/child.h) */
    int rc;                  /* c.status: exit code, or 128 + signal */
    char *out, *err;         /* c.out, c.err: stdout, stderr */
    tr_trace tr;
    int tr_ok;
    char *log;               /* the double's exit log */
} result;

/* Run `prog mode` (prog named in full: CHILD_NAME carries the variant) in a
 * fresh directory, with the given extra environment ("NAME=value", NULL
 * terminated), the double's log in that directory and no row limit. */
static result run(const char *prog, const char *mode, const char *const *env) {
    const char *envp[32];
    size_t k = 0;
    for (size_t i = 0; env && env[i] && k < 29; i++) envp[k++] = env[i];
    envp[k++] = "DOUBLE_LOG=double.log"; /* relative: the child runs in its directory */
    envp[k++] = "SCOPEPROF_ROW_LIMIT=0";
    envp[k] = NULL;
    const char *argv[] = {mode, NULL};
    result r;
    memset(&r, 0, sizeof r);
    child_run_ex(&r.c, prog, 1, argv, envp);
    r.rc = r.c.status;
    r.out = r.c.out;
    r.err = r.c.err;
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/double.log", r.c.dir);
    r.log = child_slurp(log);
    r.tr_ok = tr_read(r.c.trace, &r.tr);
    if (r.rc != 0 || !r.tr_ok) /* show what went wrong next to the failure */
        fprintf(stderr, "child %s %s: rc=%d trace_ok=%d (%s), files in %s\nstderr:\n%s\n", prog,
                mode, r.rc, r.tr_ok, r.tr.err, r.c.dir, r.err);
    return r;
}

static void result_free(result *r) {
    free(r->log);
    tr_free(&r->tr);
    child_free(&r->c); /* frees out and err */
    r->out = r->err = NULL;
}

/* A counter of the double's exit log ("C name value"); -1 if absent. */
static long log_counter(const result *r, const char *name) {
    char key[80];
    snprintf(key, sizeof key, "C %s ", name);
    for (const char *p = r->log; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
        if (strncmp(p, key, strlen(key)) == 0) return strtol(p + strlen(key), NULL, 10);
    return -1;
}

/* hipEventRecord calls, less the clock anchors' retries: the profiler
 * records an anchor again when its wait was slow (a preempted thread, as
 * under TSan on a loaded machine), so only the rest is an exact count. */
static long records_but_retries(const result *r) {
    return log_counter(r, "EventRecord") - log_counter(r, "anchor_retries");
}

/* A counter from a print_counters line of the child's stdout. */
static long out_counter(const result *r, const char *when, const char *name) {
    char key[64];
    snprintf(key, sizeof key, "%s: ", when);
    const char *line = strstr(r->out, key);
    if (!line) return -1;
    const char *eol = strchr(line, '\n');
    snprintf(key, sizeof key, " %s=", name);
    const char *p = strstr(line, key);
    if (!p || (eol && p > eol)) return -1;
    return strtol(p + strlen(key), NULL, 10);
}

/* Lines of stderr that are the profiler's own messages. */
static int warn_lines(const result *r, const char *must_contain) {
    int n = 0;
    for (const char *p = r->err; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (strncmp(p, "scopeprof:", 10) == 0) {
            n++;
            if (must_contain) {
                char line[1024];
                snprintf(line, sizeof line, "%.*s", (int)(len < 1023 ? len : 1023), p);
                if (!strstr(line, must_contain)) fprintf(stderr, "unexpected line: %s\n", line);
                assert_non_null(strstr(line, must_contain));
            }
        }
        p = eol ? eol + 1 : p + len;
    }
    return n;
}

/* Cell `col` (0 = name) of the exit table's row `name`, split on spaces:
 * with GPU columns, 1..5 are the CPU columns, 6 Self GPU, 7 Self GPU %,
 * 8 GPU total, 9 GPU time avg, 10 # of Calls. */
static const char *cell(const result *r, const char *name, int col) {
    static char buf[64];
    for (const char *p = r->err; p && *p;) {
        const char *eol = strchr(p, '\n');
        char line[1024];
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)(len < 1023 ? len : 1023), p);
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        if (tok && strcmp(tok, name) == 0) {
            for (int c = 0; c < col && tok; c++) tok = strtok_r(NULL, " ", &save);
            snprintf(buf, sizeof buf, "%s", tok ? tok : "");
            return buf;
        }
        p = eol ? eol + 1 : p + len;
    }
    return "";
}

static size_t count_flagged(const tr_trace *t) {
    size_t n = 0;
    for (size_t i = 0; i < t->nev; i++) n += (t->ev[i].depth & 0x80000000u) != 0;
    return n;
}

/* Every GPU-flagged event has its record and every record is used once. */
static void assert_paired(const tr_trace *t) {
    long *pair = calloc(t->nev ? t->nev : 1, sizeof *pair);
    assert_non_null(pair);
    assert_int_equal(tr_pair(t, pair), 0);
    assert_int_equal(count_flagged(t), t->ngpu);
    for (size_t i = 0; i < t->nev; i++)
        if (pair[i] >= 0) assert_int_equal(t->gpu[pair[i]].site, t->ev[i].site);
    free(pair);
}

static uint64_t dur(const tr_gpu *g) { return g->end - g->start; }

/* The double's record log (every hipEventRecord, in order) into v: at most
 * max records, fails the test if there were more. */
static int log_records(const result *r, double_record *v, int max) {
    int n = 0;
    for (const char *p = r->log; p && (p = strstr(p, "\nR ")) != NULL; p++) {
        long ev;
        int stream;
        unsigned long long s, c;
        assert_int_equal(sscanf(p + 1, "R %ld %d %llu %llu", &ev, &stream, &s, &c), 4);
        assert_true(n < max);
        v[n++] = (double_record){ev, stream, s, c};
    }
    return n;
}

/* ---- Tests ----------------------------------------------------------------- */

/* Nested GPU scopes: outer_gpu (5 ms) holds inner_gpu (3 ms) on one stream,
 * other_gpu (4 ms) runs on another; all inside the CPU scope "step", 3 times. */
void test_nesting(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "nest", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_true(r.tr.has_end);
    assert_int_equal(warn_lines(&r, NULL), 0);
    assert_int_equal(r.tr.nev, 15);
    assert_int_equal(r.tr.ngpu, 9);
    assert_paired(&r.tr);
    uint64_t outer_stream = 0, other_stream = 0;
    const tr_gpu *outer = NULL;
    for (size_t i = 0; i < r.tr.ngpu; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        const char *n = tr_name(&r.tr, g->site);
        assert_int_equal(g->status, 0);
        assert_int_equal(g->device, 1); /* hipGetDevice said 1 */
        assert_true(g->start >= g->launch);
        if (strcmp(n, "inner_gpu") == 0) {
            assert_int_equal(dur(g), 3 * MS_NS);
            /* Closed before its parent, so written before it. */
            assert_true(i + 1 < r.tr.ngpu);
            const tr_gpu *o = &r.tr.gpu[i + 1];
            assert_string_equal(tr_name(&r.tr, o->site), "outer_gpu");
            assert_true(g->start >= o->start && g->end <= o->end);
            assert_int_equal(g->stream, o->stream);
        } else if (strcmp(n, "outer_gpu") == 0) {
            assert_int_equal(dur(g), 5 * MS_NS);
            outer_stream = g->stream;
            outer = g;
        } else {
            assert_string_equal(n, "other_gpu");
            assert_int_equal(dur(g), 4 * MS_NS);
            other_stream = g->stream;
        }
    }
    assert_non_null(outer);
    assert_true(outer_stream != other_stream);
    /* Device 1 is named from hipGetDeviceProperties. */
    assert_true(r.tr.devices_seen & 2u);
    assert_string_equal(r.tr.devices[1], "Double GPU 1");
    /* The table: PyTorch's GPU columns and footer. */
    assert_non_null(strstr(r.err, "Self GPU %"));
    assert_non_null(strstr(r.err, "GPU total"));
    assert_non_null(strstr(r.err, "GPU time avg"));
    assert_non_null(strstr(r.err, "Self GPU time total: 27.000ms"));
    /* step: GPU total = the GPU scopes directly inside it (5 + 4 ms), no self. */
    assert_string_equal(cell(&r, "step", 6), "0.000us");
    assert_string_equal(cell(&r, "step", 8), "27.000ms");
    assert_string_equal(cell(&r, "step", 9), "9.000ms");
    /* outer_gpu: 5 ms, of which 3 ms are inner_gpu's. */
    assert_string_equal(cell(&r, "outer_gpu", 6), "6.000ms");
    assert_string_equal(cell(&r, "outer_gpu", 7), "22.22%");
    assert_string_equal(cell(&r, "outer_gpu", 8), "15.000ms");
    assert_string_equal(cell(&r, "outer_gpu", 9), "5.000ms");
    assert_string_equal(cell(&r, "inner_gpu", 6), "9.000ms");
    assert_string_equal(cell(&r, "inner_gpu", 7), "33.33%");
    assert_string_equal(cell(&r, "other_gpu", 6), "12.000ms");
    assert_string_equal(cell(&r, "other_gpu", 7), "44.44%");
    assert_string_equal(cell(&r, "cpu_only", 8), "0.000us");
    assert_string_equal(cell(&r, "cpu_only", 10), "3");
    assert_int_equal(log_counter(&r, "misuse"), 0);
    result_free(&r);
}

/* An interval of `want` ns: exactly, or, when a stream's work ran out
 * before its end event was recorded (a thread preempted longer than its
 * queued kernels, as under TSan on a loaded machine: the double counts
 * late_records), at least: the event then completes when it is recorded,
 * as on a device. */
static void assert_len(uint64_t d, uint64_t want, int exact) {
    if (exact) assert_int_equal(d, want);
    else assert_true(d >= want);
}

/* Four threads, five streams: each thread's records pair with its own
 * events, each stream runs its intervals in order. */
void test_threads_streams(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "threads", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, NULL), 0);
    assert_int_equal(r.tr.ngpu, 70);
    assert_paired(&r.tr);
    const int exact = log_counter(&r, "late_records") == 0;
    /* A worker's kernel length: its shortest interval (the only one when
     * exact); the main thread's are 2 and 7 ms, each the shortest too. */
    uint64_t seen_dur[4] = {0}, shortest[2] = {UINT64_MAX, UINT64_MAX};
    for (size_t i = 0; i < r.tr.ngpu; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        const char *nm = tr_name(&r.tr, g->site);
        uint64_t *m = strcmp(nm, "main_s4") == 0 ? &shortest[0] : strcmp(nm, "main_s5") == 0 ? &shortest[1]
                                                                                              : &seen_dur[g->thread];
        if (*m == 0 || dur(g) < *m) *m = dur(g);
    }
    assert_int_equal(shortest[0], 2 * MS_NS);
    assert_int_equal(shortest[1], 7 * MS_NS);
    for (uint32_t th = 0; th < 4; th++) {
        const tr_gpu *prev[2] = {NULL, NULL};
        uint64_t streams[2] = {0, 0};
        int n = 0;
        for (size_t i = 0; i < r.tr.ngpu; i++) {
            const tr_gpu *g = &r.tr.gpu[i];
            if (g->thread != th) continue;
            n++;
            assert_int_equal(g->status, 0);
            int k = streams[0] == 0 || streams[0] == g->stream ? 0 : 1;
            if (streams[k] == 0) streams[k] = g->stream;
            assert_int_equal(streams[k], g->stream); /* at most two streams */
            /* One stream runs its work in order (1 us for float rounding). */
            if (prev[k]) assert_true(g->start + 1000 >= prev[k]->end);
            prev[k] = g;
            const char *nm = tr_name(&r.tr, g->site);
            if (strcmp(nm, "main_s4") == 0) assert_len(dur(g), 2 * MS_NS, exact);
            else if (strcmp(nm, "main_s5") == 0) assert_len(dur(g), 7 * MS_NS, exact);
            else {
                assert_string_equal(nm, "worker_gpu");
                assert_len(dur(g), seen_dur[th], exact); /* one length per worker */
            }
        }
        /* The main thread: 10 scopes on 2 streams; a worker: 20 on 1. */
        if (n == 10) assert_true(streams[1] != 0);
        else assert_int_equal(n, 20), assert_int_equal(streams[1], 0);
    }
    /* Workers ran 1, 2 and 3 ms kernels: each length on exactly one thread. */
    for (uint64_t ms = 1; ms <= 3; ms++) {
        int owners = 0;
        for (int th = 0; th < 4; th++) owners += seen_dur[th] == ms * MS_NS;
        assert_int_equal(owners, 1);
    }
    assert_string_equal(cell(&r, "worker_gpu", 10), "60");
    if (exact) { /* the table's sums of the intervals */
        assert_string_equal(cell(&r, "worker_gpu", 8), "120.000ms");
        assert_string_equal(cell(&r, "main_s4", 8), "10.000ms");
        assert_string_equal(cell(&r, "main_s5", 8), "35.000ms");
        assert_non_null(strstr(r.err, "Self GPU time total: 165.000ms"));
    }
    assert_int_equal(log_counter(&r, "misuse"), 0);
    result_free(&r);
}

/* The clock anchor, in-process: an anchor event at a known tick, scope
 * events at known simulated offsets from it; the resolved record must hold
 * the anchor's tick and the elapsed times from it (the writer adds the
 * tick's time, converted as the CPU scopes' ticks are: test_clock_alignment). */
void test_anchor_arithmetic(void **state) {
    (void)state;
    assert_true(scopeprof__gpu_start());
    scopeprof__gthread gt;
    memset(&gt, 0, sizeof gt);
    pthread_mutex_init(&gt.lock, NULL);
    hipStream_t s = double_stream(7);
    const uint64_t known = 1000000000000ull; /* the anchor's tick */
    /* offset of the scope's start from the anchor, duration (microseconds):
     * whole milliseconds are exact in float; 123.457 ms is not, and shows
     * the precision of float milliseconds (well under 1 us per second). */
    const uint64_t cases[][2] = {{250000, 4000}, {0, 1000}, {123457, 17000}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        scopeprof__ganchor *a = calloc(1, sizeof *a);
        assert_non_null(a);
        assert_int_equal(hipEventCreateWithFlags(&a->ev, 0), hipSuccess);
        double_idle(s);
        assert_int_equal(hipEventRecord(a->ev, s), hipSuccess);
        a->tick = known + c;
        a->refs = 2; /* ours, and the pending scope's (released by resolve) */
        scopeprof__gpending p;
        memset(&p, 0, sizeof p);
        assert_int_equal(hipEventCreateWithFlags(&p.start, 0), hipSuccess);
        assert_int_equal(hipEventCreateWithFlags(&p.end, 0), hipSuccess);
        double_enqueue_us(s, cases[c][0]);
        assert_int_equal(hipEventRecord(p.start, s), hipSuccess);
        double_enqueue_us(s, cases[c][1]);
        assert_int_equal(hipEventRecord(p.end, s), hipSuccess);
        p.anchor = a;
        p.base = p.start;
        p.stream = 7;
        p.site = 5;
        p.device = 0;
        assert_int_equal(scopeprof__gpu_resolve(&gt, &p, 1), 1);
        assert_int_equal(p.rec.status, 0);
        assert_int_equal(p.anchor_tick, known + c);
        int64_t want = (int64_t)(cases[c][0] * 1000u);
        int64_t err = (int64_t)p.rec.start_ns - want;
        assert_true(err >= -20 && err <= 20); /* float ms: 7 ns at 123 ms */
        if (cases[c][0] % 1000 == 0) assert_int_equal(p.rec.start_ns, (uint64_t)want);
        int64_t derr = (int64_t)(p.rec.end_ns - p.rec.start_ns) - (int64_t)(cases[c][1] * 1000u);
        assert_true(derr >= -20 && derr <= 0); /* truncated, never longer */
        assert_int_equal(p.rec.stream, 7);
        assert_int_equal(p.rec.site, 5);
        assert_int_equal(a->refs, 1);
        assert_int_equal(gt.npools, 1);
        assert_int_equal(gt.pools[0].n, 2 * (c + 1)); /* both events back in device 0's pool */
        scopeprof__gpu_unref(a); /* destroys the anchor's event */
    }
    for (uint32_t i = 0; i < gt.pools[0].n; i++) hipEventDestroy(gt.pools[0].ev[i]);
    free(gt.pools[0].ev);
    free(gt.pools);
    pthread_mutex_destroy(&gt.lock);
}

/* The same arithmetic end to end: GPU starts on the CPU timeline, after
 * their launch. Stream 1 starts 50 ms (simulated) after a launch. */
void test_clock_alignment(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "align", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(r.tr.ngpu, 10);
    assert_paired(&r.tr);
    /* The double's record log: the anchor (stream -1) and 2 per scope. */
    double_record log[64];
    int nlog = log_records(&r, log, 64);
    uint64_t sim[64], cpu[64], anchor_sim = 0, anchor_cpu = 0;
    int n = 0, anchors = 0;
    long anchor_ev = -1;
    for (int i = 0; i < nlog; i++) {
        if (log[i].stream < 0) { /* the last record of an anchor event counts */
            anchors += log[i].event != anchor_ev;
            anchor_ev = log[i].event;
            anchor_sim = log[i].sim_ns;
            anchor_cpu = log[i].cpu_ns;
        } else {
            sim[n] = log[i].sim_ns;
            cpu[n] = log[i].cpu_ns;
            n++;
        }
    }
    assert_int_equal(n, 20);
    assert_int_equal(anchors, 1); /* renewed only after a second (retries re-record it) */
    assert_int_equal(anchor_sim, anchor_cpu); /* idle private stream */
    /* The anchor was recorded inside the first scope's open. */
    assert_true(anchor_cpu + 2000 >= r.tr.gpu[0].launch);
    assert_true(anchor_cpu <= cpu[0]);
    /* The profiler places the anchor at the CPU time after its wait: never
     * early, late by at most the time from that scope's launch to its start
     * event's record (measured, not assumed). 2 us of slack for the TSC
     * conversion and float milliseconds. */
    uint64_t w = cpu[0] - r.tr.gpu[0].launch + 2000;
    for (int i = 0; i < 10; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        assert_int_equal(g->status, 0);
        assert_int_equal(dur(g), (uint64_t)(i + 1) * MS_NS);
        int64_t err = (int64_t)g->start - (int64_t)sim[2 * i];
        assert_true(err <= (int64_t)w && err >= -2000);
        /* The simulated start is at least 50 ms after the record call, which
         * follows the launch; so the placed start is 50 ms - w after it. */
        assert_true(g->start + w >= g->launch + 50 * MS_NS);
        assert_true(g->start >= g->launch);
    }
    result_free(&r);
}

/* A wait for the clock anchor that took 2 ms (twice) is retried: the same
 * anchor event is recorded again, and the last, quick, record places
 * it, so the GPU start lands within microseconds of its simulated time
 * (a 2 ms wait kept would have placed it up to 2 ms late). */
void test_anchor_retry(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "anchor_retry", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(r.tr.ngpu, 1);
    long anchor_ev = -1;
    int anchor_records = 0;
    uint64_t sim_start = 0, cpu_start = 0;
    double_record log[16];
    int nlog = log_records(&r, log, 16);
    for (int i = 0; i < nlog; i++) {
        if (log[i].stream < 0) {
            if (anchor_ev >= 0) assert_int_equal(log[i].event, anchor_ev); /* one event */
            anchor_ev = log[i].event;
            anchor_records++;
        } else if (!sim_start) {
            sim_start = log[i].sim_ns, cpu_start = log[i].cpu_ns;
        }
    }
    /* Two slow tries, then one quick one (a fourth if the machine preempted
     * the third too). */
    assert_true(anchor_records == 3 || anchor_records == 4);
    assert_int_equal(log_counter(&r, "anchor_retries"), anchor_records - 1); /* one event */
    const tr_gpu *g = &r.tr.gpu[0];
    assert_int_equal(g->status, 0);
    assert_int_equal(dur(g), MS_NS);
    assert_true(g->start >= g->launch);
    int64_t err = (int64_t)g->start - (int64_t)sim_start;
    /* Late by at most the quick wait and the start's record call (bounded by
     * the CPU time of that call); 2 us of slack for the TSC conversion. */
    assert_true(err >= -2000);
    assert_true(err <= (int64_t)(cpu_start - g->launch) + 2000);
    assert_true(err < 1000000); /* far from the 2 ms of a slow wait */
    result_free(&r);
}

/* After warm-up, 1000 more scopes take all their events from the pool. */
void test_pool_reuse(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "pool", NULL);
    assert_int_equal(r.rc, 0);
    long warm_user = out_counter(&r, "warm", "user_events");
    long warm_creates = out_counter(&r, "warm", "creates");
    long warm_anchors = out_counter(&r, "warm", "anchors");
    assert_true(warm_user > 0);
    /* Events come back every 64 closes: the pool never needs more than two
     * per scope of one poll interval (+ the scope open at a poll). */
    assert_true(warm_user <= 2 * 64 + 2);
    assert_int_equal(out_counter(&r, "steady", "user_events"), warm_user);
    /* hipEventCreateWithFlags only for clock anchors (renewed each second). */
    assert_int_equal(out_counter(&r, "steady", "creates") - warm_creates,
                     out_counter(&r, "steady", "anchors") - warm_anchors);
    assert_true(out_counter(&r, "steady", "queries") > out_counter(&r, "warm", "queries"));
    assert_string_equal(cell(&r, "steady", 10), "1000");
    assert_string_equal(cell(&r, "steady", 8), "1.000s");
    assert_int_equal(log_counter(&r, "user_syncs_in_scope"), 0);
    result_free(&r);
}

/* Lazy resolution across a flush: the GPU lags; nothing waits until the
 * flush, which waits for exactly the scopes it writes, outside any scope. */
void test_lazy_flush(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "lazy", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(out_counter(&r, "before_flush", "user_syncs"), 0);
    assert_true(out_counter(&r, "before_flush", "queries") > 0); /* polled, not ready */
    assert_true(out_counter(&r, "before_flush", "user_events") >= 400); /* nothing returned */
    assert_int_equal(out_counter(&r, "after_flush", "user_syncs"), 200);
    /* After the GPU caught up, the poll resolved lazy_b without waiting. */
    assert_int_equal(out_counter(&r, "end", "user_syncs"), 200);
    /* At exit: the 64 lazy_c scopes, recorded after the catch-up. */
    assert_int_equal(log_counter(&r, "user_syncs"), 200 + 64);
    assert_int_equal(log_counter(&r, "user_syncs_in_scope"), 0);
    assert_true(r.tr.events_chunks >= 2 && r.tr.gpu_chunks >= 2);
    assert_int_equal(r.tr.ngpu, 364);
    assert_paired(&r.tr);
    for (size_t i = 0; i < r.tr.ngpu; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        const char *nm = tr_name(&r.tr, g->site);
        uint64_t want = strcmp(nm, "lazy_a") == 0 ? 1 : strcmp(nm, "lazy_b") == 0 ? 2 : 3;
        assert_int_equal(g->status, 0);
        assert_int_equal(dur(g), want * MS_NS);
        if (i < 200) assert_string_equal(nm, "lazy_a"); /* the flush's chunk */
    }
    assert_int_equal(log_counter(&r, "misuse"), 0);
    result_free(&r);
}

/* Streaming past SCOPEPROF_BUFFER_MB with the GPU lagging. At top level (no
 * scope open) the buffers written during the run wait for their GPU scopes.
 * Inside a scope they never wait: unfinished buffers stay queued until a
 * write outside any scope or the exit. Either way every event is kept and
 * paired, and no wait ever happens with a scope open. */
void check_stream(const char *mode, size_t nevents, int waits_while_running) {
    static const char *const env[] = {"SCOPEPROF_BUFFER_MB=1", NULL};
    result r = run(CHILD_NAME, mode, env);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    /* Top level: the writes during the run waited. Nested: a write may still
     * wait where a chunk fills at a "step" close (no scope open then), so
     * the check is the double's count of waits made inside a scope, below. */
    if (waits_while_running) assert_true(out_counter(&r, "end", "user_syncs") > 0);
    assert_true(r.tr.events_chunks > 2);
    assert_int_equal(r.tr.nev, nevents);
    assert_int_equal(r.tr.ngpu, 100000);
    assert_paired(&r.tr);
    for (size_t i = 0; i < r.tr.ngpu; i++) {
        assert_int_equal(r.tr.gpu[i].status, 0);
        assert_int_equal(dur(&r.tr.gpu[i]), MS_NS);
    }
    assert_int_equal(log_counter(&r, "misuse"), 0);
    assert_int_equal(log_counter(&r, "user_syncs_in_scope"), 0);
    result_free(&r);
}

void test_stream_budget(void **state) {
    (void)state;
    check_stream("stream", 100000, 1);
}

/* Regression: with the GPU scopes inside a CPU scope, the budget write
 * happened in a scope's close with "step" open and waited for the GPU there. */
void test_stream_budget_nested(void **state) {
    (void)state;
    check_stream("stream_nested", 110000, 0);
}

/* Regression: EVENTS chunks must have type 3 (they were once written as 4096). */
void test_events_chunk_type(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "nest", NULL);
    assert_true(r.tr_ok);
    assert_true(r.tr.events_chunks > 0);
    assert_int_equal(r.tr.events_chunks_4096, 0);
    result_free(&r);
}

/* hipGetDeviceCount fails: one line, then CPU-only scopes, no GPU columns. */
void test_err_device_count(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "err_count", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, "no HIP device"), 1);
    assert_null(strstr(r.err, "Self GPU")); /* no GPU columns, no GPU footer */
    assert_non_null(strstr(r.err, "Self CPU time total:"));
    assert_int_equal(r.tr.ngpu, 0);
    assert_int_equal(r.tr.gpu_chunks, 0);
    assert_int_equal(count_flagged(&r.tr), 0);
    assert_int_equal(tr_count_all(&r.tr, "k"), 10);
    assert_int_equal(tr_count_all(&r.tr, "inner_cpu"), 10);
    assert_string_equal(cell(&r, "k", 6), "10"); /* # of Calls, 7th column */
    assert_int_equal(log_counter(&r, "EventCreateWithFlags"), 0);
    assert_int_equal(log_counter(&r, "EventRecord"), 0);
    result_free(&r);
}

/* hipEventRecord fails at scope 2's close: scopes 0-1 keep their GPU time,
 * 2-9 are CPU-only, no CPU event is lost, the runtime is not called again. */
void test_err_event_record(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "err_record", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, "EventRecord"), 1);
    assert_int_equal(tr_count_all(&r.tr, "k"), 10);
    assert_int_equal(tr_count_all(&r.tr, "inner_cpu"), 10);
    assert_int_equal(r.tr.ngpu, 2);
    assert_paired(&r.tr);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(r.tr.gpu[i].status, 0);
        assert_int_equal(dur(&r.tr.gpu[i]), MS_NS);
    }
    assert_string_equal(cell(&r, "k", 8), "2.000ms");
    assert_string_equal(cell(&r, "k", 10), "10");
    assert_string_equal(cell(&r, "inner_cpu", 10), "10");
    assert_int_equal(records_but_retries(&r), 7);
    assert_int_equal(log_counter(&r, "misuse"), 0);
    result_free(&r);
}

/* hipGetDevice fails at scope 2's open. */
void test_err_get_device(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "err_getdevice", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, "StreamGetDevice"), 1);
    assert_int_equal(tr_count_all(&r.tr, "k"), 10);
    assert_int_equal(r.tr.ngpu, 2);
    assert_paired(&r.tr);
    assert_string_equal(cell(&r, "k", 8), "2.000ms");
    assert_string_equal(cell(&r, "k", 10), "10");
    assert_int_equal(log_counter(&r, "StreamGetDevice"), 3);
    assert_int_equal(records_but_retries(&r), 1 + 2 * 2);
    result_free(&r);
}

/* hipEventElapsedTime fails for scope el1: a status-1 record, counted as a
 * CPU scope; the others keep their times. */
void test_err_elapsed(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "err_elapsed", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, "timing a GPU scope"), 1);
    assert_int_equal(r.tr.ngpu, 4);
    assert_paired(&r.tr);
    for (size_t i = 0; i < 4; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        if (strcmp(tr_name(&r.tr, g->site), "el1") == 0) {
            assert_int_equal(g->status, 1);
        } else {
            assert_int_equal(g->status, 0);
            assert_int_equal(dur(g), (uint64_t)(i + 1) * MS_NS);
        }
    }
    assert_string_equal(cell(&r, "el1", 8), "0.000us");
    assert_string_equal(cell(&r, "el3", 8), "4.000ms");
    assert_non_null(strstr(r.err, "Self GPU time total: 8.000ms"));
    assert_int_equal(log_counter(&r, "misuse"), 0);
    result_free(&r);
}

/* hipEventDestroy failing (the renewed clock anchor's old event): one line,
 * GPU timing goes on, both scopes keep their GPU times. */
static void test_err_destroy(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "err_destroy", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, "EventDestroy"), 1); /* the only scopeprof: line */
    assert_int_equal(r.tr.ngpu, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(r.tr.gpu[i].status, 0);
        assert_int_equal(dur(&r.tr.gpu[i]), 2 * MS_NS);
    }
    assert_non_null(strstr(r.err, "Self GPU time total: 4.000ms"));
    result_free(&r);
}

/* The table line of row `name`, or "" (for cells with spaces: "1.00 Mb"). */
static const char *row_line(const result *r, const char *name) {
    static char buf[1024];
    size_t nl = strlen(name);
    for (const char *p = r->err; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *q = p;
        while (*q == ' ') q++;
        if ((size_t)(q - p) < len && strncmp(q, name, nl) == 0 && q[nl] == ' ') {
            snprintf(buf, sizeof buf, "%.*s", (int)(len < 1023 ? len : 1023), p);
            return buf;
        }
        p = eol ? eol + 1 : p + len;
    }
    return "";
}

/* SCOPEPROF_WRAP_GPU_MALLOC: hipMalloc/hipFree give GPU Mem columns and the
 * peak per device; a block freed while another device is current is found
 * on the device it was allocated on (not an unknown free); a failed hipMalloc
 * records nothing. */
static void test_gpu_malloc_wrappers(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "malloc", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_non_null(strstr(r.err, "GPU Mem  Self GPU Mem"));
    assert_non_null(strstr(row_line(&r, "alloc_dev0"), "1.00 Mb       1.00 Mb"));
    assert_non_null(strstr(row_line(&r, "alloc_dev1"), "512.00 Kb     512.00 Kb"));
    assert_non_null(strstr(row_line(&r, "free_cross"), "-1.00 Mb      -1.00 Mb"));
    assert_non_null(strstr(row_line(&r, "alloc_fails"), " 0 b           0 b"));
    assert_non_null(strstr(r.err, "Peak GPU 0 memory: 1.00 Mb\n"));
    assert_non_null(strstr(r.err, "Peak GPU 1 memory: 512.00 Kb\n"));
    assert_null(strstr(r.err, "not recorded by PROFILE_ALLOC"));
    result_free(&r);
}

/* Issue 13.1: scopes still running at exit keep their GPU times. The
 * double's runtime tears down in its atexit handler (as nvcc's static CUDA
 * runtime does), before the ELF destructor that writes the trace: the
 * profiler must have waited for them in an atexit handler of its own. */
static void test_exit_pending(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "exit_pending", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, NULL), 0);
    assert_int_equal(r.tr.ngpu, 10);
    assert_paired(&r.tr);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(r.tr.gpu[i].status, 0);
        assert_int_equal(dur(&r.tr.gpu[i]), 2 * MS_NS);
    }
    assert_int_equal(log_counter(&r, "user_syncs"), 10);
    assert_int_equal(log_counter(&r, "unloaded_calls"), 0); /* nothing after the teardown */
    result_free(&r);
}

/* Issue 13.2: one thread, three devices (0, 1 and 17), the current device
 * staying 0: every scope timed on its stream's device. */
static void test_multi_gpu(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "multi", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, NULL), 0);
    assert_int_equal(r.tr.ngpu, 300);
    assert_paired(&r.tr);
    for (size_t i = 0; i < r.tr.ngpu; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        const char *nm = tr_name(&r.tr, g->site);
        uint32_t want = strcmp(nm, "dev0") == 0 ? 0 : strcmp(nm, "dev1") == 0 ? 1 : 17;
        assert_int_equal(g->status, 0);
        assert_int_equal(g->device, want);
        assert_int_equal(dur(g), (want == 0 ? 1 : want == 1 ? 2 : 3) * MS_NS);
        assert_true(g->start >= g->launch);
    }
    assert_string_equal(r.tr.devices[0], "Double GPU 0");
    assert_string_equal(r.tr.devices[1], "Double GPU 1");
    assert_int_equal(log_counter(&r, "wrong_device"), 0);
    assert_int_equal(log_counter(&r, "misuse"), 0);
    assert_non_null(strstr(r.err, "Self GPU time total: 600.000ms"));
    result_free(&r);
}

/* Issue 13.3: a global-mode capture on stream 1. Scopes on the capturing
 * stream record their CPU side with a "captured" GPU record (status 2);
 * scopes on stream 2 meanwhile keep their times; nothing the profiler does
 * breaks the capture. */
static void test_capture(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "capture", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(warn_lines(&r, NULL), 0);
    assert_non_null(strstr(r.out, "end_capture=0 graph=1"));
    assert_int_equal(r.tr.ngpu, 1 + 1 + 70 + 5 + 5 + 1);
    assert_paired(&r.tr);
    int captured = 0;
    for (size_t i = 0; i < r.tr.ngpu; i++) {
        const tr_gpu *g = &r.tr.gpu[i];
        const char *nm = tr_name(&r.tr, g->site);
        if (strcmp(nm, "captured") == 0 || strcmp(nm, "across") == 0) {
            assert_int_equal(g->status, 2);
            captured++;
            continue;
        }
        assert_int_equal(g->status, 0);
        uint64_t want = strcmp(nm, "before") == 0 ? 1 : strcmp(nm, "beside") == 0 ? 2
                        : strcmp(nm, "beside_nested") == 0 ? 3 : 4;
        if (want == 4) assert_string_equal(nm, "after");
        assert_int_equal(dur(g), want * MS_NS);
    }
    assert_int_equal(captured, 6);
    assert_int_equal(log_counter(&r, "capture_violations"), 0);
    assert_int_equal(log_counter(&r, "misuse"), 0);
    /* Captured scopes count as CPU scopes in the table: no self GPU time,
     * the GPU total of the timed scopes inside them. */
    assert_string_equal(cell(&r, "captured", 6), "0.000us");
    assert_string_equal(cell(&r, "captured", 8), "15.000ms");
    assert_string_equal(cell(&r, "beside", 8), "140.000ms");
    result_free(&r);
}

/* Issue 13.5: 50 ms of work queued on the null stream before the clock
 * anchor is made. On a blocking stream the anchor would complete after that
 * work and every GPU time would land 50 ms early, before its launch. Each
 * interval is 1 ms, or longer where the thread was away past its kernel's
 * end (late_records: assert_len; once 1.857 ms in a CI run beside a busy
 * loop). */
static void test_anchor_stream_non_blocking(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "null_busy", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(r.tr.ngpu, 3);
    const int exact = log_counter(&r, "late_records") == 0;
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(r.tr.gpu[i].status, 0);
        assert_true(r.tr.gpu[i].start >= r.tr.gpu[i].launch);
        assert_len(dur(&r.tr.gpu[i]), MS_NS, exact);
    }
    result_free(&r);
}

/* Issue 13.7: a stuck stream does not stop the poll from returning another
 * stream's events to the pool (creates stay at the warm-up's). */
static void test_poll_per_stream(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "poll_streams", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    long creates = out_counter(&r, "end", "creates");
    assert_true(creates > 0);
    assert_true(creates <= 2 * 64 + 8); /* 2000 if the poll stopped at "stuck" */
    assert_int_equal(r.tr.ngpu, 1001);
    for (size_t i = 0; i < r.tr.ngpu; i++) assert_int_equal(r.tr.gpu[i].status, 0);
    assert_int_equal(log_counter(&r, "misuse"), 0);
    result_free(&r);
}

/* Issue 13.7: float milliseconds must not put a nested end past its
 * parent's (inner_r ends with outer_r, 200 times, odd lengths). */
static void test_nested_rounding(void **state) {
    (void)state;
    result r = run(CHILD_NAME, "nest_round", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_int_equal(r.tr.ngpu, 400);
    for (size_t i = 0; i + 1 < r.tr.ngpu; i += 2) {
        const tr_gpu *in = &r.tr.gpu[i], *out = &r.tr.gpu[i + 1];
        assert_string_equal(tr_name(&r.tr, in->site), "inner_r");
        assert_string_equal(tr_name(&r.tr, out->site), "outer_r");
        assert_true(in->start >= out->start);
        assert_true(in->end <= out->end);
        uint64_t want = (2311 + i / 2) * 1000u;
        assert_true(dur(in) + 10 >= want && dur(in) <= want + 10);
        assert_true(dur(out) + 10 >= want + 1237000u && dur(out) <= want + 1237000u + 10);
    }
    result_free(&r);
}

/* The real libamdhip64 on a machine without a GPU: linked (-lamdhip64) and
 * found with dlopen (not linked at all). One clear line, the CPU table. */
void check_real(const char *prog) {
    result r = run(prog, "real", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.tr_ok);
    assert_true(r.tr.has_end);
    assert_int_equal(warn_lines(&r, "no HIP device"), 1);
    assert_null(strstr(r.err, "GPU total"));
    assert_string_equal(cell(&r, "real_gpu", 6), "5");
    assert_string_equal(cell(&r, "cpu_work", 6), "5");
    assert_int_equal(r.tr.ngpu, 0);
    assert_int_equal(count_flagged(&r.tr), 0);
    assert_int_equal(r.tr.nev, 10);
    result_free(&r);
}

void test_real_hip_linked(void **state) {
    (void)state;
    check_real("real_hip");
}

void test_real_hip_dlopen(void **state) {
    (void)state;
    check_real("real_hip_dlopen");
}

int main(void) {
    /* This process profiles nothing of interest: no file, no table. (The
     * children do not inherit these: child.h drops SCOPEPROF_*.) */
    setenv("SCOPEPROF_OUTPUT", "none", 1);
    setenv("SCOPEPROF_SUMMARY", "0", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_threads_streams),
        cmocka_unit_test(test_anchor_arithmetic),
        cmocka_unit_test(test_clock_alignment),
        cmocka_unit_test(test_anchor_retry),
        cmocka_unit_test(test_pool_reuse),
        cmocka_unit_test(test_lazy_flush),
        cmocka_unit_test(test_stream_budget),
        cmocka_unit_test(test_stream_budget_nested),
        cmocka_unit_test(test_events_chunk_type),
        cmocka_unit_test(test_err_device_count),
        cmocka_unit_test(test_err_event_record),
        cmocka_unit_test(test_err_get_device),
        cmocka_unit_test(test_err_elapsed),
        cmocka_unit_test(test_gpu_malloc_wrappers),
        cmocka_unit_test(test_err_destroy),
        cmocka_unit_test(test_exit_pending),
        cmocka_unit_test(test_multi_gpu),
        cmocka_unit_test(test_capture),
        cmocka_unit_test(test_anchor_stream_non_blocking),
        cmocka_unit_test(test_poll_per_stream),
        cmocka_unit_test(test_nested_rounding),
#ifdef REAL_HIP_TESTS
        cmocka_unit_test(test_real_hip_linked),
        cmocka_unit_test(test_real_hip_dlopen),
#endif
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    /* A passing test removes its child's directory; a failing one stops
     * before that and leaves it. */
    if (rc != 0) fprintf(stderr, "the failed tests' children left their files in /tmp/scopeprof-test-*\n");
    return rc;
}
