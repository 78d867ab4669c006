/* html.c -- `scopeprof html`: one self-contained page with the table (a
 * sortable <table>), flame graphs per thread and merged, and the timeline
 * (timeline.c); `html --diff`: the comparison of `scopeprof diff` (diff.c)
 * as a table and a differential flame graph. The numbers come from the
 * aggregation over files (aggregate.h): nothing is computed twice. The
 * page's behaviour is reporter/flame.js and reporter/report.js, compiled in.
 * docs/REPORTER.md. */
#define _GNU_SOURCE /* open_memstream */
#define SCOPEPROF_AGGREGATION
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "buf.h"
#include "cells.h"
#include "diff.h"
#include "clocks.h"
#include "exit.h"
#include "flame.h"
#include "flame_js.h"
#include "input.h"
#include "picture.h"
#include "ranks.h"
#include "report_js.h"
#include "timeline.h"

/* ---- The page -------------------------------------------------------------- */
/* No network: the Content-Security-Policy forbids every load (images, fonts,
 * scripts, styles from elsewhere); what the page needs is inline. */
static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
    "<meta name=\"viewport\" content=\"width=device-width\">\n"
    "<meta name=\"generator\" content=\"scopeprof " SCOPEPROF_VERSION_STRING "\">\n";

/* The page fills the window's width; the table scrolls in a box of its own
 * so that the pictures stay in reach. */
static const char page_style[] =
    "<style>\n"
    "body{font:14px sans-serif;margin:12px 16px;background:#fff;color:#222}\n"
    "header{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 16px}\n"
    "h1{font-size:20px;margin:0}h2{font-size:16px;margin:20px 0 6px}h3{font:bold 13px sans-serif;margin:10px 0 2px}\n"
    "p{margin:4px 0}code{font-size:13px}\n"
    ".tablebox{max-height:45vh;overflow:auto;border:1px solid #ddd}\n"
    "table.sortable{border-collapse:collapse;font:12px monospace;width:100%}\n"
    "table.sortable th{position:sticky;top:0;background:#eee;cursor:pointer;text-align:right;padding:3px 6px;"
    "font:bold 12px sans-serif;white-space:nowrap;user-select:none}\n"
    "table.sortable th[data-type=text]{text-align:left}\n"
    "table.sortable th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "table.sortable th[aria-sort=ascending]::after{content:' \\25B2'}\n"
    "table.sortable td{text-align:right;padding:1px 6px;white-space:nowrap;border-top:1px solid #f0f0f0}\n"
    "table.sortable td:first-child{text-align:left;white-space:normal;word-break:break-all}\n"
    "table.sortable tr:hover td{background:#ffe9a8}table.sortable tr.hit td{background:#e4d4ff}\n"
    "table.sortable tr.regressed td{background:#fdd}table.diff td:last-child{text-align:left}\n"
    "pre.notes{font:12px monospace;margin:4px 0;white-space:pre-wrap}\n"
    "svg{display:block}svg text{font:12px monospace;fill:#000;pointer-events:none}\n"
    "svg text.head,svg text.track{font:bold 12px sans-serif}\n"
    "svg text.axis{fill:#666}svg line.tick{stroke:#ddd}\n"
    "svg .frame rect,svg .slice rect,svg .step rect{stroke:#fff;stroke-width:0.5;vector-effect:non-scaling-stroke}\n"
    "svg .frame{cursor:pointer}svg .frame:hover rect,svg .slice:hover rect,svg .step:hover rect{stroke:#000}\n"
    "svg .hit rect{fill:#c8a0ff}svg .parent{opacity:.55}\n"
    "svg .ctl{font:12px sans-serif;fill:#06c;cursor:pointer;pointer-events:auto}\n"
    "svg path.counter{fill:#b7d3ef;stroke:#2c6aa8;stroke-width:1;vector-effect:non-scaling-stroke}\n"
    ".box{border:1px solid #ddd;overflow-x:hidden}\n"
    ".tlbox{border:1px solid #ddd;overflow-x:hidden;overflow-y:auto;max-height:80vh;cursor:grab}\n"
    ".legend span{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 4px 0 10px}\n"
    "</style>\n";

