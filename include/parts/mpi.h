/* mpi.h: ranks and clocks across a job (docs/MPI.md).
 * - The cross-rank table: per row, calls, self and total time as min / mean
 *   / max over the ranks, with the rank of each min and max, and the
 *   imbalance (max / mean of self time, Hatchet's load_imbalance); under it
 *   the straggler and, per MPI call, who waited. The job table at
 *   MPI_Finalize and `scopeprof table --per-rank` both print it with
 *   scopeprof_ranks_print, so the two always agree.
 * - The CLOCK chunk of every trace file: the host, the rank, and the offsets
 *   of this process's clock to rank 0's measured at MPI_Init and
 *   MPI_Finalize, from which the reporter puts every rank on rank 0's clock.
 * - With MPI (the implementation's file includes <mpi.h> before this header,
 *   or defines SCOPEPROF_MPI; SCOPEPROF_NO_MPI opts out): MPI_Init,
 *   MPI_Init_thread and MPI_Finalize through MPI's profiling interface
 *   (PMPI), the clock offsets and the job table there, and a scope of its
 *   own for each common MPI call the program makes. Without MPI none of
 *   that is compiled. */

/* SCOPEPROF__MPI, "with MPI", is decided in state.h (survival.h's exit
 * needs it too). */

/* ---- The cross-rank table: declarations (the reporter's too) -------------
 * Compiled for the reporter (SCOPEPROF_AGGREGATION) and MPI programs only:
 * a program without MPI never prints it. */
#if (defined(SCOPEPROF_AGGREGATION) || defined(SCOPEPROF__MPI)) && !defined(SCOPEPROF__RANKS_H)
#define SCOPEPROF__RANKS_H
#ifdef __cplusplus
extern "C" {
#endif

/* The table's columns are ranks (or files without one, in the reporter). A
 * row's figures for one metric over them: a column without the row counts
 * as 0 (that rank never ran it), so an idle rank shows as the min. */
typedef struct scopeprof_rank_stat {
    int64_t min, max, sum;
    uint32_t min_at, max_at; /* columns */
} scopeprof_rank_stat;
enum { SCOPEPROF_RANK_CALLS, SCOPEPROF_RANK_SELF, SCOPEPROF_RANK_TOTAL, SCOPEPROF_RANK_METRICS };
typedef struct scopeprof_rank_row {
    scopeprof_rank_stat s[SCOPEPROF_RANK_METRICS];
    uint32_t seen;    /* columns that ran the row */
    uint32_t next;    /* the column after the last one added */
    uint32_t missing; /* the first column without the row; UINT32_MAX: none */
} scopeprof_rank_row;
/* Rows are those of an aggregation (scopeprof_agg: key, name, the sums the
 * sort uses), kept by the caller; this holds what varies over columns. */
typedef struct scopeprof_ranks {
    uint32_t ncols;
    int32_t *rank;    /* per column: its rank, or -1 (then shown as file N) */
    int64_t *outside; /* per column: self time outside MPI calls */
    scopeprof_rank_row *rows;
    uint32_t cap;
} scopeprof_ranks;

/* 0, or -1 when out of memory. Columns start without a rank. */
int scopeprof_ranks_init(scopeprof_ranks *x, uint32_t ncols);
void scopeprof_ranks_free(scopeprof_ranks *x);
/* Column `col` ran the aggregation's row `row` (named `name`): its calls,
 * self and total time. Each column adds each row once, columns in
 * increasing order. Returns 0, or -1 when out of memory. */
int scopeprof_ranks_add(scopeprof_ranks *x, uint32_t row, uint32_t col, const char *name,
                        uint64_t calls, int64_t self_ns, int64_t total_ns);
/* After the last column: rows some column lacked get their 0 as the min. */
void scopeprof_ranks_done(scopeprof_ranks *x, uint32_t nrows);
/* Whether a row is an MPI call (the scopes mpi.h records: MPI_*). */
int scopeprof_ranks_is_mpi(const char *name);
/* max / mean of a row's self time over the columns (0 when the mean is 0). */
double scopeprof_ranks_imbalance(const scopeprof_ranks *x, const scopeprof_rank_row *r);
/* "rank 3", or "file 2" for a column without a rank. */
char *scopeprof_ranks_label(const scopeprof_ranks *x, uint32_t col, char *buf, size_t n);
/* The table (rows sorted by `key` on the aggregation's sums, row_limit <= 0:
 * all), its totals, the line `more` (the rows the limit left out; NULL:
 * none), then the straggler and who waited in each MPI call. */
void scopeprof_ranks_print(FILE *out, const scopeprof_agg *a, const scopeprof_ranks *x,
                           scopeprof_sort key, int row_limit, const char *more);

#ifdef __cplusplus
}
#endif
#endif /* cross-rank declarations */

