/* scope_cost.c -- what one PROFILE_SCOPE costs, next to the floor measured in
 * the same run.
 *
 *   scope_cost [-n N] [-r REPS] [--dyn-n N] [--only case,case...]
 *
 * The floor is what any recorder of begin/end pairs must do at least: read the
 * clock twice and store the pair into a thread-local buffer. This file is
 * built WITHOUT PROFILE_ENABLE; the profiled loops come from loops.c, built
 * with it (and with the disabled and no-macro variants), and linked in.
 *
 * Every case runs N iterations per repetition, timed with CLOCK_MONOTONIC;
 * the cases are run round-robin (rep 1 of every case, then rep 2, ...) so a
 * slow phase of a shared machine hits all of them alike. The table shows the
 * median, min and max of ns per scope over the repetitions and the ratio of
 * the medians to the 24-byte floor. Nothing here fails on a time.
 *
 * scopeprof reads its environment once: run this with SCOPEPROF_SUMMARY=0 and
 * SCOPEPROF_OUTPUT=none (buffers aggregated and recycled, nothing written) or a
 * path under /tmp (streaming writes are part of the measured cost), and a
 * SCOPEPROF_BUFFER_MB large or small enough for what you want to see. The
 * recorded events are flushed between repetitions, outside the timed part.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/* From loops.c (three builds of one source). */
void enabled_scope_loop(uint64_t n);
void enabled_scope_loop_dyn(uint64_t n, const char *name);
void disabled_scope_loop(uint64_t n);
void nomacro_scope_loop(uint64_t n);
void enabled_flush(void);
int enabled_uses_tsc(void);

/* ---- The floor ----------------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
#define FLOOR_TICKS() __builtin_ia32_rdtsc()
#define FLOOR_CLOCK "rdtsc"
#else
#define FLOOR_TICKS() bench_now_ns()
#define FLOOR_CLOCK "clock_gettime (no TSC on this architecture)"
#endif

/* The event scopeprof stores today (24 bytes) and a 16-byte one: start, a
 * 32-bit duration in ticks and the site id and depth packed in 32 bits. */
typedef struct floor_ev24 {
    uint64_t start, end;
    uint32_t site, depth;
} floor_ev24;
typedef struct floor_ev16 {
    uint64_t start;
    uint32_t dur;
    uint32_t site_depth;
} floor_ev16;

/* As many events as one scopeprof chunk (SCOPEPROF_CHUNK_EVENTS = 4096), so
 * the floor writes to a buffer of the same size and then wraps around. */
#define FLOOR_EVENTS 4096u
static __thread floor_ev24 floor24_buf[FLOOR_EVENTS];
static __thread floor_ev16 floor16_buf[FLOOR_EVENTS];

/* noinline: the loop must stay a loop of its own, as the profiled ones are
 * (they are in another translation unit). */
__attribute__((noinline)) static void floor24_loop(uint64_t n) {
    floor_ev24 *buf = floor24_buf;
    uint32_t idx = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t t0 = FLOOR_TICKS();
        BENCH_BODY(i);
        uint64_t t1 = FLOOR_TICKS();
        floor_ev24 *e = &buf[idx];
        e->start = t0;
        e->end = t1;
        e->site = 1;
        e->depth = 0;
        idx = (idx + 1) & (FLOOR_EVENTS - 1);
    }
    bench_escape(buf); /* the stores are observable: keep them */
}

__attribute__((noinline)) static void floor16_loop(uint64_t n) {
    floor_ev16 *buf = floor16_buf;
    uint32_t idx = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t t0 = FLOOR_TICKS();
        BENCH_BODY(i);
        uint64_t t1 = FLOOR_TICKS();
        floor_ev16 *e = &buf[idx];
        e->start = t0;
        e->dur = (uint32_t)(t1 - t0);
        e->site_depth = 1;
        idx = (idx + 1) & (FLOOR_EVENTS - 1);
    }
    bench_escape(buf);
}

