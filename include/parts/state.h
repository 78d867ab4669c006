/* state.h: the recording implementation (PROFILE_ENABLE) starts here. The
 * process's one registry, made of one sub-struct per part, each saying which
 * lock guards it; the locks and their one order. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#include <dlfcn.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#if !defined(CLOCK_MONOTONIC) || !defined(O_CLOEXEC) || !defined(SA_RESETHAND)
#error "scopeprof.h: POSIX.1-2008 is hidden in the file that defines SCOPEPROF_IMPLEMENTATION (strict -std=c99/c11/c17 and a system header included before scopeprof.h, or the file's own feature macro asking for less, as Lua's _XOPEN_SOURCE 600): put the implementation in a file of its own, include scopeprof.h before the system headers and feature macros there (with MPI: <mpi.h>, then scopeprof.h, then the rest), or compile it with -D_POSIX_C_SOURCE=200809L"
#undef SCOPEPROF__IMPL /* one error, not a page: the rest is left out */
#endif
/* With MPI (mpi.h): the implementation's file saw <mpi.h> (MPI_VERSION, or
 * Open MPI's OMPI_MAJOR_VERSION) or defines SCOPEPROF_MPI. */
#if !defined(SCOPEPROF_NO_MPI) && (defined(SCOPEPROF_MPI) || defined(MPI_VERSION) || defined(OMPI_MAJOR_VERSION))
#define SCOPEPROF__MPI 1
#endif
/* syscall(2), for threads' kernel ids: glibc's <unistd.h> declares it only
 * under __USE_MISC (no feature macro, _DEFAULT_SOURCE, _GNU_SOURCE), and a
 * file that set _XOPEN_SOURCE or _POSIX_C_SOURCE itself (pigz does) has it
 * all the same in the C library. Before, such a file's threads were named
 * by pthread_self's address, which perf, top -H and gdb do not show. (g++
 * always defines _GNU_SOURCE.) */
#if defined(__GLIBC__) && !defined(__USE_MISC) && !defined(__cplusplus)
extern long syscall(long, ...);
#endif
#endif
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON

