/* tw.h -- a tiny trace file writer for the reporter tests: builds files byte
 * by byte as docs/FORMAT.md describes them (independently of the header's
 * writer), so tests control every timestamp and can break any field. */
#ifndef TW_H
#define TW_H

#define SCOPEPROF_AGGREGATION /* scopeprof_crc32 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

typedef struct tw {
    unsigned char *b;
    size_t n, cap;
} tw;

/* The format major version tw_header and tw_events write: 1 (24-byte
 * events) or 2 (16- or 32-byte records); 3 and later add the header's CRC
 * and chunk CRCs over the chunk header; 4 and later count EVENTS and END in
 * 16-byte units, and need a TICKS chunk (tw_ticks) before the events, whose
 * times are then ticks; 5 adds input shapes (tw_events_shaped). A test sets
 * it before writing. */
static int tw_major = 1;

typedef struct tw_ev {
    uint64_t start, end;
    uint32_t site, depth;
} tw_ev;

static inline void tw_put(tw *w, const void *p, size_t n) {
    if (!n) return;
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 256;
        w->b = (unsigned char *)realloc(w->b, w->cap);
        if (!w->b) abort();
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static inline void tw_u32(tw *w, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    tw_put(w, b, 4);
}
static inline void tw_u64(tw *w, uint64_t v) {
    tw_u32(w, (uint32_t)v);
    tw_u32(w, (uint32_t)(v >> 32));
}

static inline void tw_header_v(tw *w, uint64_t pid, const char *prog, uint32_t version) {
    uint32_t pl = (uint32_t)strlen(prog);
    int crc = tw_major >= 3; /* format 3: the header ends with its CRC */
    size_t at = w->n;
    tw_put(w, "SCOPEPRF", 8);
    tw_u32(w, version);
    tw_u32(w, 48 + pl + (crc ? 4 : 0));
    tw_u64(w, pid);
    tw_u64(w, 1000); /* start_ns */
    tw_u64(w, 0);    /* realtime - monotonic */
    tw_u32(w, 0xFFFFFFFFu);
    tw_u32(w, pl);
    tw_put(w, prog, pl);
    if (crc) tw_u32(w, scopeprof_crc32(0, w->b + at, w->n - at));
}
static inline void tw_header(tw *w, uint64_t pid, const char *prog) {
    tw_header_v(w, pid, prog, (uint32_t)tw_major);
}
/* The same with a rank (offset 40). */
static inline void tw_header_rank(tw *w, uint64_t pid, const char *prog, uint32_t rank) {
    size_t at = w->n;
    tw_header(w, pid, prog);
    for (int i = 0; i < 4; i++) w->b[at + 40 + (size_t)i] = (unsigned char)(rank >> (8 * i));
}

/* A chunk around a payload; returns the offset of its header. Its CRC:
 * the payload's, continued over the header's first 12 bytes from format 3. */
static inline size_t tw_chunk(tw *w, uint32_t type, const tw *payload) {
    size_t at = w->n;
    tw_u32(w, 0x4B4E4843u);
    tw_u32(w, type);
    tw_u32(w, (uint32_t)payload->n);
    uint32_t c = scopeprof_crc32(0, payload->b, payload->n);
    tw_u32(w, tw_major >= 3 ? scopeprof_crc32(c, w->b + at, 12) : c);
    tw_put(w, payload->b, payload->n);
    return at;
}

/* Overwrite a little-endian u32 or u64 at byte `at` of w (a payload, before
 * it is wrapped in its chunk: the CRC then covers what was patched). */
static inline void tw_patch32(tw *w, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) w->b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}
static inline void tw_patch64(tw *w, size_t at, uint64_t v) {
    tw_patch32(w, at, (uint32_t)v);
    tw_patch32(w, at + 4, (uint32_t)(v >> 32));
}

/* TICKS (format 4): ticks to ns. tw_ticks(w, 0, 0, 1.0): ticks are ns. */
static inline size_t tw_ticks(tw *w, uint64_t tick0, uint64_t ns0, double ns_per_tick) {
    tw p = {0, 0, 0};
    uint64_t bits;
    memcpy(&bits, &ns_per_tick, sizeof bits);
    tw_u64(&p, tick0);
    tw_u64(&p, ns0);
    tw_u64(&p, bits);
    size_t at = tw_chunk(w, 11, &p);
    free(p.b);
    return at;
}

