/* 2 threads x 150000 scopes for test_record.c, run with SCOPEPROF_BUFFER_MB=1:
 * 7 MiB of events through a 1 MiB budget. Before exiting it prints the trace
 * file's size (MIDSIZE): streaming must already have written most events.
 * PROG_WAIT_MS: sleep that long after the threads end, before MIDSIZE (the
 * background writer's timed flush). */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define PER_THREAD 150000

static void *run(void *arg) {
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        PROFILE_SCOPE("s");
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    const char *w = getenv("PROG_WAIT_MS");
    if (w) {
        long ms = atol(w);
        struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
        nanosleep(&ts, NULL);
    }
    struct stat st;
    const char *out = getenv("SCOPEPROF_OUTPUT");
    printf("MIDSIZE %lld\n", out && stat(out, &st) == 0 ? (long long)st.st_size : -1LL);
    return 0;
}
