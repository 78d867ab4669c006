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

#include "scopeprof.h"

typedef struct tw {
    unsigned char *b;
    size_t n, cap;
} tw;

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
    tw_put(w, "SCOPEPRF", 8);
    tw_u32(w, version);
    tw_u32(w, 48 + pl);
    tw_u64(w, pid);
    tw_u64(w, 1000); /* start_ns */
    tw_u64(w, 0);    /* realtime - monotonic */
    tw_u32(w, 0xFFFFFFFFu);
    tw_u32(w, pl);
    tw_put(w, prog, pl);
}
static inline void tw_header(tw *w, uint64_t pid, const char *prog) { tw_header_v(w, pid, prog, 1); }

/* A chunk around a payload; returns the offset of its header. */
static inline size_t tw_chunk(tw *w, uint32_t type, const tw *payload) {
    size_t at = w->n;
    tw_u32(w, 0x4B4E4843u);
    tw_u32(w, type);
    tw_u32(w, (uint32_t)payload->n);
    tw_u32(w, scopeprof_crc32(0, payload->b, payload->n));
    tw_put(w, payload->b, payload->n);
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

static inline size_t tw_events(tw *w, uint32_t thread, const tw_ev *ev, uint32_t n) {
    tw p = {0, 0, 0};
    tw_u32(&p, thread);
    tw_u32(&p, n);
    for (uint32_t i = 0; i < n; i++) {
        tw_u64(&p, ev[i].start);
        tw_u64(&p, ev[i].end);
        tw_u32(&p, ev[i].site);
        tw_u32(&p, ev[i].depth);
    }
    size_t at = tw_chunk(w, 3, &p);
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
static inline void tw_known(tw *w, uint64_t pid) {
    static const tw_ev ev[] = {{150000, 250000, 3, 2},
                               {100000, 400000, 2, 1},
                               {500000, 600000, 2, 1},
                               {700000, 800000, 4, 1},
                               {0, 1000000, 1, 0}};
    tw_header(w, pid, "known");
    tw_site(w, 1, 10, "main", "main.c", "main");
    tw_site(w, 2, 20, "A", "a.c", "fa");
    tw_site(w, 3, 30, "B", "b.c", "fb");
    tw_site(w, 4, 40, TW_LONG_NAME, "c.c", "fc");
    tw_thread(w, 0, pid, "main");
    tw_events(w, 0, ev, 2);
    tw_events(w, 0, ev + 2, 3);
    tw_end(w, 5);
}

#endif
