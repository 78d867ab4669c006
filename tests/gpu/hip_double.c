/* hip_double.c -- the HIP runtime test double (see hip_double.h). */
#include "hip_double.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ihipStream_t {
    int index;          /* double_stream index; -1 for hipStreamCreate */
    int busy;           /* 0: the next record catches up with the CPU */
    uint64_t t;         /* simulated clock, ns */
    uint64_t latency;   /* ns */
    int device, device_set;
    int blocking;       /* private streams: waits for the null stream */
    int blocked;        /* double_block */
    int capture;        /* CAP_* */
    hipStreamCaptureMode capture_mode;
    pthread_t capture_thread;
};
enum { CAP_NONE, CAP_ACTIVE, CAP_INVALIDATED };

struct ihipEvent_t {
    long id;
    int recorded, destroyed, user;
    int device;         /* current when created */
    int captured;       /* last recorded during a capture */
    int blocked;        /* recorded on a blocked stream, not waited for */
    struct ihipStream_t *stream; /* of the last record */
    uint64_t t;
};

#define MAX_USER_STREAMS 64
#define MAX_FAILS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ihipStream_t user_streams[MAX_USER_STREAMS];
static struct ihipStream_t *private_streams[64];
static int nprivate;
/* Every event ever created stays here (destroyed ones marked), so that a use
 * after hipEventDestroy is caught rather than being undefined behaviour. */
static struct ihipEvent_t **events;
static long nevents, events_cap;
static long calls[D_NFN];
static long counters[DC_NCOUNTERS];
static long misuse; /* calls on destroyed or never-recorded events */
static int hold;
static uint64_t progress;
static int device_count = 1, device_current;
static struct { enum double_fn fn; long n; hipError_t code; } fails[MAX_FAILS];
static int nfails;
static int logging;
static double_record *log_v;
static long log_n, log_cap;

static int unloading, teardown_armed;
static _Thread_local hipStreamCaptureMode thread_mode = hipStreamCaptureModeGlobal;

int (*double_scope_depth)(void);

static const char *const fn_names[D_NFN] = {
    "EventCreateWithFlags", "EventRecord",      "EventQuery",          "EventSynchronize",
    "EventElapsedTime",     "EventDestroy",     "GetDeviceCount",      "GetDevice",
    "GetDeviceProperties",  "StreamCreate",     "GetErrorString",      "Malloc",
    "Free",                 "SetDevice",        "StreamGetDevice",     "StreamIsCapturing",
    "ThreadExchangeStreamCaptureMode"};
static const char *const counter_names[DC_NCOUNTERS] = {
    "events_live", "user_events", "anchor_records", "user_syncs", "user_syncs_in_scope",
    "capture_violations", "unloaded_calls", "wrong_device", "anchor_retries", "late_records"};

const char *double_fn_name(enum double_fn fn) { return fn_names[fn]; }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The runtime's own exit teardown (see hip_double.h). */
static void teardown(void) {
    pthread_mutex_lock(&lock);
    unloading = 1;
    pthread_mutex_unlock(&lock);
}

/* Count a call of fn and return its scripted failure, if any. Lock held. */
static hipError_t enter(enum double_fn fn) {
    long n = ++calls[fn];
    if (!teardown_armed) {
        teardown_armed = 1;
        /* DOUBLE_NO_TEARDOWN: to tell the other rules' failures apart when
         * checking an old build of the profiler by hand. */
        if (!getenv("DOUBLE_NO_TEARDOWN")) atexit(teardown);
    }
    if (unloading) {
        counters[DC_UNLOADED_CALLS]++;
        return hipErrorDeinitialized;
    }
    for (int i = 0; i < nfails; i++)
        if (fails[i].fn == fn && fails[i].n == n) return fails[i].code;
    return hipSuccess;
}

static struct ihipStream_t *stream_of(hipStream_t s) {
    return s ? s : &user_streams[0]; /* the null stream is user stream 0 */
}

static int complete(const struct ihipEvent_t *e) { return !e->blocked && (!hold || e->t <= progress); }

static int stream_device(const struct ihipStream_t *st) {
    return st == &user_streams[0] ? device_current : st->device;
}

/* Any capture running: none may touch the null stream. Lock held. */
static int any_capture(void) {
    for (int i = 1; i < MAX_USER_STREAMS; i++)
        if (user_streams[i].capture != CAP_NONE) return 1;
    return 0;
}

