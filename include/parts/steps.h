/* steps.h: PROFILE_STEP, schedules (torch.profiler.schedule) and memory
 * (PROFILE_ALLOC/FREE). */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* ---- Steps and schedules ---------------------------------------------------
 * Phases as torch.profiler.schedule: the first skip_first steps are skipped;
 * then cycles of `wait` steps (not recorded), `warmup` steps (recorded and
 * thrown away) and `active` steps (kept), `repeat` times (0: no end). Events
 * are always recorded (the hot path does not change); the writer keeps those
 * that start inside the open window. When a cycle's last active step ends,
 * its window is written to <name>.cycleNNNN.sprof and summarised. */
enum { SCOPEPROF__NONE, SCOPEPROF__WARMUP, SCOPEPROF__ACTIVE, SCOPEPROF__SAVE };
SCOPEPROF__INTERNAL int scopeprof__phase(const scopeprof__state *g, uint64_t step) {
    if (step < (uint64_t)g->sched.skip_first) return SCOPEPROF__NONE;
    uint64_t j = step - (uint64_t)g->sched.skip_first;
    uint64_t len = (uint64_t)(g->sched.wait + g->sched.warmup + g->sched.active);
    if (g->sched.repeat > 0 && j / len >= (uint64_t)g->sched.repeat) return SCOPEPROF__NONE;
    uint64_t m = j % len;
    if (m < (uint64_t)g->sched.wait) return SCOPEPROF__NONE;
    if (m < (uint64_t)(g->sched.wait + g->sched.warmup)) return SCOPEPROF__WARMUP;
    return m + 1 == len ? SCOPEPROF__SAVE : SCOPEPROF__ACTIVE;
}


/* Whether step i belongs in the trace and the table: every step, or under
 * a schedule only those in the recording window. */
SCOPEPROF__INTERNAL int scopeprof__step_kept(const scopeprof__state *g, uint32_t i) {
    return !g->sched.on || (g->sched.window && g->sched.steps[i].start >= g->sched.win_start);
}

/* Write the finished cycle, print its summary, start afresh. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__end_cycle(scopeprof__state *g) {
    scopeprof__write_queued(g, 1);
    scopeprof__write_partials(g);
    int had = g->out.events_written > 0;
    /* Peaks and unknown frees are per cycle: this one's are taken, and the
     * next starts from the memory live now, in one step. */
    scopeprof__memsnap mem;
    scopeprof__mem_snapshot(g, &mem, 1);
    scopeprof__file_end(g, &mem);
    char title[sizeof g->out.path + 64];
    snprintf(title, sizeof title, "scopeprof: cycle %d (%s)", g->sched.cycle,
             g->out.no_output ? "no file" : g->out.path);
    scopeprof__summary_print(g, &mem, had, title, 0);
    if (g->sched.cycle_fn && had) {
        /* The callback may do anything, profiling included: not under our lock. */
        scopeprof_cycle_fn fn = g->sched.cycle_fn;
        void *user = g->sched.cycle_user;
        char path[sizeof g->out.path];
        int c = g->sched.cycle;
        memcpy(path, g->out.path, sizeof path);
        g->wr.paused = 1; /* the file is closed: no write until it is set up again */
        scopeprof__unlock(g);
        fn(g->out.no_output ? NULL : path, c, user);
        scopeprof__lock(g);
        g->wr.paused = 0;
    }
    scopeprof__file_reset(g);
    g->sched.window = 0;
    scopeprof__cycle_path(g, ++g->sched.cycle);
}

SCOPEPROF__API void scopeprof__step(void) {
    uint64_t now = scopeprof__ticks();
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    if (g->life.finalized) {
        scopeprof__unlock(g);
        return;
    }
    if (g->sched.nsteps == g->sched.steps_cap) {
        uint32_t cap = g->sched.steps_cap ? g->sched.steps_cap * 2 : 64;
        scopeprof__steprec *v = (scopeprof__steprec *)realloc(g->sched.steps, cap * sizeof *v);
        if (v) g->sched.steps = v, g->sched.steps_cap = cap;
    }
    if (g->sched.nsteps < g->sched.steps_cap) {
        g->sched.steps[g->sched.nsteps].n = g->sched.step;
        g->sched.steps[g->sched.nsteps].start = g->sched.step_start ? g->sched.step_start : g->clock.tick0;
        g->sched.steps[g->sched.nsteps].end = now;
        g->sched.nsteps++;
    }
    if (g->sched.on) {
        int ended = scopeprof__phase(g, g->sched.step), next = scopeprof__phase(g, g->sched.step + 1);
        /* The next step starts after the cycle's file, table and callback. */
        if (ended == SCOPEPROF__SAVE) scopeprof__end_cycle(g), now = scopeprof__ticks();
        if ((next == SCOPEPROF__ACTIVE || next == SCOPEPROF__SAVE) && !g->sched.window) {
            g->sched.window = 1;
            g->sched.win_start = now;
        }
    }
    g->sched.step++;
    g->sched.step_start = now;
    scopeprof__unlock(g);
}