/* ---- The cross-rank table --------------------------------------------------- */
#if defined(SCOPEPROF__IMPL) && (defined(SCOPEPROF_AGGREGATION) || defined(SCOPEPROF__MPI))
#ifdef __cplusplus
extern "C" {
#endif

SCOPEPROF__API int scopeprof_ranks_init(scopeprof_ranks *x, uint32_t ncols) {
    memset(x, 0, sizeof *x);
    x->ncols = ncols;
    x->rank = (int32_t *)malloc((ncols ? ncols : 1) * sizeof *x->rank);
    x->outside = (int64_t *)calloc(ncols ? ncols : 1, sizeof *x->outside);
    if (!x->rank || !x->outside) return scopeprof_ranks_free(x), -1;
    for (uint32_t c = 0; c < ncols; c++) x->rank[c] = -1;
    return 0;
}

SCOPEPROF__API void scopeprof_ranks_free(scopeprof_ranks *x) {
    free(x->rank);
    free(x->outside);
    free(x->rows);
    memset(x, 0, sizeof *x);
}

SCOPEPROF__API int scopeprof_ranks_is_mpi(const char *name) { return strncmp(name, "MPI_", 4) == 0; }

SCOPEPROF__API int scopeprof_ranks_add(scopeprof_ranks *x, uint32_t row, uint32_t col, const char *name,
                                       uint64_t calls, int64_t self_ns, int64_t total_ns) {
    if (row >= x->cap) {
        uint32_t cap = x->cap ? x->cap : 64;
        while (cap <= row) cap *= 2;
        scopeprof_rank_row *v = (scopeprof_rank_row *)realloc(x->rows, cap * sizeof *v);
        if (!v) return -1;
        memset(v + x->cap, 0, (cap - x->cap) * sizeof *v);
        x->rows = v;
        x->cap = cap;
    }
    scopeprof_rank_row *r = &x->rows[row];
    if (!r->seen) r->missing = UINT32_MAX;
    if (r->next < col && r->missing == UINT32_MAX) r->missing = r->next; /* columns skipped: 0 there */
    int64_t v[SCOPEPROF_RANK_METRICS] = {calls > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)calls,
                                         self_ns, total_ns};
    for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
        scopeprof_rank_stat *s = &r->s[m];
        if (!r->seen || v[m] < s->min) s->min = v[m], s->min_at = col;
        if (!r->seen || v[m] > s->max) s->max = v[m], s->max_at = col;
        if (__builtin_add_overflow(s->sum, v[m], &s->sum)) s->sum = INT64_MAX;
    }
    r->seen++;
    r->next = col + 1;
    if (col < x->ncols && !scopeprof_ranks_is_mpi(name)) x->outside[col] += self_ns;
    return 0;
}

SCOPEPROF__API void scopeprof_ranks_done(scopeprof_ranks *x, uint32_t nrows) {
    for (uint32_t i = 0; i < nrows && i < x->cap; i++) {
        scopeprof_rank_row *r = &x->rows[i];
        if (!r->seen) continue;
        if (r->next < x->ncols && r->missing == UINT32_MAX) r->missing = r->next;
        if (r->missing == UINT32_MAX) continue;
        for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++)
            if (r->s[m].min > 0) r->s[m].min = 0, r->s[m].min_at = r->missing;
    }
}

SCOPEPROF__API double scopeprof_ranks_imbalance(const scopeprof_ranks *x, const scopeprof_rank_row *r) {
    double mean = (double)r->s[SCOPEPROF_RANK_SELF].sum / (double)(x->ncols ? x->ncols : 1);
    return mean > 0 ? (double)r->s[SCOPEPROF_RANK_SELF].max / mean : 0;
}

SCOPEPROF__API char *scopeprof_ranks_label(const scopeprof_ranks *x, uint32_t col, char *buf, size_t n) {
    if (col < x->ncols && x->rank[col] >= 0) snprintf(buf, n, "rank %d", (int)x->rank[col]);
    else snprintf(buf, n, "file %u", col + 1);
    return buf;
}

/* A min or max cell: the figure and where it is ("r3": rank 3; "f2": file
 * 2, which has no rank). */
static inline void scopeprof__rank_cell(char *buf, size_t n, const scopeprof_ranks *x, const char *fig,
                                        uint32_t col) {
    if (col < x->ncols && x->rank[col] >= 0) snprintf(buf, n, "%s r%d", fig, (int)x->rank[col]);
    else snprintf(buf, n, "%s f%u", fig, col + 1);
}

/* A metric's figure: a count, or a time in PyTorch's format. */
static inline void scopeprof__rank_fig(char *buf, size_t n, int metric, double v) {
    if (metric == SCOPEPROF_RANK_CALLS) snprintf(buf, n, "%.0f", v);
    else scopeprof_format_time(buf, n, v / 1e3);
}

/* The columns, briefly: "0-3", "0, 2, 5-7" when all have a rank, else
 * "rank 0, file 2"...; at most 8 items, then how many more. */
static inline void scopeprof__rank_list(char *buf, size_t n, const scopeprof_ranks *x) {
    size_t l = 0;
    uint32_t items = 0, nranked = 0;
    for (uint32_t c = 0; c < x->ncols; c++) nranked += x->rank[c] >= 0;
    buf[0] = 0;
    for (uint32_t c = 0; c < x->ncols && l < n; c++) {
        if (items == 8) {
            snprintf(buf + l, n - l, " and %u more", x->ncols - c);
            return;
        }
        const char *sep = items ? ", " : "";
        if (x->rank[c] < 0) {
            l += (size_t)snprintf(buf + l, n - l, "%sfile %u", sep, c + 1);
        } else if (nranked < x->ncols) { /* files, some with a rank */
            l += (size_t)snprintf(buf + l, n - l, "%srank %d", sep, (int)x->rank[c]);
        } else {
            uint32_t e = c; /* a run of consecutive ranks */
            while (e + 1 < x->ncols && x->rank[e + 1] == x->rank[e] + 1) e++;
            if (e > c + 1) l += (size_t)snprintf(buf + l, n - l, "%s%d-%d", sep, (int)x->rank[c], (int)x->rank[e]);
            else l += (size_t)snprintf(buf + l, n - l, "%s%d", sep, (int)x->rank[c]), e = c;
            c = e;
        }
        items++;
    }
}

