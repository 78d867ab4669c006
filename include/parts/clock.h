/* clock.h: the clock (TSC or CLOCK_MONOTONIC), ticks to nanoseconds, and the
 * overhead calibration (what recording one scope costs). */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds: the ticks when the TSC is not usable. */
static inline uint64_t scopeprof__mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

SCOPEPROF__API uint64_t scopeprof__ticks_slow(void) { return scopeprof__mono_ns(); }

/* Every change of this thread's pointer (scopeprof__tls) goes through here:
 * the hot path's (api.h, scopeprof__tls_hot) follows it where ticks are TSC
 * cycles and stays NULL where they are not, so that a scope's open and
 * close take their slow path there (api.h, scopeprof__scope_open). */
static inline scopeprof__thread *scopeprof__tls_set(scopeprof__thread *t) {
    scopeprof__tls = t;
#if defined(__x86_64__) || defined(__i386__)
    scopeprof__tls_hot = scopeprof__use_tsc == 1 ? t : NULL;
#endif
    return t;
}

/* One CLOCK_MONOTONIC time and the TSC at the same instant: the TSC read on
 * both sides of the clock, best of four tries. A thread preempted between
 * two single reads would pair them milliseconds apart and skew every
 * converted time (GPU work then appeared before its launch). Without a TSC
 * the ticks are the clock. */
SCOPEPROF__INTERNAL void scopeprof__clock_pair_of(int use_tsc, uint64_t *ns, uint64_t *tick) {
    *ns = scopeprof__mono_ns();
    *tick = *ns;
#if defined(__x86_64__) || defined(__i386__)
    if (!use_tsc) return;
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = __builtin_ia32_rdtsc();
        uint64_t t = scopeprof__mono_ns();
        uint64_t b = __builtin_ia32_rdtsc();
        if (b - a < best) {
            best = b - a;
            *ns = t;
            *tick = a + (b - a) / 2;
        }
    }
#else
    (void)use_tsc; /* no TSC here: -Wextra's unused parameter */
#endif
}
static inline void scopeprof__clock_pair(const scopeprof__state *g, uint64_t *ns, uint64_t *tick) {
    scopeprof__clock_pair_of(g->clock.use_tsc, ns, tick);
}


/* The TSC is usable when the CPU says it is invariant (CPUID 0x80000007,
 * EDX bit 8): constant rate, running in every power state. */
static inline int scopeprof__tsc_invariant(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned r[4]; /* eax..edx; an array, as nvcc warns of a register set and never read */
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(0x80000000u), "c"(0));
    if (r[0] < 0x80000007u) return 0;
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(0x80000007u), "c"(0));
    return (r[3] >> 8) & 1;
#else
    return 0;
#endif
}

/* ---- The clock rate ----------------------------------------------------
 * ns per TSC tick, measured over at least SCOPEPROF__RATE_NS
 * (scopeprof__calibrate) from the earliest clock pair known: the one read
 * when the program started (a constructor, below), else the registry's
 * (tick0, ns0). */
#define SCOPEPROF__RATE_NS 20000000u
/* A start pair older than this is not used: over a long time before
 * profiling began, a suspend or a virtual machine's migration may have
 * moved one clock against the other. */
#define SCOPEPROF__START_PAIR_MAX_NS 60000000000u
__attribute__((weak, visibility("hidden"))) uint64_t scopeprof__start_pair[2]; /* ns, tick; ns 0: none */
#if defined(__x86_64__) || defined(__i386__)
/* The pair when the program starts (two clock reads, no allocation), so that
 * a program whose profiling begins 20 ms or more after its start has the
 * rate at its first write without waiting. Only with an invariant TSC: no
 * `rdtsc` in a program that profiling would not read it in (a sandbox may
 * forbid it). Published with a release store, as a constructor of another
 * file may already have started the writer, which reads it. Any pair of the
 * two clocks will do: a module's own, or the first module's. */
__attribute__((constructor)) static void scopeprof__start_clock(void) {
    uint64_t ns, tick;
    if (!scopeprof__tsc_invariant() || __atomic_load_n(&scopeprof__start_pair[0], __ATOMIC_ACQUIRE)) return;
    scopeprof__clock_pair_of(1, &ns, &tick);
    __atomic_store_n(&scopeprof__start_pair[1], tick, __ATOMIC_RELAXED);
    __atomic_store_n(&scopeprof__start_pair[0], ns, __ATOMIC_RELEASE);
}
#endif

