/* writer.h: turning queued chunks into the file (conversion, aggregation,
 * encoding), draining the queue, and the background writer thread. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* The slots of the record at s: 1, 2, or 2 and its input shapes' units. */
static inline uint32_t scopeprof__slot_units(const scopeprof__slot *s) {
    return s->dur != SCOPEPROF_REC_LONG_MARK ? 1 : 2 + s[1].key;
}

/* Decode the record at slot s (ticks) into e; returns its slots. */
static inline uint32_t scopeprof__slot_get(const scopeprof__slot *s, scopeprof_event *e) {
    e->start = s->start;
    if (s->dur != SCOPEPROF_REC_LONG_MARK) {
        e->end = s->start + s->dur;
        scopeprof__key_unpack(s->key, e);
        return 1;
    }
    e->depth = s->key;
    e->end = s[1].start;
    e->site = s[1].dur;
    return 2 + s[1].key;
}

/* GPU scopes among the records of n slots. */
static inline uint32_t scopeprof__count_gpu(const scopeprof__slot *s, uint32_t n) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i += scopeprof__slot_units(s + i))
        k += s[i].key >> 31; /* the GPU flag is bit 31 in both forms */
    return k;
}

/* A record off the common path (decoded from the `slots` at s: long, or in
 * a span that is filtered) into the exit summary: an allocation or free
 * (MEM), else a scope of GPU time gpu_ns (-1: a CPU scope), with its input
 * shapes if it has them. Returns the scopes summed (0 or 1). */
SCOPEPROF__INTERNAL uint32_t scopeprof__sum_record(scopeprof__state *g, scopeprof__levels *L, uint32_t slot,
                                             const scopeprof_event *e, const scopeprof__slot *s, uint32_t slots,
                                             int64_t gpu_ns, int comp, uint64_t below) {
    if (e->depth & SCOPEPROF_DEPTH_MEM) { /* end holds the byte count */
        scopeprof__sum_mem(g, slot, SCOPEPROF_MEM_DEPTH(e->depth), SCOPEPROF_MEM_DEVICE(e->depth), (int64_t)e->end);
        return 0;
    }
    scopeprof__sum_event(g, L, e->site, e->start, e->end < e->start ? e->start : e->end,
                         e->depth & SCOPEPROF_DEPTH_MASK, gpu_ns, comp, below, s + 2, slots > 2 ? slots - 2 : 0);
    return 1;
}

/* Whether the record at e goes on a run (scopeprof__sum_span): key and
 * duration as one word less the run's key and lo (`want`) are the duration
 * less lo when the key is the run's and the duration in the class, else at
 * least span; one test for all. A record that starts after the one before
 * ended (less lo, past the first), and lasts lo or more, neither starts
 * before it nor ends before it ends: what sum_run needs. Adds it to *dur
 * and *stop. */
static inline int scopeprof__run_step(const scopeprof__slot *e, uint64_t want, uint64_t span, uint64_t *dur,
                                      uint64_t *stop) {
    uint64_t d = ((uint64_t)e->key << 32 | e->dur) - want;
    if (d >= span || e->start < *stop) return 0;
    *dur += d, *stop = e->start + d;
    return 1;
}

/* How many records from e on go on the run. The first two one at a time
 * (a tree's leaves make runs of one or two), then four at a time while four
 * are left: one test of the end for four records (in a loop over one leaf
 * scope, nearly every record is on a run: 1.5 instructions a scope). */
static inline uint32_t scopeprof__run_len(const scopeprof__slot *e, const scopeprof__slot *end, uint64_t want,
                                          uint64_t span, uint64_t *dur, uint64_t *stop) {
    const scopeprof__slot *run = e;
    if (!scopeprof__run_step(e, want, span, dur, stop)) return 0;
    if (++e == end || !scopeprof__run_step(e, want, span, dur, stop)) return (uint32_t)(e - run);
    for (e++; end - e >= 4; e += 4) {
        if (!scopeprof__run_step(e, want, span, dur, stop)) return (uint32_t)(e - run);
        if (!scopeprof__run_step(e + 1, want, span, dur, stop)) return (uint32_t)(e + 1 - run);
        if (!scopeprof__run_step(e + 2, want, span, dur, stop)) return (uint32_t)(e + 2 - run);
        if (!scopeprof__run_step(e + 3, want, span, dur, stop)) return (uint32_t)(e + 3 - run);
    }
    while (e < end && scopeprof__run_step(e, want, span, dur, stop)) e++;
    return (uint32_t)(e - run);
}

