/* json.c -- buffered output, JSON strings, and the Chrome trace writer. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "scopeprof.h"
#include "tree.h"

/* ---- Buffered output ------------------------------------------------------ */
enum { OUT_FLUSH_AT = 1 << 16 };

void sp_out_init(sp_out *o, FILE *f) {
    memset(o, 0, sizeof *o);
    o->f = f;
}

static void out_drain(sp_out *o) {
    if (o->f && o->n) {
        if (fwrite(o->buf, 1, o->n, o->f) != o->n) o->err = 1;
        o->n = 0;
    }
}

void sp_out_write(sp_out *o, const void *p, size_t n) {
    if (!n) return;
    if (o->f && o->n + n > OUT_FLUSH_AT) out_drain(o);
    if (o->n + n > o->cap) {
        size_t c = o->cap ? o->cap : 256;
        while (c < o->n + n) c *= 2;
        if (o->f && c < OUT_FLUSH_AT) c = OUT_FLUSH_AT;
        char *b = realloc(o->buf, c);
        if (!b) {
            o->err = 1;
            return;
        }
        o->buf = b;
        o->cap = c;
    }
    memcpy(o->buf + o->n, p, n);
    o->n += n;
}

void sp_out_str(sp_out *o, const char *s) { sp_out_write(o, s, strlen(s)); }

void sp_out_u64(sp_out *o, uint64_t v) {
    char b[24];
    int i = sizeof b;
    do b[--i] = (char)('0' + v % 10);
    while (v /= 10);
    sp_out_write(o, b + i, sizeof b - (size_t)i);
}

void sp_out_i64(sp_out *o, int64_t v) {
    if (v < 0) {
        sp_out_write(o, "-", 1);
        sp_out_u64(o, 0 - (uint64_t)v);
    } else {
        sp_out_u64(o, (uint64_t)v);
    }
}

void sp_out_us(sp_out *o, uint64_t ns) {
    char f[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
                 (char)('0' + ns % 10)};
    sp_out_u64(o, ns / 1000);
    sp_out_write(o, f, 4);
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    unsigned lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing past U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0; /* a NUL stops here too */
    return n;
}

void sp_out_json_str(sp_out *o, const char *str) {
    const unsigned char *s = (const unsigned char *)str, *run = s;
    sp_out_write(o, "\"", 1);
    while (*s) {
        unsigned c = *s;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            s++;
            continue;
        }
        int n = c >= 0x80 ? utf8_len(s) : 0;
        if (n) { /* valid multi-byte character: copied as is */
            s += n;
            continue;
        }
        sp_out_write(o, run, (size_t)(s - run));
        if (c == '"') sp_out_write(o, "\\\"", 2);
        else if (c == '\\') sp_out_write(o, "\\\\", 2);
        else if (c < 0x20) {
            char b[7];
            snprintf(b, sizeof b, "\\u%04x", c);
            sp_out_write(o, b, 6);
        } else
            sp_out_write(o, "\\ufffd", 6);
        run = ++s;
    }
    sp_out_write(o, run, (size_t)(s - run));
    sp_out_write(o, "\"", 1);
}

int sp_out_flush(sp_out *o) {
    out_drain(o);
    if (o->f && fflush(o->f) != 0) o->err = 1;
    return o->err ? -1 : 0;
}

void sp_out_free(sp_out *o) {
    free(o->buf);
    o->buf = NULL;
    o->n = o->cap = 0;
}

/* ---- Chrome trace --------------------------------------------------------- */
/* Per site id, the event text before "ts" and after "tid", built once:
 *   {"name":"N","cat":"scope","ph":"X","ts":   ...   ,"args":{"file":...    */
typedef struct site_text {
    char *pre, *post;
} site_text;

#define SITE_CACHE_MAX (1u << 20)

struct sp_trace {
    sp_out o;
    int first; /* no event written yet: no comma */
    uint64_t pid;
    uint64_t *pids; /* pids of the files so far, to keep them distinct */
    uint32_t nfiles;
    const sp_reader *rd;    /* the file being read */
    uint64_t *tids;         /* per thread slot of that file; 0 = not chosen yet */
    uint32_t ntids;
    site_text *sites;       /* by site id, for ids < SITE_CACHE_MAX */
    uint32_t nsites;
    sp_tree tree;
    struct order { uint64_t start, end; uint32_t k; } *ord;
    uint32_t ord_cap;
};

static void comma(sp_trace *t) {
    if (!t->first) sp_out_write(&t->o, ",\n", 2);
    t->first = 0;
}

static char *take(sp_out *m) { /* the memory of a memory-mode sp_out, NUL-terminated */
    sp_out_write(m, "", 1);
    if (m->err) {
        sp_out_free(m);
        return NULL;
    }
    return m->buf;
}

