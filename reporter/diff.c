/* diff.c -- `scopeprof diff` (see diff.h): the runs of each side read into
 * tables of their own, their rows matched by key, medians taken, and the
 * change of the compared time shown, largest first, as text in the
 * key_averages layout, CSV, JSON or Markdown. */
#define SCOPEPROF_AGGREGATION
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "buf.h"
#include "cells.h"
#include "exit.h"
#include "output.h"

/* ---- Reading the runs ---------------------------------------------------------- */
/* One side: its runs, each a table of its own (several files when they are
 * ranks of one run, merged as `table` merges them). */
typedef struct side {
    sp_agg_ctx *run;
    int nruns;
    /* Files with a rank: the i-th file of a rank goes to run rank_run[i]. */
    struct { uint32_t rank, seen; } *ranks;
    int nranks;
    int *rank_run, nrank_run;
} side;

static int side_new_run(side *s, int group, uint32_t stack_n) {
    sp_agg_ctx *v = realloc(s->run, ((size_t)s->nruns + 1) * sizeof *v);
    if (!v) return -1;
    s->run = v;
    sp_agg_ctx_init(&s->run[s->nruns], group, stack_n);
    return s->nruns++;
}

/* The run a file of this rank belongs to (0xFFFFFFFF: none, a run of its own). */
static int side_run_of(side *s, uint32_t rank, int group, uint32_t stack_n) {
    if (rank == 0xFFFFFFFFu) return side_new_run(s, group, stack_n);
    int k = 0;
    while (k < s->nranks && s->ranks[k].rank != rank) k++;
    if (k == s->nranks) {
        void *v = realloc(s->ranks, ((size_t)s->nranks + 1) * sizeof *s->ranks);
        if (!v) return -1;
        s->ranks = v;
        s->ranks[s->nranks].rank = rank;
        s->ranks[s->nranks++].seen = 0;
    }
    uint32_t i = s->ranks[k].seen++;
    if (i == (uint32_t)s->nrank_run) {
        int *v = realloc(s->rank_run, ((size_t)s->nrank_run + 1) * sizeof *v);
        if (!v) return -1;
        s->rank_run = v;
        if ((v[s->nrank_run] = side_new_run(s, group, stack_n)) < 0) return -1;
        s->nrank_run++;
    }
    return s->rank_run[i];
}

static void side_free(side *s) {
    for (int i = 0; i < s->nruns; i++) sp_agg_ctx_free(&s->run[i]);
    free(s->run);
    free(s->ranks);
    free(s->rank_run);
}

/* Read a side's files into its runs. Returns the exit status. */
static int side_read(side *s, char **files, int n, int group, uint32_t stack_n, int raw, FILE *err) {
    int rc = SP_EXIT_OK;
    for (int i = 0; i < n; i++) {
        sp_agg_ctx one;
        sp_agg_ctx_init(&one, group, stack_n);
        one.raw = raw;
        one.thread_by_label = 1;
        one.rank = 0xFFFFFFFFu; /* until a header says otherwise */
        int st = sp_agg_file(&one, files[i], err);
        rc = sp_exit_worst(rc, st);
        int usable = st == SP_OK || st == SP_TRUNCATED || one.agg.events > 0;
        int r = usable ? side_run_of(s, one.rank, group, stack_n) : -2;
        /* --group-by thread: threads of one name told apart, as table does. */
        if (r == -1 || sp_agg_thread_labels(&one) != 0 || (r >= 0 && sp_agg_merge(&s->run[r], &one, NULL, NULL) != 0)) {
            fprintf(err, "scopeprof: out of memory\n");
            rc = SP_EXIT_OUTPUT;
        }
        sp_agg_ctx_free(&one);
    }
    return rc;
}

