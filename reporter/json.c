/* json.c -- buffered output, JSON strings, and the Chrome trace writer. */
#include "json.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof.h"
#include "chrome.h"
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

/* Room for n more bytes at the end of the buffer (written by the caller, who
 * then adds what it wrote to o->n), or NULL when memory ran out. */
static char *out_reserve(sp_out *o, size_t n) {
    if (o->cap - o->n < n || (o->f && o->n + n > OUT_FLUSH_AT)) {
        if (o->f && o->n + n > OUT_FLUSH_AT) out_drain(o);
        if (o->cap - o->n < n) {
            size_t c = o->cap ? o->cap : 256;
            while (c - o->n < n) c *= 2;
            if (o->f && c < OUT_FLUSH_AT) c = OUT_FLUSH_AT;
            char *b = realloc(o->buf, c);
            if (!b) return o->err = 1, NULL;
            o->buf = b;
            o->cap = c;
        }
    }
    return o->buf + o->n;
}

static char *put(char *p, const void *s, size_t n) {
    memcpy(p, s, n);
    return p + n;
}

/* Two digits per division: timestamps have 10 to 16 digits, and this loop
 * is most of the remaining per-slice cost. */
static const char digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static char *put_u64(char *p, uint64_t v) { /* at most 20 digits */
    static const uint64_t pow10[19] = {
        10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
        1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
        100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
        1000000000000000000ull, 10000000000000000000ull};
    unsigned n = 1;
    while (n < 20 && v >= pow10[n - 1]) n++;
    char *e = p + n; /* filled from the end, in place: no copy of a variable length */
    for (; v >= 100; v /= 100) memcpy(e -= 2, digits2 + v % 100 * 2, 2);
    if (v >= 10) memcpy(e - 2, digits2 + v * 2, 2);
    else e[-1] = (char)('0' + v);
    return p + n;
}

static char *put_us(char *p, uint64_t ns) { /* at most 24 bytes */
    uint64_t f = ns % 1000;
    p = put_u64(p, ns / 1000);
    p[0] = '.';
    p[1] = (char)('0' + f / 100);
    memcpy(p + 2, digits2 + f % 100 * 2, 2);
    return p + 4;
}

void sp_out_u64(sp_out *o, uint64_t v) {
    char *p = out_reserve(o, 20);
    if (p) o->n += (size_t)(put_u64(p, v) - p);
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
    char *p = out_reserve(o, 24);
    if (p) o->n += (size_t)(put_us(p, ns) - p);
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
/* Per site id, the event text before the category and after "tid", built once:
 *   {"name":"N","cat":"   scope","ph":"X","ts":...   ,"args":{"file":...    */
typedef struct site_text {
    char *pre, *post;
    size_t npre, npost;
} site_text;

#define SITE_CACHE_MAX (1u << 20)
/* A slice's bytes besides its site text, category and tail: ",\n", 4 keys
 * (16 + 3 * 7), ts (24), dur (24; "%.17g" at most 24), pid and tid (20 each). */
#define SLICE_MAX_FIXED 160u

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
    unsigned char *pad; /* per event of a subtree: tenths of ns added to dur */
    uint32_t pad_cap;
    uint64_t win_lo, win_hi; /* --steps: what to keep, in ns */
    uint64_t flow_id;        /* flow arrows so far (ids are trace-wide) */
    /* A Chrome input (per file): its device events are GPU slices only, and
     * its arrows start on the runtime calls that launched them. */
    int chrome;
    uint64_t flow_base;      /* flow ids of this file: flow_base + correlation */
    struct flows { uint64_t *v; uint32_t off, n, cap; } *fl; /* per slot: see trace_events */
    uint32_t nfl;
    struct flow_end { uint64_t id, ts, pid, tid; } *ends; /* arrow ends held back */
    uint32_t nends, ends_cap;
    unsigned char *used;     /* per slot: a slice was written (Chrome: stream
                                threads hold none and get no track) */
    uint32_t nused;
    uint64_t next_gpu_pid;   /* made-up pids of GPU processes */
    /* Per file: */
    uint64_t gpu_pid[SP_MAX_DEVICES]; /* by GPU index; 0 = no process yet */
    struct gpu_track { uint64_t pid, stream, tid; } *tracks; /* one per stream */
    uint32_t ntracks, tracks_cap;
    struct mem_rec { uint64_t t; int64_t bytes; uint32_t dev, seq; } *mem;
    uint32_t nmem, mem_cap;
};

