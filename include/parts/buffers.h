/* buffers.h: per-thread chunks, the memory budget, the hot path's slow
 * path (a full chunk traded for an empty one) and PROFILE_BEGIN/END ranges. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* What a chunk costs in memory: its mapping, in whole pages (each chunk is
 * mapped on its own). The budget, the queue and the spare chunks are all
 * counted in it: counted in the chunk's size, chunks of 2 slots (56 bytes,
 * a page each: SCOPEPROF_EVENTS_PER_CHUNK=2) took 73 times the budget. */
#define SCOPEPROF__CHUNK_BYTES ((sizeof(scopeprof__chunk) + 4095u) & ~(size_t)4095u)

/* A new chunk, from mmap (scopeprof__map): never malloc, as a chunk is taken
 * in a recording thread's slow path, which a PROFILE_SCOPE in a signal
 * handler reaches, and by the writer, which a fork may interrupt. Chunks are
 * recycled through the spare list, never unmapped while the process records. */
static inline scopeprof__chunk *scopeprof__chunk_map(void) {
    return (scopeprof__chunk *)scopeprof__map(sizeof(scopeprof__chunk));
}

/* An empty chunk to the spare list: one just written (recycled), or one
 * the writer allocated and touched ahead. Last in, first out: the next
 * thread that needs a chunk takes the one most recently written, whose
 * pages are likeliest still in the cache. Chunk lock held. */
static inline void scopeprof__spare_push(scopeprof__state *g, scopeprof__chunk *c) {
    c->next = g->buf.spare;
    g->buf.spare = c;
    g->buf.nspare++;
}

/* An empty chunk for a recording thread: a spare one (its pages are
 * present), else a new one, whose page faults this thread then takes (only
 * when the writer is behind or absent). NULL when mmap fails. Whether the
 * budget allows it is chunk_next's to decide. Chunk lock held. */
SCOPEPROF__INTERNAL scopeprof__chunk *scopeprof__chunk_alloc(scopeprof__state *g) {
    scopeprof__chunk *c = g->buf.spare;
    if (c) {
        g->buf.spare = c->next;
        g->buf.nspare--;
    } else { /* mapped, not malloc'd: this may run in a signal handler */
        c = scopeprof__chunk_map();
        if (!c) return NULL;
        g->buf.bytes += SCOPEPROF__CHUNK_BYTES;
        if (g->buf.bytes > g->buf.peak_bytes) g->buf.peak_bytes = g->buf.bytes;
    }
    c->next = NULL;
    c->count = 0;
    c->first = 0;
    c->thread = NULL;
    return c;
}

/* Queue the thread's current chunk (its first `n` events) for writing.
 * Chunk lock held. */
SCOPEPROF__INTERNAL void scopeprof__queue(scopeprof__state *g, scopeprof__thread *t,
                                          scopeprof__chunk *c, uint32_t n) {
    c->thread = t;
    c->count = n;
    c->next = NULL;
    t->nqueued++;
    if (g->buf.full_tail) g->buf.full_tail->next = c;
    else g->buf.full_head = c;
    g->buf.full_tail = c;
    g->buf.queued += SCOPEPROF__CHUNK_BYTES;
    g->buf.chunks_queued++;
}

/* Whether the writer has a drain due: an eighth of the budget or 1 MiB is
 * queued, whichever is less. A written chunk is recycled with its pages
 * warm, so the less is queued, the fewer chunks a run ever touches for the
 * first time (about 16 page faults each): at an eighth of the default
 * budget (8 MiB) a run of 3.5M scopes kept 13-15 MiB of chunks, at 1 MiB
 * 8-10 MiB, and used about 5% less CPU (bench/regimes.c, session 12). The
 * drain comes before any refill: a writer that kept touching new chunks for
 * a thread that used them as fast never drained, and chunk memory grew to
 * the budget in every run (session 11). Chunk lock held. */
#define SCOPEPROF__DRAIN_AT ((size_t)1 << 20)
static inline int scopeprof__drain_due(const scopeprof__state *g) {
    size_t at = g->cfg.budget / 8;
    return g->buf.queued >= (at < SCOPEPROF__DRAIN_AT ? at : SCOPEPROF__DRAIN_AT);
}

