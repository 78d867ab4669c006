#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON && (defined(PROFILE_HIP) || defined(PROFILE_CUDA))
#include <dlfcn.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime functions used: X(name, required). The optional ones are newer
 * than some runtimes we support (hipStreamGetDevice is not in HIP 5.2). */
#define SCOPEPROF__G_FUNCS(X)                                                       \
    X(EventCreateWithFlags, 1) X(EventRecord, 1) X(EventQuery, 1)                   \
    X(EventSynchronize, 1) X(EventElapsedTime, 1) X(EventDestroy, 1)                \
    X(GetDeviceCount, 1) X(GetDevice, 1) X(SetDevice, 1) X(GetDeviceProperties, 1)  \
    X(StreamCreateWithFlags, 1) X(GetErrorString, 1) X(StreamGetDevice, 0)          \
    X(StreamIsCapturing, 0) X(ThreadExchangeStreamCaptureMode, 0)

#define SCOPEPROF__G_STR2(x) #x
#define SCOPEPROF__G_STR(x) SCOPEPROF__G_STR2(x) /* expand (cuda*_v2, *_ptsz), then quote */
#if defined(PROFILE_HIP)
#define SCOPEPROF__G_CAT(f) hip##f
#else
#define SCOPEPROF__G_CAT(f) cuda##f
#endif

typedef struct scopeprof__gapi {
    scopeprof__gerr (*EventCreateWithFlags)(scopeprof__gevent *, unsigned);
    scopeprof__gerr (*EventRecord)(scopeprof__gevent, scopeprof__gstream);
    scopeprof__gerr (*EventQuery)(scopeprof__gevent);
    scopeprof__gerr (*EventSynchronize)(scopeprof__gevent);
    scopeprof__gerr (*EventElapsedTime)(float *, scopeprof__gevent, scopeprof__gevent);
    scopeprof__gerr (*EventDestroy)(scopeprof__gevent);
    scopeprof__gerr (*GetDeviceCount)(int *);
    scopeprof__gerr (*GetDevice)(int *);
    scopeprof__gerr (*SetDevice)(int);
    scopeprof__gerr (*GetDeviceProperties)(scopeprof__gprop *, int);
    scopeprof__gerr (*StreamCreateWithFlags)(scopeprof__gstream *, unsigned);
    const char *(*GetErrorString)(scopeprof__gerr);
    scopeprof__gerr (*StreamGetDevice)(scopeprof__gstream, int *);
    scopeprof__gerr (*StreamIsCapturing)(scopeprof__gstream, scopeprof__gcapstatus *);
    scopeprof__gerr (*ThreadExchangeStreamCaptureMode)(scopeprof__gcapmode *);
} scopeprof__gapi;


struct scopeprof__ganchor { /* typedef in gpu_api.h */
    scopeprof__gevent ev;
    uint64_t tick;    /* time of ev, in the CPU scopes' ticks */
    uint64_t born_ns; /* CLOCK_MONOTONIC when made: its age */
    int refs;         /* open or pending scopes timed against it, +1 while current */
};

/* GPU record status of a scope whose stream was being captured into a graph:
 * its GPU work runs when the graph is launched, not here. */
#define SCOPEPROF__G_CAPTURED 2u

typedef struct scopeprof__gpending {
    scopeprof__gevent start, end;
    scopeprof__gevent base; /* the outermost same-stream scope's start (or start) */
    scopeprof__ganchor *anchor;
    uint64_t launch_tick, stream;
    uint64_t anchor_tick; /* copied at resolve: the anchor may go first */
    uint32_t site, device;
    int resolved;
    /* Once resolved: start_ns and end_ns relative to anchor_tick; made
     * absolute, and launch_ns filled, at take. */
    scopeprof_gpu_record rec;
} scopeprof__gpending;

typedef struct scopeprof__gpool { /* one thread's idle events of one device */
    scopeprof__gevent *ev;
    uint32_t n, cap;
} scopeprof__gpool;

typedef struct scopeprof__gopen { /* a timed GPU scope still open */
    uint64_t stream;
    int device;
    scopeprof__gevent base;
    scopeprof__ganchor *anchor;
} scopeprof__gopen;

typedef struct scopeprof__gthread { /* per thread; lock: owner vs. writer */
    pthread_mutex_t lock;
    scopeprof__gopen *open; /* the thread's own: its open timed scopes, innermost last */
    uint32_t nopen, open_cap;
    scopeprof__gpool *pools; /* by device */
    uint32_t npools;
    scopeprof__gpending *q; /* FIFO in close order: q[head .. head+n) mod cap */
    uint32_t head, n, cap;
    uint32_t nresolved; /* the first nresolved of the FIFO are resolved: polls
                         * start after them, so each scope is polled O(1) times */
    uint32_t closes;
} scopeprof__gthread;

typedef struct scopeprof__gdev { /* one device, in the module's table */
    scopeprof__ganchor *anchor;
    scopeprof__gstream astream; /* private, non-blocking */
    int astream_ok, renewing;
} scopeprof__gdev;

