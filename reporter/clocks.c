/* clocks.c -- see clocks.h. */
#define SCOPEPROF_AGGREGATION /* the format's constants and CRC */
#include "clocks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scopeprof.h"

/* What the last sp_clocks_align decided: one entry per file it could read. */
static sp_clock *clocks;
static int nclocks;
static uint64_t origin;

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

static int read_at(int fd, void *buf, size_t n, uint64_t at) {
    return pread(fd, buf, n, (off_t)at) == (ssize_t)n ? 0 : -1;
}

/* A CLOCK chunk's payload (docs/FORMAT.md) into c; the last one of a file
 * holds everything its writer knew. */
static void parse_clock(sp_clock *c, const unsigned char *p, uint32_t len) {
    if (len < SCOPEPROF_CLOCK_FIXED) return;
    uint32_t n = le32(p + 8), hl = le32(p + 12);
    if (n > 2 || (uint64_t)SCOPEPROF_CLOCK_FIXED + (uint64_t)n * SCOPEPROF_CLOCK_POINT + hl > len) return;
    if (le32(p) != 0xFFFFFFFFu) c->rank = le32(p);
    c->size = le32(p + 4);
    c->npts = n;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *q = p + SCOPEPROF_CLOCK_FIXED + i * SCOPEPROF_CLOCK_POINT;
        c->t[i] = le64(q);
        c->off[i] = (int64_t)le64(q + 8);
        c->rtt[i] = le64(q + 16);
    }
    const unsigned char *h = p + SCOPEPROF_CLOCK_FIXED + n * SCOPEPROF_CLOCK_POINT;
    size_t keep = hl < sizeof c->host - 1 ? hl : sizeof c->host - 1;
    memcpy(c->host, h, keep);
    c->host[keep] = 0;
}

int sp_clock_probe(const char *path, sp_clock *c, int chunks) {
    if (strcmp(path, "-") == 0) return -1; /* a pipe cannot be read twice */
    /* Nor a named one, nor anything else that is not a regular file: not
     * even opened (opening a FIFO waits for its writer, or lets it write
     * into a pipe this probe then closes: the command's own read waited for
     * ever). */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    unsigned char h[SCOPEPROF_FILE_HEADER_SIZE], ch[SCOPEPROF_CHUNK_HEADER_SIZE], p[1024];
    int rc = -1;
    memset(c, 0, sizeof *c);
    c->path = path;
    c->rank = c->head_rank = 0xFFFFFFFFu;
    int whole = read_at(fd, h, sizeof h, 0) == 0;
    uint32_t major = whole ? le32(h + 8) & 0xFFFF : 0;
    if (whole && memcmp(h, SCOPEPROF_FILE_MAGIC, 8) == 0 && major >= 1 && major <= SCOPEPROF_FORMAT_MAJOR) {
        c->pid = le64(h + 16);
        c->start_ns = le64(h + 24);
        c->realtime_minus_mono = (int64_t)le64(h + 32);
        c->head_rank = le32(h + 40);
        if (c->head_rank != 0xFFFFFFFFu) c->rank = c->head_rank;
        uint32_t pl = le32(h + 44), keep = pl < sizeof c->prog - 1 ? pl : sizeof c->prog - 1;
        if (read_at(fd, c->prog, keep, sizeof h) != 0) keep = 0;
        c->prog[keep] = 0;
        rc = 0;
        uint64_t at = le32(h + 12);
        for (; chunks && read_at(fd, ch, sizeof ch, at) == 0; at += sizeof ch + le32(ch + 8)) {
            uint32_t type = le32(ch + 4), len = le32(ch + 8);
            if (le32(ch) != SCOPEPROF_CHUNK_MAGIC) break;
            if (type != SCOPEPROF_CHUNK_CLOCK || len > sizeof p) continue;
            if (read_at(fd, p, len, at + sizeof ch) != 0) break;
            uint32_t crc = scopeprof_crc32(0, p, len); /* format 3: continued over the chunk header */
            if (major >= SCOPEPROF_FILE_CRC_SINCE) crc = scopeprof_chunk_crc(crc, ch);
            if (crc != le32(ch + 12)) continue;
            parse_clock(c, p, len);
        }
    }
    close(fd);
    return rc;
}

/* Whether a point's round trip `a` is far worse than the other's `b`: more
 * than 10 times it and over 100 us. Its offset can be off by half of it (a
 * loaded machine: CoMD's MPI_Init point 1.6 ms off with an 8 ms round trip),
 * and a line through it carries that into every time, out of causal order;
 * the better point alone is off by half its own round trip plus the drift
 * since it was taken (tens of us a second at most: docs/MPI.md). 100 us:
 * a round trip takes a few us over shared memory and tens over a network,
 * so one over 100 us was disturbed (a rank descheduled), and below it the
 * line's drift matters more than the noise. */
static int far_worse(uint64_t a, uint64_t b) { return a > 100000 && a / 10 > b; }

/* Offset to rank 0's clock at local time t: the points' line, or the better
 * point's offset alone when the other is far worse. */