/* Made-up ids of tracks that are not kernel threads. Kernel pids and tids
 * stay below 2^22 (PID_MAX_LIMIT), and 0x40000000 + slot is taken. */
#define GPU_PID_BASE 0x10000000u
#define STEPS_TID 0x3FFFFFFFu
#define MAX_TRACKS 4096u /* streams per file; more share one "other" track */

static int in_window(const sp_trace *t, uint64_t start, uint64_t end) {
    return start >= t->win_lo && end <= t->win_hi;
}

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
    sp_out_str(pre, ",\"cat\":\"");
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

/* The cached JSON text of a site (or *tmp for one not cached). The hit is
 * checked first: it is the per-event path, and needs no reader call. */
static int site_of(sp_trace *t, uint32_t site, site_text *tmp, site_text **out) {
    if (site < t->nsites && t->sites[site].pre) return (void)(*out = &t->sites[site]), 0;
    site_text *st = tmp;
    if (site < SITE_CACHE_MAX && sp_reader_site(t->rd, site)) {
        if (site >= t->nsites) {
            uint32_t c = site + 1 > t->nsites * 2 ? site + 1 : t->nsites * 2;
            site_text *v = realloc(t->sites, (size_t)c * sizeof *v);
            if (!v) return -1;
            memset(v + t->nsites, 0, (size_t)(c - t->nsites) * sizeof *v);
            t->sites = v;
            t->nsites = c;
        }
        st = &t->sites[site];
    }
    if (!st->pre) {
        sp_out pre, post;
        sp_out_init(&pre, NULL);
        sp_out_init(&post, NULL);
        build_site(t->rd, site, &pre, &post);
        st->npre = pre.n;
        st->npost = post.n;
        st->pre = take(&pre);
        st->post = take(&post);
        if (!st->pre || !st->post) {
            free(st->pre);
            free(st->post);
            st->pre = st->post = NULL;
            return -1;
        }
    }
    *out = st;
    return 0;
}

/* A time as we write it, parsed to the nearest double as a viewer does
 * (strtod and JavaScript both round correctly). Up to 2^53 ns both ns and
 * 1000 are exact doubles and IEEE division rounds correctly, so ns / 1000.0
 * is that same double without printing and parsing (the per-slice cost of
 * write_dur). */
static double viewer_us(uint64_t ns) {
#if FLT_EVAL_METHOD == 0
    if (ns <= 1ull << 53) return (double)ns / 1000.0;
#endif
    char a[32];
    snprintf(a, sizeof a, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
    return strtod(a, NULL);
}

/* Viewers compute a slice's end as ts + dur in doubles, and it can land a
 * hair past the nanosecond it stands for: a child that ends where its parent
 * ends, or a slice that ends where the next begins, then seems to overlap
 * and DevTools drops it from the tree. For a slice whose end is such a
 * shared boundary, dur is written as the double that makes ts + dur exactly
 * the double of its end (end - ts of two nearby doubles is exact), so every
 * such comparison is made on the ends' own, monotone, values. Marks them in
 * t->pad: parents' ends equal to a child's, ends equal to a start in the
 * subtree, and top-level slices (whose next sibling is in another subtree). */
static int pad_ends(sp_trace *t, const sp_event *ev, const uint32_t *parent, uint32_t n) {
    if (n > t->pad_cap) {
        unsigned char *v = realloc(t->pad, n);
        if (!v) return -1;
        t->pad = v;
        t->pad_cap = n;
    }
    memset(t->pad, 0, n);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t p = parent[k];
        if (ev[k].kind != SP_SCOPE) continue;
        if (p == SP_NO_PARENT) t->pad[k] = 1;
        else if (ev[p].end == ev[k].end) t->pad[k] = t->pad[p] = 1;
    }
    return 0;
}