#define SCOPEPROF__G_NAMED 16 /* devices whose names the registry holds */
typedef struct scopeprof__gmod { /* this module's backend; zero is "not started" */
    int status; /* 0: not started, 1: on, -1: off (said why), -2: closed at exit */
    scopeprof__gapi api;
    scopeprof__gdev *dev; /* by device, grown as devices are seen; m->lock */
    uint32_t ndev;
    int warned_elapsed;
    char names[SCOPEPROF__G_NAMED][64]; /* device names, until published */
    uint32_t named, published;
} scopeprof__gmod;
__attribute__((weak, visibility("hidden"))) scopeprof__gmod scopeprof__gm;
__attribute__((weak, visibility("hidden"))) pthread_mutex_t scopeprof__gm_lock = PTHREAD_MUTEX_INITIALIZER;

/* Copy device names into the registry. Never called with the module lock
 * held (lock order: registry lock, then never the module lock). */
SCOPEPROF__INTERNAL void scopeprof__gpu_publish_names(void) {
    scopeprof__gmod *m = &scopeprof__gm;
    /* Unlocked first look: this runs at every scope's open. */
    if (!(__atomic_load_n(&m->named, __ATOMIC_ACQUIRE) & ~__atomic_load_n(&m->published, __ATOMIC_ACQUIRE)))
        return;
    pthread_mutex_lock(&scopeprof__gm_lock);
    uint32_t todo = m->named & ~m->published;
    char names[SCOPEPROF__G_NAMED][64];
    if (todo) memcpy(names, m->names, sizeof names);
    __atomic_or_fetch(&m->published, todo, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&scopeprof__gm_lock);
    if (!todo) return;
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    for (int d = 0; d < SCOPEPROF__G_NAMED; d++)
        if (todo >> d & 1) memcpy(g->gpu.names[d], names[d], sizeof names[d]);
    g->gpu.named |= todo;
    scopeprof__unlock(g);
}

/* Turn GPU timing off for the rest of the run, with one line saying why. */
SCOPEPROF__INTERNAL void scopeprof__gpu_off(const char *what, scopeprof__gerr err) {
    int was = __atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE);
    if (was < 0 || !__atomic_compare_exchange_n(&scopeprof__gm.status, &was, -1, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE))
        return;
    const char *msg = scopeprof__gm.api.GetErrorString ? scopeprof__gm.api.GetErrorString(err) : "";
    scopeprof__warn("scopeprof: %s%s%s (error %d%s%s); GPU scopes record their CPU side only",
                    SCOPEPROF__G_NAME, " error in ", what, (int)err, msg ? ": " : "", msg ? msg : "");
}

/* Destroying an event has no fallback: a failure is reported once and the
 * event leaked; GPU timing goes on. After the exit handler the runtime may be
 * going: events are left to it. */
SCOPEPROF__INTERNAL void scopeprof__gpu_destroy(scopeprof__gevent ev) {
    static int warned;
    if (__atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE) == -2) return;
    scopeprof__gerr err = scopeprof__gm.api.EventDestroy(ev);
    if (err == SCOPEPROF__G_OK || __atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) return;
    const char *msg = scopeprof__gm.api.GetErrorString ? scopeprof__gm.api.GetErrorString(err) : NULL;
    scopeprof__warn("scopeprof: %s error in EventDestroy (error %d%s%s); the event is leaked, "
                    "GPU timing goes on", SCOPEPROF__G_NAME, (int)err, msg ? ": " : "", msg ? msg : "");
}

/* The calling thread's capture mode set to relaxed (returned: the mode to put
 * back), so that a query or wait of ours is legal while a global-mode capture
 * runs anywhere in the process. */
static inline scopeprof__gcapmode scopeprof__gpu_relax(void) {
    scopeprof__gcapmode mode = SCOPEPROF__G_CAP_RELAXED;
    if (scopeprof__gm.api.ThreadExchangeStreamCaptureMode)
        (void)scopeprof__gm.api.ThreadExchangeStreamCaptureMode(&mode); /* best effort */
    return mode;
}
static inline void scopeprof__gpu_unrelax(scopeprof__gcapmode mode) {
    if (scopeprof__gm.api.ThreadExchangeStreamCaptureMode)
        (void)scopeprof__gm.api.ThreadExchangeStreamCaptureMode(&mode); /* best effort */
}

/* Run with `dev` current: events and streams belong to the device current
 * when they are made. Returns the device to put back (-1: none needed); on
 * an error, *what names the call that failed. */
SCOPEPROF__INTERNAL int scopeprof__gpu_enter_device(int dev, scopeprof__gerr *err, const char **what) {
    int cur = -1;
    *what = "GetDevice";
    *err = scopeprof__gm.api.GetDevice(&cur);
    if (*err != SCOPEPROF__G_OK || cur == dev) return -1;
    *what = "SetDevice";
    *err = scopeprof__gm.api.SetDevice(dev);
    return *err == SCOPEPROF__G_OK ? cur : -1;
}
static inline void scopeprof__gpu_leave_device(int prev) {
    if (prev >= 0) (void)scopeprof__gm.api.SetDevice(prev);
}

