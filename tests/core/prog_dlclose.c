/* A plugin records first (so its copy of the code creates the registry),
 * is dlclose'd, and the program goes on recording: in the main thread
 * (after_dlclose x3) and in a new thread (thread_after x1). The profile must
 * hold all of it, in one summary at exit. See known_bugs.c. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *thread_after(void *arg) {
    (void)arg;
    PROFILE_SCOPE("thread_after");
    return NULL;
}

int main(void) {
    char exe[PATH_MAX], lib[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return 10;
    exe[n] = 0;
    snprintf(lib, sizeof lib, "%s/libsp_dl%s.so", dirname(exe), VARIANT);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return 11;
    void (*dl_func)(void) = (void (*)(void))dlsym(h, "dl_func");
    if (!dl_func) return 12;
    for (int i = 0; i < 2; i++) dl_func();
    dlclose(h);
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("after_dlclose");
    }
    pthread_t t;
    pthread_create(&t, NULL, thread_after, NULL);
    pthread_join(t, NULL);
    return 0;
}
