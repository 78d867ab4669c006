/* read.c -- streaming reader of scopeprof trace files. See read.h. */
#define SCOPEPROF_AGGREGATION /* for scopeprof_crc32 and the format constants */
#include "read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clocks.h"
#include "scopeprof.h"

/* ---- A small uint32 -> uint32 map (open addressing) ---------------------- */
typedef struct u32map {
    uint32_t *keys, *vals; /* vals[i] == 0: empty, else value + 1 */
    uint32_t cap, n;
} u32map;

static uint32_t map_slot(const u32map *m, uint32_t key) {
    uint32_t j = (key * 2654435761u) & (m->cap - 1);
    while (m->vals[j] && m->keys[j] != key) j = (j + 1) & (m->cap - 1);
    return j;
}

static int map_get(const u32map *m, uint32_t key, uint32_t *val) {
    if (!m->cap) return 0;
    uint32_t j = map_slot(m, key);
    if (!m->vals[j]) return 0;
    *val = m->vals[j] - 1;
    return 1;
}

static int map_put(u32map *m, uint32_t key, uint32_t val) {
    if ((m->n + 1) * 2 > m->cap) {
        u32map g = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};
        g.keys = malloc(g.cap * sizeof *g.keys);
        g.vals = calloc(g.cap, sizeof *g.vals);
        if (!g.keys || !g.vals) {
            free(g.keys);
            free(g.vals);
            return -1;
        }
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->vals[i]) {
                uint32_t j = map_slot(&g, m->keys[i]);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
                g.n++;
            }
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    uint32_t j = map_slot(m, key);
    if (!m->vals[j]) m->n++;
    m->keys[j] = key;
    m->vals[j] = val + 1;
    return 0;
}