/* Mark the slices (sorted by start in t->ord[0..m)) ending where another
 * starts: binary search of each end among the starts. */
static void pad_siblings(sp_trace *t, uint32_t m) {
    for (uint32_t i = 0; i < m; i++) {
        uint64_t end = t->ord[i].end;
        uint32_t lo = i + 1, hi = m;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (t->ord[mid].start < end) lo = mid + 1;
            else hi = mid;
        }
        if (lo < m && t->ord[lo].start == end && t->ord[i].start != end) t->pad[t->ord[i].k] = 1;
    }
}

/* dur as written: exact to the ns ("1.234"), or for a marked slice whose
 * ts + dur would not give the double of its end, that difference in full. */
static char *put_dur(char *p, uint64_t ts, uint64_t dur, int exact_end) {
    if (exact_end) {
        double s = viewer_us(ts), e = viewer_us(ts + dur);
        if (s + viewer_us(dur) != e) return p + snprintf(p, 32, "%.17g", e - s);
    }
    return put_us(p, dur);
}

static void write_dur(sp_out *o, uint64_t ts, uint64_t dur, int exact_end) {
    char *p = out_reserve(o, 32);
    if (p) o->n += (size_t)(put_dur(p, ts, dur, exact_end) - p);
}

/* A complete event up to the inside of its "args" object (left open), then
 * `tail` (may be ""). Written straight into the buffer after one reservation:
 * this is the per-slice path, and a write per field was most of its cost. */
static void slice(sp_trace *t, const site_text *st, const char *cat, uint64_t ts, uint64_t dur,
                  uint64_t pid, uint64_t tid, unsigned pad, const char *tail) {
    size_t ncat = strlen(cat), ntail = strlen(tail);
    char *p = out_reserve(&t->o, st->npre + ncat + st->npost + ntail + SLICE_MAX_FIXED), *p0 = p;
    if (!p) return;
    if (!t->first) p = put(p, ",\n", 2);
    t->first = 0;
    p = put(p, st->pre, st->npre);
    p = put(p, cat, ncat);
    p = put(p, "\",\"ph\":\"X\",\"ts\":", 16);
    p = put_us(p, ts);
    p = put(p, ",\"dur\":", 7);
    p = put_dur(p, ts, dur, pad);
    p = put(p, ",\"pid\":", 7);
    p = put_u64(p, pid);
    p = put(p, ",\"tid\":", 7);
    p = put_u64(p, tid);
    p = put(p, st->post, st->npost);
    p = put(p, tail, ntail);
    t->o.n += (size_t)(p - p0);
}

/* One end of a flow arrow: ph "s" on the launching CPU slice, "f" on the GPU
 * slice ("bp":"e": bound to the slice it lands on). Both carry the ts, pid,
 * tid and category of their slice, which is how viewers bind them. */
static void flow(sp_trace *t, const char *ph, uint64_t id, uint64_t ts, uint64_t pid, uint64_t tid) {
    comma(t);
    sp_out_str(&t->o, "{\"name\":\"launch\",\"cat\":\"gpu\",\"ph\":\"");
    sp_out_str(&t->o, ph);
    sp_out_str(&t->o, ph[0] == 'f' ? "\",\"bp\":\"e\",\"id\":" : "\",\"id\":");
    sp_out_u64(&t->o, id);
    sp_out_str(&t->o, ",\"ts\":");
    sp_out_us(&t->o, ts);
    sp_out_str(&t->o, ",\"pid\":");
    sp_out_u64(&t->o, pid);
    sp_out_str(&t->o, ",\"tid\":");
    sp_out_u64(&t->o, tid);
    sp_out_str(&t->o, "}");
}

/* The process of GPU `dev` of the current file, made up on first use. */
static uint64_t gpu_pid(sp_trace *t, uint32_t dev) {
    if (dev >= SP_MAX_DEVICES) dev = SP_MAX_DEVICES - 1;
    if (!t->gpu_pid[dev]) t->gpu_pid[dev] = GPU_PID_BASE + t->next_gpu_pid++;
    return t->gpu_pid[dev];
}