static inline size_t tw_site(tw *w, uint32_t id, uint32_t line, const char *name, const char *file,
                             const char *func) {
    tw p = {0, 0, 0};
    tw_u32(&p, 1);
    tw_u32(&p, id);
    tw_u32(&p, line);
    tw_u32(&p, (uint32_t)strlen(name));
    tw_u32(&p, (uint32_t)strlen(file));
    tw_u32(&p, (uint32_t)strlen(func));
    tw_put(&p, name, strlen(name));
    tw_put(&p, file, strlen(file));
    tw_put(&p, func, strlen(func));
    size_t at = tw_chunk(w, 1, &p);
    free(p.b);
    return at;
}

static inline size_t tw_thread(tw *w, uint32_t index, uint64_t tid, const char *name) {
    tw p = {0, 0, 0};
    tw_u32(&p, index);
    tw_u32(&p, (uint32_t)strlen(name));
    tw_u64(&p, tid);
    tw_put(&p, name, strlen(name));
    size_t at = tw_chunk(w, 2, &p);
    free(p.b);
    return at;
}

/* An EVENTS payload (thread, count, records) into p, which the caller
 * wraps with tw_chunk(w, 3, p) (after patching it, if it likes). shape
 * (NULL: none at all) gives each event its input shapes (format 5; shape[i]
 * NULL: none): shape[i][0] = m, then the m words (each input's number of
 * dimensions, then its dimensions); the event takes a 32-byte record and
 * ceil((m + 1) / 2) units after it, zero-padded. Payload offsets: the first
 * record at 8, a long record's units field at 28 into it, its shape's words
 * at 32. */
static inline void tw_events_payload(tw *p, uint32_t thread, const tw_ev *ev, uint32_t n,
                                     const uint64_t *const *shape) {
    uint64_t units = 0;
    tw_u32(p, thread);
    tw_u32(p, n);
    for (uint32_t i = 0; i < n; i++) {
        const tw_ev *e = &ev[i];
        const uint64_t *sh = shape ? shape[i] : NULL;
        uint64_t d = e->end - e->start;
        tw_u64(p, e->start);
        if (tw_major == 1) {
            tw_u64(p, e->end);
            tw_u32(p, e->site);
            tw_u32(p, e->depth);
        } else if (!sh && e->end >= e->start && d < 0xFFFFFFFFu && e->site < (1u << 19) &&
                   (e->depth & 0x7FFFFFFFu) < 4096) {
            tw_u32(p, (uint32_t)d); /* 16 bytes: site | depth << 19 | GPU */
            tw_u32(p, e->site | (e->depth & 0xFFFu) << 19 | (e->depth & 0x80000000u));
            units += 1;
        } else {
            uint32_t k = sh ? (uint32_t)((sh[0] + 2) / 2) : 0;
            tw_u32(p, 0xFFFFFFFFu); /* 32 bytes */
            tw_u32(p, e->depth);
            tw_u64(p, e->end);
            tw_u32(p, e->site);
            tw_u32(p, k);
            for (uint64_t j = 0; j < 2 * (uint64_t)k; j++) tw_u64(p, j <= sh[0] ? sh[j] : 0);
            units += 2 + k;
        }
    }
    if (tw_major >= 4) tw_patch32(p, 4, (uint32_t)units); /* counted in 16-byte units */
}

static inline size_t tw_events_shaped(tw *w, uint32_t thread, const tw_ev *ev, uint32_t n,
                                      const uint64_t *const *shape) {
    tw p = {0, 0, 0};
    tw_events_payload(&p, thread, ev, n, shape);
    size_t at = tw_chunk(w, 3, &p);
    free(p.b);
    return at;
}

static inline size_t tw_events(tw *w, uint32_t thread, const tw_ev *ev, uint32_t n) {
    return tw_events_shaped(w, thread, ev, n, NULL);
}

/* Flags word of a memory record (docs/FORMAT.md, type 3). */
#define TW_MEM(device, depth) (0x40000000u | (uint32_t)(device) << 24 | (uint32_t)(depth))
#define TW_GPU(depth) (0x80000000u | (uint32_t)(depth))

typedef struct tw_gpu_rec {
    uint64_t start, end, launch, stream;
    uint32_t site, device, status;
} tw_gpu_rec;