SCOPEPROF__API void scopeprof_ranks_print(FILE *out, const scopeprof_agg *a, const scopeprof_ranks *x,
                                          scopeprof_sort key, int row_limit, const char *more) {
    enum { NUM_W = 12, AT_W = 16, NCOL = 10 };
    static const char *const heads[NCOL] = {"Calls min", "Calls mean", "Calls max", "Self min",
                                            "Self mean", "Self max",   "Total min", "Total mean",
                                            "Total max", "Imbalance"};
    int w[NCOL];
    for (int c = 0; c < NCOL; c++) { /* a min or max with its rank is wider (a count less so) */
        w[c] = c % 3 == 1 || c == NCOL - 1 ? NUM_W : c < 3 ? NUM_W : AT_W;
        if ((int)strlen(heads[c]) > w[c]) w[c] = (int)strlen(heads[c]);
    }
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return;
    uint32_t nshow = scopeprof__rows_shown(a->nrows, row_limit);
    int name_w = 4;
    for (uint32_t i = 0; i < a->nrows; i++) {
        int l = (int)scopeprof__escaped(NULL, 0, a->rows[i].name) + 4; /* as scopeprof__name_cell shows it */
        if (a->rows[i].extra) l += (int)scopeprof__escaped(NULL, 0, a->rows[i].extra) + 3;
        if (l > name_w) name_w = l;
    }
    if (name_w > SCOPEPROF__NAME_W) name_w = SCOPEPROF__NAME_W;
    char sep[512], b[96], fig[48];
    size_t sl = 0;
    memset(sep, '-', (size_t)name_w);
    sl = (size_t)name_w;
    for (int c = 0; c < NCOL; c++) {
        sep[sl++] = ' ', sep[sl++] = ' ';
        memset(sep + sl, '-', (size_t)w[c]);
        sl += (size_t)w[c];
    }
    sep[sl] = 0;
    scopeprof__rank_list(b, sizeof b, x);
    int files = 0, last = 0; /* columns without a rank: files, in the reporter; the last rank: the key's example */
    uint32_t ranks = 0;       /* distinct: fewer than the columns when a rank's cycles or forked children are files */
    for (uint32_t c = 0; c < x->ncols; c++) {
        files |= x->rank[c] < 0, last = x->rank[c] > last ? x->rank[c] : last;
        uint32_t k = 0;
        while (k < c && x->rank[k] != x->rank[c]) k++;
        ranks += k == c;
    }
    char of[32] = "";
    if (!files && ranks < x->ncols) snprintf(of, sizeof of, " of %u rank%s", ranks, ranks == 1 ? "" : "s");
    fprintf(out, "Across %u %s%s%s (%s); Self and Total are CPU time; a min or max names its %s (r%d: rank %d%s)\n",
            x->ncols, files || of[0] ? "file" : "rank", x->ncols == 1 ? "" : "s", of, b, files ? "file" : "rank",
            last, last, files ? ", f2: file 2, which has no rank" : "");
    fprintf(out, "%s\n%-*s", sep, name_w, "Name");
    for (int c = 0; c < NCOL; c++) fprintf(out, "  %*s", w[c], heads[c]);
    fprintf(out, "\n%s\n", sep);
    double ncols = x->ncols ? (double)x->ncols : 1.0;
    for (uint32_t i = 0; i < nshow; i++) {
        const scopeprof_row *row = &a->rows[idx[i]];
        char name[SCOPEPROF__NAME_W + 1], full[512];
        snprintf(full, sizeof full, "%s%s%s", row->name, row->extra ? " | " : "", row->extra ? row->extra : "");
        fprintf(out, "%-*s", name_w, scopeprof__name_cell(name, full, name_w));
        static scopeprof_rank_row none; /* zero: a row no column added (out of memory); never written */
        const scopeprof_rank_row *r = idx[i] < x->cap ? &x->rows[idx[i]] : &none;
        for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
            const scopeprof_rank_stat *s = &r->s[m];
            scopeprof__rank_fig(fig, sizeof fig, m, (double)s->min);
            scopeprof__rank_cell(b, sizeof b, x, fig, s->min_at);
            fprintf(out, "  %*s", w[3 * m], b);
            if (m == SCOPEPROF_RANK_CALLS) snprintf(fig, sizeof fig, "%.2f", (double)s->sum / ncols);
            else scopeprof__rank_fig(fig, sizeof fig, m, (double)s->sum / ncols);
            fprintf(out, "  %*s", w[3 * m + 1], fig);
            scopeprof__rank_fig(fig, sizeof fig, m, (double)s->max);
            scopeprof__rank_cell(b, sizeof b, x, fig, s->max_at);
            fprintf(out, "  %*s", w[3 * m + 2], b);
        }
        double imb = scopeprof_ranks_imbalance(x, r); /* 0: no self time anywhere (0 / 0) */
        fprintf(out, "  %*s\n", w[NCOL - 1], imb > 0 ? (snprintf(b, sizeof b, "%.2f", imb), b) : "-");
    }
    fprintf(out, "%s\n", sep);
    int64_t total = scopeprof_agg_self_total(a);
    fprintf(out, "Self CPU time total: %s (mean per %s %s); Imbalance: max / mean of self CPU time\n",
            scopeprof_format_time(b, sizeof b, (double)total / 1e3), files ? "file" : "rank",
            scopeprof_format_time(fig, sizeof fig, (double)total / 1e3 / ncols));
    if (a->has_gpu)
        fprintf(out, "Self GPU time total: %s\n",
                scopeprof_format_time(b, sizeof b, (double)scopeprof_agg_gpu_self_total(a) / 1e3));
    if (more) fprintf(out, "%s\n", more);
    /* The straggler: the column with the most self time outside MPI calls
     * (time in MPI calls is mostly waiting for it). */
    int any_mpi = 0;
    for (uint32_t i = 0; i < a->nrows; i++) any_mpi |= scopeprof_ranks_is_mpi(a->rows[i].name);
    if (x->ncols > 1) {
        uint32_t hi = 0, lo = 0;
        double sum = 0;
        for (uint32_t c = 0; c < x->ncols; c++) {
            sum += (double)x->outside[c];
            if (x->outside[c] > x->outside[hi]) hi = c;
            if (x->outside[c] < x->outside[lo]) lo = c;
        }
        char who[32], least[32], mean[32], lt[32];
        scopeprof_ranks_label(x, hi, who, sizeof who);
        scopeprof_ranks_label(x, lo, least, sizeof least);
        scopeprof_format_time(b, sizeof b, (double)x->outside[hi] / 1e3);
        scopeprof_format_time(mean, sizeof mean, sum / ncols / 1e3);
        scopeprof_format_time(lt, sizeof lt, (double)x->outside[lo] / 1e3);
        fprintf(out, "Straggler: %s, %s of self CPU time%s (%.2fx the mean, %s; least: %s, %s)\n", who, b,
                any_mpi ? " outside MPI calls" : "", sum > 0 ? (double)x->outside[hi] * ncols / sum : 0.0,
                mean, least, lt);
    }
    /* Who waited: per MPI call, the columns with the most and the least
     * time in it, the calls in the table's order (not MPI_Init*: start-up,
     * not a wait for another rank). */
    for (uint32_t i = 0; i < a->nrows && x->ncols > 1; i++) {
        const scopeprof_row *row = &a->rows[idx[i]];
        if (!scopeprof_ranks_is_mpi(row->name) || strncmp(row->name, "MPI_Init", 8) == 0 || idx[i] >= x->cap)
            continue;
        const scopeprof_rank_stat *s = &x->rows[idx[i]].s[SCOPEPROF_RANK_TOTAL];
        char most[32], least[32], tm[32], tl[32];
        fprintf(out, "Waited in %s%s%s: %s longest (%s), %s shortest (%s)\n", row->name,
                row->extra ? " " : "", row->extra ? row->extra : "",
                scopeprof_ranks_label(x, s->max_at, most, sizeof most),
                scopeprof_format_time(tm, sizeof tm, (double)s->max / 1e3),
                scopeprof_ranks_label(x, s->min_at, least, sizeof least),
                scopeprof_format_time(tl, sizeof tl, (double)s->min / 1e3));
    }
    free(idx);
}