/* The page's head; its title names the first file ("and more" if there are
 * others), and with `vs` (html --diff's NEW runs) the first of those too. */
static void put_title(sp_out *m, const char *what, char **files, int nfiles, char **vs, int nvs) {
    sp_out_str(m, page_head);
    sp_out_str(m, "<title>scopeprof");
    sp_out_str(m, what);
    sp_out_str(m, ": ");
    for (int side = 0; side < (vs ? 2 : 1); side++) {
        if (side) sp_out_str(m, " vs ");
        sp_out_xml(m, sp_base_name(side ? vs[0] : files[0]));
        if ((side ? nvs : nfiles) > 1) sp_out_str(m, " and more");
    }
    sp_out_str(m, "</title>\n");
    sp_out_str(m, page_style);
    sp_out_str(m, "</head>\n<body>\n");
}

static void put_files(sp_out *m, char **files, int nfiles) {
    for (int i = 0; i < nfiles; i++) {
        if (i) sp_out_str(m, ", ");
        sp_out_str(m, "<code>");
        sp_out_xml(m, files[i]);
        sp_out_str(m, "</code>");
    }
}

/* Text of several lines: each escaped (sp_out_xml makes control
 * characters U+FFFD), the line breaks kept. */
static void put_lines(sp_out *m, const char *text) {
    while (*text) {
        size_t len = strcspn(text, "\n");
        char *line = strndup(text, len);
        if (!line) {
            m->err = 1;
            return;
        }
        sp_out_xml(m, line);
        free(line);
        text += len;
        if (*text) sp_out_str(m, "\n"), text++;
    }
}

static void put_find(sp_out *m) {
    sp_out_str(m, "<label>Find: <input id=\"find\" type=\"search\" placeholder=\"scope name\"></label> "
                  "<span id=\"found\"></span>\n");
}

static void put_script(sp_out *m) {
    sp_out_str(m, "<script>\n");
    sp_out_str(m, sp_flame_js);
    sp_out_str(m, sp_report_js);
    sp_out_str(m, "</script>\n</body>\n</html>\n");
}

/* ---- Tables -------------------------------------------------------------- */
/* A cell: shown text, and the raw number report.js sorts by. */
static void cell_num(sp_out *m, double v, const char *text) {
    char b[80];
    snprintf(b, sizeof b, "<td data-v=\"%.17g\">", v);
    sp_out_str(m, b);
    sp_out_xml(m, text);
    sp_out_str(m, "</td>");
}
static void cell_time(sp_out *m, int64_t ns) {
    char t[48];
    cell_num(m, (double)ns, scopeprof_format_time(t, sizeof t, (double)ns / 1e3));
}
static void cell_mem(sp_out *m, int64_t bytes) {
    char t[48];
    cell_num(m, (double)bytes, scopeprof_format_mem(t, sizeof t, bytes));
}
static void cell_pct(sp_out *m, int64_t num, int64_t den) {
    char t[48];
    double p = den ? 100.0 * (double)num / (double)den : 0;
    if (den) snprintf(t, sizeof t, "%.2f%%", p);
    else snprintf(t, sizeof t, "NaN");
    cell_num(m, p, t);
}
static void head_cells(sp_out *m, const char *const *heads, int n) {
    for (int i = 0; i < n; i++) {
        sp_out_str(m, "<th>");
        sp_out_str(m, heads[i]);
        sp_out_str(m, "</th>");
    }
}

/* The key_averages table as `scopeprof table` shows it (the same columns
 * and figures, sorted by CPU total), one <tr> per row. */