/* The naive recorder: clock_gettime(CLOCK_MONOTONIC) twice (vDSO, no system
 * call) and the same 24-byte store. */
__attribute__((noinline)) static void naive_loop(uint64_t n) {
    floor_ev24 *buf = floor24_buf;
    uint32_t idx = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t t0 = bench_now_ns();
        BENCH_BODY(i);
        uint64_t t1 = bench_now_ns();
        floor_ev24 *e = &buf[idx];
        e->start = t0;
        e->end = t1;
        e->site = 1;
        e->depth = 0;
        idx = (idx + 1) & (FLOOR_EVENTS - 1);
    }
    bench_escape(buf);
}

static char dyn_name[32];
static void dyn_loop(uint64_t n) { enabled_scope_loop_dyn(n, dyn_name); }

/* ---- Cases --------------------------------------------------------------- */

typedef struct bench_case {
    const char *key;   /* for --only */
    const char *label; /* table row */
    void (*fn)(uint64_t n);
    int threads;       /* 1, or 2 running at once (per-thread cost shown) */
    int profiled;      /* flush scopeprof's buffers after each repetition */
    int dyn;           /* uses the --dyn-n count */
    int selected;
    double *ns;        /* ns per scope, one per repetition */
} bench_case;

static bench_case cases[] = {
    {"floor24", "floor: 2 rdtsc + 24 B store to TLS array", floor24_loop, 1, 0, 0, 1, NULL},
    {"floor16", "floor: 2 rdtsc + 16 B store to TLS array", floor16_loop, 1, 0, 0, 1, NULL},
    {"floor24x2", "floor 24 B, 2 threads at once (per thread)", floor24_loop, 2, 0, 0, 1, NULL},
    {"scope", "PROFILE_SCOPE, 1 thread", enabled_scope_loop, 1, 1, 0, 1, NULL},
    {"scopex2", "PROFILE_SCOPE, 2 threads at once (per thread)", enabled_scope_loop, 2, 1, 0, 1,
     NULL},
    {"dyn", "PROFILE_SCOPE_DYN, run-time name", dyn_loop, 1, 1, 1, 1, NULL},
    {"naive", "naive: 2 clock_gettime + 24 B store", naive_loop, 1, 0, 0, 1, NULL},
    {"disabled", "PROFILE_SCOPE compiled out (no PROFILE_ENABLE)", disabled_scope_loop, 1, 0, 0,
     1, NULL},
    {"nomacro", "same loop, no macro written", nomacro_scope_loop, 1, 0, 0, 1, NULL},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Two threads released together by a barrier, each timing its own loop. */
typedef struct worker {
    pthread_barrier_t *go;
    void (*fn)(uint64_t n);
    uint64_t n;
    uint64_t ns;
} worker;

static void *worker_main(void *p) {
    worker *w = (worker *)p;
    pthread_barrier_wait(w->go);
    uint64_t t0 = bench_now_ns();
    w->fn(w->n);
    w->ns = bench_now_ns() - t0;
    return NULL;
}

/* One repetition of a case: ns per scope (per thread for two threads). */
static double run_once(const bench_case *c, uint64_t n) {
    if (c->threads == 1) {
        uint64_t t0 = bench_now_ns();
        c->fn(n);
        return (double)(bench_now_ns() - t0) / (double)n;
    }
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    worker w[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        w[k] = (worker){&go, c->fn, n, 0};
        int rc = pthread_create(&th[k], NULL, worker_main, &w[k]);
        if (rc) {
            fprintf(stderr, "scope_cost: pthread_create: %s\n", strerror(rc));
            exit(1);
        }
    }
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&go);
    return (double)(w[0].ns + w[1].ns) / 2.0 / (double)n;
}

static void usage(void) {
    fprintf(stderr, "usage: scope_cost [-n N] [-r REPS] [--dyn-n N] [--only case,...]\n"
                    "cases:");
    for (size_t i = 0; i < NCASES; i++) fprintf(stderr, " %s", cases[i].key);
    fprintf(stderr, "\n");
    exit(2);
}

