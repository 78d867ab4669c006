/* trace.h -- the test suites' reader of scopeprof trace files (.sprof).
 *
 * Contract:
 * - Written from docs/FORMAT.md alone: it shares no code with the reporter's
 *   reader (reporter/read.c) nor with the header's writer, not even the CRC,
 *   so each checks the others. Needs nothing but libc (scopeprof.h need not
 *   come first).
 * - tr_read(path, &t) loads a whole file into flat arrays, in file order, and
 *   returns t.ok: 1 when the header is good, every chunk has its magic, a
 *   length inside the file, a good CRC-32 and a payload long enough for what
 *   it declares, and no byte follows the last chunk. Otherwise t.err says
 *   why; chunks before the bad one are kept, so a file cut short reads up to
 *   its last whole chunk (as FORMAT.md asks of readers). t.exists: the file
 *   could be opened. Always tr_free(&t) afterwards (also when ok is 0).
 * - Chunk types read: 1 SITES (names and files at full length), 2 THREAD
 *   (names, tids), 3 EVENTS (scopes and MEM events; also type 4096, the type
 *   once written by mistake, read the same and counted in
 *   t.events_chunks_4096 so the regression tests can insist it is 0),
 *   4 END, 5 GPU records, 6 DEVICE names, 7 STEPS, 8 MEMORY, 9 OVERHEAD,
 *   11 TICKS. Others skipped.
 * - Format 1 (24-byte events), 2 (16- or 32-byte records), 3 (as 2, with
 *   the header CRC and chunk CRCs that cover the chunk header) and 4 (as 3,
 *   with times in clock ticks, converted here to ns by the TICKS chunk's
 *   rate, and EVENTS and END counting 16-byte units) and 5 (as 4, a long
 *   record followed by the units of its input shapes, read into
 *   tr_event.shape as PyTorch prints them); t.major says which,
 *   t.long_records and t.event_bytes how the events were stored, and
 *   tr_end_expected what the END chunk must count.
 * - No fixed limits on sites, threads, events or name lengths (except
 *   devices: 16, MEMORY rows: 64).
 * - Everything is prefixed tr_ / TR_. Functions are static inline. */
#ifndef TESTS_COMMON_TRACE_H
#define TESTS_COMMON_TRACE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An event's depth_and_flags word (tr_event.depth). */
#define TR_GPU_FLAG 0x80000000u   /* the CPU side of a GPU scope (type 5) */
#define TR_MEM_FLAG 0x40000000u   /* not a scope: an allocation or a free */
#define TR_DEPTH_MASK 0x3FFFFFFFu /* depth of a scope */

typedef struct tr_event {
    uint64_t start, end; /* ns; for a MEM event, end is the signed byte count */
    uint64_t ticks;      /* format 4: the duration in clock ticks, as stored */
    uint32_t site;
    uint32_t depth;      /* depth_and_flags as stored: see the TR_*_FLAG bits */
    uint32_t thread;     /* the EVENTS chunk's thread index */
    char *shape;         /* format 5: its input shapes, "[[64, 32], []]"; NULL: none */
} tr_event;

typedef struct tr_site {
    char *name, *file;   /* NUL-terminated copies, full length; NULL: undefined */
    uint32_t name_len, line;
} tr_site;

typedef struct tr_thread {
    char *name;          /* NULL until its THREAD chunk */
    uint64_t tid;
    uint64_t events;     /* events in its EVENTS chunks */
    uint32_t name_chunks, events_chunks; /* its THREAD and EVENTS chunks */
} tr_thread;

typedef struct tr_gpu {  /* a GPU record (type 5) */
    uint32_t thread;
    uint64_t start, end, launch, stream;
    uint32_t site, device, status;
} tr_gpu;

typedef struct tr_step {
    uint64_t n, start, end;
} tr_step;

typedef struct tr_mem {
    uint32_t device;
    int64_t peak, final;
    uint64_t unknown_frees;
} tr_mem;