/* The pair the rate is measured from: scopeprof__start_pair if it is the
 * earlier and recent enough (and the ticks are the TSC), else the registry's. */
SCOPEPROF__INTERNAL void scopeprof__rate_from(const scopeprof__state *g, uint64_t *ns, uint64_t *tick) {
    uint64_t early = __atomic_load_n(&scopeprof__start_pair[0], __ATOMIC_ACQUIRE);
    *ns = g->clock.ns0, *tick = g->clock.tick0;
    if (g->clock.use_tsc && early && early < *ns && *ns - early <= SCOPEPROF__START_PAIR_MAX_NS)
        *ns = early, *tick = __atomic_load_n(&scopeprof__start_pair[1], __ATOMIC_RELAXED);
}

/* ns until the clock rate can be measured without a wait: 0 when the ticks
 * are ns, or SCOPEPROF__RATE_NS have passed since scopeprof__rate_from's
 * pair. Reads nothing under a lock (the background writer asks it without
 * the registry lock): the registry's pair never changes, the start pair is
 * published once. */
SCOPEPROF__INTERNAL uint64_t scopeprof__rate_wait(const scopeprof__state *g) {
    uint64_t ns, tick, since;
    if (!g->clock.use_tsc) return 0;
    scopeprof__rate_from(g, &ns, &tick);
    since = scopeprof__mono_ns() - ns;
    return since < SCOPEPROF__RATE_NS ? SCOPEPROF__RATE_NS - since : 0;
}

/* ---- Overhead calibration (docs/DESIGN.md, "Overhead compensation") --------
 * What recording one scope costs, measured once per process at start-up with
 * PROFILE_SCOPE's own inline code (scopeprof__scope_begin and _end) on a
 * throwaway thread state whose events are never queued nor written. Per
 * process rather than per thread: threads run the same code on the same
 * cores, and a thread's first scope must stay cheap.
 *
 * In two classes, as a scope's cost depends on what is around it: the clock
 * reads overlap the work around them on an out-of-order CPU, and back to
 * back around nothing they queue behind one another. On this project's AMD
 * EPYC VM a scope around nothing costs its caller 20 ns, one around some 10
 * ns of independent arithmetic 11-14 ns, one in a long dependent chain 1-7
 * ns (docs/DESIGN.md, "Overhead compensation"). So a scope with work in it is timed
 * around SCOPEPROF__CAL_WORK multiply-adds in four independent chains (code
 * with instruction-level parallelism, as most code has), and an empty one
 * around nothing; a scope whose duration is under twice the empty one's is
 * short, and compensated at the empty one's cost. */
enum {
    SCOPEPROF__CAL_BATCHES = 256,
    SCOPEPROF__CAL_PER = 8,  /* calls per batch */
    SCOPEPROF__CAL_WORK = 32 /* multiply-adds per call, in four chains: some 10 ns */
};

/* The work of a calibration call: four chains of multiply-adds from a value
 * carried from call to call, as data flows through a program's functions.
 * The empty asm keeps the compiler from folding the chains. */
static inline uint64_t scopeprof__cal_work(uint64_t x) {
    uint64_t a = x, b = x + 1, c = x + 2, d = x + 3;
    for (int i = 0; i < SCOPEPROF__CAL_WORK / 4; i++) {
        a = a * 6364136223846793005u + 1442695040888963407u;
        b = b * 6364136223846793005u + 1442695040888963407u;
        c = c * 6364136223846793005u + 1442695040888963407u;
        d = d * 6364136223846793005u + 1442695040888963407u;
        __asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    }
    return a ^ b ^ c ^ d;
}

/* Calls of a function without and with a scope in it, with work and
 * without: what the scope adds is the difference. Not inlined: scopes sit
 * in the functions a program calls, and in one unrolled block the compiler
 * could share the thread pointer and the cursor between scopes, which it
 * cannot across calls. */
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_plain(scopeprof_site *s, uint64_t *x) {
    *x = scopeprof__cal_work(*x);
    __asm__ volatile("" : : "r"(s) : "memory");
}
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_scoped(scopeprof_site *s, uint64_t *x) {
    scopeprof_scope sc __attribute__((cleanup(scopeprof__scope_end), unused)) = scopeprof__scope_begin(s);
    *x = scopeprof__cal_work(*x);
    __asm__ volatile("" : : "r"(s) : "memory");
}
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_plain_empty(scopeprof_site *s) {
    __asm__ volatile("" : : "r"(s) : "memory");
}
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_empty(scopeprof_site *s) {
    scopeprof_scope sc __attribute__((cleanup(scopeprof__scope_end), unused)) = scopeprof__scope_begin(s);
    __asm__ volatile("" : : "r"(s) : "memory");
}

