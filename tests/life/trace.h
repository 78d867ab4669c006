/* trace.h -- a reader of scopeprof trace files for the life-cycle tests.
 *
 * Written from docs/FORMAT.md (and the header's notes on chunk types 5-8),
 * not from the reporter's reader, so the two check each other. Unlike
 * tests/core/tracefile.h it keeps everything the tests of issues 5 and 6 look
 * at: the header's pid and rank, site names at full length (a 64 KiB name must
 * come back whole), MEM events with their signed byte counts, the STEPS and
 * MEMORY chunks. No fixed limits: names and tables grow as needed.
 *
 * A file cut short is read up to its last whole chunk (as FORMAT.md asks of
 * readers); `stop` then says why it stopped, and `ok` is 0. Needs
 * scopeprof_crc32, i.e. scopeprof.h included before it (SCOPEPROF_AGGREGATION
 * is enough). */
#ifndef TESTS_LIFE_TRACE_H
#define TESTS_LIFE_TRACE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tr_event {
    uint64_t start, end; /* for a MEM event, end is the signed byte count */
    uint32_t site, flags, thread;
} tr_event;

typedef struct tr_site {
    char *name; /* NUL-terminated copy, full length */
    uint32_t name_len, line;
} tr_site;

typedef struct tr_step {
    uint64_t n, start, end;
} tr_step;

typedef struct tr_mem {
    uint32_t device;
    int64_t peak, final;
    uint64_t unknown_frees;
} tr_mem;

typedef struct trace {
    int ok;           /* header fine, every chunk whole with a good CRC, no trailing bytes */
    int exists;       /* the file could be opened */
    char stop[160];   /* why ok is 0 */
    uint64_t pid;
    uint64_t start_ns;
    uint32_t rank;    /* 0xFFFFFFFF: none */
    int has_end;
    uint64_t end_total;
    tr_event *ev;     /* all events (scopes and MEM), in file order */
    uint64_t nev;
    tr_site *sites;   /* by id; sites[0] unused */
    uint32_t nsites;  /* highest id + 1 */
    tr_step *steps;
    uint32_t nsteps;
    uint32_t steps_chunks;
    tr_mem mem[64];
    uint32_t nmem;
    uint32_t memory_chunks;
    uint32_t nthreads; /* 1 + highest thread index */
} trace;

#define TR_MEM_FLAG 0x40000000u
#define TR_GPU_FLAG 0x80000000u

static inline uint32_t tr_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tr_u64(const unsigned char *p) {
    return tr_u32(p) | (uint64_t)tr_u32(p + 4) << 32;
}

static inline void tr_free(trace *t) {
    for (uint32_t i = 0; i < t->nsites; i++) free(t->sites[i].name);
    free(t->sites);
    free(t->ev);
    free(t->steps);
    memset(t, 0, sizeof *t);
}

static inline void tr_site_set(trace *t, uint32_t id, const unsigned char *name, uint32_t len,
                               uint32_t line) {
    if (id >= t->nsites) {
        uint32_t n = id + 1;
        t->sites = (tr_site *)realloc(t->sites, n * sizeof *t->sites);
        memset(t->sites + t->nsites, 0, (n - t->nsites) * sizeof *t->sites);
        t->nsites = n;
    }
    free(t->sites[id].name);
    t->sites[id].name = (char *)malloc(len + 1);
    memcpy(t->sites[id].name, name, len);
    t->sites[id].name[len] = 0;
    t->sites[id].name_len = len;
    t->sites[id].line = line;
}

