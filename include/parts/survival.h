/* survival.h: the program's life around the profiler: thread exit, process
 * exit, fork, signals. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* Thread exit (pthread key destructor): close ranges left open, queue the
 * thread's partial chunk. The state stays in the registry for the output. */
/* Report and close the thread's PROFILE_BEGIN ranges still open when `when`
 * happened. Takes the lock to report (the site table may be growing in
 * another thread) and releases it to close them (closing may need a new
 * chunk, which takes the lock). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__close_open_ranges(scopeprof__state *g, scopeprof__thread *t,
                                                      const char *when) {
    if (!t || !t->nranges) return;
    scopeprof__lock(g);
    for (uint32_t i = t->nranges; i-- > 0;) {
        const scopeprof__range *r = &t->ranges[i];
        const scopeprof__siterec *sr = scopeprof__site_find(g, r->site);
        scopeprof__warn("scopeprof: PROFILE_BEGIN(\"%s\") at %s:%u was still open when %s; "
                        "closed there", sr ? sr->name : "?", sr ? sr->file : "?",
                        sr ? sr->line : 0, when);
    }
    scopeprof__unlock(g);
    /* A range that scopes opened inside it outlive stays counted in the
     * depth (scopeprof__range_pop). Here the thread or the program ends:
     * those scopes never close, and the depth is theirs alone (the line on
     * scopes still open counted the range too). */
    uint32_t kept = 0;
    while (t->nranges) {
        kept += t->depth > t->ranges[t->nranges - 1].depth + 1;
        scopeprof__range_pop(t, scopeprof__ticks());
    }
    scopeprof__depth_set(t, t->depth > kept ? t->depth - kept : 0);
}

SCOPEPROF__INTERNAL void scopeprof__thread_exit(void *p) {
    scopeprof__thread *t = (scopeprof__thread *)p;
    scopeprof__state *g = scopeprof__g;
    if (!t || !g) return;
    scopeprof__tls_set(t);
    scopeprof__close_open_ranges(g, t, "its thread exited");
    scopeprof__lock(g);
    if (!t->explicit_name) scopeprof__self_name(t->name); /* may have been set since */
    if (t->depth > 0 && !g->life.finalized)
        /* pthread_exit or pthread_cancel inside scopes: C code built without
         * -fexceptions runs no cleanup on that unwinding, so they never
         * close. Their start and site live on the dead stack: say so. */
        scopeprof__warn("scopeprof: thread %llu ('%s') ended (pthread_exit or pthread_cancel) "
                        "inside %u open scope(s); they are not in the trace",
                        (unsigned long long)t->tid, t->name, t->depth);
    t->alive = 0;
    pthread_mutex_lock(&g->buf.lock);
    if (!g->life.finalized && t->chunk) {
        uint32_t n = (uint32_t)(__atomic_load_n(&t->cur, __ATOMIC_ACQUIRE) - t->chunk->ev);
        scopeprof__queue(g, t, t->chunk, n);
        t->chunk = NULL;
        t->cur = t->lim = NULL;
    }
    pthread_mutex_unlock(&g->buf.lock);
    free(t->ranges);
    t->ranges = NULL;
    t->nranges = t->rcap = 0;
    scopeprof__unlock(g);
    scopeprof__tls_set(NULL);
}

/* ---- Scopes left without closing ---------------------------------------------
 * A longjmp (error handling in libpng, libjpeg, Lua...) out of scopes skips
 * their cleanup: they never close, and their depth stays counted. The next
 * scope to close that encloses them finds the thread's depth above its own
 * plus one (scope_end, one compare) and restores it; the scopes that closed
 * inside the abandoned ones, and those opened after the jump (one level
 * deeper per scope left), count as its children (summary.h,
 * scopeprof__sum_gather). The abandoned scopes themselves are lost (their
 * starts and sites lived on the frames the jump discarded; keeping them
 * elsewhere would cost every scope): so they are counted and said at exit
 * (scopeprof__finalize), never silently missing. Ranges
 * (PROFILE_BEGIN) opened inside the closing scope and still open are not
 * abandoned scopes: they are told apart here. No lock, no allocation: this
 * may run in a signal handler. */
