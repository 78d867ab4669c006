/* ranks.c -- see ranks.h. */
#define SCOPEPROF_AGGREGATION
#include "ranks.h"

#include "cells.h"
#include "clocks.h"

#include <stdlib.h>
#include <string.h>

int sp_ranks_init(sp_ranks *rs, char **files, int nfiles) {
    rs->files = files;
    return scopeprof_ranks_init(&rs->x, (uint32_t)nfiles);
}

void sp_ranks_free(sp_ranks *rs) { scopeprof_ranks_free(&rs->x); }

int sp_ranks_add(sp_ranks *rs, int file, uint32_t row, const scopeprof_row *r) {
    return scopeprof_ranks_add(&rs->x, row, (uint32_t)file, r->name, r->count, r->self_ns, r->total_ns);
}

typedef struct note_ctx {
    sp_ranks *rs;
    int file;
} note_ctx;

static int note_row(void *ctx, uint32_t k, const scopeprof_row *r) {
    note_ctx *n = ctx;
    return sp_ranks_add(n->rs, n->file, k, r);
}

int sp_ranks_merge(sp_ranks *rs, int file, sp_agg_ctx *all, sp_agg_ctx *one) {
    if (one->rank <= INT32_MAX && (uint32_t)file < rs->x.ncols) rs->x.rank[file] = (int32_t)one->rank;
    note_ctx n = {rs, file};
    int rc = sp_agg_merge(all, one, note_row, &n);
    sp_agg_ctx_free(one);
    return rc;
}

void sp_ranks_print(FILE *out, const scopeprof_agg *a, const sp_ranks *rs, scopeprof_sort key, long limit) {
    char more[120];
    scopeprof_ranks_print(out, a, &rs->x, key, (int)limit,
                          sp_more_rows(more, sizeof more, a->nrows, limit) ? more : NULL);
}

/* ---- Each rank once ---------------------------------------------------------- */
/* One process's files: its schedule's cycles and its forked children's keep
 * its clock, the header's start and realtime offset (docs/FORMAT.md,
 * "Schedules and forked children"); another process's (a run before or
 * after) has another start. */
static int one_process(const sp_clock *a, const sp_clock *b) {
    return a->start_ns == b->start_ns && a->realtime_minus_mono == b->realtime_minus_mono;
}

int sp_ranks_each_once(char **files, int n, FILE *err) {
    sp_clock *c = calloc((size_t)(n > 0 ? n : 1), sizeof *c); /* out of memory: not checked */
    int rc = 0;
    uint32_t size = 0; /* the job's, from the CLOCK chunks */
    for (int i = 0; c && i < n && !rc; i++) {
        /* The rank as the reader takes it: the header's, else (a file opened
         * before MPI_Init gave the rank) the CLOCK chunk's. */
        if (sp_clock_probe(files[i], &c[i], 1) != 0) c[i].rank = 0xFFFFFFFFu; /* not compared */
        else if (c[i].head_rank != 0xFFFFFFFFu) c[i].rank = c[i].head_rank;
        if (c[i].size > size) size = c[i].size;
        for (int j = 0; j < i && !rc && c[i].rank != 0xFFFFFFFFu; j++) {
            const sp_clock *a = &c[j], *b = &c[i];
            if (a->rank != b->rank || strcmp(a->prog, b->prog) != 0 || one_process(a, b)) continue;
            /* How far apart, in Unix time: both hosts' clocks know it. */
            double d = ((double)b->start_ns - (double)a->start_ns) +
                       ((double)b->realtime_minus_mono - (double)a->realtime_minus_mono);
            char t[32];
            scopeprof_format_time(t, sizeof t, (d < 0 ? -d : d) / 1e3);
            fprintf(err, "scopeprof: two files for rank %u: '%s' and '%s', two processes of %s started %s apart "
                    "(two runs of the job? give one run's files)\n", a->rank, files[j], files[i], a->prog, t);
            rc = -1;
        }
    }
    /* Some of a job's ranks (CoMD review: 3 of 4 files, nothing said): the
     * min, mean and max are over those, which is said. */
    uint32_t seen = 0, missing = UINT32_MAX;
    for (uint32_t r = 0; c && !rc && size > 1 && size <= 1u << 16 && r < size; r++) {
        int has = 0;
        for (int i = 0; i < n && !has; i++) has = c[i].rank == r;
        if (has) seen++;
        else if (missing == UINT32_MAX) missing = r;
    }
    if (seen > 1 && seen < size)
        fprintf(err, "scopeprof: note: these files hold %u of the job's %u ranks (rank %u among those missing): "
                "what is shown is theirs only\n", seen, size, missing);
    free(c);
    return rc;
}

/* Each metric's CSV/JSON stem: calls are counts, times nanoseconds. */
static const char *const stem[SCOPEPROF_RANK_METRICS] = {"count", "self_cpu_time_total", "cpu_time_total"};
static const char *const unit[SCOPEPROF_RANK_METRICS] = {"", "_ns", "_ns"};

