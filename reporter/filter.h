/* filter.h -- for `scopeprof trace` on big traces: which scopes to keep
 * (by name, thread, time window, duration), and progress on stderr
 * (gzip output: gz.h). docs/REPORTER.md. */
#ifndef SP_FILTER_H
#define SP_FILTER_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "read.h"

typedef struct sp_filter {
    const char *name;        /* substring of the scope name, or a glob (fnmatch)
                                when it holds * ? or [ ; NULL: any */
    const char *thread;      /* thread name the same way, or a number: the
                                thread's tid or its index in the file */
    int has_window;
    uint64_t from_ns, to_ns; /* --window, since the start of the file (of the earliest file, once aligned: clocks.h) */
    uint64_t min_dur;        /* ns */
} sp_filter;

/* Parse "--window A:B" (either side may be empty: from the start, to the
 * end) and "--min-dur D". A time is a number with a unit: ns, us, ms or s
 * ("1.5ms"); without one, microseconds (the unit of trace JSON). Return 0,
 * or -1 with a message on err. */
int sp_filter_window(sp_filter *f, const char *v, FILE *err);
/* A time as those options write it ("1.5ms", "30us", "2s", "100ns"; no unit:
 * microseconds) in *ns: 0, or -1 when it is not one. */
int sp_parse_time(const char *s, uint64_t *ns);
int sp_filter_min_dur(sp_filter *f, const char *v, FILE *err);
int sp_filter_active(const sp_filter *f);
/* Keep this scope (or memory record: only the window applies)? A scope is
 * kept when it overlaps the window, whose times count from the header's
 * start of the file (a .sprof file's start of profiling; 0 for Chrome JSON,
 * whose window is then in the JSON's own ts), or for files put on one clock
 * (clocks.h) from the earliest start among them. The steps' track comes as
 * slot SP_STEPS_SLOT (chrome_write.h): its thread is "Steps", its name "ProfilerStep". */
int sp_filter_keep(void *f, const sp_reader *r, uint32_t slot, const sp_event *e);

/* Progress on err while a long conversion runs, at most twice a second:
 * file, events read, bytes written, elapsed time; one last line at the end.
 * It also watches the size of the JSON: past SP_JSON_VIEWER_MAX bytes, one
 * warning line, whether progress is shown or not. */
typedef struct sp_progress {
    int on, tty;
    FILE *err, *out;
    uint64_t (*size)(void *ctx); /* bytes of JSON written so far, or NULL */
    void *size_ctx;
    int warned; /* the size warning was given */
    const char *file;
    int file_i, nfiles;
    uint64_t events, at_check;
    struct timespec t0, last;
    int printed; /* a \r line is on the terminal */
    sp_callbacks inner;
} sp_progress;

/* mode: 1 --progress, 0 --no-progress, -1 default: when err is a terminal
 * and the output does not go to that terminal too. */
void sp_progress_init(sp_progress *p, int mode, FILE *err, FILE *out, int to_stdout);
/* The largest JSON trace that browser viewers open: 512 MiB, V8's longest
 * string (2^29 - 24 characters on 64-bit): chrome://tracing, the DevTools
 * performance panel and speedscope parse the file as one JavaScript string,
 * and Perfetto UI's in-browser trace processor (about 2 GB of memory, the
 * trace taking 2-4 times its size there) fails near it too
 * (docs/REPORTER.md, "Big traces"). */
#define SP_JSON_VIEWER_MAX (512ull << 20)
/* Watch the output's size through size(ctx) (the trace writer's byte
 * count, which gzip and pipes do not hide as ftello would). */
void sp_progress_watch(sp_progress *p, uint64_t (*size)(void *ctx), void *ctx);
/* The callbacks to read file i through: inner's, counting events. */
sp_callbacks sp_progress_wrap(sp_progress *p, const sp_callbacks *inner, const char *file, int i,
                              int nfiles);
void sp_progress_done(sp_progress *p);

#endif
