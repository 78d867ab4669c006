/* aggregate.h -- the aggregation over files: trace files of either format
 * read into one table of the header's aggregation (scopeprof_agg), one row
 * per name, site, thread, input shape, stack or folded stack. Files merge:
 * each file's thread slots and site ids are its own, its calibration too.
 * `table`, `stacks`, `html` and `flame` all count through it, so that the
 * numbers are computed in one place for every command. */
#ifndef SP_AGGREGATE_H
#define SP_AGGREGATE_H

#include <stdint.h>
#include <stdio.h>

#ifndef SCOPEPROF_AGGREGATION
#define SCOPEPROF_AGGREGATION
#endif
#include "buf.h"
#include "read.h"
#include "scopeprof.h"
#include "tree.h"

/* Groupings: what makes a row (--group-by; folded: the stacks command's rows). */
enum { SP_GROUP_NAME, SP_GROUP_SITE, SP_GROUP_STACK, SP_GROUP_FOLDED, SP_GROUP_SHAPE, SP_GROUP_THREAD,
       SP_GROUP_RANK };
/* --group-by G (NULL: name): name, site, shape, thread, rank or stack:N
 * (N = 1..1000, in *n), and torch's words for two of them: input_shape
 * (shape) and stack (stack:SP_STACK_DEFAULT). Returns 0, or -1 for anything
 * else. */
#define SP_STACK_DEFAULT 5 /* the group_by_stack_n of PyTorch's profiler recipe */
int sp_group_parse(const char *g, int *group, uint32_t *n);
#define SP_GROUP_VALID "name, site, thread, rank (process), shape (input_shape), stack:N (N = 1..1000; stack: 5)"

/* What sp_aggregate's caller sees besides the table: every events callback
 * of every file read (file: its index in files[]), before the aggregation
 * sees them, and the end of each file, while its tables (steps, threads)
 * are still valid. Either may be NULL. */
typedef struct sp_tap {
    void *ctx;
    void (*events)(void *ctx, int file, const sp_reader *r, const sp_thread *t, const sp_event *ev,
                   uint32_t n);
    void (*finish)(void *ctx, int file, const sp_reader *r);
} sp_tap;

/* The aggregation of the files read so far: the header's table (agg) and
 * what the reporter keeps beside it. */
typedef struct sp_agg_ctx {
    scopeprof_agg agg;
    int group;
    uint32_t stack_n;
    int per_thread;       /* folded: each stack under a frame naming its thread */
    uint32_t thread_base; /* agg thread slots used by earlier files */
    int thread_by_label;  /* --group-by thread in a table of one file that is merged with others' to be
                           * compared (--per-rank's columns, diff's sides): a thread is its label there
                           * (its slot differs from file to file), and a pool's threads are one row */
    uint32_t nthreads;    /* slots of this file */
    const sp_reader *rd;
    uint32_t *site_row; /* per site id of this file: row + 1, 0 unknown yet */
    uint32_t nsite_row;
    sp_tree tree;
    struct sp_stack_cache *stacks; /* stack and folded grouping: rows by stack (aggregate.c) */
    uint64_t tree_cut; /* the files' events grouped without the scopes above them (sp_tree.cut) */
    sp_out key, extra; /* scratch strings */
    int oom;
    uint64_t win_lo, win_hi; /* --steps: keep scopes inside [lo, hi] ns */
    uint32_t rank;           /* of the last file's header */
    /* MEMORY records over the files read: largest peak per device. */
    int64_t peak[SP_MAX_DEVICES];
    uint64_t peak_seen; /* bit mask of devices */
    uint64_t unknown_frees;
    int mem_files;      /* files with MEMORY records */
    /* Sites of device events (sp_gpu_info.timed) of a Chrome trace, per site
     * id of the file: their rows are DEVICE rows, the rest LAUNCHER rows
     * (scopeprof_row.gpu_role); every row of a .sprof file is a DEVICE row. */
    unsigned char *dev_site;
    uint32_t ndev_site;
    /* Shape grouping of a .sprof file: rows of (site, interned shape),
     * cached (aggregate.c, shape_row); cleared at each file's header. */
#define SP_SHAPE_HITS 64u
    struct sp_shape_hit { const char *shape; uint32_t site, row; } shape_hit[SP_SHAPE_HITS];
    uint64_t undefined; /* events whose site id no SITES chunk had defined yet */
    int chrome;         /* the last file read is Chrome JSON */
    const sp_tap *tap;  /* sp_aggregate's caller sees the events too, or NULL */
    int file;           /* index of the file being read, for tap */
    int raw;            /* --no-compensate: a file's OVERHEAD calibration is shown, not applied */
    /* Thread grouping: per row, the thread it counts (slot UINT32_MAX: none,
     * as ProfilerStep*), for sp_agg_thread_labels; and the files read. */
    struct sp_row_thread { uint64_t tid; uint32_t slot, index, file; } *row_thread;
    uint32_t nrow_thread;
    uint32_t files_read;
} sp_agg_ctx;