#ifdef __cplusplus
extern "C" {
#endif

/* 4094 slots: with the chunk's 24-byte head, 8 bytes short of 16 pages, so
 * the chunk fills its mapping (4096 slots took a 17th page for 24 bytes:
 * 6% of chunk memory, and a page fault a chunk). */
#ifndef SCOPEPROF_EVENTS_PER_CHUNK
#define SCOPEPROF_EVENTS_PER_CHUNK 4094
#endif


struct scopeprof__chunk {
    scopeprof__chunk *next; /* in the full queue or the spare list */
    scopeprof__thread *thread;
    uint32_t count; /* events, once the chunk is queued */
    uint32_t first; /* events before this one were already written */
    scopeprof__slot ev[SCOPEPROF_EVENTS_PER_CHUNK]; /* records; count and first in slots */
};
typedef char scopeprof__chunk_holds_a_long_record[SCOPEPROF_EVENTS_PER_CHUNK >= 2 ? 1 : -1];

typedef struct scopeprof__siterec {
    char *name, *file, *func;
    uint32_t line;
    const scopeprof_site *origin; /* for interning dynamic names */
} scopeprof__siterec;

typedef struct scopeprof__live { /* a live allocation */
    uintptr_t ptr;
    int64_t bytes;
    uint32_t dev;
} scopeprof__live;

/* Sites live in blocks of SCOPEPROF__SITE_BLOCK records, mapped as needed,
 * up to SCOPEPROF__SITE_BLOCKS blocks (16.7M sites; past that a new site is
 * recorded as site 0, "<unknown>", as when out of memory). */
#define SCOPEPROF__SITE_BLOCK 4096u
#define SCOPEPROF__SITE_BLOCKS 4096u

/* The writer sends up to this many queued chunks to the file in one writev
 * (writer.h, scopeprof__write_some). Each write(2) has a fixed cost beside
 * its copy: 64 KiB at a time cost the kernel 3.35 ns per 16-byte record on
 * this VM, 256 KiB 2.43, 1 MiB 2.2 (session 14), and the checks before each
 * write (getpid, fstat) are made once per call. It is also how many chunks
 * the writer sums under the registry lock at a stretch. */
#define SCOPEPROF__BATCH 4u

/* What a thread's scopes closed at one depth hold for their parent, until
 * it closes (summary.h): their durations (ticks) and number, the scopes
 * nested in them, the earliest start and latest end among them, and (rare)
 * their GPU time (ns) and memory. All zero when empty, and emptied by the
 * parent that takes them: not_start holds ~(the earliest start), so that
 * the empty level's 0 is later than any start. */
typedef struct scopeprof__level {
    int64_t sum;
    uint64_t not_start, max_end;
    uint64_t nested;                 /* scopes closed inside them, at any depth */
    uint64_t nested_short, n_short; /* short ones (compensation's class): nested, and of the scopes */
    uint32_t n, rare;
    int64_t gpu_ns;
    int64_t mem_direct[2], mem_kids[2];
    int64_t unused_[4]; /* 128 bytes in all: the writer finds a level with a shift */
} scopeprof__level;
typedef struct scopeprof__levels { /* one thread slot's, by depth */
    scopeprof__level *lv;
    uint32_t cap, top; /* top: the deepest level that may hold something (those past it are empty) */
} scopeprof__levels;

typedef struct scopeprof__steprec { /* a finished step, in ticks */
    uint64_t n, start, end;
} scopeprof__steprec;

/* The one registry of a process. Every module (executable, shared library)
 * that includes this header reaches the same instance (see scopeprof__state).
 * `magic`/`layout` guard against modules built from different versions. */
#define SCOPEPROF__STATE_MAGIC 0x53505253u /* "SRPS" */
/* Modules agree on the registry only if they were built from the same shared
 * structs: ABI is bumped on any change to them (the GPU backend's per-thread
 * state included), and the sizes catch a forgotten bump. */
#define SCOPEPROF__ABI 28u /* 28: out.left_base, stranded_base, life.stranded (END's missing scopes, format 5.2), a thread's inherited scopes (fork); 27: life.deep, life.deep_at; 26: cfg.clock_mono, out.created; 25: wr.cpu_ns; 24: a level and a site's sums 128 bytes (their sizes now in the layout too), life.moved and moved_site; 23: out.create_err; 22: out.write_err; 21: the writer polls while chunks come: wr.asleep, wr.polled, wr.looked, buf.chunks_queued; 20: compensation in two classes: clock.comp_short_*, levels' nested_short and n_short; 19: a level's not_start and max_end, all zeros when empty; 18: out.batch_*, a drain's chunks in one writev; 17: one spare list (buf.spare, nspare) for the free and ready lists; 16: life.ending; 15: a thread's name as written (name_written, name_file, name_read_ns), out.files; 14: the summary's sums in ticks, rows' unit sums (format 4); 13: the exit summary as site sums; the job (ranks and clocks, mpi.h); and (12, issue 25) found through a mapping, not the environment; cfg.secure, out.dir, life.warned_clone and scopes_left; 11: the registry in sub-structs, one per part; 10: the registration lock, sites in fixed blocks; 9: overhead calibration (8: the background writer's chunk lock and lists, mapped records, reused thread states; 6: signal, fd, oom, thread fields; 5: the exit summary's per-thread level stacks; 4: GPU pools per device) */
#define SCOPEPROF__LAYOUT                                                                  \
    (SCOPEPROF__ABI * 1000003u + (uint32_t)sizeof(scopeprof__state) * 131u +                \
     (uint32_t)sizeof(scopeprof__thread) * 7u + SCOPEPROF_EVENTS_PER_CHUNK +                \
     (uint32_t)sizeof(scopeprof__level) * 11u + (uint32_t)sizeof(scopeprof__sitesum) * 13u)
/* ---- Locks -----------------------------------------------------------------
 * Four mutexes guard the registry. THE LOCK ORDER, everywhere (fork's prepare
 * handler takes all four in it): lock, then reg.lock, then buf.lock, then
 * mem.lock. Each sub-struct below names the lock that guards it.
 * - lock      (scopeprof__lock): the slow paths: the trace file, the summary,
 *             steps and schedules, what the writer drains. Held across
 *             malloc and write(2). Signals are held while it is held.
 * - reg.lock  (scopeprof__reg_lock): registration of sites and threads. Its
 *             holders never call malloc, take another lock or write: a signal
 *             handler's scope may need it in a thread it interrupted inside
 *             malloc, while the writer holds `lock` and waits in malloc.
 * - buf.lock  the chunk lists: a recording thread takes only this one, for a
 *             few pointer moves, to trade a full chunk for an empty one.
 * - mem.lock  the live-allocation map and memory totals (PROFILE_ALLOC).
 * The modules' own locks (scopeprof__module_lock, the GPU backend's) are
 * never held while any of these is taken. */
typedef struct scopeprof__state {
    uint32_t magic, layout;
    pthread_mutex_t lock; /* see "Locks" */
    pthread_key_t key;    /* per-thread state shared by all modules */
    int pid;
    /* Configuration (env.h): set when the registry is made, read without a
     * lock after. */
    struct {
        int summary, summary_all; /* SCOPEPROF_SUMMARY: 0, 1, all */
        int row_limit;
        scopeprof_sort sort;
        int group_shape; /* SCOPEPROF_GROUP_BY=shape: rows per name and input shapes */
        int signals;    /* SCOPEPROF_SIGNALS: flush on SIGINT/SIGTERM/crashes */
        int compensate; /* SCOPEPROF_COMPENSATE */
        int clock_mono; /* SCOPEPROF_CLOCK=monotonic: no TSC */
        int flush_ms;   /* SCOPEPROF_FLUSH_MS: the writer writes at least this often */
        size_t budget;  /* SCOPEPROF_BUFFER_MB, in bytes */
        char prog[256]; /* program name, read once at start */
        int secure;     /* a privileged process (AT_SECURE): nothing read, nothing written */
    } cfg;
    /* The clock (clock.h): set when the registry is made; ns_per_tick once,
     * under `lock`, at the first write. comp_*: what recording one scope
     * costs, in ticks (0 with SCOPEPROF_COMPENSATE=0): inside its own
     * interval and outside it in its parent's, for a scope with work in it
     * and (comp_short_*) for a short one: one under comp_short_below. */
    struct {
        int use_tsc;
        uint64_t tick0, ns0;  /* calibration start (ticks, CLOCK_MONOTONIC ns) */
        double ns_per_tick;   /* 0 until calibrated */
        int64_t realtime_minus_mono;
        double comp_inside_ticks, comp_outside_ticks, comp_short_inside_ticks, comp_short_outside_ticks;
        uint64_t comp_short_below;
    } clock;
    /* Registration (registry.h), under reg.lock. Sites, id = index + 1, in
     * blocks that never move (scopeprof__site_at): readers take no lock; a
     * site is complete before nsites (atomic, release) counts it. Threads are
     * pushed at the head under reg.lock (an atomic store, after the state is
     * complete), walked and unlinked under `lock` (an unlink also takes
     * reg.lock). The arena: mapped memory for what a recording can need in a
     * signal handler (scopeprof__arena_alloc): the unused rest of its block. */
    struct {
        pthread_mutex_t lock;
        scopeprof__siterec *site_blk[SCOPEPROF__SITE_BLOCKS];
        uint32_t nsites;
        uint32_t *dyn_hash, dyn_cap; /* name+callsite -> site id, for _DYN */
        scopeprof__thread *threads;
        uint32_t nthreads;
        scopeprof__thread *thread_free; /* states of reaped threads, for reuse */
        uint32_t nslots;                /* thread states ever made: the summary's slots */
        char *arena;
        size_t arena_left;
    } reg;
    /* Chunks (buffers.h), under buf.lock: the full queue, the spare list
     * (written chunks and those the writer touched ahead), and t->chunk /
     * t->cur switches. Out of memory,
     * threads without a buffer write into off_slots (never read), threads
     * without a state use off_thread. */
    struct {
        pthread_mutex_t lock;
        scopeprof__chunk *full_head, *full_tail;
        scopeprof__chunk *spare; /* empty chunks with their pages present: written ones, touched ones */
        uint32_t nspare;
        size_t bytes;          /* chunk memory held */
        size_t queued;         /* bytes in the full queue */
        size_t peak_bytes;     /* most chunk memory held at once */
        uint64_t self_writes;  /* chunks recording threads wrote because the writer was behind */
        size_t chunks_queued;  /* ever: whether any came since the writer's last look */
        scopeprof__slot off_slots[2 + (SCOPEPROF_SHAPE_MAX_WORDS + 1) / 2]; /* the longest record */
        scopeprof__thread off_thread;
    } buf;
    /* The background writer (writer.h): state and wake under buf.lock. */
    struct {
        int state;  /* SCOPEPROF__WRITER_*: none yet, running, never in this process */
        int up;     /* the thread runs its own code (scopeprof__writer_start) */
        int paused; /* a cycle callback runs with `lock` released */
        int asleep; /* a thread wakes it when work is due (it sleeps till its timed flush, waits for the clock rate, or mmap failed) */
        size_t looked; /* buf.chunks_queued at its last look */
        int polled; /* it polls: a look writes the queue once a batch is there (cleared once it wrote) */
        pthread_cond_t wake; /* the writer sleeps on it, under buf.lock */
        scopeprof__chunk *touching; /* the chunk it is touching (set under `lock`) */
        uint64_t cpu_ns; /* its thread's CPU time at its last look (the exit's own-cost line) */
        void *(*main)(void *); /* of the module that made the state (pinned) */
    } wr;
    /* The trace file (file.h), under `lock`. fd: -1 not open yet, -2 failed
     * or disabled. fd_dev/fd_ino tell our file from one of the program's that
     * got the same descriptor number (scopeprof__fd_ours); fd_path is its
     * absolute path, to reopen it. claim_fd holds the claim on an explicit
     * path (scopeprof__claim_output), claim_ino its socket's inode. dir: the
     * working directory at the first scope, where default names live. What
     * was written of each kind, for the next chunk: *_written. */
    struct {
        int fd;
        int no_output; /* SCOPEPROF_OUTPUT=none */
        int path_is_default;
        char dir[4096];
        int claim_fd;
        uint64_t claim_ino;
        uint64_t fd_dev, fd_ino;
        char fd_path[4096];
        char path[4096];
        int rank; /* -1: unknown */
        uint64_t events_written;
        uint64_t left_base, stranded_base; /* life.scopes_left, .stranded when this file began: END counts since */
        uint32_t sites_written, gpu_names_written, steps_written;
        uint32_t files; /* files opened: a thread's name_file names the one its name went to */
        int write_err;  /* why this file's writing stopped (errno; -1: a short write; -2: its path
                         * names another file now, scopeprof__fd_check); 0: it did not */
        int create_err; /* the last failure to create a trace that was said (errno; -1: names taken) */
        int created;    /* the current file was created (scopeprof__trace_written) */
        /* EVENTS chunks held to go out in one writev (writer.h,
         * scopeprof__write_some): while batch_on, each one's header and
         * prefix, and its pieces (those, then the records in the queued
         * chunk's own memory). Any other write sends them first. */
        uint32_t batch_on, batch_n;
        unsigned char batch_head[SCOPEPROF__BATCH][SCOPEPROF_CHUNK_HEADER_SIZE + 8];
        struct iovec batch_v[2 * SCOPEPROF__BATCH];
    } out;
    /* The exit summary (summary.h), fed as chunks are written, under
     * `lock`: sums per site and per thread slot's depth, folded into the
     * table's rows (agg) when it is printed. */
    struct {
        scopeprof_agg agg;
        scopeprof__sitesum *site; /* by site id */
        uint32_t site_cap;
        uint32_t *order, norder, order_cap; /* site ids in first-seen order */
        struct scopeprof__shapesum *shaped; /* per site and input shapes (summary.h) */
        uint32_t nshaped, shaped_cap;
        uint32_t *shaped_hash, shaped_hcap;
        scopeprof__levels *thr;             /* by thread slot */
        uint32_t thr_cap;
        uint64_t events;
        int has_gpu, has_mem, has_gpu_mem;
        uint32_t step_first; /* sched.steps from here on are the file's (its ProfilerStep* row) */
    } sum;
    /* Memory (steps.h), under mem.lock: live allocations (pointer -> bytes)
     * and per-device totals; used: bit mask of devices. */
    struct {
        pthread_mutex_t lock;
        scopeprof__live *live;
        uint32_t nlive, live_cap;
        int64_t cur[64], peak[64];
        uint64_t unknown_frees;
        uint32_t unknown_free_site, used;
    } mem;
    /* Steps and the schedule (steps.h), under `lock`. */
    struct {
        uint64_t step;        /* steps completed */
        uint64_t step_start;  /* tick the current step began */
        scopeprof__steprec *steps;
        uint32_t nsteps, steps_cap;
        int on;               /* a schedule is set */
        int skip_first, wait, warmup, active, repeat;
        int window;           /* recording window open (schedule only) */
        uint64_t win_start;   /* tick */
        int cycle;            /* cycles written */
        char base_path[4096]; /* the path cycle files are named after */
        scopeprof_cycle_fn cycle_fn;
        void *cycle_user;
    } sched;
    /* GPU (gpu.h): the backend of the module that ran the first GPU scope
     * fills these, under `lock`. take hands over up to n GPU records of a
     * thread, in close order, waiting for the GPU where needed (only ever at
     * a write); ready says whether its next n GPU scopes are finished (never
     * waits). named: bit mask of devices in names. */
    struct {
        uint32_t (*take)(struct scopeprof__state *g, scopeprof__thread *t,
                         scopeprof_gpu_record *out, uint32_t n);
        int (*ready)(struct scopeprof__state *g, scopeprof__thread *t, uint32_t n);
        char names[16][64];
        uint32_t named;
    } gpu;
    /* Life (survival.h, registry.h): atomics. sig_pending: a terminating
     * signal whose handler found `lock` held: whoever releases it next writes
     * the trace and lets it act (scopeprof__unlock). oom: out of memory
     * (scopeprof__oom), recording has stopped for good; the program goes on. */
    struct {
        int modules, finalized;
        int ending;    /* the last write (scopeprof__write_all_and_close) is under way */
        int in_signal; /* writing from a signal handler: no malloc, no stdio */
        int sig_pending;
        int oom;
        int warned_reentry; /* scopeprof__reentered said it */
        int warned_clone;   /* scopeprof__cloned said it (in the clone's copy) */
        uint64_t scopes_left;   /* scopes never closed (a longjmp out of them): said at exit */
        uint64_t stranded;      /* PROFILE_ENDs while a scope opened inside the range was open: its
                                 * level stays counted (scopes_left, open scopes) but is no scope lost */
        uint64_t deep;          /* scopes deeper than the summary's levels (scopeprof__sum_deep), every cycle's: said at exit */
        uint32_t deep_at;       /* the shallowest depth of those */
        uint32_t left_site;     /* the first scope that found some, and its thread */
        uint64_t left_tid;
        uint64_t moved;         /* scopes that closed on another thread (scope_end): said at exit */
        int parent_pid;         /* a forked child's parent (its exit table's title says it) */
        uint32_t moved_site;    /* the first of them */
    } life;
    /* The job (mpi.h), under `lock`: what MPI said (rank, size: 0 when not
     * an MPI job) and the clock offsets to rank 0 measured at MPI_Init
     * (pt[0]) and MPI_Finalize (pt[1]), which every CLOCK chunk carries;
     * table_printed: the job table stood for rank 0's own at exit. */
    struct {
        int rank, size;
        uint32_t npts;
        struct {
            uint64_t local_ns; /* this process's CLOCK_MONOTONIC then */
            int64_t offset_ns; /* rank 0's clock minus this one's */
            uint64_t rtt_ns;   /* the best round trip: the offset is within half of it */
        } pt[2];
        int table_printed;
    } job;
} scopeprof__state;

/* Module-local cache of the shared state pointer. */
__attribute__((weak, visibility("hidden"))) scopeprof__state *scopeprof__g;
__attribute__((weak, visibility("hidden"))) int scopeprof__module_attached;
__attribute__((weak, visibility("hidden"))) pthread_mutex_t scopeprof__module_lock = PTHREAD_MUTEX_INITIALIZER;


static inline void scopeprof__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void scopeprof__warn(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    /* write(2), not stdio: safe from any context, never interleaves oddly. */
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

/* Releasing the registry's lock is where a signal that arrived while it was
 * held gets its trace written (see scopeprof__on_signal): under the lock,
 * before any other thread can take it. Every slow path unlocks through here. */
SCOPEPROF__INTERNAL void scopeprof__signal_finish(scopeprof__state *g);
/* Set while this thread takes, holds or releases the registry's lock, for a
 * signal handler on it that records: it must not take the lock (see
 * scopeprof__lock_mine). Module-local, as scopeprof__tls. */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__in_lock;
/* Signals (1-64) this thread had deliverable when it took the lock: they are
 * blocked while it holds it, so no handler of the program (a PROFILE_SCOPE
 * in it would need the lock for a new buffer) nor ours (it would write a
 * half-updated registry) runs inside a locked section; a process-directed
 * signal goes to another thread meanwhile, a thread-directed one waits for
 * the unlock. Faults stay deliverable: blocked, they would kill. */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread uint64_t scopeprof__lock_unblock;
/* Block every signal but the faults; `all` gets the set blocked, `old` the
 * mask before. */
static inline void scopeprof__sig_hold(sigset_t *all, sigset_t *old) {
    sigfillset(all);
    sigdelset(all, SIGSEGV), sigdelset(all, SIGBUS), sigdelset(all, SIGFPE);
    sigdelset(all, SIGILL), sigdelset(all, SIGTRAP), sigdelset(all, SIGSYS);
    sigdelset(all, SIGABRT);
    pthread_sigmask(SIG_BLOCK, all, old);
}
/* Set in the background writer, which blocks every signal for good: its
 * holds need no system call (it took two per lock, two per chunk). */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__sigs_all_held;
/* The same; returns the signals that were deliverable (as a bit mask). */
static inline uint64_t scopeprof__sigs_hold(void) {
    if (scopeprof__sigs_all_held) return 0;
    sigset_t all, old;
    scopeprof__sig_hold(&all, &old);
    uint64_t was = 0;
    for (int sig = 1; sig <= 64; sig++)
        if (sigismember(&all, sig) == 1 && sigismember(&old, sig) == 0) was |= 1ull << (sig - 1);
    return was;
}
static inline void scopeprof__sigs_release(uint64_t was) {
    if (!was) return; /* none to give back */
    sigset_t set;
    sigemptyset(&set);
    for (int sig = 1; sig <= 64; sig++)
        if (was >> (sig - 1) & 1) sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
/* Take mutex m with this thread's signals held, marking *in meanwhile and
 * keeping in *unblock the signals to give back and in *cancel the thread's
 * cancelability (the registry's lock and the registration lock each have
 * their own). Cancellation is off while the lock is held: write(2), open,
 * close, read and stderr's stdio are cancellation points, and a thread
 * cancelled in one of them (pthread_cancel) would end with the lock held,
 * hanging every thread that needs it, the exit included; cancelled in
 * code of ours, with signals held, it would also keep them held. A request
 * made meanwhile acts at the program's next cancellation point. */
static inline void scopeprof__hold(pthread_mutex_t *m, int *in, uint64_t *unblock, int *cancel) {
    int was_cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &was_cancel);
    uint64_t was = scopeprof__sigs_hold();
    *in = 1;
    pthread_mutex_lock(m);
    *unblock = was;
    *cancel = was_cancel;
}
static inline void scopeprof__release(pthread_mutex_t *m, int *in, const uint64_t *unblock,
                                      const int *cancel) {
    uint64_t was = *unblock;
    int was_cancel = *cancel;
    pthread_mutex_unlock(m);
    *in = 0;
    scopeprof__sigs_release(was);
    pthread_setcancelstate(was_cancel, NULL);
}
/* The cancelability this thread had when it took the registry's lock. */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__lock_cancel;
static inline void scopeprof__lock(scopeprof__state *g) {
    scopeprof__hold(&g->lock, &scopeprof__in_lock, &scopeprof__lock_unblock, &scopeprof__lock_cancel);
}
static inline void scopeprof__unlock(scopeprof__state *g) {
    if (__builtin_expect(__atomic_load_n(&g->life.sig_pending, __ATOMIC_ACQUIRE) != 0, 0))
        scopeprof__signal_finish(g);
    scopeprof__release(&g->lock, &scopeprof__in_lock, &scopeprof__lock_unblock, &scopeprof__lock_cancel);
}

/* Pieces of a message to stderr with write(2) alone (signal handlers). */
static inline void scopeprof__sig_say(const char *a, const char *b, const char *c) {
    ssize_t w = write(2, a, strlen(a));
    if (b) w = write(2, b, strlen(b));
    if (c) w = write(2, c, strlen(c));
    (void)w;
}

/* Whether the calling thread holds the registry's lock (or is taking or
 * releasing it): then it is a signal handler that interrupted this thread
 * inside a locked section (a thread never takes the lock twice otherwise).
 * Our own flag, else glibc's record of the owner's thread id in the mutex;
 * elsewhere we cannot tell: `unknown` is returned. */
static inline int scopeprof__lock_mine(scopeprof__state *g, int unknown) {
    if (scopeprof__in_lock) return 1; /* this module's code took it (the usual case) */
#ifdef __GLIBC__
    (void)unknown; /* another module's code may have: the owner says */
#ifdef SYS_gettid
    return __atomic_load_n(&g->lock.__data.__owner, __ATOMIC_RELAXED) == (int)syscall(SYS_gettid);
#else
    (void)g;
    return 0;
#endif
#else
    (void)g;
    return unknown;
#endif
}

/* PROFILE_SCOPE (or any recording) in a program's signal handler that
 * interrupted this thread while it held the lock: the lock cannot be taken
 * (the thread would wait for itself), so what needs it is dropped, and said
 * once. */
static inline void scopeprof__reentered(scopeprof__state *g) {
    if (!__atomic_exchange_n(&g->life.warned_reentry, 1, __ATOMIC_RELAXED))
        scopeprof__sig_say("scopeprof: recording in a signal handler that interrupted the "
                           "profiler on the same thread; those events are dropped\n", NULL, NULL);
}

/* The registration lock (g->reg.lock), with signals held as for `lock`: a
 * handler that records never finds its own thread holding it. Its critical
 * sections are a few stores and, at most, an mmap: no malloc, no other
 * lock, no write. scopeprof__in_reg is set meanwhile, for a fault's handler
 * on the same thread (faults stay deliverable). */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__in_reg;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread uint64_t scopeprof__reg_unblock;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__reg_cancel;
static inline void scopeprof__reg_lock(scopeprof__state *g) {
    scopeprof__hold(&g->reg.lock, &scopeprof__in_reg, &scopeprof__reg_unblock, &scopeprof__reg_cancel);
}
static inline void scopeprof__reg_unlock(scopeprof__state *g) {
    scopeprof__release(&g->reg.lock, &scopeprof__in_reg, &scopeprof__reg_unblock, &scopeprof__reg_cancel);
}
/* Registration's entry (a new site, a thread's first scope): the lock, or 0
 * when a fault's handler interrupted this thread inside registration (what
 * needed it is dropped, and said once). */
static inline int scopeprof__reg_enter(scopeprof__state *g) {
    if (scopeprof__in_reg) {
        scopeprof__reentered(g);
        return 0;
    }
    scopeprof__reg_lock(g);
    return 1;
}

/* The memory totals, copied in one critical section (threads update them
 * under mem.lock while the writer runs). */
typedef struct scopeprof__memsnap {
    uint32_t used; /* bit mask of devices */
    int64_t peak[32], cur[32];
    uint64_t unknown_frees;
} scopeprof__memsnap;

/* ---- Calls between parts -------------------------------------------------
 * Every function one part calls in another that comes later, declared once
 * here, so that the parts can follow an event's path. */
SCOPEPROF__INTERNAL void scopeprof__read_prog(char prog[256]);
SCOPEPROF__INTERNAL void scopeprof__default_path(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__claim_output(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__rank_path(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__rank_rename(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__json_path(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__cycle_path(scopeprof__state *g, int c);
SCOPEPROF__INTERNAL int scopeprof__qlock(scopeprof__state *g);
static inline void scopeprof__qunlock(scopeprof__state *g, int locked);
SCOPEPROF__INTERNAL void scopeprof__thread_exit(void *p);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__writer_start(scopeprof__state *g);
SCOPEPROF__INTERNAL void *scopeprof__writer_main(void *arg);
SCOPEPROF__INTERNAL void scopeprof__writer_init_locks(scopeprof__state *g);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__finalize(scopeprof__state *g);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__install_signals(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__sched_start(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__pin_module(void);
SCOPEPROF__INTERNAL void scopeprof__calibrate(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__atfork_prepare(void);
SCOPEPROF__INTERNAL void scopeprof__atfork_parent(void);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__atfork_child(void);
SCOPEPROF__INTERNAL scopeprof__chunk *scopeprof__chunk_alloc(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_queued(scopeprof__state *g, int may_wait);
SCOPEPROF__INTERNAL uint32_t scopeprof__write_some(scopeprof__state *g, int may_wait, uint32_t most);
SCOPEPROF__INTERNAL void scopeprof__write_partials(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_held(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_sites(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_thread(scopeprof__state *g, scopeprof__thread *t, uint64_t every);
SCOPEPROF__INTERNAL void scopeprof__mem_snapshot(scopeprof__state *g, scopeprof__memsnap *s, int reset);
SCOPEPROF__INTERNAL void scopeprof__write_memory(scopeprof__state *g, const scopeprof__memsnap *s);
SCOPEPROF__INTERNAL void scopeprof__print_memory(scopeprof__state *g, const scopeprof__memsnap *s, FILE *out);
SCOPEPROF__INTERNAL void scopeprof__write_steps(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_chunk(scopeprof__state *g, uint32_t type,
                                                const void *payload, uint32_t len);
SCOPEPROF__INTERNAL int scopeprof__close_output(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__file_end(scopeprof__state *g, const scopeprof__memsnap *mem);
SCOPEPROF__INTERNAL void scopeprof__file_reset(scopeprof__state *g);
SCOPEPROF__INTERNAL uint64_t scopeprof__open_scopes(scopeprof__state *g, const scopeprof__thread *skip,
                                                    uint32_t *threads, const scopeprof__thread **first);
SCOPEPROF__INTERNAL void scopeprof__write_clock(scopeprof__state *g);
SCOPEPROF__INTERNAL const char *scopeprof__rank_title(const scopeprof__state *g, char *buf, size_t n);
SCOPEPROF__INTERNAL void scopeprof__summary_print(scopeprof__state *g, const scopeprof__memsnap *mem,
                                                  int recorded, const char *title, int at_exit);

#ifdef __cplusplus
}
#endif
#endif /* state.h */