static inline size_t tw_gpu(tw *w, uint32_t thread, const tw_gpu_rec *g, uint32_t n) {
    tw p = {0, 0, 0};
    tw_u32(&p, thread);
    tw_u32(&p, n);
    for (uint32_t i = 0; i < n; i++) {
        tw_u64(&p, g[i].start);
        tw_u64(&p, g[i].end);
        tw_u64(&p, g[i].launch);
        tw_u64(&p, g[i].stream);
        tw_u32(&p, g[i].site);
        tw_u32(&p, g[i].device);
        tw_u32(&p, g[i].status);
        tw_u32(&p, 0);
    }
    size_t at = tw_chunk(w, 5, &p);
    free(p.b);
    return at;
}

static inline size_t tw_device(tw *w, uint32_t device, const char *name) {
    tw p = {0, 0, 0};
    tw_u32(&p, device);
    tw_u32(&p, (uint32_t)strlen(name));
    tw_put(&p, name, strlen(name));
    size_t at = tw_chunk(w, 6, &p);
    free(p.b);
    return at;
}

/* steps: n triples (number, start_ns, end_ns). */
static inline size_t tw_steps(tw *w, const uint64_t (*steps)[3], uint32_t n) {
    tw p = {0, 0, 0};
    tw_u32(&p, n);
    tw_u32(&p, 0);
    for (uint32_t i = 0; i < n; i++) {
        tw_u64(&p, steps[i][0]);
        tw_u64(&p, steps[i][1]);
        tw_u64(&p, steps[i][2]);
    }
    size_t at = tw_chunk(w, 7, &p);
    free(p.b);
    return at;
}

/* mem: n records (device, peak, final, unknown_frees). */
static inline size_t tw_memory(tw *w, const int64_t (*mem)[4], uint32_t n) {
    tw p = {0, 0, 0};
    tw_u32(&p, n);
    for (uint32_t i = 0; i < n; i++) {
        tw_u32(&p, (uint32_t)mem[i][0]);
        tw_u32(&p, 0);
        tw_u64(&p, (uint64_t)mem[i][1]);
        tw_u64(&p, (uint64_t)mem[i][2]);
        tw_u64(&p, (uint64_t)mem[i][3]);
    }
    size_t at = tw_chunk(w, 8, &p);
    free(p.b);
    return at;
}

static inline size_t tw_end(tw *w, uint64_t total) {
    tw p = {0, 0, 0};
    tw_u64(&p, total);
    tw_u64(&p, 0);
    size_t at = tw_chunk(w, 4, &p);
    free(p.b);
    return at;
}

static inline int tw_save(const tw *w, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t ok = w->n ? fwrite(w->b, 1, w->n, f) : 0;
    return fclose(f) == 0 && ok == w->n ? 0 : -1;
}

/* w saved to path with one chunk more (type, payload p) right after its
 * header of hl bytes, where a writer puts OVERHEAD and CLOCK; w and p
 * freed. 0, or -1 when it cannot be written. */
static inline int tw_save_with_first(tw *w, size_t hl, uint32_t type, tw *p, const char *path) {
    tw head = {0, 0, 0};
    tw_put(&head, w->b, hl);
    tw_chunk(&head, type, p);
    tw_put(&head, w->b + hl, w->n - hl);
    int rc = tw_save(&head, path);
    free(w->b);
    free(head.b);
    free(p->b);
    return rc;
}

/* The known event set of the golden tests (times in ns, one thread):
 *   main   [0, 1000000]                       depth 0
 *     A    [100000, 400000]                   depth 1
 *       B  [150000, 250000]                   depth 2
 *     A    [500000, 600000]                   depth 1
 *     C... [700000, 800000] (a 60-char name)  depth 1
 * in close order: B, A, A, C, main. Expected: main self 500us (50%), total
 * 1ms; A count 2, self 300us, total 400us; B and C 100us each. The events
 * come in two EVENTS chunks (B, A | A, C, main). */
#define TW_LONG_NAME "a_very_long_scope_name_that_is_longer_than_the_column_width_"
/* The known set with every time multiplied by `scale`, and a rank
 * (0xFFFFFFFF: none): the ranks of the --per-rank tests. */