/* The track (tid in the GPU process) of a stream: 1, 2, ... in order of
 * first sight; past MAX_TRACKS streams, one shared track (tid 0). */
static int gpu_track(sp_trace *t, uint64_t pid, uint64_t stream, uint64_t *tid) {
    uint32_t per_pid = 0;
    for (uint32_t i = 0; i < t->ntracks; i++) {
        if (t->tracks[i].pid != pid) continue;
        if (t->tracks[i].stream == stream) return (void)(*tid = t->tracks[i].tid), 0;
        per_pid++;
    }
    if (t->ntracks >= MAX_TRACKS) return (void)(*tid = 0), 0;
    if (t->ntracks == t->tracks_cap) {
        uint32_t c = t->tracks_cap ? t->tracks_cap * 2 : 8;
        struct gpu_track *v = realloc(t->tracks, (size_t)c * sizeof *v);
        if (!v) return -1;
        t->tracks = v;
        t->tracks_cap = c;
    }
    t->tracks[t->ntracks++] = (struct gpu_track){pid, stream, per_pid + 1};
    *tid = per_pid + 1;
    return 0;
}

/* The trace-wide id of a Chrome file's arrow (its correlation). */
static uint64_t flow_id_of(sp_trace *t, uint64_t c) {
    uint64_t id = t->flow_base + c;
    if (id > t->flow_id) t->flow_id = id; /* the next file's ids start above */
    return id;
}

/* Grow a per-slot array of `size`-byte entries to hold slot; zero-filled. */
static int grow_slots(void *pv, uint32_t *n, uint32_t slot, size_t size) {
    if (slot < *n) return 0;
    void **p = pv;
    uint32_t c = slot + 1 > *n * 2 ? slot + 1 : *n * 2;
    char *v = realloc(*p, (size_t)c * size);
    if (!v) return -1;
    memset(v + (size_t)*n * size, 0, (size_t)(c - *n) * size);
    *p = v;
    *n = c;
    return 0;
}

/* GPU intervals go to their own tracks at once (they need no ancestors), with
 * a flow arrow from the CPU scope that enqueued them; memory records are kept
 * for the counter tracks written at the end of the file. */
static int trace_gpu_mem(sp_trace *t, const sp_thread *th, const sp_event *ev, uint32_t n) {
    const sp_gpu_info *gi = sp_reader_gpu_info(t->rd);
    for (uint32_t k = 0; k < n; k++) {
        const sp_event *e = &ev[k];
        if (e->kind == SP_MEM) {
            if (e->start < t->win_lo || e->start > t->win_hi) continue;
            if (t->nmem == t->mem_cap) {
                uint32_t c = t->mem_cap ? t->mem_cap * 2 : 256;
                if (c < t->mem_cap) return -1;
                struct mem_rec *v = realloc(t->mem, (size_t)c * sizeof *v);
                if (!v) return -1;
                t->mem = v;
                t->mem_cap = c;
            }
            t->mem[t->nmem] = (struct mem_rec){e->start, e->bytes, e->device, t->nmem};
            t->nmem++;
            continue;
        }
        if (e->gpu_ns < 0 || !gi || !gi[k].timed || !in_window(t, e->start, e->end)) continue;
        site_text tmp = {NULL, NULL, 0, 0}, *st;
        uint64_t pid = gpu_pid(t, gi[k].device), tid;
        if (gpu_track(t, pid, gi[k].stream, &tid) != 0 || site_of(t, e->site, &tmp, &st) != 0)
            return -1;
        if (t->chrome) {
            /* A device event of the JSON: its launch is another event (a
             * runtime call), whose arrow start trace_subtree writes. */
            uint64_t c = sp_chrome_flow(t->rd, k);
            slice(t, st, "gpu", e->gpu_start, (uint64_t)e->gpu_ns, pid, tid, 0, "}}");
            /* Its arrow's end waits for the end of the file: viewers
             * (DevTools) pair "s" and "f" in file order, and the launch's
             * "s" is written with its thread's subtree, later than this. */
            if (c) {
                if (t->nends == t->ends_cap) {
                    uint32_t cap = t->ends_cap ? t->ends_cap * 2 : 64;
                    struct flow_end *v = cap > t->ends_cap ? realloc(t->ends, (size_t)cap * sizeof *v) : NULL;
                    if (!v) return -1;
                    t->ends = v;
                    t->ends_cap = cap;
                }
                t->ends[t->nends++] = (struct flow_end){flow_id_of(t, c), e->gpu_start, pid, tid};
            }
        } else {
            uint64_t id = ++t->flow_id;
            slice(t, st, "gpu", e->gpu_start, (uint64_t)e->gpu_ns, pid, tid, 0, "");
            sp_out_str(&t->o, ",\"launch_ts\":");
            sp_out_us(&t->o, e->start);
            sp_out_str(&t->o, "}}");
            flow(t, "s", id, e->start, t->pid, thread_tid(t, th->slot));
            flow(t, "f", id, e->gpu_start, pid, tid);
        }
        if (st == &tmp) {
            free(tmp.pre);
            free(tmp.post);
        }
    }
    return t->o.err ? -1 : 0;
}

