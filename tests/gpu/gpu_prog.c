/* gpu_prog.c -- profiled programs for the GPU tests, one per mode (argv[1]).
 * Built with -DPROFILE_ENABLE -DPROFILE_HIP and linked with the HIP double
 * (hip_double.c). The profile is written when the process exits, so
 * test_gpu.c runs each mode as a child with SCOPEPROF_OUTPUT and DOUBLE_LOG
 * set and reads the trace, the double's log, stdout and stderr.
 *
 * Kernel lengths are whole milliseconds: the double's elapsed times are then
 * exact in float, and so are the GPU durations the profiler derives. */
#define SCOPEPROF_WRAP_GPU_MALLOC /* hipMalloc/hipFree recorded (mode malloc) */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include "hip_double.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MS 1000u /* double_enqueue_us takes microseconds */

/* For the double: how many profiler scopes the calling thread has open. */
static int scope_depth(void) { return scopeprof__tls ? (int)scopeprof__tls->depth : 0; }

/* Counters the tests compare at points inside the run (the double's exit log
 * only has the final values). */
static void print_counters(const char *when) {
    printf("%s: creates=%ld user_events=%ld anchors=%ld queries=%ld user_syncs=%ld "
           "in_scope=%ld\n",
           when, double_calls(D_EventCreateWithFlags), double_counter(DC_USER_EVENTS),
           double_counter(DC_ANCHOR_RECORDS), double_calls(D_EventQuery),
           double_counter(DC_USER_SYNCS), double_counter(DC_USER_SYNCS_IN_SCOPE));
    fflush(stdout);
}

/* Nesting: per step, outer_gpu (5 ms on stream 1) holds inner_gpu (3 ms),
 * other_gpu is 4 ms on stream 2, cpu_only has no GPU side. Device 1 of 2. */
static void mode_nest(void) {
    double_set_devices(2, 1);
    hipStream_t a = double_stream(1), b = double_stream(2);
    /* Work reaches an idle real device microseconds after its launch (2 us
     * here). That gap, not luck, is what keeps the placed start after the
     * launch despite the TSC conversion's tens of nanoseconds. */
    double_set_latency_us(a, 2);
    double_set_latency_us(b, 2);
    for (int i = 0; i < 3; i++) {
        PROFILE_SCOPE("step");
        {
            PROFILE_GPU_SCOPE("outer_gpu", a);
            double_enqueue_us(a, 1 * MS);
            {
                PROFILE_GPU_SCOPE("inner_gpu", a);
                double_enqueue_us(a, 3 * MS);
            }
            double_enqueue_us(a, 1 * MS);
        }
        {
            PROFILE_GPU_SCOPE("other_gpu", b);
            double_enqueue_us(b, 4 * MS);
        }
        { PROFILE_SCOPE("cpu_only"); }
    }
}

/* Threads: worker k (k = 0..2) runs 20 scopes of (k + 1) ms on stream k + 1.
 * The main thread alternates two streams (2 ms on 4, 7 ms on 5). */
static void *worker(void *arg) {
    int k = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "worker%d", k);
    PROFILE_THREAD_NAME(name);
    hipStream_t s = double_stream(k + 1);
    for (int i = 0; i < 20; i++) {
        PROFILE_GPU_SCOPE("worker_gpu", s);
        double_enqueue_us(s, (uint64_t)(k + 1) * MS);
    }
    return NULL;
}

static void mode_threads(void) {
    pthread_t th[3];
    for (int k = 0; k < 3; k++)
        if (pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k) != 0) abort();
    hipStream_t s4 = double_stream(4), s5 = double_stream(5);
    for (int i = 0; i < 5; i++) {
        {
            PROFILE_GPU_SCOPE("main_s4", s4);
            double_enqueue_us(s4, 2 * MS);
        }
        {
            PROFILE_GPU_SCOPE("main_s5", s5);
            double_enqueue_us(s5, 7 * MS);
        }
    }
    for (int k = 0; k < 3; k++) pthread_join(th[k], NULL);
}

/* A slow anchor wait: the first two waits for the clock anchor take 2 ms
 * (preempted); the profiler tries again, and the third, quick, try places
 * the anchor. One GPU scope of 1 ms, launched 100 us before it starts. */
static void mode_anchor_retry(void) {
    double_log(1);
    double_slow_anchor_syncs(2, 2000);
    hipStream_t s = double_stream(1);
    double_set_latency_us(s, 100);
    PROFILE_GPU_SCOPE("retried", s);
    double_enqueue_us(s, 1 * MS);
}