/* Sum the records of n slots (ticks) into the exit summary, thread levels L.
 * The common case, a short record, is summed without a call; a run of short
 * records of one key and one compensation class (a loop over one leaf
 * scope) costs a few instructions each past the first. `comp`, `below`: as
 * scopeprof__sum_at's. */
static inline uint32_t scopeprof__sum_span(scopeprof__state *g, scopeprof__levels *L, uint32_t slot,
                                           const scopeprof__slot *ev, uint32_t n, int comp, uint64_t below) {
    uint32_t not_scopes = 0; /* slots that are not one scope each: long records' second halves, MEM */
    /* In locals: the compiler cannot know that the stores below leave g alone. */
    scopeprof__sitesum *sites = g->sum.site;
    uint32_t site_cap = g->sum.site_cap;
    const int by_shape = g->cfg.group_shape;
    for (const scopeprof__slot *e = ev, *end = ev + n; e < end;) {
        if (__builtin_expect(e->dur != SCOPEPROF_REC_LONG_MARK, 1)) {
            const uint32_t raw = e->key;
            uint32_t key = raw & ~SCOPEPROF_DEPTH_GPU; /* a GPU scope's GPU time: the slow path's */
            uint32_t site = key & ((1u << SCOPEPROF_REC_SITE_BITS) - 1), depth = key >> SCOPEPROF_REC_SITE_BITS;
            uint64_t start = e->start, stop = e->start + e->dur;
            e++;
            if (__builtin_expect(site >= site_cap || !sites[site].seen || depth + 2 > L->cap, 0)) {
                if (scopeprof__sum_room(g, slot, site, depth) != 0) {
                    not_scopes++;
                    continue;
                }
                sites = g->sum.site;
                site_cap = g->sum.site_cap;
            }
            scopeprof__sum_at(g, L, &sites[site], start, stop, depth, -1, comp, below);
            /* The records right after it with the same key and class, each
             * started after the one before ended: leaves, summed together
             * (a record that started earlier, which only mismatched scopes
             * make, ends the run and is summed on its own). A class is a
             * range of durations [lo, lo + span): the short ones [0, below),
             * the others [below, LONG_MARK) (below is far under LONG_MARK: the
             * calibration's bound is at most 10^6 ticks). */
            if (e == end || e->key != raw) continue; /* the usual case in a tree: no run */
            const scopeprof__slot *run = e;
            const uint64_t is_short = stop - start < below;
            const uint64_t lo = is_short ? 0 : below, span = is_short ? below : SCOPEPROF_REC_LONG_MARK - below;
            const uint64_t want = ((uint64_t)raw << 32) + lo;
            uint64_t dur = 0; /* less lo per record, as d (and stop, past the first) */
            e += scopeprof__run_len(e, end, want, span, &dur, &stop); /* e < end here */
            if (e != run) {
                uint32_t k = (uint32_t)(e - run);
                scopeprof__sum_run(L, &sites[site], depth, k, dur + lo * k, stop + lo, k & (0 - is_short));
            }
            continue;
        }
        uint32_t slots;
        if (e[1].key && !by_shape && !(e->key & (SCOPEPROF_DEPTH_GPU | SCOPEPROF_DEPTH_MEM))) {
            /* A CPU scope with input shapes, summed by its site as any
             * scope (the shapes matter to SCOPEPROF_GROUP_BY=shape only),
             * without decoding the record: out of this loop, which stays as
             * short as before (inlined here, it made every plain scope 2
             * instructions dearer). */
            slots = 2 + e[1].key;
            scopeprof__sum_event(g, L, e[1].dur, e->start, e[1].start < e->start ? e->start : e[1].start, e->key,
                                 -1, comp, below, NULL, 0);
            not_scopes += slots - 1;
        } else {
            scopeprof_event x; /* any other long record: decoded */
            slots = scopeprof__slot_get(e, &x);
            not_scopes += slots - scopeprof__sum_record(g, L, slot, &x, e, slots, -1, comp, below);
        }
        e += slots;
        sites = g->sum.site; /* the room may have moved them */
        site_cap = g->sum.site_cap;
    }
    return n - not_scopes; /* the scopes summed */
}

/* The slow path of a span: a schedule's window (records outside it are
 * dropped) or GPU scopes (each paired with the thread's next GPU record,
 * compacted into gr; a GPU flag without one is cleared). Rewrites the span
 * in place, ticks as they were: a record only ever leaves. Returns the
 * slots kept; *paired the GPU records kept, *summed the scopes summed. */