/* Read `path` into *t (zeroed first). Returns t->ok. */
static inline int tr_read(const char *path, trace *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(t->stop, sizeof t->stop, "cannot open %s", path);
        return 0;
    }
    t->exists = 1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
    size_t got = fread(b, 1, (size_t)(size > 0 ? size : 0), f);
    fclose(f);
    if (size < 48 || got != (size_t)size || memcmp(b, "SCOPEPRF", 8) != 0 ||
        tr_u32(b + 12) > (uint32_t)size) {
        snprintf(t->stop, sizeof t->stop, "bad header (%ld bytes)", size);
        free(b);
        return 0;
    }
    t->pid = tr_u64(b + 16);
    t->start_ns = tr_u64(b + 24);
    t->rank = tr_u32(b + 40);
    size_t pos = tr_u32(b + 12), cap = 0;
    while (pos < (size_t)size) {
        if (pos + 16 > (size_t)size) {
            snprintf(t->stop, sizeof t->stop, "partial chunk header at %zu", pos);
            break;
        }
        const unsigned char *h = b + pos, *p = h + 16;
        uint32_t type = tr_u32(h + 4), len = tr_u32(h + 8);
        if (tr_u32(h) != 0x4B4E4843u || pos + 16 + (size_t)len > (size_t)size) {
            snprintf(t->stop, sizeof t->stop, "bad or cut chunk at %zu", pos);
            break;
        }
        if (scopeprof_crc32(0, p, len) != tr_u32(h + 12)) {
            snprintf(t->stop, sizeof t->stop, "bad crc at %zu", pos);
            break;
        }
        if (type == 1) { /* SITES */
            const unsigned char *q = p + 4;
            for (uint32_t i = 0, n = tr_u32(p); i < n; i++) {
                uint32_t ln = tr_u32(q + 8), lf = tr_u32(q + 12), lu = tr_u32(q + 16);
                tr_site_set(t, tr_u32(q), q + 20, ln, tr_u32(q + 4));
                q += 20 + (size_t)ln + lf + lu;
            }
        } else if (type == 2) { /* THREAD */
            if (tr_u32(p) + 1 > t->nthreads) t->nthreads = tr_u32(p) + 1;
        } else if (type == 3) { /* EVENTS */
            uint32_t idx = tr_u32(p), n = tr_u32(p + 4);
            if (idx + 1 > t->nthreads) t->nthreads = idx + 1;
            if (t->nev + n > cap) {
                cap = (t->nev + n) * 2;
                t->ev = (tr_event *)realloc(t->ev, cap * sizeof *t->ev);
            }
            for (uint32_t i = 0; i < n; i++) {
                const unsigned char *e = p + 8 + (size_t)i * 24;
                tr_event *o = &t->ev[t->nev++];
                o->start = tr_u64(e);
                o->end = tr_u64(e + 8);
                o->site = tr_u32(e + 16);
                o->flags = tr_u32(e + 20);
                o->thread = idx;
            }
        } else if (type == 4) { /* END */
            t->has_end = 1;
            t->end_total = tr_u64(p);
        } else if (type == 7) { /* STEPS */
            uint32_t n = tr_u32(p);
            t->steps_chunks++;
            t->steps = (tr_step *)realloc(t->steps, (t->nsteps + n) * sizeof *t->steps);
            for (uint32_t i = 0; i < n; i++) {
                const unsigned char *s = p + 8 + (size_t)i * 24;
                t->steps[t->nsteps++] = (tr_step){tr_u64(s), tr_u64(s + 8), tr_u64(s + 16)};
            }
        } else if (type == 8) { /* MEMORY */
            uint32_t n = tr_u32(p);
            t->memory_chunks++;
            for (uint32_t i = 0; i < n && t->nmem < 64; i++) {
                const unsigned char *m = p + 4 + (size_t)i * 32;
                t->mem[t->nmem++] = (tr_mem){tr_u32(m), (int64_t)tr_u64(m + 8),
                                             (int64_t)tr_u64(m + 16), tr_u64(m + 24)};
            }
        }
        pos += 16 + (size_t)len;
    }
    t->ok = !t->stop[0];
    free(b);
    return t->ok;
}

static inline const char *tr_name(const trace *t, uint32_t site) {
    return site && site < t->nsites && t->sites[site].name ? t->sites[site].name : "<unknown>";
}

/* Scope events (not MEM) named `name`. */
static inline uint64_t tr_count(const trace *t, const char *name) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++)
        n += !(t->ev[i].flags & TR_MEM_FLAG) && strcmp(tr_name(t, t->ev[i].site), name) == 0;
    return n;
}

/* Scope events whose name starts with `prefix`. */
static inline uint64_t tr_count_prefix(const trace *t, const char *prefix) {
    uint64_t n = 0, l = strlen(prefix);
    for (uint64_t i = 0; i < t->nev; i++)
        n += !(t->ev[i].flags & TR_MEM_FLAG) && strncmp(tr_name(t, t->ev[i].site), prefix, l) == 0;
    return n;
}

static inline uint64_t tr_scopes(const trace *t) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->nev; i++) n += !(t->ev[i].flags & TR_MEM_FLAG);
    return n;
}
#endif