static void select_only(const char *list) {
    for (size_t i = 0; i < NCASES; i++) cases[i].selected = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < NCASES && strcmp(cases[i].key, k) != 0) i++;
        if (i == NCASES) {
            fprintf(stderr, "scope_cost: unknown case '%s'\n", k);
            usage();
        }
        cases[i].selected = 1;
    }
}

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v ? v : dflt;
}

int main(int argc, char **argv) {
    uint64_t n = 10000000, dyn_n = 0;
    int reps = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) n = bench_parse_count(argv[++i]);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dyn-n") == 0 && i + 1 < argc)
            dyn_n = bench_parse_count(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) select_only(argv[++i]);
        else usage();
    }
    if (n == 0 || reps <= 0) usage();
    /* PROFILE_SCOPE_DYN takes a lock and hashes the name on every call: a
     * tenth of the iterations gives the same ns/scope in a tenth of the time. */
    if (dyn_n == 0) dyn_n = n / 10 ? n / 10 : 1;
    /* The name lives in a writable buffer filled at run time, as a name built
     * by a program would. */
    snprintf(dyn_name, sizeof dyn_name, "dyn_%s", "scope");

    for (size_t i = 0; i < NCASES; i++) {
        cases[i].ns = (double *)calloc((size_t)reps, sizeof(double));
        if (!cases[i].ns) {
            fprintf(stderr, "scope_cost: out of memory\n");
            return 1;
        }
    }

    printf("scope_cost: %llu scopes per repetition (PROFILE_SCOPE_DYN: %llu), %d repetitions, "
           "round-robin; floor clock: %s\n",
           (unsigned long long)n, (unsigned long long)dyn_n, reps, FLOOR_CLOCK);
    printf("scopeprof env: SCOPEPROF_BUFFER_MB=%s SCOPEPROF_OUTPUT=%s SCOPEPROF_SUMMARY=%s\n",
           env_or("SCOPEPROF_BUFFER_MB", "(unset: 64)"),
           env_or("SCOPEPROF_OUTPUT", "(unset: ./<prog>.<pid>.sprof)"),
           env_or("SCOPEPROF_SUMMARY", "(unset: 1)"));
    fflush(stdout);

    for (int r = 0; r < reps; r++) {
        for (size_t i = 0; i < NCASES; i++) {
            bench_case *c = &cases[i];
            if (!c->selected) continue;
            c->ns[r] = run_once(c, c->dyn ? dyn_n : n);
            if (c->profiled) enabled_flush(); /* untimed */
        }
    }

    int tsc = enabled_uses_tsc();
    printf("scopeprof clock: %s\n", tsc == 1   ? "rdtsc (invariant TSC)"
                                    : tsc == 0 ? "clock_gettime (TSC not invariant)"
                                               : "not started (no profiled case ran)");

    double floor = 0.0;
    if (cases[0].selected) {
        double tmp[reps];
        memcpy(tmp, cases[0].ns, sizeof tmp);
        floor = bench_median(tmp, reps);
    }
    printf("\n%-48s %9s %9s %9s %9s\n", "case", "ns/scope", "min", "max", "x floor24");
    printf("%-48s %9s %9s %9s %9s\n", "----", "(median)", "", "", "");
    for (size_t i = 0; i < NCASES; i++) {
        bench_case *c = &cases[i];
        if (!c->selected) continue;
        double med = bench_median(c->ns, reps); /* sorts: [0] is min */
        char ratio[32] = "-";
        if (floor > 0) snprintf(ratio, sizeof ratio, "%.2f", med / floor);
        printf("%-48s %9.2f %9.2f %9.2f %9s\n", c->label, med, c->ns[0], c->ns[reps - 1], ratio);
    }
    fflush(stdout);
    for (size_t i = 0; i < NCASES; i++) free(cases[i].ns);
    return 0;
}
