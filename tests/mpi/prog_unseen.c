/* An MPI program whose implementation's file did not see <mpi.h> (impl.c
 * built without WITH_MPI_H, linked in): rank 0 says at exit that nothing
 * MPI was compiled, and how to have it (tests/mpi/mpi.sh). Built with
 * -DSCOPEPROF_IMPLEMENTATION (prog_mixed), main has the implementation with
 * MPI, and impl.c's copy is a library's: nothing to say. */
#include <mpi.h>
#include "scopeprof.h"

void impl_use(void);

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    {
        PROFILE_SCOPE("work");
        impl_use();
    }
    MPI_Finalize();
    return 0;
}
