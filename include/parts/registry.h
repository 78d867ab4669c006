/* registry.h: finding or creating the process's one registry (shared by
 * every module), and what registers into it: sites, threads, the arena. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* The module's thread pointer and clock choice (declared in api.h, where
 * the hot path reads them). */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread scopeprof__thread *scopeprof__tls;
#if defined(__x86_64__) || defined(__i386__)
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread scopeprof__thread *scopeprof__tls_hot;
#endif
__attribute__((weak, visibility("hidden"))) int scopeprof__use_tsc = -1;


/* The module that creates the registry owns code the process keeps calling
 * (the thread-exit destructor, the fork and signal handlers): if it is a
 * library loaded with dlopen, it must never be unloaded. dladdr names its
 * file, and dlopen(RTLD_NOLOAD | RTLD_NODELETE) pins it; for the main program
 * this is a harmless no-op. dladdr is declared here under a private name
 * (bound to the real symbol) because <dlfcn.h> only declares it under
 * _GNU_SOURCE. */
typedef struct scopeprof__dlinfo {
    const char *fname;
    void *fbase;
    const char *sname;
    void *saddr;
} scopeprof__dlinfo;
extern int scopeprof__dladdr(const void *addr, scopeprof__dlinfo *info) __asm__("dladdr");

SCOPEPROF__INTERNAL void scopeprof__pin_module(void) {
    scopeprof__dlinfo info;
    /* Any address inside this module names it: a (hidden) variable's, as ISO
     * C has no conversion of a function pointer to `const void *`. */
    if (scopeprof__dladdr(&scopeprof__module_attached, &info) && info.fname && info.fname[0])
        dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* The registry when even it cannot be allocated: recording is off, but the
 * program's calls find a state to talk to. One per module; only the first
 * module's is ever used (it is published like an allocated one). */
__attribute__((weak, visibility("hidden"))) scopeprof__state scopeprof__state_fallback;

/* Out of memory: stop recording for good, say so once, and let the program
 * go on (it may cope with malloc failures; aborting it was worse). What was
 * recorded before is still written and summarised at exit. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__oom(scopeprof__state *g) {
    if (__atomic_exchange_n(&g->life.oom, 1, __ATOMIC_ACQ_REL)) return;
    scopeprof__warn("scopeprof: out of memory: recording stopped (what was recorded before is "
                    "kept); the program goes on");
}

/* Whether this process was made by clone() without fork() (and without
 * CLONE_VM): a copy of the parent's memory, registry included, but no fork
 * handler ran, so the registry still names the parent (g->pid) and holds
 * the parent's trace descriptor. Nothing of such a process is written (it
 * would land in the parent's trace): its scopes are dropped, said once
 * (issue 25: before, they were dropped without a word). Only fork() gives
 * a child a profile of its own. */
SCOPEPROF__INTERNAL int scopeprof__cloned(scopeprof__state *g) {
    int pid = (int)getpid();
    if (g->pid == pid) return 0;
    if (!__atomic_exchange_n(&g->life.warned_clone, 1, __ATOMIC_RELAXED))
        scopeprof__warn("scopeprof: process %d was made by clone() without fork() (from %d): its "
                        "scopes are not recorded (only fork() gives a child a profile of its own)",
                        pid, g->pid);
    return 1;
}

/* Memory for the recording paths that a PROFILE_SCOPE in the program's own
 * signal handler can reach (a site's first use, a thread's first scope, a new
 * buffer) comes from mmap, a system call, never from malloc: malloc is not
 * async-signal-safe, and a handler that interrupted it on the same thread
 * would call it again inside it (a deadlock on malloc's lock, or a corrupt
 * heap). Zeroed pages, like calloc's. Strict ISO modes hide MAP_ANONYMOUS:
 * there /dev/zero is mapped (open and close are async-signal-safe). */
static inline void *scopeprof__map(size_t n) {
    void *p;
#if defined(MAP_ANONYMOUS)
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#else
    int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
#endif
    return p == MAP_FAILED ? NULL : p;
}

/* Bump allocation from mapped blocks, registration lock held. What is
 * allocated here is never given back: site strings live as long as the
 * process, thread states are recycled by the registry
 * (scopeprof__thread_new). A block's unused tail is address space only
 * (never touched). */
#define SCOPEPROF__ARENA_BLOCK ((size_t)1 << 20)
/* LeakSanitizer scans the heap and globals, not our mappings: thread states
 * there hold the only pointers to some malloc'd blocks (a thread's range
 * stack, its GPU state), which it would report as leaks. Each block is
 * given to it as a root region; without a sanitizer the weak symbol is 0. */
__attribute__((weak)) void __lsan_register_root_region(const void *p, size_t size);
static inline void *scopeprof__arena_map(size_t n) {
    void *p = scopeprof__map(n);
    if (p && __lsan_register_root_region) __lsan_register_root_region(p, n);
    return p;
}
SCOPEPROF__INTERNAL void *scopeprof__arena_alloc(scopeprof__state *g, size_t n, size_t align) {
    size_t pad = (size_t)(-(uintptr_t)g->reg.arena & (align - 1));
    if (g->reg.arena && pad + n <= g->reg.arena_left) {
        char *p = g->reg.arena + pad;
        g->reg.arena = p + n;
        g->reg.arena_left -= pad + n;
        return p;
    }
    if (n >= SCOPEPROF__ARENA_BLOCK / 2) return scopeprof__arena_map(n); /* a block of its own */
    char *p = (char *)scopeprof__arena_map(SCOPEPROF__ARENA_BLOCK); /* page-aligned */
    if (!p) return NULL;
    g->reg.arena = p + n;
    g->reg.arena_left = SCOPEPROF__ARENA_BLOCK - n;
    return p;
}

/* A copy of s in the arena (see scopeprof__map). Registration lock held,
 * as for every arena allocation. */
static inline char *scopeprof__arena_strdup(scopeprof__state *g, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)scopeprof__arena_alloc(g, n, 1);
    if (d) memcpy(d, s, n);
    return d;
}