/* ---- Comparing ------------------------------------------------------------------- */
const char *sp_diff_key_label(scopeprof_sort key) {
    switch (key) {
    case SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL: return "Self CPU";
    case SCOPEPROF_SORT_CPU_TIME_TOTAL: return "CPU total";
    case SCOPEPROF_SORT_CPU_TIME: return "CPU avg";
    case SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL: return "Self GPU";
    case SCOPEPROF_SORT_GPU_TIME_TOTAL: return "GPU total";
    case SCOPEPROF_SORT_GPU_TIME: return "GPU avg";
    default: return NULL;
    }
}

/* The compared time of a row of one run. */
static int64_t value_of(const scopeprof_row *r, scopeprof_sort key) {
    int64_t n = r->count ? (int64_t)r->count : 1;
    switch (key) {
    case SCOPEPROF_SORT_CPU_TIME_TOTAL: return r->total_ns;
    case SCOPEPROF_SORT_CPU_TIME: return r->total_ns / n;
    case SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL: return r->gpu_self_ns;
    case SCOPEPROF_SORT_GPU_TIME_TOTAL: return r->gpu_total_ns;
    case SCOPEPROF_SORT_GPU_TIME: return r->gpu_total_ns / n;
    default: return r->self_ns;
    }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted here); of an even count, the mean of the
 * middle two. */
