/* The other order (tests/dropin/order.sh): system headers first, in strict
 * ISO C (-std=c99 hides POSIX), then the header, which must need nothing
 * from them: it brings its own types, and declares what it calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scopeprof.h"

int dropin_sum(int n);
int dropin_sum(int n) {
    PROFILE_SCOPE("sum");
    int s = 0;
    int i;
    for (i = 0; i < n; i++) {
        PROFILE_SCOPE("step");
        s += (int)strlen("ab") * i;
    }
    printf("%d %ld\n", s, (long)time(NULL));
    return s;
}