/* A capture-unsafe call (query, wait) from this thread: illegal while a
 * global-mode capture runs anywhere, or a thread-local one on this thread,
 * unless this thread relaxed its mode. It invalidates those captures. Lock
 * held. */
static hipError_t capture_unsafe(void) {
    if (thread_mode == hipStreamCaptureModeRelaxed) return hipSuccess;
    int broke = 0;
    for (int i = 1; i < MAX_USER_STREAMS; i++) {
        struct ihipStream_t *st = &user_streams[i];
        if (st->capture != CAP_ACTIVE) continue;
        if (st->capture_mode == hipStreamCaptureModeGlobal ||
            (st->capture_mode == hipStreamCaptureModeThreadLocal &&
             pthread_equal(st->capture_thread, pthread_self()))) {
            st->capture = CAP_INVALIDATED;
            broke = 1;
        }
    }
    if (!broke) return hipSuccess;
    counters[DC_CAPTURE_VIOLATIONS]++;
    return hipErrorStreamCaptureUnsupported;
}

/* An event handle is usable: created here and not destroyed. Lock held. */
static int valid(const struct ihipEvent_t *e) {
    if (e && !e->destroyed && e->id >= 1 && e->id <= nevents && events[e->id - 1] == e) return 1;
    misuse++;
    return 0;
}

/* ---- The controls -------------------------------------------------------- */
hipStream_t double_stream(int i) {
    if (i < 0 || i >= MAX_USER_STREAMS) abort();
    pthread_mutex_lock(&lock);
    user_streams[i].index = i;
    if (!user_streams[i].device_set) { /* made now, on the current device */
        user_streams[i].device = device_current;
        user_streams[i].device_set = 1;
    }
    pthread_mutex_unlock(&lock);
    return i ? &user_streams[i] : (hipStream_t)0;
}

hipStream_t double_stream_on(int i, int dev) {
    if (i < 1 || i >= MAX_USER_STREAMS) abort();
    pthread_mutex_lock(&lock);
    user_streams[i].device = dev;
    user_streams[i].device_set = 1;
    pthread_mutex_unlock(&lock);
    return double_stream(i);
}

void double_block(hipStream_t s, int on) {
    pthread_mutex_lock(&lock);
    struct ihipStream_t *st = stream_of(s);
    st->blocked = on;
    if (!on)
        for (long i = 0; i < nevents; i++)
            if (events[i]->stream == st) events[i]->blocked = 0;
    pthread_mutex_unlock(&lock);
}

void double_set_latency_us(hipStream_t s, uint64_t us) {
    pthread_mutex_lock(&lock);
    stream_of(s)->latency = us * 1000u;
    pthread_mutex_unlock(&lock);
}

void double_enqueue_us(hipStream_t s, uint64_t us) {
    pthread_mutex_lock(&lock);
    struct ihipStream_t *st = stream_of(s);
    if (st->capture != CAP_NONE) { /* captured into the graph: nothing runs */
        pthread_mutex_unlock(&lock);
        return;
    }
    if (!st->busy) { /* a kernel on an idle stream starts after its launch */
        uint64_t start = now_ns() + st->latency;
        if (start > st->t) st->t = start;
        st->busy = 1;
    }
    st->t += us * 1000u;
    pthread_mutex_unlock(&lock);
}

void double_idle(hipStream_t s) {
    pthread_mutex_lock(&lock);
    stream_of(s)->busy = 0;
    pthread_mutex_unlock(&lock);
}

void double_hold(int on) {
    pthread_mutex_lock(&lock);
    hold = on;
    pthread_mutex_unlock(&lock);
}

void double_progress(void) {
    pthread_mutex_lock(&lock);
    for (long i = 0; i < nevents; i++)
        if (events[i]->recorded && events[i]->t > progress) progress = events[i]->t;
    pthread_mutex_unlock(&lock);
}

void double_fail(enum double_fn fn, long n, hipError_t code) {
    pthread_mutex_lock(&lock);
    if (nfails == MAX_FAILS) abort();
    fails[nfails].fn = fn;
    fails[nfails].n = n;
    fails[nfails].code = code;
    nfails++;
    pthread_mutex_unlock(&lock);
}

void double_set_devices(int count, int current) {
    pthread_mutex_lock(&lock);
    device_count = count;
    device_current = current;
    pthread_mutex_unlock(&lock);
}

long double_calls(enum double_fn fn) {
    pthread_mutex_lock(&lock);
    long n = calls[fn];
    pthread_mutex_unlock(&lock);
    return n;
}