/* Clock alignment: stream 1 starts 50 ms (simulated) after each launch, as
 * an idle GPU with a long launch latency; scope i runs (i + 1) ms. The
 * double logs every record so the test can redo the arithmetic. */
static void mode_align(void) {
    double_log(1);
    hipStream_t s = double_stream(1);
    double_set_latency_us(s, 50 * MS);
    for (int i = 0; i < 10; i++) {
        double_idle(s);
        PROFILE_GPU_SCOPE("aligned", s);
        double_enqueue_us(s, (uint64_t)(i + 1) * MS);
    }
}

/* Pool reuse: after 100 scopes, 1000 more create no event. */
static void mode_pool(void) {
    hipStream_t s = double_stream(1);
    for (int i = 0; i < 100; i++) {
        PROFILE_GPU_SCOPE("warm", s);
        double_enqueue_us(s, 1 * MS);
    }
    print_counters("warm");
    for (int i = 0; i < 1000; i++) {
        PROFILE_GPU_SCOPE("steady", s);
        double_enqueue_us(s, 1 * MS);
    }
    print_counters("steady");
}

/* Lazy resolution: the GPU lags until told otherwise. 200 scopes, a flush
 * (which must wait for them, outside any scope), 100 more, the GPU catches
 * up, 64 more (the poll at every 64th close then finds them ready). */
static void mode_lazy(void) {
    double_scope_depth = scope_depth;
    double_hold(1);
    hipStream_t s = double_stream(1);
    for (int i = 0; i < 200; i++) {
        PROFILE_GPU_SCOPE("lazy_a", s);
        double_enqueue_us(s, 1 * MS);
    }
    print_counters("before_flush");
    PROFILE_FLUSH();
    print_counters("after_flush");
    for (int i = 0; i < 100; i++) {
        PROFILE_GPU_SCOPE("lazy_b", s);
        double_enqueue_us(s, 2 * MS);
    }
    double_progress();
    for (int i = 0; i < 64; i++) {
        PROFILE_GPU_SCOPE("lazy_c", s);
        double_enqueue_us(s, 3 * MS);
    }
    print_counters("end");
}

/* Streaming (run with SCOPEPROF_BUFFER_MB=1): 100000 top-level GPU scopes
 * exceed the budget, so full buffers are written while the program runs and
 * the GPU (held back) must be waited for then. With `nested`, every 10 GPU
 * scopes sit inside a CPU scope "step", so the writes happen inside it. */
static void mode_stream(int nested) {
    double_scope_depth = scope_depth;
    double_hold(1);
    hipStream_t s = double_stream(1);
    for (int i = 0; i < 10000; i++) {
        if (nested) {
            PROFILE_SCOPE("step");
            for (int j = 0; j < 10; j++) {
                PROFILE_GPU_SCOPE("streamed", s);
                double_enqueue_us(s, 1 * MS);
            }
        } else {
            for (int j = 0; j < 10; j++) {
                PROFILE_GPU_SCOPE("streamed", s);
                double_enqueue_us(s, 1 * MS);
            }
        }
    }
    print_counters("end");
}

/* Error paths. Each runs 10 GPU scopes "k" of 1 ms; the double fails one
 * call. Calls of hipEventRecord: #1 is the clock anchor, then two per scope
 * (#2/#3 scope 0, #4/#5 scope 1, #6/#7 scope 2...). */
/* A second of work queued on s before its scopes, in none of them: the
 * stream then runs ahead of the CPU, as a busy GPU does, and a scope's GPU
 * time is exactly what was enqueued in it. On an idle stream, a thread
 * preempted between a scope's start record and its kernel (milliseconds
 * under TSan on a loaded machine) adds the gap to the scope's GPU time, as
 * it would on a device: the exact durations the tests assert would then be
 * off (a 1 ms scope measured 1.759 ms). */
static void stream_lead(hipStream_t s) { double_enqueue_us(s, 1000 * MS); }

static void ten_scopes(void) {
    hipStream_t s = double_stream(1);
    stream_lead(s);
    for (int i = 0; i < 10; i++) {
        PROFILE_GPU_SCOPE("k", s);
        double_enqueue_us(s, 1 * MS);
        PROFILE_SCOPE("inner_cpu");
    }
}

/* hipEventElapsedTime: called twice per scope as scopes are resolved
 * (anchor->start, start->end). Failing #3 loses scope el1's timing. */