SCOPEPROF__INTERNAL uint32_t scopeprof__gpu_take(scopeprof__state *g, scopeprof__thread *t,
                                                 scopeprof_gpu_record *out, uint32_t n);
SCOPEPROF__INTERNAL int scopeprof__gpu_ready(scopeprof__state *g, scopeprof__thread *t, uint32_t n);
SCOPEPROF__INTERNAL void scopeprof__gpu_unref(scopeprof__ganchor *a);
SCOPEPROF__INTERNAL void scopeprof__gpu_at_exit(void);
SCOPEPROF__INTERNAL void scopeprof__gpu_resolve_all(void);

/* The runtime's functions into m->api. Returns NULL, or why not found. */
SCOPEPROF__INTERNAL const char *scopeprof__gpu_load(scopeprof__gapi *api) {
#if defined(SCOPEPROF__G_DIRECT)
    api->EventCreateWithFlags = cudaEventCreateWithFlags;
    api->EventRecord = cudaEventRecord;
    api->EventQuery = cudaEventQuery;
    api->EventSynchronize = cudaEventSynchronize;
    api->EventElapsedTime = cudaEventElapsedTime;
    api->EventDestroy = cudaEventDestroy;
    api->GetDeviceCount = cudaGetDeviceCount;
    api->GetDevice = cudaGetDevice;
    api->SetDevice = cudaSetDevice;
    api->GetDeviceProperties = cudaGetDeviceProperties;
    api->StreamCreateWithFlags = cudaStreamCreateWithFlags;
    api->GetErrorString = cudaGetErrorString;
#if CUDART_VERSION >= 12080
    api->StreamGetDevice = cudaStreamGetDevice;
#endif
    api->StreamIsCapturing = cudaStreamIsCapturing;
    api->ThreadExchangeStreamCaptureMode = cudaThreadExchangeStreamCaptureMode;
    return NULL;
#else
    /* What the program loaded (linked -lamdhip64 / -lcudart, or a library it
     * uses did), then the runtime library itself. Never a weak reference to
     * the runtime's names: that would make the program's own calls weak, and
     * a linker with --as-needed would drop the library they need. */
    static const char *const libs[] = SCOPEPROF__G_LIBS;
    const char *why = "not found";
#ifdef RTLD_DEFAULT
    void *h = RTLD_DEFAULT;
#else
    void *h = NULL; /* glibc's RTLD_DEFAULT, declared only under _GNU_SOURCE */
#endif
    for (int i = -1; i < 0 || libs[i]; i++) {
        if (i >= 0 && !(h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL))) {
            why = dlerror();
            continue;
        }
        int found = 1;
#define SCOPEPROF__G_DLSYM(f, required)                                             \
        {                                                                           \
            void *sym_ = dlsym(h, SCOPEPROF__G_STR(SCOPEPROF__G_CAT(f)));           \
            memcpy(&api->f, &sym_, sizeof sym_);                                    \
            if (required && !sym_) found = 0;                                       \
        }
        SCOPEPROF__G_FUNCS(SCOPEPROF__G_DLSYM)
#undef SCOPEPROF__G_DLSYM
        if (found) return NULL;
        if (i >= 0) why = "missing functions";
    }
    return why ? why : "not found";
#endif
}

/* Find the runtime and a device, once. Returns 1 if GPU timing is on. */
SCOPEPROF__INTERNAL int scopeprof__gpu_start(void) {
    scopeprof__gmod *m = &scopeprof__gm;
    scopeprof__state *g = scopeprof__state_get();
    pthread_mutex_lock(&scopeprof__gm_lock);
    int status = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE);
    if (status != 0) {
        pthread_mutex_unlock(&scopeprof__gm_lock);
        return status == 1;
    }
    const char *why = scopeprof__gpu_load(&m->api);
    if (why) {
        __atomic_store_n(&m->status, -1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&scopeprof__gm_lock);
        scopeprof__warn("scopeprof: no %s runtime library (%s); GPU scopes record their CPU "
                        "side only", SCOPEPROF__G_NAME, why);
        return 0;
    }
    int count = 0;
    scopeprof__gerr err = m->api.GetDeviceCount(&count);
    if (err != SCOPEPROF__G_OK || count <= 0) {
        __atomic_store_n(&m->status, -1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&scopeprof__gm_lock);
        const char *msg = err != SCOPEPROF__G_OK ? m->api.GetErrorString(err) : "0 devices";
        scopeprof__warn("scopeprof: no %s device (%sGetDeviceCount: %s); GPU scopes record their "
                        "CPU side only", SCOPEPROF__G_NAME, SCOPEPROF__G_NAME[0] == 'H' ? "hip" : "cuda",
                        msg ? msg : "?");
        return 0;
    }
    /* After the runtime's first call, so after it registered its own exit
     * teardown: handlers run in reverse, ours first. */
    atexit(scopeprof__gpu_at_exit);
    /* Release: a thread that reads status 1 without the lock sees m->api. */
    __atomic_store_n(&m->status, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&scopeprof__gm_lock);
    scopeprof__lock(g); /* not under the module lock: lock order */
    if (!g->gpu.take) {
        g->gpu.take = scopeprof__gpu_take;
        g->gpu.ready = scopeprof__gpu_ready;
    }
    scopeprof__unlock(g);
    return 1;
}