SCOPEPROF__API void scopeprof__scopes_left(scopeprof__thread *t, uint32_t depth, uint32_t site) {
    uint32_t ranges = 0;
    for (uint32_t i = 0; i < t->nranges; i++) ranges += t->ranges[i].depth > depth;
    if (t->depth <= depth + 1 + ranges) return;
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    uint64_t left = t->depth - depth - 1 - ranges;
    if (__atomic_fetch_add(&g->life.scopes_left, left, __ATOMIC_RELAXED) == 0) {
        g->life.left_site = site;
        g->life.left_tid = t->tid;
    }
}

/* A scope that closed on another thread than it opened on (scope_end): left
 * out, counted, said at exit. The thread it opened on keeps it in its depth,
 * so that thread's scopes after it are one level deeper until a scope of
 * that thread around it closes (which then counts it as left). No lock:
 * this may run in a signal handler. */
SCOPEPROF__API void scopeprof__scope_moved(uint32_t site) {
    scopeprof__state *g = scopeprof__g;
    if (g && __atomic_fetch_add(&g->life.moved, 1, __ATOMIC_RELAXED) == 0) g->life.moved_site = site;
}

/* At exit: how many scopes were left, and where it was first seen; how
 * many closed on another thread; how many were too deep for the exit
 * table's levels (summary.h). Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__say_scopes_left(scopeprof__state *g) {
    uint64_t moved = __atomic_load_n(&g->life.moved, __ATOMIC_RELAXED);
    const scopeprof__siterec *r = moved ? scopeprof__site_find(g, g->life.moved_site) : NULL;
    if (moved)
        scopeprof__warn("scopeprof: %llu scope(s) closed on another thread than the one they opened on (untied "
                        "OpenMP tasks that the runtime moved; tied tasks, the default, stay), first '%s' at "
                        "%s:%u: left out; the scopes that thread opened after one are one level deeper%s",
                        (unsigned long long)moved, r ? r->name : "?", r ? r->file : "?", r ? r->line : 0,
                        r ? "" : " (no such scope: a jump into a block past its PROFILE_SCOPE, whose close "
                                 "then read an unset variable?)");
    if (g->life.deep)
        scopeprof__warn("scopeprof: %llu scope(s) were %u or more deep, past the levels the exit table keeps (deep "
                        "recursion, or a scope that never closes in a loop): the table counts their time as self "
                        "time of the nearest scope around them within those levels; `scopeprof table` on the trace "
                        "has them exact", (unsigned long long)g->life.deep, g->life.deep_at);
    uint64_t n = __atomic_load_n(&g->life.scopes_left, __ATOMIC_RELAXED);
    if (!n) return;
    r = scopeprof__site_find(g, g->life.left_site);
    scopeprof__warn("scopeprof: %llu scope(s) were left without closing (a longjmp or a computed goto out of them; a "
                    "scope that closed on another thread, as an untied OpenMP task that moved does, "
                    "which is left out; or a range whose PROFILE_END came while a scope opened inside "
                    "it was open, which counts as one; first found on thread %llu when '%s' at %s:%u closed): "
                    "they are in neither the table nor the trace, and their own time counts as the self "
                    "time of the scope around them (docs/DESIGN.md)",
                    (unsigned long long)n, (unsigned long long)g->life.left_tid,
                    r ? r->name : "?", r ? r->file : "?", r ? r->line : 0);
}

/* fork(): the parent's lock is held across the fork so the child inherits a
 * consistent registry. The child starts a fresh profile: the parent's events
 * and other threads are dropped (they are the parent's to write), the sites
 * are kept (call sites cache their ids), and the output gets the child's pid. */
/* Every lock of the registry is held across the fork, in the lock order
 * (state.h, "Locks"). A lock left held by another
 * thread would stay held forever in the child (the first PROFILE_ALLOC
 * there hung when the fork came while a thread held mem.lock). */
SCOPEPROF__INTERNAL void scopeprof__atfork_prepare(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    scopeprof__lock(g);
    pthread_mutex_lock(&g->reg.lock);
    pthread_mutex_lock(&g->buf.lock);
    pthread_mutex_lock(&g->mem.lock);
}

SCOPEPROF__INTERNAL void scopeprof__atfork_parent(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    pthread_mutex_unlock(&g->mem.lock);
    pthread_mutex_unlock(&g->buf.lock);
    pthread_mutex_unlock(&g->reg.lock);
    scopeprof__unlock(g);
}

