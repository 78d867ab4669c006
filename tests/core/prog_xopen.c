/* A program that chose its own feature set (as pigz does: _XOPEN_SOURCE
 * before any header), so that glibc's <unistd.h> does not declare
 * syscall(2), then the implementation. Two threads record a scope each and
 * print their kernel thread id from /proc/thread-self ("tid N"): the trace
 * must name its threads by those ids, not by pthread_self's address. */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

static void say_tid(void) {
    char link[64];
    ssize_t n = readlink("/proc/thread-self", link, sizeof link - 1); /* "<pid>/task/<tid>" */
    if (n <= 0) exit(2);
    link[n] = 0;
    const char *t = strrchr(link, '/');
    printf("tid %s\n", t ? t + 1 : "?");
}

static void *worker(void *arg) {
    (void)arg;
    PROFILE_SCOPE("in_worker");
    say_tid();
    return NULL;
}

int main(void) {
    {
        PROFILE_SCOPE("in_main");
        say_tid();
    }
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0) return 2;
    pthread_join(th, NULL);
    return 0;
}