#ifdef __cplusplus
}
#endif
#endif /* the cross-rank table */

/* ---- Every trace file: the CLOCK chunk, a rank's table title ---------------- */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#include <sys/utsname.h>
#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK chunk (docs/FORMAT.md): u32 rank, u32 ranks in the job (0: not an
 * MPI job), u32 points, u32 host length, the points (32 bytes each), the
 * host. Written right after the file's header, and again when MPI_Init or
 * MPI_Finalize measured an offset: the last one in a file holds all it
 * knows. Lock held; no allocation, no stdio (uname(2) and write(2): it can
 * run in a signal handler, when the final write opens the file). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__write_clock(scopeprof__state *g) {
    if (g->out.fd < 0) return;
    struct utsname u;
    uint32_t hl = uname(&u) == 0 ? (uint32_t)strnlen(u.nodename, sizeof u.nodename) : 0;
    uint32_t n = g->job.npts < 2 ? g->job.npts : 2;
    unsigned char b[SCOPEPROF_CLOCK_FIXED + 2 * SCOPEPROF_CLOCK_POINT + sizeof u.nodename];
    int rank = g->job.size > 0 ? g->job.rank : g->out.rank;
    scopeprof__put32(b, rank >= 0 ? (uint32_t)rank : 0xFFFFFFFFu);
    scopeprof__put32(b + 4, (uint32_t)g->job.size);
    scopeprof__put32(b + 8, n);
    scopeprof__put32(b + 12, hl);
    unsigned char *p = b + SCOPEPROF_CLOCK_FIXED;
    for (uint32_t i = 0; i < n; i++, p += SCOPEPROF_CLOCK_POINT) {
        scopeprof__put64(p, g->job.pt[i].local_ns);
        scopeprof__put64(p + 8, (uint64_t)g->job.pt[i].offset_ns);
        scopeprof__put64(p + 16, g->job.pt[i].rtt_ns);
        scopeprof__put32(p + 24, i);
        scopeprof__put32(p + 28, 0);
    }
    memcpy(p, u.nodename, hl);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_CLOCK, b, (uint32_t)(p + hl - b));
}

/* The exit table's title on every rank (SCOPEPROF_SUMMARY=all): which rank
 * printed it; in a forked child outside a job, which process. NULL when
 * there is nothing to say. */