typedef struct tr_trace {
    int ok;              /* see the contract above */
    int exists;          /* the file could be opened */
    char err[160];       /* why ok is 0 */
    uint64_t pid, start_ns;
    uint32_t rank;       /* 0xFFFFFFFF: none */
    int has_end;
    uint64_t end_total;  /* events (format 4: 16-byte units) according to the END chunk */
    uint64_t end_missing; /* format 5.2: the scopes opened that the file lacks, per the END chunk */
    uint64_t units;      /* format 4: 16-byte units in EVENTS chunks */
    /* TICKS (type 11, format 4): how many, and the rate */
    uint32_t ticks_chunks;
    uint64_t tick0, ns0;
    double ns_per_tick;
    tr_event *ev;        /* every event (scopes and MEM), in file order */
    uint64_t nev, ev_cap; /* ev_cap: room in ev (it grows by half, not by a chunk:
                             the sanitizers' realloc always copies) */
    tr_site *sites;      /* by id */
    uint32_t nsites;     /* highest id + 1 */
    tr_thread *threads;  /* by index */
    uint32_t nthreads;   /* 1 + highest thread index seen (THREAD or EVENTS) */
    tr_gpu *gpu;         /* GPU records, in file order */
    uint64_t ngpu;
    char devices[16][65];
    uint32_t devices_seen; /* bit mask of the devices named */
    int events_chunks, events_chunks_4096, gpu_chunks;
    uint32_t major;         /* format version */
    uint64_t long_records;  /* format 2: events stored in 32 bytes */
    uint64_t event_bytes;   /* bytes of event records in EVENTS chunks */
    tr_step *steps;
    uint32_t nsteps, steps_chunks;
    tr_mem mem[64];
    uint32_t nmem, memory_chunks;
    /* OVERHEAD (type 9, format 3.1): how many, the last one's values, and
     * the events read before the first one (its writer puts it first). */
    uint32_t overhead_chunks, overhead_inside_ps, overhead_outside_ps, overhead_scopes;
    uint32_t overhead_short_below, overhead_short_inside_ps, overhead_short_outside_ps; /* 5.1 */
    uint64_t events_before_overhead;
} tr_trace;

static inline uint32_t tr_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tr_u64(const unsigned char *p) {
    return (uint64_t)tr_u32(p) | (uint64_t)tr_u32(p + 4) << 32;
}

/* CRC-32, IEEE polynomial, continued from `crc` (zlib's crc32(crc, p, n)). */
static inline uint32_t tr_crc32_from(uint32_t crc, const unsigned char *p, size_t n) {
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        table[i] = c;
    }
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}
static inline uint32_t tr_crc32(const unsigned char *p, size_t n) { return tr_crc32_from(0, p, n); }

/* Format 4: a tick in ns, by the TICKS chunk's rate (FORMAT.md). */
static inline uint64_t tr_ns(const tr_trace *t, uint64_t tick) {
    double x = (double)(int64_t)(tick - t->tick0) * t->ns_per_tick;
    if (!(x > -9.2e18 && x < 9.2e18)) x = x > 0 ? 9.2e18 : -9.2e18; /* held, as FORMAT.md says */
    return t->ns0 + (uint64_t)(int64_t)x;
}

/* What a whole file's END chunk counts: its events, or in format 4 its
 * 16-byte units. */
static inline uint64_t tr_end_expected(const tr_trace *t) {
    return t->major >= 4 ? t->units : t->nev;
}