/* The spare chunks the writer keeps (scopeprof__writer_refill allocates and
 * touches new ones up to this count): twice what a drain waits for, and two
 * more, so that a thread finds one while a drain is under way, and before
 * the first drain has recycled any (a process's first 1 MiB). At 20 ns a
 * scope one thread fills them in about 2.5 ms; the writer touches one in ~16
 * page faults. Written chunks count among them: with a separate ready list
 * of 64, topped up after every drain beside the recycled chunks, a run of
 * 3.5M scopes touched 8-10 MiB of chunks (session 12). Counted in whole
 * pages (SCOPEPROF__CHUNK_BYTES): with a small SCOPEPROF_EVENTS_PER_CHUNK
 * a count of chunk sizes kept 37,000 spare pages. */
#define SCOPEPROF__SPARE ((uint32_t)(2 * SCOPEPROF__DRAIN_AT / SCOPEPROF__CHUNK_BYTES) + 2u)

/* Whether a refill is due: fewer than `below` spare chunks and room in the
 * budget for one more. Chunk lock held. */
static inline int scopeprof__refill_due(const scopeprof__state *g, uint32_t below) {
    return g->buf.nspare < below && g->buf.bytes + SCOPEPROF__CHUNK_BYTES <= g->cfg.budget;
}

/* Whether the writer has work before its next timed flush: a drain is due,
 * or a refill is (half the spare chunks are gone). Chunk lock held. */
static inline int scopeprof__writer_has_work(const scopeprof__state *g) {
    return scopeprof__drain_due(g) || scopeprof__refill_due(g, SCOPEPROF__SPARE / 2);
}

/* How the writer learns of work. While chunks keep coming it looks on its
 * own, SCOPEPROF__WRITER_POLL_NS after its last look's work, and writes
 * what is queued once that fills a batch (scopeprof__writer_look_due; a
 * thread at full speed queues about 0.8 MiB a millisecond here, within the
 * spare chunks); when none came since its last look it sleeps until its
 * timed flush (wr.asleep), and the thread that queues a chunk with work due
 * wakes it. A thread also wakes a writer that looks too seldom for it: a
 * quarter of the spare chunks left, or a quarter of the budget queued (a
 * small SCOPEPROF_BUFFER_MB). Why not a wake at every
 * chunk switch with work due: the writer, woken on the switching thread's
 * CPU, took that CPU at once, after a scope closed and inside the scope
 * open around it, so on a machine whose CPUs were all busy its drains
 * landed in that one scope's self time (bench/compensation.c's parent, one
 * busy process beside: 23-28 chunk switches per million events woke the
 * writer, and 1.9-6.8 ms went in the switches; polled, 1-3 and 1.3-3.4 ms;
 * docs/PERFORMANCE.md, session 16). Polled, the writer's CPU comes out of
 * the program wherever it happens to run, as any other process's would.
 * A look with nothing due costs a few microseconds: under 1% of a CPU.
 * Chunk lock held. */
#define SCOPEPROF__WRITER_POLL_NS 1000000u
#define SCOPEPROF__SPARE_LOW ((SCOPEPROF__SPARE + 3u) / 4u) /* a quarter, at least one */
static inline int scopeprof__writer_wake_due(const scopeprof__state *g) {
    if (g->wr.state != SCOPEPROF__WRITER_RUNNING) return 0;
    if (g->wr.asleep) return scopeprof__writer_has_work(g);
    return scopeprof__refill_due(g, SCOPEPROF__SPARE_LOW) || g->buf.queued >= g->cfg.budget / 4;
}

/* When the writer, with nothing due at `now`, looks next (CLOCK_MONOTONIC
 * ns): if a chunk was queued since its last look, in a poll's time, and
 * that look writes what is queued if it fills a batch (wr.polled:
 * scopeprof__writer_look_due); else at its timed flush `flush_at`, asleep
 * (woken by a thread only) till then. Never after `flush_at`. Chunk lock
 * held. */
static inline uint64_t scopeprof__writer_next_look(scopeprof__state *g, uint64_t now, uint64_t flush_at) {
    int idle = g->buf.chunks_queued == g->wr.looked;
    g->wr.looked = g->buf.chunks_queued;
    g->wr.asleep = idle;
    g->wr.polled = !idle;
    return idle || now + SCOPEPROF__WRITER_POLL_NS > flush_at ? flush_at : now + SCOPEPROF__WRITER_POLL_NS;
}

