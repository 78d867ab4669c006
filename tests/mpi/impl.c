/* The implementation's file of a program, for tests/mpi/mpi.sh's nm checks:
 * with WITH_MPI_H, <mpi.h> comes first, as in an MPI program. */
#ifdef WITH_MPI_H
#include <mpi.h>
#endif
#define SCOPEPROF_IMPLEMENTATION
#include "scopeprof.h"

void impl_use(void);
void impl_use(void) { PROFILE_SCOPE("used"); }
