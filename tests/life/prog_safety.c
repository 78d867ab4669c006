/* prog_safety.c -- the profiled program of tests/life/test_safety.c (issue
 * 25: a traced program stays as safe and as alive as it was). argv[1] picks
 * what it does; each mode says what it records and prints. Built with
 * PROFILE_ENABLE in three variants (plain, ASan+UBSan, TSan). */
#define _GNU_SOURCE /* clone, unshare */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwound.h"

extern char **environ;

/* Keeps loops around scopes from being folded away (atomic: TSan must only
 * report the profiler's races). */
static unsigned sink;
#define BUMP() __atomic_add_fetch(&sink, 1u, __ATOMIC_RELAXED)

static void work(int n) {
    for (int i = 0; i < n; i++) {
        PROFILE_SCOPE("work");
        BUMP();
    }
}

static void nap_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- "record N": "work" x N, then "done" on stdout. ------------------------ */
static int mode_record(int n) {
    work(n);
    printf("done\n");
    return 0;
}

/* ---- "plant VICTIM": run as root in a directory every user may write
 * (made so here), another user (nobody) plants a symbolic link to VICTIM at
 * the trace's name before the first scope: SCOPEPROF_OUTPUT if set, else the
 * default name <comm>.<pid>.sprof, predictable enough to plant for the next
 * pids. Then "work" x 10; prints "planted NAME". */
static int mode_plant(const char *victim) {
    char comm[64] = "", name[PATH_MAX];
    FILE *f = fopen("/proc/self/comm", "r");
    if (!f || !fgets(comm, sizeof comm, f)) return 90;
    fclose(f);
    comm[strcspn(comm, "\n")] = 0;
    const char *out = getenv("SCOPEPROF_OUTPUT");
    if (out) snprintf(name, sizeof name, "%s", out);
    else snprintf(name, sizeof name, "%s.%d.sprof", comm, (int)getpid());
    if (chmod(".", 0777) != 0) return 94;
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(91);
        _exit(symlink(victim, name) == 0 ? 0 : 92);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 93;
    printf("planted %s\n", name);
    work(10);
    return 0;
}

/* ---- "environ": the environment is the program's alone. A thread reads it
 * (getenv, and a walk of `environ`) while the main thread makes its first
 * scope; afterwards the array and its strings must be as they were. Prints
 * "environ unchanged" (or what changed), "random <hex>" (the 16 AT_RANDOM
 * bytes, which seed the stack canary and the pointer guard), then runs
 * /usr/bin/env, whose output (the environment a child gets) follows. */
static volatile int env_stop;
static void *env_reader(void *arg) {
    (void)arg;
    size_t n = 0;
    while (!__atomic_load_n(&env_stop, __ATOMIC_ACQUIRE)) {
        const char *h = getenv("HOME");
        n += h ? strlen(h) : 0;
        for (char **e = environ; *e; e++) n += (unsigned char)**e;
    }
    return (void *)n;
}