/* Whether the current step records, under the schedule just set. */
SCOPEPROF__INTERNAL void scopeprof__sched_window(scopeprof__state *g) {
    int ph = scopeprof__phase(g, g->sched.step);
    g->sched.window = ph == SCOPEPROF__ACTIVE || ph == SCOPEPROF__SAVE;
}

/* The schedule's files named after out.path (at its start, or when a rank
 * or a fork renamed it): the base, and the current cycle's name from it. */
SCOPEPROF__INTERNAL void scopeprof__sched_base(scopeprof__state *g) {
    snprintf(g->sched.base_path, sizeof g->sched.base_path, "%s", g->out.path);
    scopeprof__cycle_path(g, g->sched.cycle);
}

SCOPEPROF__INTERNAL void scopeprof__sched_start(scopeprof__state *g) {
    scopeprof__sched_base(g);
    scopeprof__sched_window(g);
    g->sched.win_start = g->clock.tick0;
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof__schedule(int skip_first, int wait, int warmup, int active, int repeat) {
    scopeprof__state *g = scopeprof__state_get();
    if (skip_first < 0 || wait < 0 || warmup < 0 || active <= 0 || repeat < 0) {
        scopeprof__warn("scopeprof: PROFILE_SCHEDULE(%d, %d, %d, %d, %d) ignored: counts must be "
                        ">= 0 and active > 0", skip_first, wait, warmup, active, repeat);
        return;
    }
    scopeprof__lock(g);
    if (g->sched.on)
        scopeprof__warn("scopeprof: PROFILE_SCHEDULE replaces the schedule set before it (SCOPEPROF_SCHEDULE "
                        "or an earlier call)");
    g->sched.on = 1;
    g->sched.skip_first = skip_first, g->sched.wait = wait, g->sched.warmup = warmup, g->sched.active = active;
    g->sched.repeat = repeat;
    if (!g->sched.cycle) g->sched.cycle = 1;
    if (!g->sched.base_path[0]) scopeprof__sched_start(g);
    else scopeprof__sched_window(g); /* a schedule replaced: its own phase for this step */
    scopeprof__unlock(g);
}

SCOPEPROF__API void scopeprof__on_cycle(scopeprof_cycle_fn fn, void *user) {
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    g->sched.cycle_fn = fn;
    g->sched.cycle_user = user;
    scopeprof__unlock(g);
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof__set_rank(int rank) {
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    if (g->out.fd != -1 && g->out.fd != -2) {
        scopeprof__warn("scopeprof: PROFILE_SET_RANK(%d) after the trace file was opened; the "
                        "file keeps its name", rank);
    } else {
        int was = g->out.rank;
        g->out.rank = rank < 0 ? -1 : rank;
        if (was >= 0 && was != g->out.rank && !g->out.path_is_default && !g->out.no_output)
            scopeprof__warn("scopeprof: PROFILE_SET_RANK: the file was named for rank %d and keeps its "
                            "name '%s'", was, g->out.path); /* an explicit path took a launcher's rank */
        else if (was != g->out.rank)
            scopeprof__rank_rename(g);
    }
    scopeprof__unlock(g);
}

/* ---- Memory: PROFILE_ALLOC / PROFILE_FREE -------------------------------------
 * A map of live allocations gives each free its size. Linear probing with
 * backward-shift deletion keeps it tombstone-free. Lock: g->mem.lock. */
static inline uint32_t scopeprof__live_slot(uintptr_t p, uint32_t dev, uint32_t cap) {
    uint64_t h = ((uint64_t)p ^ ((uint64_t)dev << 56)) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (cap - 1);
}

SCOPEPROF__INTERNAL int scopeprof__live_put(scopeprof__state *g, uintptr_t p, uint32_t dev,
                                            int64_t bytes) {
    if ((g->mem.nlive + 1) * 2 > g->mem.live_cap) {
        uint32_t cap = g->mem.live_cap ? g->mem.live_cap * 2 : 1024;
        scopeprof__live *v = (scopeprof__live *)calloc(cap, sizeof *v);
        if (!v) return -1;
        for (uint32_t i = 0; i < g->mem.live_cap; i++) {
            if (!g->mem.live[i].ptr) continue;
            uint32_t j = scopeprof__live_slot(g->mem.live[i].ptr, g->mem.live[i].dev, cap);
            while (v[j].ptr) j = (j + 1) & (cap - 1);
            v[j] = g->mem.live[i];
        }
        free(g->mem.live);
        g->mem.live = v;
        g->mem.live_cap = cap;
    }
    uint32_t j = scopeprof__live_slot(p, dev, g->mem.live_cap);
    while (g->mem.live[j].ptr && !(g->mem.live[j].ptr == p && g->mem.live[j].dev == dev)) j = (j + 1) & (g->mem.live_cap - 1);
    if (!g->mem.live[j].ptr) g->mem.nlive++;
    g->mem.live[j].ptr = p;
    g->mem.live[j].dev = dev;
    g->mem.live[j].bytes = bytes;
    return 0;
}

/* Remove p; returns its size, or -1 if it was not recorded (or
 * SCOPEPROF__INHERITED: allocated by the parent before a fork). */
#define SCOPEPROF__INHERITED INT64_MIN
SCOPEPROF__INTERNAL int64_t scopeprof__live_take(scopeprof__state *g, uintptr_t p, uint32_t dev) {
    if (!g->mem.live_cap) return -1;
    uint32_t mask = g->mem.live_cap - 1, j = scopeprof__live_slot(p, dev, g->mem.live_cap);
    while (g->mem.live[j].ptr && !(g->mem.live[j].ptr == p && g->mem.live[j].dev == dev)) j = (j + 1) & mask;
    if (!g->mem.live[j].ptr) return -1;
    int64_t bytes = g->mem.live[j].bytes;
    /* Backward shift: move later entries of the run into the hole when their
     * home slot does not lie between the hole and them. */
    for (uint32_t k = (j + 1) & mask; g->mem.live[k].ptr; k = (k + 1) & mask) {
        uint32_t home = scopeprof__live_slot(g->mem.live[k].ptr, g->mem.live[k].dev, g->mem.live_cap);
        if (((k - home) & mask) >= ((k - j) & mask)) {
            g->mem.live[j] = g->mem.live[k];
            j = k;
        }
    }
    g->mem.live[j].ptr = 0;
    g->mem.nlive--;
    return bytes;
}

SCOPEPROF__INTERNAL void scopeprof__mem_event(scopeprof__state *g, scopeprof_site *s, int64_t delta,
                                              uint32_t dev) {
    uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
    if (id == 0) id = scopeprof__site_register(s);
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    pthread_mutex_lock(&g->mem.lock);
    g->mem.used |= 1u << (dev & 31);
    g->mem.cur[dev] += delta;
    if (g->mem.cur[dev] > g->mem.peak[dev]) g->mem.peak[dev] = g->mem.cur[dev];
    pthread_mutex_unlock(&g->mem.lock);
    scopeprof__emit(t, scopeprof__ticks(), (uint64_t)delta, id,
                    SCOPEPROF_DEPTH_MEM | dev << 24 | (t->depth & 0xFFFFFFu));
}

SCOPEPROF__API void scopeprof__mem_alloc(scopeprof_site *s, uintptr_t ptr, uint64_t bytes,
                                         int device) {
    if (!ptr || device < 0 || device > 31) return; /* 0: CPU, 1..31: GPU 0..30 */
    scopeprof__state *g = scopeprof__state_get();
    int64_t b = bytes > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
    pthread_mutex_lock(&g->mem.lock);
    int64_t old = scopeprof__live_take(g, ptr, (uint32_t)device);
    int ok = scopeprof__live_put(g, ptr, (uint32_t)device, b) == 0;
    pthread_mutex_unlock(&g->mem.lock);
    /* An address recorded twice without a free in between: the allocator
     * reused it behind our back (a free we did not see); replace it. */
    if (old >= 0) scopeprof__mem_event(g, s, -old, (uint32_t)device);
    if (ok) scopeprof__mem_event(g, s, b, (uint32_t)device);
}

SCOPEPROF__API void scopeprof__mem_free(scopeprof_site *s, uintptr_t ptr, int device) {
    if (!ptr || device < 0 || device > 31) return;
    scopeprof__state *g = scopeprof__state_get();
    pthread_mutex_lock(&g->mem.lock);
    int64_t b = scopeprof__live_take(g, ptr, (uint32_t)device);
    /* GPUs share one address space: a block freed while another device is
     * current is still found, on the device it was allocated on. */
    for (uint32_t d = 1; b == -1 && device > 0 && d < 32; d++)
        if (d != (uint32_t)device && (b = scopeprof__live_take(g, ptr, d)) != -1) device = (int)d;
    if (b == SCOPEPROF__INHERITED) { /* the parent's, before a fork: not in this profile */
        pthread_mutex_unlock(&g->mem.lock);
        return;
    }
    if (b < 0 && g->mem.unknown_frees++ == 0) {
        uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&g->mem.lock);
        if (id == 0) id = scopeprof__site_register(s);
        __atomic_store_n(&g->mem.unknown_free_site, id, __ATOMIC_RELEASE);
        return;
    }
    pthread_mutex_unlock(&g->mem.lock);
    if (b >= 0) scopeprof__mem_event(g, s, -b, (uint32_t)device);
}

#ifdef __cplusplus
}
#endif
#endif /* steps.h */