SCOPEPROF__INTERNAL const char *scopeprof__rank_title(const scopeprof__state *g, char *buf, size_t n) {
    int rank = g->job.size > 0 ? g->job.rank : g->out.rank;
    if (rank < 0 && g->life.parent_pid) { /* whose table, among its parent's and siblings' */
        snprintf(buf, n, "scopeprof: process %d (forked from %d), its own table", g->pid, g->life.parent_pid);
        return buf;
    }
    if (!g->cfg.summary_all || rank < 0) return NULL;
    struct utsname u;
    snprintf(buf, n, "scopeprof: rank %d (pid %d on %s), its own table", rank, g->pid,
             uname(&u) == 0 ? u.nodename : "?");
    return buf;
}

#ifdef __cplusplus
}
#endif
#endif /* the CLOCK chunk */

/* ---- MPI -------------------------------------------------------------------- */
#if defined(SCOPEPROF__MPI) && !defined(SCOPEPROF__MPI_DONE)
#define SCOPEPROF__MPI_DONE
#include <mpi.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The wrappers take the MPI functions' names (the profiling interface: the
 * program's calls reach them, they call the PMPI_ entry points). Weak, so a
 * module that defines the implementation in two files links, and another
 * PMPI tool linked in wins; visible, as the MPI library's own are. */
#define SCOPEPROF__PMPI __attribute__((weak, visibility("default")))

/* Our own communicator (a duplicate of MPI_COMM_WORLD): our messages never
 * match a receive of the program's. */
__attribute__((weak, visibility("hidden"))) MPI_Comm scopeprof__mpi_comm;
__attribute__((weak, visibility("hidden"))) int scopeprof__mpi_on;
enum { SCOPEPROF__SYNC_ROUNDS = 16, SCOPEPROF__SYNC_TAG = 23 };

/* ---- Clock offsets ---------------------------------------------------------
 * As Score-P measures them: rank 0 sends rank r a ping, r answers with its
 * CLOCK_MONOTONIC, rank 0 reads its own before and after; of 16 round trips
 * the shortest wins (the least disturbed), and its offset is rank 0's
 * midpoint minus r's time: exact when the two legs take equally long, and
 * never off by more than half the round trip. Ranks one after another: the
 * job waits (size - 1) * 16 round trips. */
SCOPEPROF__INTERNAL void scopeprof__mpi_sync(int rank, int size, uint64_t *local, int64_t *offset,
                                             uint64_t *rtt) {
    MPI_Comm comm = scopeprof__mpi_comm;
    uint64_t res[3] = {scopeprof__mono_ns(), 0, 0};
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            uint64_t best = UINT64_MAX, at = 0, their = 0;
            for (int k = 0; k < SCOPEPROF__SYNC_ROUNDS; k++) {
                uint64_t t1 = scopeprof__mono_ns();
                PMPI_Send(&k, 1, MPI_INT, r, SCOPEPROF__SYNC_TAG, comm);
                PMPI_Recv(&their, 1, MPI_UINT64_T, r, SCOPEPROF__SYNC_TAG, comm, MPI_STATUS_IGNORE);
                uint64_t t2 = scopeprof__mono_ns();
                if (t2 - t1 < best) best = t2 - t1, at = their, res[1] = (uint64_t)((int64_t)(t1 + (t2 - t1) / 2 - their));
            }
            uint64_t back[3] = {at, res[1], best};
            PMPI_Send(back, 3, MPI_UINT64_T, r, SCOPEPROF__SYNC_TAG, comm);
        }
        res[1] = 0; /* rank 0's clock is the job's */
    } else if (size > 1) {
        for (int k = 0, ping; k < SCOPEPROF__SYNC_ROUNDS; k++) {
            PMPI_Recv(&ping, 1, MPI_INT, 0, SCOPEPROF__SYNC_TAG, comm, MPI_STATUS_IGNORE);
            uint64_t now = scopeprof__mono_ns();
            PMPI_Send(&now, 1, MPI_UINT64_T, 0, SCOPEPROF__SYNC_TAG, comm);
        }
        PMPI_Recv(res, 3, MPI_UINT64_T, 0, SCOPEPROF__SYNC_TAG, comm, MPI_STATUS_IGNORE);
    }
    *local = res[0];
    *offset = (int64_t)res[1];
    *rtt = res[2];
}

/* Measure a point (0: MPI_Init, 1: MPI_Finalize), keep it in the registry and
 * write it to the file if it is open (else its opening writes it). */
SCOPEPROF__INTERNAL void scopeprof__mpi_point(scopeprof__state *g, int rank, int size, uint32_t i) {
    uint64_t local, rtt;
    int64_t offset;
    scopeprof__mpi_sync(rank, size, &local, &offset, &rtt);
    scopeprof__lock(g);
    g->job.pt[i].local_ns = local;
    g->job.pt[i].offset_ns = offset;
    g->job.pt[i].rtt_ns = rtt;
    g->job.npts = i + 1;
    if (g->out.fd >= 0) scopeprof__write_clock(g);
    scopeprof__unlock(g);
}

/* After MPI_Init: the rank and size, the file's name when the rank was not
 * known from the launcher (a singleton, a launcher without the usual
 * variables), the first clock offset. */