static int mode_environ(void) {
    char **before = environ;
    size_t count = 0;
    while (environ[count]) count++;
    char **copy = (char **)calloc(count + 1, sizeof *copy);
    for (size_t i = 0; i < count; i++) copy[i] = strdup(environ[i]);
    pthread_t th;
    if (pthread_create(&th, NULL, env_reader, NULL) != 0) return 90;
    nap_ms(5);
    work(100);
    __atomic_store_n(&env_stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    size_t now = 0;
    while (environ[now]) now++;
    if (environ != before || now != count) {
        printf("environ changed: %zu -> %zu variables%s\n", count, now,
               environ != before ? ", a new array" : "");
    } else {
        int same = 1;
        for (size_t i = 0; i < count; i++) same &= strcmp(copy[i], environ[i]) == 0;
        printf(same ? "environ unchanged\n" : "environ changed: a value\n");
    }
    for (size_t i = 0; i < count; i++) free(copy[i]);
    free(copy);
    const unsigned char *r = (const unsigned char *)(uintptr_t)getauxval(AT_RANDOM);
    printf("random ");
    for (int i = 0; r && i < 16; i++) printf("%02x", r[i]);
    printf("\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/usr/bin/env", "env", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

/* ---- "cancel flush|record|first": a thread is cancelled while it records.
 * flush: it loops over "cancelled" x100, PROFILE_FLUSH(), and a
 * pthread_testcancel(): the flush's write(2) is the first cancellation point
 * after the request unless the profiler holds it off. record: it records
 * "cancelled" without end and checks for cancellation every 1000 scopes
 * (with SCOPEPROF_WRITER=0 and a small budget the thread writes its chunks
 * itself). The main thread cancels it after 50 ms, joins it, prints
 * "joined", records "after" x10 and exits 0. */
/* Cancelled threads clear their ASan redzones (tests/common/unwound.h). */

static void *cancel_flush(void *arg) {
    (void)arg;
    pthread_cleanup_push(unpoison_unwound, NULL);
    for (;;) {
        for (int i = 0; i < 100; i++) {
            PROFILE_SCOPE("cancelled");
            BUMP();
        }
        PROFILE_FLUSH();
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void *cancel_record(void *arg) {
    (void)arg;
    pthread_cleanup_push(unpoison_unwound, NULL);
    for (;;) {
        for (int i = 0; i < 1000; i++) {
            PROFILE_SCOPE("cancelled");
            BUMP();
        }
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

/* first: the thread's first scope is the process's first, with the cancel
 * already pending: that scope starts the background writer and waits for
 * it under the chunk lock, sleeping (a cancellation point). */
static pthread_barrier_t first_go;

static void *cancel_first(void *arg) {
    (void)arg;
    pthread_barrier_wait(&first_go); /* not a cancellation point */
    pthread_cleanup_push(unpoison_unwound, NULL);
    for (;;) {
        {
            PROFILE_SCOPE("cancelled");
            BUMP();
        }
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static int mode_cancel(const char *how) {
    pthread_t th;
    if (strcmp(how, "first") == 0) {
        pthread_barrier_init(&first_go, NULL, 2);
        if (pthread_create(&th, NULL, cancel_first, NULL) != 0) return 90;
        pthread_cancel(th);
        pthread_barrier_wait(&first_go);
    } else {
        work(1);
        if (pthread_create(&th, NULL, strcmp(how, "flush") == 0 ? cancel_flush : cancel_record, NULL) != 0)
            return 90;
        nap_ms(50);
        pthread_cancel(th);
    }
    void *ret = NULL;
    pthread_join(th, &ret);
    printf(ret == PTHREAD_CANCELED ? "joined\n" : "joined, not cancelled\n");
    for (int i = 0; i < 10; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    return 0;
}

/* ---- "fsize exit|flush|writer|thread|signal": `ulimit -f 64` (64 KiB) as
 * the program's own limit; "work" x 100,000 (1.6 MB of trace) then:
 * exit: return (the exit's write passes the limit); flush: PROFILE_FLUSH()
 * in the main thread, then "work" x 10; writer: wait 400 ms for the
 * background writer's timed flush; thread: a second thread records and
 * flushes; signal: raise(SIGTERM) (the handler writes the trace). Prints
 * "done" and exits 0, except signal. */
static void *fsize_thread(void *arg) {
    (void)arg;
    work(100000);
    PROFILE_FLUSH();
    return NULL;
}

static int mode_fsize(const char *how) {
    struct rlimit rl = {64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 90;
    if (strcmp(how, "thread") == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, fsize_thread, NULL) != 0) return 91;
        pthread_join(th, NULL);
    } else {
        work(100000);
    }
    if (strcmp(how, "flush") == 0) {
        PROFILE_FLUSH();
        work(10);
    } else if (strcmp(how, "writer") == 0) {
        nap_ms(400);
    } else if (strcmp(how, "signal") == 0) {
        fflush(stdout);
        raise(SIGTERM);
        return 92;
    }
    printf("done\n");
    return 0;
}

/* ---- "daemon": "before" x1 in the starting directory, then chdir into
 * "sub" (made here), as a daemon's chdir("/"); a forked child records
 * "child_work" x3 and exits 0 (3 if it was born with SIGTERM blocked or
 * cancellation disabled: the parent had neither); the parent prints "child
 * <pid> status <s>" and records "after" x2. Both traces (default names)
 * belong where the program started. */
static int mode_daemon(void) {
    {
        PROFILE_SCOPE("before");
        BUMP();
    }
    if (mkdir("sub", 0755) != 0 || chdir("sub") != 0) return 90;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t mask;
        int cancel = -1;
        pthread_sigmask(SIG_BLOCK, NULL, &mask);
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &cancel);
        for (int i = 0; i < 3; i++) {
            PROFILE_SCOPE("child_work");
            BUMP();
        }
        exit(sigismember(&mask, SIGTERM) || cancel != PTHREAD_CANCEL_ENABLE ? 3 : 0);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    for (int i = 0; i < 2; i++) {
        PROFILE_SCOPE("after");
        BUMP();
    }
    return 0;
}

/* ---- "names": scope names that hold terminal control sequences and a
 * newline: "title\x1b]0;owned\x07" x2 (sets the terminal's title),
 * "clear\x1b[2J" x1 (clears it), "two\nlines" x3, "csi\xc2\x9b" x1 (the C1
 * control CSI in UTF-8), "plain" x1, and a thread named "th\x1b[1m". */
static int mode_names(void) {
    PROFILE_THREAD_NAME("th\x1b[1m");
    for (int i = 0; i < 2; i++) {
        PROFILE_SCOPE("title\x1b]0;owned\x07");
        BUMP();
    }
    {
        PROFILE_SCOPE("clear\x1b[2J");
        BUMP();
    }
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("two\nlines");
        BUMP();
    }
    {
        PROFILE_SCOPE("csi\xc2\x9b");
        BUMP();
    }
    {
        PROFILE_SCOPE("plain");
        BUMP();
    }
    return 0;
}

/* ---- "clone": "parent" x5, then a child made by clone() without fork()
 * (no CLONE_VM: a copy of the memory, but no fork handler runs) records
 * "clone_child" x5 and calls exit(0) (destructors run); the parent waits,
 * prints "clone <pid> status <s>" and records "parent" x5 more. */
static int clone_child(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        PROFILE_SCOPE("clone_child");
        BUMP();
    }
    exit(0);
}

static int mode_clone(void) {
    work(0);
    for (int i = 0; i < 5; i++) {
        PROFILE_SCOPE("parent");
        BUMP();
    }
    static char stack[256 * 1024] __attribute__((aligned(16)));
    fflush(stdout);
    int pid = clone(clone_child, stack + sizeof stack, SIGCHLD, NULL);
    if (pid < 0) return 90;
    int st = -1;
    waitpid(pid, &st, 0);
    printf("clone %d status %d\n", pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    for (int i = 0; i < 5; i++) {
        PROFILE_SCOPE("parent");
        BUMP();
    }
    return 0;
}

/* ---- "longjmp": error handling by longjmp, as libpng's: "outer" calls
 * decode(), which opens "decode", "row" and "pixel" and jumps back out of
 * all three from inside "pixel"; then, still inside "outer", "after_jump" x2
 * and "outer" closes. Then "clean" x3 (no jump), and "holder" with the
 * range "range" opened inside it and ended after it. Three scopes were
 * left. */
static jmp_buf on_error;
static void decode(void) {
    PROFILE_SCOPE("decode");
    {
        PROFILE_SCOPE("row");
        {
            PROFILE_SCOPE("pixel");
            BUMP();
            longjmp(on_error, 1);
        }
    }
}

static void outer_jumped(void) {
    PROFILE_SCOPE("outer");
    if (setjmp(on_error) == 0) decode();
    for (int i = 0; i < 2; i++) {
        PROFILE_SCOPE("after_jump");
        BUMP();
    }
}

static void clean(void) {
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("clean");
        BUMP();
    }
}

static int mode_longjmp(void) {
    outer_jumped();
    clean();
    { /* a range left open across a scope's close: not a scope left */
        PROFILE_SCOPE("holder");
        PROFILE_BEGIN("range");
    }
    PROFILE_END();
    return 0;
}

/* ---- "longjmp_steps": "outer" with its jump (as above) in a first step,
 * "clean" x3 in a second: under SCOPEPROF_SCHEDULE=active=1,repeat=2 each
 * has a file, and only the first lacks scopes. */
static int mode_longjmp_steps(void) {
    outer_jumped();
    PROFILE_STEP();
    clean();
    PROFILE_STEP();
    return 0;
}

/* ---- "range_inside": in "M", the range "R" ends inside the scope "S" it
 * holds: R's level stays counted until M closes (said as a scope left),
 * yet M, S and R are all recorded. */
static int mode_range_inside(void) {
    PROFILE_SCOPE("M");
    PROFILE_BEGIN("R");
    {
        PROFILE_SCOPE("S");
        BUMP();
        PROFILE_END();
    }
    return 0;
}

/* ---- "range_over": in "main", a range "R" begun inside "f" and ended
 * after "g": R (depth 2) spans f's end and all of g. */
static int mode_range_over(void) {
    PROFILE_SCOPE("main");
    {
        PROFILE_SCOPE("f");
        BUMP();
        PROFILE_BEGIN("R");
        BUMP();
    }
    {
        PROFILE_SCOPE("g");
        BUMP();
    }
    PROFILE_END();
    return 0;
}

/* ---- "unshare": "work" x10, then unshare(CLONE_NEWUSER), which the kernel
 * allows only in a single-threaded process; prints "unshare ok" or
 * "unshare: <error>". */
static int mode_unshare(void) {
    work(10);
    int rc = unshare(CLONE_NEWUSER);
    if (rc == 0) printf("unshare ok\n");
    else printf("unshare: %s\n", strerror(errno));
    return 0;
}

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "record") == 0 && argc > 2) return mode_record(atoi(argv[2]));
    if (strcmp(m, "plant") == 0 && argc > 2) return mode_plant(argv[2]);
    if (strcmp(m, "environ") == 0) return mode_environ();
    if (strcmp(m, "cancel") == 0 && argc > 2) return mode_cancel(argv[2]);
    if (strcmp(m, "fsize") == 0 && argc > 2) return mode_fsize(argv[2]);
    if (strcmp(m, "daemon") == 0) return mode_daemon();
    if (strcmp(m, "names") == 0) return mode_names();
    if (strcmp(m, "clone") == 0) return mode_clone();
    if (strcmp(m, "longjmp") == 0) return mode_longjmp();
    if (strcmp(m, "longjmp_steps") == 0) return mode_longjmp_steps();
    if (strcmp(m, "range_over") == 0) return mode_range_over();
    if (strcmp(m, "range_inside") == 0) return mode_range_inside();
    if (strcmp(m, "unshare") == 0) return mode_unshare();
    fprintf(stderr, "prog_safety: unknown mode '%s'\n", m);
    return 2;
}