/* A new anchor for `dev`: its private stream made if needed, an event
 * recorded there and waited for. No lock held (the wait is for the GPU). */
SCOPEPROF__INTERNAL scopeprof__ganchor *scopeprof__gpu_new_anchor(int dev, scopeprof__gstream *stream,
                                                                  int *stream_made) {
    scopeprof__gmod *m = &scopeprof__gm;
    scopeprof__gerr err;
    const char *what;
    int prev = scopeprof__gpu_enter_device(dev, &err, &what);
    scopeprof__ganchor *n = NULL;
    scopeprof__gcapmode mode = scopeprof__gpu_relax();
    if (err == SCOPEPROF__G_OK && !*stream_made) {
        /* Non-blocking: a blocking stream's work waits for the null stream's,
         * and the anchor would wait for (and be placed after) user work. */
        what = "StreamCreateWithFlags";
        if ((err = m->api.StreamCreateWithFlags(stream, SCOPEPROF__G_NON_BLOCKING)) == SCOPEPROF__G_OK) {
            *stream_made = 1;
            scopeprof__gprop *prop = (scopeprof__gprop *)calloc(1, sizeof *prop);
            if (prop && dev < SCOPEPROF__G_NAMED && m->api.GetDeviceProperties(prop, dev) == SCOPEPROF__G_OK) {
                pthread_mutex_lock(&scopeprof__gm_lock);
                snprintf(m->names[dev], sizeof m->names[dev], "%.63s", prop->name);
                __atomic_or_fetch(&m->named, 1u << dev, __ATOMIC_RELEASE); /* see gpu_publish_names */
                pthread_mutex_unlock(&scopeprof__gm_lock);
            }
            free(prop);
        }
    }
    if (err == SCOPEPROF__G_OK && !(n = (scopeprof__ganchor *)calloc(1, sizeof *n))) what = NULL;
    if (n && (err = m->api.EventCreateWithFlags(&n->ev, 0)) != SCOPEPROF__G_OK) {
        what = "EventCreateWithFlags";
        free(n);
        n = NULL;
    }
    /* Record and wait; the tick read right after the wait is the anchor's
     * time (the latest it can have completed). A wait much longer than an
     * idle device needs (the thread was preempted, say) would place every
     * GPU time of the next second late by as much: try again, up to 4 times
     * (the event is re-recorded; the last try counts). */
    uint64_t tick = 0;
    for (int try_ = 0; n && try_ < 4; try_++) {
        uint64_t t0 = scopeprof__mono_ns();
        err = m->api.EventRecord(n->ev, *stream);
        if (err == SCOPEPROF__G_OK) err = m->api.EventSynchronize(n->ev);
        tick = scopeprof__ticks();
        if (err != SCOPEPROF__G_OK || scopeprof__mono_ns() - t0 <= 50000u) break;
    }
    if (n && err != SCOPEPROF__G_OK) {
        what = "EventRecord (clock anchor)";
        scopeprof__gpu_destroy(n->ev);
        free(n);
        n = NULL;
    }
    scopeprof__gpu_unrelax(mode);
    scopeprof__gpu_leave_device(prev);
    if (!n) {
        if (what) scopeprof__gpu_off(what, err);
        return NULL;
    }
    n->tick = tick;
    n->born_ns = scopeprof__mono_ns();
    return n;
}

/* The device's current anchor with a reference for the caller, renewed when
 * older than a second. The wait for a new one is made without the lock;
 * meanwhile other threads go on with the old one. */