SCOPEPROF__INTERNAL void scopeprof__mpi_start(void) {
    scopeprof__state *g = scopeprof__state_get();
    int rank = 0, size = 1;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &scopeprof__mpi_comm) != MPI_SUCCESS) return;
    scopeprof__mpi_on = 1;
    PMPI_Comm_rank(scopeprof__mpi_comm, &rank);
    PMPI_Comm_size(scopeprof__mpi_comm, &size);
    scopeprof__lock(g);
    g->job.rank = rank;
    g->job.size = size;
    if (g->out.rank < 0) {
        g->out.rank = rank; /* the exit table prints on rank 0 only */
        /* A file already open keeps its name (its CLOCK chunk says the rank). */
        if (g->out.fd == -1) scopeprof__rank_rename(g);
    } else if (g->out.rank != rank) {
        scopeprof__warn("scopeprof: the launcher said rank %d, MPI says %d: the file keeps its "
                        "name '%s'; the job table and the clocks use MPI's", g->out.rank, rank,
                        g->out.path);
    }
    scopeprof__unlock(g);
    scopeprof__mpi_point(g, rank, size, 0);
}

/* ---- The job table at MPI_Finalize ------------------------------------------
 * Every rank sends rank 0 its rows as they are (the scopes closed by then:
 * scopes still open, like main's, are not in it, and the line under the
 * table counts them), with its calibration and clock figures; rank 0
 * prints one table for the job in place of its own exit table. */
typedef struct scopeprof__mpi_buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} scopeprof__mpi_buf;
static inline void scopeprof__mpi_put(scopeprof__mpi_buf *b, const void *v, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = (unsigned char *)realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}
static inline void scopeprof__mpi_put64(scopeprof__mpi_buf *b, uint64_t v) {
    unsigned char q[8];
    scopeprof__put64(q, v);
    scopeprof__mpi_put(b, q, 8);
}

/* This rank's part: u64 open scopes, u64 compensation (state, lo ps), u64
 * hi ps, u64 the short class's (lo, hi ps; 0: none), u64 largest |offset|,
 * u64 best round trip, u64 rows; per row u64 calls, self, total, name
 * length (its top bit: the row was clamped, scopeprof__comp_clamped), then
 * the name. Lock held. */
SCOPEPROF__INTERNAL void scopeprof__mpi_pack(scopeprof__state *g, scopeprof__mpi_buf *b) {
    const scopeprof_agg *a = &g->sum.agg;
    uint32_t threads = 0;
    const scopeprof__thread *first = NULL;
    uint64_t open = scopeprof__open_scopes(g, NULL, &threads, &first), off = 0, rtt = 0;
    for (uint32_t i = 0; i < g->job.npts; i++) {
        int64_t o = g->job.pt[i].offset_ns;
        if ((uint64_t)(o < 0 ? -o : o) > off) off = (uint64_t)(o < 0 ? -o : o);
        if (g->job.pt[i].rtt_ns > rtt) rtt = g->job.pt[i].rtt_ns;
    }
    scopeprof__mpi_put64(b, open);
    scopeprof__mpi_put64(b, (uint64_t)(uint32_t)a->comp_state | (uint64_t)a->comp_lo_ps << 32);
    scopeprof__mpi_put64(b, a->comp_hi_ps);
    scopeprof__mpi_put64(b, (uint64_t)a->comp_short_lo_ps | (uint64_t)a->comp_short_hi_ps << 32);
    scopeprof__mpi_put64(b, off);
    scopeprof__mpi_put64(b, rtt);
    scopeprof__mpi_put64(b, a->nrows);
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        size_t l = strlen(r->name);
        scopeprof__mpi_put64(b, r->count);
        scopeprof__mpi_put64(b, (uint64_t)r->self_ns);
        scopeprof__mpi_put64(b, (uint64_t)r->total_ns);
        scopeprof__mpi_put64(b, l | (uint64_t)scopeprof__comp_clamped(a, r) << 63); /* the job table's notes */
        scopeprof__mpi_put(b, r->name, l);
    }
}

