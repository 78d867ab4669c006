/* prog_life.c -- the profiled program of the life-cycle tests (issues 5 and
 * 6). argv[1] picks what it does; test_life.c runs it as a child process and
 * checks its exit status, stdout, stderr and trace file(s). Built with
 * PROFILE_ENABLE in three variants (plain, ASan+UBSan, TSan) and once without
 * it (prog_life_off) to compare with "the same program, no profiler".
 *
 * Scope names are what the tests count, so each mode documents exactly what
 * it records. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "peak_rss.h"
#include "unwound.h"

#ifndef VARIANT
#define VARIANT ""
#endif

static char self_exe[PATH_MAX];

/* Keep the optimizer from removing empty loops around scopes. Atomic: many
 * threads bump it, and TSan must only report the profiler's races. */
static unsigned sink;
#define BUMP() __atomic_add_fetch(&sink, 1u, __ATOMIC_RELAXED)

/* ---- memory: known allocations, exact expected values ----------------------
 * outer: alloc A 1000 b (self), inner { alloc B 300 b, free A } (-700 b),
 *        alloc C 50 b (self)             -> outer self 1050 b, total 350 b
 * gpu_part: GPU alloc 2 MiB on device 0, nested gpu_inner: GPU alloc 1 MiB
 *        then GPU free of the 2 MiB      -> gpu_part self +2 MiB, total +1 MiB;
 *                                           gpu_inner self/total -1 MiB
 * free of a pointer never recorded: counted, reported, not fatal.
 * CPU peak 1300 b (A and B live), final 350 b; GPU 0 peak 3 MiB, final 1 MiB. */
static int mode_mem(void) {
    static char a[1000], b[300], c[50], ga[1], gb[1], unknown[1];
    {
        PROFILE_SCOPE("outer");
        PROFILE_ALLOC(a, 1000);
        {
            PROFILE_SCOPE("inner");
            PROFILE_ALLOC(b, 300);
            PROFILE_FREE(a);
        }
        PROFILE_ALLOC(c, 50);
    }
    {
        PROFILE_SCOPE("gpu_part");
        PROFILE_GPU_ALLOC(ga, 2 << 20, 0);
        {
            PROFILE_SCOPE("gpu_inner");
            PROFILE_GPU_ALLOC(gb, 1 << 20, 0);
            PROFILE_GPU_FREE(ga, 0);
        }
    }
    {
        PROFILE_SCOPE("bad_free");
        PROFILE_FREE(unknown); /* never allocated: line reported below */
    }
    printf("mem done\n");
    return 0;
}

/* ---- steps: scope "step_<i>" inside step i, "work" nested in it ------------ */
__attribute__((unused)) /* referenced only where profiling is on */
static void on_cycle(const char *path, int cycle, void *user) {
    (void)user;
    printf("cycle %d %s\n", cycle, path ? path : "(null)");
    fflush(stdout);
    const char *ms = getenv("LIFE_CYCLE_SLEEP_MS"); /* a slow callback: not the next step's time */
    if (ms) nanosleep(&(struct timespec){0, atol(ms) * 1000000L}, NULL);
}

static int mode_steps(int argc, char **argv) {
    int n = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 8 && strcmp(argv[3], "sched") == 0)
        PROFILE_SCHEDULE(atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), atoi(argv[7]), atoi(argv[8]));
    PROFILE_ON_CYCLE(on_cycle, NULL);
    const char *kill_at = getenv("LIFE_KILL_AT_STEP"); /* SIGTERM as step i begins */
    for (int i = 0; i < n; i++) {
        if (kill_at && atoi(kill_at) == i) kill(getpid(), SIGTERM);
        char name[32];
        snprintf(name, sizeof name, "step_%d", i);
        {
            PROFILE_SCOPE_DYN(name);
            for (int k = 0; k < 2; k++) {
                PROFILE_SCOPE("work");
                BUMP();
            }
            if (getenv("LIFE_STEP_MEM")) { /* step i holds (n - i) * 100 bytes for a while */
                static char buf[1];
                PROFILE_ALLOC(buf, (size_t)(n - i) * 100);
                PROFILE_FREE(buf);
            }
        }
        PROFILE_STEP();
    }
    return 0;
}

/* ---- fork ------------------------------------------------------------------
 * Parent: "parent_thread" x100 in a thread that stays alive (idle) across
 * the fork, "parent_before" x3, fork, then "parent_after" x2. Child without
 * exec: "child_work" x5, exit(0). Child with exec: runs this program in mode
 * "execd": "execd_work" x4. Prints "child <pid>". */
static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_cond = PTHREAD_COND_INITIALIZER;
static int fk_stage;

static void *fork_thread(void *arg) {
    (void)arg;
    for (int i = 0; i < 100; i++) {
        PROFILE_SCOPE("parent_thread");
        BUMP();
    }
    pthread_mutex_lock(&fk_lock);
    fk_stage = 1;
    pthread_cond_broadcast(&fk_cond);
    while (fk_stage != 2) pthread_cond_wait(&fk_cond, &fk_lock);
    pthread_mutex_unlock(&fk_lock);
    return NULL;
}