long double_counter(enum double_counter c) {
    pthread_mutex_lock(&lock);
    long n = counters[c];
    pthread_mutex_unlock(&lock);
    return n;
}

static int slow_syncs;
static uint64_t slow_sync_us;
void double_slow_anchor_syncs(int n, uint64_t us) {
    pthread_mutex_lock(&lock);
    slow_syncs = n;
    slow_sync_us = us;
    pthread_mutex_unlock(&lock);
}

void double_log(int on) {
    pthread_mutex_lock(&lock);
    logging = on;
    pthread_mutex_unlock(&lock);
}

/* ---- The HIP functions ------------------------------------------------------ */
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags) {
    (void)flags;
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_EventCreateWithFlags);
    struct ihipEvent_t *e = NULL;
    if (err == hipSuccess && nevents == events_cap) {
        long cap = events_cap ? events_cap * 2 : 256;
        struct ihipEvent_t **v = realloc(events, (size_t)cap * sizeof *v);
        if (!v) err = hipErrorOutOfMemory;
        else events = v, events_cap = cap;
    }
    if (err == hipSuccess && !(e = calloc(1, sizeof *e))) err = hipErrorOutOfMemory;
    if (err == hipSuccess) {
        events[nevents++] = e;
        e->id = nevents;
        e->device = device_current;
        counters[DC_EVENTS_LIVE]++;
        *event = e;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_EventRecord);
    if (err == hipSuccess && !valid(event)) err = hipErrorInvalidHandle;
    struct ihipStream_t *st = stream_of(stream);
    if (err == hipSuccess && stream_device(st) != event->device) {
        counters[DC_WRONG_DEVICE]++;
        err = hipErrorInvalidResourceHandle;
    }
    if (err == hipSuccess && !stream && any_capture()) {
        for (int i = 1; i < MAX_USER_STREAMS; i++)
            if (user_streams[i].capture == CAP_ACTIVE) user_streams[i].capture = CAP_INVALIDATED;
        counters[DC_CAPTURE_VIOLATIONS]++;
        err = hipErrorStreamCaptureImplicit;
    }
    if (err == hipSuccess && st->capture == CAP_INVALIDATED) err = hipErrorStreamCaptureInvalidated;
    if (err == hipSuccess && st->capture == CAP_ACTIVE) {
        /* A graph node: no time (HIP keeps the event's old timestamp). */
        event->captured = 1;
    } else if (err == hipSuccess) {
        uint64_t now = now_ns();
        if (!st->busy || st->index < 0) {
            if (now + st->latency > st->t) st->t = now + st->latency;
            st->busy = st->index >= 0; /* hipStreamCreate streams stay idle */
        } else if (now > st->t) {
            /* A busy stream whose work ran out while the program was away (a
             * thread preempted for longer than its queued kernels): the event
             * completes when it is recorded, never before, as on a device.
             * Back-dated, it put a GPU interval 16 ms before its launch in
             * test_multi_gpu on a loaded machine. */
            st->t = now;
            counters[DC_LATE_RECORDS]++;
        }
        /* A blocking private stream waits for the null stream's work. */
        if (st->index < 0 && st->blocking && user_streams[0].busy && user_streams[0].t > st->t)
            st->t = user_streams[0].t;
        event->captured = 0;
        event->stream = st;
        event->blocked = st->blocked;
        if (st->index >= 0 && !event->user) {
            event->user = 1;
            counters[DC_USER_EVENTS]++;
        }
        /* Anchor events recorded; a retry re-records the same event. */
        if (st->index < 0 && !event->recorded) counters[DC_ANCHOR_RECORDS]++;
        else if (st->index < 0) counters[DC_ANCHOR_RETRIES]++;
        event->recorded = 1;
        event->t = st->t;
        if (logging) {
            if (log_n == log_cap) {
                long cap = log_cap ? log_cap * 2 : 1024;
                double_record *v = realloc(log_v, (size_t)cap * sizeof *v);
                if (!v) abort();
                log_v = v, log_cap = cap;
            }
            double_record r = {event->id, st->index, event->t, now};
            log_v[log_n++] = r;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipEventQuery(hipEvent_t event) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_EventQuery);
    if (err == hipSuccess && !valid(event)) err = hipErrorInvalidHandle;
    if (err == hipSuccess) err = capture_unsafe();
    if (err == hipSuccess && event->captured) err = hipErrorCapturedEvent;
    /* A never-recorded event counts as complete, as in HIP. */
    if (err == hipSuccess && event->recorded && !complete(event)) err = hipErrorNotReady;
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipEventSynchronize(hipEvent_t event) {
    /* Ask the program for its scope depth before taking the lock: the hook
     * only reads the calling thread's own profiler state. */
    int depth = double_scope_depth ? double_scope_depth() : 0;
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_EventSynchronize);
    if (err == hipSuccess && !valid(event)) err = hipErrorInvalidHandle;
    if (err == hipSuccess) err = capture_unsafe();
    if (err == hipSuccess && event->captured) err = hipErrorCapturedEvent;
    if (err == hipSuccess && event->user) {
        counters[DC_USER_SYNCS]++;
        if (depth > 0) counters[DC_USER_SYNCS_IN_SCOPE]++;
    }
    /* The wait: the simulated GPU runs up to this event. */
    if (err == hipSuccess && event->recorded && event->t > progress) progress = event->t;
    if (err == hipSuccess && event->blocked) /* the stream ran up to it */
        for (long i = 0; i < nevents; i++)
            if (events[i]->stream == event->stream && events[i]->t <= event->t) events[i]->blocked = 0;
    uint64_t sleep_us = 0;
    if (err == hipSuccess && !event->user && slow_syncs > 0) {
        slow_syncs--;
        sleep_us = slow_sync_us;
    }
    pthread_mutex_unlock(&lock);
    if (sleep_us) {
        struct timespec ts = {(time_t)(sleep_us / 1000000u), (long)(sleep_us % 1000000u) * 1000};
        while (nanosleep(&ts, &ts) != 0) {}
    }
    return err;
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_EventElapsedTime);
    if (err == hipSuccess && (!valid(start) || !valid(stop))) err = hipErrorInvalidHandle;
    if (err == hipSuccess && (start->captured || stop->captured)) err = hipErrorCapturedEvent;
    if (err == hipSuccess && (!start->recorded || !stop->recorded)) {
        misuse++;
        err = hipErrorInvalidHandle;
    }
    if (err == hipSuccess && (!complete(start) || !complete(stop))) err = hipErrorNotReady;
    if (err == hipSuccess) *ms = (float)(((double)stop->t - (double)start->t) / 1e6);
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipEventDestroy(hipEvent_t event) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_EventDestroy);
    if (err == hipSuccess && !valid(event)) err = hipErrorInvalidHandle;
    if (err == hipSuccess) {
        event->destroyed = 1;
        counters[DC_EVENTS_LIVE]--;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipGetDeviceCount(int *count) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_GetDeviceCount);
    if (err == hipSuccess) *count = device_count;
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipGetDevice(int *deviceId) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_GetDevice);
    if (err == hipSuccess) *deviceId = device_current;
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int deviceId) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_GetDeviceProperties);
    if (err == hipSuccess && (deviceId < 0 || deviceId >= device_count)) err = hipErrorInvalidDevice;
    if (err == hipSuccess) {
        memset(prop, 0, sizeof *prop);
        snprintf(prop->name, sizeof prop->name, "Double GPU %d", deviceId);
    }
    pthread_mutex_unlock(&lock);
    return err;
}