/* Rank 0: the ranks' parts (all[displ[c]..], len[c] bytes) into one table. */
SCOPEPROF__INTERNAL void scopeprof__mpi_table(scopeprof__state *g, const unsigned char *all, const int *len,
                                              const int *displ, int size) {
    scopeprof_agg m;
    scopeprof_ranks x;
    scopeprof_agg_init(&m);
    if (scopeprof_ranks_init(&x, (uint32_t)size) != 0) return;
    uint64_t open = 0, off = 0, rtt = 0;
    int bad = 0;
    char name[1024];
    for (int c = 0; c < size && !bad; c++) {
        const unsigned char *p = all + displ[c], *end = p + len[c];
        x.rank[c] = c;
        if (end - p < 56) {
            bad = 1;
            break;
        }
        open += scopeprof__get64(p);
        uint64_t comp = scopeprof__get64(p + 8), hi = scopeprof__get64(p + 16), sh = scopeprof__get64(p + 24);
        if ((int)(uint32_t)comp == SCOPEPROF_COMP_ON) {
            scopeprof_agg_calibration(&m, (uint32_t)(comp >> 32), 0, 0);
            scopeprof_agg_calibration(&m, (uint32_t)hi, 0, 0);
            if (sh >> 32) { /* the short class's range (never applied: the rows are shown times) */
                scopeprof_agg_short_class(&m, (uint32_t)sh, 0, 1);
                scopeprof_agg_short_class(&m, (uint32_t)(sh >> 32), 0, 1);
            }
            m.comp_state = SCOPEPROF_COMP_ON;
        } else if (c == 0) {
            m.comp_state = (int)(uint32_t)comp;
        }
        if (scopeprof__get64(p + 32) > off) off = scopeprof__get64(p + 32);
        if (scopeprof__get64(p + 40) > rtt) rtt = scopeprof__get64(p + 40);
        uint64_t nrows = scopeprof__get64(p + 48);
        p += 56;
        for (uint64_t i = 0; i < nrows && !bad; i++) {
            if (end - p < 32) {
                bad = 1;
                break;
            }
            uint64_t calls = scopeprof__get64(p), named = scopeprof__get64(p + 24), l = named & INT64_MAX;
            int64_t self = (int64_t)scopeprof__get64(p + 8), total = (int64_t)scopeprof__get64(p + 16);
            if ((uint64_t)(end - p - 32) < l) {
                bad = 1;
                break;
            }
            snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), (const char *)p + 32);
            p += 32 + l;
            uint32_t row = scopeprof_agg_row(&m, name, name, NULL);
            if (row == UINT32_MAX || scopeprof_ranks_add(&x, row, (uint32_t)c, name, calls, self, total) != 0) {
                bad = 1;
                break;
            }
            scopeprof_row *r = &m.rows[row];
            r->comp_clamped |= (int)(named >> 63);
            r->count += calls;
            r->self_ns += self;
            r->total_ns += total;
        }
    }
    if (!bad) {
        scopeprof_ranks_done(&x, m.nrows);
        struct utsname u;
        fflush(stdout);
        scopeprof__text text;
        FILE *out = scopeprof__text_begin(&text);
        fprintf(out, "scopeprof: the MPI job's table (%d rank%s, rank 0 on %s), scopes closed by "
                        "MPI_Finalize\n", size, size == 1 ? "" : "s", uname(&u) == 0 ? u.nodename : "?");
        char more[96];
        if (m.nrows) {
            scopeprof_ranks_print(out, &m, &x, g->cfg.sort, g->cfg.row_limit,
                                  scopeprof__more_rows(g, m.nrows, more, sizeof more));
            scopeprof_table_notes_shown(out, &m, g->cfg.sort, g->cfg.row_limit);
        } else { /* a schedule's sums go with each cycle's file (CoMD's job showed an empty table) */
            fprintf(out, "No rows: %s\n", g->sched.on ? "each schedule cycle's table was printed as it ended; "
                            "for one cycle across the ranks: scopeprof table --per-rank on its files"
                                                         : "no scope closed before MPI_Finalize");
        }
        /* Rank 0 wrote a file (its current one just now, scopeprof__flush,
         * or a schedule's cycles before it): the ranks' files are there
         * unless one could not be written. */
        int files = !g->out.no_output && g->out.files && !g->out.create_err && !g->out.write_err;
        if (open)
            fprintf(out, "Not counted: %llu scope(s) still open at MPI_Finalize (main's, say)%s\n",
                    (unsigned long long)open, files ? ", which each rank's trace file has" : "");
        if (files && g->out.events_written)
            fprintf(out, "Trace files: one per rank, as rank 0's '%s'\n", g->out.path);
        else if (files)
            fprintf(out, "Trace files: one per rank and schedule cycle\n");
        char o[32], t[32];
        if (size > 1 && files)
            fprintf(out, "Clocks: each rank's offset to rank 0's clock measured at MPI_Init and "
                            "MPI_Finalize (the largest %s; the best round trip at most %s: the ranks' "
                            "trace files align within half of it)\n",
                    scopeprof_format_time(o, sizeof o, (double)off / 1e3),
                    scopeprof_format_time(t, sizeof t, (double)rtt / 1e3));
        scopeprof__text_end(&text);
    } else {
        scopeprof__warn("scopeprof: the job table is left out: a rank's rows did not arrive whole");
    }
    scopeprof_ranks_free(&x);
    scopeprof_agg_free(&m);
}

/* Before PMPI_Finalize: the second clock point, everything recorded so far
 * written (the rows then hold every closed scope), the rows gathered on
 * rank 0, which prints the job table. Every rank takes part whatever its
 * environment says (the calls are collective); only printing obeys
 * SCOPEPROF_SUMMARY. */
SCOPEPROF__INTERNAL void scopeprof__mpi_finish(void) {
    if (!scopeprof__mpi_on) return;
    scopeprof__mpi_on = 0;
    scopeprof__state *g = scopeprof__state_get();
    MPI_Comm comm = scopeprof__mpi_comm;
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    scopeprof__mpi_point(g, rank, size, 1);
    scopeprof__flush();
    scopeprof__mpi_buf b = {NULL, 0, 0, 0};
    scopeprof__lock(g);
    scopeprof__sum_fold(g, 0); /* the rows, from the exit summary's site sums: by name, as the job table */
    scopeprof__mpi_pack(g, &b);
    scopeprof__unlock(g);
    int n = b.oom || b.n > (size_t)0x7FFFFFFF ? 0 : (int)b.n;
    int *len = rank == 0 ? (int *)calloc((size_t)size, sizeof *len) : NULL;
    int *displ = rank == 0 ? (int *)calloc((size_t)size, sizeof *displ) : NULL;
    int ok = rank != 0 || (len && displ);
    /* Rank 0 says whether it can take the rows, so that nobody waits. */
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok) {
        PMPI_Gather(&n, 1, MPI_INT, len, 1, MPI_INT, 0, comm);
        unsigned char *all = NULL;
        if (rank == 0) {
            size_t at = 0;
            for (int c = 0; c < size; c++) displ[c] = (int)at, at += (size_t)len[c];
            all = (unsigned char *)malloc(at ? at : 1);
            ok = all && at <= 0x7FFFFFFF;
        }
        PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
        if (ok) {
            PMPI_Gatherv(b.p, n, MPI_BYTE, all, len, displ, MPI_BYTE, 0, comm);
            if (rank == 0) {
                scopeprof__lock(g);
                if (g->cfg.summary && size > 1) { /* one rank: its own exit table, as without MPI */
                    scopeprof__mpi_table(g, all, len, displ, size);
                    if (!g->cfg.summary_all) g->job.table_printed = 1;
                }
                scopeprof__unlock(g);
            }
        }
        free(all);
    }
    if (!ok && rank == 0) scopeprof__warn("scopeprof: out of memory: no job table");
    free(len);
    free(displ);
    free(b.p);
    PMPI_Comm_free(&scopeprof__mpi_comm);
}

