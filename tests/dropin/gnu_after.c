#include "scopeprof.h"
/* The header on line 1, then a file that asks for GNU extensions, as
 * SQLite's sqlite3.c does (tests/dropin/order.sh says why this must
 * compile): _GNU_SOURCE only works if no system header came before it, so
 * scopeprof.h, when it is not the implementation, must include none. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

void *dropin_grow(void *p);
void *dropin_grow(void *p) {
    PROFILE_SCOPE("x");
    void *q = mremap(p, 1, 2, MREMAP_MAYMOVE); /* GNU only */
    if (q == MAP_FAILED)
        perror("mremap");
    return q;
}
