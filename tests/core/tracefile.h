/* tracefile.h -- a deliberately small reader of scopeprof trace files, for the
 * core tests only. It does not share code with the reporter's reader (written
 * separately), so the two can check each other; it knows just enough of
 * docs/FORMAT.md to count events per thread and per site, read thread and site
 * names and the END chunk, and check every chunk's CRC.
 *
 * Layout (little-endian): a 48-byte header starting with "SCOPEPRF" whose
 * u32 at offset 12 is the header size including the program name; then chunks
 * of {u32 magic 0x4B4E4843, u32 type, u32 len, u32 crc32(payload)} + payload.
 *   SITES  (1): u32 n, then n x {u32 id, line, name_len, file_len, func_len, strings}
 *   THREAD (2): u32 index, u32 name_len, u64 tid, name
 *   EVENTS (3): u32 thread index, u32 count, count x {u64 start, end, u32 site, depth}
 *   END    (4): u64 total events, u64 0
 * Needs scopeprof_crc32, i.e. scopeprof.h included before it (enabled or with
 * SCOPEPROF_AGGREGATION). */
#ifndef TESTS_CORE_TRACEFILE_H
#define TESTS_CORE_TRACEFILE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TF_MAX_THREADS 64
#define TF_MAX_SITES 512

typedef struct tf_event {
    uint64_t start, end;
    uint32_t site, depth, thread;
} tf_event;

typedef struct tracefile {
    int ok;                 /* header and every chunk read and CRC-checked */
    int has_end;
    uint64_t end_total;     /* events according to the END chunk */
    uint64_t events;        /* sum of EVENTS chunk counts */
    uint32_t nthreads;      /* 1 + highest thread index seen */
    uint64_t thread_events[TF_MAX_THREADS];
    char thread_name[TF_MAX_THREADS][64];
    char site_name[TF_MAX_SITES][64]; /* by site id */
    char site_file[TF_MAX_SITES][128];
    uint32_t site_line[TF_MAX_SITES];
    tf_event *ev;           /* every event, in file order */
    uint32_t events_type_4096; /* EVENTS chunks written with type 4096: see below */
    char err[128];          /* why ok is 0 */
} tracefile;

static inline uint32_t tf_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tf_u64(const unsigned char *p) {
    return tf_u32(p) | (uint64_t)tf_u32(p + 4) << 32;
}
/* Copy a length-prefixed string into a fixed buffer, cutting if needed. */
static inline void tf_str(char *dst, size_t cap, const unsigned char *s, uint32_t n) {
    if (n >= cap) n = (uint32_t)cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

static inline void tf_free(tracefile *t) { free(t->ev); t->ev = NULL; }

/* Read `path` into *t. Returns t->ok. */
static inline int tf_read(const char *path, tracefile *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(t->err, sizeof t->err, "cannot open it"); return 0; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
    size_t got = fread(b, 1, (size_t)size, f);
    fclose(f);
    if (size < 48 || got != (size_t)size || memcmp(b, "SCOPEPRF", 8) != 0) {
        snprintf(t->err, sizeof t->err, "bad header (%ld bytes)", size);
        free(b);
        return 0;
    }
    size_t cap = 0, pos = tf_u32(b + 12);
    while (pos + 16 <= (size_t)size) {
        const unsigned char *h = b + pos, *p = h + 16;
        uint32_t type = tf_u32(h + 4), len = tf_u32(h + 8);
        if (tf_u32(h) != 0x4B4E4843u || pos + 16 + len > (size_t)size) {
            snprintf(t->err, sizeof t->err, "bad chunk at %zu", pos);
            break;
        }
        if (scopeprof_crc32(0, p, len) != tf_u32(h + 12)) {
            snprintf(t->err, sizeof t->err, "bad crc at %zu", pos);
            break;
        }
        if (type == 1) { /* SITES */
            const unsigned char *q = p + 4;
            for (uint32_t i = 0, n = tf_u32(p); i < n; i++) {
                uint32_t id = tf_u32(q), ln = tf_u32(q + 8), lf = tf_u32(q + 12), lu = tf_u32(q + 16);
                if (id < TF_MAX_SITES) {
                    tf_str(t->site_name[id], sizeof t->site_name[id], q + 20, ln);
                    tf_str(t->site_file[id], sizeof t->site_file[id], q + 20 + ln, lf);
                    t->site_line[id] = tf_u32(q + 4);
                }
                q += 20 + ln + lf + lu;
            }
        } else if (type == 2) { /* THREAD */
            uint32_t idx = tf_u32(p);
            if (idx < TF_MAX_THREADS) tf_str(t->thread_name[idx], 64, p + 16, tf_u32(p + 4));
            if (idx + 1 > t->nthreads) t->nthreads = idx + 1;
        } else if (type == 3 || type == 4096) { /* EVENTS */
            /* 4096: the current header writes EVENTS chunks with the type
             * 4096 because its SCOPEPROF_CHUNK_EVENTS config macro (events
             * per chunk) shadows the enum constant SCOPEPROF_CHUNK_EVENTS = 3.
             * Tolerated here and counted, so the other tests can run;
             * known_bugs.c asserts the count is 0. Remove once fixed. */
            t->events_type_4096 += type == 4096;
            uint32_t idx = tf_u32(p), n = tf_u32(p + 4);
            if (idx < TF_MAX_THREADS) t->thread_events[idx] += n;
            if (idx + 1 > t->nthreads) t->nthreads = idx + 1;
            if (t->events + n > cap) {
                cap = (t->events + n) * 2;
                t->ev = (tf_event *)realloc(t->ev, cap * sizeof *t->ev);
            }
            for (uint32_t i = 0; i < n; i++) {
                const unsigned char *e = p + 8 + (size_t)i * 24;
                tf_event *o = &t->ev[t->events + i];
                o->start = tf_u64(e);
                o->end = tf_u64(e + 8);
                o->site = tf_u32(e + 16);
                o->depth = tf_u32(e + 20);
                o->thread = idx;
            }
            t->events += n;
        } else if (type == 4) { /* END */
            t->has_end = 1;
            t->end_total = tf_u64(p);
        }
        pos += 16 + len;
    }
    if (!t->err[0] && pos != (size_t)size) snprintf(t->err, sizeof t->err, "trailing bytes");
    t->ok = !t->err[0];
    free(b);
    return t->ok;
}

/* Events recorded at the sites called `name` (a name may have several sites). */
static inline uint64_t tf_count(const tracefile *t, const char *name) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->events; i++)
        if (t->ev[i].site < TF_MAX_SITES && strcmp(t->site_name[t->ev[i].site], name) == 0) n++;
    return n;
}
#endif
