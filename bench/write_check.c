/* write_check.c -- what the writer makes of a fixed set of events: the bytes
 * of the EVENTS chunks and the exit summary's aggregation, independent of
 * any clock. bench/write_check.sh builds it against two versions of the
 * header and compares: a change meant only to speed up the writer must give
 * the same bytes and the same numbers.
 *
 * It registers a few sites, then hands scopeprof__write_span (internal) a
 * buffer of slots made by a seeded generator: nested scopes in close order,
 * long records (long durations, deep scopes), GPU-flagged scopes with no GPU
 * record, and memory records; the clock's conversion is fixed, and the
 * thread's id and name too. Usage: write_check OUT.sprof > summary.txt
 */
#define _GNU_SOURCE
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define NSLOTS 400000u
static scopeprof__slot slots[NSLOTS + 2];
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static uint32_t n;
static void put(uint64_t start, uint64_t end, uint32_t site, uint32_t depth) {
    uint64_t d = end - start;
    if (!(depth & SCOPEPROF_DEPTH_MEM) && d >> 27 == 0 && site >> SCOPEPROF_REC_SITE_BITS == 0 &&
        (depth & ~SCOPEPROF_DEPTH_GPU) >> SCOPEPROF_REC_DEPTH_BITS == 0) {
        slots[n++] = (scopeprof__slot){start, (uint32_t)d, scopeprof__key_pack(site, depth)};
        return;
    }
    slots[n++] = (scopeprof__slot){start, SCOPEPROF_REC_LONG_MARK, depth};
    slots[n++] = (scopeprof__slot){end, site, 0};
}

/* A scope at `depth` starting at *now with random children; closes in order. */
static void scope(uint64_t *now, uint32_t depth, uint32_t nsites) {
    uint64_t start = *now;
    int kids = depth < 6 ? (int)(next() % 4) : 0;
    if (depth >= 4090) kids = depth < 4100; /* one deep chain: long records for depth */
    for (int k = 0; k < kids && n + 64 < NSLOTS; k++) {
        *now += next() % 50;
        if (next() % 5 == 0) /* an allocation or free made in this scope */
            put(*now, (uint64_t)(int64_t)((int64_t)(next() % 4096) - 2048), 0,
                SCOPEPROF_DEPTH_MEM | (uint32_t)(next() % 2) << 24 | (depth + 1));
        scope(now, depth + 1, nsites);
    }
    *now += next() % 1000 + (next() % 97 == 0 ? (1ull << 28) : 0); /* now and then a long one */
    uint32_t site = 1 + (uint32_t)(next() % nsites);
    uint32_t flags = next() % 13 == 0 ? SCOPEPROF_DEPTH_GPU : 0;
    put(start, *now, site, depth | flags);
}

/* The registry's fields, in a header from before (flat struct) and after
 * ABI 11 (sub-structs; from 12 the summary is folded from site sums). */
#if SCOPEPROF__ABI >= 12
#define G_CLOCK(g) (g)->clock
#define G_OUT(g) (g)->out
#define SUMMARY(g) (scopeprof__sum_fold(g, 0), &(g)->sum.agg)
#elif SCOPEPROF__ABI >= 11
#define G_CLOCK(g) (g)->clock
#define G_OUT(g) (g)->out
#define SUMMARY(g) (&(g)->sum.agg)
#else
#define G_CLOCK(g) (*(g))
#define G_OUT(g) (*(g))
#define SUMMARY(g) (&(g)->agg)
#endif

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: write_check OUT.sprof\n");
        return 2;
    }
    /* Sites 1-5, registered in this order. */
    { PROFILE_SCOPE("alpha"); }
    { PROFILE_SCOPE("beta"); }
    { PROFILE_SCOPE("gamma"); }
    { PROFILE_SCOPE("delta"); }
    { PROFILE_SCOPE("epsilon"); }
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__thread *t = scopeprof__tls;
    if (!g || !t) return 1;
    G_CLOCK(g).ns_per_tick = 0.37; /* a fixed clock: calibration is skipped */
    G_CLOCK(g).tick0 = 1000;
    G_CLOCK(g).ns0 = 123456789;
    t->tid = 4242;
    t->explicit_name = 1;
    snprintf(t->name, sizeof t->name, "check");
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return 1;
    struct stat st;
    if (fstat(fd, &st) != 0) return 1;
    int saved = G_OUT(g).fd; /* ours instead, as the writer checks it before each write */
    G_OUT(g).fd = fd;
    G_OUT(g).fd_dev = (uint64_t)st.st_dev;
    G_OUT(g).fd_ino = (uint64_t)st.st_ino;
    uint64_t now = 5000;
    for (int span = 0; span < 8; span++) { /* chunks of different sizes */
        n = 0;
        while (n + 64 < NSLOTS / (uint32_t)(8 - span)) scope(&now, 0, 5);
        if (span == 3) /* a deep chain, past the 12 bits of a short key */
            scope(&now, 4090, 5);
        scopeprof__write_span(g, t, slots, n);
    }
    G_OUT(g).fd = saved;
    close(fd);
    const scopeprof_agg *a = SUMMARY(g);
    printf("events %" PRIu64 " unordered %" PRIu64 " gpu %d mem %d gpu_mem %d\n", a->events,
           a->unordered, a->has_gpu, a->has_mem, a->has_gpu_mem);
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        printf("%s %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
               " %" PRId64 " %" PRId64 "\n",
               r->name, (uint64_t)r->count, r->total_ns, r->self_ns, r->gpu_total_ns, r->gpu_self_ns,
               r->cpu_mem, r->self_cpu_mem, r->gpu_mem, r->self_gpu_mem);
    }
    scopeprof_table_print(stdout, a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
    return 0;
}