static void put_table(sp_out *m, const scopeprof_agg *a, long limit) {
    static const char *const cpu[] = {"Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
    static const char *const gpu[] = {"Self GPU", "Self GPU %", "GPU total", "GPU time avg"};
    static const char *const mem[] = {"CPU Mem", "Self CPU Mem"}, *const gmem[] = {"GPU Mem", "Self GPU Mem"};
    uint32_t *idx = scopeprof_agg_sorted(a, SCOPEPROF_SORT_CPU_TIME_TOTAL);
    if (!idx) {
        m->err = 1;
        return;
    }
    int64_t st = scopeprof_agg_self_total(a), gt = scopeprof_agg_gpu_self_total(a);
    sp_out_str(m, "<div class=\"tablebox\"><table class=\"sortable ops\">\n<thead><tr><th data-type=\"text\">Name</th>");
    head_cells(m, cpu, 5);
    if (a->has_gpu) head_cells(m, gpu, 4);
    if (a->has_mem) head_cells(m, mem, 2);
    if (a->has_gpu_mem) head_cells(m, gmem, 2);
    sp_out_str(m, "<th>#&#160;of&#160;Calls</th></tr></thead>\n<tbody>\n");
    uint32_t n = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        int64_t cnt = r->count ? (int64_t)r->count : 1;
        char c[32];
        sp_out_str(m, "<tr><td>");
        sp_out_xml(m, r->name);
        sp_out_str(m, "</td>");
        cell_pct(m, r->self_ns, st);
        cell_time(m, r->self_ns);
        cell_pct(m, r->total_ns, st);
        cell_time(m, r->total_ns);
        cell_time(m, r->total_ns / cnt);
        if (a->has_gpu) {
            cell_time(m, r->gpu_self_ns);
            cell_pct(m, r->gpu_self_ns, gt);
            cell_time(m, r->gpu_total_ns);
            cell_time(m, r->gpu_total_ns / cnt);
        }
        if (a->has_mem) cell_mem(m, r->cpu_mem), cell_mem(m, r->self_cpu_mem);
        if (a->has_gpu_mem) cell_mem(m, r->gpu_mem), cell_mem(m, r->self_gpu_mem);
        snprintf(c, sizeof c, "%llu", (unsigned long long)r->count);
        cell_num(m, (double)r->count, c);
        sp_out_str(m, "</tr>\n");
    }
    sp_out_str(m, "</tbody></table></div>\n");
    char more[120];
    if (sp_more_rows(more, sizeof more, a->nrows, limit)) sp_out_str(m, "<p>"), sp_out_str(m, more), sp_out_str(m, "</p>\n");
    free(idx);
}

/* ---- Across ranks: the table of `scopeprof table --per-rank` -------------------- */
/* A column head: "METRIC WHAT", text (sorted by name) or a number. */
static void head_metric(sp_out *m, const char *metric, const char *what, int text) {
    sp_out_str(m, text ? "<th data-type=\"text\">" : "<th>");
    sp_out_str(m, metric);
    sp_out_str(m, what);
    sp_out_str(m, "</th>");
}
static void cell_text(sp_out *m, const char *text) {
    sp_out_str(m, "<td>");
    sp_out_xml(m, text);
    sp_out_str(m, "</td>");
}
/* A figure of metric k: a count (the mean with two decimals), or a time. */
static void cell_metric(sp_out *m, int k, double v, int mean) {
    char t[48];
    if (k != SCOPEPROF_RANK_CALLS) {
        cell_time(m, (int64_t)v);
        return;
    }
    snprintf(t, sizeof t, mean ? "%.2f" : "%.0f", v);
    cell_num(m, v, t);
}

/* Per row of the merged table (sorted by CPU total): calls, self and total
 * CPU time as min / mean / max over the files, with the rank (or file) of
 * each min and max, and the imbalance (max / mean of self time), as the
 * job table at MPI_Finalize shows them. */
