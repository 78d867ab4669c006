/* prog_robust.c -- real recordings of what the reporter must read (issue 16):
 *   prog_robust deep N      recursion N deep, one scope a level (run on a
 *                           thread with a stack big enough for it)
 *   prog_robust threads N   N threads over the run, one after another, one
 *                           scope each
 *   prog_robust killed N    N scopes flushed (PROFILE_FLUSH), N more, then
 *                           SIGKILL: a file with no END record
 *   prog_robust steps N     N steps (PROFILE_STEP), a scope "work" in each */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned sink;

static void recurse(long n) {
    PROFILE_SCOPE("recurse");
    sink++;
    if (n > 1) recurse(n - 1);
    sink++; /* not a tail call */
}

static void *deep(void *arg) {
    recurse((long)arg);
    return NULL;
}

static void *one_scope(void *arg) {
    (void)arg;
    PROFILE_SCOPE("thread_work");
    sink++;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: prog_robust deep|threads|killed|steps N\n");
        return 2;
    }
    long n = atol(argv[2]);
    pthread_t t;
    if (strcmp(argv[1], "deep") == 0) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, (size_t)n * 512 + (1u << 20));
        if (pthread_create(&t, &a, deep, (void *)n) != 0) return 1;
        pthread_join(t, NULL);
    } else if (strcmp(argv[1], "threads") == 0) {
        for (long i = 0; i < n; i++) {
            if (pthread_create(&t, NULL, one_scope, NULL) != 0) return 1;
            pthread_join(t, NULL);
        }
    } else if (strcmp(argv[1], "killed") == 0) {
        for (long i = 0; i < n; i++) {
            PROFILE_SCOPE("before_flush");
            sink++;
        }
        PROFILE_FLUSH();
        for (long i = 0; i < n; i++) {
            PROFILE_SCOPE("after_flush");
            sink++;
        }
        raise(SIGKILL);
    } else if (strcmp(argv[1], "steps") == 0) {
        for (long i = 0; i < n; i++) {
            {
                PROFILE_SCOPE("work");
                usleep(100);
            }
            PROFILE_STEP();
        }
    } else {
        return 2;
    }
    return 0;
}
