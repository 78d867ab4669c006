/* html.c -- `scopeprof html`: one self-contained page with the table, a
 * flame graph and a timeline per thread. The numbers come from the
 * aggregation over files (aggregate.h) and the table from the header's
 * printer: nothing is computed twice. docs/REPORTER.md. */
#define _GNU_SOURCE /* open_memstream */
#define SCOPEPROF_AGGREGATION
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "buf.h"
#include "clocks.h"
#include "exit.h"
#include "flame.h"
#include "picture.h"

/* ---- Timeline ---------------------------------------------------------------- */
/* The scopes of every thread, as slices on lanes by depth. A page must stay
 * small enough to open: past TL_MAX slices, the shorter half is dropped
 * and from then on anything shorter than the shortest kept (the longest
 * slices are the ones visible at the page's scale anyway). */
enum { TL_MAX = 100000, TL_DEPTHS = 24, LANE_H = 14, TRACK_HEAD = 18 };

typedef struct tl_ev {
    uint64_t start, end;
    uint32_t track, depth, name;
} tl_ev;

typedef struct tl_track {
    char label[200];
    uint32_t depths; /* lanes used, at most TL_DEPTHS */
} tl_track;

typedef struct timeline {
    tl_ev *ev;
    uint32_t n, cap;
    uint64_t min_dur, dropped, deep; /* deep: below the lanes drawn */
    tl_track *tr;
    uint32_t ntr;
    char **names; /* interned scope names */
    uint32_t nnames, *hash, hcap;
    int file;              /* the file the slot map is for */
    uint32_t *slot_track;  /* per thread slot of that file: track + 1 */
    uint32_t nslot;
    char **files;
    int oom;
} timeline;

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ^ h >> 31;
}

static int intern(timeline *t, const char *s, uint32_t *id) {
    if ((uint64_t)(t->nnames + 1) * 2 > t->hcap) {
        uint32_t c = t->hcap ? t->hcap * 2 : 1024;
        uint32_t *h = calloc(c, sizeof *h);
        if (!h) return -1;
        for (uint32_t i = 0; i < t->nnames; i++) {
            uint32_t j = (uint32_t)str_hash(t->names[i]) & (c - 1);
            while (h[j]) j = (j + 1) & (c - 1);
            h[j] = i + 1;
        }
        free(t->hash);
        t->hash = h;
        t->hcap = c;
    }
    uint32_t j = (uint32_t)str_hash(s) & (t->hcap - 1);
    for (; t->hash[j]; j = (j + 1) & (t->hcap - 1))
        if (strcmp(t->names[t->hash[j] - 1], s) == 0) return (void)(*id = t->hash[j] - 1), 0;
    char **v = realloc(t->names, ((size_t)t->nnames + 1) * sizeof *v);
    if (!v) return -1;
    t->names = v;
    if (!(t->names[t->nnames] = strdup(s))) return -1;
    t->hash[j] = t->nnames + 1;
    *id = t->nnames++;
    return 0;
}

