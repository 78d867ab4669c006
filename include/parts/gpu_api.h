/* ======================================================================== */
/* GPU scopes (PROFILE_HIP or PROFILE_CUDA): events on streams              */
/* ======================================================================== */
/* A GPU scope records an event on its stream when it opens and when it
 * closes, taking events from a pool per (thread, device), and records its CPU
 * side as a normal scope flagged SCOPEPROF_DEPTH_GPU. The GPU interval is
 * resolved later: polled (non-blocking, per stream) as scopes close, waited
 * for when the thread's events are written (budget reached, PROFILE_FLUSH),
 * and at the latest in an atexit handler registered at the first GPU scope,
 * which runs before the runtime's own teardown (nvcc's static CUDA runtime
 * answers every call from an ELF destructor with cudaErrorCudartUnloading).
 *
 * The device of a scope is its stream's (*StreamGetDevice where the runtime
 * has it, else the current device); events are created on that device, as
 * the runtime rejects an event recorded on another device's stream.
 *
 * A stream being captured into a graph (*StreamIsCapturing) gets no event:
 * the scope records its CPU side, and its GPU record says "captured". Calls
 * that a global-mode capture forbids (query, synchronize) are made in the
 * relaxed capture mode of the calling thread, so they never break a capture
 * the program has running on another stream or thread.
 *
 * GPU times land on the CPU timeline through an anchor per device: an event
 * recorded on a private non-blocking idle stream and waited for (never under
 * a lock), whose completion is placed at the tick read right after the wait
 * (retried when the wait was much longer than an idle device needs). That is
 * the latest it can have happened, so a GPU interval never lands before the
 * CPU scope that launched it (the midpoint is closer on average, but a thread
 * preempted between its clock read and the record put work before its launch
 * on the timeline, and flow arrows pointed backwards). A GPU time is the
 * anchor's tick, converted to ns as the CPU scopes' ticks are (so an error in
 * the conversion moves both alike), plus the elapsed time from the anchor
 * event. Scopes nested on one stream are all timed from the outermost one's
 * start event (and its anchor), so float rounding keeps a nested interval
 * inside its parent. Anchors are renewed every second (in a scope's open, on
 * the private stream only) to bound drift and the float precision.
 *
 * The runtime is found without changing how the program links: under nvcc
 * (whose runtime may be static) by direct calls; otherwise with dlsym, first
 * among what the program already loaded, then by dlopen of the runtime
 * library. No runtime, no device, or any error: one line on stderr, and GPU
 * scopes record their CPU side only. */
