/* chrome_write.c -- the Chrome trace writer (`scopeprof trace`): see
 * chrome_write.h. Its text goes through the output buffer (buf.h), the
 * per-slice path straight into the buffer's memory (digits.h). */
#include "chrome_write.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof.h"
#include "buf.h"
#include "chrome.h"
#include "digits.h"
#include "tree.h"

/* Per site id, the event text before the category and after "tid", built once:
 *   {"name":"N","cat":"   scope","ph":"X","ts":...   ,"args":{"file":...
 * Both are allocated with PAD readable bytes past their length, so that the
 * per-slice copy can move whole PAD-byte blocks (copy_pad). */
typedef struct site_text {
    char *pre, *post;
    size_t npre, npost;
} site_text;

#define SITE_CACHE_MAX (1u << 20)
#define PAD 32u
/* The text of a slice's pid and tid, ",\"pid\":P,\"tid\":T" (at most 54
 * bytes), kept per thread slot: the same for all of a thread's slices. It is
 * copied whole (sizeof s) and n bytes of it kept. */
typedef struct pid_tid {
    char s[63];
    unsigned char n; /* 0: not built yet */
} pid_tid;
/* Room a slice needs besides its site text: ",\n" (2), the text after the
 * site's pre (PAD) and the padding after it (PAD), ts (24), ",\"dur\":" and
 * dur (7 + 32), pid and tid (63), the padding after post (PAD), "}}" (2). */
#define SLICE_MAX_FIXED (2u + PAD + PAD + 24u + 39u + 63u + PAD + 2u + 16u)

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
    pid_tid *pts;           /* per thread slot of that file; n == 0: not built */
    uint32_t npts;
    uint32_t nsites;
    sp_tree tree;
    struct order { uint64_t start, end; uint32_t k; } *ord;
    uint32_t ord_cap;
    unsigned char *pad; /* per event of a subtree: tenths of ns added to dur */
    uint32_t pad_cap;
    uint64_t win_lo, win_hi; /* --steps: what to keep, in ns */
    sp_keep_fn keep;         /* trace filters (filter.h), or NULL */
    void *keep_ctx;
    uint64_t flow_id;        /* flow arrows so far (ids are trace-wide) */
    /* put_ts: the digits of the last slice start's ns / 10^8 (its 0.1 s),
     * which the next slices mostly share. ts_hi 0: none. */
    uint64_t ts_hi, ts_txt;
    unsigned ts_n;
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
    /* One per stream, and per thread for a per-thread default stream; a
     * lane past 0 holds slices that would overlap others without nesting. */
    struct gpu_track { uint64_t pid, stream, thread, tid; uint32_t lane; } *tracks;
    uint32_t ntracks, tracks_cap;
    /* A .sprof file's GPU intervals, written at its end (trace_gpu_flush). */
    struct gpu_slice { uint64_t pid, stream, thread, start, dur, launch, cpu_tid; uint32_t site, seq; } *gs;
    uint32_t ngs, gs_cap;
    uint64_t *gpu_pids_used; /* by earlier files: pid = device only once */
    uint32_t ngpu_pids_used;
    struct mem_rec { uint64_t t; int64_t bytes; uint32_t dev, seq; } *mem;
    uint32_t nmem, mem_cap;
};

/* Made-up ids of tracks that are not kernel threads. Kernel pids and tids
 * stay below 2^22 (PID_MAX_LIMIT), and 0x40000000 + slot is taken. */
#define GPU_PID_BASE 0x10000000u
#define STEPS_TID SP_STEPS_TID /* chrome.h: its reader knows the track by it */
#define MAX_TRACKS 4096u /* streams per file; more share one "other" track */

static int in_window(const sp_trace *t, uint64_t start, uint64_t end) {
    return start >= t->win_lo && end <= t->win_hi;
}

static int kept(const sp_trace *t, uint32_t slot, const sp_event *e) {
    return !t->keep || t->keep(t->keep_ctx, t->rd, slot, e);
}

static void comma(sp_trace *t) {
    if (!t->first) sp_out_write(&t->o, ",\n", 2);
    t->first = 0;
}