SCOPEPROF__INTERNAL uint32_t scopeprof__span_filter(scopeprof__state *g, scopeprof__levels *L, uint32_t slot,
                                                    scopeprof__slot *ev, uint32_t n, int comp, uint64_t below,
                                                    scopeprof_gpu_record *gr, uint32_t ngr,
                                                    uint32_t *paired, uint32_t *summed) {
    const int sched = g->sched.on, window = g->sched.window;
    const uint64_t win_start = g->sched.win_start;
    uint32_t out = 0, gi = 0;
    for (uint32_t i = 0; i < n;) {
        scopeprof_event e;
        uint32_t at = i, slots = scopeprof__slot_get(ev + i, &e);
        i += slots;
        int gpu_flag = (e.depth & (SCOPEPROF_DEPTH_GPU | SCOPEPROF_DEPTH_MEM)) == SCOPEPROF_DEPTH_GPU;
        uint32_t ours = gpu_flag && gi < ngr && gr[gi].launch_ns == scopeprof__to_ns(g, e.start);
        if (sched && (!window || e.start < win_start)) {
            /* Outside the schedule's recording window (wait, warm-up, or an
             * earlier cycle): dropped, with its GPU record if it has one. */
            gi += ours;
            continue;
        }
        memmove(ev + out, ev + at, slots * sizeof *ev);
        out += slots;
        int64_t gpu = -1;
        if (ours) {
            if (gr[gi].status == 0) gpu = (int64_t)(gr[gi].end_ns - gr[gi].start_ns);
            gr[(*paired)++] = gr[gi++]; /* compacted: only kept events' records */
        } else if (gpu_flag) { /* no GPU record: a CPU scope */
            ev[out - slots].key &= ~SCOPEPROF_DEPTH_GPU;
        }
        if (L) *summed += scopeprof__sum_record(g, L, slot, &e, ev + out - slots, slots, gpu, comp, below);
    }
    return out;
}

/* The file is little-endian (docs/FORMAT.md) and a chunk's slots are
 * written as they are: on a big-endian machine each slot's fields (u64, u32,
 * u32 in both record forms) are turned around first, in place (the slots
 * are summed already and never read again). */
static inline void scopeprof__slots_le(scopeprof__slot *s, uint32_t n) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (uint32_t i = 0; i < n; i++) {
        s[i].start = __builtin_bswap64(s[i].start);
        s[i].dur = __builtin_bswap32(s[i].dur);
        s[i].key = __builtin_bswap32(s[i].key);
    }
#else
    (void)s, (void)n;
#endif
}

/* Sum and write the records in n slots of thread t. The file holds records
 * as the buffers do (format 4: ticks, which the reader converts with the
 * TICKS chunk's rate), so they are written from the chunk's own memory, and
 * the only pass over them per event is the exit summary's. */
SCOPEPROF__INTERNAL void scopeprof__write_span(scopeprof__state *g, scopeprof__thread *t,
                                               scopeprof__slot *ev, uint32_t n) {
    scopeprof__calibrate(g);
    if (!g->life.in_signal) scopeprof__overhead_apply(g);
    /* The GPU records of this span's GPU scopes, in the same order (counting
     * them is a pass over the span: only with a GPU backend). */
    uint32_t k = g->gpu.take && !g->life.in_signal ? scopeprof__count_gpu(ev, n) : 0;
    scopeprof_gpu_record *gr = NULL;
    uint32_t ngr = 0, paired = 0, summed = 0;
    if (k && (gr = (scopeprof_gpu_record *)malloc(k * sizeof *gr))) ngr = g->gpu.take(g, t, gr, k);
    /* The sums feed only the table: none when it is off (SCOPEPROF_SUMMARY=0). */
    const int aggregate = !g->life.in_signal && g->cfg.summary;
    const int comp = scopeprof__comp_on(&g->sum.agg);
    const uint64_t below = g->sum.agg.comp_short_below; /* ticks: the sums' units */
    const uint32_t slot = t->slot; /* the summary's slot (the file keeps t->index) */
    scopeprof__levels *L = aggregate && scopeprof__sum_room(g, slot, UINT32_MAX, 0) == 0 ? &g->sum.thr[slot] : NULL;
    uint32_t kept = n;
    if (g->sched.on || k) kept = scopeprof__span_filter(g, L, slot, ev, n, comp, below, gr, ngr, &paired, &summed);
    else if (L) summed = scopeprof__sum_span(g, L, slot, ev, n, comp, below);
    g->out.events_written += kept; /* 16-byte units, as the END chunk counts them */
    g->sum.events += summed;
    if (g->out.fd == -1 && kept) scopeprof__open_output(g);
    if (g->out.fd < 0 || kept == 0) {
        free(gr);
        return;
    }
    scopeprof__write_sites(g);
    scopeprof__write_thread(g, t, (uint64_t)g->cfg.flush_ms * 1000000u);
    if (paired) scopeprof__write_gpu(g, t, gr, paired);
    free(gr);
    /* Payload = thread index, units, records: the chunk's header and the
     * 8-byte prefix, then the records from the chunk's own memory, in one
     * write, or held for the batch's (scopeprof__write_some). */
    scopeprof__slots_le(ev, kept);
    size_t bytes = (size_t)kept * sizeof *ev;
    uint32_t held = g->out.batch_n++; /* 0 unless batch_on: out.batch_* are empty between writes */
    unsigned char *head = g->out.batch_head[held], *pre = head + SCOPEPROF_CHUNK_HEADER_SIZE;
    scopeprof__put32(pre, t->index);
    scopeprof__put32(pre + 4, kept);
    uint32_t crc = scopeprof_crc32(scopeprof_crc32(0, pre, 8), ev, bytes);
    scopeprof__chunk_head(head, SCOPEPROF_CHUNK_EVENTS, (uint32_t)(8 + bytes), crc);
    struct iovec *v = &g->out.batch_v[2 * held];
    v[0].iov_base = head, v[0].iov_len = sizeof g->out.batch_head[held];
    v[1].iov_base = ev, v[1].iov_len = bytes;
    if (!g->out.batch_on || held + 1 == SCOPEPROF__BATCH) scopeprof__write_held(g);
}

