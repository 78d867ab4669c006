/* One process, four modules' worth of scopes, for test_record.c: this file
 * (main_scope x2), multi_b.c in the same executable (tu_b_scope x3),
 * libsp_linked.so linked at build time (linked_lib_scope x4) and
 * libsp_dl.so opened with dlopen(RTLD_LOCAL) (dl_lib_scope x5, called from
 * inside a main_scope, so at depth 1 if the thread state is shared). The
 * executable is built without -rdynamic. One table and one file expected. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void b_func(void);
void linked_func(void);

/* Mode "late": a pthread key made after the profiler's, whose destructor
 * records in the linked library after the profiler's destructor has taken
 * the thread's buffer (the library's copy of the thread pointer is still
 * set). It once crashed in chunk_next; now the scope is kept. */
static pthread_key_t late_key;
static void late_dtor(void *p) {
    (void)p;
    linked_func();
}
static void *late_worker(void *arg) {
    (void)arg;
    { PROFILE_SCOPE("worker_scope"); }
    linked_func();
    pthread_setspecific(late_key, (void *)1);
    return NULL;
}
static int mode_late(void) {
    { PROFILE_SCOPE("main_scope"); } /* the profiler's key first */
    if (pthread_key_create(&late_key, late_dtor) != 0) return 20;
    pthread_t th;
    if (pthread_create(&th, NULL, late_worker, NULL) != 0) return 21;
    pthread_join(th, NULL);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "late") == 0) return mode_late();
    { PROFILE_SCOPE("main_scope"); }
    for (int i = 0; i < 3; i++) b_func();
    for (int i = 0; i < 4; i++) linked_func();

    /* The plugin sits next to the executable; its name carries the build
     * variant's suffix (see rules.mk). */
    char exe[PATH_MAX], lib[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return 10;
    exe[n] = 0;
    snprintf(lib, sizeof lib, "%s/libsp_dl%s.so", dirname(exe), VARIANT);
    PROFILE_BEGIN("cross_range");
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 11;
    }
    void (*dl_func)(void) = (void (*)(void))dlsym(h, "dl_func");
    void (*dl_end)(void) = (void (*)(void))dlsym(h, "dl_end");
    if (!dl_func || !dl_end) return 12;
    dl_end(); /* the plugin's first call ends the range around its loading */
    {
        PROFILE_SCOPE("main_scope");
        for (int i = 0; i < 5; i++) dl_func();
    }
    return 0; /* the library stays loaded until exit */
}