/* ---- Finding the registry --------------------------------------------------
 * One registry per process image, shared by every module. Modules that share
 * symbols (the files of one program, libraries linked at build time) could
 * agree through the linker, but a library loaded with dlopen (RTLD_LOCAL, the
 * default) into a program that exports nothing sees no symbol of the others.
 * So the first module to record leaves the registry's address in a page of
 * its own that every module can find: one page mapped privately from an
 * anonymous file (memfd_create) named "scopeprof-registry", which
 * /proc/self/maps lists as "/memfd:scopeprof-registry (deleted)"; later
 * modules read that list and the page (magic, layout, address), then check
 * the registry's own magic and layout.
 *
 * Why a mapping (issue 25). Before, the address was in an environment
 * variable, SCOPEPROF_INTERNAL_STATE: setenv at the first scope races with
 * every other thread's getenv (setenv is not thread-safe: a program whose
 * thread read its environment crashed in 17 of 100 runs), and the variable,
 * passed to every program the process ran, carried the 16 AT_RANDOM bytes
 * that seed the stack canary and the pointer guard (it was tagged with them
 * so that an exec'd image would not trust it). The other ways: a symbol
 * looked up with dlsym(RTLD_DEFAULT) misses RTLD_LOCAL modules; a name other
 * processes see (an abstract socket, a /dev/shm file keyed by the pid) can
 * be taken first by another user, and tells everyone which processes are
 * profiled; a descriptor at a known number is closed by daemons that close
 * 3..1023; prctl has no slot for an address. A mapping belongs to the one
 * address space it describes: an exec'd image starts without it, so it can
 * never trust its predecessor's address; a forked child has its own copy,
 * pointing at its own copy of the registry; no other process can see or
 * plant it; its descriptor is closed once mapped; and nothing of it leaves
 * the process. It costs one read of /proc/self/maps at each module's first
 * recording (without /proc, or without memfd_create, each module keeps a
 * registry, and a trace file, of its own). */
#define SCOPEPROF__REGMAP_NAME "scopeprof-registry"
typedef struct scopeprof__regmap {
    uint32_t magic, layout; /* the registry's, as a check before it is read */
    scopeprof__state *g;
} scopeprof__regmap;
/* Declared under a private name (bound to the real symbol, glibc 2.27 and
 * musl 1.1.20 on): <sys/mman.h> declares it only under _GNU_SOURCE. */