static int cmp_dur_desc(const void *a, const void *b) {
    const tl_ev *x = a, *y = b;
    uint64_t dx = x->end - x->start, dy = y->end - y->start;
    return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static int tl_push(timeline *t, const tl_ev *e) {
    if (e->end - e->start < t->min_dur) return (void)t->dropped++, 0;
    if (t->n == TL_MAX) {
        qsort(t->ev, t->n, sizeof *t->ev, cmp_dur_desc);
        t->n = TL_MAX / 2;
        t->dropped += TL_MAX - TL_MAX / 2;
        t->min_dur = t->ev[t->n - 1].end - t->ev[t->n - 1].start; /* kept: >=, dropped: <= */
        if (e->end - e->start < t->min_dur) return (void)t->dropped++, 0;
    }
    if (t->n == t->cap) {
        uint32_t c = t->cap ? t->cap * 2 : 4096;
        tl_ev *v = realloc(t->ev, (size_t)c * sizeof *v);
        if (!v) return -1;
        t->ev = v;
        t->cap = c;
    }
    t->ev[t->n++] = *e;
    return 0;
}

/* The track of a thread slot of the file being read. */
static int track_of(timeline *t, int file, const sp_thread *th, uint32_t *track) {
    if (file != t->file) {
        t->file = file;
        if (t->slot_track) memset(t->slot_track, 0, (size_t)t->nslot * sizeof *t->slot_track);
    }
    if (th->slot >= t->nslot) {
        uint32_t c = th->slot + 1 > t->nslot * 2 ? th->slot + 1 : t->nslot * 2;
        uint32_t *v = realloc(t->slot_track, (size_t)c * sizeof *v);
        if (!v) return -1;
        memset(v + t->nslot, 0, (size_t)(c - t->nslot) * sizeof *v);
        t->slot_track = v;
        t->nslot = c;
    }
    if (!t->slot_track[th->slot]) {
        tl_track *v = realloc(t->tr, ((size_t)t->ntr + 1) * sizeof *v);
        if (!v) return -1;
        t->tr = v;
        memset(&t->tr[t->ntr], 0, sizeof *t->tr);
        t->slot_track[th->slot] = ++t->ntr;
    }
    *track = t->slot_track[th->slot] - 1;
    /* The name may come with a later chunk: the last one seen wins. */
    tl_track *tr = &t->tr[*track];
    char who[120];
    if (th->name && th->name[0]) snprintf(who, sizeof who, "%.80s (tid %llu)", th->name, (unsigned long long)th->tid);
    else snprintf(who, sizeof who, "thread %u (tid %llu)", th->index, (unsigned long long)th->tid);
    snprintf(tr->label, sizeof tr->label, "%.70s: %s", sp_base_name(t->files[file]), who);
    return 0;
}

static void tl_tap(void *ctx, int file, const sp_reader *r, const sp_thread *th, const sp_event *ev,
                   uint32_t n) {
    timeline *t = ctx;
    uint32_t track;
    if (t->oom || track_of(t, file, th, &track) != 0) {
        t->oom = 1;
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (ev[k].kind != SP_SCOPE) continue;
        if (ev[k].depth >= TL_DEPTHS) {
            t->deep++;
            continue;
        }
        const sp_site *s = sp_reader_site(r, ev[k].site);
        tl_ev e = {ev[k].start, ev[k].end, track, ev[k].depth, 0};
        if (intern(t, s ? s->name : "<unknown>", &e.name) != 0 || tl_push(t, &e) != 0) {
            t->oom = 1;
            return;
        }
        if (ev[k].depth + 1 > t->tr[track].depths) t->tr[track].depths = ev[k].depth + 1;
    }
}

static void tl_free(timeline *t) {
    for (uint32_t i = 0; i < t->nnames; i++) free(t->names[i]);
    free(t->names);
    free(t->hash);
    free(t->ev);
    free(t->tr);
    free(t->slot_track);
}

static void put_f(sp_out *o, const char *fmt, double v) {
    char b[48];
    snprintf(b, sizeof b, fmt, v);
    sp_out_str(o, b);
}

/* The timeline as an SVG element `width` px wide: a time axis, then per
 * track its label and a lane per depth. */
static void tl_svg(timeline *t, sp_out *o, int width) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->ev[i].start < lo) lo = t->ev[i].start;
        if (t->ev[i].end > hi) hi = t->ev[i].end;
    }
    if (!t->n) lo = hi = 0;
    double span = hi > lo ? (double)(hi - lo) : 1, left = 10, w = width - 20;
    uint32_t *y0 = malloc(((size_t)t->ntr + 1) * sizeof *y0);
    if (!y0) {
        o->err = 1;
        return;
    }
    uint32_t y = 30;
    for (uint32_t i = 0; i < t->ntr; i++) {
        y0[i] = y + TRACK_HEAD;
        y += TRACK_HEAD + (t->tr[i].depths ? t->tr[i].depths : 1) * LANE_H + 6;
    }
    char b[200];
    snprintf(b, sizeof b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"%d\" "
             "height=\"%u\" viewBox=\"0 0 %d %u\">\n", width, y, width, y);
    sp_out_str(o, b);
    for (int k = 0; k < 10; k++) { /* the axis: time since the first slice */
        double x = left + w * k / 10;
        char tm[32];
        scopeprof_format_time(tm, sizeof tm, span * k / 10 / 1e3);
        sp_out_str(o, "<line class=\"tick\" x1=\"");
        put_f(o, "%.1f", x);
        sp_out_str(o, "\" x2=\"");
        put_f(o, "%.1f", x);
        snprintf(b, sizeof b, "\" y1=\"18\" y2=\"%u\"/><text class=\"axis\" x=\"", y);
        sp_out_str(o, b);
        put_f(o, "%.1f", x + 2);
        sp_out_str(o, "\" y=\"14\">");
        sp_out_str(o, tm);
        sp_out_str(o, "</text>\n");
    }
    for (uint32_t i = 0; i < t->ntr; i++) {
        snprintf(b, sizeof b, "<text class=\"track\" x=\"10\" y=\"%u\">", y0[i] - 5);
        sp_out_str(o, b);
        sp_out_xml(o, t->tr[i].label);
        sp_out_str(o, "</text>\n");
    }
    for (uint32_t i = 0; i < t->n; i++) {
        const tl_ev *e = &t->ev[i];
        double x = left + w * (double)(e->start - lo) / span;
        double ew = w * (double)(e->end - e->start) / span;
        if (ew < 0.3) ew = 0.3;
        const char *name = t->names[e->name];
        char tm[32];
        scopeprof_format_time(tm, sizeof tm, (double)(e->end - e->start) / 1e3);
        sp_out_str(o, "<g class=\"slice\"><title>");
        sp_out_xml(o, name);
        sp_out_str(o, " (");
        sp_out_str(o, tm);
        sp_out_str(o, ")</title><rect x=\"");
        put_f(o, "%.2f", x);
        snprintf(b, sizeof b, "\" y=\"%u\" width=\"", y0[e->track] + e->depth * LANE_H);
        sp_out_str(o, b);
        put_f(o, "%.2f", ew);
        snprintf(b, sizeof b, "\" height=\"%d\" fill=\"hsl(%u,60%%,%u%%)\"/>", LANE_H - 1,
                 (unsigned)(str_hash(name) % 360), 62 + e->depth % 3 * 6);
        sp_out_str(o, b);
        if (ew > 30) { /* a label where it fits; the SVG clips nothing, so cut it */
            size_t fit = (size_t)((ew - 4) / 7.2), len = strlen(name); /* 12px monospace */
            char cut[256];
            if (fit > sizeof cut - 1) fit = sizeof cut - 1;
            if (len > fit) {
                /* back off to a character boundary */
                while (fit && ((unsigned char)name[fit] & 0xC0) == 0x80) fit--;
                len = fit;
            }
            memcpy(cut, name, len);
            cut[len] = 0;
            sp_out_str(o, "<text x=\"");
            put_f(o, "%.2f", x + 2);
            snprintf(b, sizeof b, "\" y=\"%u\">", y0[e->track] + e->depth * LANE_H + LANE_H - 3);
            sp_out_str(o, b);
            sp_out_xml(o, cut);
            sp_out_str(o, "</text>");
        }
        sp_out_str(o, "</g>\n");
    }
    sp_out_str(o, "</svg>\n");
    free(y0);
}