/* Recycle the state of threads that are gone and fully written: their
 * final name goes to the file first if it lacks it, so the file needs
 * nothing more of them (a program that starts 300,000 short threads
 * kept 390 bytes for each, then the summary's 24-byte slot for each). The
 * state and its summary slot go to the next new thread (scopeprof__thread_new).
 * Gone means gone from the kernel (tgkill with signal 0 fails): a key
 * destructor that records after ours (another module's) can revive a thread
 * only while it is still exiting. Lock held; not from a signal handler (free). */
static inline int scopeprof__thread_gone(const scopeprof__state *g, const scopeprof__thread *t) {
#if defined(SYS_tgkill) && (defined(__USE_MISC) || !defined(__GLIBC__))
    return syscall(SYS_tgkill, g->pid, (pid_t)t->tid, 0) != 0 && errno == ESRCH;
#else
    (void)g, (void)t; /* cannot tell (strict ISO C): keep it */
    return 0;
#endif
}

/* Registry lock held. A thread may push its state at the head meanwhile
 * (under `reg` only): the unlink, under `reg`, looks again for what points
 * to the state when that was the head. */
SCOPEPROF__INTERNAL void scopeprof__reap_threads(scopeprof__state *g) {
    int saved_errno = errno; /* the program's: a slow path must not change it */
    for (scopeprof__thread **pp = &g->reg.threads, *t; (t = __atomic_load_n(pp, __ATOMIC_ACQUIRE)) != NULL;) {
        int busy = t->alive;
        if (!busy) { /* a revived thread may take a chunk meanwhile (chunk_next) */
            pthread_mutex_lock(&g->buf.lock);
            busy = t->chunk || t->nqueued;
            pthread_mutex_unlock(&g->buf.lock);
        }
        if (busy || t->gpu || t->ranges || !scopeprof__thread_gone(g, t)) {
            pp = &t->next;
            continue;
        }
        /* Its final name (set at its exit) is in the file before the state
         * goes: a rename after its last events written did not reach it. */
        if (g->out.fd >= 0 && t->name_file == g->out.files) scopeprof__write_thread(g, t, 0);
        scopeprof__sum_thread_gone(g, t->slot); /* not under `reg`: no malloc there */
        scopeprof__reg_lock(g);
        while (*pp != t) pp = &(*pp)->next; /* states pushed before it since */
        *pp = t->next;
        scopeprof__thread_release(g, t); /* with its slot, for the next thread */
        scopeprof__reg_unlock(g);
    }
    errno = saved_errno;
}

/* The chunk lock, also from a signal handler (g->life.in_signal) or the unlock
 * after one. Its holder is then another thread (signals are held while a
 * thread holds it, and the writer blocks them all), out of it within a few
 * pointer moves or a malloc: it is tried for up to a second, and after that
 * the work goes on without it (best effort, as the handler's whole write).
 * Returns whether it was taken, for scopeprof__qunlock. */
SCOPEPROF__INTERNAL int scopeprof__qlock(scopeprof__state *g) {
    if (!g->life.in_signal) return pthread_mutex_lock(&g->buf.lock) == 0;
    for (int i = 0; i < 1100; i++) {
        if (pthread_mutex_trylock(&g->buf.lock) == 0) return 1;
        struct timespec ms = {0, 1000000};
        if (i >= 100) nanosleep(&ms, NULL);
    }
    return 0;
}
static inline void scopeprof__qunlock(scopeprof__state *g, int locked) {
    if (locked) pthread_mutex_unlock(&g->buf.lock);
}