extern int scopeprof__memfd_create(const char *name, unsigned int flags) __asm__("memfd_create");
#define SCOPEPROF__MFD_CLOEXEC 1u

/* This address space's registry page, found in /proc/self/maps (open and read
 * only, no allocation), or NULL. One of another scopeprof version (its layout
 * differs) is returned when there is no other. */
static inline const scopeprof__regmap *scopeprof__regmap_find(void) {
    static const char tail[] = "/memfd:" SCOPEPROF__REGMAP_NAME " (deleted)";
    const size_t tl = sizeof tail - 1;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    const scopeprof__regmap *found = NULL;
    char buf[8192]; /* a line is an address range, a few numbers and a path (< 4096) */
    size_t have = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += (size_t)n;
        char *line = buf, *nl;
        while ((nl = (char *)memchr(line, '\n', (size_t)(buf + have - line))) != NULL) {
            if ((size_t)(nl - line) > tl && memcmp(nl - tl, tail, tl) == 0) {
                *nl = 0;
                const scopeprof__regmap *a = (const scopeprof__regmap *)(uintptr_t)strtoull(line, NULL, 16);
                /* The magic is stored last (release): the rest is complete. */
                if (a && __atomic_load_n(&a->magic, __ATOMIC_ACQUIRE) == SCOPEPROF__STATE_MAGIC &&
                    (!found || a->layout == SCOPEPROF__LAYOUT))
                    found = a;
            }
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1) have = 0; /* no line is that long: drop it */
    }
    close(fd);
    return found;
}

/* Map and fill the registry page for registry g (its creator, module lock
 * held). Read-only once written. Without it (no memfd_create, a seccomp
 * filter) g stays this module's. */
static inline void scopeprof__regmap_make(scopeprof__state *g) {
    int fd = scopeprof__memfd_create(SCOPEPROF__REGMAP_NAME, SCOPEPROF__MFD_CLOEXEC);
    if (fd < 0) return;
    void *p = MAP_FAILED;
    if (ftruncate(fd, 4096) == 0) p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return;
    scopeprof__regmap *a = (scopeprof__regmap *)p;
    a->g = g;
    a->layout = SCOPEPROF__LAYOUT;
    __atomic_store_n(&a->magic, SCOPEPROF__STATE_MAGIC, __ATOMIC_RELEASE); /* after g, complete */
    mprotect(p, 4096, PROT_READ);
}

/* Find or create the process's one registry (see "Finding the registry").
 * Two modules whose very first recordings run at the same moment on two
 * threads can each make one (each module has its own start-up lock): each
 * then writes a trace of its own. */