static void put_rank_table(sp_out *m, const scopeprof_agg *a, const sp_ranks *rs, long limit) {
    static const char *const metric[SCOPEPROF_RANK_METRICS] = {"Calls", "Self CPU", "CPU total"};
    uint32_t *idx = scopeprof_agg_sorted(a, SCOPEPROF_SORT_CPU_TIME_TOTAL);
    if (!idx) {
        m->err = 1;
        return;
    }
    sp_out_str(m, "<div class=\"tablebox\"><table class=\"sortable ranks\">\n<thead><tr>");
    head_metric(m, "Name", "", 1);
    for (int k = 0; k < SCOPEPROF_RANK_METRICS; k++) {
        head_metric(m, metric[k], " min", 0);
        head_metric(m, metric[k], " min at", 1);
        head_metric(m, metric[k], " mean", 0);
        head_metric(m, metric[k], " max", 0);
        head_metric(m, metric[k], " max at", 1);
    }
    sp_out_str(m, "<th>Imbalance</th></tr></thead>\n<tbody>\n");
    double n = rs->x.ncols ? (double)rs->x.ncols : 1;
    uint32_t shown = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < shown; i++) {
        uint32_t row = idx[i];
        static const scopeprof_rank_row none;
        const scopeprof_rank_row *r = row < rs->x.cap ? &rs->x.rows[row] : &none;
        char t[64];
        sp_out_str(m, "<tr>");
        cell_text(m, a->rows[row].name);
        for (int k = 0; k < SCOPEPROF_RANK_METRICS; k++) {
            const scopeprof_rank_stat *st = &r->s[k];
            cell_metric(m, k, (double)st->min, 0);
            cell_text(m, scopeprof_ranks_label(&rs->x, st->min_at, t, sizeof t));
            cell_metric(m, k, (double)st->sum / n, 1);
            cell_metric(m, k, (double)st->max, 0);
            cell_text(m, scopeprof_ranks_label(&rs->x, st->max_at, t, sizeof t));
        }
        double imb = scopeprof_ranks_imbalance(&rs->x, r); /* 0: no self time anywhere (0 / 0) */
        if (imb > 0) snprintf(t, sizeof t, "%.2f", imb);
        else snprintf(t, sizeof t, "-");
        cell_num(m, imb, t);
        sp_out_str(m, "</tr>\n");
    }
    sp_out_str(m, "</tbody></table></div>\n");
    char more[120];
    if (sp_more_rows(more, sizeof more, a->nrows, limit)) sp_out_str(m, "<p>"), sp_out_str(m, more), sp_out_str(m, "</p>\n");
    free(idx);
}

/* With several files (an MPI job's ranks, or runs to compare), the section
 * across them: each file read into a table of its own and merged, as
 * `scopeprof table --per-rank` does (its diagnostics were said by the first
 * pass: dropped here). */
static void put_ranks(sp_out *m, char **files, int nfiles, long limit) {
    sp_agg_ctx all;
    sp_ranks rs;
    sp_agg_ctx_init(&all, SP_GROUP_NAME, 0);
    int bad = sp_ranks_init(&rs, files, nfiles) != 0;
    FILE *quiet = fopen("/dev/null", "w");
    bad |= !quiet;
    for (int i = 0; i < nfiles && !bad; i++) {
        sp_agg_ctx one;
        sp_agg_ctx_init(&one, SP_GROUP_NAME, 0);
        sp_agg_file(&one, files[i], quiet);
        bad = sp_ranks_merge(&rs, i, &all, &one) != 0 || one.oom;
    }
    if (quiet) fclose(quiet);
    if (bad) {
        m->err = 1;
    } else {
        scopeprof_ranks_done(&rs.x, all.agg.nrows);
        char b[320];
        snprintf(b, sizeof b, "<section id=\"ranks\">\n<h2>Across files</h2>\n<p>%d files (ranks, or runs), as "
                 "<code>scopeprof table --per-rank</code> shows them: per row, min, mean and max over the files, "
                 "where the min and max are, and the imbalance (max / mean of self time).</p>\n", nfiles);
        sp_out_str(m, b);
        put_rank_table(m, &all.agg, &rs, limit);
        sp_out_str(m, "</section>\n");
    }
    sp_ranks_free(&rs);
    sp_agg_ctx_free(&all);
}

/* ---- Flame graphs: one per thread, and all threads merged ---------------------- */
enum { MAX_THREAD_GRAPHS = 32 }; /* the busiest; the rest are in the merged graph */

typedef struct thread_flames {
    scopeprof_agg labels; /* thread label -> index (a hash map) */
    sp_flame **f;
    sp_flame *merged;
} thread_flames;