static inline char *tr_strdup(const unsigned char *s, uint32_t n) {
    char *d = (char *)malloc((size_t)n + 1);
    if (!d) abort();
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static inline void tr_free(tr_trace *t) {
    for (uint32_t i = 0; i < t->nsites; i++) {
        free(t->sites[i].name);
        free(t->sites[i].file);
    }
    for (uint32_t i = 0; i < t->nthreads; i++) free(t->threads[i].name);
    free(t->sites);
    free(t->threads);
    for (uint64_t i = 0; i < t->nev; i++) free(t->ev[i].shape);
    free(t->ev);
    free(t->gpu);
    free(t->steps);
    memset(t, 0, sizeof *t);
}

/* Array `arr` of *n elements of `size` bytes grown to hold index `idx`, the
 * new elements zeroed; *n updated. */
static inline void *tr_grow(void *arr, uint32_t *n, uint32_t idx, size_t size) {
    if (idx < *n) return arr;
    char *p = (char *)realloc(arr, ((size_t)idx + 1) * size);
    if (!p) abort();
    memset(p + (size_t)*n * size, 0, ((size_t)idx + 1 - *n) * size);
    *n = idx + 1;
    return p;
}

/* Reads one chunk's payload p[0..len) of type `type` into *t. Returns 0 when
 * the payload is shorter than what it declares. */
static inline int tr_chunk(tr_trace *t, uint32_t type, const unsigned char *p, size_t len) {
    if (type == 1) { /* SITES: u32 n, n x {u32 id, line, name_len, file_len, func_len, strings} */
        if (len < 4) return 0;
        size_t q = 4;
        for (uint32_t i = 0, n = tr_u32(p); i < n; i++) {
            if (q + 20 > len) return 0;
            uint32_t id = tr_u32(p + q), ln = tr_u32(p + q + 8), lf = tr_u32(p + q + 12),
                     lu = tr_u32(p + q + 16);
            if (q + 20 + (size_t)ln + lf + lu > len) return 0;
            t->sites = (tr_site *)tr_grow(t->sites, &t->nsites, id, sizeof *t->sites);
            tr_site *s = &t->sites[id];
            free(s->name);
            free(s->file);
            s->name = tr_strdup(p + q + 20, ln);
            s->file = tr_strdup(p + q + 20 + ln, lf);
            s->name_len = ln;
            s->line = tr_u32(p + q + 4);
            q += 20 + (size_t)ln + lf + lu;
        }
    } else if (type == 2) { /* THREAD: u32 index, u32 name_len, u64 tid, name */
        if (len < 16 || 16 + (size_t)tr_u32(p + 4) > len) return 0;
        uint32_t idx = tr_u32(p);
        t->threads = (tr_thread *)tr_grow(t->threads, &t->nthreads, idx, sizeof *t->threads);
        free(t->threads[idx].name);
        t->threads[idx].name = tr_strdup(p + 16, tr_u32(p + 4));
        t->threads[idx].tid = tr_u64(p + 8);
        t->threads[idx].name_chunks++;
    } else if (type == 3 || type == 4096) { /* EVENTS: u32 thread, u32 n, n records */
        if (len < 8) return 0;
        uint32_t idx = tr_u32(p), n = tr_u32(p + 4);
        size_t min = t->major == 1 ? 24 : 16;
        if (8 + (size_t)n * min > len) return 0;
        if (t->major >= 4) { /* n units of 16 bytes: exactly the payload */
            if (8 + (size_t)n * 16 != len || !t->ticks_chunks) return 0;
            t->units += n;
        }
        t->events_chunks++;
        t->events_chunks_4096 += type == 4096;
        t->threads = (tr_thread *)tr_grow(t->threads, &t->nthreads, idx, sizeof *t->threads);
        t->threads[idx].events_chunks++;
        uint64_t first = t->nev;
        if (t->nev + n > t->ev_cap) {
            t->ev_cap = t->nev + n + (t->nev + n) / 2;
            t->ev = (tr_event *)realloc(t->ev, (size_t)t->ev_cap * sizeof *t->ev + 1);
            if (!t->ev) abort();
        }
        size_t q = 8;
        for (uint32_t i = 0; t->major >= 4 ? q < len : i < n; i++) {
            if (q + 16 > len) return 0;
            const unsigned char *e = p + q;
            tr_event *o = &t->ev[t->nev++];
            o->thread = idx;
            o->shape = NULL;
            o->start = tr_u64(e);
            if (t->major == 1) {
                o->end = tr_u64(e + 8);
                o->site = tr_u32(e + 16);
                o->depth = tr_u32(e + 20);
                q += 24;
            } else if (tr_u32(e + 8) != 0xFFFFFFFFu) {
                /* 16 bytes: duration, then site | depth << 19 | GPU << 31 */
                uint32_t key = tr_u32(e + 12);
                o->end = o->start + tr_u32(e + 8);
                o->site = key & 0x7FFFFu;
                o->depth = (key & 0x80000000u) | ((key >> 19) & 0xFFFu);
                q += 16;
            } else {
                /* 32 bytes: mark, depth_and_flags, end, site, then (format
                 * 5) the units of input shapes that follow, else 0 */
                if (q + 32 > len) return 0;
                o->depth = tr_u32(e + 12);
                o->end = tr_u64(e + 16);
                o->site = tr_u32(e + 24);
                t->long_records++;
                q += 32;
                uint32_t units = t->major >= 5 ? tr_u32(e + 28) : 0;
                if (units) { /* u64 m, then m words: per input its count and dims */
                    if (units > (len - q) / 16) return 0;
                    uint64_t m = tr_u64(p + q), w = 0;
                    if (m >= 2 * (uint64_t)units) return 0;
                    size_t cap = 2, n = 0;
                    char *txt = (char *)malloc(cap);
                    if (!txt) abort();
                    txt[n++] = '[';
                    for (int first = 1; w < m; first = 0) {
                        uint64_t dims = tr_u64(p + q + 8 + 8 * w++);
                        if (dims > m - w) {
                            free(txt);
                            return 0;
                        }
                        char piece[32];
                        for (uint64_t d = 0; d <= dims + 1; d++) {
                            if (d == 0) snprintf(piece, sizeof piece, "%s[", first ? "" : ", ");
                            else if (d == dims + 1) snprintf(piece, sizeof piece, "]");
                            else snprintf(piece, sizeof piece, "%s%lld", d > 1 ? ", " : "",
                                          (long long)tr_u64(p + q + 8 + 8 * w++));
                            size_t l = strlen(piece);
                            if (n + l + 2 > cap) {
                                cap = 2 * (n + l + 2);
                                if (!(txt = (char *)realloc(txt, cap))) abort();
                            }
                            memcpy(txt + n, piece, l);
                            n += l;
                        }
                    }
                    txt[n++] = ']';
                    txt[n] = 0;
                    o->shape = txt;
                    q += (size_t)units * 16;
                }
            }
            if (t->major >= 4) { /* ticks to ns, as FORMAT.md gives the formula */
                int mem = (o->depth & TR_MEM_FLAG) != 0;
                o->ticks = mem ? 0 : o->end - o->start;
                if (!mem) o->end = tr_ns(t, o->end);
                o->start = tr_ns(t, o->start);
            }
        }
        t->threads[idx].events += t->nev - first;
        t->event_bytes += q - 8;
    } else if (type == 4) { /* END: u64 total events, u64 missing scopes (5.2; 0 before) */
        if (len < 8) return 0;
        t->has_end = 1;
        t->end_total = tr_u64(p);
        if (len >= 16) t->end_missing = tr_u64(p + 8);
    } else if (type == 5) { /* GPU: u32 thread, u32 n, n x 48 bytes */
        if (len < 8) return 0;
        uint32_t th = tr_u32(p), n = tr_u32(p + 4);
        if (8 + (size_t)n * 48 > len) return 0;
        t->gpu = (tr_gpu *)realloc(t->gpu, (size_t)(t->ngpu + n) * sizeof *t->gpu + 1);
        if (!t->gpu) abort();
        for (uint32_t i = 0; i < n; i++) {
            const unsigned char *q = p + 8 + (size_t)i * 48;
            tr_gpu g = {th, tr_u64(q), tr_u64(q + 8), tr_u64(q + 16), tr_u64(q + 24),
                        tr_u32(q + 32), tr_u32(q + 36), tr_u32(q + 40)};
            t->gpu[t->ngpu++] = g;
        }
        t->gpu_chunks++;
    } else if (type == 6) { /* DEVICE: u32 device, u32 name_len, name */
        if (len < 8 || 8 + (size_t)tr_u32(p + 4) > len) return 0;
        uint32_t d = tr_u32(p), ln = tr_u32(p + 4);
        if (d < 16) {
            snprintf(t->devices[d], sizeof t->devices[d], "%.*s", (int)(ln < 64 ? ln : 64), p + 8);
            t->devices_seen |= 1u << d;
        }
    } else if (type == 7) { /* STEPS: u32 n, u32 0, n x {u64 step, start, end} */
        if (len < 8) return 0;
        uint32_t n = tr_u32(p);
        if (8 + (size_t)n * 24 > len) return 0;
        t->steps_chunks++;
        t->steps = (tr_step *)realloc(t->steps, ((size_t)t->nsteps + n) * sizeof *t->steps + 1);
        if (!t->steps) abort();
        for (uint32_t i = 0; i < n; i++) {
            const unsigned char *s = p + 8 + (size_t)i * 24;
            t->steps[t->nsteps++] = (tr_step){tr_u64(s), tr_u64(s + 8), tr_u64(s + 16)};
        }
    } else if (type == 11) { /* TICKS: u64 tick0, u64 ns0, f64 ns per tick */
        if (len < 24) return 0;
        uint64_t bits = tr_u64(p + 16);
        t->ticks_chunks++;
        t->tick0 = tr_u64(p);
        t->ns0 = tr_u64(p + 8);
        memcpy(&t->ns_per_tick, &bits, 8);
    } else if (type == 9) { /* OVERHEAD: u32 inside_ps, outside_ps, scopes, short_below, short_inside_ps, short_outside_ps */
        if (len < 24) return 0;
        if (t->overhead_chunks++ == 0) t->events_before_overhead = t->nev;
        t->overhead_inside_ps = tr_u32(p);
        t->overhead_outside_ps = tr_u32(p + 4);
        t->overhead_scopes = tr_u32(p + 8);
        t->overhead_short_below = tr_u32(p + 12);
        t->overhead_short_inside_ps = tr_u32(p + 16);
        t->overhead_short_outside_ps = tr_u32(p + 20);
    } else if (type == 8) { /* MEMORY: u32 n, n x {u32 device, u32 0, i64 peak, final, u64 unknown frees} */
        if (len < 4) return 0;
        uint32_t n = tr_u32(p);
        if (4 + (size_t)n * 32 > len) return 0;
        t->memory_chunks++;
        for (uint32_t i = 0; i < n && t->nmem < 64; i++) {
            const unsigned char *m = p + 4 + (size_t)i * 32;
            t->mem[t->nmem++] = (tr_mem){tr_u32(m), (int64_t)tr_u64(m + 8),
                                         (int64_t)tr_u64(m + 16), tr_u64(m + 24)};
        }
    }
    return 1;
}

/* Read `path` into *t (zeroed first). Returns t->ok. */
static inline int tr_read(const char *path, tr_trace *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(t->err, sizeof t->err, "cannot open %.120s", path);
        return 0;
    }
    t->exists = 1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
    if (!b) abort();
    size_t got = fread(b, 1, (size_t)(size > 0 ? size : 0), f);
    fclose(f);
    if (size < 48 || got != (size_t)size || memcmp(b, "SCOPEPRF", 8) != 0 ||
        tr_u32(b + 12) < 48 || tr_u32(b + 12) > (uint32_t)size) {
        snprintf(t->err, sizeof t->err, "bad header (%ld bytes)", size);
        free(b);
        return 0;
    }
    t->major = tr_u32(b + 8) & 0xFFFFu;
    /* Format 3: the header ends with its CRC; chunk CRCs cover the payload
     * and then the chunk header's magic, type and length. */
    if (t->major >= 3 && (tr_u32(b + 12) < 52 ||
                          tr_crc32(b, tr_u32(b + 12) - 4) != tr_u32(b + tr_u32(b + 12) - 4))) {
        snprintf(t->err, sizeof t->err, "bad header CRC");
        free(b);
        return 0;
    }
    t->pid = tr_u64(b + 16);
    t->start_ns = tr_u64(b + 24);
    t->rank = tr_u32(b + 40);
    size_t pos = tr_u32(b + 12);
    while (pos < (size_t)size) {
        if (pos + 16 > (size_t)size) {
            snprintf(t->err, sizeof t->err, "partial chunk header at %zu", pos);
            break;
        }
        const unsigned char *h = b + pos, *p = h + 16;
        uint32_t type = tr_u32(h + 4), len = tr_u32(h + 8);
        if (tr_u32(h) != 0x4B4E4843u || pos + 16 + (size_t)len > (size_t)size) {
            snprintf(t->err, sizeof t->err, "bad or cut chunk at %zu", pos);
            break;
        }
        uint32_t crc = tr_crc32(p, len);
        if (t->major >= 3) crc = tr_crc32_from(crc, h, 12);
        if (crc != tr_u32(h + 12)) {
            snprintf(t->err, sizeof t->err, "bad crc at %zu", pos);
            break;
        }
        if (!tr_chunk(t, type, p, len)) {
            snprintf(t->err, sizeof t->err, "chunk of type %u at %zu shorter than its contents",
                     type, pos);
            break;
        }
        pos += 16 + (size_t)len;
    }
    t->ok = !t->err[0];
    free(b);
    return t->ok;
}