SCOPEPROF__INTERNAL scopeprof__ganchor *scopeprof__gpu_anchor(int dev) {
    scopeprof__gmod *m = &scopeprof__gm;
    pthread_mutex_lock(&scopeprof__gm_lock);
    for (;;) {
        if ((uint32_t)dev >= m->ndev) {
            uint32_t nd = (uint32_t)dev + 1 > m->ndev * 2 ? (uint32_t)dev + 1 : m->ndev * 2;
            scopeprof__gdev *v = (scopeprof__gdev *)realloc(m->dev, nd * sizeof *v);
            if (!v) {
                pthread_mutex_unlock(&scopeprof__gm_lock);
                return NULL;
            }
            memset(v + m->ndev, 0, (nd - m->ndev) * sizeof *v);
            m->dev = v;
            m->ndev = nd;
        }
        scopeprof__gdev *d = &m->dev[dev];
        scopeprof__ganchor *a = d->anchor;
        if (a && (d->renewing || scopeprof__mono_ns() - a->born_ns < 1000000000u)) {
            __atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
            pthread_mutex_unlock(&scopeprof__gm_lock);
            return a;
        }
        if (!d->renewing) break;
        /* The device's first anchor is being made by another thread. */
        pthread_mutex_unlock(&scopeprof__gm_lock);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&scopeprof__gm_lock);
        if (__atomic_load_n(&m->status, __ATOMIC_ACQUIRE) != 1) {
            pthread_mutex_unlock(&scopeprof__gm_lock);
            return NULL;
        }
    }
    m->dev[dev].renewing = 1;
    scopeprof__gstream stream = m->dev[dev].astream;
    int made = m->dev[dev].astream_ok;
    pthread_mutex_unlock(&scopeprof__gm_lock);
    scopeprof__ganchor *n = scopeprof__gpu_new_anchor(dev, &stream, &made);
    pthread_mutex_lock(&scopeprof__gm_lock);
    scopeprof__gdev *d = &m->dev[dev]; /* m->dev may have moved */
    scopeprof__ganchor *old = NULL;
    d->renewing = 0;
    d->astream = stream;
    d->astream_ok = made;
    if (n) {
        n->refs = 2; /* current, and the caller's */
        old = d->anchor;
        d->anchor = n;
    }
    pthread_mutex_unlock(&scopeprof__gm_lock);
    if (old) scopeprof__gpu_unref(old);
    return n;
}

/* Anchors are counted atomically: the writer drops references while holding
 * the registry's lock, and must not take the module lock under it (a thread
 * opening a scope holds the module lock and may then need the registry's). */
SCOPEPROF__INTERNAL void scopeprof__gpu_unref(scopeprof__ganchor *a) {
    if (__atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        scopeprof__gpu_destroy(a->ev);
        free(a);
    }
}

/* An event of device `dev` from the thread's pool (created, on that device,
 * only while the pool warms up). */
SCOPEPROF__INTERNAL int scopeprof__gpu_event(scopeprof__gthread *gt, int dev, scopeprof__gevent *ev) {
    pthread_mutex_lock(&gt->lock);
    scopeprof__gpool *p = (uint32_t)dev < gt->npools ? &gt->pools[dev] : NULL;
    int have = p && p->n > 0;
    if (have) *ev = p->ev[--p->n];
    pthread_mutex_unlock(&gt->lock);
    if (have) return 1;
    scopeprof__gerr err;
    const char *what;
    int prev = scopeprof__gpu_enter_device(dev, &err, &what);
    if (err == SCOPEPROF__G_OK) what = "EventCreateWithFlags", err = scopeprof__gm.api.EventCreateWithFlags(ev, 0);
    scopeprof__gpu_leave_device(prev);
    if (err != SCOPEPROF__G_OK) {
        scopeprof__gpu_off(what, err);
        return 0;
    }
    return 1;
}

/* Lock: gt->lock. */
static inline void scopeprof__gpu_release(scopeprof__gthread *gt, uint32_t dev, scopeprof__gevent ev) {
    if (dev >= gt->npools) {
        uint32_t n = dev + 1;
        scopeprof__gpool *v = (scopeprof__gpool *)realloc(gt->pools, n * sizeof *v);
        if (!v) {
            scopeprof__gpu_destroy(ev);
            return;
        }
        memset(v + gt->npools, 0, (n - gt->npools) * sizeof *v);
        gt->pools = v;
        gt->npools = n;
    }
    scopeprof__gpool *p = &gt->pools[dev];
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 64;
        scopeprof__gevent *v = (scopeprof__gevent *)realloc(p->ev, cap * sizeof *v);
        if (!v) {
            scopeprof__gpu_destroy(ev);
            return;
        }
        p->ev = v;
        p->cap = cap;
    }
    p->ev[p->n++] = ev;
}

SCOPEPROF__INTERNAL scopeprof__gthread *scopeprof__gpu_thread(scopeprof__thread *t) {
    if (t->gpu) return (scopeprof__gthread *)t->gpu;
    scopeprof__gthread *gt = (scopeprof__gthread *)calloc(1, sizeof *gt);
    if (!gt) return NULL;
    pthread_mutex_init(&gt->lock, NULL);
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g); /* the writer reads t->gpu under this lock */
    t->gpu = gt;
    scopeprof__unlock(g);
    return gt;
}

/* Resolve one pending scope; `wait` blocks until the GPU has passed its end
 * event. Returns 0 if not ready. Lock: gt->lock; the caller has relaxed its
 * capture mode (scopeprof__gpu_relax). */