/* The child's memory figures start at zero: its peak is what it allocates.
 * Blocks the parent recorded are still live in the child's copy of the
 * memory; their entries stay, marked, so that freeing one is neither an
 * event nor an unknown free. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__atfork_child_memory(scopeprof__state *g) {
    pthread_mutex_init(&g->mem.lock, NULL);
    for (uint32_t i = 0; i < g->mem.live_cap; i++)
        if (g->mem.live[i].ptr) g->mem.live[i].bytes = SCOPEPROF__INHERITED;
    memset(g->mem.cur, 0, sizeof g->mem.cur);
    memset(g->mem.peak, 0, sizeof g->mem.peak);
    g->mem.used = 0;
    g->mem.unknown_frees = 0;
    g->mem.unknown_free_site = 0;
}

SCOPEPROF__INTERNAL void scopeprof__atfork_child(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    pthread_mutex_init(&g->lock, NULL);
    pthread_mutex_init(&g->reg.lock, NULL);
    /* What prepare's scopeprof__lock held goes back, as its unlock would
     * give it: the signals (a child born with all of them blocked ignored
     * SIGTERM and Ctrl-C) and the thread's cancelability. */
    scopeprof__in_lock = 0;
    scopeprof__sigs_release(scopeprof__lock_unblock);
    pthread_setcancelstate(scopeprof__lock_cancel, NULL);
    /* No writer in the child: its threads write their chunks themselves. */
    scopeprof__writer_init_locks(g);
    g->wr.state = SCOPEPROF__WRITER_NEVER;
    g->wr.cpu_ns = 0; /* the parent's writer's, not the child's cost */
    if (g->wr.touching) { /* the parent's writer was touching it: ours to free */
        munmap(g->wr.touching, sizeof *g->wr.touching);
        g->wr.touching = NULL;
    }
    g->wr.paused = 0;
    g->buf.queued = 0;
    g->buf.self_writes = 0;
    scopeprof__atfork_child_memory(g);
    __atomic_store_n(&g->life.sig_pending, 0, __ATOMIC_RELAXED); /* the parent's signal */
    scopeprof__thread *self = (scopeprof__thread *)pthread_getspecific(g->key);
    /* Every chunk but the forking thread's current one goes to the spare list. */
    while (g->buf.full_head) {
        scopeprof__chunk *c = g->buf.full_head;
        g->buf.full_head = c->next;
        scopeprof__spare_push(g, c);
    }
    g->buf.full_tail = NULL;
    /* The other threads do not exist in the child: their buffers go to the
     * spare list and their state is freed (their GPU state, if any, is left:
     * no GPU runtime survives a fork). */
    for (scopeprof__thread *t = g->reg.threads, *next; t; t = next) {
        next = t->next;
        if (t == self) continue;
        if (t->chunk) scopeprof__spare_push(g, t->chunk);
        free(t->ranges);
        scopeprof__thread_release(g, t);
    }
    g->reg.threads = NULL;
    g->reg.nthreads = 0;
    if (self) {
        self->next = NULL;
        self->nqueued = 0; /* its queued chunks went to the spare list above */
        self->index = g->reg.nthreads++;
        self->tid = scopeprof__gettid();
        self->inherited = self->depth; /* the parent records them (scopeprof__open_own), */
        self->nranges = 0;             /* and its ranges: not closed and recorded here at exit */
        g->reg.threads = self;
        if (self->chunk) {
            self->cur = self->chunk->ev; /* the parent's events are not ours */
            self->chunk->first = 0;
        }
    }
    scopeprof__file_reset(g); /* closes the parent's descriptor: never ours to write */
    g->pid = (int)getpid();
    g->life.parent_pid = (int)getppid();
    if (g->out.path_is_default) {
        scopeprof__default_path(g); /* in the parent's directory (g->out.dir) */
    } else if (!g->out.no_output) {
        /* Explicit SCOPEPROF_OUTPUT: the parent keeps the path and its claim. */
        struct stat st;
        if (g->out.claim_fd >= 0 && fstat(g->out.claim_fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
            (uint64_t)st.st_ino == g->out.claim_ino)
            close(g->out.claim_fd);
        g->out.claim_fd = -1;
        if (g->sched.on) memcpy(g->out.path, g->sched.base_path, sizeof g->out.path); /* not the cycle's (same size) */
        scopeprof__pid_path(g);
    }
    if (g->sched.on) scopeprof__sched_base(g); /* the child's cycles: after its own path, not the parent's */
}

