/* c_runtime_calls.c -- plain C that calls the runtime itself and uses GPU
 * scopes, built with the documented link lines (-lamdhip64 / -lcudart) by
 * gcc, whose linker drops a library only weakly referenced (--as-needed is
 * its default here). The header must not make the program's own calls weak:
 * then the library was dropped and the first call jumped to address 0. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdio.h>

#if defined(PROFILE_HIP)
#define RT(x) hip##x
typedef hipStream_t stream_t;
#else
#define RT(x) cuda##x
typedef cudaStream_t stream_t;
#endif

int main(void) {
    int count = -1;
    int err = (int)RT(GetDeviceCount)(&count); /* the program's own call */
    printf("GetDeviceCount: error %d (%s), %d devices\n", err, RT(GetErrorString)(RT(GetDeviceCount)(&count)),
           count);
    stream_t s = 0;
    for (int i = 0; i < 3; i++) {
        PROFILE_GPU_SCOPE("c_gpu", s);
        PROFILE_SCOPE("c_cpu");
    }
    return err == 0 ? 0 : 3;
}