/* From the per-thread folded stacks ("thread;outer;...;leaf"): a graph per
 * thread (its frame at the bottom) and the merged one (without it). */
static int build_flames(thread_flames *tf, const scopeprof_agg *stacks) {
    memset(tf, 0, sizeof *tf);
    scopeprof_agg_init(&tf->labels);
    if (!(tf->merged = sp_flame_new("all"))) return -1;
    for (uint32_t i = 0; i < stacks->nrows; i++) {
        const char *key = stacks->rows[i].key, *semi = strchr(key, ';');
        int64_t v = stacks->rows[i].self_ns;
        if (!semi || v <= 0) continue;
        char label[256];
        snprintf(label, sizeof label, "%.*s", (int)(semi - key < 255 ? semi - key : 255), key);
        uint32_t n0 = tf->labels.nrows, k = scopeprof_agg_row(&tf->labels, label, label, NULL);
        if (k == UINT32_MAX) return -1;
        if (k == n0) {
            sp_flame **v2 = realloc(tf->f, ((size_t)k + 1) * sizeof *v2);
            if (!v2) return -1;
            tf->f = v2;
            if (!(tf->f[k] = sp_flame_new(label))) return -1;
        }
        if (sp_flame_add(tf->f[k], semi + 1, v) != 0 || sp_flame_add(tf->merged, semi + 1, v) != 0) return -1;
    }
    return 0;
}

static void free_flames(thread_flames *tf) {
    for (uint32_t i = 0; i < tf->labels.nrows && tf->f; i++) sp_flame_free(tf->f[i]);
    free(tf->f);
    sp_flame_free(tf->merged);
    scopeprof_agg_free(&tf->labels);
}