static void build_site(const sp_reader *rd, uint32_t id, sp_out *pre, sp_out *post) {
    const sp_site *s = sp_reader_site(rd, id);
    sp_out_str(pre, "{\"name\":");
    sp_out_json_str(pre, s ? s->name : "<unknown>");
    sp_out_str(pre, ",\"cat\":\"scope\",\"ph\":\"X\",\"ts\":");
    sp_out_str(post, ",\"args\":{");
    if (s) {
        sp_out_str(post, "\"file\":");
        sp_out_json_str(post, s->file);
        sp_out_str(post, ",\"line\":");
        sp_out_u64(post, s->line);
        sp_out_str(post, ",\"func\":");
        sp_out_json_str(post, s->func);
    } else {
        sp_out_str(post, "\"site\":");
        sp_out_u64(post, id);
    }
}

static uint64_t thread_tid(sp_trace *t, uint32_t slot) {
    if (slot >= t->ntids) {
        uint32_t c = slot + 1 > t->ntids * 2 ? slot + 1 : t->ntids * 2;
        uint64_t *v = realloc(t->tids, (size_t)c * sizeof *v);
        if (!v) return 0x40000000u + slot;
        memset(v + t->ntids, 0, (size_t)(c - t->ntids) * sizeof *v);
        t->tids = v;
        t->ntids = c;
    }
    if (!t->tids[slot]) {
        /* The kernel tid, unless unknown or reused by another thread of the
         * same file: then a made-up one, so tracks never merge. */
        const sp_thread *th = sp_reader_thread(t->rd, slot);
        uint64_t tid = th ? th->tid : 0;
        for (uint32_t i = 0; i < t->ntids && tid; i++)
            if (t->tids[i] == tid) tid = 0;
        t->tids[slot] = tid ? tid : 0x40000000u + slot;
    }
    return t->tids[slot];
}

static int cmp_order(const void *a, const void *b) {
    const struct order *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1; /* longer (the parent) first */
    return x->k > y->k ? -1 : x->k < y->k; /* same interval: the later closed encloses */
}

/* A finished subtree of one thread: written in start order, so that each
 * thread's events are properly nested in the file as well. */
static int trace_subtree(void *ctx, uint32_t slot, const sp_event *ev, const uint32_t *parent,
                         uint32_t n) {
    sp_trace *t = ctx;
    (void)parent;
    if (n > t->ord_cap) {
        struct order *v = realloc(t->ord, (size_t)n * sizeof *v);
        if (!v) return -1;
        t->ord = v;
        t->ord_cap = n;
    }
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++)
        if (ev[k].kind == SP_SCOPE) t->ord[m++] = (struct order){ev[k].start, ev[k].end, k};
    qsort(t->ord, m, sizeof *t->ord, cmp_order);
    uint64_t tid = thread_tid(t, slot);
    for (uint32_t i = 0; i < m; i++) {
        const sp_event *e = &ev[t->ord[i].k];
        site_text tmp = {NULL, NULL}, *st = &tmp;
        if (e->site < SITE_CACHE_MAX && sp_reader_site(t->rd, e->site)) {
            if (e->site >= t->nsites) {
                uint32_t c = e->site + 1 > t->nsites * 2 ? e->site + 1 : t->nsites * 2;
                site_text *v = realloc(t->sites, (size_t)c * sizeof *v);
                if (!v) return -1;
                memset(v + t->nsites, 0, (size_t)(c - t->nsites) * sizeof *v);
                t->sites = v;
                t->nsites = c;
            }
            st = &t->sites[e->site];
        }
        if (!st->pre) {
            sp_out pre, post;
            sp_out_init(&pre, NULL);
            sp_out_init(&post, NULL);
            build_site(t->rd, e->site, &pre, &post);
            st->pre = take(&pre);
            st->post = take(&post);
            if (!st->pre || !st->post) return -1;
        }
        comma(t);
        sp_out_str(&t->o, st->pre);
        sp_out_us(&t->o, e->start);
        sp_out_str(&t->o, ",\"dur\":");
        sp_out_us(&t->o, e->end - e->start);
        sp_out_str(&t->o, ",\"pid\":");
        sp_out_u64(&t->o, t->pid);
        sp_out_str(&t->o, ",\"tid\":");
        sp_out_u64(&t->o, tid);
        sp_out_str(&t->o, st->post);
        if (e->gpu_ns >= 0) {
            sp_out_str(&t->o, ",\"gpu_ts\":");
            sp_out_us(&t->o, e->gpu_start);
            sp_out_str(&t->o, ",\"gpu_dur\":");
            sp_out_us(&t->o, (uint64_t)e->gpu_ns);
        }
        sp_out_str(&t->o, "}}");
        if (st == &tmp) {
            free(tmp.pre);
            free(tmp.post);
        }
    }
    return t->o.err ? -1 : 0;
}

