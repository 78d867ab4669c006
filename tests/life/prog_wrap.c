/* prog_wrap.c -- the opt-in malloc wrappers (SCOPEPROF_WRAP_MALLOC), run under
 * ASan+UBSan by the _asan variant of test_life: the wrappers must keep every
 * allocation valid (no double free, no leak they cause) while recording it.
 *
 *   wrap_alloc:   malloc(4096)                        self +4096
 *   wrap_calloc:  calloc(10, 100)                     self +1000
 *   wrap_realloc: realloc(4096 block -> 8192)         self -4096 +8192 = +4096
 *   wrap_free:    free(calloc block), free(8192 block) self -9192
 *   wrap_unknown: free(strdup(...)): allocated by libc, not through the
 *                 wrapper: an unknown free, counted and reported, not fatal.
 * Net at exit: 0. Peak: 1000 + 8192 = 9192 b (the realloc wrapper records the
 * free of the old block before the new block). */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#define SCOPEPROF_WRAP_MALLOC
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

int main(void) {
    char *a, *c;
    {
        PROFILE_SCOPE("wrap_alloc");
        a = malloc(4096);
        memset(a, 1, 4096);
    }
    {
        PROFILE_SCOPE("wrap_calloc");
        c = calloc(10, 100);
        if (c[999] != 0) return 1;
    }
    {
        PROFILE_SCOPE("wrap_realloc");
        a = realloc(a, 8192);
        memset(a + 4096, 2, 4096);
        if (a[0] != 1) return 2;
    }
    {
        PROFILE_SCOPE("wrap_free");
        free(c);
        free(a);
    }
    {
        PROFILE_SCOPE("wrap_unknown");
        char *s = strdup("allocated by libc, not through the wrapper");
        free(s);
    }
    printf("wrap done\n");
    return 0;
}
