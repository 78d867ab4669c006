/* prog_writer.c -- the background writer's hand-offs, for test_writer.c.
 * Modes (argv[1]):
 *   sigkill N MS   main records N "killed_work" scopes in 4 steps, sleeps MS
 *                  ms, then SIGKILLs itself (nothing of ours runs after that).
 *   thread_exit    8 threads record 40000 "quick" each and end at once,
 *                  their last chunks still queued for the writer; main joins
 *                  them and exits 0.
 *   fork N         a thread streams (the writer busy) while main forks N
 *                  times; each child records 20000 "in_child" (several
 *                  chunks: it writes them itself, with no writer), flushes
 *                  and _exits 0. Prints "hung <k>" (children not ended in 10 s, killed).
 *   signal SIG     4 threads stream "work" until main has counted 400000,
 *                  main stops and joins them (count final, kept in
 *                  count.bin) and raises SIG at once, while the writer
 *                  still drains the queue.
 *   stream N       2 threads record N "streamed" each, then exit 0.
 *   exit_busy      2 threads record "busy" without end; main exits after
 *                  50 ms while they (and the writer) are mid-chunk.
 *   hwm N          main records N "counted" scopes, then prints its peak
 *                  RSS (the VmHWM line of /proc/self/status). */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peak_rss.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

static volatile uint64_t sink;
#define BUMP() __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED)

static int mode_sigkill(long n, long ms) {
    for (long i = 0; i < n; i++) {
        PROFILE_SCOPE("killed_work");
        BUMP();
        if (i % (n / 4) == n / 4 - 1) PROFILE_STEP(); /* steps 0-3 end */
    }
    sleep_ms(ms);
    kill(getpid(), SIGKILL);
    return 1;
}

static void *quick_thread(void *arg) {
    (void)arg;
    for (int i = 0; i < 40000; i++) {
        PROFILE_SCOPE("quick");
        BUMP();
    }
    return NULL;
}

static int mode_thread_exit(void) {
    pthread_t th[8];
    for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, quick_thread, NULL);
    for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
    return 0;
}

static volatile int stop;
static uint64_t streamed;
static void *stream_thread(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        { PROFILE_SCOPE("work"); }
        __atomic_add_fetch(&streamed, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int mode_fork(int n) {
    pthread_t th;
    pthread_create(&th, NULL, stream_thread, NULL);
    int hung = 0;
    for (int k = 0; k < n; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 20000; i++) {
                PROFILE_SCOPE("in_child");
                BUMP();
            }
            /* Its own write, under the locks it inherited; then _exit: the
             * leak checker of clang's ASan, in a child forked from threads,
             * counts what only the parent's threads pointed to. */
            PROFILE_FLUSH();
            _exit(0);
        }
        int st = 0, done = 0;
        for (int w = 0; w < 5000 && !done; w++) { /* 10 s */
            if (waitpid(pid, &st, WNOHANG) == pid) done = 1;
            else sleep_ms(2);
        }
        if (!done) {
            hung++;
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            hung += 1000; /* a child that failed (sanitizer report) */
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    printf("hung %d\n", hung);
    return 0;
}

static int mode_signal(int sig) {
    int fd = open("count.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 8) != 0) return 70;
    volatile uint64_t *count = (volatile uint64_t *)mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (count == MAP_FAILED) return 71;
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, stream_thread, NULL);
    while (__atomic_load_n(&streamed, __ATOMIC_RELAXED) < 400000) sleep_ms(1);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    *count = streamed;
    raise(sig);
    return 72;
}

static long per_thread;
static void *n_thread(void *arg) {
    (void)arg;
    for (long i = 0; i < per_thread; i++) {
        PROFILE_SCOPE("streamed");
        BUMP();
    }
    return NULL;
}

static int mode_stream(long n) {
    per_thread = n;
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, n_thread, NULL);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    return 0;
}

static void *busy_thread(void *arg) {
    (void)arg;
    for (;;) {
        PROFILE_SCOPE("busy");
        BUMP();
    }
    return NULL;
}

static int mode_exit_busy(void) {
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, busy_thread, NULL);
    sleep_ms(50);
    exit(0);
}

static int mode_hwm(long n) {
    for (long i = 0; i < n; i++) {
        PROFILE_SCOPE("counted");
        BUMP();
    }
    peak_rss_print();
    return 0;
}

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "";
    { PROFILE_SCOPE("main_start"); } /* the registry made before any thread (as programs do) */
    if (strcmp(m, "sigkill") == 0 && argc > 3) return mode_sigkill(atol(argv[2]), atol(argv[3]));
    if (strcmp(m, "thread_exit") == 0) return mode_thread_exit();
    if (strcmp(m, "fork") == 0 && argc > 2) return mode_fork(atoi(argv[2]));
    if (strcmp(m, "signal") == 0 && argc > 2) return mode_signal(atoi(argv[2]));
    if (strcmp(m, "stream") == 0 && argc > 2) return mode_stream(atol(argv[2]));
    if (strcmp(m, "exit_busy") == 0) return mode_exit_busy();
    if (strcmp(m, "hwm") == 0 && argc > 2) return mode_hwm(atol(argv[2]));
    fprintf(stderr, "prog_writer: unknown mode '%s'\n", m);
    return 2;
}