static const sp_flame *const *g_flames; /* qsort has no context argument */
static int cmp_flame_total(const void *a, const void *b) {
    int64_t x = sp_flame_total(g_flames[*(const uint32_t *)a]), y = sp_flame_total(g_flames[*(const uint32_t *)b]);
    return x > y ? -1 : x < y ? 1 : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static void put_flames(sp_out *m, thread_flames *tf) {
    uint32_t n = tf->labels.nrows, shown = n < MAX_THREAD_GRAPHS ? n : MAX_THREAD_GRAPHS;
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) {
        m->err = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    g_flames = (const sp_flame *const *)tf->f;
    qsort(order, n, sizeof *order, cmp_flame_total);
    int64_t all = sp_flame_total(tf->merged);
    char b[400];
    sp_out_str(m, "<section id=\"flames\">\n<h2>Flame graphs</h2>\n<p>Self CPU time of each stack (as "
                  "<code>scopeprof stacks</code>): a frame is as wide as its time including what it called. "
                  "Hover for the figures, click a frame to zoom into it. "
                  "<label><input type=\"radio\" name=\"fgview\" value=\"threads\" checked> one graph per thread"
                  "</label> <label><input type=\"radio\" name=\"fgview\" value=\"merged\"> all threads merged"
                  "</label></p>\n<div id=\"fg-threads\">\n");
    for (uint32_t i = 0; i < shown; i++) {
        sp_flame *f = tf->f[order[i]];
        char t[32], title[340];
        scopeprof_format_time(t, sizeof t, (double)sp_flame_total(f) / 1e3);
        snprintf(title, sizeof title, "%.256s: %s, %.1f%% of all threads", tf->labels.rows[order[i]].name, t,
                 all ? 100.0 * (double)sp_flame_total(f) / (double)all : 0.0);
        sp_out_str(m, "<div class=\"box\">\n");
        sp_flame_svg(f, m, 1200, 0, title);
        sp_out_str(m, "</div>\n");
    }
    if (n > shown) {
        int64_t rest = 0;
        for (uint32_t i = shown; i < n; i++) rest += sp_flame_total(tf->f[order[i]]);
        char t[32];
        scopeprof_format_time(t, sizeof t, (double)rest / 1e3);
        snprintf(b, sizeof b, "<p>%u more thread(s), %s in all: in the merged graph.</p>\n", n - shown, t);
        sp_out_str(m, b);
    }
    sp_out_str(m, "</div>\n<div id=\"fg-merged\" hidden>\n<div class=\"box\">\n");
    sp_flame_svg(tf->merged, m, 1200, 0, "all threads, all files");
    sp_out_str(m, "</div>\n</div>\n</section>\n");
    free(order);
}

/* ---- scopeprof html ------------------------------------------------------------ */
/* html reads each file twice: standard input or a pipe would give an empty
 * second pass (issue 25, item 13). */
static int refuse_pipes(char **files, int nfiles, FILE *err) {
    for (int i = 0; i < nfiles; i++)
        if (!sp_input_rereadable(files[i])) {
            fprintf(err, "scopeprof: %s: not a regular file: html reads each file twice, so not "
                    "standard input or a pipe (save it to a file first)\n", files[i]);
            return -1;
        }
    return 0;
}

int sp_cmd_html(char **files, int nfiles, const char *output, const char *name, long limit, FILE *out,
                FILE *err) {
    if (refuse_pipes(files, nfiles, err)) return SP_EXIT_USAGE;
    sp_clocks_align(files, nfiles, err); /* the timeline: files of several hosts on one clock */
    /* First pass: the table, with the diagnostics of `scopeprof table`, and
     * the lines under it (totals, notes, memory). */
    scopeprof_agg table, stacks;
    int usable;
    char *notes = NULL;
    size_t nnotes = 0;
    FILE *nf = open_memstream(&notes, &nnotes);
    FILE *ff = nf ? nf : fopen("/dev/null", "w");
    int rc = sp_aggregate(files, nfiles, 0, NULL, &table, NULL, &usable, err);
    if (!usable) {
        if (ff) fclose(ff);
        free(notes);
        scopeprof_agg_free(&table);
        return rc;
    }
    /* Second pass: the stacks per thread and the timeline; its diagnostics
     * repeat the first pass's, so they are dropped. The memory footer comes
     * from this pass (the same files, the same peaks). */
    sp_timeline *tl = sp_timeline_new(files);
    sp_tap tap = tl ? sp_timeline_tap(tl) : (sp_tap){0};
    FILE *quiet = fopen("/dev/null", "w");
    char tm[48];
    if (ff) {
        fprintf(ff, "Self CPU time total: %s\n",
                scopeprof_format_time(tm, sizeof tm, (double)scopeprof_agg_self_total(&table) / 1e3));
        if (table.has_gpu)
            fprintf(ff, "Self GPU time total: %s\n",
                    scopeprof_format_time(tm, sizeof tm, (double)scopeprof_agg_gpu_self_total(&table) / 1e3));
        scopeprof_table_notes(ff, &table);
    }
    sp_aggregate(files, nfiles, SP_FOLDED_PER_THREAD, tl ? &tap : NULL, &stacks, ff, &usable, quiet ? quiet : err);
    if (quiet) fclose(quiet);
    if (ff) fclose(ff);
    thread_flames tf;
    int fl_bad = build_flames(&tf, &stacks) != 0;
    scopeprof_agg_free(&stacks);

    sp_out m;
    sp_out_init(&m, NULL);
    if (fl_bad || sp_timeline_oom(tl) || !nf) m.err = 1;
    put_title(&m, "", files, nfiles, NULL, 0);
    sp_out_str(&m, "<header><h1>scopeprof report</h1><span class=\"files\">");
    put_files(&m, files, nfiles);
    sp_out_str(&m, "</span>");
    put_find(&m);
    sp_out_str(&m, "</header>\n<section id=\"ops\">\n<h2>Operators</h2>\n");
    char b[200];
    snprintf(b, sizeof b, "<p>%u row(s), as <code>scopeprof table</code> counts them; sorted by CPU total, "
             "click a column's head to sort by it.</p>\n", table.nrows);
    sp_out_str(&m, b);
    put_table(&m, &table, limit);
    sp_out_str(&m, "<pre class=\"notes\">");
    if (notes) put_lines(&m, notes);
    sp_out_str(&m, "</pre>\n</section>\n");
    scopeprof_agg_free(&table);
    free(notes);
    if (nfiles > 1) put_ranks(&m, files, nfiles, limit);
    if (!fl_bad) put_flames(&m, &tf);
    free_flames(&tf);
    sp_out_str(&m, "<section id=\"timeline\">\n<h2>Timeline</h2>\n<p>");
    if (tl) sp_timeline_caption(tl, &m);
    sp_out_str(&m, ". Ctrl+wheel (or a pinch) or W/S zooms where the pointer is, drag or A/D pans, a double "
                   "click shows it all: <button id=\"tl-in\" type=\"button\">+</button> "
                   "<button id=\"tl-out\" type=\"button\">&#8722;</button> "
                   "<button id=\"tl-reset\" type=\"button\">all</button> <span id=\"tl-view\"></span>. "
                   "For the whole trace: <code>scopeprof trace</code> and ui.perfetto.dev.</p>\n"
                   "<div class=\"tlbox\">\n");
    if (tl) sp_timeline_svg(tl, &m, 1200);
    sp_out_str(&m, "</div>\n</section>\n");
    sp_timeline_free(tl);
    put_script(&m);
    int wr = sp_picture_write(output, name, &m, out, err);
    sp_out_free(&m);
    return wr != SP_EXIT_OK ? wr : rc;
}

/* ---- scopeprof html --diff ----------------------------------------------------- */
static void put_diff_table(sp_out *m, const sp_diff *d) {
    const char *lab = sp_diff_key_label(d->key);
    int own = sp_diff_own_columns(d->key);
    static const char *const heads[] = {"BASE calls", "NEW calls", "BASE self CPU", "NEW self CPU",
                                        "BASE CPU total", "NEW CPU total"};
    sp_out_str(m, "<div class=\"tablebox\"><table class=\"sortable diff\">\n<thead><tr><th data-type=\"text\">Name</th>");
    head_cells(m, heads, 6);
    if (own) {
        char b[2][48];
        snprintf(b[0], sizeof b[0], "BASE %s", lab);
        snprintf(b[1], sizeof b[1], "NEW %s", lab);
        const char *h[] = {b[0], b[1]};
        head_cells(m, h, 2);
    }
    sp_out_str(m, "<th>Change</th><th>Change %</th><th data-type=\"text\">Note</th></tr></thead>\n<tbody>\n");
    uint32_t n = d->o->limit > 0 && (uint32_t)d->o->limit < d->nrows ? (uint32_t)d->o->limit : d->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const sp_diff_row *r = &d->rows[i];
        sp_out_str(m, r->regressed ? "<tr class=\"regressed\"><td>" : "<tr><td>");
        sp_out_xml(m, r->name);
        sp_out_str(m, "</td>");
        for (int w = 0; w < 2; w++) {
            char c[32] = "-";
            if (r->side[w].runs) snprintf(c, sizeof c, "%lld", (long long)r->side[w].count);
            cell_num(m, (double)r->side[w].count, c);
        }
        int64_t v[3][2] = {{r->side[0].self_ns, r->side[1].self_ns},
                           {r->side[0].total_ns, r->side[1].total_ns},
                           {r->side[0].value, r->side[1].value}};
        for (int k = 0; k < 2 + own; k++)
            for (int w = 0; w < 2; w++) {
                if (r->side[w].runs) cell_time(m, v[k][w]);
                else cell_num(m, 0, "-");
            }
        char t[48];
        cell_num(m, (double)r->change, sp_diff_format_change(t, sizeof t, r->change));
        sp_diff_format_pct(t, sizeof t, r); /* sorted as: new only above all, none as 0 */
        cell_num(m, !r->side[0].runs ? 1e300 : isnan(r->pct) ? 0 : r->pct, t);
        sp_out_str(m, "<td>");
        sp_out_str(m, sp_diff_status(r));
        sp_out_str(m, "</td></tr>\n");
    }
    sp_out_str(m, "</tbody></table></div>\n");
}