static void mode_err_elapsed(void) {
    double_fail(D_EventElapsedTime, 3, hipErrorLaunchFailure);
    hipStream_t s = double_stream(1);
    stream_lead(s);
    {
        PROFILE_GPU_SCOPE("el0", s);
        double_enqueue_us(s, 1 * MS);
    }
    {
        PROFILE_GPU_SCOPE("el1", s);
        double_enqueue_us(s, 2 * MS);
    }
    {
        PROFILE_GPU_SCOPE("el2", s);
        double_enqueue_us(s, 3 * MS);
    }
    {
        PROFILE_GPU_SCOPE("el3", s);
        double_enqueue_us(s, 4 * MS);
    }
}

/* hipEventDestroy fails: the clock anchor is renewed after a second and the
 * old one destroyed (at the write, once no scope refers to it). */
static void mode_err_destroy(void) {
    hipStream_t s = double_stream(1);
    double_fail(D_EventDestroy, 1, hipErrorInvalidHandle);
    for (int i = 0; i < 2; i++) {
        if (i) nanosleep(&(struct timespec){1, 100000000}, NULL);
        PROFILE_GPU_SCOPE("around_renewal", s);
        double_enqueue_us(s, 2 * MS);
    }
}

/* hipMalloc/hipFree through the wrappers, on two devices: 1 MiB on device 0,
 * 512 KiB on device 1, then the device-0 block freed while device 1 is
 * current (allowed by HIP: one address space), and a hipMalloc that fails. */
static void mode_malloc(void) {
    double_set_devices(2, 0);
    void *a = NULL, *b = NULL, *c = NULL;
    {
        PROFILE_SCOPE("alloc_dev0");
        if (hipMalloc(&a, 1 << 20) != hipSuccess) exit(3);
    }
    {
        PROFILE_SCOPE("alloc_dev1");
        if (hipSetDevice(1) != hipSuccess || hipMalloc(&b, 512 << 10) != hipSuccess) exit(3);
    }
    {
        PROFILE_SCOPE("free_cross");
        if (hipFree(a) != hipSuccess) exit(3);
    }
    {
        PROFILE_SCOPE("alloc_fails");
        double_fail(D_Malloc, 3, hipErrorOutOfMemory);
        if (hipMalloc(&c, 4096) != hipErrorOutOfMemory) exit(3);
    }
    if (hipFree(b) != hipSuccess) exit(3);
}

/* Pending at exit: the GPU lags, nothing is flushed; the runtime's exit
 * teardown (the double's atexit handler) comes before the profiler's ELF
 * destructor writes the trace. */
static void mode_exit_pending(void) {
    double_hold(1);
    hipStream_t s = double_stream(1);
    for (int i = 0; i < 10; i++) {
        PROFILE_GPU_SCOPE("pending", s);
        double_enqueue_us(s, 2 * MS);
    }
}

/* Several GPUs from one thread, the current device staying 0: per step, a
 * scope of 1 ms on a stream of device 0, 2 ms on device 1, 3 ms on device
 * 17 (partitioned accelerators number past 16). */
static void mode_multi(void) {
    double_set_devices(20, 0);
    hipStream_t s[3] = {double_stream_on(1, 0), double_stream_on(2, 1), double_stream_on(3, 17)};
    for (int k = 0; k < 3; k++) double_set_latency_us(s[k], 2); /* as in mode_nest */
    for (int k = 0; k < 3; k++) stream_lead(s[k]);
    for (int i = 0; i < 100; i++) {
        {
            PROFILE_GPU_SCOPE("dev0", s[0]);
            double_enqueue_us(s[0], 1 * MS);
        }
        {
            PROFILE_GPU_SCOPE("dev1", s[1]);
            double_enqueue_us(s[1], 2 * MS);
        }
        {
            PROFILE_GPU_SCOPE("dev17", s[2]);
            double_enqueue_us(s[2], 3 * MS);
        }
    }
}

/* Stream capture: a global-mode capture on stream 1 while scopes on stream 2
 * run and are polled (70 closes: a poll at the 64th); scopes on the
 * capturing stream, one of them holding a scope on stream 2; a scope open
 * across the capture's begin; then the capture must end well. */