/* The scopes open now on thread t that are its own to record: in a forked
 * child, not those it inherited open (a server forks its workers inside a
 * scope, and they exit inside it: the parent records it). A child that
 * leaves them and then opens scopes it never closes is not counted exactly
 * (knowing when it leaves them would cost every close a compare). */
static inline uint32_t scopeprof__open_own(const scopeprof__thread *t) {
    uint32_t d = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
    return d > t->inherited ? d - t->inherited : 0;
}

/* The scopes open now on the live threads other than `skip` (their depths,
 * which their own threads move: scopeprof__depth_set), in *threads of them,
 * the first such in *first. Lock held (the thread list). */
SCOPEPROF__INTERNAL uint64_t scopeprof__open_scopes(scopeprof__state *g, const scopeprof__thread *skip,
                                                    uint32_t *threads, const scopeprof__thread **first) {
    uint64_t open = 0;
    for (const scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) {
        uint32_t d = t != skip && t->alive ? scopeprof__open_own(t) : 0;
        if (d && !(*threads)++) *first = t;
        open += d;
    }
    return open;
}

/* MEMORY chunk: peak and final net bytes per device used. No allocation. */
SCOPEPROF__INTERNAL void scopeprof__finalize(scopeprof__state *g) {
    if (!g->life.finalized) scopeprof__close_open_ranges(g, scopeprof__tls, "the program exited");
    scopeprof__lock(g);
    if (g->life.finalized) {
        scopeprof__unlock(g);
        return;
    }
    scopeprof__write_all_and_close(g);
    scopeprof__memsnap mem;
    scopeprof__mem_snapshot(g, &mem, 0);
    /* The job table printed at MPI_Finalize stands for rank 0's own; with
     * SCOPEPROF_SUMMARY=all each rank's own table says its rank (mpi.h). */
    char title[160];
    scopeprof__summary_print(g, &mem, g->sum.events != 0 && !g->job.table_printed,
                             scopeprof__rank_title(g, title, sizeof title), 1);
    pthread_mutex_lock(&g->buf.lock);
    uint64_t behind = g->buf.self_writes;
    pthread_mutex_unlock(&g->buf.lock);
    if (behind)
        scopeprof__warn("scopeprof: the background writer fell behind %llu time(s): recording "
                        "threads wrote a chunk themselves each time (nothing was lost)",
                        (unsigned long long)behind);
    scopeprof__say_scopes_left(g);
#if !defined(SCOPEPROF__MPI) && !defined(SCOPEPROF_NO_MPI)
    /* An MPI program whose implementation's file did not see <mpi.h>: none
     * of mpi.h was compiled, and nothing else would say so. Rank 0 (or a
     * singleton) says it, when the program called MPI_Init (MPI_Initialized
     * may be called after MPI_Finalize; a library that merely links MPI in
     * says nothing) and no other module's implementation took part in it
     * (the registry is the process's: a library's copy may finalize). */
    void *sym = g->out.rank <= 0 && !g->job.npts /* another module's MPI part ran */
                    ? dlsym((void *)0 /* RTLD_DEFAULT */, "PMPI_Initialized") : NULL;
    int (*initialized)(int *) = NULL, mpi_on = 0;
    memcpy(&initialized, &sym, sizeof sym); /* ISO C has no cast from an object pointer to a function's */
    if (initialized && initialized(&mpi_on) == 0 && mpi_on)
        scopeprof__warn("scopeprof: this program runs MPI, but the file that defines SCOPEPROF_IMPLEMENTATION did "
                        "not include <mpi.h> before scopeprof.h: no job table, no scopes of MPI calls, and the "
                        "ranks' clocks are aligned by their realtime clocks only (docs/MPI.md); include it there, "
                        "or define SCOPEPROF_MPI (SCOPEPROF_NO_MPI: without MPI on purpose)");
#endif
    /* A schedule that kept nothing because the run ended before or as its
     * first active step began: no file, no table; without this line,
     * nothing at all to say why. */
    int first_active = g->sched.skip_first + g->sched.wait + g->sched.warmup;
    if (g->sched.on && g->sched.cycle == 1 && !g->out.events_written && g->sched.step <= (uint64_t)first_active)
        scopeprof__warn("scopeprof: the run ended after %llu PROFILE_STEP call(s), before the schedule's first "
                        "active step was done (it comes after %d: skip_first=%d, wait=%d, warmup=%d): nothing was "
                        "recorded", (unsigned long long)g->sched.step, first_active, g->sched.skip_first,
                        g->sched.wait, g->sched.warmup);
    /* exit() (or MPI_Abort) called inside scopes of this thread: they never
     * close, and their starts live on its stack. */
    const scopeprof__thread *t = scopeprof__tls;
    if (t && scopeprof__open_own(t))
        scopeprof__warn("scopeprof: the program ended inside %u open scope(s) of thread %llu ('%s') (exit "
                        "or MPI_Abort called in them, or a range's END there): they are not in the trace or the table",
                        scopeprof__open_own(t), (unsigned long long)t->tid, t->name);
    /* Other threads still inside scopes (a worker's loop, a wait): those
     * scopes would close after the trace, so they are in neither. */
    uint32_t threads = 0;
    const scopeprof__thread *first = NULL;
    uint64_t open = scopeprof__open_scopes(g, t, &threads, &first);
    if (open)
        scopeprof__warn("scopeprof: %llu scope(s) were still open on %u other thread(s) when the program ended "
                        "(thread %llu ('%s') among them): a scope is recorded when it closes, so they are not in "
                        "the trace or the table", (unsigned long long)open, threads,
                        (unsigned long long)first->tid, first->name);
    scopeprof__unlock(g);
}

