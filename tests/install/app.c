/* Built against an installed scopeprof by tests/install/install.sh. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include <scopeprof.h>
#include <stdio.h>

static int work(int n) {
    PROFILE_SCOPE("installed_scope");
    int s = 0;
    for (int i = 0; i < n; i++) s += i;
    return s;
}

int main(void) {
    int s = 0;
    for (int i = 0; i < 3; i++) s += work(1000);
    printf("%d\n", s);
    return 0;
}
