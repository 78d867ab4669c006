/* Threads for test_record.c: one that runs and exits before the others start,
 * four concurrent workers named in different ways, all joined before main
 * records its own scopes. Expected: early_work 100, work 4000, inner 4000,
 * main_after 10; thread names "named-by-macro", "setname-early" and
 * "setname-late" (set after the thread's first scope). */
#define _GNU_SOURCE
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <stdlib.h>

/* per thread: the workers must not race on it (TSan would rightly say so) */
static __thread volatile unsigned sink;

static void *early(void *arg) {
    (void)arg;
    for (int i = 0; i < 100; i++) {
        PROFILE_SCOPE("early_work");
        sink++;
    }
    return NULL; /* exits long before the program does */
}

static void *worker(void *arg) {
    long id = (long)arg;
    if (id == 0) PROFILE_THREAD_NAME("named-by-macro");
    if (id == 1) pthread_setname_np(pthread_self(), "setname-early");
    for (int i = 0; i < 1000; i++) {
        PROFILE_SCOPE("work");
        { PROFILE_SCOPE("inner"); sink++; }
        if (id == 3 && i == 0) pthread_setname_np(pthread_self(), "setname-late");
    }
    return NULL;
}

/* PROG_RENAME_AFTER_FLUSH: one more thread records, main flushes (its name
 * is in the file), it renames itself "renamed-late" and exits without a
 * scope more; main flushes again (its state is reaped then). Its final name
 * must still reach the file. */
static pthread_barrier_t flushed, recorded;
static void *renamer(void *arg) {
    (void)arg;
    for (int i = 0; i < 10; i++) {
        PROFILE_SCOPE("renamer_work");
        sink++;
    }
    pthread_barrier_wait(&recorded);
    pthread_barrier_wait(&flushed);
    pthread_setname_np(pthread_self(), "renamed-late");
    return NULL;
}
static void rename_after_flush(void) {
    pthread_t r;
    pthread_barrier_init(&recorded, NULL, 2);
    pthread_barrier_init(&flushed, NULL, 2);
    pthread_create(&r, NULL, renamer, NULL);
    pthread_barrier_wait(&recorded);
    PROFILE_FLUSH();
    pthread_barrier_wait(&flushed);
    pthread_join(r, NULL);
    PROFILE_FLUSH();
}

int main(void) {
    if (getenv("PROG_RENAME_AFTER_FLUSH")) rename_after_flush();
    pthread_t t[4];
    pthread_create(&t[0], NULL, early, NULL);
    pthread_join(t[0], NULL);
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 10; i++) {
        PROFILE_SCOPE("main_after");
        sink++;
    }
    return 0;
}