/* A finished subtree of one thread: written in start order, so that each
 * thread's events are properly nested in the file as well. */
static int trace_subtree(void *ctx, uint32_t slot, const sp_event *ev, const uint32_t *parent,
                         uint32_t n) {
    sp_trace *t = ctx;
    if (pad_ends(t, ev, parent, n) != 0) return -1;
    if (n > t->ord_cap) {
        struct order *v = realloc(t->ord, (size_t)n * sizeof *v);
        if (!v) return -1;
        t->ord = v;
        t->ord_cap = n;
    }
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++)
        if (ev[k].kind == SP_SCOPE && in_window(t, ev[k].start, ev[k].end))
            t->ord[m++] = (struct order){ev[k].start, ev[k].end, k};
    /* Subtrees are mostly a handful of slices: insertion sort beats qsort's
     * calls through a pointer there. The order is total (k breaks ties), so
     * either sort gives the same sequence. */
    if (m > 16) qsort(t->ord, m, sizeof *t->ord, cmp_order);
    else
        for (uint32_t i = 1; i < m; i++)
            for (uint32_t j = i; j > 0 && cmp_order(&t->ord[j - 1], &t->ord[j]) > 0; j--) {
                struct order x = t->ord[j];
                t->ord[j] = t->ord[j - 1];
                t->ord[j - 1] = x;
            }
    pad_siblings(t, m);
    /* A Chrome file's arrow starts, parallel to ev (trace_events). */
    const uint64_t *fl = NULL;
    if (t->chrome && slot < t->nfl) {
        struct flows *f = &t->fl[slot];
        if (f->n - f->off >= n) fl = f->v + f->off;
        f->off += f->n - f->off >= n ? n : f->n - f->off;
        if (f->off == f->n) f->off = f->n = 0;
    }
    if (m && t->chrome) {
        if (grow_slots(&t->used, &t->nused, slot, 1) != 0) return -1;
        t->used[slot] = 1;
    }
    uint64_t tid = thread_tid(t, slot);
    for (uint32_t i = 0; i < m; i++) {
        const sp_event *e = &ev[t->ord[i].k];
        site_text tmp = {NULL, NULL, 0, 0}, *st = &tmp;
        if (site_of(t, e->site, &tmp, &st) != 0) return -1;
        if (t->chrome) {
            /* An op's GPU time is attributed, not an interval of its own:
             * no gpu_ts. A launch is in "gpu", where its arrow binds. */
            uint64_t c = fl ? fl[t->ord[i].k] : 0;
            slice(t, st, c ? "gpu" : "scope", e->start, e->end - e->start, t->pid, tid,
                  t->pad[t->ord[i].k], "}}");
            if (c) flow(t, "s", flow_id_of(t, c), e->start, t->pid, tid);
            if (st == &tmp) free(tmp.pre), free(tmp.post);
            continue;
        }
        /* A timed GPU scope's CPU side is in category "gpu", as its GPU
         * interval and the flow arrow between them: a flow binds to the
         * slice of its own category at its ts, so a parent scope starting
         * at the same nanosecond cannot take the arrow. */
        slice(t, st, e->gpu_ns >= 0 ? "gpu" : "scope", e->start, e->end - e->start, t->pid, tid,
              t->pad[t->ord[i].k], e->gpu_ns >= 0 ? "" : "}}");
        if (e->gpu_ns >= 0) {
            sp_out_str(&t->o, ",\"gpu_ts\":");
            sp_out_us(&t->o, e->gpu_start);
            sp_out_str(&t->o, ",\"gpu_dur\":");
            sp_out_us(&t->o, (uint64_t)e->gpu_ns);
            sp_out_str(&t->o, "}}");
        }
        if (st == &tmp) {
            free(tmp.pre);
            free(tmp.post);
        }
    }
    return t->o.err ? -1 : 0;
}