/* The tick clock for timing a batch: on x86, `lfence` on both sides, so
 * that the read waits for the work before it to finish and the work after
 * it waits for the read (without, a read taken while the batch before it
 * still ran counted part of that batch in the next, and the difference of
 * two batches came out as an artifact of the CPU's reorder window). */
static inline uint64_t scopeprof__ticks_fenced(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (scopeprof__use_tsc == 1) {
        __builtin_ia32_lfence();
        uint64_t t = __builtin_ia32_rdtsc();
        __builtin_ia32_lfence();
        return t;
    }
#endif
    return scopeprof__ticks();
}

static int scopeprof__cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Ticks of a batch, as kept (32 bits: the arrays of batches stay small on
 * the stack of whichever thread records first); a batch longer than 2^32
 * ticks (a preemption) is kept as the longest, which the quartile ignores. */
static inline uint32_t scopeprof__cal_ticks(uint64_t t) { return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t; }

/* The recorded durations of the scopes in the throwaway buffer (a long
 * record's is huge: the batch then does not count). */
static inline uint32_t scopeprof__cal_durs(scopeprof__thread *t, const scopeprof__slot *buf) {
    uint64_t d = 0;
    for (const scopeprof__slot *e = buf; e < t->cur; e++) d += e->dur;
    return scopeprof__cal_ticks(d);
}

/* One class from its batches (ticks per batch of K calls, lower quartiles):
 * I + O is what a call with a scope takes more than one without; I what
 * the scope recorded beyond the call without one (0 if less: the clock
 * reads overlapped its work). */
static inline void scopeprof__cal_class(double plain, double scoped, double recorded, double *in, double *out) {
    const double per = SCOPEPROF__CAL_PER, each = (scoped - plain) / per, i = (recorded - plain) / per;
    *in = i > 0 ? i : 0;
    *out = each > *in ? each - *in : 0;
}

/* Batches of SCOPEPROF__CAL_PER calls each way, with work and without; the
 * lower quartile over batches, so that a batch that an interrupt or a
 * preemption stretched does not count (a minimum would pick the one lucky
 * batch instead of the usual cost). Costs about 256 * 8 * 4 calls: some
 * 0.2 ms with a TSC. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__overhead_measure(scopeprof__state *g) {
    enum { B = SCOPEPROF__CAL_BATCHES, K = SCOPEPROF__CAL_PER };
    /* Registered already (id 1 of no trace): scope_begin never calls back into
     * the state, whose creation is under way. */
    scopeprof_site site = {"", "", "", 0, 1};
    scopeprof__slot buf[4 * K]; /* room for K long records: never the slow path */
    scopeprof__thread cal;
    memset(&cal, 0, sizeof cal);
    uint32_t t[6][B]; /* plain, scoped, recorded: with work, then empty */
    uint64_t x = 1;
    /* A signal handler's scopes would land in the throwaway buffer, and
     * could fill it: none runs meanwhile. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    scopeprof__thread *saved = scopeprof__tls;
    scopeprof__tls_set(&cal);
    cal.lim = buf + 4 * K;
    for (int b = -8; b < B; b++) { /* the first 8 warm the caches: not kept */
        uint64_t c[6]; /* the clock between the batches */
        cal.cur = buf;
        c[0] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_plain(&site, &x);
        c[1] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_scoped(&site, &x);
        c[2] = scopeprof__ticks_fenced();
        uint32_t with_work = scopeprof__cal_durs(&cal, buf);
        cal.cur = buf;
        c[3] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_plain_empty(&site);
        c[4] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_empty(&site);
        c[5] = scopeprof__ticks_fenced();
        if (b < 0) continue;
        t[0][b] = scopeprof__cal_ticks(c[1] - c[0]), t[1][b] = scopeprof__cal_ticks(c[2] - c[1]);
        t[2][b] = with_work;
        t[3][b] = scopeprof__cal_ticks(c[4] - c[3]), t[4][b] = scopeprof__cal_ticks(c[5] - c[4]);
        t[5][b] = scopeprof__cal_durs(&cal, buf);
    }
    scopeprof__tls_set(saved);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    double q[6];
    for (int k = 0; k < 6; k++) {
        qsort(t[k], B, sizeof t[k][0], scopeprof__cmp_u32);
        q[k] = (double)t[k][B / 4];
    }
    scopeprof__cal_class(q[0], q[1], q[2], &g->clock.comp_inside_ticks, &g->clock.comp_outside_ticks);
    scopeprof__cal_class(q[3], q[4], q[5], &g->clock.comp_short_inside_ticks, &g->clock.comp_short_outside_ticks);
    /* Short: under twice an empty scope's duration (at least 1 tick, and far
     * under a short record's longest). */
    double below = 2 * q[5] / (double)K;
    g->clock.comp_short_below = below < 1 ? 1 : below > 1e6 ? 1000000u : (uint64_t)below;
}