/* PROFILE_FINISH: what the exit does, now, for a process that ends without
 * it: _exit() (Redis's BGSAVE child, any forked child that must not run
 * its parent's atexit handlers) leaves no file otherwise. */
SCOPEPROF__ONCE SCOPEPROF__API void scopeprof__finish(void) {
    scopeprof__thread *t = scopeprof__tls;
    if (!scopeprof__g) return;
    if (t) scopeprof__close_open_ranges(scopeprof__g, t, "PROFILE_FINISH was called"), t->warned_end = 1; /* a later END */
    scopeprof__finalize(scopeprof__g);
}

/* ---- Signals -----------------------------------------------------------------
 * Terminating signals (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT): write the
 * trace, then let the signal do what it would have done (the exit status is
 * the same as without the profiler). Crashes (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT): the same, best effort. The exit table is not printed
 * (stdio is not async-signal-safe).
 *
 * The trace is written under the registry's lock, and a handler must never
 * wait for a lock that the thread it interrupted may hold. So:
 * - lock free (trylock): the handler writes, with write(2) only;
 * - held by the interrupted thread itself (its slow path is half done): the
 *   handler leaves the signal pending in the registry and returns; that
 *   thread finishes its slow path, and scopeprof__unlock writes the trace
 *   and re-raises the signal before anyone else gets the lock;
 * - held by another thread: the handler leaves the signal pending and waits
 *   (trylock, nanosleep) for the holder's unlock, which does the same;
 *   or it gets the lock and writes itself. After 10 s (a holder stuck in a
 *   write to a full pipe, say) it gives up, says so, and lets the signal act.
 * Crash signals cannot return to the faulting code: held by the thread
 * itself, the trace is given up (said on stderr). */
SCOPEPROF__INTERNAL int scopeprof__signal_deferrable(int sig) {
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE || sig == SIGQUIT;
}


/* The signals the trace is written on, where the program has no handler of
 * its own (scopeprof__install_signals), and their names for the line that
 * says so (a handler has no strsignal). */
static const int scopeprof__sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT,
                                      SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const char *const scopeprof__signames[] = {"SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGQUIT",
                                                  "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT"};