void sp_ranks_csv_header(FILE *out) {
    fputs(",cpu_time_total_min_ns,cpu_time_total_mean_ns,cpu_time_total_max_ns,max_file", out);
    for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
        if (m != SCOPEPROF_RANK_TOTAL) /* the total's are above, under their old names */
            fprintf(out, ",%s_min%s,%s_mean%s,%s_max%s", stem[m], unit[m], stem[m], unit[m], stem[m], unit[m]);
        fprintf(out, ",%s_min_rank,%s_max_rank", stem[m], stem[m]);
    }
    fputs(",imbalance", out);
}

static const scopeprof_rank_row *row_of(const sp_ranks *rs, uint32_t row) {
    static const scopeprof_rank_row none;
    return row < rs->x.cap ? &rs->x.rows[row] : &none;
}

/* A column's rank, or -1 (a file without one). */
static int rank_at(const sp_ranks *rs, uint32_t col) { return col < rs->x.ncols ? rs->x.rank[col] : -1; }

void sp_ranks_csv_row(FILE *out, const sp_ranks *rs, uint32_t row) {
    const scopeprof_rank_row *r = row_of(rs, row);
    double n = rs->x.ncols ? (double)rs->x.ncols : 1;
    const scopeprof_rank_stat *t = &r->s[SCOPEPROF_RANK_TOTAL];
    fprintf(out, ",%lld,%lld,%lld,", (long long)t->min, (long long)(t->sum / (int64_t)n), (long long)t->max);
    sp_csv_field(out, t->max_at < rs->x.ncols ? rs->files[t->max_at] : "");
    for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
        const scopeprof_rank_stat *s = &r->s[m];
        if (m == SCOPEPROF_RANK_CALLS) fprintf(out, ",%lld,%.2f,%lld", (long long)s->min, (double)s->sum / n, (long long)s->max);
        else if (m == SCOPEPROF_RANK_SELF)
            fprintf(out, ",%lld,%lld,%lld", (long long)s->min, (long long)(s->sum / (int64_t)n), (long long)s->max);
        int a = rank_at(rs, s->min_at), b = rank_at(rs, s->max_at);
        if (a >= 0) fprintf(out, ",%d", a);
        else fputc(',', out);
        if (b >= 0) fprintf(out, ",%d", b);
        else fputc(',', out);
    }
    fprintf(out, ",%.3f", scopeprof_ranks_imbalance(&rs->x, r));
}

static void json_key(sp_out *o, const char *stem_, const char *what, const char *unit_) {
    sp_out_str(o, ",\"");
    sp_out_str(o, stem_);
    sp_out_str(o, what);
    sp_out_str(o, unit_);
    sp_out_str(o, "\":");
}

/* A rank, or null for a file without one. */
static void json_rank(sp_out *o, int rank) {
    if (rank >= 0) sp_out_i64(o, rank);
    else sp_out_str(o, "null");
}

void sp_ranks_json_row(sp_out *o, const sp_ranks *rs, uint32_t row) {
    const scopeprof_rank_row *r = row_of(rs, row);
    int64_t n = rs->x.ncols ? (int64_t)rs->x.ncols : 1;
    const scopeprof_rank_stat *t = &r->s[SCOPEPROF_RANK_TOTAL];
    json_key(o, "cpu_time_total", "_min", "_ns"), sp_out_i64(o, t->min);
    json_key(o, "cpu_time_total", "_mean", "_ns"), sp_out_i64(o, t->sum / n);
    json_key(o, "cpu_time_total", "_max", "_ns"), sp_out_i64(o, t->max);
    sp_out_str(o, ",\"max_file\":");
    sp_out_json_str(o, t->max_at < rs->x.ncols ? rs->files[t->max_at] : "");
    char b[64];
    for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
        const scopeprof_rank_stat *s = &r->s[m];
        if (m != SCOPEPROF_RANK_TOTAL) { /* the total's are above, under their old names */
            json_key(o, stem[m], "_min", unit[m]), sp_out_i64(o, s->min);
            json_key(o, stem[m], "_mean", unit[m]);
            if (m == SCOPEPROF_RANK_CALLS) snprintf(b, sizeof b, "%.2f", (double)s->sum / (double)n), sp_out_str(o, b);
            else sp_out_i64(o, s->sum / n);
            json_key(o, stem[m], "_max", unit[m]), sp_out_i64(o, s->max);
        }
        json_key(o, stem[m], "_min_rank", ""), json_rank(o, rank_at(rs, s->min_at));
        json_key(o, stem[m], "_max_rank", ""), json_rank(o, rank_at(rs, s->max_at));
    }
    snprintf(b, sizeof b, "%.3f", scopeprof_ranks_imbalance(&rs->x, r));
    sp_out_str(o, ",\"imbalance\":");
    sp_out_str(o, b);
}