/* The calibration in picoseconds: inside and outside, with work and short
 * (the tick rate is known from the first write on: scopeprof__calibrate). */
SCOPEPROF__INTERNAL void scopeprof__overhead_ps(scopeprof__state *g, uint32_t ps[4]) {
    scopeprof__calibrate(g);
    const double ticks[4] = {g->clock.comp_inside_ticks, g->clock.comp_outside_ticks,
                             g->clock.comp_short_inside_ticks, g->clock.comp_short_outside_ticks};
    for (int k = 0; k < 4; k++) {
        double v = ticks[k] * g->clock.ns_per_tick * 1e3;
        ps[k] = v < 0 ? 0 : v > 4e9 ? 4000000000u : (uint32_t)(v + 0.5);
    }
}

/* Before aggregating: the exit summary's table takes the calibration out
 * (once per table: a schedule's cycle starts a new one). */
SCOPEPROF__INTERNAL void scopeprof__overhead_apply(scopeprof__state *g) {
    if (g->sum.agg.comp_state != SCOPEPROF_COMP_NONE) return;
    if (!g->cfg.compensate) {
        g->sum.agg.comp_state = SCOPEPROF_COMP_OFF_ENV;
        return;
    }
    uint32_t ps[4];
    scopeprof__overhead_ps(g, ps);
    scopeprof_agg_calibration(&g->sum.agg, ps[0], ps[1], 1);
    scopeprof_agg_short_class(&g->sum.agg, ps[2], ps[3], g->clock.comp_short_below);
}
SCOPEPROF__INTERNAL void scopeprof__calibrate(scopeprof__state *g) {
    if (g->clock.ns_per_tick > 0) return;
    if (!g->clock.use_tsc) {
        g->clock.ns_per_tick = 1.0;
        return;
    }
    /* Ratio of TSC to CLOCK_MONOTONIC since the program's start (or the
     * registry's), taken at the first write. Over at least 20 ms, the rate
     * is within ~1e-6 even with a few microseconds of read jitter, and times
     * converted long after it are still close. At the last write
     * (g->life.ending) it covers every event there will be, so a converted
     * time is off by the jitter at most, however short the run: no wait. A
     * process that writes sooner sleeps the rest (spinning it, a short one
     * spent 20 ms of CPU); the background writer does not come here before
     * (scopeprof__writer_main). */
    for (uint64_t left; !g->life.ending && (left = scopeprof__rate_wait(g)) > 0;) {
        struct timespec rest = {0, (long)left};
        nanosleep(&rest, NULL); /* async-signal-safe: the crash path may be here */
    }
    uint64_t ns, tk, ns_from, tk_from;
    scopeprof__clock_pair(g, &ns, &tk);
    scopeprof__rate_from(g, &ns_from, &tk_from);
    g->clock.ns_per_tick = (double)(ns - ns_from) / (double)(tk - tk_from);
}

/* A tick in ns, as every reader of the file converts it (format.h). */
static inline uint64_t scopeprof__to_ns(const scopeprof__state *g, uint64_t tick) {
    return scopeprof_ticks_ns(tick, g->clock.tick0, g->clock.ns0, g->clock.ns_per_tick);
}

#ifdef __cplusplus
}
#endif
#endif /* clock.h */
