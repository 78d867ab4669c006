/* timeline.c -- see timeline.h. */
#define SCOPEPROF_AGGREGATION
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "flame.h" /* sp_out_xml */
#include "hash.h"
#include "picture.h"

/* A page must stay small enough to open: past TL_MAX slices, the shorter
 * half is dropped and from then on anything shorter than the shortest kept
 * (the longest slices are the ones visible at the page's scale anyway).
 * Nesting past TL_DEPTHS lanes is left out. A counter track draws at most
 * MEM_POINTS steps (the highest level in each part of the time axis). */
enum { TL_MAX = 100000, TL_DEPTHS = 24, LANE_H = 14, TRACK_HEAD = 18, AXIS_H = 30, MEM_H = 40,
       MEM_POINTS = 2400, LEFT = 10 };

typedef struct tl_ev {
    uint64_t start, end;
    uint32_t track, depth, name;
} tl_ev;

typedef struct tl_track {
    char label[200];
    uint32_t depths; /* lanes used, at most TL_DEPTHS */
} tl_track;

typedef struct tl_mem { /* one memory record */
    uint64_t t;
    int64_t bytes;
    uint32_t file, device, seq;
} tl_mem;

typedef struct tl_steps { /* one file's STEPS records */
    int file;
    sp_step *s;
    uint32_t n;
} tl_steps;

struct sp_timeline {
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
    tl_mem *mem;
    uint32_t nmem, mem_cap;
    tl_steps *steps;
    uint32_t nsteps;
    char **files;
    int oom;
};

static uint64_t str_hash(const char *s) {
    uint64_t h = sp_hash(0, s, strlen(s));
    return h ^ h >> 31;
}