SCOPEPROF__INTERNAL int scopeprof__gpu_resolve(scopeprof__gthread *gt, scopeprof__gpending *p, int wait) {
    scopeprof__gapi *api = &scopeprof__gm.api;
    if (p->resolved) return 1;
    scopeprof__gerr err = wait ? api->EventSynchronize(p->end) : api->EventQuery(p->end);
    if (err == SCOPEPROF__G_NOT_READY && !wait) return 0;
    /* From the anchor to the base (the outermost same-stream scope's start),
     * then from the base to each end: float milliseconds round the same way
     * for the same time, so a nested interval stays inside its parent
     * (anchor-to-start plus start-to-end rounds twice, and could pass the
     * parent's end), and the offsets from the base are short and precise. */
    float ms_base = 0, ms_start = 0, ms_end = 0;
    if (err == SCOPEPROF__G_OK) err = api->EventElapsedTime(&ms_base, p->anchor->ev, p->base);
    if (err == SCOPEPROF__G_OK && p->base != p->start)
        err = api->EventElapsedTime(&ms_start, p->base, p->start);
    if (err == SCOPEPROF__G_OK) err = api->EventElapsedTime(&ms_end, p->base, p->end);
    memset(&p->rec, 0, sizeof p->rec);
    p->rec.stream = p->stream;
    p->rec.site = p->site;
    p->rec.device = p->device;
    if (err == SCOPEPROF__G_OK) {
        int64_t b = (int64_t)((double)ms_base * 1e6);
        int64_t st = (int64_t)((double)(ms_start > 0 ? ms_start : 0) * 1e6);
        int64_t en = (int64_t)((double)ms_end * 1e6);
        p->anchor_tick = p->anchor->tick;
        p->rec.start_ns = (uint64_t)(b + st);
        p->rec.end_ns = (uint64_t)(b + (en > st ? en : st));
    } else {
        p->rec.status = 1;
        if (!scopeprof__gm.warned_elapsed) {
            scopeprof__gm.warned_elapsed = 1;
            scopeprof__warn("scopeprof: %s error %d timing a GPU scope (%s); that scope keeps its "
                            "CPU side only", SCOPEPROF__G_NAME, (int)err,
                            api->GetErrorString ? api->GetErrorString(err) : "");
        }
    }
    scopeprof__gpu_release(gt, p->device, p->start);
    scopeprof__gpu_release(gt, p->device, p->end);
    scopeprof__gpu_unref(p->anchor);
    p->resolved = 1;
    return 1;
}

/* Resolve, without waiting, what the GPU has finished. Streams run their own
 * work in order, so past the first unfinished scope of a stream the same
 * stream's later scopes are skipped, while other streams' are still
 * resolved. Lock: gt->lock. */
SCOPEPROF__INTERNAL void scopeprof__gpu_poll(scopeprof__gthread *gt, uint32_t upto) {
    uint64_t busy[8][2]; /* (stream, device) found unfinished */
    uint32_t nbusy = 0, i = gt->nresolved;
    int prefix = 1;
    if (upto > gt->n) upto = gt->n;
    if (i >= upto) return;
    scopeprof__gcapmode mode = scopeprof__gpu_relax();
    for (; i < upto; i++) {
        scopeprof__gpending *p = &gt->q[(gt->head + i) % gt->cap];
        int skip = 0;
        for (uint32_t k = 0; k < nbusy && !skip; k++) skip = busy[k][0] == p->stream && busy[k][1] == p->device;
        if (!skip && scopeprof__gpu_resolve(gt, p, 0)) {
            if (prefix) gt->nresolved = i + 1;
            continue;
        }
        prefix = 0;
        if (skip) continue;
        if (nbusy == 8) break; /* many busy streams: the rest waits for the next poll */
        busy[nbusy][0] = p->stream;
        busy[nbusy][1] = p->device;
        nbusy++;
    }
    scopeprof__gpu_unrelax(mode);
}

/* The writer's hook (g->lock held): the thread's next n GPU records. */
SCOPEPROF__INTERNAL uint32_t scopeprof__gpu_take(scopeprof__state *g, scopeprof__thread *t,
                                                 scopeprof_gpu_record *out, uint32_t n) {
    scopeprof__gthread *gt = (scopeprof__gthread *)t->gpu;
    uint32_t i = 0;
    if (!gt) return 0;
    pthread_mutex_lock(&gt->lock);
    int calls = n && gt->n && __atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE) != -2;
    scopeprof__gcapmode mode = calls ? scopeprof__gpu_relax() : SCOPEPROF__G_CAP_RELAXED;
    for (; i < n && gt->n; i++) {
        scopeprof__gpending *p = &gt->q[gt->head];
        scopeprof__gpu_resolve(gt, p, 1);
        out[i] = p->rec;
        out[i].launch_ns = scopeprof__to_ns(g, p->launch_tick);
        if (out[i].status == 0) {
            /* The anchor's tick goes through the same conversion as the CPU
             * scopes' ticks, so any error in it moves CPU and GPU alike. */
            uint64_t base = scopeprof__to_ns(g, p->anchor_tick);
            out[i].start_ns += base;
            out[i].end_ns += base;
        }
        gt->head = (gt->head + 1) % gt->cap;
        gt->n--;
        if (gt->nresolved) gt->nresolved--;
    }
    if (calls) scopeprof__gpu_unrelax(mode);
    pthread_mutex_unlock(&gt->lock);
    return i;
}

