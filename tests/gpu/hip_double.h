/* hip_double.h -- a test double of the HIP runtime functions that
 * include/scopeprof.h uses, plus the controls a test scripts it with.
 *
 * Link hip_double.c instead of -lamdhip64. Nothing runs on a GPU: each stream
 * has a simulated clock (nanoseconds on the CPU's CLOCK_MONOTONIC timeline, so
 * that the profiler's clock anchors can be checked against real CPU times),
 * work is "enqueued" by the test with a scripted duration, and an event takes
 * its stream's simulated time when it is recorded.
 *
 * The model, in full:
 *  - A stream's clock `t` starts out "idle". The next event recorded on an
 *    idle stream first catches the clock up: t = max(t, now + latency), where
 *    now is the CPU time inside hipEventRecord and latency is the stream's
 *    scripted launch offset. The stream is then busy until double_idle().
 *  - double_enqueue_us(s, us) advances a stream's clock by exactly `us`: a
 *    kernel of that length. So the interval between two events on a stream is
 *    exactly the work enqueued between them, whatever the CPU did meanwhile.
 *  - Streams made by hipStreamCreate (the profiler's private anchor stream)
 *    are always idle with latency 0: an event recorded there takes the CPU
 *    time of the hipEventRecord call, as a real idle GPU would (roughly).
 *  - Readiness: by default the GPU is instant (every recorded event is
 *    complete). After double_hold(1), an event is complete only once the
 *    simulated "GPU progress" time has reached it: hipEventSynchronize moves
 *    progress up to that event (the wait), double_progress() moves it past
 *    everything recorded so far (the GPU caught up).
 *  - Errors: double_fail(fn, n, code) makes the n-th call (1-based, counted
 *    over the whole process) of function fn return `code`.
 *
 * The real runtime's rules it enforces (each broke the profiler once):
 *  - Teardown: at its first call the runtime registers an atexit handler (as
 *    nvcc's static CUDA runtime does); once that ran, every call returns
 *    hipErrorDeinitialized (cudaErrorCudartUnloading; both are 4). An ELF
 *    destructor runs after every atexit handler, so it gets only errors.
 *  - Devices: an event belongs to the device current when it was created, a
 *    stream to the device current when it was made (double_stream: at its
 *    first use; double_stream_on picks one), the null stream to the current
 *    device. Recording an event on another device's stream fails with
 *    hipErrorInvalidResourceHandle.
 *  - Blocking streams: an event recorded on a stream made by hipStreamCreate
 *    (or without hipStreamNonBlocking) completes only after the work queued
 *    on the null stream, as the legacy default stream's implicit sync does.
 *  - Capture (hipStreamBeginCapture .. hipStreamEndCapture): work and events
 *    recorded on a capturing stream become graph nodes: the stream's clock
 *    does not move, and the event cannot be queried, waited for or timed
 *    (hipErrorCapturedEvent). While a global-mode capture runs (any thread),
 *    or a thread-local one on the calling thread, hipEventQuery and
 *    hipEventSynchronize are illegal unless the calling thread relaxed its
 *    mode (hipThreadExchangeStreamCaptureMode): they fail with
 *    hipErrorStreamCaptureUnsupported and invalidate the capture, whose
 *    hipStreamEndCapture then fails. The null stream cannot be used, even
 *    asked whether it captures, while any capture runs
 *    (hipErrorStreamCaptureImplicit).
 *
 * Thread-safe: one mutex guards all of the double's state. */
#ifndef HIP_DOUBLE_H
#define HIP_DOUBLE_H
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <stdint.h>

/* The functions of the double, by index (for counters and failures). */
enum double_fn {
    D_EventCreateWithFlags,
    D_EventRecord,
    D_EventQuery,
    D_EventSynchronize,
    D_EventElapsedTime,
    D_EventDestroy,
    D_GetDeviceCount,
    D_GetDevice,
    D_GetDeviceProperties,
    D_StreamCreate,
    D_GetErrorString,
    D_Malloc,   /* hipMalloc, hipFree, hipSetDevice: for SCOPEPROF_WRAP_GPU_MALLOC */
    D_Free,
    D_SetDevice,
    D_StreamGetDevice,
    D_StreamIsCapturing,
    D_ThreadExchangeStreamCaptureMode,
    D_NFN
};