#if SCOPEPROF__ON && (defined(PROFILE_HIP) || defined(PROFILE_CUDA)) && !defined(SCOPEPROF__GPU_DONE)
#define SCOPEPROF__GPU_DONE
#if defined(PROFILE_HIP)
#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#define SCOPEPROF__G(x) hip##x
#define SCOPEPROF__G_NAME "HIP"
#define SCOPEPROF__G_LIBS                                                           \
    {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", NULL}
typedef hipError_t scopeprof__gerr;
typedef hipEvent_t scopeprof__gevent;
typedef hipStream_t scopeprof__gstream;
typedef hipDeviceProp_t scopeprof__gprop;
typedef hipStreamCaptureStatus scopeprof__gcapstatus;
typedef hipStreamCaptureMode scopeprof__gcapmode;
#define SCOPEPROF__G_OK hipSuccess
#define SCOPEPROF__G_NOT_READY hipErrorNotReady
#define SCOPEPROF__G_NON_BLOCKING hipStreamNonBlocking
#define SCOPEPROF__G_CAP_NONE hipStreamCaptureStatusNone
#define SCOPEPROF__G_CAP_RELAXED hipStreamCaptureModeRelaxed
#define SCOPEPROF__G_CAP_ERR(e)                                                     \
    ((e) == hipErrorStreamCaptureImplicit || (e) == hipErrorStreamCaptureUnsupported || \
     (e) == hipErrorStreamCaptureInvalidated)
#else
#include <cuda_runtime_api.h>
#define SCOPEPROF__G(x) cuda##x
#define SCOPEPROF__G_NAME "CUDA"
#define SCOPEPROF__G_LIBS {"libcudart.so", "libcudart.so.13", "libcudart.so.12", NULL}
typedef cudaError_t scopeprof__gerr;
typedef cudaEvent_t scopeprof__gevent;
typedef cudaStream_t scopeprof__gstream;
typedef struct cudaDeviceProp scopeprof__gprop;
typedef enum cudaStreamCaptureStatus scopeprof__gcapstatus;
typedef enum cudaStreamCaptureMode scopeprof__gcapmode;
#define SCOPEPROF__G_OK cudaSuccess
#define SCOPEPROF__G_NOT_READY cudaErrorNotReady
#define SCOPEPROF__G_NON_BLOCKING cudaStreamNonBlocking
#define SCOPEPROF__G_CAP_NONE cudaStreamCaptureStatusNone
#define SCOPEPROF__G_CAP_RELAXED cudaStreamCaptureModeRelaxed
#define SCOPEPROF__G_CAP_ERR(e)                                                     \
    ((e) == cudaErrorStreamCaptureImplicit || (e) == cudaErrorStreamCaptureUnsupported || \
     (e) == cudaErrorStreamCaptureInvalidated)
#if defined(__CUDACC__)
/* nvcc links its runtime itself, statically by default: a static runtime
 * exports nothing that dlsym could find, and a second copy loaded with dlopen
 * would not know the program's streams. So call it directly. */
#define SCOPEPROF__G_DIRECT 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scopeprof__ganchor scopeprof__ganchor; /* gpu.h */
typedef struct scopeprof_gpu_scope { /* what a PROFILE_GPU_SCOPE variable holds */
    scopeprof_scope cpu;
    scopeprof__gstream stream;
    scopeprof__gevent start, base;
    scopeprof__ganchor *anchor;
    int device, ok, captured;
    scopeprof__u32 slot; /* in the thread's open list */
} scopeprof_gpu_scope;

/* The GPU halves of a scope's open and close (gpu.h): 1 if it is timed or
 * captured; 1 if queued. */
SCOPEPROF__HIDDEN int scopeprof__gpu_open(scopeprof_gpu_scope *gs);
SCOPEPROF__HIDDEN int scopeprof__gpu_close(scopeprof_gpu_scope *gs);

static inline scopeprof_gpu_scope scopeprof__gpu_begin(scopeprof_site *s, scopeprof__gstream stream) {
    scopeprof_gpu_scope gs;
    gs.cpu = scopeprof__scope_begin(s);
    gs.stream = stream;
    gs.anchor = 0;
    gs.device = 0;
    gs.captured = 0;
    gs.slot = 0;
    gs.ok = scopeprof__gpu_open(&gs);
    return gs;
}

static inline void scopeprof__gpu_end(scopeprof_gpu_scope *gs) {
    if (__builtin_expect(gs->cpu.t != scopeprof__tls, 0)) { /* moved: scopeprof__scope_end (its GPU events stay unread) */
        scopeprof__scope_moved(gs->cpu.site);
        return;
    }
    scopeprof__u32 flag = gs->ok && scopeprof__gpu_close(gs) ? SCOPEPROF_DEPTH_GPU : 0;
    scopeprof__u64 end = scopeprof__ticks();
    scopeprof__thread *t = gs->cpu.t;
    scopeprof__depth_set(t, gs->cpu.depth);
    scopeprof__emit(t, gs->cpu.start, end, gs->cpu.site, gs->cpu.depth | flag);
}

#define PROFILE_GPU_SCOPE(nm, stream) SCOPEPROF__GPU_SCOPE(nm, stream, __COUNTER__)
#define SCOPEPROF__GPU_SCOPE(nm, stream, id)                                        \
    SCOPEPROF__SITE(SCOPEPROF__V(scopeprof__site_, id), nm);                        \
    scopeprof_gpu_scope SCOPEPROF__V(scopeprof__gscope_, id)                        \
        __attribute__((cleanup(scopeprof__gpu_end), unused)) =                      \
            scopeprof__gpu_begin(&SCOPEPROF__V(scopeprof__site_, id), (stream))

#ifdef __cplusplus
}
#endif
#endif /* GPU scopes */