/* A metadata event ("ph":"M") up to the inside of its args: the caller
 * writes the one arg and closes with "}}". */
static void meta_open(sp_trace *t, const char *what, uint64_t pid, uint64_t tid) {
    comma(t);
    sp_out_str(&t->o, "{\"name\":\"");
    sp_out_str(&t->o, what);
    sp_out_str(&t->o, "\",\"ph\":\"M\",\"pid\":");
    sp_out_u64(&t->o, pid);
    sp_out_str(&t->o, ",\"tid\":");
    sp_out_u64(&t->o, tid);
    sp_out_str(&t->o, ",\"args\":{");
}

static void metadata_pid(sp_trace *t, const char *what, uint64_t pid, uint64_t tid,
                         const char *name) {
    meta_open(t, what, pid, tid);
    sp_out_str(&t->o, "\"name\":");
    sp_out_json_str(&t->o, name);
    sp_out_str(&t->o, "}}");
}

static void metadata(sp_trace *t, const char *what, uint64_t tid, const char *name) {
    metadata_pid(t, what, t->pid, tid, name);
}

static void sort_index(sp_trace *t, const char *what, uint64_t pid, uint64_t tid, int64_t index) {
    meta_open(t, what, pid, tid);
    sp_out_str(&t->o, "\"sort_index\":");
    sp_out_i64(&t->o, index);
    sp_out_str(&t->o, "}}");
}

static int trace_header(void *ctx, const sp_reader *r, const sp_header *h) {
    sp_trace *t = ctx;
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
    t->chrome = sp_chrome_vtbl(r) != NULL;
    t->flow_base = t->flow_id;
    if (t->chrome) return 0; /* named at the end: the JSON's names come later */
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
    t->rd = r;
    if (trace_gpu_mem(t, th, ev, n) != 0) return -1;
    if (!t->chrome) return sp_tree_add(&t->tree, th->slot, ev, n);
    /* Chrome: device events are on their GPU tracks already; the rest goes
     * to the tree with each one's arrow start appended to the slot's queue,
     * which the tree's subtrees then consume in the same order (a subtree is
     * the slot's events buffered so far, in the order they were added). */
    const sp_gpu_info *gi = sp_reader_gpu_info(r);
    if (grow_slots(&t->fl, &t->nfl, th->slot, sizeof *t->fl) != 0) return -1;
    struct flows *f = &t->fl[th->slot];
    for (uint32_t k = 0, j; k < n; k = j) {
        for (j = k; j < n && !(gi && gi[j].timed); j++) {
            if (f->n == f->cap) {
                uint32_t c = f->cap ? f->cap * 2 : 64;
                uint64_t *v = realloc(f->v, (size_t)c * sizeof *v);
                if (!v) return -1;
                f->v = v;
                f->cap = c;
            }
            f->v[f->n++] = sp_chrome_flow(r, j);
        }
        if (j > k) {
            int rc = sp_tree_add(&t->tree, th->slot, ev + k, j - k);
            if (rc) return rc;
            f = &t->fl[th->slot];
        }
        if (j < n) j++; /* a device event */
    }
    return 0;
}

