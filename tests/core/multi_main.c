/* One process, four modules' worth of scopes, for test_record.c: this file
 * (main_scope x2), multi_b.c in the same executable (tu_b_scope x3),
 * libsp_linked.so linked at build time (linked_lib_scope x4) and
 * libsp_dl.so opened with dlopen(RTLD_LOCAL) (dl_lib_scope x5, called from
 * inside a main_scope, so at depth 1 if the thread state is shared). The
 * executable is built without -rdynamic. One table and one file expected. */
#include "scopeprof.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

void b_func(void);
void linked_func(void);

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
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
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 11;
    }
    void (*dl_func)(void) = (void (*)(void))dlsym(h, "dl_func");
    if (!dl_func) return 12;
    {
        PROFILE_SCOPE("main_scope");
        for (int i = 0; i < 5; i++) dl_func();
    }
    return 0; /* the library stays loaded until exit */
}