/* A written chunk back to the spare list (scopeprof__spare_push). */
SCOPEPROF__INTERNAL void scopeprof__recycle(scopeprof__state *g, scopeprof__chunk *c) {
    int l = scopeprof__qlock(g);
    scopeprof__spare_push(g, c);
    scopeprof__qunlock(g, l);
}

/* The oldest queued chunk, taken off the queue; NULL when there is none,
 * or (without may_wait) when its GPU scopes are still running: it is then
 * left at the head. Registry lock held: only its holder takes chunks off the
 * queue, so the head seen under the chunk lock is still the head after the
 * GPU check. */
SCOPEPROF__INTERNAL scopeprof__chunk *scopeprof__queue_take(scopeprof__state *g, int may_wait) {
    int l = scopeprof__qlock(g);
    scopeprof__chunk *c = g->buf.full_head;
    scopeprof__qunlock(g, l);
    if (!c) return NULL;
    if (!may_wait && g->gpu.ready) {
        uint32_t k = scopeprof__count_gpu(c->ev + c->first, c->count - c->first);
        if (k && !g->gpu.ready(g, c->thread, k)) return NULL;
    }
    l = scopeprof__qlock(g);
    g->buf.full_head = c->next;
    if (!g->buf.full_head) g->buf.full_tail = NULL;
    g->buf.queued -= SCOPEPROF__CHUNK_BYTES;
    scopeprof__qunlock(g, l);
    return c;
}

/* Write and recycle up to `most` (at most SCOPEPROF__BATCH) of the oldest
 * queued chunks (scopeprof__queue_take), their EVENTS chunks in one writev
 * (out.batch_*; not from a signal handler, whose write goes piece by
 * piece). Returns how many; 0 if there was none to write. Registry lock
 * held. A chunk is recycled once its records are in the file. */
SCOPEPROF__INTERNAL uint32_t scopeprof__write_some(scopeprof__state *g, int may_wait, uint32_t most) {
    scopeprof__chunk *done = NULL, *c;
    uint32_t n = 0;
    g->out.batch_on = !g->life.in_signal;
    for (; n < most && n < SCOPEPROF__BATCH && (c = scopeprof__queue_take(g, may_wait)) != NULL; n++) {
        scopeprof__write_span(g, c->thread, c->ev + c->first, c->count - c->first);
        c->next = done, done = c;
    }
    g->out.batch_on = 0;
    scopeprof__write_held(g);
    int l = scopeprof__qlock(g);
    for (; (c = done) != NULL; scopeprof__spare_push(g, c)) {
        done = c->next;
        c->thread->nqueued--; /* after its write: the thread is not reaped before */
    }
    scopeprof__qunlock(g, l);
    return n;
}

/* Write and recycle the chunks queued now, oldest first (per-thread order).
 * Without may_wait, stop at the first chunk whose GPU scopes are still
 * running. Only those queued at the start: threads keep queuing without the
 * registry lock, and one that fills chunks faster than they are written
 * kept a PROFILE_FLUSH writing for ever. Only the lock's holder takes
 * chunks off the queue, so those are the first ones until written. */
SCOPEPROF__INTERNAL void scopeprof__write_queued(scopeprof__state *g, int may_wait) {
    int l = scopeprof__qlock(g);
    size_t n = g->buf.queued / SCOPEPROF__CHUNK_BYTES;
    scopeprof__qunlock(g, l);
    for (uint32_t k; n > 0 && (k = scopeprof__write_some(g, may_wait, (uint32_t)n)) != 0;) n -= k;
    if (!g->life.in_signal) scopeprof__reap_threads(g);
}

/* Write what every thread has published in its current chunk. The owners
 * may be running (PROFILE_FLUSH, the writer's timed flush, exit() from one
 * thread while others work): the events before the cursor's release store
 * are complete and never touched again, so they are written and marked with
 * chunk->first; anything later waits for the next write. A thread may have
 * queued chunks since the queue was last drained (owners queue under the
 * chunk lock only): those are taken out of the queue and written first, so
 * each thread's events stay in order. Registry lock held. */
