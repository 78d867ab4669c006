/* diff.h -- `scopeprof diff`: two sides, BASE and NEW, each one or more runs
 * of a program, compared row by row; and the comparison itself, which
 * `html --diff` (html.c) draws. Each run is read through the aggregation
 * over files (aggregate.c), so a row means what it means in `table`.
 * docs/REPORTER.md, "scopeprof diff". */
#ifndef SP_DIFF_H
#define SP_DIFF_H

#include <stdint.h>
#include <stdio.h>

#ifndef SCOPEPROF_AGGREGATION
#define SCOPEPROF_AGGREGATION
#endif
#include "scopeprof.h"

/* --min-time's default: a row under 1 ms on NEW never trips --threshold
 * (a few microseconds move by more than 30% from run to run). */
#define SP_DIFF_MIN_TIME 1000000ull

typedef struct sp_diff_opts {
    scopeprof_sort key;    /* the time compared: a CPU or GPU time key */
    int group;             /* --group-by: SP_GROUP_* (aggregate.h) */
    uint32_t stack_n;      /* --group-by stack:N */
    int format;            /* --format: SP_FORMAT_* (cells.h) */
    long limit;            /* rows shown, 0: all */
    double threshold;      /* percent; < 0: none */
    uint64_t min_time;     /* ns */
    int raw;               /* --no-compensate */
    const char *out_name;  /* the output, for messages */
} sp_diff_opts;

/* A row on one side: medians over the side's runs (a run without the row
 * counts 0 in them), and the compared time's min and max over the runs. */
typedef struct sp_diff_fig {
    uint32_t runs; /* runs that had the row; 0: not on this side */
    int64_t count, self_ns, total_ns, value, min, max;
} sp_diff_fig;

typedef struct sp_diff_row {
    const char *name, *extra, *key; /* owned by sp_diff.keys */
    sp_diff_fig side[2];            /* 0: BASE, 1: NEW */
    int64_t change;                 /* NEW's value - BASE's */
    double pct;                     /* change in % of BASE's value; NaN when that is 0 */
    int spread;    /* several runs, and one side's median within the other's min..max */
    int regressed; /* past --threshold */
} sp_diff_row;

typedef struct sp_diff {
    scopeprof_agg keys;     /* the rows of both sides: key, name, extra (no figures) */
    sp_diff_row *rows;      /* largest change (either way) first */
    uint32_t nrows, nregressed;
    int runs[2];            /* per side */
    int64_t self_total[2];  /* median over the runs of self CPU time total */
    scopeprof_sort key;
    const sp_diff_opts *o;
} sp_diff;

/* Read BASE (files[0..n[0])) and NEW (the n[1] files after) grouped by
 * `group` (aggregate.h's SP_GROUP_*; SP_GROUP_FOLDED compares the folded
 * stacks' self times, for the flame graph), and compare them. Each file is
 * a run, but files that carry a rank are grouped: the i-th file of each rank
 * on a side make its run i. Returns the exit status of reading (problems
 * told on err). */
int sp_diff_read(sp_diff *d, char **files, const int n[2], int group, uint32_t stack_n, const sp_diff_opts *o,
                 FILE *err);
/* The time keys diff compares; -1 after saying so for another key. */
int sp_diff_check_key(scopeprof_sort key, FILE *err);
void sp_diff_free(sp_diff *d);
/* The short column name of a time key ("Self CPU", "GPU total"...), or NULL
 * when the key is not a time diff compares (count, memory). */
const char *sp_diff_key_label(scopeprof_sort key);
/* "+1.234ms", "-56.000us": a signed time, ns. */
char *sp_diff_format_change(char *buf, size_t n, int64_t ns);
/* The change in %: "+12.34%", "new" (a row of NEW only), "-" (BASE's is 0). */
void sp_diff_format_pct(char *b, size_t n, const sp_diff_row *r);
/* What the row's Note says: "regressed", "new only", "base only",
 * "within spread" or "". */
const char *sp_diff_status(const sp_diff_row *r);
/* The compared time gets columns of its own unless it is one of the CPU
 * columns every diff shows (self CPU, CPU total). */
int sp_diff_own_columns(scopeprof_sort key);

/* The command. Returns the exit status: 4 (SP_EXIT_REGRESSED) when a row
 * is past --threshold and the inputs read well. */
int sp_cmd_diff(char **files, const int n[2], const sp_diff_opts *o, FILE *out, FILE *err);

#endif