static int64_t offset_at(const sp_clock *c, uint64_t t) {
    if (c->npts < 2 || c->t[1] == c->t[0]) return c->npts ? c->off[0] : 0;
    if (far_worse(c->rtt[0], c->rtt[1])) return c->off[1];
    if (far_worse(c->rtt[1], c->rtt[0])) return c->off[0];
    double slope = (double)(c->off[1] - c->off[0]) / (double)(int64_t)(c->t[1] - c->t[0]);
    return c->off[0] + (int64_t)(slope * (double)(int64_t)(t - c->t[0]));
}

uint64_t sp_clock_map(const sp_clock *c, uint64_t t) {
    if (!c) return t;
    switch (c->mode) {
    case SP_CLOCK_MPI: return t + (uint64_t)offset_at(c->via, t);
    case SP_CLOCK_REALTIME: return t + (uint64_t)c->shift;
    default: return t;
    }
}

/* One clock: the same host (or one unnamed) and realtime offsets within a
 * second of each other (another boot, or a time namespace, differs by far
 * more; NTP's slewing of one clock, by far less). */
static int same_clock(const sp_clock *a, const sp_clock *b) {
    int64_t d = a->realtime_minus_mono - b->realtime_minus_mono;
    return (!a->host[0] || !b->host[0] || strcmp(a->host, b->host) == 0) && d < 1000000000 && d > -1000000000;
}

void sp_clocks_forget(void) {
    free(clocks);
    clocks = NULL;
    nclocks = 0;
    origin = 0;
}

/* Whether c's points allow it to be on ref's clock: on one clock rank 0's
 * two reads bracket the rank's, so an offset is within half its round trip
 * of the true one (ref's, itself within half of its own). A point further
 * off is another clock that only looks like ref's (a host of the same name
 * booted in the same second). */
static int points_fit(const sp_clock *c, const sp_clock *ref) {
    for (uint32_t i = 0; i < c->npts; i++) {
        uint64_t d = (uint64_t)c->off[i] - (uint64_t)offset_at(ref, c->t[i]); /* no overflow from a bad file */
        if ((d >> 63 ? -d : d) > (c->rtt[i] + ref->rtt[0] + ref->rtt[1]) / 2) return 0;
    }
    return 1;
}

/* Whose points map c, or NULL (none: its times as they are, or realtime).
 * A file on ref's clock is mapped as ref is, whatever its own points say:
 * one clock has one map (the ranks of one node line up as they are, and a
 * loaded machine makes their points noisy: CoMD's 1.6 ms off at MPI_Init
 * put 12 of 102 MPI_Sendrecv pairs out of order). Else its own points;
 * else those that map a file of its clock that has points. */
static const sp_clock *points_for(const sp_clock *c, const sp_clock *ref) {
    if (same_clock(c, ref) && points_fit(c, ref)) return ref->npts ? ref : NULL;
    if (c->npts) return c;
    for (int j = 0; j < nclocks; j++)
        if (clocks[j].npts && same_clock(c, &clocks[j])) return points_for(&clocks[j], ref);
    return NULL;
}

void sp_clocks_align(char **files, int n, FILE *err) {
    sp_clocks_forget();
    clocks = calloc((size_t)(n > 0 ? n : 1), sizeof *clocks);
    if (!clocks) return;
    for (int i = 0; i < n; i++)
        if (sp_clock_probe(files[i], &clocks[nclocks], 1) == 0) nclocks++;
    if (!nclocks) return;
    /* The reference: MPI's rank 0, else a file with offsets to it, else the
     * lowest rank, else the first file. */
    const sp_clock *ref = &clocks[0];
    for (int i = 1; i < nclocks; i++) {
        const sp_clock *c = &clocks[i];
        int a = c->size && c->rank == 0, b = ref->size && ref->rank == 0;
        if (a != b ? a : (c->npts != 0) != (ref->npts != 0) ? c->npts != 0 : c->rank < ref->rank) ref = c;
    }
    int realtime = 0;
    for (int i = 0; i < nclocks; i++) {
        sp_clock *c = &clocks[i];
        const sp_clock *via = points_for(c, ref);
        if (via) {
            c->mode = SP_CLOCK_MPI;
            c->via = via;
        } else if (!same_clock(c, ref)) {
            /* Unix time is the one clock both know: ref's time of c's
             * instant t is t + rt(c) - rt(ref), then ref's own map. */
            c->mode = SP_CLOCK_REALTIME;
            c->shift = c->realtime_minus_mono - ref->realtime_minus_mono;
            if (ref->npts) c->shift += offset_at(ref, ref->start_ns);
            realtime++;
        }
    }
    for (int i = 0; i < nclocks; i++) {
        uint64_t s = sp_clock_map(&clocks[i], clocks[i].start_ns);
        if (i == 0 || s < origin) origin = s;
    }
    if (realtime)
        fprintf(err, "scopeprof: %d file(s) on another clock than %s%s%s%s and without MPI clock "
                     "offsets: aligned by the realtime offsets their headers record (as close as the "
                     "hosts' clocks are kept together: typically a millisecond or better with NTP)\n",
                realtime, ref->path, ref->host[0] ? " (host " : "", ref->host, ref->host[0] ? ")" : "");
}

const sp_clock *sp_clock_find(uint64_t pid, uint64_t start_ns) {
    for (int i = 0; i < nclocks; i++)
        if (clocks[i].pid == pid && clocks[i].start_ns == start_ns) return &clocks[i];
    return NULL;
}

uint64_t sp_clocks_origin(void) { return origin; }