void sp_agg_ctx_init(sp_agg_ctx *c, int group, uint32_t stack_n);
/* The CSV column and JSON key of the grouping's text column (its
 * extra_header: "Source Location", "Stack", "Input Shapes", "Thread"). */
const char *sp_extra_field(const scopeprof_agg *a);
void sp_agg_ctx_free(sp_agg_ctx *c);
/* The reader callbacks that add a file to c, for callers that read it
 * themselves (sp_report_mem reads memory). */
sp_callbacks sp_agg_callbacks(sp_agg_ctx *c);
/* Read one file into the aggregation, report problems on err; returns the
 * reader status. */
int sp_agg_file(sp_agg_ctx *c, const char *path, FILE *err);
/* Thread grouping, once the files are read: threads that would show the same
 * Thread label (unnamed threads all show the program's name, a pool's
 * threads one name) get a suffix that tells them apart, the first of
 * "(tid N)", "(thread I)" (the file's thread index) and "(file F, thread I)"
 * that does; a label only one thread has stays as it is. Rows of merged
 * tables (--per-rank) know no threads and are left. Returns 0, or -1 when
 * out of memory (the labels then stay as they were). */
int sp_agg_thread_labels(sp_agg_ctx *c);
/* The header's rule (scopeprof_impl.c): whether what row r shows of its
 * compensated sums was clamped. */
int sp_comp_clamped(const scopeprof_agg *a, const scopeprof_row *r);
/* Below the text table: peak memory per device, frees never recorded. */
void sp_agg_memory_footer(FILE *out, const sp_agg_ctx *c);
/* *sum += v, held at INT64_MAX / INT64_MIN instead of overflowing. */
void sp_sat_add(int64_t *sum, int64_t v);
/* Add the table of src (files read apart, same grouping) to dst, row by
 * row: every column is a sum, so merging tables equals reading the files
 * into one; memory peaks and the calibration's range merge too. each (unless
 * NULL) is told every row of src and the row of dst it went to (--per-rank
 * keeps per-file figures with it). Returns 0, or -1 when out of memory. */
int sp_agg_merge(sp_agg_ctx *dst, const sp_agg_ctx *src,
                 int (*each)(void *ctx, uint32_t dst_row, const scopeprof_row *src_row), void *ctx);

/* Read files[0..nfiles) into *out (initialised here; the caller frees it
 * with scopeprof_agg_free), as `scopeprof table` does (folded == 0: one row
 * per name) or `scopeprof stacks` (folded != 0: one row per stack, its key
 * the folded stack). Problems are reported on err as those commands report
 * them. footer (unless NULL) gets what `table` prints below the table
 * (peak memory, unknown frees). Returns the exit status (SP_EXIT_OK or SP_EXIT_INPUT), and in *usable
 * the number of files that could be read at least in part. */
#define SP_FOLDED_PER_THREAD 2 /* folded, each stack under a frame naming its thread */
int sp_aggregate(char **files, int nfiles, int folded, const sp_tap *tap, scopeprof_agg *out, FILE *footer,
                 int *usable, FILE *err);

#endif