/* The writer's check (g->lock held): are the thread's next n GPU scopes
 * finished? Resolves those that are, never waits. */
SCOPEPROF__INTERNAL int scopeprof__gpu_ready(scopeprof__state *g, scopeprof__thread *t, uint32_t n) {
    scopeprof__gthread *gt = (scopeprof__gthread *)t->gpu;
    (void)g;
    if (!gt) return 1;
    pthread_mutex_lock(&gt->lock);
    scopeprof__gpu_poll(gt, n);
    int ready = gt->nresolved >= n || gt->nresolved >= gt->n;
    pthread_mutex_unlock(&gt->lock);
    return ready;
}

/* atexit, registered at the first GPU scope: wait for every pending scope
 * while the runtime still answers (in the ELF destructor that writes the
 * profile, nvcc's static CUDA runtime is already gone). Scopes queued before
 * GPU timing went off for an error are resolved too. GPU scopes opened after
 * this record their CPU side only, and the runtime is not called again. */
SCOPEPROF__INTERNAL void scopeprof__gpu_at_exit(void) {
    int status = __atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE);
    if (status == 1 || status == -1) scopeprof__gpu_resolve_all();
    __atomic_store_n(&scopeprof__gm.status, -2, __ATOMIC_RELEASE);
}

/* Wait for every thread's pending scopes (no registry lock held meanwhile). */
SCOPEPROF__INTERNAL void scopeprof__gpu_resolve_all(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g || g->pid != (int)getpid()) return;
    scopeprof__lock(g);
    uint32_t n = 0;
    for (scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) n += t->gpu != NULL;
    scopeprof__gthread **v = (scopeprof__gthread **)malloc((n ? n : 1) * sizeof *v);
    n = 0;
    for (scopeprof__thread *t = scopeprof__threads_head(g); t && v; t = t->next)
        if (t->gpu) v[n++] = (scopeprof__gthread *)t->gpu;
    scopeprof__unlock(g);
    if (!v) return;
    scopeprof__gcapmode mode = scopeprof__gpu_relax();
    for (uint32_t k = 0; k < n; k++) {
        scopeprof__gthread *gt = v[k];
        pthread_mutex_lock(&gt->lock);
        for (uint32_t i = 0; i < gt->n; i++) scopeprof__gpu_resolve(gt, &gt->q[(gt->head + i) % gt->cap], 1);
        gt->nresolved = gt->n;
        pthread_mutex_unlock(&gt->lock);
    }
    scopeprof__gpu_unrelax(mode);
    free(v);
}

/* Is `stream` being captured into a graph? 1: yes (or the runtime said a
 * call on it would break a capture), 0: no, -1: GPU timing went off. */
SCOPEPROF__INTERNAL int scopeprof__gpu_capturing(scopeprof__gstream stream) {
    scopeprof__gapi *api = &scopeprof__gm.api;
    if (!api->StreamIsCapturing) return 0;
    scopeprof__gcapstatus st = SCOPEPROF__G_CAP_NONE;
    scopeprof__gerr err = api->StreamIsCapturing(stream, &st);
    if (err == SCOPEPROF__G_OK) return st != SCOPEPROF__G_CAP_NONE;
    if (SCOPEPROF__G_CAP_ERR(err)) return 1; /* the legacy stream while a capture runs */
    scopeprof__gpu_off("StreamIsCapturing", err);
    return -1;
}

/* Out of line: the GPU half of a scope's open. Returns 1 if it is timed or
 * captured (gs->captured). */
SCOPEPROF__INTERNAL int scopeprof__gpu_open(scopeprof_gpu_scope *gs) {
    scopeprof__gmod *m = &scopeprof__gm;
    int status = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE);
    if (status == 0 && !scopeprof__gpu_start()) return 0;
    if (__atomic_load_n(&m->status, __ATOMIC_ACQUIRE) != 1) return 0;
    scopeprof__gthread *gt = scopeprof__gpu_thread(scopeprof__tls);
    int dev = 0;
    scopeprof__gerr err;
    if (!gt) return 0;
    int capturing = scopeprof__gpu_capturing(gs->stream);
    if (capturing < 0) return 0;
    if (capturing) return gs->captured = 1;
    err = m->api.StreamGetDevice ? m->api.StreamGetDevice(gs->stream, &dev) : m->api.GetDevice(&dev);
    if (err != SCOPEPROF__G_OK) {
        scopeprof__gpu_off(m->api.StreamGetDevice ? "StreamGetDevice" : "GetDevice", err);
        return 0;
    }
    if (dev < 0) return 0;
    /* Inside a timed scope on the same stream: its base and anchor. */
    const scopeprof__gopen *outer = NULL;
    for (uint32_t i = gt->nopen; i-- > 0 && !outer;)
        if (gt->open[i].stream == (uint64_t)(uintptr_t)gs->stream && gt->open[i].device == dev)
            outer = &gt->open[i];
    if (gt->nopen == gt->open_cap) {
        uint32_t cap = gt->open_cap ? gt->open_cap * 2 : 8;
        scopeprof__gopen *v = (scopeprof__gopen *)realloc(gt->open, cap * sizeof *v);
        if (!v) return 0;
        outer = outer ? v + (outer - gt->open) : NULL;
        gt->open = v;
        gt->open_cap = cap;
    }
    scopeprof__ganchor *a = outer ? outer->anchor : scopeprof__gpu_anchor(dev);
    if (outer) __atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
    scopeprof__gpu_publish_names();
    if (!a) return 0;
    if (!scopeprof__gpu_event(gt, dev, &gs->start)) {
        scopeprof__gpu_unref(a);
        return 0;
    }
    if ((err = m->api.EventRecord(gs->start, gs->stream)) != SCOPEPROF__G_OK) {
        pthread_mutex_lock(&gt->lock);
        scopeprof__gpu_release(gt, (uint32_t)dev, gs->start);
        pthread_mutex_unlock(&gt->lock);
        scopeprof__gpu_unref(a);
        scopeprof__gpu_off("EventRecord", err);
        return 0;
    }
    gs->anchor = a;
    gs->device = dev;
    gs->base = outer ? outer->base : gs->start;
    gs->slot = gt->nopen;
    scopeprof__gopen *o = &gt->open[gt->nopen++];
    o->stream = (uint64_t)(uintptr_t)gs->stream;
    o->device = dev;
    o->base = gs->base;
    o->anchor = a;
    return 1;
}

