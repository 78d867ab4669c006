/* clocks.h -- one timeline for trace files of several hosts (docs/MPI.md,
 * "Clocks"). A file's times are its host's CLOCK_MONOTONIC: files of one host
 * line up as they are, files of different hosts (or time namespaces) do
 * not. Before reading files whose times matter (trace, html), the command
 * calls sp_clocks_align: it reads each file's header and CLOCK chunks (a
 * walk over the chunk headers, no events) and gives each file a map to one
 * clock, rank 0's:
 * - a file on the reference file's clock (rank 0's, as a rule; same host,
 *   realtime offset within a second): the reference's map, whatever its
 *   own points say (unless they are too far off to be of that clock);
 * - a file with the offsets an MPI job measured (at MPI_Init and
 *   MPI_Finalize): its time plus the offset, interpolated between the two
 *   points (drift), extrapolated beyond them; the better point's alone
 *   when the other's round trip is far worse;
 * - a file without them on the clock of one that has them: that file's map;
 * - a file on another clock without them: by the realtime offset its header
 *   records against the reference file's (said on stderr, in one line).
 * The reader (read.c) looks its file up here and maps every time it hands
 * out. Standard input, gzip and Chrome JSON inputs are not looked at: they
 * keep their times. */
#ifndef SP_CLOCKS_H
#define SP_CLOCKS_H

#include <stdint.h>
#include <stdio.h>

enum { SP_CLOCK_AS_IS, SP_CLOCK_MPI, SP_CLOCK_REALTIME };

typedef struct sp_clock {
    const char *path;
    uint64_t pid, start_ns;   /* the file's header (its key here) */
    int64_t realtime_minus_mono;
    char host[64];            /* "" when the file names none (before format 3.2) */
    char prog[64];            /* the header's program name (cut short) */
    uint32_t rank, size;      /* the CLOCK chunk's (0xFFFFFFFF: none; size 0: no MPI job) */
    uint32_t head_rank;       /* the file header's (0xFFFFFFFF: none; MPI_Init gave the rank later) */
    uint32_t npts;
    uint64_t t[2];            /* the points: local time, offset to rank 0's clock */
    int64_t off[2];
    uint64_t rtt[2];
    int mode;                 /* SP_CLOCK_*: how this file is mapped */
    const struct sp_clock *via; /* SP_CLOCK_MPI: whose points (itself, or a file of its clock) */
    int64_t shift;            /* SP_CLOCK_REALTIME */
} sp_clock;

/* The header of a .sprof file (path) into c, and with `chunks` its CLOCK
 * chunks: a walk over the chunk headers with pread, no events. Stops
 * quietly at damage or a short file (the reader proper reports those). 0
 * when the file is a trace of a known version; -1 for anything else
 * (standard input, gzip, Chrome JSON, a file that cannot be opened). */
int sp_clock_probe(const char *path, sp_clock *c, int chunks);
/* Look at files[0..n) and decide each one's map; says on err when files
 * were aligned by their realtime offsets. Forgets what an earlier call
 * decided. */
void sp_clocks_align(char **files, int n, FILE *err);
/* Forget what sp_clocks_align decided: the command that follows reads
 * times as they are (sp_main calls it before each command). */
void sp_clocks_forget(void);
/* The map of the file whose header has this pid and start, or NULL (no
 * call to sp_clocks_align, or a file it did not look at). */
const sp_clock *sp_clock_find(uint64_t pid, uint64_t start_ns);
/* A time of that file on the common clock. */
uint64_t sp_clock_map(const sp_clock *c, uint64_t t);
/* The earliest start of the files looked at, on the common clock (where
 * --window counts from); 0 when none was. */
uint64_t sp_clocks_origin(void);

#endif