/* Counters beyond "calls per function". */
enum double_counter {
    DC_EVENTS_LIVE,       /* created and not destroyed */
    DC_USER_EVENTS,       /* distinct events ever recorded on a user stream */
    DC_ANCHOR_RECORDS,    /* records on hipStreamCreate streams (clock anchors) */
    DC_USER_SYNCS,        /* hipEventSynchronize on an event of a user stream */
    DC_USER_SYNCS_IN_SCOPE, /* ... while double_scope_depth() said > 0 */
    DC_CAPTURE_VIOLATIONS,  /* calls that broke a capture (see above) */
    DC_UNLOADED_CALLS,      /* calls after the runtime's teardown */
    DC_WRONG_DEVICE,        /* records refused: event and stream on different devices */
    DC_ANCHOR_RETRIES,      /* an anchor recorded again (its wait was slow: preempted) */
    DC_LATE_RECORDS,        /* records on a busy stream whose work had run out (preempted) */
    DC_NCOUNTERS
};

/* A user stream handle (i >= 1): the test's stand-in for hipStreamCreate.
 * Stream 0 (the null stream) is valid too. */
hipStream_t double_stream(int i);
/* Launch offset of a stream: how long after the CPU's record call an idle
 * stream starts (default 0). */
void double_set_latency_us(hipStream_t s, uint64_t us);
/* The same stream, on device `dev`. */
hipStream_t double_stream_on(int i, int dev);
/* Events of a blocked stream do not complete (the GPU is stuck on it) until
 * they are waited for or the stream is unblocked; other streams go on. */
void double_block(hipStream_t s, int on);
/* A kernel of `us` microseconds on stream s. */
void double_enqueue_us(hipStream_t s, uint64_t us);
/* The stream ran dry: its next event catches up with the CPU clock. */
void double_idle(hipStream_t s);
/* 1: events complete only as described above; 0: instant GPU (default). */
void double_hold(int on);
/* The GPU caught up with everything recorded so far. */
void double_progress(void);
/* The next n hipEventSynchronize calls on a hipStreamCreate stream (the
 * profiler's clock anchors) return only after `us` microseconds, as when
 * the waiting thread is preempted. */
void double_slow_anchor_syncs(int n, uint64_t us);
/* Make the n-th call of fn (1-based, whole process) return code. Up to 16
 * failures can be scripted. */
void double_fail(enum double_fn fn, long n, hipError_t code);
/* The device count hipGetDeviceCount reports (default 1) and the device
 * hipGetDevice reports (default 0). */
void double_set_devices(int count, int current);

long double_calls(enum double_fn fn);
long double_counter(enum double_counter c);
const char *double_fn_name(enum double_fn fn);

/* Set by the profiled program: the number of profiler scopes open on the
 * calling thread, consulted when a user event is synchronized (the profiler
 * must never wait for the GPU inside a scope). NULL: not checked. */
extern int (*double_scope_depth)(void);

/* Log of every hipEventRecord, kept when double_log(1) was called: which
 * event (by creation number), on which stream, its simulated time and the
 * CPU time of the call. */
typedef struct double_record {
    long event;      /* 1, 2, 3... in creation order */
    int stream;      /* double_stream index; -1: a hipStreamCreate stream */
    uint64_t sim_ns; /* the event's time */
    uint64_t cpu_ns; /* CLOCK_MONOTONIC inside the hipEventRecord call */
} double_record;
void double_log(int on);

/* At exit, after the profiler has written its output (a destructor of lower
 * priority than the profiler's), the double writes its counters and record
 * log to the file named by $DOUBLE_LOG, if set:
 *   C <name> <value>            one per counter and per function's calls
 *   R <event> <stream> <sim_ns> <cpu_ns>   one per logged record */

/* HIP 5.2's headers do not declare it; later ones do, the same way. */
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device);

#endif