static int intern(sp_timeline *t, const char *s, uint32_t *id) {
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

static int tl_push(sp_timeline *t, const tl_ev *e) {
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
static int track_of(sp_timeline *t, int file, const sp_thread *th, uint32_t *track) {
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

static int mem_push(sp_timeline *t, int file, const sp_event *e) {
    if (t->nmem == t->mem_cap) {
        uint32_t c = t->mem_cap ? t->mem_cap * 2 : 1024;
        tl_mem *v = c > t->mem_cap ? realloc(t->mem, (size_t)c * sizeof *v) : NULL;
        if (!v) return -1;
        t->mem = v;
        t->mem_cap = c;
    }
    t->mem[t->nmem] = (tl_mem){e->start, e->bytes, (uint32_t)file, e->device, t->nmem};
    t->nmem++;
    return 0;
}

static void tl_events(void *ctx, int file, const sp_reader *r, const sp_thread *th, const sp_event *ev,
                      uint32_t n) {
    sp_timeline *t = ctx;
    uint32_t track;
    if (t->oom || track_of(t, file, th, &track) != 0) {
        t->oom = 1;
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (ev[k].kind == SP_MEM) {
            if (mem_push(t, file, &ev[k]) != 0) t->oom = 1;
            continue;
        }
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

/* A .sprof file's steps, once the file is read (STEPS records may follow
 * the events), or those a Chrome trace holds on scopeprof's Steps track
 * (sp_track_steps). PyTorch's ProfilerStep#N are events of their own,
 * already slices. */
static void tl_finish(void *ctx, int file, const sp_reader *r) {
    sp_timeline *t = ctx;
    const sp_step *s;
    uint32_t n = sp_track_steps(r, &s);
    if (!n || t->oom) return;
    tl_steps *v = realloc(t->steps, ((size_t)t->nsteps + 1) * sizeof *v);
    sp_step *copy = malloc((size_t)n * sizeof *copy);
    if (v) t->steps = v;
    if (!v || !copy) {
        free(copy);
        t->oom = 1;
        return;
    }
    memcpy(copy, s, (size_t)n * sizeof *copy);
    t->steps[t->nsteps++] = (tl_steps){file, copy, n};
}

sp_timeline *sp_timeline_new(char **files) {
    sp_timeline *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->file = -1;
    t->files = files;
    return t;
}

sp_tap sp_timeline_tap(sp_timeline *t) {
    sp_tap tap = {t, tl_events, tl_finish};
    return tap;
}

int sp_timeline_oom(const sp_timeline *t) { return !t || t->oom; }

void sp_timeline_free(sp_timeline *t) {
    if (!t) return;
    for (uint32_t i = 0; i < t->nnames; i++) free(t->names[i]);
    for (uint32_t i = 0; i < t->nsteps; i++) free(t->steps[i].s);
    free(t->names);
    free(t->hash);
    free(t->ev);
    free(t->tr);
    free(t->slot_track);
    free(t->mem);
    free(t->steps);
    free(t);
}

void sp_timeline_caption(const sp_timeline *t, sp_out *o) {
    char b[200];
    snprintf(b, sizeof b, "%u slice(s) on %u thread(s)", t->n, t->ntr);
    sp_out_str(o, b);
    if (t->dropped) {
        char tm[32];
        scopeprof_format_time(tm, sizeof tm, (double)t->min_dur / 1e3);
        snprintf(b, sizeof b, "; %llu of at most %s left out (the longest are kept)", (unsigned long long)t->dropped, tm);
        sp_out_str(o, b);
    }
    if (t->deep) {
        snprintf(b, sizeof b, "; %llu nested deeper than %d levels left out", (unsigned long long)t->deep, TL_DEPTHS);
        sp_out_str(o, b);
    }
}

/* ---- Drawing ---------------------------------------------------------------------- */
static void put_f(sp_out *o, const char *fmt, double v) {
    char b[48];
    snprintf(b, sizeof b, fmt, v);
    sp_out_str(o, b);
}

/* A label cut to what w px of 12px monospace hold, at a character boundary. */
static void put_cut(sp_out *o, const char *name, double w) {
    size_t fit = (size_t)((w - 4) / 7.2), len = strlen(name);
    char cut[256];
    if (fit > sizeof cut - 1) fit = sizeof cut - 1;
    if (len > fit) {
        while (fit && ((unsigned char)name[fit] & 0xC0) == 0x80) fit--;
        len = fit;
    }
    memcpy(cut, name, len);
    cut[len] = 0;
    sp_out_xml(o, cut);
}

static int cmp_mem(const void *a, const void *b) {
    const tl_mem *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Where the tracks go: the threads' (in order of first appearance), then per
 * file its steps and its counters. */
typedef struct layout {
    uint64_t lo;
    double span, w;  /* ns shown; px of the time axis */
    uint32_t *thread_y, *steps_y, *mem_y; /* top of each track's lanes */
    uint32_t height;
} layout;

static double x_of(const layout *l, uint64_t t) { return LEFT + l->w * (double)(t - l->lo) / l->span; }

/* The counters: per file and device, the net bytes allocated since the file
 * began, a step line over time filled below, scaled to the track's peak. */
static void put_counters(const sp_timeline *t, const layout *l, sp_out *o, uint32_t *labels_y, int labels) {
    char b[240];
    uint32_t k = 0, track = 0;
    while (k < t->nmem) {
        uint32_t end = k;
        while (end < t->nmem && t->mem[end].file == t->mem[k].file && t->mem[end].device == t->mem[k].device) end++;
        int64_t level = 0, peak = 0;
        for (uint32_t i = k; i < end; i++) {
            if (__builtin_add_overflow(level, t->mem[i].bytes, &level)) level = t->mem[i].bytes > 0 ? INT64_MAX : INT64_MIN;
            if (level > peak) peak = level;
        }
        uint32_t top = l->mem_y[track], base = top + MEM_H - 2;
        if (labels) {
            char pk[48], dev[32];
            scopeprof_format_mem(pk, sizeof pk, peak);
            if (t->mem[k].device) snprintf(dev, sizeof dev, "GPU %u", t->mem[k].device - 1);
            else snprintf(dev, sizeof dev, "CPU");
            snprintf(b, sizeof b, "<text class=\"track\" x=\"10\" y=\"%u\">", labels_y[track]);
            sp_out_str(o, b);
            sp_out_xml(o, sp_base_name(t->files[t->mem[k].file]));
            snprintf(b, sizeof b, ": %s memory (peak %s)</text>\n", dev, pk);
            sp_out_str(o, b);
        } else {
            sp_out_str(o, "<path class=\"counter\" d=\"M");
            put_f(o, "%.2f", x_of(l, t->mem[k].t));
            snprintf(b, sizeof b, ",%u", base);
            sp_out_str(o, b);
            /* At most MEM_POINTS steps: the highest level in each part. */
            double px = -1;
            int64_t lv = 0, hi = INT64_MIN;
            for (uint32_t i = k; i < end; i++) {
                if (__builtin_add_overflow(lv, t->mem[i].bytes, &lv)) lv = t->mem[i].bytes > 0 ? INT64_MAX : INT64_MIN;
                double x = x_of(l, t->mem[i].t);
                double slot = (double)(int)((x - LEFT) * MEM_POINTS / l->w);
                if (lv > hi) hi = lv;
                if (i + 1 < end && (double)(int)((x_of(l, t->mem[i + 1].t) - LEFT) * MEM_POINTS / l->w) == slot) continue;
                double y = peak > 0 && hi > 0 ? base - (double)(MEM_H - 6) * (double)hi / (double)peak : base;
                if (x != px) sp_out_str(o, " H"), put_f(o, "%.2f", x);
                sp_out_str(o, " V");
                put_f(o, "%.1f", y);
                px = x;
                hi = INT64_MIN;
            }
            sp_out_str(o, " H");
            put_f(o, "%.2f", LEFT + l->w);
            snprintf(b, sizeof b, " V%u Z\"><title>", base);
            sp_out_str(o, b);
            char pk[48];
            scopeprof_format_mem(pk, sizeof pk, peak);
            snprintf(b, sizeof b, "%s memory (peak %s)</title></path>\n", t->mem[k].device ? "GPU" : "CPU", pk);
            sp_out_str(o, b);
        }
        k = end;
        track++;
    }
}

void sp_timeline_svg(sp_timeline *t, sp_out *o, int width) {
    /* The time span: slices, steps and memory records alike. */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->ev[i].start < lo) lo = t->ev[i].start;
        if (t->ev[i].end > hi) hi = t->ev[i].end;
    }
    for (uint32_t f = 0; f < t->nsteps; f++)
        for (uint32_t i = 0; i < t->steps[f].n; i++) {
            if (t->steps[f].s[i].start < lo) lo = t->steps[f].s[i].start;
            if (t->steps[f].s[i].end > hi) hi = t->steps[f].s[i].end;
        }
    for (uint32_t i = 0; i < t->nmem; i++) {
        if (t->mem[i].t < lo) lo = t->mem[i].t;
        if (t->mem[i].t > hi) hi = t->mem[i].t;
    }
    if (lo > hi) lo = hi = 0;
    if (t->nmem) qsort(t->mem, t->nmem, sizeof *t->mem, cmp_mem); /* by file, device, time */
    uint32_t nmemtr = 0;
    for (uint32_t i = 0; i < t->nmem; i++)
        nmemtr += i == 0 || t->mem[i].file != t->mem[i - 1].file || t->mem[i].device != t->mem[i - 1].device;
    layout l = {lo, hi > lo ? (double)(hi - lo) : 1, width - 2.0 * LEFT, NULL, NULL, NULL, 0};
    l.thread_y = malloc(((size_t)t->ntr + 1) * sizeof *l.thread_y);
    l.steps_y = malloc(((size_t)t->nsteps + 1) * sizeof *l.steps_y);
    l.mem_y = malloc(((size_t)nmemtr + 1) * sizeof *l.mem_y);
    if (!l.thread_y || !l.steps_y || !l.mem_y) {
        o->err = 1;
        goto out;
    }
    uint32_t y = AXIS_H;
    for (uint32_t i = 0; i < t->ntr; i++) {
        l.thread_y[i] = y + TRACK_HEAD;
        y += TRACK_HEAD + (t->tr[i].depths ? t->tr[i].depths : 1) * LANE_H + 6;
    }
    for (uint32_t i = 0; i < t->nsteps; i++) {
        l.steps_y[i] = y + TRACK_HEAD;
        y += TRACK_HEAD + LANE_H + 6;
    }
    for (uint32_t i = 0; i < nmemtr; i++) {
        l.mem_y[i] = y + TRACK_HEAD;
        y += TRACK_HEAD + MEM_H + 6;
    }
    l.height = y;
    char b[240];
    snprintf(b, sizeof b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"%d\" "
             "height=\"%u\" viewBox=\"0 0 %d %u\" data-span=\"%.0f\" data-axis=\"%d\">\n",
             width, y, width, y, l.span, AXIS_H);
    sp_out_str(o, b);
    /* The axis as drawn here (report.js draws it again for each view). */
    sp_out_str(o, "<g class=\"tl-axis\">");
    for (int k = 0; k < 10; k++) {
        double x = LEFT + l.w * k / 10;
        char tm[32];
        scopeprof_format_time(tm, sizeof tm, l.span * k / 10 / 1e3);
        sp_out_str(o, "<line class=\"tick\" x1=\"");
        put_f(o, "%.1f", x);
        sp_out_str(o, "\" x2=\"");
        put_f(o, "%.1f", x);
        snprintf(b, sizeof b, "\" y1=\"18\" y2=\"%u\"/><text class=\"axis\" x=\"", y);
        sp_out_str(o, b);
        put_f(o, "%.1f", x + 2);
        sp_out_str(o, "\" y=\"14\">");
        sp_out_str(o, tm);
        sp_out_str(o, "</text>");
    }
    sp_out_str(o, "</g>\n<g class=\"tl-tracks\">\n");
    uint32_t *mem_label = malloc(((size_t)nmemtr + 1) * sizeof *mem_label);
    if (!mem_label) {
        o->err = 1;
        goto out;
    }
    for (uint32_t i = 0; i < t->ntr; i++) {
        snprintf(b, sizeof b, "<text class=\"track\" x=\"10\" y=\"%u\">", l.thread_y[i] - 5);
        sp_out_str(o, b);
        sp_out_xml(o, t->tr[i].label);
        sp_out_str(o, "</text>\n");
    }
    for (uint32_t i = 0; i < t->nsteps; i++) {
        snprintf(b, sizeof b, "<text class=\"track\" x=\"10\" y=\"%u\">", l.steps_y[i] - 5);
        sp_out_str(o, b);
        sp_out_xml(o, sp_base_name(t->files[t->steps[i].file]));
        snprintf(b, sizeof b, ": steps (%u, PROFILE_STEP)</text>\n", t->steps[i].n);
        sp_out_str(o, b);
    }
    for (uint32_t i = 0; i < nmemtr; i++) mem_label[i] = l.mem_y[i] - 5;
    put_counters(t, &l, o, mem_label, 1);
    free(mem_label);
    /* What report.js stretches: slices, steps, counters. */
    sp_out_str(o, "</g>\n<g class=\"tl-body\">\n");
    for (uint32_t i = 0; i < t->n; i++) {
        const tl_ev *e = &t->ev[i];
        double x = x_of(&l, e->start), ew = l.w * (double)(e->end - e->start) / l.span;
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
        snprintf(b, sizeof b, "\" y=\"%u\" width=\"", l.thread_y[e->track] + e->depth * LANE_H);
        sp_out_str(o, b);
        put_f(o, "%.2f", ew);
        snprintf(b, sizeof b, "\" height=\"%d\" fill=\"hsl(%u,60%%,%u%%)\"/></g>\n", LANE_H - 1,
                 (unsigned)(str_hash(name) % 360), 62 + e->depth % 3 * 6);
        sp_out_str(o, b);
    }
    for (uint32_t f = 0; f < t->nsteps; f++)
        for (uint32_t i = 0; i < t->steps[f].n; i++) {
            const sp_step *s = &t->steps[f].s[i];
            double x = x_of(&l, s->start), ew = l.w * (double)(s->end - s->start) / l.span;
            char tm[32];
            scopeprof_format_time(tm, sizeof tm, (double)(s->end - s->start) / 1e3);
            snprintf(b, sizeof b, "<g class=\"step\"><title>ProfilerStep#%llu (%s)</title><rect x=\"",
                     (unsigned long long)s->number, tm);
            sp_out_str(o, b);
            put_f(o, "%.2f", x);
            snprintf(b, sizeof b, "\" y=\"%u\" width=\"", l.steps_y[f]);
            sp_out_str(o, b);
            put_f(o, "%.2f", ew < 0.3 ? 0.3 : ew);
            snprintf(b, sizeof b, "\" height=\"%d\" fill=\"%s\"/></g>\n", LANE_H - 1, i % 2 ? "#9ec5e8" : "#c4dcf2");
            sp_out_str(o, b);
        }
    put_counters(t, &l, o, NULL, 0);
    /* Labels where a slice is wide enough (report.js redraws them too). */
    sp_out_str(o, "</g>\n<g class=\"tl-labels\">");
    for (uint32_t i = 0; i < t->n; i++) {
        const tl_ev *e = &t->ev[i];
        double x = x_of(&l, e->start), ew = l.w * (double)(e->end - e->start) / l.span;
        if (ew <= 30) continue;
        sp_out_str(o, "<text x=\"");
        put_f(o, "%.2f", x + 2);
        snprintf(b, sizeof b, "\" y=\"%u\">", l.thread_y[e->track] + e->depth * LANE_H + LANE_H - 3);
        sp_out_str(o, b);
        put_cut(o, t->names[e->name], ew);
        sp_out_str(o, "</text>");
    }
    sp_out_str(o, "</g>\n</svg>\n");
out:
    free(l.thread_y);
    free(l.steps_y);
    free(l.mem_y);
}