SCOPEPROF__INTERNAL void scopeprof__write_partials(scopeprof__state *g) {
    for (scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) {
        scopeprof__chunk *mine = NULL, **tail = &mine;
        int l = scopeprof__qlock(g);
        scopeprof__chunk *c = t->chunk;
        uint32_t n = c ? (uint32_t)(__atomic_load_n(&t->cur, __ATOMIC_ACQUIRE) - c->ev) : 0;
        uint32_t taken = 0;
        if (t->nqueued) {
            scopeprof__chunk **pp = &g->buf.full_head, *prev = NULL;
            while (*pp) {
                scopeprof__chunk *q = *pp;
                if (q->thread != t) {
                    prev = q;
                    pp = &q->next;
                    continue;
                }
                *pp = q->next;
                g->buf.queued -= SCOPEPROF__CHUNK_BYTES;
                q->next = NULL;
                *tail = q;
                tail = &q->next;
                taken++;
            }
            g->buf.full_tail = prev;
        }
        scopeprof__qunlock(g, l);
        while (mine) {
            scopeprof__chunk *q = mine;
            mine = q->next;
            scopeprof__write_span(g, t, q->ev + q->first, q->count - q->first);
            scopeprof__recycle(g, q);
        }
        if (taken) {
            l = scopeprof__qlock(g);
            t->nqueued -= taken;
            scopeprof__qunlock(g, l);
        }
        if (c && n > c->first) scopeprof__write_span(g, t, c->ev + c->first, n - c->first);
        if (c) c->first = n;
    }
}

SCOPEPROF__API void scopeprof__flush(void) {
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    if (!g->life.finalized) {
        scopeprof__write_queued(g, 1);
        scopeprof__write_partials(g);
    }
    scopeprof__unlock(g);
}

/* ---- The background writer ---------------------------------------------
 * One thread per process drains full chunks: it sums and writes them under
 * the registry lock, SCOPEPROF__BATCH chunks at a time (so nothing that
 * needs that lock waits for more than a few chunks' write: about 0.1 ms on
 * this VM), and recycles them to the spare
 * list. It also allocates chunks ahead and touches their pages when too few
 * are spare, so recording threads neither write nor take first-touch page
 * faults. Every SCOPEPROF_FLUSH_MS (100) it also writes what live
 * threads have published, so a process killed without a chance to write
 * (SIGKILL, the OOM killer) loses at most that much of its recent past.
 * When it falls behind, chunk memory grows past the budget by up to a
 * quarter; past that the thread that needs a chunk writes one itself
 * (nothing is dropped; counted and said at exit). It blocks every signal, so
 * handlers run on the program's threads, and a terminating signal that
 * finds it holding the lock is written at its unlock (scopeprof__unlock); a
 * forked child has none (its recording threads write, as without a writer);
 * at exit the final write drains the queue and the writer stops when it next
 * looks. While chunks keep coming it looks for work on its own (polled:
 * scopeprof__writer_wake_due says why, and when a thread wakes it). With
 * SCOPEPROF_OUTPUT=none it runs all the same: it feeds the exit summary and
 * recycles the memory. Its locks: state.h, "Locks". */
SCOPEPROF__INTERNAL void scopeprof__writer_init_locks(scopeprof__state *g) {
    pthread_mutex_init(&g->buf.lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wr.wake, &a);
    pthread_condattr_destroy(&a);
}

/* Make a new chunk's pages present: one madvise(MADV_POPULATE_WRITE) where
 * the kernel has it (Linux 5.14), else a write to each page. A chunk's 17
 * page faults (4096 slots then) one at a time cost 450-600 us on this VM,
 * populated 150-220 (tests run beside it) or 60 (alone; session 11). */
static inline void scopeprof__chunk_touch(scopeprof__chunk *c) {
#ifdef MADV_POPULATE_WRITE
    if (madvise(c, sizeof *c, MADV_POPULATE_WRITE) == 0) return;
#endif
    volatile unsigned char *p = (volatile unsigned char *)c;
    for (size_t o = 0; o < sizeof *c; o += 4096) p[o] = 0;
    p[sizeof *c - 1] = 0;
}

/* Allocate and touch chunks until there are SCOPEPROF__SPARE spare ones, the
 * budget has no room or a drain is due (it comes first: scopeprof__drain_due)
 * and can be made (the clock rate is known: scopeprof__writer_main). The
 * pages are written now, on this thread, rather than by the first event that
 * lands on each. Returns 0 if a chunk was due and could not be mapped (out
 * of memory, or of mappings), else 1. */