SCOPEPROF__INTERNAL scopeprof__state *scopeprof__state_get(void) {
    scopeprof__state *g = __atomic_load_n(&scopeprof__g, __ATOMIC_ACQUIRE);
    if (__builtin_expect(g != NULL, 1)) return g;
    /* Signals held, as under the registry's lock: a program's handler that
     * records would otherwise wait here for the start-up it interrupted. */
    sigset_t held, old;
    scopeprof__sig_hold(&held, &old);
    pthread_mutex_lock(&scopeprof__module_lock);
    if ((g = scopeprof__g) != NULL) {
        pthread_mutex_unlock(&scopeprof__module_lock);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return g;
    }
    int saved_errno = errno; /* the program's, which start-up must not change */
    int cancel; /* no cancellation point acts while a lock of ours is held */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    const scopeprof__regmap *a = scopeprof__regmap_find();
    if (a && a->layout == SCOPEPROF__LAYOUT && a->g->magic == SCOPEPROF__STATE_MAGIC &&
        a->g->layout == SCOPEPROF__LAYOUT)
        g = a->g;
    else if (a)
        scopeprof__warn("scopeprof: a module built from another scopeprof version is "
                        "loaded; it keeps a profile of its own");
    if (!g) {
        g = (scopeprof__state *)calloc(1, sizeof *g);
        int oom = !g;
        if (oom) g = &scopeprof__state_fallback; /* zeroed, like calloc's */
        g->magic = SCOPEPROF__STATE_MAGIC;
        g->layout = SCOPEPROF__LAYOUT;
        g->pid = (int)getpid();
        pthread_mutex_init(&g->lock, NULL);
        pthread_mutex_init(&g->reg.lock, NULL);
        pthread_mutex_init(&g->mem.lock, NULL);
        scopeprof__writer_init_locks(g);
        g->wr.main = scopeprof__writer_main;
        if (pthread_key_create(&g->key, scopeprof__thread_exit) != 0) oom = 1;
        g->buf.off_thread.cur = g->buf.off_slots;
        g->buf.off_thread.lim = g->buf.off_slots + sizeof g->buf.off_slots / sizeof *g->buf.off_slots;
        if (oom) scopeprof__oom(g);
        g->out.fd = -1;
        g->out.claim_fd = -1;
        scopeprof_agg_init(&g->sum.agg);
        scopeprof__read_env(g);
        g->clock.use_tsc = !g->cfg.clock_mono && scopeprof__tsc_invariant();
        {
            struct timespec rt;
            clock_gettime(CLOCK_REALTIME, &rt);
            uint64_t mono = scopeprof__mono_ns();
            g->clock.realtime_minus_mono =
                (int64_t)((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec) - (int64_t)mono;
        }
        scopeprof__clock_pair(g, &g->clock.ns0, &g->clock.tick0);
        scopeprof__use_tsc = g->clock.use_tsc; /* the calibration's scopes read the clock */
        if (g->cfg.compensate && !oom) scopeprof__overhead_measure(g);
        if (g->sched.on) {
            g->sched.cycle = 1;
            scopeprof__sched_start(g);
        }
        scopeprof__regmap_make(g);
        pthread_atfork(scopeprof__atfork_prepare, scopeprof__atfork_parent, scopeprof__atfork_child);
        scopeprof__install_signals(g);
        scopeprof__pin_module();
    }
    scopeprof__use_tsc = g->clock.use_tsc;
    if (!scopeprof__module_attached) {
        scopeprof__module_attached = 1;
        __atomic_add_fetch(&g->life.modules, 1, __ATOMIC_ACQ_REL);
    }
    __atomic_store_n(&scopeprof__g, g, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&scopeprof__module_lock);
    pthread_setcancelstate(cancel, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved_errno;
    return g;
}

/* When the last module that recorded goes away (process exit, or dlclose of
 * the last library), write everything and print the summary. One destructor
 * per module: it is weak, so the linker keeps one definition, but every
 * translation unit lists it, hence the module flag. */
__attribute__((weak, visibility("hidden"), destructor)) void scopeprof__module_fini(void) {
    if (!scopeprof__module_attached) return;
    scopeprof__module_attached = 0;
    scopeprof__state *g = scopeprof__g;
    if (g && !scopeprof__cloned(g) && __atomic_sub_fetch(&g->life.modules, 1, __ATOMIC_ACQ_REL) == 0)
        scopeprof__finalize(g);
}

/* Site `id` (1..nsites as read with acquire; see g->reg.site_blk). */
static inline const scopeprof__siterec *scopeprof__site_at(const scopeprof__state *g, uint32_t id) {
    return &g->reg.site_blk[(id - 1) / SCOPEPROF__SITE_BLOCK][(id - 1) % SCOPEPROF__SITE_BLOCK];
}
/* Site `id`, or NULL for 0 and ids not (yet) registered. No lock. */
static inline const scopeprof__siterec *scopeprof__site_find(const scopeprof__state *g, uint32_t id) {
    return id && id <= __atomic_load_n(&g->reg.nsites, __ATOMIC_ACQUIRE) ? scopeprof__site_at(g, id) : NULL;
}

/* Registration lock held. The record is complete before nsites counts it. */
SCOPEPROF__API uint32_t scopeprof__site_add(scopeprof__state *g, const char *name,
                                            const scopeprof_site *s) {
    uint32_t n = g->reg.nsites, b = n / SCOPEPROF__SITE_BLOCK;
    if (b >= SCOPEPROF__SITE_BLOCKS) return 0;
    if (!g->reg.site_blk[b]) {
        void *v = scopeprof__map(SCOPEPROF__SITE_BLOCK * sizeof(scopeprof__siterec));
        if (!v) return 0;
        g->reg.site_blk[b] = (scopeprof__siterec *)v;
    }
    scopeprof__siterec *r = &g->reg.site_blk[b][n % SCOPEPROF__SITE_BLOCK];
    /* Strings are copied so that a site stays valid after dlclose. */
    r->name = scopeprof__arena_strdup(g, name ? name : "");
    r->file = scopeprof__arena_strdup(g, s->file ? s->file : "");
    r->func = scopeprof__arena_strdup(g, s->func ? s->func : "");
    r->line = s->line;
    r->origin = s;
    if (!r->name || !r->file || !r->func) return 0; /* what was copied stays in the arena */
    __atomic_store_n(&g->reg.nsites, n + 1, __ATOMIC_RELEASE);
    return n + 1;
}

/* Site ids start at 1; 0 is returned only when out of memory, and then the
 * scope is recorded against site 0, which readers show as "<unknown>". */
SCOPEPROF__API uint32_t scopeprof__site_register(scopeprof_site *s) {
    scopeprof__state *g = scopeprof__state_get();
    if (!scopeprof__reg_enter(g)) return 0; /* site 0 this time; registered on a later use */
    uint32_t id = s->id;
    if (id == 0) {
        id = scopeprof__site_add(g, s->name, s);
        __atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
    }
    scopeprof__reg_unlock(g);
    return id;
}

SCOPEPROF__API uint32_t scopeprof__site_dyn(const scopeprof_site *callsite, const char *name) {
    scopeprof__state *g = scopeprof__state_get();
    if (!name) name = "(null)";
    uint64_t h = scopeprof__hash(name) ^ ((uint64_t)(uintptr_t)callsite * 0x9E3779B97F4A7C15ull);
    uint32_t id = 0;
    if (!scopeprof__reg_enter(g)) return 0;
    if (g->reg.nsites * 2 >= g->reg.dyn_cap) {
        uint32_t cap = g->reg.dyn_cap ? g->reg.dyn_cap * 2 : 1024;
        while (cap <= g->reg.nsites * 2) cap *= 2;
        uint32_t *t = (uint32_t *)scopeprof__map(cap * sizeof *t); /* zeroed */
        if (t) {
            for (uint32_t i = 0; i < g->reg.dyn_cap; i++) {
                uint32_t sid = g->reg.dyn_hash[i];
                if (!sid) continue;
                const scopeprof__siterec *r = scopeprof__site_at(g, sid);
                uint64_t hh = scopeprof__hash(r->name) ^
                              ((uint64_t)(uintptr_t)r->origin * 0x9E3779B97F4A7C15ull);
                uint32_t j = (uint32_t)hh & (cap - 1);
                while (t[j]) j = (j + 1) & (cap - 1);
                t[j] = sid;
            }
            if (g->reg.dyn_hash) munmap(g->reg.dyn_hash, g->reg.dyn_cap * sizeof *t);
            g->reg.dyn_hash = t;
            g->reg.dyn_cap = cap;
        }
    }
    if (g->reg.dyn_cap) {
        uint32_t j = (uint32_t)h & (g->reg.dyn_cap - 1);
        for (; g->reg.dyn_hash[j]; j = (j + 1) & (g->reg.dyn_cap - 1)) {
            const scopeprof__siterec *r = scopeprof__site_at(g, g->reg.dyn_hash[j]);
            if (r->origin == callsite && strcmp(r->name, name) == 0) {
                id = g->reg.dyn_hash[j];
                break;
            }
        }
        if (!id) {
            id = scopeprof__site_add(g, name, callsite);
            if (id) g->reg.dyn_hash[j] = id;
        }
    }
    scopeprof__reg_unlock(g);
    return id;
}

static inline uint64_t scopeprof__gettid(void) {
#ifdef SYS_gettid
    return (uint64_t)syscall(SYS_gettid); /* (declared: state.h) */
#else
    return (uint64_t)(uintptr_t)pthread_self();
#endif
}

/* The calling thread's name (pthread_setname_np sets the same). prctl needs
 * no feature macro, unlike pthread_getname_np. */
static inline void scopeprof__self_name(char name[64]) {
    char buf[17] = "";
    if (prctl(PR_GET_NAME, buf, 0, 0, 0) == 0) snprintf(name, 64, "%s", buf);
}

/* A thread's state, zeroed: a reaped thread's if there is one, else a new
 * one from the arena (no malloc: this may run in a signal handler). A reused
 * state keeps its summary slot, so the summary's per-thread memory is bounded
 * by the most thread states that ever existed at once (threads alive, plus
 * threads gone whose events are not written yet), not by the threads ever
 * started. Registration lock held. */
SCOPEPROF__INTERNAL scopeprof__thread *scopeprof__thread_new(scopeprof__state *g) {
    scopeprof__thread *t = g->reg.thread_free;
    uint32_t slot;
    if (t) {
        g->reg.thread_free = t->next;
        slot = t->slot;
    } else {
        /* Cache-line aligned: the hot fields (cur, lim, depth) lead the
         * struct, so no two threads' hot paths ever write the same line. */
        t = (scopeprof__thread *)scopeprof__arena_alloc(g, sizeof *t, 64);
        if (!t) return NULL;
        slot = g->reg.nslots++;
    }
    memset(t, 0, sizeof *t);
    t->slot = slot;
    return t;
}

/* A state no thread uses any more goes back for reuse. Registration lock
 * held. */
static inline void scopeprof__thread_release(scopeprof__state *g, scopeprof__thread *t) {
    t->next = g->reg.thread_free;
    g->reg.thread_free = t;
}

/* The thread list's head, for a walk under the registry lock: a thread's
 * first scope pushes its state there under `reg` alone. */
static inline scopeprof__thread *scopeprof__threads_head(scopeprof__state *g) {
    return __atomic_load_n(&g->reg.threads, __ATOMIC_ACQUIRE);
}

/* First scope of a thread in this module: adopt the thread's state if another
 * module created it, else create and register it. */
SCOPEPROF__API scopeprof__thread *scopeprof__thread_attach(void) {
    scopeprof__state *g = scopeprof__state_get();
    if (__atomic_load_n(&g->life.oom, __ATOMIC_ACQUIRE)) return scopeprof__tls_set(&g->buf.off_thread);
    scopeprof__thread *t = (scopeprof__thread *)pthread_getspecific(g->key);
    if (t) return scopeprof__tls_set(t);
    if (scopeprof__lock_mine(g, 0)) { /* a handler: no allocation, no lock; not kept */
        scopeprof__reentered(g);
        return &g->buf.off_thread;
    }
    scopeprof__writer_start(g);
    /* No chunk yet (cur == lim): the first event takes one in chunk_next,
     * which keeps to the budget as for any other chunk (20000 short threads
     * each taking a fresh one grew memory past it). */
    char name[64] = "";
    scopeprof__self_name(name);
    if (!scopeprof__reg_enter(g)) return &g->buf.off_thread;
    t = scopeprof__thread_new(g);
    if (!t) {
        scopeprof__reg_unlock(g);
        scopeprof__oom(g);
        return scopeprof__tls_set(&g->buf.off_thread);
    }
    t->tid = scopeprof__gettid();
    t->alive = 1;
    memcpy(t->name, name, sizeof name);
    t->index = g->reg.nthreads++;
    t->next = g->reg.threads;
    __atomic_store_n(&g->reg.threads, t, __ATOMIC_RELEASE); /* walked without `reg` */
    scopeprof__reg_unlock(g);
    pthread_setspecific(g->key, t);
    return scopeprof__tls_set(t);
}

/* scopeprof__scope_clock's other case (api.h): the clock where it is read
 * out of line, or 0 for a scope that moved to another thread (said at
 * exit). A clock that reads 0 is read as 1. */
SCOPEPROF__API uint64_t scopeprof__scope_clock_slow(scopeprof__thread *t, uint32_t site) {
    uint64_t end = scopeprof__ticks();
    if (t == scopeprof__tls) return end ? end : 1;
    scopeprof__scope_moved(site);
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* registry.h */