/* Whether a poll's look writes: it polled, and a batch (SCOPEPROF__BATCH
 * chunks, one writev) is queued. Fewer wait for the next look (or the timed
 * flush), so that a thread that queues a chunk a millisecond does not cost a
 * write of its own per chunk. Chunk lock held. */
static inline int scopeprof__writer_look_due(const scopeprof__state *g) {
    return g->wr.polled && g->buf.queued >= SCOPEPROF__BATCH * SCOPEPROF__CHUNK_BYTES;
}

/* Whether a drain that wrote a batch writes another: with `all` (the timed
 * flush) while any chunk is queued; else while a whole batch is, or a drain
 * is still due (a small budget's eighth is less than a batch). A thread that
 * fills chunks about as fast as they are written leaves the rest to the
 * next look, rather than have the drain follow it one chunk a write
 * (write_cost flat: 229 writes of 4 chunks and 44 of 1, where they were
 * 214 of 1, 228 of 2 and 63 of 4; session 17). Chunk lock held. */
static inline int scopeprof__drain_goes_on(const scopeprof__state *g, int all) {
    if (all) return g->buf.queued != 0;
    return g->buf.queued >= SCOPEPROF__BATCH * SCOPEPROF__CHUNK_BYTES || scopeprof__drain_due(g);
}

/* Whether the thread that needs a chunk must write first: no spare chunk,
 * and a new one would pass the budget, or, with a running
 * writer that is behind, the budget plus a quarter (the writer's slack).
 * Chunk lock held. */
static inline int scopeprof__must_write_here(const scopeprof__state *g) {
    if (g->buf.spare || !g->buf.full_head) return 0;
    size_t room = g->wr.state == SCOPEPROF__WRITER_RUNNING ? g->cfg.budget + g->cfg.budget / 4 : g->cfg.budget;
    return g->buf.bytes + SCOPEPROF__CHUNK_BYTES > room;
}

/* Slow path of emit: the thread's chunk is full (or has one slot left and a
 * long record comes). The full chunk is queued for the background writer and
 * an empty one taken, under the chunk lock only: no write, no wait for one.
 * Signals are held meanwhile, as under the registry lock (a handler that
 * records must never find its own thread holding the chunk lock). Only
 * without a writer (SCOPEPROF_WRITER=0, a forked child) does this thread
 * write the whole queue past the budget; behind a running writer that is a
 * quarter of the budget late, it writes one chunk per chunk it takes: a
 * stall of one chunk's write, memory bounded, nothing dropped, and counted
 * (said at exit). */