static void map_free(u32map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- Input shapes (format 5), interned ------------------------------------ */
/* One distinct shape: its words (the key) and its text, in one block. The
 * file holds at least 48 bytes for each, so the table is bounded by its
 * size. */
typedef struct shape_ent {
    uint64_t hash;
    uint32_t m;
    const char *text;
    uint64_t w[];
} shape_ent;

typedef struct shape_set {
    shape_ent **v; /* open addressing; NULL: empty */
    uint32_t cap, n;
} shape_set;

static uint64_t shape_hash(const uint64_t *w, uint32_t m) {
    uint64_t h = 1469598103934665603ull ^ m; /* FNV-1a over the words */
    for (uint32_t i = 0; i < m; i++) h = (h ^ w[i]) * 1099511628211ull;
    return h;
}

/* The text of the m (checked) words, made at their first sight; NULL when
 * out of memory. */
static const char *shape_intern(shape_set *s, const uint64_t *w, uint32_t m) {
    uint64_t h = shape_hash(w, m);
    if ((s->n + 1) * 2 > s->cap) {
        uint32_t c = s->cap ? s->cap * 2 : 64;
        shape_ent **v = calloc(c, sizeof *v);
        if (!v) return NULL;
        for (uint32_t i = 0; i < s->cap; i++)
            if (s->v[i]) {
                uint32_t j = (uint32_t)s->v[i]->hash & (c - 1);
                while (v[j]) j = (j + 1) & (c - 1);
                v[j] = s->v[i];
            }
        free(s->v);
        s->v = v;
        s->cap = c;
    }
    uint32_t j = (uint32_t)h & (s->cap - 1);
    for (shape_ent *e; (e = s->v[j]) != NULL; j = (j + 1) & (s->cap - 1))
        if (e->hash == h && e->m == m && memcmp(e->w, w, m * sizeof *w) == 0) return e->text;
    size_t len = scopeprof_shape_format(NULL, 0, w, m);
    shape_ent *e = malloc(sizeof *e + m * sizeof *w + len + 1);
    if (!e) return NULL;
    e->hash = h;
    e->m = m;
    memcpy(e->w, w, m * sizeof *w);
    char *text = (char *)(e->w + m);
    scopeprof_shape_format(text, len + 1, w, m);
    e->text = text;
    s->v[j] = e;
    s->n++;
    return text;
}

static void shape_set_free(shape_set *s) {
    for (uint32_t i = 0; i < s->cap; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- Reader state --------------------------------------------------------- */
typedef struct gpu_queue { /* the GPU records of a thread's latest GPU chunk */
    scopeprof_gpu_record *rec;
    uint32_t n, pos, cap;
} gpu_queue;

struct sp_reader {
    const sp_reader_vtbl *vtbl; /* NULL: first, as in every reader (read.h) */
    /* Input: a file descriptor through buf, or a memory block (buf = data). */
    int fd;
    const unsigned char *mem;
    unsigned char *buf;
    size_t cap, lo, hi; /* valid bytes are buf[lo, hi) */
    uint64_t off;       /* file offset of buf[lo] */
    int eof;

    sp_header hdr;
    sp_site *sites;
    uint32_t nsites, sites_cap;
    u32map site_ids; /* id -> index in sites */
    sp_thread *threads;
    gpu_queue *gpu;  /* per slot */
    uint32_t nthreads, threads_cap;
    u32map thread_ids; /* file thread index -> slot */
    sp_event *ev;
    sp_gpu_info *ev_gpu; /* parallel to ev */
    uint32_t ev_cap;
    sp_step *steps;
    uint32_t nsteps, steps_cap;
    char *devices[SP_MAX_DEVICES]; /* DEVICE names, by GPU index */
    sp_memory memrec[SP_MAX_DEVICES];
    uint32_t nmem;
    const sp_clock *clk; /* the map to one clock for files of several hosts, or NULL */
    shape_set shapes;    /* the input shapes of the file (sp_event.shape) */
};

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Make n bytes at the read position contiguous; returns how many are there
 * (fewer than n only at end of input). The buffer grows only while it is
 * full of real data, so it never exceeds twice what the input held. */
static size_t want(sp_reader *r, size_t n) {
    if (r->mem || r->hi - r->lo >= n) return r->hi - r->lo < n ? r->hi - r->lo : n;
    if (r->lo) {
        memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
        r->hi -= r->lo;
        r->lo = 0;
    }
    while (r->hi < n && !r->eof) {
        if (r->hi == r->cap) {
            size_t c = r->cap * 2 < n ? r->cap * 2 : n;
            unsigned char *b = realloc(r->buf, c);
            if (!b) break;
            r->buf = b;
            r->cap = c;
        }
        ssize_t got = read(r->fd, r->buf + r->hi, r->cap - r->hi);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            r->eof = 1;
            break;
        }
        r->hi += (size_t)got;
    }
    return r->hi < n ? r->hi : n;
}

static void consume(sp_reader *r, size_t n) {
    r->lo += n;
    r->off += n;
}

static int fail(sp_result *res, int status, uint64_t off, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->msg, sizeof res->msg, fmt, ap);
    va_end(ap);
    res->status = status;
    res->offset = off;
    return status;
}

static char *dupn(const unsigned char *p, uint32_t n) {
    char *s = malloc((size_t)n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* The slot of file thread `index`, created on first sight. */
static int thread_slot(sp_reader *r, uint32_t index, uint32_t *slot) {
    if (map_get(&r->thread_ids, index, slot)) return 0;
    if (r->nthreads >= SP_MAX_THREADS) return -1;
    if (r->nthreads == r->threads_cap) {
        uint32_t c = r->threads_cap ? r->threads_cap * 2 : 8;
        sp_thread *t = realloc(r->threads, c * sizeof *t);
        if (!t) return -1;
        r->threads = t;
        gpu_queue *g = realloc(r->gpu, c * sizeof *g);
        if (!g) return -1;
        r->gpu = g;
        r->threads_cap = c;
    }
    sp_thread *t = &r->threads[r->nthreads];
    memset(t, 0, sizeof *t);
    memset(&r->gpu[r->nthreads], 0, sizeof *r->gpu);
    t->index = index;
    t->slot = r->nthreads;
    t->name = dupn((const unsigned char *)"", 0);
    if (!t->name || map_put(&r->thread_ids, index, r->nthreads) != 0) {
        free(t->name);
        return -1;
    }
    *slot = r->nthreads++;
    return 0;
}

/* ---- Chunks ---------------------------------------------------------------- */
#define CORRUPT(...) fail(res, SP_CORRUPT, off, __VA_ARGS__)
#define NOMEM() fail(res, SP_STOPPED, off, "out of memory")

static int read_sites(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                      sp_result *res) {
    if (len < 4) return CORRUPT("SITES chunk shorter than its count");
    uint32_t count = get32(p), pos = 4;
    for (uint32_t i = 0; i < count; i++) {
        if (len - pos < 20) return CORRUPT("SITES chunk: site %u runs past the chunk", i);
        const unsigned char *s = p + pos;
        uint32_t id = get32(s), line = get32(s + 4);
        uint64_t l[3] = {get32(s + 8), get32(s + 12), get32(s + 16)};
        if (l[0] + l[1] + l[2] > len - pos - 20)
            return CORRUPT("SITES chunk: site %u: string lengths run past the chunk", i);
        if (id == 0) return CORRUPT("SITES chunk: site %u has id 0 (reserved)", i);
        const unsigned char *str = s + 20;
        pos += 20 + (uint32_t)(l[0] + l[1] + l[2]);
        uint32_t have;
        if (map_get(&r->site_ids, id, &have)) { /* defined already: the first wins */
            const sp_site *o = &r->sites[have];
            const char *now[3] = {(const char *)str, (const char *)str + l[0], (const char *)str + l[0] + l[1]};
            const char *was[3] = {o->name, o->file, o->func};
            int same = o->line == line;
            for (int k = 0; k < 3 && same; k++) same = strlen(was[k]) == l[k] && memcmp(was[k], now[k], l[k]) == 0;
            if (!same && res->sites_redefined++ == 0) res->redefined_id = id, res->redefined_offset = off;
            continue;
        }
        if (r->nsites >= SP_MAX_SITES) return CORRUPT("more than %u sites", SP_MAX_SITES);
        if (r->nsites == r->sites_cap) {
            uint32_t c = r->sites_cap ? r->sites_cap * 2 : 64;
            sp_site *v = realloc(r->sites, c * sizeof *v);
            if (!v) return NOMEM();
            r->sites = v;
            r->sites_cap = c;
        }
        /* The three strings in one block, each NUL-terminated. */
        char *b = malloc(l[0] + l[1] + l[2] + 3);
        if (!b) return NOMEM();
        sp_site *st = &r->sites[r->nsites];
        char *q = b;
        const char **dst[3] = {&st->name, &st->file, &st->func};
        for (int k = 0; k < 3; k++) {
            memcpy(q, str, l[k]);
            q[l[k]] = 0;
            *dst[k] = q;
            q += l[k] + 1;
            str += l[k];
        }
        st->id = id;
        st->line = line;
        if (map_put(&r->site_ids, id, r->nsites) != 0) {
            free(b);
            return NOMEM();
        }
        r->nsites++;
    }
    return 0;
}

static int read_thread(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                       sp_result *res) {
    if (len < 16) return CORRUPT("THREAD chunk shorter than 16 bytes");
    uint32_t nl = get32(p + 4), slot;
    if (nl > len - 16) return CORRUPT("THREAD chunk: name length %u runs past the chunk", nl);
    if (thread_slot(r, get32(p), &slot) != 0) return NOMEM();
    char *name = dupn(p + 16, nl);
    if (!name) return NOMEM();
    sp_thread *t = &r->threads[slot];
    free(t->name);
    t->name = name;
    t->tid = get64(p + 8);
    return 0;
}

static int read_gpu(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                    sp_result *res) {
    if (len < 8) return CORRUPT("GPU chunk shorter than 8 bytes");
    uint32_t n = get32(p + 4), slot;
    if (n > (len - 8) / 48) return CORRUPT("GPU chunk: %u records run past the chunk", n);
    if (thread_slot(r, get32(p), &slot) != 0) return NOMEM();
    gpu_queue *q = &r->gpu[slot];
    res->gpu_unpaired += q->n - q->pos; /* an earlier GPU chunk's, never paired */
    if (n > q->cap) {
        scopeprof_gpu_record *v = realloc(q->rec, n * sizeof *v);
        if (!v) return NOMEM();
        q->rec = v;
        q->cap = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *s = p + 8 + (size_t)i * 48;
        scopeprof_gpu_record *g = &q->rec[i];
        g->start_ns = get64(s);
        g->end_ns = get64(s + 8);
        g->launch_ns = get64(s + 16);
        g->stream = get64(s + 24);
        g->site = get32(s + 32);
        g->device = get32(s + 36);
        g->status = get32(s + 40);
    }
    q->n = n;
    q->pos = 0;
    return 0;
}

static int read_events(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                       const sp_callbacks *cb, sp_result *res) {
    if (len < 8) return CORRUPT("EVENTS chunk shorter than 8 bytes");
    /* Format 1: 24 bytes an event. Format 2: records of 16 or 32 bytes.
     * Format 4: the same records in ticks, counted in 16-byte units. Format
     * 5: a long record may be followed by units of input shapes (before 5
     * that field is reserved: not read). */
    int v1 = r->hdr.major == 1, v4 = r->hdr.major >= 4, v5 = r->hdr.major >= 5;
    uint32_t n = get32(p + 4), slot;
    if (n > (len - 8) / (v1 ? 24 : 16))
        return CORRUPT("EVENTS chunk: %u %s run past the chunk", n, v4 ? "units" : "events");
    if (v4 && !r->hdr.has_ticks) {
        if (res->problems) { /* the TICKS chunk was most likely in the damage before */
            char first[sizeof res->msg];
            uint64_t at = res->offset;
            memcpy(first, res->msg, sizeof first);
            return CORRUPT("EVENTS chunk with no TICKS chunk before it to read its times, which was "
                           "probably in the damage at offset %llu (%s)", (unsigned long long)at, first);
        }
        return CORRUPT("EVENTS chunk before the TICKS chunk: its times cannot be read");
    }
    size_t end = v4 ? 8 + (size_t)n * 16 : len; /* format 4: where the records end */
    if (thread_slot(r, get32(p), &slot) != 0) return NOMEM();
    if (n > r->ev_cap) {
        sp_event *v = realloc(r->ev, n * sizeof *v);
        if (!v) return NOMEM();
        r->ev = v;
        sp_gpu_info *g = realloc(r->ev_gpu, n * sizeof *g);
        if (!g) return NOMEM();
        r->ev_gpu = g;
        r->ev_cap = n;
    }
    gpu_queue *q = &r->gpu[slot];
    size_t at = 8; /* offset of the next record in the payload */
    uint32_t i = 0;
    for (; v4 ? at < end : i < n; i++) {
        sp_event *e = &r->ev[i];
        scopeprof_event rec;
        e->shape = NULL;
        if (v1) {
            const unsigned char *s = p + at;
            rec.start = get64(s);
            rec.end = get64(s + 8);
            rec.site = get32(s + 16);
            rec.depth = get32(s + 20);
            at += 24;
        } else if (v5) {
            const unsigned char *sh;
            uint32_t units;
            size_t used = scopeprof_rec_decode_shaped(p + at, end - at, &rec, &sh, &units);
            if (used == 0 && scopeprof_rec_decode(p + at, end - at, &rec) != 0)
                return CORRUPT("EVENTS chunk: event %u: its input shapes (%u units) run past the chunk", i,
                               get32(p + at + 28));
            if (used == 0) return CORRUPT("EVENTS chunk: event %u runs past the chunk", i);
            at += used;
            if (units) { /* checked before any count in them is trusted */
                uint64_t w[SCOPEPROF_SHAPE_MAX_WORDS];
                int m = scopeprof_shape_words(sh, units, w);
                if (m < 0) return CORRUPT("EVENTS chunk: event %u has malformed input shapes", i);
                if (!(e->shape = shape_intern(&r->shapes, w, (uint32_t)m))) return NOMEM();
            }
        } else {
            size_t used = scopeprof_rec_decode(p + at, end - at, &rec);
            if (used == 0) return CORRUPT("EVENTS chunk: event %u runs past the chunk", i);
            at += used;
        }
        uint32_t d = rec.depth;
        /* A scope that ends before it starts (as the file holds it, in a
         * chunk whose CRC holds: the writer's clock went back, across
         * cores whose TSCs differ). Taken as 0 long, counted and said
         * (sp_warn_incomplete). */
        if (!(d & SCOPEPROF_DEPTH_MEM) && rec.end < rec.start && res->backwards++ == 0)
            res->backwards_offset = off;
        if (v4) { /* ticks; a MEM record's end is its byte count */
            e->t_start = rec.start;
            e->t_end = d & SCOPEPROF_DEPTH_MEM ? rec.start : rec.end < rec.start ? rec.start : rec.end;
            rec.start = scopeprof_ticks_ns(e->t_start, r->hdr.tick0, r->hdr.ns0, r->hdr.unit_ns);
            if (!(d & SCOPEPROF_DEPTH_MEM)) rec.end = scopeprof_ticks_ns(e->t_end, r->hdr.tick0, r->hdr.ns0, r->hdr.unit_ns);
        } else {
            e->t_start = rec.start;
            e->t_end = d & SCOPEPROF_DEPTH_MEM || rec.end < rec.start ? rec.start : rec.end;
        }
        e->start = rec.start;
        e->end = rec.end;
        e->site = rec.site;
        e->gpu_ns = -1;
        e->gpu_start = 0;
        e->bytes = 0;
        e->device = 0;
        memset(&r->ev_gpu[i], 0, sizeof r->ev_gpu[i]);
        if (d & SCOPEPROF_DEPTH_MEM) {
            e->kind = SP_MEM;
            e->depth = SCOPEPROF_MEM_DEPTH(d);
            e->device = SCOPEPROF_MEM_DEVICE(d);
            e->bytes = (int64_t)e->end;
            e->end = e->start;
        } else {
            e->kind = SP_SCOPE;
            e->depth = d & SCOPEPROF_DEPTH_MASK;
            if (e->end < e->start) e->end = e->start;
            /* A GPU scope owns the thread's next GPU record if it was
             * launched at the scope's start (as the writer pairs them). */
            if ((d & SCOPEPROF_DEPTH_GPU) && q->pos < q->n && q->rec[q->pos].launch_ns == e->start) {
                const scopeprof_gpu_record *g = &q->rec[q->pos++];
                if (g->status == 0) {
                    r->ev_gpu[i].stream = g->stream;
                    r->ev_gpu[i].device = g->device;
                    r->ev_gpu[i].timed = 1;
                    e->gpu_start = g->start_ns;
                    e->gpu_ns = g->end_ns >= g->start_ns ? (int64_t)(g->end_ns - g->start_ns) : 0;
                    if (g->end_ns < g->start_ns && res->backwards++ == 0) res->backwards_offset = off;
                }
            }
        }
        /* The aggregation sums these in int64: values no program produces
         * (over 104 days, or 8 PiB) would only make the sums overflow. */
        if (e->end - e->start > SP_MAX_VALUE || e->t_end - e->t_start > SP_MAX_VALUE ||
            e->gpu_ns > (int64_t)SP_MAX_VALUE ||
            e->bytes > (int64_t)SP_MAX_VALUE || e->bytes < -(int64_t)SP_MAX_VALUE)
            return CORRUPT("EVENTS chunk: event %u has an absurd duration or size", i);
        if (e->depth > SP_MAX_DEPTH)
            return CORRUPT("EVENTS chunk: event %u has depth %u (limit %u)", i, e->depth,
                           SP_MAX_DEPTH);
        if (r->clk) { /* on the common clock, once paired with its GPU record */
            e->start = sp_clock_map(r->clk, e->start);
            e->end = e->kind == SP_MEM ? e->start : sp_clock_map(r->clk, e->end);
            if (e->gpu_ns >= 0) e->gpu_start = sp_clock_map(r->clk, e->gpu_start);
        }
    }
    /* A GPU chunk's records belong to this EVENTS chunk only: those left
     * over paired with no scope (docs/FORMAT.md, type 5). */
    res->gpu_unpaired += q->n - q->pos;
    q->n = q->pos = 0;
    res->events += i;
    if (v4) res->units += n;
    if (cb->events) {
        int rc = cb->events(cb->ctx, r, &r->threads[slot], r->ev, i);
        if (rc) return fail(res, SP_STOPPED, off, "stopped by the reader's client");
    }
    return 0;
}

static int read_device(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                       sp_result *res) {
    if (len < 8) return CORRUPT("DEVICE chunk shorter than 8 bytes");
    uint32_t dev = get32(p), nl = get32(p + 4);
    if (nl > len - 8) return CORRUPT("DEVICE chunk: name length %u runs past the chunk", nl);
    if (dev >= SP_MAX_DEVICES) return 0; /* no writer numbers GPUs this far */
    char *name = dupn(p + 8, nl > 255 ? 255 : nl);
    if (!name) return NOMEM();
    free(r->devices[dev]);
    r->devices[dev] = name;
    return 0;
}

static int read_steps(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                      sp_result *res) {
    if (len < 8) return CORRUPT("STEPS chunk shorter than 8 bytes");
    uint32_t n = get32(p);
    if (n > (len - 8) / 24) return CORRUPT("STEPS chunk: %u steps run past the chunk", n);
    if (r->nsteps + (uint64_t)n > r->steps_cap) { /* bounded by the file's size */
        uint64_t c = r->steps_cap ? r->steps_cap : 16;
        while (c < r->nsteps + (uint64_t)n) c *= 2;
        if (c > UINT32_MAX / sizeof(sp_step)) return NOMEM();
        sp_step *v = realloc(r->steps, (size_t)c * sizeof *v);
        if (!v) return NOMEM();
        r->steps = v;
        r->steps_cap = (uint32_t)c;
    }
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *s = p + 8 + (size_t)i * 24;
        sp_step *st = &r->steps[r->nsteps++];
        st->number = get64(s);
        st->start = get64(s + 8);
        st->end = get64(s + 16);
        if (st->end < st->start) {
            st->end = st->start;
            if (res->backwards++ == 0) res->backwards_offset = off;
        }
        st->start = sp_clock_map(r->clk, st->start);
        st->end = sp_clock_map(r->clk, st->end);
    }
    return 0;
}

static int read_memory(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                       sp_result *res) {
    if (len < 4) return CORRUPT("MEMORY chunk shorter than 4 bytes");
    uint32_t n = get32(p);
    if (n > (len - 4) / 32) return CORRUPT("MEMORY chunk: %u records run past the chunk", n);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *s = p + 4 + (size_t)i * 32;
        sp_memory m = {get32(s), (int64_t)get64(s + 8), (int64_t)get64(s + 16), get64(s + 24)};
        if (m.device >= SP_MAX_DEVICES) continue;
        uint32_t k = 0;
        while (k < r->nmem && r->memrec[k].device != m.device) k++;
        if (k == r->nmem) r->nmem++;
        r->memrec[k] = m; /* a later record (a later cycle, the final one) wins */
    }
    return 0;
}

static int read_overhead(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                         sp_result *res) {
    if (len < 8) return CORRUPT("OVERHEAD chunk shorter than 8 bytes");
    /* No scope measured (a 4.0 writer's chunk of zeros): the recording had
     * compensation off. (In 3.x the count was informational.) */
    if (r->hdr.major >= 4 && len >= 12 && get32(p + 8) == 0) {
        r->hdr.overhead_off = 1;
        return 0;
    }
    r->hdr.has_overhead = 1;
    r->hdr.overhead_inside_ps = get32(p);
    r->hdr.overhead_outside_ps = get32(p + 4);
    /* The short class since 5.1 (the 4th field was reserved, 0, before). */
    if (len >= 24 && (r->hdr.major > 5 || (r->hdr.major == 5 && r->hdr.minor >= 1))) {
        r->hdr.overhead_short_below = get32(p + 12);
        r->hdr.overhead_short_inside_ps = get32(p + 16);
        r->hdr.overhead_short_outside_ps = get32(p + 20);
    }
    return 0;
}

/* TICKS chunk (format 4): the rate of the events' clock. A rate no clock
 * has (not a positive finite number, or over a second a tick) would make
 * every time meaningless: refused. */
static int read_ticks(sp_reader *r, const unsigned char *p, uint32_t len, uint64_t off,
                      sp_result *res) {
    if (len < SCOPEPROF_TICKS_SIZE) return CORRUPT("TICKS chunk shorter than %u bytes", SCOPEPROF_TICKS_SIZE);
    uint64_t bits = get64(p + 16);
    double f;
    memcpy(&f, &bits, sizeof f);
    if (!(f > 0 && f <= 1e9)) return CORRUPT("TICKS chunk: %g ns per tick is no clock's rate", f);
    r->hdr.has_ticks = 1;
    r->hdr.tick0 = get64(p);
    r->hdr.ns0 = get64(p + 8);
    r->hdr.unit_ns = f;
    return 0;
}

static int read_header(sp_reader *r, const sp_callbacks *cb, sp_result *res) {
    uint64_t off = 0;
    size_t got = want(r, SCOPEPROF_FILE_HEADER_SIZE);
    const unsigned char *p = (r->mem ? r->mem : r->buf) + r->lo;
    if (got == 0) return CORRUPT("empty file, not a scopeprof trace");
    if (memcmp(p, SCOPEPROF_FILE_MAGIC, got < 8 ? got : 8) != 0)
        return CORRUPT("not a scopeprof trace (bad file magic)");
    if (got < SCOPEPROF_FILE_HEADER_SIZE) {
        res->good_end = 0;
        return fail(res, SP_TRUNCATED, got, "file header cut short");
    }
    sp_header *h = &r->hdr;
    uint32_t v = get32(p + 8);
    h->major = v & 0xFFFF;
    h->minor = v >> 16;
    h->header_len = get32(p + 12);
    h->pid = get64(p + 16);
    h->start_ns = get64(p + 24);
    h->realtime_minus_mono = (int64_t)get64(p + 32);
    h->unit_ns = 1.0; /* ns, until a TICKS chunk says otherwise */
    h->rank = get32(p + 40);
    uint32_t plen = get32(p + 44);
    if (h->major < 1 || h->major > SCOPEPROF_FORMAT_MAJOR)
        return fail(res, SP_CORRUPT, 8,
                    "unsupported format version %u.%u (this reader reads 1.x to %u.x)", h->major,
                    h->minor, SCOPEPROF_FORMAT_MAJOR);
    if (plen > 65536 || h->header_len > SCOPEPROF_FILE_HEADER_SIZE + 65536 ||
        h->header_len < SCOPEPROF_FILE_HEADER_SIZE + plen)
        return fail(res, SP_CORRUPT, 12, "bad header length %u (program name %u bytes)",
                    h->header_len, plen);
    /* Format 3 fixes the length (48 + name + CRC): a damaged length or name
     * length is told from a file cut short. */
    if (h->major >= SCOPEPROF_FILE_CRC_SINCE && h->header_len != SCOPEPROF_FILE_HEADER_SIZE + plen + 4)
        return fail(res, SP_CORRUPT, 12, "bad header length %u (program name %u bytes, header CRC 4)",
                    h->header_len, plen);
    got = want(r, h->header_len);
    p = (r->mem ? r->mem : r->buf) + r->lo;
    if (got < h->header_len) return fail(res, SP_TRUNCATED, got, "file header cut short");
    if (h->major >= SCOPEPROF_FILE_CRC_SINCE) { /* the header ends with its CRC */
        uint32_t c = scopeprof_crc32(0, p, h->header_len - 4), stored = get32(p + h->header_len - 4);
#ifdef SP_FUZZ_IGNORE_CRC
        stored = c;
#endif
        if (c != stored)
            return CORRUPT("bad file header CRC (stored 0x%08x, computed 0x%08x): the header "
                           "(version, pid, start time, rank or program name) is damaged",
                           stored, c);
    }
    size_t keep = plen < sizeof h->prog - 1 ? plen : sizeof h->prog - 1;
    memcpy(h->prog, p + SCOPEPROF_FILE_HEADER_SIZE, keep);
    h->prog[keep] = 0;
    if ((r->clk = sp_clock_find(h->pid, h->start_ns)) != NULL) { /* clocks.h */
        h->start_ns = sp_clock_map(r->clk, h->start_ns);
        snprintf(h->host, sizeof h->host, "%s", r->clk->host);
        if (h->rank == 0xFFFFFFFFu) h->rank = r->clk->rank;
        h->aligned = 1;
    }
    consume(r, h->header_len);
    res->good_end = r->off;
    if (cb->header && cb->header(cb->ctx, r, h)) return fail(res, SP_STOPPED, 0, "stopped");
    return 0;
}

/* The CRC a chunk whose header is h and payload p should carry: of the
 * payload alone before format 3, of the payload and the header's first 12
 * bytes since (docs/FORMAT.md). */
static uint32_t chunk_crc(const sp_reader *r, const unsigned char *h, const unsigned char *p,
                          uint32_t len) {
    uint32_t c = scopeprof_crc32(0, p, len);
    return r->hdr.major >= SCOPEPROF_FILE_CRC_SINCE ? scopeprof_chunk_crc(c, h) : c;
}

/* A chunk type's name in FORMAT.md, for messages ("type N" for newer ones). */
static const char *chunk_name(uint32_t type, char *buf, size_t n) {
    static const char *const names[] = {NULL, "SITES", "THREAD", "EVENTS", "END", "GPU", "DEVICE",
                                        "STEPS", "MEMORY", "OVERHEAD", "CLOCK", "TICKS"};
    if (type < sizeof names / sizeof *names && names[type]) return names[type];
    snprintf(buf, n, "type %u", type);
    return buf;
}

/* Check the chunk at the read position, leaving header and payload
 * contiguous. 0 if it is whole and valid; else SP_TRUNCATED (the input ends
 * inside it) or SP_CORRUPT, with why[] and *at (where the problem is). */
static int check_chunk(sp_reader *r, char *why, size_t nwhy, uint64_t *at) {
    uint64_t off = r->off;
    *at = off;
    size_t got = want(r, SCOPEPROF_CHUNK_HEADER_SIZE);
    const unsigned char *h = (r->mem ? r->mem : r->buf) + r->lo;
    if (got < SCOPEPROF_CHUNK_HEADER_SIZE) {
        *at = off + got;
        snprintf(why, nwhy, "chunk header cut short");
        return SP_TRUNCATED;
    }
    uint32_t magic = get32(h), type = get32(h + 4), len = get32(h + 8), crc = get32(h + 12);
    if (magic != SCOPEPROF_CHUNK_MAGIC) {
        snprintf(why, nwhy, "bad chunk magic 0x%08x", magic);
        return SP_CORRUPT;
    }
    if (len > SP_MAX_CHUNK) {
        snprintf(why, nwhy, "absurd chunk length %u", len);
        return SP_CORRUPT;
    }
    got = want(r, (size_t)SCOPEPROF_CHUNK_HEADER_SIZE + len);
    h = (r->mem ? r->mem : r->buf) + r->lo;
    if (got < (size_t)SCOPEPROF_CHUNK_HEADER_SIZE + len) {
        *at = off + got;
        char tb[16];
        snprintf(why, nwhy, "%s chunk cut short", chunk_name(type, tb, sizeof tb));
        return SP_TRUNCATED;
    }
    uint32_t c = chunk_crc(r, h, h + SCOPEPROF_CHUNK_HEADER_SIZE, len);
#ifdef SP_FUZZ_IGNORE_CRC
    c = crc; /* the fuzzer's mutations then reach the payload parsers */
#endif
    if (c != crc) {
        snprintf(why, nwhy, "bad chunk CRC (stored 0x%08x, computed 0x%08x)", crc, c);
        return SP_CORRUPT;
    }
    return 0;
}

/* After damage at the read position: move to the next place where a whole,
 * valid chunk starts (its CRC covers its length from format 3 on, so a
 * chunk found this way is trusted as much as one reached by walking).
 * Returns 0 when the input ends first. */
static int resync(sp_reader *r) {
    char why[160];
    uint64_t at;
    consume(r, 1);
    for (;;) {
        size_t got = want(r, SCOPEPROF_CHUNK_HEADER_SIZE);
        if (got < SCOPEPROF_CHUNK_HEADER_SIZE) return 0;
        const unsigned char *p = (r->mem ? r->mem : r->buf) + r->lo;
        /* The magic's first byte, in what is buffered. */
        const unsigned char *q = memchr(p, SCOPEPROF_CHUNK_MAGIC & 0xFF, r->hi - r->lo);
        if (!q) {
            consume(r, r->hi - r->lo);
            continue;
        }
        if (q != p) {
            consume(r, (size_t)(q - p));
            continue;
        }
        if (check_chunk(r, why, sizeof why, &at) == 0) return 1;
        consume(r, 1);
    }
}

/* A problem that does not stop the reading (damage skipped, an END count
 * that disagrees): the first one is what the result reports. */
static void note_problem(sp_result *res, int status, uint64_t at, const char *why) {
    if (res->problems++ == 0) {
        res->status = status;
        res->offset = at;
        snprintf(res->msg, sizeof res->msg, "%s", why);
    }
}

/* A problem that is said whatever came before it (an END count that
 * disagrees): the first one, or else added to the message of the first,
 * whose status it makes corrupt. */
static void note_also(sp_result *res, uint64_t at, const char *why) {
    if (res->status == SP_OK && res->problems == 0) {
        note_problem(res, SP_CORRUPT, at, why);
        return;
    }
    res->problems++;
    res->status = SP_CORRUPT;
    size_t l = strlen(res->msg);
    snprintf(res->msg + l, sizeof res->msg - l, "; %s", why);
}

static int read_all(sp_reader *r, const sp_callbacks *cb, sp_result *res) {
    int rc = read_header(r, cb, res);
    if (rc) return rc;
    for (;;) {
        uint64_t off = r->off, at;
        if (want(r, 1) == 0) break;
        char why[160];
        int st = check_chunk(r, why, sizeof why, &at);
        if (st) {
            /* Damage (a flipped bit in a length, a type, a payload): go on
             * from the next valid chunk, so one bad chunk loses only itself.
             * Nothing valid after it: the file ends there, as before. */
            note_problem(res, st, at, why);
            if (!resync(r)) break;
            res->skipped += r->off - off;
            res->resynced++;
            continue;
        }
        const unsigned char *h = (r->mem ? r->mem : r->buf) + r->lo;
        const unsigned char *p = h + SCOPEPROF_CHUNK_HEADER_SIZE;
        uint32_t type = get32(h + 4), len = get32(h + 8);
        switch (type) {
        case SCOPEPROF_CHUNK_SITES: rc = read_sites(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_THREAD: rc = read_thread(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_EVENTS: rc = read_events(r, p, len, off, cb, res); break;
        case SCOPEPROF_CHUNK_GPU: rc = read_gpu(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_DEVICE: rc = read_device(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_STEPS: rc = read_steps(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_MEMORY: rc = read_memory(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_OVERHEAD: rc = read_overhead(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_TICKS: rc = read_ticks(r, p, len, off, res); break;
        case SCOPEPROF_CHUNK_CLOCK: break; /* read before, by clocks.c, when times matter */
        case SCOPEPROF_CHUNK_END:
            res->saw_end = 1;
            if (len >= 16 && (r->hdr.major > 5 || (r->hdr.major == 5 && r->hdr.minor >= 2)))
                res->missing += get64(p + 8); /* reserved (0) before 5.2 */
            /* The writer's count of the events in the file: fewer here
             * means chunks were lost (damaged, or never written). */
            if (len >= 8 && r->hdr.major >= 4 && get64(p) != res->units) { /* format 4: units */
                snprintf(why, sizeof why, "the END chunk counts %llu record unit(s) of 16 bytes, %llu "
                         "were read", (unsigned long long)get64(p), (unsigned long long)res->units);
                note_also(res, off, why);
            } else if (len >= 8 && r->hdr.major < 4 && get64(p) != res->events) {
                snprintf(why, sizeof why, "the END chunk counts %llu event(s), %llu were read",
                         (unsigned long long)get64(p), (unsigned long long)res->events);
                note_also(res, off, why);
            }
            break;
        default: break; /* newer types: skipped */
        }
        if (rc) return rc;
        consume(r, SCOPEPROF_CHUNK_HEADER_SIZE + (size_t)len);
        res->good_end = r->off;
    }
    if (!res->problems) return 0;
    if (res->resynced) { /* damage in the middle: corruption, whatever its first look */
        res->status = SP_CORRUPT;
        size_t l = strlen(res->msg);
        snprintf(res->msg + l, sizeof res->msg - l,
                 "; %u damaged region(s), %llu byte(s) skipped, read on from the next valid chunk",
                 res->resynced, (unsigned long long)res->skipped);
    }
    return res->status;
}

static void reader_free(sp_reader *r) {
    for (uint32_t i = 0; i < r->nsites; i++) free((char *)r->sites[i].name);
    for (uint32_t i = 0; i < r->nthreads; i++) {
        free(r->threads[i].name);
        free(r->gpu[i].rec);
    }
    free(r->sites);
    free(r->threads);
    free(r->gpu);
    free(r->ev);
    free(r->ev_gpu);
    free(r->steps);
    for (uint32_t i = 0; i < SP_MAX_DEVICES; i++) free(r->devices[i]);
    map_free(&r->site_ids);
    map_free(&r->thread_ids);
    shape_set_free(&r->shapes);
    if (!r->mem) free(r->buf);
}

static int run(sp_reader *r, const sp_callbacks *cb, sp_result *res) {
    res->native = 1;
    int rc = read_all(r, cb, res);
    if (rc == 0) {
        res->status = SP_OK;
        res->offset = r->off;
    }
    for (uint32_t i = 0; i < r->nthreads; i++) res->gpu_unpaired += r->gpu[i].n - r->gpu[i].pos;
    if (cb->finish && cb->finish(cb->ctx, r) && res->status == SP_OK)
        fail(res, SP_STOPPED, r->off, "stopped by the reader's client");
    reader_free(r);
    return res->status;
}

int sp_read_mem(const void *data, size_t n, const sp_callbacks *cb, sp_result *res) {
    sp_reader r;
    memset(&r, 0, sizeof r);
    memset(res, 0, sizeof *res);
    r.fd = -1;
    r.mem = data ? data : (const unsigned char *)"";
    r.hi = n;
    r.eof = 1;
    return run(&r, cb, res);
}

int sp_read_fd(int fd, const void *head, size_t n, const sp_callbacks *cb, sp_result *res) {
    sp_reader r;
    memset(&r, 0, sizeof r);
    memset(res, 0, sizeof *res);
    r.fd = fd;
    r.cap = n > (1u << 20) ? n : 1u << 20;
    r.buf = malloc(r.cap);
    if (!r.buf) return fail(res, SP_IOERR, 0, "out of memory");
    if (n) memcpy(r.buf, head, n);
    r.hi = n;
    return run(&r, cb, res);
}

int sp_read_file(const char *path, const sp_callbacks *cb, sp_result *res) {
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        memset(res, 0, sizeof *res);
        return fail(res, SP_IOERR, 0, "cannot open: %s", strerror(errno));
    }
    int st = sp_read_fd(fd, NULL, 0, cb, res);
    if (fd > 0) close(fd);
    return st;
}

/* The one dispatch point: another format's reader answers for itself. */
const sp_site *sp_reader_site(const sp_reader *r, uint32_t id) {
    uint32_t i;
    if (r->vtbl) return r->vtbl->site(r, id);
    return map_get(&r->site_ids, id, &i) ? &r->sites[i] : NULL;
}
const sp_header *sp_reader_header(const sp_reader *r) { return r->vtbl ? r->vtbl->header(r) : &r->hdr; }
uint32_t sp_reader_nthreads(const sp_reader *r) { return r->vtbl ? r->vtbl->nthreads(r) : r->nthreads; }
const sp_thread *sp_reader_thread(const sp_reader *r, uint32_t slot) {
    if (r->vtbl) return r->vtbl->thread(r, slot);
    return slot < r->nthreads ? &r->threads[slot] : NULL;
}
const sp_gpu_info *sp_reader_gpu_info(const sp_reader *r) {
    return r->vtbl ? r->vtbl->gpu_info(r) : r->ev_gpu;
}
uint32_t sp_reader_steps(const sp_reader *r, const sp_step **steps) {
    if (r->vtbl) return r->vtbl->steps(r, steps);
    *steps = r->steps;
    return r->nsteps;
}
const char *sp_reader_device_name(const sp_reader *r, uint32_t device) {
    if (r->vtbl) return r->vtbl->device_name(r, device);
    return device < SP_MAX_DEVICES ? r->devices[device] : NULL;
}
uint32_t sp_reader_memory(const sp_reader *r, const sp_memory **mem) {
    if (r->vtbl) return r->vtbl->memory(r, mem);
    *mem = r->memrec;
    return r->nmem;
}

void sp_result_message(const sp_result *res, const char *file, char *buf, size_t n) {
    switch (res->status) {
    case SP_OK: snprintf(buf, n, "%s", ""); break;
    case SP_TRUNCATED:
        snprintf(buf, n, "%s: truncated at byte %llu (last whole chunk ends at %llu): %s", file,
                 (unsigned long long)res->offset, (unsigned long long)res->good_end, res->msg);
        break;
    case SP_IOERR: snprintf(buf, n, "%s: %s", file, res->msg); break;
    default:
        snprintf(buf, n, "%s: offset %llu: %s", file, (unsigned long long)res->offset, res->msg);
        break;
    }
}