static int cmp_mem(const void *a, const void *b) {
    const struct mem_rec *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Counter tracks: per device, the net bytes allocated since the file began,
 * after each allocation or free, in time order across threads (the records
 * of a file are held in memory and sorted: memory grows with their number).
 * CPU memory is a counter of the program's process, GPU n's of its GPU. */
static void trace_counters(sp_trace *t) {
    if (t->nmem) qsort(t->mem, t->nmem, sizeof *t->mem, cmp_mem);
    int64_t level = 0;
    for (uint32_t i = 0; i < t->nmem; i++) {
        const struct mem_rec *m = &t->mem[i];
        if (i == 0 || m->dev != t->mem[i - 1].dev) level = 0;
        if (__builtin_add_overflow(level, m->bytes, &level)) level = m->bytes > 0 ? INT64_MAX : INT64_MIN;
        comma(t);
        sp_out_str(&t->o, m->dev ? "{\"name\":\"GPU memory\"" : "{\"name\":\"CPU memory\"");
        sp_out_str(&t->o, ",\"cat\":\"memory\",\"ph\":\"C\",\"ts\":");
        sp_out_us(&t->o, m->t);
        sp_out_str(&t->o, ",\"pid\":");
        sp_out_u64(&t->o, m->dev ? gpu_pid(t, m->dev - 1) : t->pid);
        sp_out_str(&t->o, ",\"args\":{\"allocated\":");
        sp_out_i64(&t->o, level);
        sp_out_str(&t->o, "}}");
    }
    t->nmem = 0;
}

/* Steps as slices "ProfilerStep#N" on a track of their own: a step begins
 * where the previous one ended (the first when profiling started), so steps
 * would cut across the scopes of the main thread and break its nesting. */
static void trace_steps(sp_trace *t, const sp_reader *r) {
    const sp_step *s;
    uint32_t n = sp_reader_steps(r, &s), shown = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!in_window(t, s[i].start, s[i].end)) continue;
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)s[i].number);
        comma(t);
        sp_out_str(&t->o, "{\"name\":\"");
        sp_out_str(&t->o, name);
        sp_out_str(&t->o, "\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":");
        sp_out_us(&t->o, s[i].start);
        sp_out_str(&t->o, ",\"dur\":");
        write_dur(&t->o, s[i].start, s[i].end - s[i].start, 1); /* ends where the next begins */
        sp_out_str(&t->o, ",\"pid\":");
        sp_out_u64(&t->o, t->pid);
        sp_out_str(&t->o, ",\"tid\":");
        sp_out_u64(&t->o, STEPS_TID);
        sp_out_str(&t->o, ",\"args\":{\"step\":");
        sp_out_u64(&t->o, s[i].number);
        sp_out_str(&t->o, "}}");
        shown++;
    }
    if (shown) {
        metadata(t, "thread_name", STEPS_TID, "Steps");
        sort_index(t, "thread_sort_index", t->pid, STEPS_TID, -1); /* above the threads */
    }
}