SCOPEPROF__API scopeprof__slot *scopeprof__chunk_next(scopeprof__thread *t) {
    scopeprof__state *g = scopeprof__state_get();
    uint64_t sigs = scopeprof__sigs_hold();
    pthread_mutex_lock(&g->buf.lock);
    /* A thread whose key destructor already ran (scopeprof__thread_exit took
     * its chunk) can still record: a later destructor may call into another
     * module, whose copy of the thread pointer is still set. It gets a chunk
     * again, and the destructor is armed to run once more and queue it. */
    int revived = t->chunk == NULL;
    if (__atomic_load_n(&g->life.oom, __ATOMIC_ACQUIRE) && revived) {
        /* Recording stopped: round and round the slots nobody reads. */
        t->lim = g->buf.off_slots + sizeof g->buf.off_slots / sizeof *g->buf.off_slots;
        __atomic_store_n(&t->cur, &g->buf.off_slots[0], __ATOMIC_RELEASE);
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__sigs_release(sigs);
        return g->buf.off_slots;
    }
    if (g->life.finalized && !revived) {
        /* After the exit summary: keep the program running, drop events. */
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__sigs_release(sigs);
        return t->chunk->ev;
    }
    if (!revived) scopeprof__queue(g, t, t->chunk, (uint32_t)(t->cur - t->chunk->ev));
    /* Until the switch below the thread has no current chunk: a flusher that
     * runs while this thread writes must not take the queued (perhaps
     * already written and recycled) chunk for a partial one. */
    t->chunk = NULL;
    scopeprof__chunk *c = NULL;
    for (int attempt = 0; attempt < 2 && !c; attempt++) {
        /* The second attempt: malloc failed; write what is queued, then
         * reuse its memory. */
        if (attempt == 1 || scopeprof__must_write_here(g)) {
            int behind = attempt == 0 && g->wr.state == SCOPEPROF__WRITER_RUNNING;
            pthread_mutex_unlock(&g->buf.lock); /* the lock order (state.h): `lock` first */
            scopeprof__lock(g);
            /* Inside an open scope, GPU work is never waited for: chunks
             * whose GPU scopes still run stay queued. */
            int may_wait = attempt == 1 || t->depth == 0, wrote = 0;
            if (g->life.finalized) {
            } else if (behind) {
                wrote = (int)scopeprof__write_some(g, may_wait, 1);
            } else {
                scopeprof__write_queued(g, may_wait);
            }
            scopeprof__unlock(g);
            pthread_mutex_lock(&g->buf.lock);
            g->buf.self_writes += (uint64_t)wrote;
        }
        c = scopeprof__chunk_alloc(g);
    }
    if (!c) {
        /* its chunk is queued: written at exit */
        t->lim = g->buf.off_slots + sizeof g->buf.off_slots / sizeof *g->buf.off_slots;
        __atomic_store_n(&t->cur, &g->buf.off_slots[0], __ATOMIC_RELEASE);
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__sigs_release(sigs);
        scopeprof__oom(g);
        return g->buf.off_slots;
    }
    /* Switch chunk and cursor under the chunk lock: a flusher (which takes
     * it to read them) then sees either the old chunk with a cursor in it,
     * or the new one with a cursor at its start, never a cursor that belongs
     * to another chunk. */
    t->chunk = c;
    t->lim = c->ev + SCOPEPROF_EVENTS_PER_CHUNK;
    __atomic_store_n(&t->cur, &c->ev[0], __ATOMIC_RELEASE);
    int wake = scopeprof__writer_wake_due(g);
    pthread_mutex_unlock(&g->buf.lock);
    /* Before the signals come back: the condition's signal takes its own
     * internal lock, and a handler that recorded a chunk's worth and woke
     * the writer in turn would wait for it on this very thread. */
    if (wake) pthread_cond_signal(&g->wr.wake);
    scopeprof__sigs_release(sigs);
    if (revived) pthread_setspecific(g->key, t);
    return c->ev;
}

/* The 32-byte form of an event (see emit): two slots, never split between
 * chunks, published together. */
SCOPEPROF__API void scopeprof__emit_long(scopeprof__thread *t, uint64_t start, uint64_t end,
                                         uint32_t site, uint32_t depth) {
    scopeprof__slot *e = t->cur;
    if (t->lim - e < 2) e = scopeprof__chunk_next(t);
    e[0].start = start;
    e[0].dur = SCOPEPROF_REC_LONG_MARK;
    e[0].key = depth;
    e[1].start = end;
    e[1].dur = site;
    e[1].key = 0;
    __atomic_store_n(&t->cur, e + 2, __ATOMIC_RELEASE);
}

/* A scope with input shapes (PROFILE_SCOPE_SHAPE): its 32-byte record, whose
 * last field counts the units that follow, then the count m and the m words
 * as the macro built them, zeros to the end of the last unit (format.h,
 * "Input shapes"). Never split between chunks: inputs that would make the
 * record longer than a chunk (or than SCOPEPROF_SHAPE_MAX_WORDS) are left
 * out, whole. A word is a slot's `start`, or its `dur` and `key` as the low
 * and high halves: the file's little-endian word either way, once the
 * writer has turned each field around on a big-endian machine. */