/* ---- The page -------------------------------------------------------------- */
/* No network: the Content-Security-Policy forbids every load (images, fonts,
 * scripts, styles from elsewhere); what the page needs is inline. */
static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
    "<meta name=\"generator\" content=\"scopeprof " SCOPEPROF_VERSION_STRING "\">\n";

static const char page_style[] =
    "<style>\n"
    "body{font:14px sans-serif;margin:16px;background:#fff;color:#222}\n"
    "h1{font-size:20px}h2{font-size:16px;margin-top:24px}\n"
    "pre.table{font:12px monospace;background:#f6f6f6;padding:8px;overflow-x:auto}\n"
    "pre.table .row:hover{background:#ffe9a8}\n"
    "svg text{font:12px monospace;fill:#000;pointer-events:none}\n"
    "svg text.head,svg text.track{font:bold 12px sans-serif}\n"
    "svg text.axis{fill:#666}svg line.tick{stroke:#ddd}\n"
    "svg .frame rect,svg .slice rect{stroke:#fff;stroke-width:0.5}\n"
    "svg .frame:hover rect,svg .slice:hover rect{stroke:#000}\n"
    "svg .hit rect{fill:#c8a0ff}\n"
    ".scroll{overflow:auto;max-height:700px;border:1px solid #ddd}\n"
    "#find{margin:4px 0}\n"
    "</style>\n";