static int trace_finish(void *ctx, const sp_reader *r) {
    sp_trace *t = ctx;
    int rc = sp_tree_flush_all(&t->tree);
    for (uint32_t i = 0; i < t->nends; i++)
        flow(t, "f", t->ends[i].id, t->ends[i].ts, t->ends[i].pid, t->ends[i].tid);
    t->nends = 0;
    const sp_header *h = sp_reader_header(r);
    if (t->chrome) { /* the JSON's process_name, else its pid */
        char name[320];
        if (h->prog[0] && h->pid) snprintf(name, sizeof name, "%s (pid %llu)", h->prog, (unsigned long long)h->pid);
        else if (h->prog[0]) snprintf(name, sizeof name, "%s", h->prog);
        else if (h->pid) snprintf(name, sizeof name, "pid %llu", (unsigned long long)h->pid);
        else snprintf(name, sizeof name, "Chrome trace");
        metadata(t, "process_name", 0, name);
    }
    for (uint32_t i = 0; i < sp_reader_nthreads(r); i++) {
        const sp_thread *th = sp_reader_thread(r, i);
        if (t->chrome && (i >= t->nused || !t->used[i])) continue; /* a stream's: no slices */
        char name[96];
        if (th->name[0]) snprintf(name, sizeof name, "%.80s", th->name);
        else snprintf(name, sizeof name, "thread %u", th->index);
        metadata(t, "thread_name", thread_tid(t, i), name);
    }
    trace_steps(t, r);
    trace_counters(t);
    /* GPU processes "GPU n: NAME" (after the program's own), a thread per
     * stream. */
    for (uint32_t d = 0; d < SP_MAX_DEVICES; d++) {
        if (!t->gpu_pid[d]) continue;
        const char *dn = sp_reader_device_name(r, d);
        char name[400];
        int len = snprintf(name, sizeof name, "GPU %u: %s", d, dn && dn[0] ? dn : "unknown device");
        if (h->rank != 0xFFFFFFFFu && len > 0 && (size_t)len < sizeof name)
            snprintf(name + len, sizeof name - (size_t)len, " (rank %u)", h->rank);
        metadata_pid(t, "process_name", t->gpu_pid[d], 0, name);
        sort_index(t, "process_sort_index", t->gpu_pid[d], 0, (int64_t)(t->gpu_pid[d] - GPU_PID_BASE) + 1000000);
    }
    for (uint32_t i = 0; i < t->ntracks; i++) {
        char name[64];
        if (t->tracks[i].stream)
            snprintf(name, sizeof name, "stream 0x%llx", (unsigned long long)t->tracks[i].stream);
        else
            snprintf(name, sizeof name, "stream 0 (default)");
        metadata_pid(t, "thread_name", t->tracks[i].pid, t->tracks[i].tid, name);
    }
    if (t->ntracks >= MAX_TRACKS)
        for (uint32_t d = 0; d < SP_MAX_DEVICES; d++)
            if (t->gpu_pid[d]) metadata_pid(t, "thread_name", t->gpu_pid[d], 0, "other streams");
    memset(t->gpu_pid, 0, sizeof t->gpu_pid);
    t->ntracks = 0;
    /* Site ids and thread slots belong to one file. */
    for (uint32_t i = 0; i < t->nsites; i++) {
        free(t->sites[i].pre);
        free(t->sites[i].post);
    }
    free(t->sites);
    free(t->tids);
    for (uint32_t i = 0; i < t->nfl; i++) free(t->fl[i].v);
    free(t->fl);
    free(t->used);
    t->sites = NULL;
    t->tids = NULL;
    t->fl = NULL;
    t->used = NULL;
    t->nsites = t->ntids = t->nfl = t->nused = 0;
    sp_tree_free(&t->tree);
    sp_tree_init(&t->tree, trace_subtree, t);
    return rc;
}

sp_trace *sp_trace_open(FILE *out) {
    sp_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    sp_out_init(&t->o, out);
    t->first = 1;
    t->win_hi = UINT64_MAX;
    sp_tree_init(&t->tree, trace_subtree, t);
    sp_out_str(&t->o, "{\"traceEvents\":[\n");
    return t;
}

/* sp_reader_* need the reader during callbacks: remember it on the way in. */
static int hdr_hook(void *ctx, const sp_reader *r, const sp_header *h) {
    ((sp_trace *)ctx)->rd = r;
    return trace_header(ctx, r, h);
}

sp_callbacks sp_trace_callbacks(sp_trace *t) {
    sp_callbacks cb = {t, hdr_hook, trace_events, trace_finish};
    return cb;
}

void sp_trace_set_window(sp_trace *t, uint64_t lo, uint64_t hi) {
    t->win_lo = lo;
    t->win_hi = hi;
}

int sp_trace_add_file(sp_trace *t, const char *path, sp_result *res) {
    sp_callbacks cb = sp_trace_callbacks(t);
    return sp_read_file(path, &cb, res);
}

int sp_trace_add_mem(sp_trace *t, const void *data, size_t n, sp_result *res) {
    sp_callbacks cb = sp_trace_callbacks(t);
    return sp_read_mem(data, n, &cb, res);
}

int sp_trace_close(sp_trace *t) {
    sp_out_str(&t->o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING "\"}}\n");
    int rc = sp_out_flush(&t->o);
    sp_out_free(&t->o);
    sp_tree_free(&t->tree);
    free(t->pids);
    free(t->ord);
    free(t->tracks);
    free(t->ends);
    free(t->mem);
    free(t->pad);
    free(t);
    return rc;
}