static int64_t median(int64_t *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    if (n % 2) return v[n / 2];
    int64_t a = v[n / 2 - 1], b = v[n / 2];
    return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

enum { F_COUNT, F_SELF, F_TOTAL, F_VALUE, NF }; /* per run and row */

/* A side's figures for every row of d->keys, from its runs. */
static int side_figures(sp_diff *d, const side *s, int which) {
    uint32_t nk = d->keys.nrows;
    int nr = s->nruns;
    int64_t *v = calloc((size_t)nk * (size_t)nr * NF + 1, sizeof *v);
    int64_t *tmp = malloc(((size_t)nr + 1) * sizeof *tmp);
    uint32_t *seen = calloc((size_t)nk + 1, sizeof *seen);
    if (!v || !tmp || !seen) {
        free(v), free(tmp), free(seen);
        return -1;
    }
    for (int r = 0; r < nr; r++) {
        const scopeprof_agg *a = &s->run[r].agg;
        for (uint32_t i = 0; i < a->nrows; i++) {
            const scopeprof_row *row = &a->rows[i];
            uint32_t k = scopeprof_agg_row(&d->keys, row->key, row->name, row->extra); /* there already */
            int64_t *f = &v[((size_t)k * (size_t)nr + (size_t)r) * NF];
            f[F_COUNT] = (int64_t)row->count;
            f[F_SELF] = row->self_ns;
            f[F_TOTAL] = row->total_ns;
            f[F_VALUE] = value_of(row, d->key);
            seen[k]++;
        }
        tmp[r] = scopeprof_agg_self_total(a);
    }
    d->self_total[which] = nr ? median(tmp, nr) : 0;
    for (uint32_t k = 0; k < nk; k++) {
        sp_diff_fig *g = &d->rows[k].side[which];
        g->runs = seen[k];
        if (!seen[k]) continue;
        int64_t *out[NF] = {&g->count, &g->self_ns, &g->total_ns, &g->value};
        for (int f = 0; f < NF; f++) {
            for (int r = 0; r < nr; r++) tmp[r] = v[((size_t)k * (size_t)nr + (size_t)r) * NF + (size_t)f];
            *out[f] = median(tmp, nr);
            if (f == F_VALUE) g->min = tmp[0], g->max = tmp[nr - 1]; /* sorted by median() */
        }
    }
    free(v), free(tmp), free(seen);
    return 0;
}

static const sp_diff_row *g_rows; /* qsort has no context argument */
static int cmp_change(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t cx = g_rows[x].change, cy = g_rows[y].change;
    uint64_t ax = cx < 0 ? 0 - (uint64_t)cx : (uint64_t)cx, ay = cy < 0 ? 0 - (uint64_t)cy : (uint64_t)cy;
    if (ax != ay) return ax > ay ? -1 : 1;
    return x < y ? -1 : x > y; /* ties: first seen first */
}

/* The change of each row, whether it is within the runs' spread and past
 * --threshold; rows sorted by the size of their change. */
static int compare(sp_diff *d) {
    const sp_diff_opts *o = d->o;
    int several = d->runs[0] > 1 || d->runs[1] > 1;
    for (uint32_t k = 0; k < d->nrows; k++) {
        sp_diff_row *r = &d->rows[k];
        const sp_diff_fig *b = &r->side[0], *n = &r->side[1];
        int both = b->runs && n->runs;
        if (__builtin_sub_overflow(n->value, b->value, &r->change)) r->change = n->value > b->value ? INT64_MAX : INT64_MIN;
        r->pct = b->value ? 100.0 * ((double)n->value - (double)b->value) / (double)b->value : NAN;
        /* The median of one side between the fastest and the slowest run
         * of the other: the runs of one build vary as much as the builds
         * differ. (Medians, not the whole ranges: one run slowed down by
         * the machine must not hide a real change.) */
        r->spread = several && both && r->change != 0 &&
                    ((n->value >= b->min && n->value <= b->max) || (b->value >= n->min && b->value <= n->max));
        r->regressed = o->threshold >= 0 && both && r->change > 0 && b->value > 0 && r->pct >= o->threshold &&
                       (uint64_t)n->value >= o->min_time && !r->spread;
        d->nregressed += r->regressed;
    }
    uint32_t *idx = malloc(((size_t)d->nrows + 1) * sizeof *idx);
    sp_diff_row *sorted = malloc(((size_t)d->nrows + 1) * sizeof *sorted);
    if (!idx || !sorted) {
        free(idx), free(sorted);
        return -1;
    }
    for (uint32_t k = 0; k < d->nrows; k++) idx[k] = k;
    g_rows = d->rows;
    qsort(idx, d->nrows, sizeof *idx, cmp_change);
    for (uint32_t k = 0; k < d->nrows; k++) sorted[k] = d->rows[idx[k]];
    free(idx);
    free(d->rows);
    d->rows = sorted;
    return 0;
}

int sp_diff_read(sp_diff *d, char **files, const int n[2], int group, uint32_t stack_n, const sp_diff_opts *o,
                 FILE *err) {
    memset(d, 0, sizeof *d);
    scopeprof_agg_init(&d->keys);
    d->o = o;
    d->key = group == SP_GROUP_FOLDED ? SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL : o->key;
    side s[2];
    memset(s, 0, sizeof s);
    int rc = SP_EXIT_OK;
    for (int w = 0; w < 2; w++) {
        int st = side_read(&s[w], files + (w ? n[0] : 0), n[w], group, stack_n, o->raw, err);
        if (st > rc) rc = st; /* SP_EXIT_OUTPUT (out of memory) over SP_EXIT_INPUT */
    }
    int oom = rc == SP_EXIT_OUTPUT;
    for (int w = 0; w < 2; w++) {
        d->runs[w] = s[w].nruns;
        if (!s[w].nruns) {
            fprintf(err, "scopeprof: diff: nothing could be read on the %s side\n", w ? "NEW" : "BASE");
            rc = rc == SP_EXIT_OK ? SP_EXIT_INPUT : rc;
            goto out;
        }
        if (s[w].nranks > 1)
            for (int k = 0; k < s[w].nranks; k++)
                if (s[w].ranks[k].seen != (uint32_t)s[w].nrank_run)
                    fprintf(err, "scopeprof: diff: on the %s side, rank %u has %u file(s) and another rank %d: "
                            "runs are missing a rank\n", w ? "NEW" : "BASE", s[w].ranks[k].rank,
                            s[w].ranks[k].seen, s[w].nrank_run);
    }
    /* The rows of either side, in first-seen order (BASE's first). */
    for (int w = 0; w < 2 && !oom; w++)
        for (int r = 0; r < s[w].nruns && !oom; r++)
            for (uint32_t i = 0; i < s[w].run[r].agg.nrows && !oom; i++) {
                const scopeprof_row *row = &s[w].run[r].agg.rows[i];
                oom = scopeprof_agg_row(&d->keys, row->key, row->name, row->extra) == UINT32_MAX;
            }
    d->nrows = d->keys.nrows;
    d->rows = calloc((size_t)d->nrows + 1, sizeof *d->rows);
    oom |= !d->rows;
    for (uint32_t k = 0; !oom && k < d->nrows; k++) {
        d->rows[k].key = d->keys.rows[k].key;
        d->rows[k].name = d->keys.rows[k].name;
        d->rows[k].extra = d->keys.rows[k].extra;
    }
    for (int w = 0; w < 2 && !oom; w++) oom = side_figures(d, &s[w], w) != 0;
    if (!oom) oom = compare(d) != 0;
    if (oom) {
        fprintf(err, "scopeprof: out of memory\n");
        rc = SP_EXIT_OUTPUT;
    }
    d->keys.extra_header = s[0].run ? s[0].run[0].agg.extra_header : NULL;
out:
    for (int w = 0; w < 2; w++) side_free(&s[w]);
    return rc;
}

void sp_diff_free(sp_diff *d) {
    scopeprof_agg_free(&d->keys);
    free(d->rows);
    memset(d, 0, sizeof *d);
}

/* ---- Output ------------------------------------------------------------------------ */
char *sp_diff_format_change(char *buf, size_t n, int64_t ns) {
    if (n < 2) return buf;
    buf[0] = '+';
    scopeprof_format_time(buf + (ns > 0), n - (ns > 0), (double)ns / 1e3);
    return buf;
}

const char *sp_diff_status(const sp_diff_row *r) {
    return r->regressed               ? "regressed"
           : !r->side[0].runs         ? "new only"
           : !r->side[1].runs         ? "base only"
           : r->spread                ? "within spread"
                                      : "";
}

void sp_diff_format_pct(char *b, size_t n, const sp_diff_row *r) {
    if (!r->side[0].runs) snprintf(b, n, "new");
    else if (isnan(r->pct)) snprintf(b, n, "-");
    else snprintf(b, n, "%+.2f%%", r->pct);
}

static void time_cell(FILE *out, int present, int64_t ns, int w) {
    char b[48] = "-";
    if (present) scopeprof_format_time(b, sizeof b, (double)ns / 1e3);
    fprintf(out, "%*s  ", w, b);
}

static const char *key_name(scopeprof_sort key) {
    switch (key) {
    case SCOPEPROF_SORT_CPU_TIME_TOTAL: return "cpu_time_total";
    case SCOPEPROF_SORT_CPU_TIME: return "cpu_time";
    case SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL: return "self_gpu_time_total";
    case SCOPEPROF_SORT_GPU_TIME_TOTAL: return "gpu_time_total";
    case SCOPEPROF_SORT_GPU_TIME: return "gpu_time";
    default: return "self_cpu_time_total";
    }
}

int sp_diff_own_columns(scopeprof_sort key) {
    return key != SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL && key != SCOPEPROF_SORT_CPU_TIME_TOTAL;
}

static uint32_t shown(const sp_diff *d) {
    long l = d->o->limit;
    return l > 0 && (uint32_t)l < d->nrows ? (uint32_t)l : d->nrows;
}

/* What the threshold was, for the lines that name regressions. */
static void threshold_words(char *b, size_t n, const sp_diff *d) {
    char t[48];
    scopeprof_format_time(t, sizeof t, (double)d->o->min_time / 1e3);
    snprintf(b, n, "%s %g%% slower or more, at least %s on NEW%s", sp_diff_key_label(d->key), d->o->threshold, t,
             d->runs[0] > 1 || d->runs[1] > 1 ? ", outside the runs' spread" : "");
}

static void print_text(FILE *out, const sp_diff *d, char **files, const int n[2]) {
    enum { NUM_W = 14, NAME_MAX_W = 55, NOTE_W = 13 };
    static const char *const side_name[2] = {"BASE", "NEW"};
    for (int w = 0; w < 2; w++) {
        fprintf(out, "%-5s %d run(s):", side_name[w], d->runs[w]);
        for (int i = 0; i < n[w]; i++) fprintf(out, " %s", files[(w ? n[0] : 0) + i]);
        fputc('\n', out);
    }
    fprintf(out, "Compared: %s (%s)%s\n", sp_diff_key_label(d->key), key_name(d->key),
            d->runs[0] > 1 || d->runs[1] > 1 ? ", medians of the runs" : "");
    int name_w = 4;
    for (uint32_t i = 0; i < d->nrows; i++)
        if ((int)strlen(d->rows[i].name) + 4 > name_w) name_w = (int)strlen(d->rows[i].name) + 4;
    if (name_w > NAME_MAX_W) name_w = NAME_MAX_W;
    const char *lab = sp_diff_key_label(d->key), *eh = d->keys.extra_header;
    int own = sp_diff_own_columns(d->key), ncols = 8 + 2 * own;
    char sep[512];
    size_t sl = 0;
    int widths[16], nw = 0;
    widths[nw++] = name_w;
    for (int c = 0; c < ncols; c++) widths[nw++] = NUM_W;
    widths[nw++] = NOTE_W;
    if (eh) widths[nw++] = (int)strlen(eh) > 20 ? (int)strlen(eh) : 20;
    for (int c = 0; c < nw; c++) {
        memset(sep + sl, '-', (size_t)widths[c]);
        sl += (size_t)widths[c];
        sep[sl++] = ' ';
        sep[sl++] = ' ';
    }
    sep[sl] = 0;
    char own_b[2][32];
    snprintf(own_b[0], sizeof own_b[0], "Base %s", lab);
    snprintf(own_b[1], sizeof own_b[1], "New %s", lab);
    fprintf(out, "%s\n%*s  ", sep, name_w, "Name");
    const char *heads[] = {"Base calls", "New calls", "Base self CPU", "New self CPU", "Base CPU total",
                           "New CPU total"};
    for (int c = 0; c < 6; c++) fprintf(out, "%*s  ", NUM_W, heads[c]);
    if (own) fprintf(out, "%*s  %*s  ", NUM_W, own_b[0], NUM_W, own_b[1]);
    fprintf(out, "%*s  %*s  %-*s  ", NUM_W, "Change", NUM_W, "Change %", NOTE_W, "Note");
    if (eh) fprintf(out, "%s", eh);
    fprintf(out, "\n%s\n", sep);
    for (uint32_t i = 0; i < shown(d); i++) {
        const sp_diff_row *r = &d->rows[i];
        const sp_diff_fig *b = &r->side[0], *nw2 = &r->side[1];
        char name[NAME_MAX_W + 1], t[48];
        if ((int)strlen(r->name) > name_w) snprintf(name, sizeof name, "%.*s...", name_w - 3, r->name);
        else snprintf(name, sizeof name, "%s", r->name);
        fprintf(out, "%*s  ", name_w, name);
        for (int w = 0; w < 2; w++) {
            char c[32] = "-";
            if (r->side[w].runs) snprintf(c, sizeof c, "%lld", (long long)r->side[w].count);
            fprintf(out, "%*s  ", NUM_W, c);
        }
        time_cell(out, b->runs, b->self_ns, NUM_W);
        time_cell(out, nw2->runs, nw2->self_ns, NUM_W);
        time_cell(out, b->runs, b->total_ns, NUM_W);
        time_cell(out, nw2->runs, nw2->total_ns, NUM_W);
        if (own) time_cell(out, b->runs, b->value, NUM_W), time_cell(out, nw2->runs, nw2->value, NUM_W);
        fprintf(out, "%*s  ", NUM_W, sp_diff_format_change(t, sizeof t, r->change));
        sp_diff_format_pct(t, sizeof t, r);
        fprintf(out, "%*s  %-*s  ", NUM_W, t, NOTE_W, sp_diff_status(r));
        if (eh) fputs(r->extra ? r->extra : "", out);
        fputc('\n', out);
    }
    fprintf(out, "%s\n", sep);
    char t0[48], t1[48], more[120];
    if (sp_more_rows(more, sizeof more, d->nrows, d->o->limit)) fprintf(out, "%s\n", more);
    scopeprof_format_time(t0, sizeof t0, (double)d->self_total[0] / 1e3);
    scopeprof_format_time(t1, sizeof t1, (double)d->self_total[1] / 1e3);
    fprintf(out, "Self CPU time total: %s -> %s", t0, t1);
    if (d->self_total[0]) fprintf(out, " (%+.2f%%)", 100.0 * ((double)d->self_total[1] - (double)d->self_total[0]) / (double)d->self_total[0]);
    fputc('\n', out);
    if (d->runs[0] > 1 || d->runs[1] > 1)
        fprintf(out, "Medians of %d BASE and %d NEW runs; within spread: the median of one side lies between "
                "the fastest and the slowest run of the other, so the change is no more than run-to-run "
                "variation\n", d->runs[0], d->runs[1]);
    if (d->o->threshold < 0) return;
    char why[160];
    threshold_words(why, sizeof why, d);
    if (!d->nregressed) {
        fprintf(out, "No regression (--threshold: %s)\n", why);
        return;
    }
    fprintf(out, "Regressed: %u row(s) (--threshold: %s):\n", d->nregressed, why);
    for (uint32_t i = 0; i < d->nrows; i++) {
        const sp_diff_row *r = &d->rows[i];
        if (!r->regressed) continue;
        scopeprof_format_time(t0, sizeof t0, (double)r->side[0].value / 1e3);
        scopeprof_format_time(t1, sizeof t1, (double)r->side[1].value / 1e3);
        fprintf(out, "  %s%s%s  %+.2f%% (%s -> %s)\n", r->name, r->extra ? " | " : "", r->extra ? r->extra : "",
                r->pct, t0, t1);
    }
}

/* CSV: raw numbers (ns, counts); a side without the row has empty fields. */
static void print_csv(FILE *out, const sp_diff *d) {
    const char *eh = d->keys.extra_header;
    fputs("name,", out);
    if (eh) fprintf(out, "%s,", sp_extra_field(&d->keys));
    fputs("base_count,new_count,base_self_cpu_time_total_ns,new_self_cpu_time_total_ns,base_cpu_time_total_ns,"
          "new_cpu_time_total_ns,base_value_ns,new_value_ns,change_ns,change_percent,base_min_ns,base_max_ns,"
          "new_min_ns,new_max_ns,status\n", out);
    for (uint32_t i = 0; i < shown(d); i++) {
        const sp_diff_row *r = &d->rows[i];
        sp_csv_field(out, r->name);
        fputc(',', out);
        if (eh) sp_csv_field(out, r->extra ? r->extra : ""), fputc(',', out);
        const sp_diff_fig *f[2] = {&r->side[0], &r->side[1]};
#define SIDE_PAIR(field)                                                                         \
    for (int w = 0; w < 2; w++)                                                                  \
        if (f[w]->runs) fprintf(out, "%lld,", (long long)f[w]->field);                          \
        else fputc(',', out);
        SIDE_PAIR(count)
        SIDE_PAIR(self_ns)
        SIDE_PAIR(total_ns)
        SIDE_PAIR(value)
        fprintf(out, "%lld,", (long long)r->change);
        if (!isnan(r->pct)) fprintf(out, "%.2f", r->pct);
        fputc(',', out);
        for (int w = 0; w < 2; w++)
            if (f[w]->runs) fprintf(out, "%lld,%lld,", (long long)f[w]->min, (long long)f[w]->max);
            else fputs(",,", out);
#undef SIDE_PAIR
        const char *st = sp_diff_status(r);
        for (; *st; st++) fputc(*st == ' ' ? '_' : *st, out);
        fputc('\n', out);
    }
}

static void json_num(sp_out *o, const char *k, int64_t v) {
    sp_out_str(o, ",\"");
    sp_out_str(o, k);
    sp_out_str(o, "\":");
    sp_out_i64(o, v);
}

static void print_json(sp_out *o, const sp_diff *d, char **files, const int n[2]) {
    sp_out_str(o, "{\"compared\":");
    sp_out_json_str(o, key_name(d->key));
    for (int w = 0; w < 2; w++) {
        sp_out_str(o, w ? ",\"new\":{\"files\":[" : ",\"base\":{\"files\":[");
        for (int i = 0; i < n[w]; i++) {
            if (i) sp_out_str(o, ",");
            sp_out_json_str(o, files[(w ? n[0] : 0) + i]);
        }
        sp_out_str(o, "]");
        json_num(o, "runs", d->runs[w]);
        json_num(o, "self_cpu_time_total_ns", d->self_total[w]);
        sp_out_str(o, "}");
    }
    sp_out_str(o, ",\"threshold_percent\":");
    if (d->o->threshold < 0) sp_out_str(o, "null");
    else {
        char b[48];
        snprintf(b, sizeof b, "%g", d->o->threshold);
        sp_out_str(o, b);
    }
    json_num(o, "min_time_ns", (int64_t)d->o->min_time);
    json_num(o, "regressed", d->nregressed);
    if (shown(d) < d->nrows) json_num(o, "more_rows", d->nrows - shown(d));
    sp_out_str(o, ",\"rows\":[");
    for (uint32_t i = 0; i < shown(d); i++) {
        const sp_diff_row *r = &d->rows[i];
        sp_out_str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
        sp_out_json_str(o, r->name);
        if (r->extra) {
            sp_out_str(o, ",\"");
            sp_out_str(o, sp_extra_field(&d->keys));
            sp_out_str(o, "\":");
            sp_out_json_str(o, r->extra);
        }
        for (int w = 0; w < 2; w++) {
            const sp_diff_fig *f = &r->side[w];
            sp_out_str(o, w ? ",\"new\":" : ",\"base\":");
            if (!f->runs) {
                sp_out_str(o, "null");
                continue;
            }
            sp_out_str(o, "{\"runs\":");
            sp_out_i64(o, f->runs);
            json_num(o, "count", f->count);
            json_num(o, "self_cpu_time_total_ns", f->self_ns);
            json_num(o, "cpu_time_total_ns", f->total_ns);
            json_num(o, "value_ns", f->value);
            json_num(o, "min_ns", f->min);
            json_num(o, "max_ns", f->max);
            sp_out_str(o, "}");
        }
        json_num(o, "change_ns", r->change);
        sp_out_str(o, ",\"change_percent\":");
        if (isnan(r->pct)) sp_out_str(o, "null");
        else {
            char b[48];
            snprintf(b, sizeof b, "%.2f", r->pct);
            sp_out_str(o, b);
        }
        sp_out_str(o, r->spread ? ",\"within_spread\":true" : ",\"within_spread\":false");
        sp_out_str(o, r->regressed ? ",\"regressed\":true}" : ",\"regressed\":false}");
    }
    sp_out_str(o, "]}\n");
}

/* Markdown, for a pull-request comment: a line on what regressed, then the
 * table with each side's figure as "BASE → NEW" in one cell. */
static void md_pair(FILE *out, const sp_diff_row *r, int64_t b, int64_t n, int time) {
    char x[48] = "-", y[48] = "-";
    if (time) {
        if (r->side[0].runs) scopeprof_format_time(x, sizeof x, (double)b / 1e3);
        if (r->side[1].runs) scopeprof_format_time(y, sizeof y, (double)n / 1e3);
    } else {
        if (r->side[0].runs) snprintf(x, sizeof x, "%lld", (long long)b);
        if (r->side[1].runs) snprintf(y, sizeof y, "%lld", (long long)n);
    }
    fprintf(out, " %s → %s |", x, y);
}

static void print_markdown(FILE *out, const sp_diff *d) {
    const char *lab = sp_diff_key_label(d->key), *eh = d->keys.extra_header;
    int own = sp_diff_own_columns(d->key);
    fprintf(out, "**scopeprof diff**: %s, BASE %d run(s) → NEW %d run(s)%s\n\n", lab, d->runs[0], d->runs[1],
            d->runs[0] > 1 || d->runs[1] > 1 ? " (medians)" : "");
    if (d->o->threshold >= 0) {
        char why[160];
        threshold_words(why, sizeof why, d);
        if (!d->nregressed) fprintf(out, "No regression (%s).\n\n", why);
        else {
            fprintf(out, "**%u row(s) regressed** (%s):", d->nregressed, why);
            for (uint32_t i = 0, k = 0; i < d->nrows; i++) {
                if (!d->rows[i].regressed) continue;
                fputs(k++ ? ", " : " ", out);
                sp_md_cell(out, d->rows[i].name);
                fprintf(out, " %+.2f%%", d->rows[i].pct);
            }
            fputs("\n\n", out);
        }
    }
    fputs("| Name | Calls | Self CPU | CPU total |", out);
    if (own) fprintf(out, " %s |", lab);
    fputs(" Change | Change % | Note |", out);
    if (eh) fputc(' ', out), sp_md_cell(out, eh), fputs(" |", out);
    fputs(own ? "\n|:--|--:|--:|--:|--:|--:|--:|:--|" : "\n|:--|--:|--:|--:|--:|--:|:--|", out);
    fputs(eh ? ":--|\n" : "\n", out);
    for (uint32_t i = 0; i < shown(d); i++) {
        const sp_diff_row *r = &d->rows[i];
        char t[48];
        fputs("| ", out);
        sp_md_cell(out, r->name);
        fputs(" |", out);
        md_pair(out, r, r->side[0].count, r->side[1].count, 0);
        md_pair(out, r, r->side[0].self_ns, r->side[1].self_ns, 1);
        md_pair(out, r, r->side[0].total_ns, r->side[1].total_ns, 1);
        if (own) md_pair(out, r, r->side[0].value, r->side[1].value, 1);
        fprintf(out, " %s |", sp_diff_format_change(t, sizeof t, r->change));
        sp_diff_format_pct(t, sizeof t, r);
        fprintf(out, " %s | %s%s%s |", t, r->regressed ? "**" : "", sp_diff_status(r), r->regressed ? "**" : "");
        if (eh) fputc(' ', out), sp_md_cell(out, r->extra ? r->extra : ""), fputs(" |", out);
        fputc('\n', out);
    }
    char more[120];
    if (sp_more_rows(more, sizeof more, d->nrows, d->o->limit)) fprintf(out, "\n%s\n", more);
}

int sp_diff_check_key(scopeprof_sort key, FILE *err) {
    if (sp_diff_key_label(key)) return 0;
    fprintf(err, "scopeprof: diff compares times: --sort self_cpu_time_total, cpu_time_total, cpu_time, "
            "self_gpu_time_total, gpu_time_total or gpu_time\n");
    return -1;
}

int sp_cmd_diff(char **files, const int n[2], const sp_diff_opts *o, FILE *out, FILE *err) {
    sp_diff d;
    int rc = sp_diff_read(&d, files, n, o->group, o->stack_n, o, err);
    if (rc == SP_EXIT_USAGE || rc == SP_EXIT_OUTPUT || !d.runs[0] || !d.runs[1]) {
        sp_diff_free(&d);
        return rc;
    }
    sp_out js;
    sp_out_init(&js, out);
    if (o->format == SP_FORMAT_TEXT) print_text(out, &d, files, n);
    else if (o->format == SP_FORMAT_CSV) print_csv(out, &d);
    else if (o->format == SP_FORMAT_MARKDOWN) print_markdown(out, &d);
    else print_json(&js, &d, files, n);
    errno = 0;
    if (sp_out_flush(&js) != 0 || fflush(out) != 0 || ferror(out)) {
        sp_output_failed(err, o->out_name, errno);
        rc = SP_EXIT_OUTPUT;
    }
    sp_out_free(&js);
    /* A regression is only claimed on inputs that read well. */
    if (rc == SP_EXIT_OK && d.nregressed) rc = SP_EXIT_REGRESSED;
    sp_diff_free(&d);
    return rc;
}