static void mode_capture(void) {
    hipStream_t s1 = double_stream(1), s2 = double_stream(2);
    {
        PROFILE_GPU_SCOPE("before", s1); /* the clock anchor is made here */
        double_enqueue_us(s1, 1 * MS);
    }
    hipGraph_t graph = NULL;
    {
        PROFILE_GPU_SCOPE("across", s1); /* opens before the capture, closes in it */
        double_enqueue_us(s1, 1 * MS);
        if (hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal) != hipSuccess) exit(3);
    }
    for (int i = 0; i < 70; i++) {
        PROFILE_GPU_SCOPE("beside", s2);
        double_enqueue_us(s2, 2 * MS);
    }
    for (int i = 0; i < 5; i++) {
        PROFILE_GPU_SCOPE("captured", s1);
        double_enqueue_us(s1, 5 * MS);
        {
            PROFILE_GPU_SCOPE("beside_nested", s2);
            double_enqueue_us(s2, 3 * MS);
        }
    }
    hipError_t end = hipStreamEndCapture(s1, &graph);
    printf("end_capture=%d graph=%d\n", (int)end, graph != NULL);
    {
        PROFILE_GPU_SCOPE("after", s1);
        double_enqueue_us(s1, 4 * MS);
    }
}

/* The anchor's stream must not wait for the null stream: 50 ms of work are
 * queued there before the first GPU scope (on stream 1) makes the anchor. */
static void mode_null_busy(void) {
    hipStream_t s = double_stream(1);
    double_enqueue_us(0, 50 * MS);
    for (int i = 0; i < 3; i++) {
        PROFILE_GPU_SCOPE("after_null_work", s);
        double_enqueue_us(s, 1 * MS);
    }
}

/* Float rounding: 200 times, outer_r holds inner_r, both ending together;
 * lengths are not whole milliseconds, and the anchor's offset is whatever
 * the CPU clock gave. */
static void mode_nest_round(void) {
    hipStream_t s = double_stream(1);
    stream_lead(s);
    for (int i = 0; i < 200; i++) {
        PROFILE_GPU_SCOPE("outer_r", s);
        double_enqueue_us(s, 1237);
        {
            PROFILE_GPU_SCOPE("inner_r", s);
            double_enqueue_us(s, 2311 + (uint64_t)i);
        }
    }
}

/* One stream stuck (its GPU work does not finish), another quick: the poll
 * must keep returning the quick stream's events to the pool. */
static void mode_poll_streams(void) {
    hipStream_t stuck = double_stream(1), quick = double_stream(2);
    double_block(stuck, 1);
    {
        PROFILE_GPU_SCOPE("stuck", stuck);
        double_enqueue_us(stuck, 10 * MS);
    }
    for (int i = 0; i < 1000; i++) {
        PROFILE_GPU_SCOPE("quick", quick);
        double_enqueue_us(quick, 1 * MS);
    }
    print_counters("end");
}

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "nest") == 0) mode_nest();
    else if (strcmp(m, "threads") == 0) mode_threads();
    else if (strcmp(m, "align") == 0) mode_align();
    else if (strcmp(m, "anchor_retry") == 0) mode_anchor_retry();
    else if (strcmp(m, "pool") == 0) mode_pool();
    else if (strcmp(m, "lazy") == 0) mode_lazy();
    else if (strcmp(m, "stream") == 0) mode_stream(0);
    else if (strcmp(m, "stream_nested") == 0) mode_stream(1);
    else if (strcmp(m, "err_count") == 0) {
        double_fail(D_GetDeviceCount, 1, hipErrorInvalidValue);
        ten_scopes();
    } else if (strcmp(m, "err_record") == 0) {
        double_fail(D_EventRecord, 7, hipErrorIllegalAddress); /* scope 2's end */
        ten_scopes();
    } else if (strcmp(m, "err_getdevice") == 0) {
        double_fail(D_StreamGetDevice, 3, hipErrorInvalidDevice); /* scope 2's open */
        ten_scopes();
    } else if (strcmp(m, "err_elapsed") == 0) {
        mode_err_elapsed();
    } else if (strcmp(m, "err_destroy") == 0) {
        mode_err_destroy();
    } else if (strcmp(m, "malloc") == 0) {
        mode_malloc();
    } else if (strcmp(m, "exit_pending") == 0) {
        mode_exit_pending();
    } else if (strcmp(m, "multi") == 0) {
        mode_multi();
    } else if (strcmp(m, "capture") == 0) {
        mode_capture();
    } else if (strcmp(m, "null_busy") == 0) {
        mode_null_busy();
    } else if (strcmp(m, "nest_round") == 0) {
        mode_nest_round();
    } else if (strcmp(m, "poll_streams") == 0) {
        mode_poll_streams();
    } else {
        fprintf(stderr, "usage: %s nest|threads|align|pool|lazy|stream|stream_nested|"
                        "err_count|err_record|err_getdevice|err_elapsed|err_destroy|malloc|exit_pending|"
                        "multi|capture|null_busy|poll_streams|nest_round\n", argv[0]);
        return 2;
    }
    return 0;
}
