/* trace_read.h -- a small, strict reader of .sprof files for the GPU tests,
 * written from docs/FORMAT.md (chunk types 1-6) and independent of reporter/.
 * Everything is loaded into flat arrays in file order. */
#ifndef TRACE_READ_H
#define TRACE_READ_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tr_event {
    uint32_t thread, site, depth; /* depth as stored (bit 31: GPU scope) */
    uint64_t start, end;
} tr_event;

typedef struct tr_gpu {
    uint32_t thread;
    uint64_t start, end, launch, stream;
    uint32_t site, device, status;
} tr_gpu;

typedef struct tr_trace {
    char *names[4096]; /* site id -> name (NULL: undefined) */
    tr_event *ev;
    size_t nev;
    tr_gpu *gpu;
    size_t ngpu;
    char devices[16][65];
    uint32_t devices_seen; /* bit mask */
    int events_chunks, gpu_chunks, has_end;
    /* EVENTS chunks written with type 4096 instead of 3: the header's
     * SCOPEPROF_CHUNK_EVENTS buffer-size macro (4096) shadows the chunk type
     * enum of the same name (see docs/GPU.md, known issues). Read as EVENTS
     * so the GPU tests can run; test_gpu_bugs asserts there are none. */
    int events_chunks_4096;
    uint64_t end_total;
    int bad; /* a CRC, magic or length error stopped reading */
} tr_trace;

static inline uint32_t tr_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tr_u64(const unsigned char *p) {
    return (uint64_t)tr_u32(p) | (uint64_t)tr_u32(p + 4) << 32;
}

static inline uint32_t tr_crc32(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static inline void tr_free(tr_trace *t) {
    for (int i = 0; i < 4096; i++) free(t->names[i]);
    free(t->ev);
    free(t->gpu);
    memset(t, 0, sizeof *t);
}

/* Returns 0 when the file was read to its end without error. */
static inline int tr_load(tr_trace *t, const char *path) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
    size_t n = b ? fread(b, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!b || n != (size_t)size || n < 48 || memcmp(b, "SCOPEPRF", 8) != 0) {
        free(b);
        t->bad = 1;
        return -1;
    }
    size_t off = tr_u32(b + 12);
    while (off + 16 <= n) {
        uint32_t type = tr_u32(b + off + 4), len = tr_u32(b + off + 8);
        const unsigned char *p = b + off + 16;
        if (tr_u32(b + off) != 0x4B4E4843u || off + 16 + len > n || tr_crc32(p, len) != tr_u32(b + off + 12)) {
            t->bad = 1;
            break;
        }
        if (type == 1) {
            uint32_t cnt = tr_u32(p);
            const unsigned char *q = p + 4;
            for (uint32_t i = 0; i < cnt; i++) {
                uint32_t id = tr_u32(q), ln = tr_u32(q + 8), lf = tr_u32(q + 12), lu = tr_u32(q + 16);
                if (id < 4096) {
                    free(t->names[id]);
                    t->names[id] = (char *)calloc(1, ln + 1);
                    if (t->names[id]) memcpy(t->names[id], q + 20, ln);
                }
                q += 20 + ln + lf + lu;
            }
        } else if (type == 3 || type == 4096) {
            t->events_chunks_4096 += type == 4096;
            uint32_t th = tr_u32(p), cnt = tr_u32(p + 4);
            tr_event *v = (tr_event *)realloc(t->ev, (t->nev + cnt) * sizeof *v);
            if (!v) break;
            t->ev = v;
            for (uint32_t i = 0; i < cnt; i++) {
                const unsigned char *q = p + 8 + (size_t)i * 24;
                tr_event e = {th, tr_u32(q + 16), tr_u32(q + 20), tr_u64(q), tr_u64(q + 8)};
                t->ev[t->nev++] = e;
            }
            t->events_chunks++;
        } else if (type == 4) {
            t->has_end = 1;
            t->end_total = tr_u64(p);
        } else if (type == 5) {
            uint32_t th = tr_u32(p), cnt = tr_u32(p + 4);
            tr_gpu *v = (tr_gpu *)realloc(t->gpu, (t->ngpu + cnt) * sizeof *v);
            if (!v) break;
            t->gpu = v;
            for (uint32_t i = 0; i < cnt; i++) {
                const unsigned char *q = p + 8 + (size_t)i * 48;
                tr_gpu g = {th, tr_u64(q), tr_u64(q + 8), tr_u64(q + 16), tr_u64(q + 24),
                            tr_u32(q + 32), tr_u32(q + 36), tr_u32(q + 40)};
                t->gpu[t->ngpu++] = g;
            }
            t->gpu_chunks++;
        } else if (type == 6) {
            uint32_t d = tr_u32(p), ln = tr_u32(p + 4);
            if (d < 16) {
                snprintf(t->devices[d], sizeof t->devices[d], "%.*s", (int)(ln < 64 ? ln : 64), p + 8);
                t->devices_seen |= 1u << d;
            }
        }
        off += 16 + len;
    }
    free(b);
    return t->bad ? -1 : 0;
}

static inline const char *tr_name(const tr_trace *t, uint32_t site) {
    return site < 4096 && t->names[site] ? t->names[site] : "<unknown>";
}

/* Pair each GPU-flagged event with its GPU record as FORMAT.md says: the
 * thread's next GPU record, if its launch time equals the event's start.
 * pair[i] = index into t->gpu, or -1. Returns the number of flagged events
 * left without a record (0 in a consistent file). Records are consumed in
 * file order per thread, so a GPU chunk must precede the events it covers. */
static inline size_t tr_pair(const tr_trace *t, long *pair) {
    size_t unpaired = 0;
    size_t next[256] = {0}; /* per thread: next GPU record index to look at */
    for (size_t i = 0; i < t->nev; i++) {
        const tr_event *e = &t->ev[i];
        pair[i] = -1;
        if (!(e->depth & 0x80000000u) || e->thread >= 256) continue;
        size_t *k = &next[e->thread];
        while (*k < t->ngpu && t->gpu[*k].thread != e->thread) (*k)++;
        if (*k < t->ngpu && t->gpu[*k].launch == e->start) pair[i] = (long)(*k)++;
        else unpaired++;
    }
    return unpaired;
}
#endif
