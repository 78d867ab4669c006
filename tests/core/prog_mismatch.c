/* Mismatched ranges for test_record.c. It prints, on stdout, the lines the
 * warnings must name: END_LINE (a PROFILE_END with no BEGIN, hit three times
 * but to be reported once) and OPEN_LINE (a PROFILE_BEGIN still open when its
 * thread exits). Everything else must be recorded normally:
 * before 1, after 5, after_child 5, range 1, in_range 1, left_open 1,
 * inside_open 1, last 1. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <pthread.h>
#include <stdio.h>

static int open_line;

static void *leaves_range_open(void *arg) {
    (void)arg;
    PROFILE_BEGIN("left_open"); open_line = __LINE__;
    { PROFILE_SCOPE("inside_open"); }
    return NULL; /* no PROFILE_END */
}

int main(void) {
    int end_line = 0;
    { PROFILE_SCOPE("before"); }
    for (int i = 0; i < 3; i++) {
        PROFILE_END(); end_line = __LINE__;
    }
    for (int i = 0; i < 5; i++) {
        PROFILE_SCOPE("after");
        { PROFILE_SCOPE("after_child"); }
    }
    PROFILE_BEGIN("range");
    { PROFILE_SCOPE("in_range"); }
    PROFILE_END();
    pthread_t t;
    pthread_create(&t, NULL, leaves_range_open, NULL);
    pthread_join(t, NULL);
    { PROFILE_SCOPE("last"); }
    printf("END_LINE %d\nOPEN_LINE %d\n", end_line, open_line);
    /* Left open by the main thread at exit: reported and closed there. */
    PROFILE_BEGIN("main_open");
    return 0;
}