/* Site `site`'s name, file and line ("<unknown>", "", 0 if undefined). */
static inline const char *tr_name(const tr_trace *t, uint32_t site) {
    return site < t->nsites && t->sites[site].name ? t->sites[site].name : "<unknown>";
}
static inline const char *tr_file(const tr_trace *t, uint32_t site) {
    return site < t->nsites && t->sites[site].file ? t->sites[site].file : "";
}
static inline uint32_t tr_line(const tr_trace *t, uint32_t site) {
    return site < t->nsites ? t->sites[site].line : 0;
}

/* Thread `idx`'s name ("" if it has none). */
static inline const char *tr_thread_name(const tr_trace *t, uint32_t idx) {
    return idx < t->nthreads && t->threads[idx].name ? t->threads[idx].name : "";
}

/* Events of any kind (scopes, GPU scopes, MEM) at sites named `name`. */
static inline uint64_t tr_count_all(const tr_trace *t, const char *name) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++) n += strcmp(tr_name(t, t->ev[i].site), name) == 0;
    return n;
}

/* Scope events (not MEM) at sites named `name` (a name may have several). */
static inline uint64_t tr_count(const tr_trace *t, const char *name) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++)
        n += !(t->ev[i].depth & TR_MEM_FLAG) && strcmp(tr_name(t, t->ev[i].site), name) == 0;
    return n;
}