/* Out of line: the GPU half of a scope's close. Returns 1 if queued. */
SCOPEPROF__INTERNAL int scopeprof__gpu_close(scopeprof_gpu_scope *gs) {
    scopeprof__gmod *m = &scopeprof__gm;
    scopeprof__gthread *gt = (scopeprof__gthread *)scopeprof__tls->gpu;
    scopeprof__gevent end;
    scopeprof__gerr err = SCOPEPROF__G_OK;
    uint32_t dev = (uint32_t)gs->device;
    int ok = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE) == 1;
    int captured = gs->captured;
    if (!gs->captured) gt->nopen = gs->slot; /* closes are LIFO: it and any inner are gone */
    if (ok && !captured) {
        /* A capture begun inside the scope: the end would be a graph node. */
        int capturing = scopeprof__gpu_capturing(gs->stream);
        if (capturing < 0) ok = 0;
        else if (capturing) captured = 1;
    }
    int timed = ok && !captured;
    if (timed && !scopeprof__gpu_event(gt, (int)dev, &end)) ok = timed = 0;
    if (timed && (err = m->api.EventRecord(end, gs->stream)) != SCOPEPROF__G_OK) {
        pthread_mutex_lock(&gt->lock);
        scopeprof__gpu_release(gt, dev, end);
        pthread_mutex_unlock(&gt->lock);
        scopeprof__gpu_off("EventRecord", err);
        ok = timed = 0;
    }
    pthread_mutex_lock(&gt->lock);
    if (ok && gt->n == gt->cap) {
        uint32_t cap = gt->cap ? gt->cap * 2 : 256;
        scopeprof__gpending *q = (scopeprof__gpending *)malloc(cap * sizeof *q);
        if (q) {
            for (uint32_t i = 0; i < gt->n; i++) q[i] = gt->q[(gt->head + i) % gt->cap];
            free(gt->q);
            gt->q = q;
            gt->cap = cap;
            gt->head = 0;
        } else {
            if (timed) scopeprof__gpu_release(gt, dev, end);
            ok = timed = 0;
        }
    }
    if (!timed && !gs->captured) { /* the start event and anchor go back */
        /* Unless a capture began inside: a scope nested in this one may use
         * its start as a base, so it is left out of the pool (one event). */
        if (!captured) scopeprof__gpu_release(gt, dev, gs->start);
        pthread_mutex_unlock(&gt->lock);
        scopeprof__gpu_unref(gs->anchor);
        pthread_mutex_lock(&gt->lock);
    }
    if (!ok) {
        pthread_mutex_unlock(&gt->lock);
        return 0;
    }
    scopeprof__gpending *p = &gt->q[(gt->head + gt->n++) % gt->cap];
    memset(p, 0, sizeof *p);
    p->launch_tick = gs->cpu.start;
    p->stream = (uint64_t)(uintptr_t)gs->stream;
    p->site = gs->cpu.site;
    p->device = dev;
    if (timed) {
        p->start = gs->start;
        p->base = gs->base;
        p->end = end;
        p->anchor = gs->anchor;
    } else { /* captured: resolved already, with no GPU time */
        p->rec.stream = p->stream;
        p->rec.site = p->site;
        p->rec.device = dev;
        p->rec.status = SCOPEPROF__G_CAPTURED;
        p->resolved = 1;
    }
    /* Every 64 closes, resolve what the GPU has finished, without waiting,
     * so that events return to the pool. */
    if (++gt->closes % 64 == 0) scopeprof__gpu_poll(gt, gt->n);
    pthread_mutex_unlock(&gt->lock);
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* GPU backend */
