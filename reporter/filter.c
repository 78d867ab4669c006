/* filter.c -- see filter.h. */
#include "filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "chrome_write.h" /* SP_STEPS_SLOT */
#include "clocks.h"

/* ---- Filters ------------------------------------------------------------------ */
/* "12", "1.5ms", "30us", "2s", "100ns": ns in *ns. */
int sp_parse_time(const char *s, uint64_t *ns) {
    char *end;
    if (!*s || *s == '-' || *s == '+') return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0) return -1;
    double unit = 1e3; /* microseconds when no unit is given */
    if (strcmp(end, "ns") == 0) unit = 1;
    else if (strcmp(end, "us") == 0) unit = 1e3;
    else if (strcmp(end, "ms") == 0) unit = 1e6;
    else if (strcmp(end, "s") == 0) unit = 1e9;
    else if (*end) return -1;
    double t = v * unit;
    if (t >= 18446744073709551615.0) return -1;
    *ns = (uint64_t)llround(t);
    return 0;
}

int sp_filter_window(sp_filter *f, const char *v, FILE *err) {
    const char *colon = strchr(v, ':');
    uint64_t a = 0, b = UINT64_MAX;
    int ok = colon != NULL;
    if (ok && colon > v) {
        char *left = strndup(v, (size_t)(colon - v));
        ok = left && sp_parse_time(left, &a) == 0;
        free(left);
    }
    if (ok && colon[1]) ok = sp_parse_time(colon + 1, &b) == 0;
    if (!ok || a > b) {
        fprintf(err, "scopeprof: --window wants FROM:TO (times since the start of the file, "
                "e.g. 1.5s:2s or 200ms: ; unit ns, us, ms or s, default us; FROM <= TO), not '%s'\n", v);
        return -1;
    }
    f->has_window = 1;
    f->from_ns = a;
    f->to_ns = b;
    return 0;
}

int sp_filter_min_dur(sp_filter *f, const char *v, FILE *err) {
    if (sp_parse_time(v, &f->min_dur) != 0) {
        fprintf(err, "scopeprof: --min-dur wants a duration (e.g. 50us, 1.5ms; unit ns, us, ms or s, "
                "default us), not '%s'\n", v);
        return -1;
    }
    return 0;
}

int sp_filter_active(const sp_filter *f) {
    return f->name || f->thread || f->has_window || f->min_dur;
}

static int is_glob(const char *p) { return strpbrk(p, "*?[") != NULL; }

static int text_matches(const char *pattern, const char *s) {
    return is_glob(pattern) ? fnmatch(pattern, s, 0) == 0 : strstr(s, pattern) != NULL;
}

static int thread_matches(const char *want, const sp_thread *th) {
    char *end;
    unsigned long long v = strtoull(want, &end, 10);
    if (*want >= '0' && *want <= '9' && !*end) return v == th->tid || v == th->index;
    return text_matches(want, th->name ? th->name : "");
}

int sp_filter_keep(void *ctx, const sp_reader *r, uint32_t slot, const sp_event *e) {
    const sp_filter *f = ctx;
    if (f->has_window) {
        /* Files put on one clock (clocks.h) share one origin: the earliest start. */
        const sp_header *h = sp_reader_header(r);
        uint64_t origin = h->aligned ? sp_clocks_origin() : h->start_ns;
        uint64_t s = e->start > origin ? e->start - origin : 0;
        uint64_t end = e->kind == SP_MEM ? s : (e->end > origin ? e->end - origin : 0);
        if (end < f->from_ns || s > f->to_ns) return 0;
    }
    if (e->kind == SP_MEM) return 1; /* memory counters belong to the process */
    if (f->min_dur && e->end - e->start < f->min_dur) return 0;
    if (slot == SP_STEPS_SLOT) /* the steps' track: thread "Steps", name "ProfilerStep" */
        return (!f->thread || text_matches(f->thread, "Steps")) && (!f->name || text_matches(f->name, "ProfilerStep"));
    if (f->thread) {
        const sp_thread *th = sp_reader_thread(r, slot);
        if (!th || !thread_matches(f->thread, th)) return 0;
    }
    if (f->name) {
        const sp_site *s = sp_reader_site(r, e->site);
        if (!text_matches(f->name, s ? s->name : "<unknown>")) return 0;
    }
    return 1;
}