/* Search: frames and slices whose name holds the text are coloured. The
 * body's data-ready says the script ran (the headless check reads it). */
static const char page_script[] =
    "<script>\n"
    "(function(){\n"
    "  var box=document.getElementById('find'),out=document.getElementById('found');\n"
    "  var all=document.querySelectorAll('.frame,.slice');\n"
    "  box.addEventListener('input',function(){\n"
    "    var q=box.value,n=0;\n"
    "    for(var i=0;i<all.length;i++){\n"
    "      var t=all[i].querySelector('title').textContent,hit=q!==''&&t.indexOf(q)>=0;\n"
    "      all[i].classList.toggle('hit',hit);n+=hit;\n"
    "    }\n"
    "    out.textContent=q?n+' match(es)':'';\n"
    "  });\n"
    "  document.body.setAttribute('data-ready','rows='+document.querySelectorAll('pre.table .row').length+"
    "' frames='+document.querySelectorAll('.flamegraph .frame').length+"
    "' slices='+document.querySelectorAll('.timeline .slice').length);\n"
    "})();\n"
    "</script>\n";

/* The text table, one span per data row: the rows lie between the second
 * and the third line of dashes (scopeprof_table_print's layout). */
static void put_table(sp_out *o, const char *text) {
    int dashes = 0;
    sp_out_str(o, "<pre class=\"table\">");
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *line = strndup(p, len);
        if (!line) {
            o->err = 1;
            return;
        }
        int dash = len > 0 && line[0] == '-';
        dashes += dash;
        int row = !dash && dashes == 2;
        if (row) sp_out_str(o, "<span class=\"row\">");
        sp_out_xml(o, line);
        if (row) sp_out_str(o, "</span>");
        sp_out_str(o, "\n");
        free(line);
        if (!e) break;
        p = e + 1;
    }
    sp_out_str(o, "</pre>\n");
}

