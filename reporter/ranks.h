/* ranks.h -- `scopeprof table --per-rank`: the table across files (one per
 * rank), with the header's cross-rank table (scopeprof_ranks, the same one
 * the job table at MPI_Finalize prints: include/parts/mpi.h) for text, and
 * its figures as CSV columns and JSON fields; and the rule that the files
 * a command merges as one job's ranks hold each rank once. */
#ifndef SP_RANKS_H
#define SP_RANKS_H

#include <stdio.h>

#ifndef SCOPEPROF_AGGREGATION
#define SCOPEPROF_AGGREGATION
#endif
#include "aggregate.h"
#include "buf.h"
#include "scopeprof.h"

typedef struct sp_ranks {
    scopeprof_ranks x; /* per row of the merged table, per file */
    char **files;      /* names, for max_file */
} sp_ranks;

/* 0, or -1 when out of memory. */
int sp_ranks_init(sp_ranks *rs, char **files, int nfiles);
void sp_ranks_free(sp_ranks *rs);
/* File `file`'s row `row` of the merged table (a scopeprof_row of that
 * file's own table); files in order. */
int sp_ranks_add(sp_ranks *rs, int file, uint32_t row, const scopeprof_row *r);
/* File `file`'s table (`one`: that file read alone, in the grouping of
 * `all`) merged into `all`, each of its rows' figures noted for the file,
 * and the file's rank taken; `one` is freed. Files in order. Returns 0, or
 * -1 when out of memory. The table across ranks of `table --per-rank` and
 * of `html` comes from this. */
int sp_ranks_merge(sp_ranks *rs, int file, sp_agg_ctx *all, sp_agg_ctx *one);
/* The text table: scopeprof_ranks_print's, with the line saying how many
 * rows --limit left out under the table and its totals (as under `table`'s),
 * before the straggler and the waits. */
void sp_ranks_print(FILE *out, const scopeprof_agg *a, const sp_ranks *rs, scopeprof_sort key, long limit);
/* Files merged as one job's ranks hold each rank once: two .sprof files of
 * one program that claim the same rank, and are not one process's (a
 * schedule's cycles, forked children: they keep the process's start and
 * realtime offset), are two runs of the job mixed. Says so naming both and
 * returns -1; else 0. Files it cannot probe (standard input, gzip, Chrome
 * JSON) and files without a rank are not compared. */
int sp_ranks_each_once(char **files, int n, FILE *err);
/* CSV columns after the table's own: the CPU total's min, mean, max and the
 * file of the max (as before issue 23), then for calls, self and total CPU
 * time min, mean, max and the ranks of the min and max, and the imbalance. */
void sp_ranks_csv_header(FILE *out);
void sp_ranks_csv_row(FILE *out, const sp_ranks *rs, uint32_t row);
/* The same as JSON fields (",\"key\":value..."). */
void sp_ranks_json_row(sp_out *o, const sp_ranks *rs, uint32_t row);

#endif