static void metadata(sp_trace *t, const char *what, uint64_t tid, const char *name) {
    comma(t);
    sp_out_str(&t->o, "{\"name\":\"");
    sp_out_str(&t->o, what);
    sp_out_str(&t->o, "\",\"ph\":\"M\",\"pid\":");
    sp_out_u64(&t->o, t->pid);
    sp_out_str(&t->o, ",\"tid\":");
    sp_out_u64(&t->o, tid);
    sp_out_str(&t->o, ",\"args\":{\"name\":");
    sp_out_json_str(&t->o, name);
    sp_out_str(&t->o, "}}");
}

static int trace_header(void *ctx, const sp_reader *r, const sp_header *h) {
    sp_trace *t = ctx;
    (void)r;
    /* The file's pid, unless an earlier file used it (two runs of one
     * program on one machine can share it): then one above the largest. */
    uint64_t pid = h->pid, top = 0;
    for (uint32_t i = 0; i < t->nfiles; i++) {
        if (t->pids[i] == pid) pid = 0;
        if (t->pids[i] > top) top = t->pids[i];
    }
    if (!pid) pid = top + 1;
    uint64_t *v = realloc(t->pids, (t->nfiles + 1) * sizeof *v);
    if (!v) return -1;
    t->pids = v;
    t->pids[t->nfiles++] = pid;
    t->pid = pid;
    char name[320];
    if (h->rank != 0xFFFFFFFFu)
        snprintf(name, sizeof name, "%s (pid %llu, rank %u)", h->prog, (unsigned long long)h->pid,
                 h->rank);
    else
        snprintf(name, sizeof name, "%s (pid %llu)", h->prog, (unsigned long long)h->pid);
    metadata(t, "process_name", 0, name);
    return 0;
}

static int trace_events(void *ctx, const sp_reader *r, const sp_thread *th, const sp_event *ev,
                        uint32_t n) {
    sp_trace *t = ctx;
    (void)r;
    return sp_tree_add(&t->tree, th->slot, ev, n);
}

static int trace_finish(void *ctx, const sp_reader *r) {
    sp_trace *t = ctx;
    int rc = sp_tree_flush_all(&t->tree);
    for (uint32_t i = 0; i < sp_reader_nthreads(r); i++) {
        const sp_thread *th = sp_reader_thread(r, i);
        char name[96];
        if (th->name[0]) snprintf(name, sizeof name, "%.80s", th->name);
        else snprintf(name, sizeof name, "thread %u", th->index);
        metadata(t, "thread_name", thread_tid(t, i), name);
    }
    /* Site ids and thread slots belong to one file. */
    for (uint32_t i = 0; i < t->nsites; i++) {
        free(t->sites[i].pre);
        free(t->sites[i].post);
    }
    free(t->sites);
    free(t->tids);
    t->sites = NULL;
    t->tids = NULL;
    t->nsites = t->ntids = 0;
    sp_tree_free(&t->tree);
    sp_tree_init(&t->tree, trace_subtree, t);
    return rc;
}

sp_trace *sp_trace_open(FILE *out) {
    sp_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    sp_out_init(&t->o, out);
    t->first = 1;
    sp_tree_init(&t->tree, trace_subtree, t);
    sp_out_str(&t->o, "{\"traceEvents\":[\n");
    return t;
}

static sp_callbacks trace_callbacks(sp_trace *t) {
    sp_callbacks cb = {t, trace_header, trace_events, trace_finish};
    return cb;
}

/* sp_reader_* need the reader during callbacks: remember it on the way in. */
static int hdr_hook(void *ctx, const sp_reader *r, const sp_header *h) {
    ((sp_trace *)ctx)->rd = r;
    return trace_header(ctx, r, h);
}

int sp_trace_add_file(sp_trace *t, const char *path, sp_result *res) {
    sp_callbacks cb = trace_callbacks(t);
    cb.header = hdr_hook;
    return sp_read_file(path, &cb, res);
}

int sp_trace_add_mem(sp_trace *t, const void *data, size_t n, sp_result *res) {
    sp_callbacks cb = trace_callbacks(t);
    cb.header = hdr_hook;
    return sp_read_mem(data, n, &cb, res);
}

int sp_trace_close(sp_trace *t) {
    sp_out_str(&t->o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING "\"}}\n");
    int rc = sp_out_flush(&t->o);
    sp_out_free(&t->o);
    sp_tree_free(&t->tree);
    free(t->pids);
    free(t->ord);
    free(t);
    return rc;
}