/* ---- Progress -------------------------------------------------------------- */
enum { CHECK_EVERY = 1 << 16 }; /* events between clock reads */

static double since(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void sp_progress_init(sp_progress *p, int mode, FILE *err, FILE *out, int to_stdout) {
    memset(p, 0, sizeof p[0]);
    p->err = err;
    p->out = out;
    p->tty = isatty(fileno(err));
    p->on = mode == 1 || (mode < 0 && p->tty && !(to_stdout && isatty(fileno(out))));
    clock_gettime(CLOCK_MONOTONIC, &p->t0);
    p->last = p->t0;
}

static void show(sp_progress *p, const struct timespec *now, int final) {
    char size[48] = "";
    off_t w = p->size ? (off_t)p->size(p->size_ctx) : p->out ? ftello(p->out) : -1;
    if (w >= 0) snprintf(size, sizeof size, ", %.1f MB of JSON written", (double)w / 1e6);
    double s = since(&p->t0, now);
    if (final)
        fprintf(p->err, "%sscopeprof: %llu events from %d file(s)%s in %.1f s\n", p->printed ? "\r\033[K" : "",
                (unsigned long long)p->events, p->nfiles, size, s);
    else
        fprintf(p->err, "%sscopeprof: %s (%d/%d): %llu events%s, %.1f s%s", p->tty ? "\r\033[K" : "", p->file,
                p->file_i + 1, p->nfiles, (unsigned long long)p->events, size, s, p->tty ? "" : "\n");
    p->printed = p->tty && !final;
    fflush(p->err);
}

/* One line, once, as the JSON grows past what viewers open: the rest is
 * still written (the file is the user's to cut), but they know why their
 * viewer will fail and how to keep less. */
static void watch_size(sp_progress *p) {
    if (p->warned || !p->size || p->size(p->size_ctx) <= SP_JSON_VIEWER_MAX) return;
    p->warned = 1;
    fprintf(p->err, "%sscopeprof: warning: the trace JSON passed %llu MB, more than Perfetto UI, "
            "chrome://tracing and speedscope open (a browser's longest string); keep a part with "
            "--window FROM:TO, --min-dur D or --name PAT (-o OUT.json.gz only makes the file smaller)\n",
            p->printed ? "\r\033[K" : "", (unsigned long long)(SP_JSON_VIEWER_MAX >> 20));
    p->printed = 0;
    fflush(p->err);
}

static int pg_header(void *ctx, const sp_reader *r, const sp_header *h) {
    sp_progress *p = ctx;
    return p->inner.header ? p->inner.header(p->inner.ctx, r, h) : 0;
}

static int pg_events(void *ctx, const sp_reader *r, const sp_thread *t, const sp_event *ev, uint32_t n) {
    sp_progress *p = ctx;
    p->events += n;
    if (p->events - p->at_check >= CHECK_EVERY) {
        p->at_check = p->events;
        watch_size(p);
        struct timespec now;
        if (p->on && (clock_gettime(CLOCK_MONOTONIC, &now), since(&p->last, &now) >= 0.5)) {
            p->last = now;
            show(p, &now, 0);
        }
    }
    return p->inner.events ? p->inner.events(p->inner.ctx, r, t, ev, n) : 0;
}

static int pg_finish(void *ctx, const sp_reader *r) {
    sp_progress *p = ctx;
    int rc = p->inner.finish ? p->inner.finish(p->inner.ctx, r) : 0;
    watch_size(p); /* a file's GPU slices and counters are written at its end */
    return rc;
}

void sp_progress_watch(sp_progress *p, uint64_t (*size)(void *ctx), void *ctx) {
    p->size = size;
    p->size_ctx = ctx;
}

sp_callbacks sp_progress_wrap(sp_progress *p, const sp_callbacks *inner, const char *file, int i,
                              int nfiles) {
    p->inner = *inner;
    p->file = file;
    p->file_i = i;
    p->nfiles = nfiles;
    if (!p->on && !p->size) return *inner;
    sp_callbacks cb = {p, pg_header, pg_events, pg_finish};
    return cb;
}

void sp_progress_done(sp_progress *p) {
    watch_size(p); /* the end of the JSON */
    if (!p->on) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    show(p, &now, 1);
}