SCOPEPROF__API void scopeprof__emit_shaped(scopeprof__thread *t, uint64_t start, uint64_t end, uint32_t site,
                                           uint32_t depth, const scopeprof__ll *w, uint32_t m) {
    enum { MOST = (SCOPEPROF_SHAPE_MAX_WORDS + 1) / 2 }; /* units */
    const uint32_t cap = SCOPEPROF_EVENTS_PER_CHUNK - 2 < MOST ? SCOPEPROF_EVENTS_PER_CHUNK - 2 : MOST;
    const uint32_t room = cap ? 2 * cap - 1 : 0; /* words after the count */
    /* The whole inputs that fit, up to the first count that does not parse
     * (a list made by hand: a reader must never find words that do not). */
    uint32_t keep = 0;
    while (keep < m && w[keep] >= 0 && (uint64_t)w[keep] < m - keep && (uint64_t)w[keep] < room - keep)
        keep += 1 + (uint32_t)w[keep];
    m = keep;
    uint32_t units = m ? (m + 2) / 2 : 0;
    scopeprof__slot *e = t->cur;
    if ((uint32_t)(t->lim - e) < 2 + units) e = scopeprof__chunk_next(t);
    e[0].start = start;
    e[0].dur = SCOPEPROF_REC_LONG_MARK;
    e[0].key = depth;
    e[1].start = end;
    e[1].dur = site;
    e[1].key = units;
    if (units) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* A slot's memory is two little-endian words here: copied as words. */
        scopeprof__word *d = (scopeprof__word *)(void *)(e + 2);
        d[0] = m;
        for (uint32_t j = 0; j < m; j++) d[j + 1] = (uint64_t)w[j];
        if (!(m & 1)) d[m + 1] = 0; /* the last unit's second half */
#else
        scopeprof__slot *u = e + 2;
        for (uint32_t j = 0; j < 2 * units; j++) {
            uint64_t v = j == 0 ? m : j <= m ? (uint64_t)w[j - 1] : 0;
            if (j & 1) {
                u[j / 2].dur = (uint32_t)v;
                u[j / 2].key = (uint32_t)(v >> 32);
            } else {
                u[j / 2].start = v;
            }
        }
#endif
    }
    __atomic_store_n(&t->cur, e + 2 + units, __ATOMIC_RELEASE);
}

SCOPEPROF__API void scopeprof__range_begin(scopeprof_site *s) {
    uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
    if (id == 0) id = scopeprof__site_register(s);
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    if (t->nranges == t->rcap) {
        uint32_t cap = t->rcap ? t->rcap * 2 : 16;
        scopeprof__range *r = (scopeprof__range *)realloc(t->ranges, cap * sizeof *r);
        if (!r) {
            scopeprof__warn("scopeprof: out of memory for PROFILE_BEGIN at %s:%u; range not "
                            "recorded", s->file, s->line);
            return;
        }
        t->ranges = r;
        t->rcap = cap;
    }
    scopeprof__range *r = &t->ranges[t->nranges++];
    r->site = id;
    r->depth = t->depth;
    scopeprof__depth_set(t, r->depth + 1);
    r->start = scopeprof__ticks();
}

/* Close the thread's innermost open range at time `end`. */
static inline void scopeprof__range_pop(scopeprof__thread *t, uint64_t end) {
    scopeprof__range r = t->ranges[--t->nranges];
    /* Scopes opened after the BEGIN and still open keep their own depth;
     * only a properly nested END restores the depth. */
    if (t->depth == r.depth + 1) scopeprof__depth_set(t, r.depth);
    scopeprof__emit(t, r.start, end, r.site, r.depth);
}

SCOPEPROF__API void scopeprof__range_end(scopeprof_site *s) {
    /* The thread first: an END may be its module's first call (a library's,
     * for a range the executable began), and the module learns its clock
     * choice there; read before, the end was in ns against ticks. */
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    uint64_t end = scopeprof__ticks();
    if (t->nranges == 0) {
        if (!t->warned_end) {
            t->warned_end = 1;
            scopeprof__warn("scopeprof: PROFILE_END at %s:%u (%s) has no matching PROFILE_BEGIN "
                            "on this thread; ignored", s->file, s->line, s->func);
        }
        return;
    }
    /* A scope opened inside the range is still open: the range's level stays
     * counted (scopeprof__range_pop), later found as a scope left, but no
     * scope is lost (the END chunk's count leaves it out). */
    if (t->depth > t->ranges[t->nranges - 1].depth + 1)
        __atomic_fetch_add(&scopeprof__g->life.stranded, 1, __ATOMIC_RELAXED);
    scopeprof__range_pop(t, end);
}

SCOPEPROF__API void scopeprof__thread_name(const char *name) {
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    t->explicit_name = 1;
    scopeprof__unlock(g);
}

#ifdef __cplusplus
}
#endif
#endif /* buffers.h */