static hipError_t stream_create(hipStream_t *stream, unsigned flags);
hipError_t hipStreamCreate(hipStream_t *stream) { return stream_create(stream, hipStreamDefault); }
hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags) {
    return stream_create(stream, flags);
}

static hipError_t stream_create(hipStream_t *stream, unsigned flags) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_StreamCreate);
    if (err == hipSuccess && nprivate == 64) err = hipErrorOutOfMemory;
    if (err == hipSuccess) {
        struct ihipStream_t *s = calloc(1, sizeof *s);
        if (!s) {
            err = hipErrorOutOfMemory;
        } else {
            s->index = -1;
            s->device = device_current;
            s->blocking = !(flags & hipStreamNonBlocking);
            private_streams[nprivate++] = s;
            *stream = s;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

/* Device memory is host memory here: only the addresses matter. */
hipError_t hipMalloc(void **ptr, size_t size) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_Malloc);
    pthread_mutex_unlock(&lock);
    if (err == hipSuccess && !(*ptr = malloc(size ? size : 1))) err = hipErrorOutOfMemory;
    return err;
}

hipError_t hipFree(void *ptr) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_Free);
    pthread_mutex_unlock(&lock);
    if (err == hipSuccess) free(ptr);
    return err;
}

hipError_t hipSetDevice(int deviceId) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_SetDevice);
    if (err == hipSuccess && (deviceId < 0 || deviceId >= device_count)) err = hipErrorInvalidDevice;
    if (err == hipSuccess) device_current = deviceId;
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_StreamGetDevice);
    if (err == hipSuccess) *device = stream_device(stream_of(stream));
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *status) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_StreamIsCapturing);
    struct ihipStream_t *st = stream_of(stream);
    if (err == hipSuccess && !stream && any_capture()) err = hipErrorStreamCaptureImplicit;
    if (err == hipSuccess)
        *status = st->capture == CAP_ACTIVE        ? hipStreamCaptureStatusActive
                  : st->capture == CAP_INVALIDATED ? hipStreamCaptureStatusInvalidated
                                                   : hipStreamCaptureStatusNone;
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode) {
    pthread_mutex_lock(&lock);
    hipError_t err = enter(D_ThreadExchangeStreamCaptureMode);
    pthread_mutex_unlock(&lock);
    if (err == hipSuccess) {
        hipStreamCaptureMode old = thread_mode;
        thread_mode = *mode;
        *mode = old;
    }
    return err;
}