/* Scope events whose name starts with `prefix`. */
static inline uint64_t tr_count_prefix(const tr_trace *t, const char *prefix) {
    uint64_t n = 0, l = strlen(prefix);
    for (uint64_t i = 0; i < t->nev; i++)
        n += !(t->ev[i].depth & TR_MEM_FLAG) && strncmp(tr_name(t, t->ev[i].site), prefix, l) == 0;
    return n;
}

/* Scope events (not MEM). */
static inline uint64_t tr_scopes(const tr_trace *t) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++) n += !(t->ev[i].depth & TR_MEM_FLAG);
    return n;
}

/* Pair each GPU-flagged event with its GPU record as FORMAT.md says: the
 * thread's next GPU record, if its launch time equals the event's start.
 * pair[i] (t->nev entries) = index into t->gpu, or -1. Returns the number of
 * flagged events left without a record (0 in a consistent file). Records are
 * consumed in file order per thread, so a GPU chunk must precede the events
 * it covers. Threads from index 256 on are not paired (and not counted). */
static inline size_t tr_pair(const tr_trace *t, long *pair) {
    size_t unpaired = 0;
    size_t next[256] = {0}; /* per thread: next GPU record index to look at */
    for (size_t i = 0; i < t->nev; i++) {
        const tr_event *e = &t->ev[i];
        pair[i] = -1;
        if (!(e->depth & TR_GPU_FLAG) || e->thread >= 256) continue;
        size_t *k = &next[e->thread];
        while (*k < t->ngpu && t->gpu[*k].thread != e->thread) (*k)++;
        if (*k < t->ngpu && t->gpu[*k].launch == e->start) pair[i] = (long)(*k)++;
        else unpaired++;
    }
    return unpaired;
}
#endif
