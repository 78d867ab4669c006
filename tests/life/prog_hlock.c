/* prog_hlock.c -- issue 17 item 9, made deterministic: a signal handler's
 * first-use scope in a thread that the signal interrupted inside malloc,
 * while the background writer holds the registry lock and waits in malloc
 * for the lock that thread holds.
 *
 * The allocator's lock is made visible: the program is linked with
 * -Wl,--wrap=malloc (and calloc, realloc, free), so every allocation of the
 * program, the profiler's included, goes through wrap_enter/wrap_leave
 * around one mutex, as an allocator's size-class lock. Each round:
 *   1. main records a scope with a name not seen before: the writer's next
 *      timed flush (SCOPEPROF_FLUSH_MS=1) aggregates it and allocates the
 *      new row's name with malloc, under the registry lock;
 *   2. main calls malloc; inside, holding the mutex, it waits until another
 *      thread is blocked on the mutex while it owns the registry lock (the
 *      writer, in step 1's malloc), then raises SIGUSR1;
 *   3. the handler records a scope with another new name: its site must be
 *      registered, there and then.
 * Before, registration took the registry lock: the handler waited for the
 * writer, the writer for the mutex, the mutex for the handler's return. Now
 * it takes the registration lock, which no holder keeps across malloc.
 *
 * Prints "rounds <r> caught <c> handled <h>": c rounds met step 2's
 * condition (the deadlock's), h handlers finished. A hang is for the
 * runner's timeout to kill: the deadlocked handler waits with every signal
 * held (as the profiler's locks do), so neither alarm() nor SIGTERM ends it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t main_th;
static int armed;        /* main's next allocation runs step 2 */
static int waiter_tid;   /* a thread other than main, about to wait for alloc_lock */
static int handled, caught;
static void *volatile sink; /* keeps malloc/free pairs from being folded away */

/* A decimal name without stdio (the handler's). */
static void name_of(char *out, const char *prefix, int k) {
    char digits[12];
    int nd = 0;
    size_t len = strlen(prefix);
    memcpy(out, prefix, len);
    do digits[nd++] = (char)('0' + k % 10), k /= 10; while (k);
    while (nd) out[len++] = digits[--nd];
    out[len] = 0;
}

static void on_usr1(int sig) {
    (void)sig;
    char name[32];
    name_of(name, "sig_fresh_", __atomic_load_n(&handled, __ATOMIC_RELAXED));
    {
        PROFILE_SCOPE_DYN(name);
    }
    __atomic_add_fetch(&handled, 1, __ATOMIC_RELEASE);
}

/* Whether thread `tid` owns the registry lock (glibc's mutex records its
 * owner; this test runs on glibc). */
static int owns_registry(int tid) {
#ifdef PROFILE_ENABLE
    return __atomic_load_n(&scopeprof__g->lock.__data.__owner, __ATOMIC_RELAXED) == tid;
#else
    (void)tid;
    return 0;
#endif
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wrap_enter(void) {
    int mine = pthread_equal(pthread_self(), main_th);
    if (!mine) __atomic_store_n(&waiter_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    pthread_mutex_lock(&alloc_lock);
    if (!mine) __atomic_store_n(&waiter_tid, 0, __ATOMIC_RELEASE);
    if (!mine || !__atomic_load_n(&armed, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
    /* Step 2: up to 0.5 s for the writer to block here, registry lock held. */
    for (double end = now_s() + 0.5; now_s() < end;) {
        int w = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE);
        if (w && owns_registry(w)) {
            usleep(1000); /* let it reach the futex wait */
            caught++;
            break;
        }
        sched_yield();
    }
    raise(SIGUSR1);
}
static void wrap_leave(void) {
    pthread_mutex_unlock(&alloc_lock);
}

void *__wrap_malloc(size_t n) {
    wrap_enter();
    void *p = __real_malloc(n);
    wrap_leave();
    return p;
}
void *__wrap_calloc(size_t k, size_t n) {
    wrap_enter();
    void *p = __real_calloc(k, n);
    wrap_leave();
    return p;
}
void *__wrap_realloc(void *q, size_t n) {
    wrap_enter();
    void *p = __real_realloc(q, n);
    wrap_leave();
    return p;
}
void __wrap_free(void *p) {
    wrap_enter();
    __real_free(p);
    wrap_leave();
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    main_th = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    { PROFILE_SCOPE("main_warm"); } /* the process's first scope: not in a handler */
    for (int r = 0; r < rounds; r++) {
        char name[32];
        name_of(name, "round_fresh_", r);
        { PROFILE_SCOPE_DYN(name); }                   /* step 1 */
        __atomic_store_n(&armed, 1, __ATOMIC_RELEASE); /* step 2 */
        sink = malloc(32);
        free(sink);
    }
    printf("rounds %d caught %d handled %d\n", rounds, caught, __atomic_load_n(&handled, __ATOMIC_ACQUIRE));
    return 0;
}