/* ---- The wrappers -------------------------------------------------------------
 * MPI_Init and MPI_Init_thread, MPI_Finalize: the job's start and end. The
 * MPI calls a program waits in most (point to point, collectives, waits)
 * are scopes named after the call, so the table shows communication
 * without a scope of the program's own. Calls through PMPI_ (ours, the MPI
 * library's) are not recorded. */
SCOPEPROF__PMPI int MPI_Init(int *argc, char ***argv) {
    int rc;
    {
        PROFILE_SCOPE("MPI_Init");
        rc = PMPI_Init(argc, argv);
    }
    if (rc == MPI_SUCCESS) scopeprof__mpi_start();
    return rc;
}

SCOPEPROF__PMPI int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc;
    {
        PROFILE_SCOPE("MPI_Init_thread");
        rc = PMPI_Init_thread(argc, argv, required, provided);
    }
    if (rc == MPI_SUCCESS) scopeprof__mpi_start();
    return rc;
}

SCOPEPROF__PMPI int MPI_Finalize(void) {
    scopeprof__mpi_finish();
    PROFILE_SCOPE("MPI_Finalize");
    return PMPI_Finalize();
}

/* MPI_Abort ends the process without its exit handlers (and mpirun ends the
 * other ranks with SIGTERM, whose handler writes theirs): this rank's trace
 * is written first, and its summary printed, as at exit. No job table: that
 * takes every rank. */
SCOPEPROF__PMPI int MPI_Abort(MPI_Comm comm, int errorcode) {
    scopeprof__mpi_on = 0;
    scopeprof__state *g = scopeprof__g;
    /* Not from a signal handler that interrupted this thread inside the
     * profiler (its lock held): the trace is then given up, as a crash's. */
    if (g && !scopeprof__cloned(g) && !g->life.finalized && !scopeprof__in_lock) {
        scopeprof__finalize(g);
        if (scopeprof__trace_written(g))
            scopeprof__warn("scopeprof: MPI_Abort(%d) on rank %d: trace written to '%s'", errorcode,
                            g->out.rank, g->out.path);
    }
    return PMPI_Abort(comm, errorcode);
}

#define SCOPEPROF__MPI_CALL(name, call)                                             \
    {                                                                               \
        PROFILE_SCOPE(name);                                                        \
        return call;                                                                \
    }
SCOPEPROF__PMPI int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Send", PMPI_Send(buf, count, type, dest, tag, comm))
SCOPEPROF__PMPI int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Ssend", PMPI_Ssend(buf, count, type, dest, tag, comm))
SCOPEPROF__PMPI int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                             MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Recv", PMPI_Recv(buf, count, type, src, tag, comm, status))
SCOPEPROF__PMPI int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                                 MPI_Comm comm, MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Sendrecv", PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
                                                      rtype, src, rtag, comm, status))
SCOPEPROF__PMPI int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *req)
    SCOPEPROF__MPI_CALL("MPI_Isend", PMPI_Isend(buf, count, type, dest, tag, comm, req))
SCOPEPROF__PMPI int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                              MPI_Request *req)
    SCOPEPROF__MPI_CALL("MPI_Irecv", PMPI_Irecv(buf, count, type, src, tag, comm, req))
SCOPEPROF__PMPI int MPI_Wait(MPI_Request *req, MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Wait", PMPI_Wait(req, status))
SCOPEPROF__PMPI int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
    SCOPEPROF__MPI_CALL("MPI_Waitall", PMPI_Waitall(n, reqs, statuses))
SCOPEPROF__PMPI int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Waitany", PMPI_Waitany(n, reqs, index, status))
SCOPEPROF__PMPI int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
    SCOPEPROF__MPI_CALL("MPI_Waitsome", PMPI_Waitsome(n, reqs, outcount, indices, statuses))
SCOPEPROF__PMPI int MPI_Barrier(MPI_Comm comm) SCOPEPROF__MPI_CALL("MPI_Barrier", PMPI_Barrier(comm))
SCOPEPROF__PMPI int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Bcast", PMPI_Bcast(buf, count, type, root, comm))
SCOPEPROF__PMPI int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                               MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Reduce", PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm))
SCOPEPROF__PMPI int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Allreduce", PMPI_Allreduce(sbuf, rbuf, count, type, op, comm))
SCOPEPROF__PMPI int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                               MPI_Datatype rtype, int root, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Gather", PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
SCOPEPROF__PMPI int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                  MPI_Datatype rtype, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Allgather", PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm))
SCOPEPROF__PMPI int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                MPI_Datatype rtype, int root, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Scatter", PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
SCOPEPROF__PMPI int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Alltoall", PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm))
#undef SCOPEPROF__MPI_CALL

#ifdef __cplusplus
}
#endif
#endif /* MPI */