/* Not used by the profiler: the test programs' own captures. */
hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
    pthread_mutex_lock(&lock);
    struct ihipStream_t *st = stream_of(stream);
    hipError_t err = !stream || st->capture != CAP_NONE ? hipErrorIllegalState : hipSuccess;
    if (err == hipSuccess) {
        st->capture = CAP_ACTIVE;
        st->capture_mode = mode;
        st->capture_thread = pthread_self();
    }
    pthread_mutex_unlock(&lock);
    return err;
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph) {
    static int the_graph;
    pthread_mutex_lock(&lock);
    struct ihipStream_t *st = stream_of(stream);
    hipError_t err = st->capture == CAP_ACTIVE        ? hipSuccess
                     : st->capture == CAP_INVALIDATED ? hipErrorStreamCaptureInvalidated
                                                      : hipErrorIllegalState;
    st->capture = CAP_NONE;
    *graph = err == hipSuccess ? (hipGraph_t)(void *)&the_graph : NULL;
    pthread_mutex_unlock(&lock);
    return err;
}

const char *hipGetErrorString(hipError_t hipError) {
    pthread_mutex_lock(&lock);
    calls[D_GetErrorString]++; /* never fails: it has no error return */
    pthread_mutex_unlock(&lock);
    switch (hipError) {
    case hipSuccess: return "hipSuccess";
    case hipErrorNotReady: return "hipErrorNotReady";
    case hipErrorInvalidHandle: return "hipErrorInvalidHandle"; /* = hipErrorInvalidResourceHandle */
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
    case hipErrorDeinitialized: return "hipErrorDeinitialized";
    case hipErrorStreamCaptureUnsupported: return "hipErrorStreamCaptureUnsupported";
    case hipErrorStreamCaptureInvalidated: return "hipErrorStreamCaptureInvalidated";
    case hipErrorStreamCaptureImplicit: return "hipErrorStreamCaptureImplicit";
    case hipErrorCapturedEvent: return "hipErrorCapturedEvent";
    default: return "hipError (double)";
    }
}

/* ---- The exit report ---------------------------------------------------------- */
/* Priority 101 runs after destructors without a priority (the profiler's), so
 * the counters include what the profiler did while writing at exit. */
__attribute__((destructor(101))) static void double_report(void) {
    const char *path = getenv("DOUBLE_LOG");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < D_NFN; i++) fprintf(f, "C %s %ld\n", fn_names[i], calls[i]);
        for (int i = 0; i < DC_NCOUNTERS; i++) fprintf(f, "C %s %ld\n", counter_names[i], counters[i]);
        fprintf(f, "C misuse %ld\n", misuse);
        for (long i = 0; i < log_n; i++)
            fprintf(f, "R %ld %d %llu %llu\n", log_v[i].event, log_v[i].stream,
                    (unsigned long long)log_v[i].sim_ns, (unsigned long long)log_v[i].cpu_ns);
        pthread_mutex_unlock(&lock);
        fclose(f);
    }
    /* Free what the double holds, so that LeakSanitizer reports only leaks of
     * the program under test. Events the program still holds are freed too:
     * nothing can use them after this point. */
    for (long i = 0; i < nevents; i++) free(events[i]);
    free(events);
    events = NULL;
    nevents = events_cap = 0;
    for (int i = 0; i < nprivate; i++) free(private_streams[i]);
    nprivate = 0;
    free(log_v);
    log_v = NULL;
    log_n = log_cap = 0;
}