/* The trace, from a handler or at the unlock after one, on signal sig:
 * write(2) only. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__signal_write(scopeprof__state *g, int sig) {
    if (g->life.finalized) return;
    g->life.in_signal = 1;
    /* A write past `ulimit -f` must not kill with SIGXFSZ instead (see
     * scopeprof__xfsz_take_back). Held until the handler returns (the
     * kernel gives its mask back) or the signal acts. */
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, NULL);
    scopeprof__write_all_and_close(g);
    /* No event kept, no file (a schedule's wait or warm-up, say), or
     * SCOPEPROF_OUTPUT=none: the signal is then not ours to mention. A
     * file that could not be made or written is said (a handler cannot
     * say why: strerror is not for handlers). */
    const char *name = "a signal";
    for (size_t i = 0; i < sizeof scopeprof__sigs / sizeof *scopeprof__sigs; i++)
        if (scopeprof__sigs[i] == sig) name = scopeprof__signames[i];
    int written = scopeprof__trace_written(g);
    if (written || (g->out.events_written && !g->out.no_output)) {
        scopeprof__sig_say("scopeprof: ", name, written ? " received; trace written to '"
                                                        : " received; the trace could not be written to '");
        scopeprof__sig_say(g->out.path, written ? "' (the scopes open at the signal are not in it)\n" : "'\n", NULL);
    }
}

/* Let sig act as if we had never caught it: default action, unblocked in
 * this thread, raised. Returns only for a signal whose default is to go on. */
static inline void scopeprof__reraise(int sig) {
    sigset_t set;
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

SCOPEPROF__INTERNAL void scopeprof__signal_finish(scopeprof__state *g) {
    int sig = __atomic_exchange_n(&g->life.sig_pending, 0, __ATOMIC_ACQ_REL);
    if (!sig) return;
    scopeprof__signal_write(g, sig);
    scopeprof__reraise(sig); /* lock held: nothing is written after the END chunk */
}

SCOPEPROF__INTERNAL void scopeprof__on_signal(int sig) {
    static volatile sig_atomic_t busy;
    int saved_errno = errno; /* a deferred signal returns to the program */
    scopeprof__state *g = scopeprof__g;
    if (busy || !g || g->pid != (int)getpid()) {
        scopeprof__reraise(sig);
        errno = saved_errno;
        return;
    }
    busy = 1;
    if (pthread_mutex_trylock(&g->lock) == 0) {
        scopeprof__signal_write(g, sig);
        scopeprof__reraise(sig);
        pthread_mutex_unlock(&g->lock);
        return;
    }
    int deferrable = scopeprof__signal_deferrable(sig);
    if (scopeprof__lock_mine(g, 1)) {
        if (deferrable) {
            __atomic_store_n(&g->life.sig_pending, sig, __ATOMIC_RELEASE); /* see scopeprof__unlock */
            errno = saved_errno;
            return;
        }
        scopeprof__sig_say("scopeprof: crash inside the profiler's locked code; trace not "
                           "completed\n", NULL, NULL);
        scopeprof__reraise(sig);
        return;
    }
    if (deferrable) __atomic_store_n(&g->life.sig_pending, sig, __ATOMIC_RELEASE);
    for (int i = 0; i < 10000; i++) { /* 10 s */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (pthread_mutex_trylock(&g->lock) == 0) {
            /* The holder released it without finishing (it had checked
             * before we set the flag), or the signal is a crash. */
            __atomic_store_n(&g->life.sig_pending, 0, __ATOMIC_RELEASE);
            scopeprof__signal_write(g, sig);
            scopeprof__reraise(sig);
            pthread_mutex_unlock(&g->lock);
            return;
        }
    }
    scopeprof__sig_say("scopeprof: signal received while another thread held the profiler's lock "
                       "for 10 s; trace not completed\n", NULL, NULL);
    scopeprof__reraise(sig);
}

/* Install the handlers where the program has none (SIG_DFL), once. */
SCOPEPROF__INTERNAL void scopeprof__install_signals(scopeprof__state *g) {
    if (!g->cfg.signals) return;
    for (size_t i = 0; i < sizeof scopeprof__sigs / sizeof *scopeprof__sigs; i++) {
        struct sigaction old, sa;
        if (sigaction(scopeprof__sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = scopeprof__on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = (int)(SA_RESETHAND | SA_NODEFER); /* 0x80000000 > INT_MAX */
        sigaction(scopeprof__sigs[i], &sa, NULL);
    }
}

#ifdef __cplusplus
}
#endif
#endif /* survival.h */