SCOPEPROF__INTERNAL int scopeprof__writer_refill(scopeprof__state *g) {
    for (;;) {
        /* malloc under the registry lock, which fork's prepare handler
         * takes: a fork never finds this thread inside the allocator (ASan's,
         * in gcc 12, stayed locked in the child: its leak check hung). The
         * chunk is reachable from the registry while its pages are touched
         * (g->wr.touching), without the lock: a child forked meanwhile frees
         * it, and holding the lock for the 16 page faults disturbed the GPU
         * tests' clock alignment under ASan. */
        scopeprof__lock(g);
        pthread_mutex_lock(&g->buf.lock);
        int go = scopeprof__refill_due(g, SCOPEPROF__SPARE) && !g->life.finalized &&
                 (!scopeprof__drain_due(g) || scopeprof__rate_wait(g));
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__chunk *c = go ? scopeprof__chunk_map() : NULL;
        g->wr.touching = c;
        scopeprof__unlock(g);
        if (!c) return !go;
        scopeprof__chunk_touch(c);
        scopeprof__lock(g);
        g->wr.touching = NULL;
        pthread_mutex_lock(&g->buf.lock);
        scopeprof__spare_push(g, c);
        g->buf.bytes += SCOPEPROF__CHUNK_BYTES;
        if (g->buf.bytes > g->buf.peak_bytes) g->buf.peak_bytes = g->buf.bytes;
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__unlock(g);
    }
}

/* Write the queue SCOPEPROF__BATCH chunks at a time, taking the registry
 * lock for each batch, as long as scopeprof__drain_goes_on says; with
 * `partials` (the timed flush), all of it, then what live threads have
 * published, and the steps that ended since the last STEPS chunk. Waits
 * for no GPU: chunks with running GPU scopes wait for a later round, and
 * with a GPU backend the partial chunks are left to the exit's write.
 * Returns the chunks written. */
SCOPEPROF__INTERNAL int scopeprof__writer_drain(scopeprof__state *g, int partials) {
    int wrote = 0;
    for (int more = 1; more;) {
        scopeprof__lock(g);
        if (g->life.finalized || g->wr.paused) {
            scopeprof__unlock(g);
            return wrote;
        }
        uint32_t n = scopeprof__write_some(g, 0, SCOPEPROF__BATCH);
        wrote += (int)n;
        more = 0;
        if (n) {
            int l = scopeprof__qlock(g);
            more = scopeprof__drain_goes_on(g, partials);
            scopeprof__qunlock(g, l);
        }
        if (!more && partials && !g->gpu.take) scopeprof__write_partials(g);
        if (!more && partials) scopeprof__write_steps(g); /* a SIGKILL keeps the steps that ended */
        if (!more) scopeprof__reap_threads(g);
        scopeprof__unlock(g);
    }
    return wrote;
}

/* Whether the writer is the process's last thread: the program's main thread
 * called pthread_exit and every other thread has ended, which would have
 * ended the process (exit(0)) had the writer not been there (and, as it
 * blocks every signal, it would not even end on SIGTERM). From
 * /proc/self/stat: the main thread's state (field 3; 'Z' once it has
 * exited, while it still counts) and the thread count (field 20). 0 when it
 * cannot be read. */
SCOPEPROF__INTERNAL int scopeprof__writer_alone(void) {
    char b[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0) return 0;
    b[n] = 0;
    const char *p = strrchr(b, ')'); /* the name may hold spaces and parentheses */
    if (!p || p[1] != ' ') return 0;
    char state = p[2];
    for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
    long threads = p ? atol(p + 1) : 0;
    return threads == 1 || (threads == 2 && state == 'Z');
}

/* Wait on the writer's wake-up until CLOCK_MONOTONIC time `at` (ns; the
 * condition's clock: scopeprof__writer_init_locks), or a signal of it;
 * asleep (a thread wakes it when work is due: scopeprof__writer_wake_due)
 * if `asleep`, and awake again after. buf.lock held. */
static inline void scopeprof__writer_wait(scopeprof__state *g, uint64_t at, int asleep) {
    struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
    g->wr.asleep = asleep;
    pthread_cond_timedwait(&g->wr.wake, &g->buf.lock, &ts);
    g->wr.asleep = 0;
}