static int mode_fork(int with_exec) {
    pthread_t th;
    pthread_create(&th, NULL, fork_thread, NULL);
    pthread_mutex_lock(&fk_lock);
    while (fk_stage != 1) pthread_cond_wait(&fk_cond, &fk_lock);
    pthread_mutex_unlock(&fk_lock);
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("parent_before");
        BUMP();
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 20;
    if (pid == 0) {
        if (with_exec) {
            execl(self_exe, self_exe, "execd", (char *)NULL);
            _exit(21);
        }
        for (int i = 0; i < 5; i++) {
            PROFILE_SCOPE("child_work");
            BUMP();
        }
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    for (int i = 0; i < 2; i++) {
        PROFILE_SCOPE("parent_after");
        BUMP();
    }
    pthread_mutex_lock(&fk_lock);
    fk_stage = 2;
    pthread_cond_broadcast(&fk_cond);
    pthread_mutex_unlock(&fk_lock);
    pthread_join(th, NULL);
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

/* ---- fork_inside [drop]: as a server forks its workers, fork() inside an
 * open scope ("spawn", the parent's file made first: "before", flushed);
 * the child records "child_work" x3 and exits inside "child_open" (and
 * "spawn" and the range "serve", inherited: the parent's to record). "drop": the child first
 * loses the right to write in the working directory, as a worker that
 * changes user does (root: it becomes uid 65534; else it makes the
 * directory read-only), so its file cannot be made. Prints "child PID
 * status S". */
static int mode_fork_inside(int drop) {
    {
        PROFILE_SCOPE("before");
        BUMP();
    }
    PROFILE_FLUSH(); /* the parent's file made, with "before" in it */
    PROFILE_SCOPE("spawn");
    BUMP();
    PROFILE_BEGIN("serve");
    fflush(stdout);
    /* root: a directory others may search but not write, as a server's */
    if (drop && geteuid() == 0 && chmod(".", 0755) != 0) return 22;
    pid_t pid = fork();
    if (pid < 0) return 20;
    if (pid == 0) {
        if (drop && (geteuid() == 0 ? setuid(65534) : chmod(".", 0555)) != 0) _exit(22);
        for (int i = 0; i < 3; i++) {
            PROFILE_SCOPE("child_work");
            BUMP();
        }
        PROFILE_SCOPE("child_open");
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    PROFILE_END();
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

/* ---- finish_exit [bare]: a forked child records "child_work" x3 inside
 * the range "save", then PROFILE_FINISH() (not with "bare"),
 * "after_finish", the range's PROFILE_END, and _exit(0), as Redis's BGSAVE
 * child ends. Prints "child PID status S". */
static int mode_finish_exit(int bare) {
    { PROFILE_SCOPE("parent_work"); BUMP(); }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 20;
    if (pid == 0) {
        PROFILE_BEGIN("save");
        for (int i = 0; i < 3; i++) {
            PROFILE_SCOPE("child_work");
            BUMP();
        }
        if (!bare) PROFILE_FINISH();
        { PROFILE_SCOPE("after_finish"); BUMP(); }
        PROFILE_END();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

/* ---- summary_writes: a forked child records "w" x3 and exits with its
 * stderr a SOCK_SEQPACKET socket, which keeps each write(2) a message of
 * its own; the parent reads them and prints "writes N, table T, trace F":
 * the messages, and those holding the table's total line and the
 * "Trace file:" line. */
static int mode_summary_writes(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) return 23;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 20;
    if (pid == 0) {
        close(sv[0]);
        dup2(sv[1], 2);
        for (int i = 0; i < 3; i++) {
            PROFILE_SCOPE("w");
            BUMP();
        }
        exit(0);
    }
    close(sv[1]);
    static char msg[1 << 20];
    int writes = 0, table = 0, trace = 0;
    for (ssize_t n; (n = recv(sv[0], msg, sizeof msg - 1, 0)) > 0;) {
        msg[n] = 0;
        writes++;
        table += strstr(msg, "Self CPU time total") != NULL;
        trace += strstr(msg, "Trace file: ") != NULL;
    }
    waitpid(pid, NULL, 0);
    printf("writes %d, table %d, trace %d\n", writes, table, trace);
    return 0;
}

/* ---- fork_steps: a schedule's cycles in a parent and its forked child ------
 * Steps 0-1 in the parent, 3 steps in the child (scope "child_step"), 3
 * more in the parent after it ("parent_step"): with SCOPEPROF_SCHEDULE=
 * active=1 each step is a cycle's file. */
static int mode_fork_steps(void) {
    for (int i = 0; i < 2; i++) {
        PROFILE_STEP();
        PROFILE_SCOPE("parent_step");
        BUMP();
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 20;
    if (pid == 0) {
        for (int i = 0; i < 3; i++) {
            PROFILE_STEP();
            PROFILE_SCOPE("child_step");
            BUMP();
        }
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    for (int i = 0; i < 3; i++) {
        PROFILE_STEP();
        PROFILE_SCOPE("parent_step");
        BUMP();
    }
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

/* ---- moved: a scope that closes on another thread than it opened on, as
 * an untied OpenMP task does when libomp moves it at a scheduling point. In
 * "outer" on the main thread, a coroutine opens "moved" and "stays" { },
 * then yields; a second thread resumes it, and "moved" closes there. Back
 * on the main thread, "after" x3, then "outer" closes. */
static ucontext_t mv_main, mv_co, mv_thr;
static char mv_stack[256 * 1024];
static void mv_body(void) {
    PROFILE_SCOPE("moved");
    {
        PROFILE_SCOPE("stays");
        BUMP();
    }
    swapcontext(&mv_co, &mv_main); /* resumed on the second thread */
    BUMP();
}
static void *mv_thread(void *arg) {
    (void)arg;
    swapcontext(&mv_thr, &mv_co); /* runs mv_body to its end, then back here (uc_link) */
    return NULL;
}
static int mode_moved_in(void) {
    getcontext(&mv_co);
    mv_co.uc_stack.ss_sp = mv_stack;
    mv_co.uc_stack.ss_size = sizeof mv_stack;
    mv_co.uc_link = &mv_thr;
    makecontext(&mv_co, mv_body, 0);
    swapcontext(&mv_main, &mv_co);
    pthread_t th;
    if (pthread_create(&th, NULL, mv_thread, NULL) != 0) return 40;
    pthread_join(th, NULL);
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    return 0;
}
static int mode_moved(int bare) { /* bare: no "outer" around it all */
    if (bare) return mode_moved_in();
    PROFILE_SCOPE("outer");
    return mode_moved_in();
}

static int mode_execd(void) {
    for (int i = 0; i < 4; i++) {
        PROFILE_SCOPE("execd_work");
        BUMP();
    }
    return 0;
}

/* ---- rank: one scope "ranked"; "rank set R" calls PROFILE_SET_RANK(R) ----- */
static int mode_rank(int argc, char **argv) {
    if (argc > 3 && strcmp(argv[2], "set") == 0) PROFILE_SET_RANK(atoi(argv[3]));
    PROFILE_SCOPE("ranked");
    printf("pid %d\n", (int)getpid());
    return 0;
}

/* ---- print: the program's own output and exit code (3) --------------------- */
static int mode_print(void) {
    for (int i = 0; i < 10; i++) {
        PROFILE_SCOPE("printing");
        printf("line %d of the program's own output\n", i);
    }
    return 3;
}

/* ---- signals and crashes ----------------------------------------------------
 * A thread records "thread_work" x1000 and stays alive (its events are in its
 * unfinished buffer); main records "main_work" x1000, then inside an open
 * scope "open_at_signal" raises the fault. Nothing after that is recorded. */
static pthread_mutex_t sg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sg_cond = PTHREAD_COND_INITIALIZER;
static int sg_ready;

static void *signal_thread(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        PROFILE_SCOPE("thread_work");
        BUMP();
    }
    pthread_mutex_lock(&sg_lock);
    sg_ready = 1;
    pthread_cond_broadcast(&sg_cond);
    pthread_mutex_unlock(&sg_lock);
    for (;;) pause(); /* alive until the process dies */
    return NULL;
}

static int mode_fault(const char *what) {
    pthread_t th;
    pthread_create(&th, NULL, signal_thread, NULL);
    for (int i = 0; i < 1000; i++) {
        PROFILE_SCOPE("main_work");
        BUMP();
    }
    pthread_mutex_lock(&sg_lock);
    while (!sg_ready) pthread_cond_wait(&sg_cond, &sg_lock);
    pthread_mutex_unlock(&sg_lock);
    printf("before the fault\n");
    fflush(stdout);
    PROFILE_SCOPE("open_at_signal");
    if (strcmp(what, "abort") == 0) abort();
    if (strcmp(what, "segv") == 0) {
        /* Both volatile: the pointer, so the compiler cannot see it is null,
         * and the store, so it cannot drop it as dead (gcc -O2 did). */
        volatile int *volatile p = NULL;
        *p = 1;
    }
    kill(getpid(), atoi(what));
    for (;;) pause(); /* a signal sent to the process may land on the other thread */
    return 0;
}

/* ---- exit() from a non-main thread while others record ----------------------
 * main and thread A record "main_spin" / "a_spin" without end; thread B waits
 * until both recorded at least 5000, records "b_work" x500 and calls exit(7). */
static volatile int spins_main, spins_a;

static void *spin_a(void *arg) {
    (void)arg;
    for (;;) {
        PROFILE_SCOPE("a_spin");
        __atomic_add_fetch(&spins_a, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void *exiter_b(void *arg) {
    (void)arg;
    while (__atomic_load_n(&spins_main, __ATOMIC_RELAXED) < 5000 ||
           __atomic_load_n(&spins_a, __ATOMIC_RELAXED) < 5000)
        sched_yield();
    for (int i = 0; i < 500; i++) {
        PROFILE_SCOPE("b_work");
        BUMP();
    }
    exit(7);
    return NULL;
}

static int mode_exit_thread(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, spin_a, NULL);
    pthread_create(&b, NULL, exiter_b, NULL);
    for (;;) {
        PROFILE_SCOPE("main_spin");
        __atomic_add_fetch(&spins_main, 1, __ATOMIC_RELAXED);
    }
    return 0;
}

/* ---- _exit: 300000 scopes "quick" then _exit(9), no handlers run ----------- */
static int mode_underscore_exit(void) {
    for (int i = 0; i < 300000; i++) {
        PROFILE_SCOPE("quick");
        BUMP();
    }
    _exit(9);
}

/* ---- pthread_exit of the main thread ----------------------------------------
 * main starts 4 threads, records "main_work" x100 and calls pthread_exit; the
 * threads wait for that (a flag main sets just before), then record
 * "late_work" x1000 each. The process ends when the last one returns. */
static volatile int main_gone;
static void *late_worker(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&main_gone, __ATOMIC_ACQUIRE)) sched_yield();
    for (int i = 0; i < 1000; i++) {
        PROFILE_SCOPE("late_work");
        BUMP();
    }
    return NULL;
}

static int mode_pthread_exit(void) {
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, late_worker, NULL);
    for (int i = 0; i < 100; i++) {
        PROFILE_SCOPE("main_work");
        BUMP();
    }
    __atomic_store_n(&main_gone, 1, __ATOMIC_RELEASE);
    pthread_exit(NULL);
}

/* ---- dlclose ----------------------------------------------------------------
 * "dlclose lib_first": the library records first (its copy of the code creates
 * the registry); "dlclose main_first": main records "main_first" before.
 * The library records "lib_scope" x4 and "lib_dyn_<k>" x1 for k < 3; after
 * dlclose main records "after_close" x3. */
static int mode_dlclose(int main_first) {
    if (main_first) {
        PROFILE_SCOPE("main_first");
        BUMP();
    }
    char lib[PATH_MAX + 64], dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self_exe);
    snprintf(lib, sizeof lib, "%s/liblife_dl%s.so", dirname(dir), VARIANT);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 30;
    }
    void (*work)(int) = (void (*)(int))dlsym(h, "life_lib_work");
    if (!work) return 31;
    work(4);
    if (dlclose(h) != 0) return 32;
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("after_close");
        BUMP();
    }
    return 0;
}

/* ---- 2000 short-lived threads, 8 at a time: each records "short_outer"
 * with "short_inner" nested, and exits. ----------------------------------- */
static void *short_thread(void *arg) {
    (void)arg;
    PROFILE_SCOPE("short_outer");
    {
        PROFILE_SCOPE("short_inner");
        BUMP();
    }
    return NULL;
}

static int mode_threads(int n) {
    for (int i = 0; i < n; i += 8) {
        pthread_t th[8];
        for (int k = 0; k < 8; k++)
            if (pthread_create(&th[k], NULL, short_thread, NULL) != 0) return 40;
        for (int k = 0; k < 8; k++) pthread_join(th[k], NULL);
    }
    if (getenv("LIFE_PRINT_HWM")) peak_rss_print();
    return 0;
}

/* ---- ranges that outlive the scope they began in (PROFILE_BEGIN/END
 * mismatched with scopes), 3 rounds: "X" { begin "R" }, then "P" { "K",
 * begin "R" again (the same site), end, end }: the first "R" is recorded as
 * P's child but started before P, and the two "R" records, one key, overlap.
 * The exit table and `scopeprof table` must still agree (same_table.sh). */
static void range_open(void) { PROFILE_BEGIN("R"); }
static void range_close(void) { PROFILE_END(); }

static int mode_overlap(void) {
    for (int r = 0; r < 3; r++) {
        {
            PROFILE_SCOPE("X");
            range_open();
            for (int i = 0; i < 20000; i++) BUMP();
        }
        {
            PROFILE_SCOPE("P");
            {
                PROFILE_SCOPE("K");
                for (int i = 0; i < 20000; i++) BUMP();
            }
            range_open();
            for (int i = 0; i < 20000; i++) BUMP();
            range_close();
            for (int i = 0; i < 20000; i++) BUMP();
            range_close();
            for (int i = 0; i < 20000; i++) BUMP();
        }
    }
    return 0;
}

/* ---- records out of close order: a 1 ms timer's SIGALRM handler records
 * "H" (0.1-0.2 ms) while the main thread closes "P" after "P". A handler
 * that lands in a close after its clock read writes "H" first, at P's depth
 * + 1 though it began after P ended; one that lands between the close's
 * cursor read and its store loses one of the two records (docs/DESIGN.md,
 * signal handlers: here about a third of the H's). 150 signals. The exit
 * table must not take such an "H" for P's child, as `scopeprof table` does
 * not (same_table.sh). */
static volatile int late_alarms;

static void on_late_alarm(int sig) {
    (void)sig;
    {
        PROFILE_SCOPE("H");
        for (int i = 0; i < 20000; i++) BUMP();
    }
    late_alarms++;
}

static int mode_late_close(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_late_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    { PROFILE_SCOPE("P"); } /* the thread's state made before any signal */
    struct itimerval on = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &on, NULL);
    while (late_alarms < 150) {
        PROFILE_SCOPE("P");
    }
    setitimer(ITIMER_REAL, &off, NULL);
    return 0;
}

/* ---- a run shorter than the clock rate's 20 ms: the rate is then measured
 * at the exit, over the whole run, without waiting (clock.h). Prints
 * "clock T0 T1", CLOCK_MONOTONIC before and after "timed", a scope of at
 * least 3 ms (after "warm", which starts the profiler); the trace's times
 * must lie between. With `late`, the profiler starts 30 ms after the
 * program, and a PROFILE_FLUSH right after "timed" is the first write: the
 * rate is then measured from the clock pair read when the program started
 * (clock.h, scopeprof__rate_from), and "timed" must convert as well. It also
 * prints "from NS NS0 TSC": the CLOCK_MONOTONIC ns of the pair the rate is
 * measured from, the registry's ns0, and whether the ticks are the TSC. */
static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int mode_clock(int late) {
    if (late) {
        struct timespec ms30 = {0, 30000000};
        nanosleep(&ms30, NULL);
    }
    { PROFILE_SCOPE("warm"); } /* the registry and the writer start here */
    uint64_t t0 = mono_ns();
    {
        PROFILE_SCOPE("timed");
        for (uint64_t in = mono_ns(); mono_ns() - in < 3000000u;) BUMP();
    }
    uint64_t t1 = mono_ns();
    if (late) {
        PROFILE_FLUSH();
#if SCOPEPROF__ON
        uint64_t from_ns, from_tick;
        scopeprof__rate_from(scopeprof__g, &from_ns, &from_tick);
        printf("from %llu %llu %d\n", (unsigned long long)from_ns, (unsigned long long)scopeprof__g->clock.ns0,
               scopeprof__g->clock.use_tsc);
#endif
    }
    printf("clock %llu %llu\n", (unsigned long long)t0, (unsigned long long)t1);
    return 0;
}

/* ---- runs of one leaf scope, which the writer sums together (summary.h,
 * scopeprof__sum_run), at depths 0, 1 and 2, across chunks, on two threads
 * (main and one more), 40 rounds each of: "run_top" x200 (depth 0), then
 * "run_parent" { "run_leaf" x300, "run_other", "run_mid" { "run_leaf"
 * x(100 + round) }, "run_leaf" x50 }. Checked by same_table.sh. */
static void *runs_body(void *arg) {
    (void)arg;
    for (int r = 0; r < 40; r++) {
        for (int i = 0; i < 200; i++) {
            PROFILE_SCOPE("run_top");
            BUMP();
        }
        PROFILE_SCOPE("run_parent");
        for (int i = 0; i < 300; i++) {
            PROFILE_SCOPE("run_leaf");
            BUMP();
        }
        {
            PROFILE_SCOPE("run_other");
            BUMP();
        }
        {
            PROFILE_SCOPE("run_mid");
            for (int i = 0; i < 100 + r; i++) {
                PROFILE_SCOPE("run_leaf");
                BUMP();
                BUMP();
            }
        }
        for (int i = 0; i < 50; i++) {
            PROFILE_SCOPE("run_leaf");
        }
    }
    return NULL;
}

static int mode_runs(void) {
    pthread_t th;
    if (pthread_create(&th, NULL, runs_body, NULL) != 0) return 40;
    runs_body(NULL);
    pthread_join(th, NULL);
    return 0;
}

/* ---- recursion 10000 deep: "deep_outer" { rec(10000) }, each level a "rec" */
static void rec(int n) {
    PROFILE_SCOPE("rec");
    for (int i = 0; i < 3; i++) BUMP(); /* some self time at every level */
    if (n > 1) rec(n - 1);
}

static int mode_deep(int n) {
    PROFILE_SCOPE("deep_outer");
    rec(n);
    return 0;
}

/* "very_deep N": the same N deep, on a thread with a 512 MiB stack (past
 * the exit table's levels: test_deeper_than_levels). */
static void *very_deep_thread(void *p) {
    mode_deep((int)(intptr_t)p);
    return NULL;
}

static int mode_very_deep(int n) {
    pthread_attr_t at;
    pthread_t t;
    pthread_attr_init(&at);
    if (pthread_attr_setstacksize(&at, (size_t)512 << 20) != 0 ||
        pthread_create(&t, &at, very_deep_thread, (void *)(intptr_t)n) != 0)
        return 3;
    pthread_join(t, NULL);
    pthread_attr_destroy(&at);
    return 0;
}

/* ---- a scope too long for a 16-byte buffer record (2^27 ticks or more):
 * "long_outer" { "before" x3, "nap" (150 ms), "after" x3 }, with
 * PROFILE_FLUSH between, so the long record sits inside a written span. */
static int mode_long(void) {
    PROFILE_SCOPE("long_outer");
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("before");
        BUMP();
    }
    {
        PROFILE_SCOPE("nap");
        struct timespec ts = {0, 150000000};
        while (nanosleep(&ts, &ts) != 0) {}
    }
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    PROFILE_FLUSH();
    return 0;
}

/* ---- chdir after the first scope: "before" x1, chdir("sub"), "after" x2.
 * The trace goes where SCOPEPROF_OUTPUT pointed when profiling started. */
static int mode_chdir(void) {
    { PROFILE_SCOPE("before"); }
    if (mkdir("sub", 0755) != 0 || chdir("sub") != 0) return 60;
    for (int i = 0; i < 2; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    return 0;
}

/* ---- a 64 KiB scope name: 'N' then letters a..z repeated, x2 calls ---------- */
static int mode_bigname(void) {
    size_t n = 64 * 1024;
    char *name = (char *)malloc(n + 1);
    if (!name) return 50;
    for (size_t i = 0; i < n; i++) name[i] = i == 0 ? 'N' : (char)('a' + i % 26);
    name[n] = 0;
    for (int i = 0; i < 2; i++) {
        PROFILE_SCOPE_DYN(name);
        BUMP();
    }
    { PROFILE_SCOPE("small"); }
    free(name);
    return 0;
}

/* ---- PROFILE_FLUSH while threads start, record across chunk boundaries and
 * exit: 64 threads x "storm" x10000 (more than two 4094-event chunks each),
 * main flushing all the time. Every event exactly once in the file. ------- */
static volatile int storm_left;
static void *storm_thread(void *arg) {
    (void)arg;
    for (int i = 0; i < 10000; i++) {
        PROFILE_SCOPE("storm");
        BUMP();
    }
    __atomic_sub_fetch(&storm_left, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

static int mode_flush_storm(void) {
    enum { N = 64 };
    pthread_t th[N];
    storm_left = N;
    for (int i = 0; i < N; i++) {
        pthread_create(&th[i], NULL, storm_thread, NULL);
        PROFILE_FLUSH();
    }
    while (__atomic_load_n(&storm_left, __ATOMIC_ACQUIRE) > 0) PROFILE_FLUSH();
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    return 0;
}

/* ---- issue 17: signals while the profiler's lock is held --------------------
 * "sig_locked self|other": thread W records "held_work" in rounds of 100000
 * and flushes after each (the flush holds the registry's lock for
 * milliseconds); every closed scope is counted in count.bin (a shared file
 * mapping, so the count survives the kill). Main watches the lock's owner
 * (glibc keeps it in the mutex) and, once W holds it, sends SIGTERM to W
 * itself ("self": the handler interrupts the holder) or to main ("other").
 * Exit: killed by SIGTERM; every counted event in the trace. */
static volatile int held_tid;
static volatile uint64_t *held_count;

static void *held_worker(void *arg) {
    (void)arg;
    __atomic_store_n(&held_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    for (;;) {
        for (int i = 0; i < 100000; i++) {
            { PROFILE_SCOPE("held_work"); }
            __atomic_add_fetch(held_count, 1, __ATOMIC_RELAXED);
        }
        PROFILE_FLUSH();
    }
    return NULL;
}

static int mode_sig_locked(const char *who) {
    int fd = open("count.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 8) != 0) return 70;
    held_count = (volatile uint64_t *)mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (held_count == MAP_FAILED) return 71;
    { PROFILE_SCOPE("main_start"); } /* the registry exists from here */
    *held_count = 1;
    pthread_t th;
    pthread_create(&th, NULL, held_worker, NULL);
#if defined(__GLIBC__) && SCOPEPROF__ON
    int tid;
    while (!(tid = __atomic_load_n(&held_tid, __ATOMIC_ACQUIRE))) sched_yield();
    while (__atomic_load_n(&scopeprof__g->lock.__data.__owner, __ATOMIC_RELAXED) != tid ||
           __atomic_load_n(held_count, __ATOMIC_RELAXED) < 100000) {}
    if (strcmp(who, "self") == 0) syscall(SYS_tgkill, (int)getpid(), tid, SIGTERM);
    else syscall(SYS_tgkill, (int)getpid(), (int)syscall(SYS_gettid), SIGTERM);
#else
    (void)who;
    kill(getpid(), SIGTERM);
#endif
    for (;;) pause();
    return 0;
}

/* "pipe": "piped" x100, then writes to a pipe nobody reads (as `prog | head
 * -1` after head exits): SIGPIPE. */
static int mode_pipe(void) {
    for (int i = 0; i < 100; i++) {
        PROFILE_SCOPE("piped");
        BUMP();
    }
    int p[2];
    if (pipe(p) != 0) return 72;
    close(p[0]);
    for (;;) {
        ssize_t w = write(p[1], "x\n", 2);
        if (w < 0) return 73; /* only if SIGPIPE did not end us */
    }
}

/* ---- issue 17: fork and the memory lock ---------------------------------------
 * "fork_alloc N": a thread allocates and frees (PROFILE_ALLOC/FREE) without
 * end while main forks N times; each child records one allocation and
 * _exits. A child that does not end within 5 s is killed and counted.
 * Prints "hung K". */
static volatile int alloc_stop;
static void *alloc_thread(void *arg) {
    (void)arg;
    static char blk[16];
    while (!__atomic_load_n(&alloc_stop, __ATOMIC_RELAXED)) {
        PROFILE_ALLOC(blk, 16);
        PROFILE_FREE(blk);
    }
    return NULL;
}

static int mode_fork_alloc(int n) {
    static char x[100];
    { PROFILE_ALLOC(x, 100); PROFILE_FREE(x); } /* the registry exists */
    pthread_t th;
    pthread_create(&th, NULL, alloc_thread, NULL);
    int hung = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) return 80;
        if (pid == 0) {
            PROFILE_ALLOC(x, 100);
            PROFILE_FREE(x);
            _exit(0);
        }
        int st = 0, waited = 0;
        while (waitpid(pid, &st, WNOHANG) == 0) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            if (++waited == 5000) {
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                hung++;
                break;
            }
        }
    }
    __atomic_store_n(&alloc_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    printf("hung %d\n", hung);
    return 0;
}

/* "fork_mem": the parent allocates 1 MiB ("parent_block"), forks; the child
 * allocates 100 b and frees it, frees the parent's block, and exits. The
 * child's figures are its own: peak 100 b, final 0, no unknown free.
 * Prints "child <pid> status <s>". */
static int mode_fork_mem(void) {
    static char big[1], small[1];
    PROFILE_ALLOC(big, 1 << 20);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 81;
    if (pid == 0) {
        {
            PROFILE_SCOPE("child_mem");
            PROFILE_ALLOC(small, 100);
            PROFILE_FREE(small);
            PROFILE_FREE(big);
        }
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    PROFILE_FREE(big);
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

/* ---- issue 17: the trace descriptor -----------------------------------------
 * "fd_steal close|dup2": "before" x5000 and a flush (the trace file is open
 * and written), then the program takes the descriptor: "close" closes
 * 3..1023 (as daemons do) and opens own.txt, which gets the lowest free
 * number, the trace's; "dup2" opens own.txt and dup2()s it onto the
 * trace's descriptor. It writes 1500 bytes of its own, records "after"
 * x5000, flushes, writes 1500 more and exits. own.txt must hold exactly
 * the program's 3000 bytes. */
static int mode_fd_steal(const char *how) {
    for (int i = 0; i < 5000; i++) {
        PROFILE_SCOPE("before");
        BUMP();
    }
    PROFILE_FLUSH();
    int fd;
    if (strcmp(how, "close") == 0) {
        int want = -1; /* the trace's number: own.txt is to get it */
#if SCOPEPROF__ON
        want = scopeprof__g->out.fd;
#endif
        for (int k = 3; k < 1024; k++) close(k);
        for (int k = 3; k < want; k++)
            if (open("/dev/null", O_RDONLY) != k) return 94;
        fd = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (want >= 0 && fd != want) return 95;
    } else {
        fd = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
#if SCOPEPROF__ON
        if (fd < 0 || dup2(fd, scopeprof__g->out.fd) < 0) return 90;
        close(fd);
        fd = scopeprof__g->out.fd;
#endif
    }
    if (fd < 0) return 91;
    char line[1500];
    memset(line, 'p', sizeof line);
    if (write(fd, line, sizeof line) != (ssize_t)sizeof line) return 92;
    for (int i = 0; i < 5000; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    PROFILE_FLUSH();
    if (write(fd, line, sizeof line) != (ssize_t)sizeof line) return 93;
    return 0;
}

/* ---- fd_lost: the trace's descriptor closed and its path given to another
 * file ("hello\n", made by the program) between two flushes; the trace
 * itself moved to kept.sprof (so that the new file cannot reuse its inode
 * number, which would make it look like the trace). */
static int mode_fd_lost(const char *trace) {
    for (int i = 0; i < 1000; i++) {
        PROFILE_SCOPE("before");
        BUMP();
    }
    PROFILE_FLUSH();
    for (int k = 3; k < 1024; k++) close(k);
    if (rename(trace, "kept.sprof") != 0) return 96;
    int fd = open(trace, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "hello\n", 6) != 6 || close(fd) != 0) return 97;
    for (int i = 0; i < 1000; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    PROFILE_FLUSH();
    return 0;
}

/* ---- issue 17: exec of the same program (same pid) ----------------------------
 * "reexec 1": "first_image" x5000, a flush, then exec of this program as
 * "reexec 2": "second_image" x3, exit. The first image's flushed events
 * must survive the second image's start. */
static int mode_reexec(int image) {
    if (image == 1) {
        for (int i = 0; i < 5000; i++) {
            PROFILE_SCOPE("first_image");
            BUMP();
        }
        PROFILE_FLUSH();
        execl(self_exe, self_exe, "reexec", "2", (char *)NULL);
        return 100;
    }
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("second_image");
        BUMP();
    }
    return 0;
}

/* ---- issue 17: scopes open when a thread ends without returning ----------------
 * One thread records "inner" x5 inside "outer" and calls pthread_exit
 * inside "outer"; another is cancelled while it waits inside "waiting". */
static void *exit_inside(void *arg) {
    (void)arg;
    PROFILE_SCOPE("outer");
    for (int i = 0; i < 5; i++) {
        PROFILE_SCOPE("inner");
        BUMP();
    }
    pthread_exit(NULL);
}

/* Cancelled threads clear their ASan redzones (tests/common/unwound.h).
 * Under TSan, a thread cancelled inside pause() runs its key destructors
 * (scopeprof__thread_exit) with TSan blind to its locks (the blocking
 * call's interceptor ignores those nested in it: google/sanitizers#646),
 * so a writer that reaps threads at that moment is reported as a race on
 * the thread's state, though both hold the registry lock. It happened in
 * about half the runs of a build whose writer reaped at every 1 ms poll
 * (session 16); the writer reaps only after a drain (a batch queued, 1 MiB,
 * or the timed flush). */

static void *cancelled_inside(void *arg) {
    (void)arg;
    pthread_cleanup_push(unpoison_unwound, NULL);
    PROFILE_SCOPE("waiting");
    for (;;) pause(); /* a cancellation point */
    pthread_cleanup_pop(0);
    return NULL;
}

/* "exit_in_scopes [range]": "before" closes, then exit(0) inside "outer"
 * and "inner" (an error path's exit), which never close; "range": inside
 * the range "loop" too (begun before "outer", closed at exit). */
static int mode_exit_in_scopes(int range) {
    { PROFILE_SCOPE("before"); }
    if (range) PROFILE_BEGIN("loop");
    PROFILE_SCOPE("outer");
    {
        PROFILE_SCOPE("inner");
        exit(0);
    }
}

static int mode_exit_open(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, exit_inside, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, cancelled_inside, NULL);
    struct timespec ms = {0, 20000000};
    nanosleep(&ms, NULL); /* let it open its scope */
    pthread_cancel(b);
    pthread_join(b, NULL);
    return 0;
}

/* "open_elsewhere": a worker opens "worker_loop" and "wait" and blocks there
 * for good; main, once it is in, closes "main_work" and returns. */
static int oe_in;
static void *open_worker(void *p) {
    (void)p;
    PROFILE_SCOPE("worker_loop");
    PROFILE_SCOPE("wait");
    __atomic_store_n(&oe_in, 1, __ATOMIC_RELEASE);
    for (;;) pause();
    return NULL;
}

static int mode_open_elsewhere(void) {
    pthread_t w;
    pthread_create(&w, NULL, open_worker, NULL);
    struct timespec ms = {0, 1000000};
    while (!__atomic_load_n(&oe_in, __ATOMIC_ACQUIRE)) nanosleep(&ms, NULL);
    PROFILE_SCOPE("main_work");
    return 0;
}

/* ---- issue 17: out of memory -------------------------------------------------
 * "oom start|later": the address space is limited to what the program uses
 * plus 32 MiB (as `ulimit -v`), and the program takes all of it with
 * malloc, coping with the failures. "start": its first scope comes then
 * (the profiler's start-up cannot allocate); "later": "before" x100 first,
 * then under pressure. Either way it records "under_pressure" x10000
 * (a new buffer is needed), frees its memory, records "after" x100, prints
 * "coped" and exits 0. */
#include <sys/resource.h>
static int mode_oom(int later) {
    if (later)
        for (int i = 0; i < 100; i++) {
            PROFILE_SCOPE("before");
            BUMP();
        }
    long vm_kb = 0;
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) sscanf(line, "VmSize: %ld kB", &vm_kb);
    if (f) fclose(f);
    if (vm_kb <= 0) return 110;
    struct rlimit rl = {(rlim_t)(vm_kb + 32 * 1024) * 1024, (rlim_t)(vm_kb + 32 * 1024) * 1024};
    if (setrlimit(RLIMIT_AS, &rl) != 0) return 111;
    void **hog = NULL, **blk;
    for (size_t size = 1 << 20; size >= 16; size /= 4) /* take it all */
        while ((blk = (void **)malloc(size)) != NULL) {
            *blk = hog;
            hog = blk;
        }
    for (int i = 0; i < 10000; i++) {
        PROFILE_SCOPE("under_pressure");
        BUMP();
    }
    while (hog) {
        blk = (void **)*hog;
        free(hog);
        hog = blk;
    }
    for (int i = 0; i < 100; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    printf("coped\n");
    return 0;
}

/* ---- issue 17: PROFILE_SCOPE in the program's own signal handler --------------
 * A worker records "worker" without end (SIGALRM blocked there, counted);
 * main flushes without end (holding the registry's lock much of the time)
 * while a 200 us timer's SIGALRM handler records "in_handler" x5000 on it.
 * After 300 signals: timer off, worker stopped, "worker <n> alarms <k>"
 * printed, exit 0. */
static volatile int alarms, worker_stop;
static uint64_t worker_n;

static void on_alarm(int sig) {
    (void)sig;
    for (int i = 0; i < 5000; i++) {
        PROFILE_SCOPE("in_handler");
        BUMP();
    }
    __atomic_add_fetch(&alarms, 1, __ATOMIC_RELAXED);
}

static void *alarm_worker(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&worker_stop, __ATOMIC_RELAXED)) {
        { PROFILE_SCOPE("worker"); }
        __atomic_add_fetch(&worker_n, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int mode_handler_scope(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the worker inherits it */
    pthread_t th;
    pthread_create(&th, NULL, alarm_worker, NULL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    /* As docs/DESIGN.md asks: the site and this thread's state are made
     * outside the handler (their first use allocates), here by one call. */
    on_alarm(0);
    __atomic_store_n(&alarms, 0, __ATOMIC_RELAXED);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    while (__atomic_load_n(&alarms, __ATOMIC_RELAXED) < 300) PROFILE_FLUSH();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    __atomic_store_n(&worker_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    printf("worker %llu alarms %d\n", (unsigned long long)__atomic_load_n(&worker_n, __ATOMIC_RELAXED),
           __atomic_load_n(&alarms, __ATOMIC_RELAXED) + 1); /* + the warm-up call */
    return 0;
}

/* ---- issue 17 item 9: PROFILE_SCOPE in a handler that lands inside malloc --
 * SIGUSR1's handler records "sig_outer" { 30 x "sig_inner", one of 1500
 * "sig_dyn_N" (PROFILE_SCOPE_DYN: a new site on most early signals) }.
 * Main loops on "main_loop" { 64 x malloc/free of 2-60 KB (glibc takes its
 * arena lock there) }, its scope's close made with SIGUSR1 held (see DESIGN.md:
 * a handler's scope that interrupts its own thread's scope close can
 * overwrite it). Workers, started 2 at a time, loop on malloc/free with no
 * scope: a signal's handler makes their first scope (the thread's state and
 * buffer). A signaller thread sends n signals (waves of 100, 2 new workers
 * each), round robin to main and the live workers, each after the last one
 * was handled. Prints
 * "main <loops> handled <signals>"; a hang is ended by alarm(). */
static volatile int hm_handled, hm_stop;
static volatile int hm_workers_stop;
static void *hm_sink; /* keeps malloc/free pairs from being folded away */

static void hm_on_usr1(int sig) {
    (void)sig;
    int n = __atomic_load_n(&hm_handled, __ATOMIC_RELAXED);
    char name[16] = "sig_dyn_";
    int k = n % 1500, len = 8;
    char digits[8];
    int nd = 0;
    do digits[nd++] = (char)('0' + k % 10), k /= 10; while (k);
    while (nd) name[len++] = digits[--nd];
    name[len] = 0;
    {
        PROFILE_SCOPE("sig_outer");
        for (int i = 0; i < 30; i++) {
            PROFILE_SCOPE("sig_inner");
            BUMP();
        }
        PROFILE_SCOPE_DYN(name);
        BUMP();
    }
    __atomic_add_fetch(&hm_handled, 1, __ATOMIC_RELEASE);
}

static void *hm_worker(void *arg) {
    sigset_t *usr1 = (sigset_t *)arg;
    pthread_sigmask(SIG_UNBLOCK, usr1, NULL);
    unsigned x = 12345;
    while (!__atomic_load_n(&hm_workers_stop, __ATOMIC_RELAXED)) {
        x = x * 1103515245u + 12345u;
        char *p = (char *)malloc(2000 + (x >> 8) % 58000);
        __atomic_store_n(&hm_sink, p, __ATOMIC_RELAXED);
        free(p);
    }
    return NULL;
}

static int hm_waves;

static void *hm_signaller(void *arg) {
    sigset_t *usr1 = (sigset_t *)arg;
    pthread_t main_th = *(pthread_t *)((char *)arg + sizeof(sigset_t));
    pthread_t w[2];
    int sent = 0;
    for (int wave = 0; wave < hm_waves; wave++) {
        __atomic_store_n(&hm_workers_stop, 0, __ATOMIC_RELAXED);
        for (int i = 0; i < 2; i++)
            if (pthread_create(&w[i], NULL, hm_worker, usr1) != 0) _exit(41);
        for (int i = 0; i < 100; i++) {
            int before = __atomic_load_n(&hm_handled, __ATOMIC_ACQUIRE);
            pthread_kill(i % 3 == 0 ? main_th : w[i % 2], SIGUSR1);
            sent++;
            while (__atomic_load_n(&hm_handled, __ATOMIC_ACQUIRE) == before) sched_yield();
        }
        __atomic_store_n(&hm_workers_stop, 1, __ATOMIC_RELAXED);
        for (int i = 0; i < 2; i++) pthread_join(w[i], NULL);
    }
    __atomic_store_n(&hm_stop, 1, __ATOMIC_RELEASE);
    return (void *)(intptr_t)sent;
}

static int mode_handler_malloc(int n) {
    hm_waves = n / 100;
    alarm(120); /* a deadlock fails (killed by SIGALRM) rather than hangs */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = hm_on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    struct {
        sigset_t usr1;
        pthread_t main_th;
    } arg;
    sigemptyset(&arg.usr1);
    sigaddset(&arg.usr1, SIGUSR1);
    arg.main_th = pthread_self();
    /* As docs/DESIGN.md asks: the process's first scope (it makes the
     * registry and starts the writer thread, with malloc) is made before a
     * handler can record. Unblocked first, a signal landing inside main's
     * first scope started the writer from the handler (TSan: calloc in a
     * signal handler, 1 run in about 10). */
    { PROFILE_SCOPE("main_warm"); }
    pthread_sigmask(SIG_BLOCK, &arg.usr1, NULL); /* the signaller and workers inherit it */
    pthread_t sig_th;
    if (pthread_create(&sig_th, NULL, hm_signaller, &arg) != 0) return 40;
    unsigned long long loops = 0;
    unsigned x = 777;
    pthread_sigmask(SIG_UNBLOCK, &arg.usr1, NULL);
    while (!__atomic_load_n(&hm_stop, __ATOMIC_ACQUIRE)) {
        {
            PROFILE_SCOPE("main_loop");
            for (int i = 0; i < 64; i++) { /* few events: the trace stays within the budget */
                x = x * 1103515245u + 12345u;
                char *p = (char *)malloc(2000 + (x >> 8) % 58000);
                __atomic_store_n(&hm_sink, p, __ATOMIC_RELAXED);
                free(p);
            }
            loops++;
            pthread_sigmask(SIG_BLOCK, &arg.usr1, NULL);
        }
        pthread_sigmask(SIG_UNBLOCK, &arg.usr1, NULL);
    }
    void *sent;
    pthread_join(sig_th, &sent);
    printf("main %llu handled %d sent %d\n", loops, __atomic_load_n(&hm_handled, __ATOMIC_RELAXED),
           (int)(intptr_t)sent);
    return 0;
}

/* ---- issue 17 item 11: n threads one after another, each recording
 * "short_outer" { "short_inner" } and written (PROFILE_FLUSH) after it ends.
 * Prints the registry's thread count and the exit summary's per-thread
 * slots, read in process: "threads <n> summary_slots <k>". */
static int mode_thread_slots(int n) {
    for (int i = 0; i < n; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, short_thread, NULL) != 0) return 40;
        pthread_join(th, NULL);
        PROFILE_FLUSH();
    }
#ifdef PROFILE_ENABLE
    scopeprof__state *g = scopeprof__g;
    printf("threads %u summary_slots %u\n", g->reg.nthreads, g->sum.agg.nthreads);
#endif
    return 0;
}

int main(int argc, char **argv) {
    ssize_t k = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (k < 0) return 2;
    self_exe[k] = 0;
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "mem") == 0) return mode_mem();
    if (strcmp(m, "steps") == 0) return mode_steps(argc, argv);
    if (strcmp(m, "fork") == 0) return mode_fork(0);
    if (strcmp(m, "fork_steps") == 0) return mode_fork_steps();
    if (strcmp(m, "summary_writes") == 0) return mode_summary_writes();
    if (strcmp(m, "finish_exit") == 0) return mode_finish_exit(argc > 2 && strcmp(argv[2], "bare") == 0);
    if (strcmp(m, "fork_inside") == 0) return mode_fork_inside(argc > 2 && strcmp(argv[2], "drop") == 0);
    if (strcmp(m, "moved") == 0) return mode_moved(argc > 2 && strcmp(argv[2], "bare") == 0);
    if (strcmp(m, "forkexec") == 0) return mode_fork(1);
    if (strcmp(m, "execd") == 0) return mode_execd();
    if (strcmp(m, "rank") == 0) return mode_rank(argc, argv);
    if (strcmp(m, "print") == 0) return mode_print();
    if (strcmp(m, "fault") == 0 && argc > 2) return mode_fault(argv[2]);
    if (strcmp(m, "exit_thread") == 0) return mode_exit_thread();
    if (strcmp(m, "_exit") == 0) return mode_underscore_exit();
    if (strcmp(m, "pthread_exit") == 0) return mode_pthread_exit();
    if (strcmp(m, "dlclose") == 0 && argc > 2) return mode_dlclose(strcmp(argv[2], "main_first") == 0);
    if (strcmp(m, "threads") == 0 && argc > 2) return mode_threads(atoi(argv[2]));
    if (strcmp(m, "deep") == 0 && argc > 2) return mode_deep(atoi(argv[2]));
    if (strcmp(m, "very_deep") == 0 && argc > 2) return mode_very_deep(atoi(argv[2]));
    if (strcmp(m, "runs") == 0) return mode_runs();
    if (strcmp(m, "clock") == 0) return mode_clock(argc > 2 && strcmp(argv[2], "late") == 0);
    if (strcmp(m, "overlap") == 0) return mode_overlap();
    if (strcmp(m, "late_close") == 0) return mode_late_close();
    if (strcmp(m, "long") == 0) return mode_long();
    if (strcmp(m, "bigname") == 0) return mode_bigname();
    if (strcmp(m, "chdir") == 0) return mode_chdir();
    if (strcmp(m, "flush_storm") == 0) return mode_flush_storm();
    if (strcmp(m, "sig_locked") == 0 && argc > 2) return mode_sig_locked(argv[2]);
    if (strcmp(m, "pipe") == 0) return mode_pipe();
    if (strcmp(m, "fork_alloc") == 0 && argc > 2) return mode_fork_alloc(atoi(argv[2]));
    if (strcmp(m, "fork_mem") == 0) return mode_fork_mem();
    if (strcmp(m, "exit_open") == 0) return mode_exit_open();
    if (strcmp(m, "exit_in_scopes") == 0) return mode_exit_in_scopes(argc > 2 && strcmp(argv[2], "range") == 0);
    if (strcmp(m, "open_elsewhere") == 0) return mode_open_elsewhere();
    if (strcmp(m, "handler_scope") == 0) return mode_handler_scope();
    if (strcmp(m, "handler_malloc") == 0 && argc > 2) return mode_handler_malloc(atoi(argv[2]));
    if (strcmp(m, "thread_slots") == 0 && argc > 2) return mode_thread_slots(atoi(argv[2]));
    if (strcmp(m, "oom") == 0 && argc > 2) return mode_oom(strcmp(argv[2], "later") == 0);
    if (strcmp(m, "fd_steal") == 0 && argc > 2) return mode_fd_steal(argv[2]);
    if (strcmp(m, "fd_lost") == 0 && argc > 2) return mode_fd_lost(argv[2]);
    if (strcmp(m, "reexec") == 0 && argc > 2) return mode_reexec(atoi(argv[2]));
    fprintf(stderr, "prog_life: unknown mode '%s'\n", m);
    return 2;
}