static inline void tw_known_rank(tw *w, uint64_t pid, uint32_t rank, uint64_t scale) {
    static const tw_ev base[] = {{150000, 250000, 3, 2},
                                 {100000, 400000, 2, 1},
                                 {500000, 600000, 2, 1},
                                 {700000, 800000, 4, 1},
                                 {0, 1000000, 1, 0}};
    tw_ev ev[5];
    for (int i = 0; i < 5; i++) {
        ev[i] = base[i];
        ev[i].start *= scale;
        ev[i].end *= scale;
    }
    tw_header_rank(w, pid, "known", rank);
    tw_site(w, 1, 10, "main", "main.c", "main");
    tw_site(w, 2, 20, "A", "a.c", "fa");
    tw_site(w, 3, 30, "B", "b.c", "fb");
    tw_site(w, 4, 40, TW_LONG_NAME, "c.c", "fc");
    tw_thread(w, 0, pid, "main");
    tw_events(w, 0, ev, 2);
    tw_events(w, 0, ev + 2, 3);
    tw_end(w, 5);
}
static inline void tw_known(tw *w, uint64_t pid) { tw_known_rank(w, pid, 0xFFFFFFFFu, 1); }

/* GPU scopes, memory records, steps, a device name and peak memory
 * (times in ns; the header's start is 1000, where step 1 begins):
 *   steps 1 [1000,2000]  2 [2000,3000]  3 [3000,4000]
 *   thread 0 (tid 100 "main"), one top-level "step_body" per step:
 *     step 1: step_body [1100,1900]; alloc +4096 CPU at 1150;
 *             gemm [1200,1300], GPU [1250,1450] on stream 0xa
 *     step 2: step_body [2100,2900]; alloc +1000000 on GPU 0 at 2150;
 *             gemm [2200,2300], GPU [2250,2600] stream 0xa;
 *             copy [2400,2500], GPU [2500,2550] stream 0xb; free -4096 CPU at 2800
 *     step 3: step_body [3100,3900]; alloc +8192 CPU at 3200
 *   thread 1 (tid 101 "worker"), written last: worker_task [1500,2500]
 *     (across steps 1 and 2), alloc +100 CPU at 1600
 * So the CPU memory counter, in time order over both threads, reads 4096,
 * 4196, 100, 8292. MEMORY records: CPU peak 8292 with 2 unknown frees, GPU 0
 * peak 1000000. The STEPS come in two chunks after the events. */
static inline void tw_rich(tw *w, uint64_t pid, uint32_t rank) {
    tw_header_rank(w, pid, "rich", rank);
    tw_site(w, 1, 10, "step_body", "train.c", "step");
    tw_site(w, 2, 20, "gemm", "train.c", "gemm");
    tw_site(w, 3, 30, "copy", "train.c", "copy");
    tw_site(w, 4, 40, "alloc", "train.c", "step");
    tw_site(w, 5, 50, "worker_task", "worker.c", "work");
    tw_thread(w, 0, 100, "main");
    tw_thread(w, 1, 101, "worker");
    tw_device(w, 0, "Test GPU \"X\"");
    static const tw_gpu_rec g1[] = {{1250, 1450, 1200, 0xa, 2, 0, 0}};
    static const tw_ev s1[] = {{1150, 4096, 4, TW_MEM(0, 1)}, {1200, 1300, 2, TW_GPU(1)}, {1100, 1900, 1, 0}};
    tw_gpu(w, 0, g1, 1);
    tw_events(w, 0, s1, 3);
    static const tw_gpu_rec g2[] = {{2250, 2600, 2200, 0xa, 2, 0, 0}, {2500, 2550, 2400, 0xb, 3, 0, 0}};
    static const tw_ev s2[] = {{2150, 1000000, 4, TW_MEM(1, 1)},
                               {2200, 2300, 2, TW_GPU(1)},
                               {2400, 2500, 3, TW_GPU(1)},
                               {2800, (uint64_t)-4096, 4, TW_MEM(0, 1)},
                               {2100, 2900, 1, 0}};
    tw_gpu(w, 0, g2, 2);
    tw_events(w, 0, s2, 5);
    static const tw_ev s3[] = {{3200, 8192, 4, TW_MEM(0, 1)}, {3100, 3900, 1, 0}};
    tw_events(w, 0, s3, 2);
    static const tw_ev t1[] = {{1600, 100, 4, TW_MEM(0, 1)}, {1500, 2500, 5, 0}};
    tw_events(w, 1, t1, 2);
    static const uint64_t st[][3] = {{1, 1000, 2000}, {2, 2000, 3000}, {3, 3000, 4000}};
    tw_steps(w, st, 2);
    tw_steps(w, st + 2, 1);
    static const int64_t mem[][4] = {{0, 8292, 8292, 2}, {1, 1000000, 1000000, 0}};
    tw_memory(w, mem, 2);
    tw_end(w, 12);
}

#endif