SCOPEPROF__INTERNAL void *scopeprof__writer_main(void *arg) {
    scopeprof__state *g = (scopeprof__state *)arg;
    scopeprof__sigs_all_held = 1; /* scopeprof__writer_start made it so */
    __atomic_store_n(&g->wr.up, 1, __ATOMIC_RELEASE);
    prctl(PR_SET_NAME, "scopeprof-write", 0, 0, 0);
    uint64_t period = (uint64_t)g->cfg.flush_ms * 1000000u, last = scopeprof__mono_ns();
    scopeprof__writer_refill(g);
    pthread_mutex_lock(&g->buf.lock);
    while (!g->life.finalized && g->wr.state == SCOPEPROF__WRITER_RUNNING) {
        uint64_t now = scopeprof__mono_ns();
        struct timespec cpu; /* its CPU so far, for the exit's line (scopeprof__print_own_cost): a
                              * system call a look or a batch written, 0.1-0.3 us */
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
            g->wr.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
        int timed = now - last >= period, look = scopeprof__writer_look_due(g);
        if (!timed && !look && !scopeprof__writer_has_work(g)) { /* polled, or asleep till the timed flush */
            uint64_t at = scopeprof__writer_next_look(g, now, last + period);
            scopeprof__writer_wait(g, at, g->wr.asleep);
            continue;
        }
        /* The first write needs the clock rate, which takes 20 ms from the
         * program's start to measure (scopeprof__calibrate): till then the
         * writer touches new chunks for the threads, rather than sleep in
         * the write while they touch their own. */
        uint64_t early = scopeprof__rate_wait(g);
        int drain = !early && (timed || look || scopeprof__drain_due(g)), wrote = 0;
        timed = timed && !early;
        pthread_mutex_unlock(&g->buf.lock);
        int mapped = drain ? 1 : scopeprof__writer_refill(g); /* a drain comes first: it recycles chunks */
        if (drain) wrote = scopeprof__writer_drain(g, timed);
        mapped &= scopeprof__writer_refill(g);
        if (timed) last = now;
        if (timed && scopeprof__writer_alone()) exit(0); /* as the last thread's end would */
        pthread_mutex_lock(&g->buf.lock);
        if (wrote) g->wr.polled = 0; /* a look's batch waits for a write: the rate, a GPU, a callback */
        if (early) {
            scopeprof__writer_wait(g, now + early, 1); /* or a thread's wake-up: refill */
        } else if (!mapped && !drain) {
            /* Woken to refill, and mmap failed: no loop round the locks of
             * its own until memory comes back; the threads map their own or
             * stop (scopeprof__oom). A thread that queues work wakes it, as
             * a drain recycles chunks (a refill due wakes it too, at most
             * once a chunk switch). */
            scopeprof__writer_wait(g, last + period, 1);
        } else if (drain && !wrote && !timed) {
            /* Due but nothing could be written (a schedule's cycle callback
             * runs, or the oldest chunk's GPU work does): a millisecond's
             * wait, not a loop round the registry lock. */
            scopeprof__writer_wait(g, scopeprof__mono_ns() + 1000000u, 0);
        }
    }
    pthread_mutex_unlock(&g->buf.lock);
    return NULL;
}

/* Start the process's writer once (first thread to record), with every
 * signal blocked in it. If it cannot start, recording threads write, as with
 * SCOPEPROF_WRITER=0. Its code is that of the module that made the registry
 * (g->wr.main), which is pinned: a dlclose'd library's copy would vanish
 * under it. */
SCOPEPROF__INTERNAL void scopeprof__writer_start(scopeprof__state *g) {
    if (__atomic_load_n(&g->wr.state, __ATOMIC_ACQUIRE) != SCOPEPROF__WRITER_NONE) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* held here too: buf.lock is taken */
    int cancel; /* off while buf.lock is held: the wait below sleeps (state.h, scopeprof__hold) */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    pthread_mutex_lock(&g->buf.lock);
    if (g->wr.state == SCOPEPROF__WRITER_NONE) {
        pthread_attr_t a;
        pthread_t th;
        int ok = pthread_attr_init(&a) == 0;
        ok = ok && pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0 &&
             pthread_create(&th, &a, g->wr.main, g) == 0;
        pthread_attr_destroy(&a);
        __atomic_store_n(&g->wr.state, ok ? SCOPEPROF__WRITER_RUNNING : SCOPEPROF__WRITER_NEVER,
                         __ATOMIC_RELEASE);
        /* Wait (up to a second) until the writer runs its own code: the
         * thread's start-up before it, in the C library and in sanitizers'
         * runtimes, allocates. A fork that caught it there left the
         * allocator's lock held in the child under ASan, whose leak check
         * at exit then hung (tests/life, fork: 1 run in about 20). Slept
         * in steps of 20 us, not spun with sched_yield: on a machine whose
         * cores are all busy the writer needs this thread's CPU to start. */
        for (uint64_t t0 = scopeprof__mono_ns(); ok && !__atomic_load_n(&g->wr.up, __ATOMIC_ACQUIRE) &&
                                                  scopeprof__mono_ns() - t0 < 1000000000u;) {
            struct timespec step = {0, 20000};
            nanosleep(&step, NULL); /* a cancellation point: cancellation is off */
        }
    }
    pthread_mutex_unlock(&g->buf.lock);
    pthread_setcancelstate(cancel, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

#ifdef __cplusplus
}
#endif
#endif /* writer.h */