int sp_cmd_html(char **files, int nfiles, const char *output, const char *name, long limit, FILE *out,
                FILE *err) {
    for (int i = 0; i < nfiles; i++)
        if (strcmp(files[i], "-") == 0) {
            fprintf(err, "scopeprof: html reads each file twice, so not standard input\n");
            return SP_EXIT_USAGE;
        }
    sp_clocks_align(files, nfiles, err); /* the timeline: files of several hosts on one clock */
    /* First pass: the table, with the diagnostics of `scopeprof table`. */
    scopeprof_agg table, stacks;
    int usable;
    char *text = NULL, *foot = NULL;
    size_t ntext = 0, nfoot = 0;
    FILE *ff = open_memstream(&foot, &nfoot);
    int rc = sp_aggregate(files, nfiles, 0, NULL, NULL, &table, ff, &usable, err);
    if (ff) fclose(ff);
    if (!usable) {
        scopeprof_agg_free(&table);
        free(foot);
        return rc;
    }
    FILE *mf = open_memstream(&text, &ntext);
    if (mf) {
        scopeprof_table_print(mf, &table, SCOPEPROF_SORT_CPU_TIME_TOTAL, limit > 0 ? (int)limit : 0);
        scopeprof_table_notes(mf, &table); /* as `scopeprof table` prints them */
        if (foot) fputs(foot, mf);
        fclose(mf);
    }
    free(foot);
    uint32_t rows = table.nrows;
    scopeprof_agg_free(&table);
    /* Second pass: stacks and the timeline; its diagnostics repeat the
     * first pass's, so they are dropped. */
    timeline tl;
    memset(&tl, 0, sizeof tl);
    tl.file = -1;
    tl.files = files;
    FILE *quiet = fopen("/dev/null", "w");
    sp_aggregate(files, nfiles, 1, tl_tap, &tl, &stacks, NULL, &usable, quiet ? quiet : err);
    if (quiet) fclose(quiet);
    sp_flame *f = sp_picture_flame(&stacks);
    scopeprof_agg_free(&stacks);

    sp_out m;
    sp_out_init(&m, NULL);
    if (!text || !f || tl.oom) m.err = 1;
    sp_out_str(&m, page_head);
    sp_out_str(&m, "<title>scopeprof: ");
    sp_out_xml(&m, sp_base_name(files[0]));
    if (nfiles > 1) sp_out_str(&m, " and more");
    sp_out_str(&m, "</title>\n");
    sp_out_str(&m, page_style);
    sp_out_str(&m, "</head>\n<body>\n<h1>scopeprof report</h1>\n<p class=\"files\">");
    for (int i = 0; i < nfiles; i++) {
        if (i) sp_out_str(&m, ", ");
        sp_out_str(&m, "<code>");
        sp_out_xml(&m, files[i]);
        sp_out_str(&m, "</code>");
    }
    sp_out_str(&m, "</p>\n<h2>Operators</h2>\n");
    char b[200];
    snprintf(b, sizeof b, "<p>%u row(s), sorted by CPU total, as <code>scopeprof table</code> prints them.</p>\n",
             rows);
    sp_out_str(&m, b);
    if (text) put_table(&m, text);
    sp_out_str(&m, "<p>Find: <input id=\"find\" type=\"search\" placeholder=\"scope name\"> "
                   "<span id=\"found\"></span></p>\n");
    sp_out_str(&m, "<h2>Flame graph</h2>\n<p>Self CPU time of each stack; a frame is as wide as its "
                   "time including what it called. Hover for the figures.</p>\n<div class=\"scroll\">\n");
    if (f) sp_flame_svg(f, &m, 1200, 0, "all threads, all files");
    sp_out_str(&m, "</div>\n<h2>Timeline</h2>\n<p>");
    snprintf(b, sizeof b, "%u slice(s) on %u thread(s)", tl.n, tl.ntr);
    sp_out_str(&m, b);
    if (tl.dropped) {
        char tm[32];
        scopeprof_format_time(tm, sizeof tm, (double)tl.min_dur / 1e3);
        snprintf(b, sizeof b, "; %llu of at most %s left out (the longest are kept)", (unsigned long long)tl.dropped, tm);
        sp_out_str(&m, b);
    }
    if (tl.deep) {
        snprintf(b, sizeof b, "; %llu nested deeper than %d levels left out", (unsigned long long)tl.deep,
                 TL_DEPTHS);
        sp_out_str(&m, b);
    }
    sp_out_str(&m, ". For the whole trace: <code>scopeprof trace</code> and ui.perfetto.dev.</p>\n"
                   "<div class=\"scroll\">\n");
    tl_svg(&tl, &m, 1200);
    sp_out_str(&m, "</div>\n");
    sp_out_str(&m, page_script);
    sp_out_str(&m, "</body>\n</html>\n");
    free(text);
    sp_flame_free(f);
    tl_free(&tl);
    int wr = sp_picture_write(output, name, &m, out, err);
    sp_out_free(&m);
    return wr != SP_EXIT_OK ? wr : rc;
}