static char *take(sp_out *m) { /* the memory of a memory-mode sp_out, NUL-padded */
    static const char zeros[PAD];
    sp_out_write(m, zeros, PAD);
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

/* The cached JSON text of a site (or *tmp for one not cached): site_of. */
static int site_build(sp_trace *t, uint32_t site, site_text *tmp, site_text **out) {
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

/* The hit is checked first, inline: it is the per-event path, and needs no
 * reader call. */
static inline int site_of(sp_trace *t, uint32_t site, site_text *tmp, site_text **out) {
    if (site < t->nsites && t->sites[site].pre) return (void)(*out = &t->sites[site]), 0;
    return site_build(t, site, tmp, out);
}

static char *put(char *p, const void *s, size_t n) {
    memcpy(p, s, n);
    return p + n;
}

/* printf's "%.17g" of v (v > 0 and below 2^53 with 17 significant digits
 * from 10^-5 up: the durations write_dur prints), or 0 for the caller to
 * use snprintf. Byte for byte what glibc prints: the 17 digits are the
 * exact binary value m * 2^-s times 10^k, rounded half to even, in 128-bit
 * integers; then %g's choice of plain or exponent form, trailing zeros cut. */
typedef unsigned __int128 sp_u128;

static int put_g17(char *p, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned be = (unsigned)(bits >> 52); /* sign and biased exponent */
    if (be == 0 || be > 1075) return 0;   /* zero, subnormal, negative, >= 2^53 */
    uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    unsigned s = 1075 - be;               /* v = m / 2^s */
    int b = (int)be - 1023;               /* 2^b <= v < 2^(b+1) */
    /* e10 = floor(b * log10(2)) <= floor(log10(v)) <= e10 + 1 */
    int e10 = b >= 0 ? (b * 1233) >> 12 : -(((-b) * 1233 + 4095) >> 12);
    int k = 16 - e10; /* v * 10^k is in [10^16, 10^18) */
    if (k < 0 || k > 21 || s > 127) return 0;
    sp_u128 x = (sp_u128)m * pow10_u64[k > 19 ? 19 : k];
    if (k > 19) x *= pow10_u64[k - 19];
    uint64_t i = (uint64_t)(x >> s);
    sp_u128 frac = s ? x & (((sp_u128)1 << s) - 1) : 0;
    int up, e = 16 - k;
    if (i >= pow10_u64[17]) { /* 18 digits: one more to drop */
        unsigned r = (unsigned)(i % 10);
        i /= 10;
        e++;
        up = r > 5 || (r == 5 && (frac != 0 || (i & 1)));
    } else {
        sp_u128 half = s ? (sp_u128)1 << (s - 1) : 0;
        up = s && (frac > half || (frac == half && (i & 1)));
    }
    if (up && ++i == pow10_u64[17]) {
        i = pow10_u64[16];
        e++;
    }
    char d[17];
    put8(d + 9, (uint32_t)(i % 100000000));
    i /= 100000000;
    put8(d + 1, (uint32_t)(i % 100000000));
    d[0] = (char)('0' + i / 100000000);
    int nd = 17;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    char *q = p;
    if (e < -4 || e >= 17) {
        *q++ = d[0];
        if (nd > 1) {
            *q++ = '.';
            memcpy(q, d + 1, (size_t)nd - 1);
            q += nd - 1;
        }
        *q++ = 'e';
        *q++ = e < 0 ? '-' : '+';
        unsigned ae = (unsigned)(e < 0 ? -e : e);
        if (ae >= 100) *q++ = (char)('0' + ae / 100);
        memcpy(q, digits2 + ae % 100 * 2, 2);
        q += 2;
    } else if (e >= 0) {
        memcpy(q, d, (size_t)e + 1);
        q += e + 1;
        if (nd > e + 1) {
            *q++ = '.';
            memcpy(q, d + e + 1, (size_t)(nd - e - 1));
            q += nd - e - 1;
        }
    } else {
        *q++ = '0';
        *q++ = '.';
        for (int z = -e - 1; z > 0; z--) *q++ = '0';
        memcpy(q, d, (size_t)nd);
        q += nd;
    }
    return (int)(q - p);
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
        if (s + viewer_us(dur) != e) {
            int n = put_g17(p, e - s);
            return p + (n ? n : snprintf(p, 32, "%.17g", e - s));
        }
    }
    return put_us(p, dur);
}

static void write_dur(sp_out *o, uint64_t ts, uint64_t dur, int exact_end) {
    char *p = sp_out_reserve(o, 32);
    if (p) o->n += (size_t)(put_dur(p, ts, dur, exact_end) - p);
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

/* n bytes from s, moved in whole PAD-byte blocks: s has PAD readable bytes
 * past n and the buffer PAD writable ones (what lands past n is garbage that
 * the next write covers, or past o->n, never written out). */
static char *copy_pad(char *p, const char *s, size_t n) {
    for (size_t i = 0; i < n; i += PAD) memcpy(p + i, s + i, PAD);
    return p + n;
}

static void make_pid_tid(pid_tid *pt, uint64_t pid, uint64_t tid) {
    char *p = pt->s;
    p = put(p, ",\"pid\":", 7);
    p = put_u64(p, pid);
    p = put(p, ",\"tid\":", 7);
    p = put_u64(p, tid);
    pt->n = (unsigned char)(p - pt->s);
}

/* The pid and tid text of slot's slices (tid: thread_tid(t, slot)). */
static const pid_tid *slot_pid_tid(sp_trace *t, uint32_t slot, uint64_t tid, pid_tid *tmp) {
    if (grow_slots(&t->pts, &t->npts, slot, sizeof *t->pts) != 0) {
        make_pid_tid(tmp, t->pid, tid);
        return tmp;
    }
    pid_tid *pt = &t->pts[slot];
    if (!pt->n) make_pid_tid(pt, t->pid, tid);
    return pt;
}

/* A slice's ts (put_us), the digits above its last 8 reused from the
 * previous slice when they are the same. */
static char *put_ts(sp_trace *t, char *p, uint64_t ns) {
    if (ns < 100000000 || ns >= 10000000000000000ull) return put_us(p, ns);
    uint64_t hi = ns / 100000000;
    if (hi != t->ts_hi) {
        unsigned n = ndigits(hi);
        t->ts_hi = hi;
        t->ts_txt = digits8((uint32_t)hi) >> (8 * (8 - n));
        t->ts_n = n;
    }
    store8(p, t->ts_txt);
    return put_us_low(p + t->ts_n, (uint32_t)(ns - hi * 100000000), 0);
}

/* The category and what follows it up to ts, by slice kind. A .sprof GPU
 * scope's GPU interval is a "gpu_user_annotation", Kineto's name for the GPU
 * span of a user annotation. Its CPU side and the arrow between them
 * (Kineto's "ac2g", by name) share that category: DevTools binds an arrow's
 * ends to slices of the arrow's own category (Perfetto ignores it). */
enum { CAT_SCOPE, CAT_GPU, CAT_GPU_ANNOTATION, CAT_CPU_ANNOTATION };
#define CAT_TAIL "\",\"ph\":\"X\",\"ts\":"
static const struct { const char *s; unsigned n; } cats[] = {
    {"scope" CAT_TAIL, sizeof "scope" CAT_TAIL - 1},
    {"gpu" CAT_TAIL, sizeof "gpu" CAT_TAIL - 1},
    {"gpu_user_annotation" CAT_TAIL, sizeof "gpu_user_annotation" CAT_TAIL - 1},
    {"gpu_user_annotation" CAT_TAIL, sizeof "gpu_user_annotation" CAT_TAIL - 1},
};

/* A complete event up to the inside of its "args" object (left open), then
 * "}}" if `close`. Category cats[gpu] (CAT_*). Written straight
 * into the buffer after one reservation: this is the per-slice path, and a
 * write per field was most of its cost. */
static void slice(sp_trace *t, const site_text *st, int gpu, uint64_t ts, uint64_t dur,
                  const pid_tid *pt, unsigned pad, int close) {
    char *p = sp_out_reserve(&t->o, st->npre + st->npost + SLICE_MAX_FIXED), *p0 = p;
    if (!p) return;
    memcpy(p, ",\n", 2);
    p += t->first ? 0 : 2;
    t->first = 0;
    p = copy_pad(p, st->pre, st->npre);
    memcpy(p, cats[gpu].s, cats[gpu].n);
    p += cats[gpu].n;
    p = put_ts(t, p, ts);
    p = put(p, ",\"dur\":", 7);
    p = put_dur(p, ts, dur, pad);
    memcpy(p, pt->s, sizeof pt->s);
    p += pt->n;
    p = copy_pad(p, st->post, st->npost);
    memcpy(p, "}}", 2);
    p += close ? 2 : 0;
    t->o.n += (size_t)(p - p0);
}

/* One end of a flow arrow: ph "s" on the launching CPU slice, "f" on the GPU
 * slice ("bp":"e": bound to the slice it lands on). Both carry the ts, pid,
 * tid and category of their slice, which is how viewers bind them. */
static void flow(sp_trace *t, const char *ph, uint64_t id, uint64_t ts, uint64_t pid, uint64_t tid) {
    comma(t);
    /* A .sprof file's arrows are Kineto's "ac2g" (CPU to GPU), in the
     * category of the slices they join (see cats[]). */
    sp_out_str(&t->o, t->chrome ? "{\"name\":\"launch\",\"cat\":\"gpu\",\"ph\":\""
                                : "{\"name\":\"ac2g\",\"cat\":\"gpu_user_annotation\",\"ph\":\"");
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

/* Is `pid` a process of an earlier file, or of this file's CPU side? */
static int pid_taken(const sp_trace *t, uint64_t pid) {
    for (uint32_t i = 0; i < t->nfiles; i++)
        if (t->pids[i] == pid) return 1;
    for (uint32_t i = 0; i < t->ngpu_pids_used; i++)
        if (t->gpu_pids_used[i] == pid) return 1;
    return 0;
}

/* The process of GPU `dev` of the current file: pid = the device index, as
 * Kineto lays GPUs out, unless a process already has that pid (an earlier
 * file's GPU, or a program running as pid 1 in a container): then made up. */
static uint64_t gpu_pid(sp_trace *t, uint32_t dev) {
    if (dev >= SP_MAX_DEVICES) dev = SP_MAX_DEVICES - 1;
    /* (A Chrome input's pid is known only at its end: its GPUs made up.) */
    if (!t->gpu_pid[dev])
        t->gpu_pid[dev] = t->chrome || pid_taken(t, dev) ? GPU_PID_BASE + t->next_gpu_pid++ : dev;
    return t->gpu_pid[dev];
}

/* The track (tid in the GPU process) of a stream (of one thread, for a
 * per-thread default stream; one lane of it): 1, 2, ... in order of first
 * sight; past MAX_TRACKS, one shared track (tid 0). */
static int gpu_track(sp_trace *t, uint64_t pid, uint64_t stream, uint64_t thread, uint32_t lane,
                     uint64_t *tid) {
    uint32_t per_pid = 0;
    for (uint32_t i = 0; i < t->ntracks; i++) {
        if (t->tracks[i].pid != pid) continue;
        if (t->tracks[i].stream == stream && t->tracks[i].thread == thread && t->tracks[i].lane == lane)
            return (void)(*tid = t->tracks[i].tid), 0;
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
    t->tracks[t->ntracks++] = (struct gpu_track){pid, stream, thread, per_pid + 1, lane};
    *tid = per_pid + 1;
    return 0;
}

/* The trace-wide id of a Chrome file's arrow (its correlation). */
static uint64_t flow_id_of(sp_trace *t, uint64_t c) {
    uint64_t id = t->flow_base + c;
    if (id > t->flow_id) t->flow_id = id; /* the next file's ids start above */
    return id;
}

/* GPU intervals go to their own tracks at once (they need no ancestors), with
 * a flow arrow from the CPU scope that enqueued them; memory records are kept
 * for the counter tracks written at the end of the file. */
static int trace_gpu_mem(sp_trace *t, const sp_thread *th, const sp_event *ev, uint32_t n) {
    const sp_gpu_info *gi = sp_reader_gpu_info(t->rd);
    for (uint32_t k = 0; k < n; k++) {
        const sp_event *e = &ev[k];
        if (e->kind == SP_MEM) {
            if (e->start < t->win_lo || e->start > t->win_hi || !kept(t, th->slot, e)) continue;
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
        if (e->gpu_ns < 0 || !gi || !gi[k].timed || !in_window(t, e->start, e->end) || !kept(t, th->slot, e))
            continue;
        uint64_t pid = gpu_pid(t, gi[k].device), tid;
        if (!t->chrome) { /* laid out at the end of the file */
            if (t->ngs == t->gs_cap) {
                uint32_t c = t->gs_cap ? t->gs_cap * 2 : 256;
                struct gpu_slice *v = c > t->gs_cap ? realloc(t->gs, (size_t)c * sizeof *v) : NULL;
                if (!v) return -1;
                t->gs = v;
                t->gs_cap = c;
            }
            uint64_t cpu_tid = thread_tid(t, th->slot);
            /* The per-thread default stream (handle 2 in CUDA and HIP) is
             * one stream per thread. */
            t->gs[t->ngs] = (struct gpu_slice){pid, gi[k].stream, gi[k].stream == 2 ? cpu_tid : 0,
                                               e->gpu_start, (uint64_t)e->gpu_ns, e->start, cpu_tid,
                                               e->site, t->ngs};
            t->ngs++;
            continue;
        }
        site_text tmp = {NULL, NULL, 0, 0}, *st;
        if (gpu_track(t, pid, gi[k].stream, 0, 0, &tid) != 0 || site_of(t, e->site, &tmp, &st) != 0)
            return -1;
        pid_tid pt;
        make_pid_tid(&pt, pid, tid);
        if (t->chrome) {
            /* A device event of the JSON: its launch is another event (a
             * runtime call), whose arrow start trace_subtree writes. */
            uint64_t c = sp_chrome_flow(t->rd, k);
            slice(t, st, CAT_GPU, e->gpu_start, (uint64_t)e->gpu_ns, &pt, 0, 1);
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
        if (ev[k].kind == SP_SCOPE && in_window(t, ev[k].start, ev[k].end) && kept(t, slot, &ev[k]))
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
    pid_tid pt_tmp;
    const pid_tid *pt = m ? slot_pid_tid(t, slot, tid, &pt_tmp) : NULL;
    for (uint32_t i = 0; i < m; i++) {
        const sp_event *e = &ev[t->ord[i].k];
        site_text tmp = {NULL, NULL, 0, 0}, *st = &tmp;
        if (site_of(t, e->site, &tmp, &st) != 0) return -1;
        if (t->chrome) {
            /* An op's GPU time is attributed, not an interval of its own:
             * no gpu_ts. A launch is in "gpu", where its arrow binds. */
            uint64_t c = fl ? fl[t->ord[i].k] : 0;
            slice(t, st, c != 0 ? CAT_GPU : CAT_SCOPE, e->start, e->end - e->start, pt, t->pad[t->ord[i].k], 1);
            if (c) flow(t, "s", flow_id_of(t, c), e->start, t->pid, tid);
            if (st == &tmp) free(tmp.pre), free(tmp.post);
            continue;
        }
        /* A timed GPU scope's CPU side is in category "gpu", as its GPU
         * interval and the flow arrow between them: a flow binds to the
         * slice of its own category at its ts, so a parent scope starting
         * at the same nanosecond cannot take the arrow. */
        int more = e->gpu_ns >= 0 || e->shape;
        slice(t, st, e->gpu_ns >= 0 ? CAT_CPU_ANNOTATION : CAT_SCOPE, e->start, e->end - e->start, pt,
              t->pad[t->ord[i].k], !more);
        if (e->gpu_ns >= 0) {
            sp_out_str(&t->o, ",\"gpu_ts\":");
            sp_out_us(&t->o, e->gpu_start);
            sp_out_str(&t->o, ",\"gpu_dur\":");
            sp_out_us(&t->o, (uint64_t)e->gpu_ns);
        }
        /* Input shapes as Kineto writes them, whose text is JSON already:
         * `table --group-by shape` of the trace reads them back. */
        if (e->shape) sp_out_str(&t->o, ",\"Input Dims\":"), sp_out_str(&t->o, e->shape);
        if (more) sp_out_str(&t->o, "}}");
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
    char name[400];
    int len = snprintf(name, sizeof name, "%s (pid %llu", h->prog, (unsigned long long)h->pid);
    if (h->rank != 0xFFFFFFFFu && len > 0 && (size_t)len < sizeof name)
        len += snprintf(name + len, sizeof name - (size_t)len, ", rank %u", h->rank);
    if (h->host[0] && len > 0 && (size_t)len < sizeof name)
        len += snprintf(name + len, sizeof name - (size_t)len, ", host %s", h->host);
    if (len > 0 && (size_t)len < sizeof name) snprintf(name + len, sizeof name - (size_t)len, ")");
    metadata(t, "process_name", 0, name);
    /* Ranks in rank order (viewers sort by pid otherwise), files without a
     * rank after them in the order given; GPUs after all (trace_finish). */
    sort_index(t, "process_sort_index", t->pid, 0,
               h->rank != 0xFFFFFFFFu ? (int64_t)h->rank : 500000 + (int64_t)t->nfiles);
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
 * would cut across the scopes of the main thread and break its nesting.
 * Category "step" on tid STEPS_TID: the JSON reader takes them back as steps
 * (sp_track_steps), not as scopes that would be all self time. The steps of
 * a JSON that holds several processes' (a trace of several files, read
 * back) overlap: each goes on the first of SP_STEPS_LANES tracks (tids
 * STEPS_TID, STEPS_TID - 1, ...) whose steps all ended before it began, so
 * that no track's slices cross (past that many at once, on the last). */
static void trace_steps(sp_trace *t, const sp_reader *r) {
    const sp_step *s;
    uint32_t n = sp_track_steps(r, &s), lanes = 0;
    uint64_t lane_end[SP_STEPS_LANES];
    for (uint32_t i = 0; i < n; i++) {
        /* Filters see a step as a scope of no site on no thread (filter.h). */
        sp_event se = {.start = s[i].start, .end = s[i].end, .site = UINT32_MAX, .kind = SP_SCOPE, .gpu_ns = -1};
        if (!in_window(t, s[i].start, s[i].end) || !kept(t, SP_STEPS_SLOT, &se)) continue;
        uint32_t k = 0;
        while (k < lanes && lane_end[k] > s[i].start && k + 1 < SP_STEPS_LANES) k++;
        if (k == lanes) lane_end[lanes++] = 0;
        if (s[i].end > lane_end[k]) lane_end[k] = s[i].end;
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
        sp_out_u64(&t->o, STEPS_TID - k);
        sp_out_str(&t->o, ",\"args\":{\"step\":");
        sp_out_u64(&t->o, s[i].number);
        sp_out_str(&t->o, "}}");
    }
    for (uint32_t k = 0; k < lanes; k++) {
        char name[16] = "Steps";
        if (k) snprintf(name, sizeof name, "Steps %u", k + 1);
        metadata(t, "thread_name", STEPS_TID - k, name);
        sort_index(t, "thread_sort_index", t->pid, STEPS_TID - k, -1 - (int64_t)k); /* above the threads */
    }
}

static int cmp_gpu_slice(const void *a, const void *b) {
    const struct gpu_slice *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* the parent first */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A .sprof file's GPU intervals, by stream in start order, each with a flow
 * arrow ("ac2g") from the CPU scope that launched it and the arrow's id as
 * its "correlation". Two threads sharing a stream can give intervals that
 * overlap without nesting, which viewers cannot stack on one track: such an
 * interval goes to the stream's next lane (another track, "stream N (2)"),
 * the first where it nests in or follows what is open there. */
static int trace_gpu_flush(sp_trace *t) {
    struct lane { uint64_t *end; uint32_t n, cap; } *lanes = NULL;
    uint32_t nlanes = 0, used = 0;
    int rc = 0;
    if (t->ngs) qsort(t->gs, t->ngs, sizeof *t->gs, cmp_gpu_slice);
    for (uint32_t i = 0; i < t->ngs && !rc; i++) {
        const struct gpu_slice *g = &t->gs[i];
        if (i == 0 || g->pid != g[-1].pid || g->stream != g[-1].stream || g->thread != g[-1].thread)
            for (uint32_t l = 0; l < used; l++) lanes[l].n = 0; /* a new stream */
        uint64_t end = g->start + g->dur;
        uint32_t l = 0;
        for (;; l++) {
            if (l == nlanes) {
                struct lane *v = realloc(lanes, (size_t)(nlanes + 1) * sizeof *v);
                if (!v) { rc = -1; break; }
                lanes = v;
                lanes[nlanes++] = (struct lane){NULL, 0, 0};
            }
            struct lane *ln = &lanes[l];
            while (ln->n && ln->end[ln->n - 1] <= g->start) ln->n--; /* ended before it */
            if (ln->n && ln->end[ln->n - 1] < end) continue;          /* would cross the open one */
            if (ln->n == ln->cap) {
                uint32_t c = ln->cap ? ln->cap * 2 : 8;
                uint64_t *v = realloc(ln->end, (size_t)c * sizeof *v);
                if (!v) { rc = -1; break; }
                ln->end = v;
                ln->cap = c;
            }
            ln->end[ln->n++] = end;
            break;
        }
        if (rc) break;
        if (l + 1 > used) used = l + 1;
        uint64_t tid;
        site_text tmp = {NULL, NULL, 0, 0}, *st;
        if (gpu_track(t, g->pid, g->stream, g->thread, l, &tid) != 0 || site_of(t, g->site, &tmp, &st) != 0) {
            rc = -1;
            break;
        }
        pid_tid pt;
        make_pid_tid(&pt, g->pid, tid);
        uint64_t id = ++t->flow_id;
        slice(t, st, CAT_GPU_ANNOTATION, g->start, g->dur, &pt, 0, 0);
        sp_out_str(&t->o, ",\"launch_ts\":");
        sp_out_us(&t->o, g->launch);
        sp_out_str(&t->o, ",\"correlation\":");
        sp_out_u64(&t->o, id);
        sp_out_str(&t->o, "}}");
        flow(t, "s", id, g->launch, t->pid, g->cpu_tid);
        flow(t, "f", id, g->start, g->pid, tid);
        if (st == &tmp) {
            free(tmp.pre);
            free(tmp.post);
        }
    }
    for (uint32_t l = 0; l < nlanes; l++) free(lanes[l].end);
    free(lanes);
    t->ngs = 0;
    return rc || t->o.err ? -1 : 0;
}

static int trace_finish(void *ctx, const sp_reader *r) {
    sp_trace *t = ctx;
    int rc = sp_tree_flush_all(&t->tree);
    if (trace_gpu_flush(t) != 0) rc = -1;
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
    trace_steps(t, r); /* a Chrome input's: those of a Steps track (PyTorch's are slices) */
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
        sort_index(t, "process_sort_index", t->gpu_pid[d], 0, 1000000 + (int64_t)t->nfiles * 4096 + d);
        uint64_t *v = realloc(t->gpu_pids_used, (t->ngpu_pids_used + 1) * sizeof *v);
        if (v) t->gpu_pids_used = v, t->gpu_pids_used[t->ngpu_pids_used++] = t->gpu_pid[d];
    }
    for (uint32_t i = 0; i < t->ntracks; i++) {
        /* A Chrome input's streams keep their numbers; a .sprof file's are
         * handles (pointers): the track's own small number names them. */
        const struct gpu_track *k = &t->tracks[i];
        char name[96], lane[16] = "";
        uint64_t n = k->tid; /* a lane is named after its stream's first track */
        if (k->lane) {
            snprintf(lane, sizeof lane, " (%u)", k->lane + 1);
            for (uint32_t j = 0; j < t->ntracks; j++)
                if (t->tracks[j].pid == k->pid && t->tracks[j].stream == k->stream &&
                    t->tracks[j].thread == k->thread && t->tracks[j].lane == 0)
                    n = t->tracks[j].tid;
        }
        if (t->chrome)
            snprintf(name, sizeof name, "stream %llu", (unsigned long long)k->stream);
        else if (k->stream == 0)
            snprintf(name, sizeof name, "stream %llu (default)%s", (unsigned long long)n, lane);
        else if (k->thread)
            snprintf(name, sizeof name, "stream %llu (per-thread default, tid %llu)%s",
                     (unsigned long long)n, (unsigned long long)k->thread, lane);
        else
            snprintf(name, sizeof name, "stream %llu%s", (unsigned long long)n, lane);
        metadata_pid(t, "thread_name", k->pid, k->tid, name);
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
    free(t->pts);
    t->pts = NULL;
    t->npts = 0;
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

void sp_trace_set_filter(sp_trace *t, sp_keep_fn keep, void *ctx) {
    t->keep = keep;
    t->keep_ctx = ctx;
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

uint64_t sp_trace_bytes(void *t) { return sp_out_size(&((sp_trace *)t)->o); }

int sp_trace_close(sp_trace *t) {
    sp_out_str(&t->o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING "\"}}\n");
    int rc = sp_out_flush(&t->o);
    sp_out_free(&t->o);
    sp_tree_free(&t->tree);
    free(t->pids);
    free(t->ord);
    free(t->tracks);
    free(t->gs);
    free(t->gpu_pids_used);
    free(t->ends);
    free(t->mem);
    free(t->pad);
    free(t);
    return rc;
}
