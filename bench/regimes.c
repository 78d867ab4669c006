/* regimes.c -- what a PROFILE_SCOPE costs in each regime a real run meets
 * (issue 15), against the floor measured in the same process:
 *
 *   fresh    N scopes (default 3.5M) that fit in the default 64 MiB budget,
 *            every event in memory never touched before (a new process)
 *   past     N scopes (default 20M): past the budget, chunks are written
 *   threads  two threads at once, N scopes each (default 10M)
 *   stream   N scopes (default 100M) streamed to the file
 *
 * Usage: regimes MODE [N]. Settings are scopeprof's defaults except what the
 * environment says (make bench sets SCOPEPROF_OUTPUT and SCOPEPROF_SUMMARY=0;
 * SCOPEPROF_WRITER=0 gives the recording-thread writes of before the writer).
 *
 * The floor: two rdtsc and a 16-byte store into a thread-local ring of 4096
 * slots, in the same loop shape, run first in the same process (so its
 * memory is warm and the profiled run's is not). Both are timed in batches
 * of 1024 scopes; printed: ns per scope, the ratio, the worst batch (what a
 * recording thread waited at most), peak RSS, and minor page faults per
 * million scopes taken on the recording thread(s) and in the whole process
 * (the writer's pre-touching included). A benchmark: it never fails on a time.
 */
#define _GNU_SOURCE
#include "bench.h"
#ifdef BENCH_LTTNG
/* The peer (bench/lttng_bench.sh): LTTng-UST's begin/end tracepoints in the
 * same loop, from bench/lttng_tp.c; the session is made outside. */
void lttng_scope_loop(uint64_t n);
#else
#include "scopeprof.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <x86intrin.h>

#define BATCH 1024u

typedef struct slot16 {
    uint64_t start;
    uint32_t dur, key;
} slot16;
static __thread slot16 ring[4096];

typedef struct result {
    uint64_t n, ns, worst_ns;
    long minflt; /* this thread's */
} result;

__attribute__((noinline)) static void floor_batch(uint64_t base, uint32_t n) {
    static __thread uint32_t at;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t s = __rdtsc();
        BENCH_BODY(base + i);
        uint64_t e = __rdtsc();
        slot16 *p = &ring[at++ & 4095u];
        p->start = s;
        p->dur = (uint32_t)(e - s);
        p->key = 1u | (3u << 19);
    }
    bench_escape(ring);
}

#ifdef BENCH_LTTNG
__attribute__((noinline)) static void scope_batch(uint64_t base, uint32_t n) {
    (void)base;
    lttng_scope_loop(n);
}
#else
__attribute__((noinline)) static void scope_batch(uint64_t base, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        PROFILE_SCOPE("regime_scope");
        BENCH_BODY(base + i);
    }
}
#endif

static long thread_minflt(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt;
}

static void run(void (*batch)(uint64_t, uint32_t), uint64_t n, result *r) {
    long f0 = thread_minflt();
    uint64_t t0 = bench_now_ns(), worst = 0;
    for (uint64_t i = 0; i < n; i += BATCH) {
        uint32_t k = n - i < BATCH ? (uint32_t)(n - i) : BATCH;
        uint64_t b0 = bench_now_ns();
        batch(i, k);
        uint64_t d = bench_now_ns() - b0;
        if (d > worst) worst = d;
    }
    r->ns = bench_now_ns() - t0;
    r->n = n;
    r->worst_ns = worst;
    r->minflt = thread_minflt() - f0;
}

typedef struct job {
    void (*batch)(uint64_t, uint32_t);
    uint64_t n;
    result r;
} job;
static void *job_main(void *p) {
    job *j = (job *)p;
    run(j->batch, j->n, &j->r);
    return NULL;
}

/* `threads` threads at once (1: the calling thread); per-thread results
 * combined: the slowest thread's ns per scope, the worst batch of any. */
static void measure(void (*batch)(uint64_t, uint32_t), uint64_t n, int threads, result *out) {
    job j[2] = {{batch, n, {0, 0, 0, 0}}, {batch, n, {0, 0, 0, 0}}};
    if (threads == 1) {
        job_main(&j[0]);
    } else {
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, job_main, &j[i]);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    }
    *out = j[0].r;
    for (int i = 1; i < threads; i++) {
        if (j[i].r.ns > out->ns) out->ns = j[i].r.ns;
        if (j[i].r.worst_ns > out->worst_ns) out->worst_ns = j[i].r.worst_ns;
        out->minflt += j[i].r.minflt;
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "fresh";
    uint64_t n = 0;
    int threads = 1;
    if (strcmp(mode, "fresh") == 0) n = 3500000;
    else if (strcmp(mode, "past") == 0) n = 20000000;
    else if (strcmp(mode, "threads") == 0) n = 10000000, threads = 2;
    else if (strcmp(mode, "stream") == 0) n = 100000000;
    else {
        fprintf(stderr, "usage: regimes fresh|past|threads|stream [N]\n");
        return 2;
    }
    if (argc > 2 && (n = bench_parse_count(argv[2])) == 0) {
        fprintf(stderr, "regimes: bad count '%s'\n", argv[2]);
        return 2;
    }
    result fl, sc;
    measure(floor_batch, n, threads, &fl);
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    measure(scope_batch, n, threads, &sc);
    getrusage(RUSAGE_SELF, &b);
#ifdef BENCH_LTTNG
    const char *label = "lttng";
    uint64_t selfw = 0; /* LTTng's own count (discarded events) is printed by the script */
    double peak = 0;
#else
    const char *w = getenv("SCOPEPROF_WRITER");
    const char *label = w && strcmp(w, "0") == 0 ? "writer0" : "default";
    /* Chunk hand-offs in which the recording thread wrote itself (writer
     * behind, or no writer), and the most chunk memory held at once. */
    uint64_t selfw = scopeprof__g ? scopeprof__g->self_writes : 0;
    double peak = scopeprof__g ? (double)scopeprof__g->peak_bytes / 1048576.0 : 0;
#endif
    double fns = (double)fl.ns / (double)n, sns = (double)sc.ns / (double)n;
    printf("%-8s %-7s %5.1fM x%d  floor %6.2f ns  scope %6.2f ns  x%5.2f  worst batch: floor %7.1f us, "
           "scope %8.1f us  peak RSS %6.1f MiB  minflt/M scopes: thread %7.1f, process %7.1f  self-writes %llu  chunk peak %.1f MiB\n",
           mode, label, (double)n / 1e6, threads, fns, sns,
           sns / fns, (double)fl.worst_ns / 1e3, (double)sc.worst_ns / 1e3, (double)b.ru_maxrss / 1024.0,
           (double)sc.minflt * 1e6 / (double)(n * (uint64_t)threads),
           (double)(b.ru_minflt - a.ru_minflt) * 1e6 / (double)(n * (uint64_t)threads),
           (unsigned long long)selfw, peak);
    return 0;
}