int sp_cmd_html_diff(char **files, const int n[2], const struct sp_diff_opts *o, const char *output,
                     const char *name, FILE *out, FILE *err) {
    if (refuse_pipes(files, n[0] + n[1], err)) return SP_EXIT_USAGE;
    /* The table, with the diagnostics; then the folded stacks for the
     * graph, quietly (the same files). */
    sp_diff d, st;
    int rc = sp_diff_read(&d, files, n, o->group, o->stack_n, o, err);
    if (rc == SP_EXIT_USAGE || rc == SP_EXIT_OUTPUT || !d.runs[0] || !d.runs[1]) {
        sp_diff_free(&d);
        return rc;
    }
    FILE *quiet = fopen("/dev/null", "w");
    int src = sp_diff_read(&st, files, n, SP_GROUP_FOLDED, 0, o, quiet ? quiet : err);
    if (quiet) fclose(quiet);
    sp_flame *f = sp_flame_new("all");
    int bad = !f || src == SP_EXIT_OUTPUT;
    if (f) sp_flame_set_diff(f);
    for (uint32_t i = 0; f && !bad && i < st.nrows; i++)
        bad = sp_flame_add_diff(f, st.rows[i].key, st.rows[i].side[1].value, st.rows[i].side[0].value) != 0;
    uint32_t base_only = 0;
    for (uint32_t i = 0; i < st.nrows; i++) base_only += !st.rows[i].side[1].runs;

    sp_out m;
    sp_out_init(&m, NULL);
    if (bad) m.err = 1;
    put_title(&m, " diff", files, n[0], files + n[0], n[1]);
    sp_out_str(&m, "<header><h1>scopeprof diff</h1>");
    put_find(&m);
    sp_out_str(&m, "</header>\n<p>BASE, ");
    char b[300];
    snprintf(b, sizeof b, "%d run(s): ", d.runs[0]);
    sp_out_str(&m, b);
    put_files(&m, files, n[0]);
    snprintf(b, sizeof b, "<br>NEW, %d run(s): ", d.runs[1]);
    sp_out_str(&m, b);
    put_files(&m, files + n[0], n[1]);
    snprintf(b, sizeof b, "</p>\n<section id=\"ops\">\n<h2>By scope: %s%s</h2>\n", sp_diff_key_label(d.key),
             d.runs[0] > 1 || d.runs[1] > 1 ? " (medians of the runs)" : "");
    sp_out_str(&m, b);
    char t0[48], t1[48];
    scopeprof_format_time(t0, sizeof t0, (double)d.self_total[0] / 1e3);
    scopeprof_format_time(t1, sizeof t1, (double)d.self_total[1] / 1e3);
    snprintf(b, sizeof b, "<p>Self CPU time total: %s &#8594; %s. Largest change first; click a column's head to "
             "sort by it. <i>within spread</i>: the median of one side lies between the fastest and the slowest "
             "run of the other.</p>\n", t0, t1);
    sp_out_str(&m, b);
    put_diff_table(&m, &d);
    sp_out_str(&m, "</section>\n<section id=\"flames\">\n<h2>Differential flame graph</h2>\n<p>Self CPU time of "
                   "each stack: a frame is as wide as its time in NEW and coloured by its change from BASE "
                   "<span class=\"legend\"><span style=\"background:rgb(255,35,35)\"></span>slower"
                   "<span style=\"background:rgb(235,235,255)\"></span>about the same"
                   "<span style=\"background:rgb(35,35,255)\"></span>faster</span>. Hover for both times, click "
                   "to zoom.");
    if (base_only) {
        snprintf(b, sizeof b, " %u stack(s) of BASE only are not drawn (no time in NEW).", base_only);
        sp_out_str(&m, b);
    }
    sp_out_str(&m, "</p>\n<div id=\"fg-merged\"><div class=\"box\">\n");
    if (f) sp_flame_svg(f, &m, 1200, 0, "NEW against BASE, all threads");
    sp_out_str(&m, "</div></div>\n</section>\n");
    put_script(&m);
    sp_flame_free(f);
    sp_diff_free(&st);
    sp_diff_free(&d);
    int wr = sp_picture_write(output, name, &m, out, err);
    sp_out_free(&m);
    return wr != SP_EXIT_OK ? wr : rc;
}
