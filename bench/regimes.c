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
 * slots (warm memory; the profiled run's is not), in the same loop shape.
 * It runs alone first: the ratio's denominator (the cost of the profiler's
 * writer thread, on a machine with no CPU to spare, is the scopes'). Then
 * floor and scopes alternate, a batch of 1024 each, on the same thread, so
 * that both meet the same conditions. Printed: ns per scope, the ratio, the
 * worst batch (what a recording thread waited at most) and how many batches
 * took over 50 us (the bound), each as floor alone / floor beside
 * the scopes, and the scopes': what the machine alone does to a batch of
 * that length and what the profiler adds, peak RSS, and minor page faults
 * per million scopes taken on the recording thread(s) and in the whole
 * process (the writer's pre-touching included). A benchmark: it never fails
 * on a time.
 */
#define _GNU_SOURCE
#include "bench.h"
#if defined(BENCH_LTTNG) || defined(BENCH_FLOOR_PROCESS)
/* The peer (bench/lttng_bench.sh): LTTng-UST's begin/end tracepoints in the
 * same loop, from bench/lttng_tp.c; the session is made outside. */
void lttng_scope_loop(uint64_t n);
#else
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
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

/* The bound on a batch: what a recording thread may wait. */
#define SLOW_BATCH_NS 50000u

typedef struct result { /* one side: the floor's batches or the scopes' */
    uint64_t ns, worst_ns;
    uint64_t slow; /* batches over SLOW_BATCH_NS */
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

#if defined(BENCH_FLOOR_PROCESS)
/* The floor process of bench/whole_cpu.sh: the floor's loop where the scopes
 * would be, so the process does the same floor work and no profiling. */
__attribute__((noinline)) static void scope_batch(uint64_t base, uint32_t n) { floor_batch(base, n); }
#elif defined(BENCH_LTTNG)
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

static void add_batch(result *r, uint64_t d) {
    r->ns += d;
    if (d > r->worst_ns) r->worst_ns = d;
    r->slow += d > SLOW_BATCH_NS;
}

typedef struct job {
    uint64_t n;
    int scopes; /* 0: the floor alone */
    result fl, sc;
    long minflt; /* this thread's */
} job;

/* n floor iterations and n scopes, a batch of each in turn: both sides run
 * under the same conditions (the writer's work on the other CPU, other
 * processes, interrupts), which a floor measured before the scopes would
 * not see. The floor's ring is warm after its first batch; the scopes'
 * memory is as the regime leaves it. */
static void *job_main(void *p) {
    job *j = (job *)p;
    long f0 = thread_minflt();
    for (uint64_t i = 0; i < j->n; i += BATCH) {
        uint32_t k = j->n - i < BATCH ? (uint32_t)(j->n - i) : BATCH;
        uint64_t t0 = bench_now_ns();
        floor_batch(i, k);
        uint64_t t1 = bench_now_ns();
        if (j->scopes) scope_batch(i, k);
        uint64_t t2 = bench_now_ns();
        add_batch(&j->fl, t1 - t0);
        add_batch(&j->sc, t2 - t1);
    }
    j->minflt = thread_minflt() - f0;
    return NULL;
}

/* `threads` threads at once (1: the calling thread); per-thread results
 * combined: the slowest thread's time, the worst batch of any, the slow
 * batches and faults of all. */
static void measure(uint64_t n, int threads, int scopes, job *out) {
    job j[2] = {{n, scopes, {0, 0, 0}, {0, 0, 0}, 0}, {n, scopes, {0, 0, 0}, {0, 0, 0}, 0}};
    if (threads == 1) {
        job_main(&j[0]);
    } else {
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, job_main, &j[i]);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    }
    *out = j[0];
    for (int i = 1; i < threads; i++) {
        result *o[2] = {&out->fl, &out->sc}, *in[2] = {&j[i].fl, &j[i].sc};
        for (int side = 0; side < 2; side++) {
            if (in[side]->ns > o[side]->ns) o[side]->ns = in[side]->ns;
            if (in[side]->worst_ns > o[side]->worst_ns) o[side]->worst_ns = in[side]->worst_ns;
            o[side]->slow += in[side]->slow;
        }
        out->minflt += j[i].minflt;
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
    /* The floor alone first, on a process that does nothing else: the
     * ratio's denominator. Then floor and scopes in turn: the batches. */
    job alone, r;
    measure(n, threads, 0, &alone);
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    measure(n, threads, 1, &r);
    getrusage(RUSAGE_SELF, &b);
    const result fl = alone.fl, beside = r.fl, sc = r.sc;
#if defined(BENCH_LTTNG) || defined(BENCH_FLOOR_PROCESS)
#ifdef BENCH_FLOOR_PROCESS
    const char *label = "floorproc";
#else
    const char *label = "lttng";
#endif
    uint64_t selfw = 0; /* LTTng's own count (discarded events) is printed by the script */
    double peak = 0;
#else
    const char *w = getenv("SCOPEPROF_WRITER");
    const char *label = w && strcmp(w, "0") == 0 ? "writer0" : "default";
    /* Chunk hand-offs in which the recording thread wrote itself (writer
     * behind, or no writer), and the most chunk memory held at once. */
#if SCOPEPROF__ABI >= 11 /* the registry in sub-structs */
    uint64_t selfw = scopeprof__g ? scopeprof__g->buf.self_writes : 0;
    double peak = scopeprof__g ? (double)scopeprof__g->buf.peak_bytes / 1048576.0 : 0;
#else
    uint64_t selfw = scopeprof__g ? scopeprof__g->self_writes : 0;
    double peak = scopeprof__g ? (double)scopeprof__g->peak_bytes / 1048576.0 : 0;
#endif
#endif
    double fns = (double)fl.ns / (double)n, sns = (double)sc.ns / (double)n;
    printf("%-8s %-7s %5.1fM x%d  floor %6.2f ns  scope %6.2f ns  x%5.2f  worst batch: floor %.1f / %.1f us, "
           "scope %.1f us  batches over 50 us: floor %llu / %llu, scope %llu of %llu  peak RSS %6.1f MiB  minflt/M scopes: thread %7.1f, process %7.1f  self-writes %llu  chunk peak %.1f MiB\n",
           mode, label, (double)n / 1e6, threads, fns, sns,
           sns / fns, (double)fl.worst_ns / 1e3, (double)beside.worst_ns / 1e3, (double)sc.worst_ns / 1e3,
           (unsigned long long)fl.slow, (unsigned long long)beside.slow, (unsigned long long)sc.slow, (unsigned long long)((n + BATCH - 1) / BATCH * (uint64_t)threads),
           (double)b.ru_maxrss / 1024.0,
           (double)r.minflt * 1e6 / (double)(n * (uint64_t)threads),
           (double)(b.ru_minflt - a.ru_minflt) * 1e6 / (double)(n * (uint64_t)threads),
           (unsigned long long)selfw, peak);
    return 0;
}
