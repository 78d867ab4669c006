/* chrome.c -- streaming reader of Chrome Trace Event JSON. See chrome.h and
 * docs/CHROME.md.
 *
 * Shape of the code:
 *   input      a fixed read buffer over a file descriptor (or a memory block)
 *   tokenizer  strings, numbers, literals, skipping of unwanted values: all
 *              iterative, so nesting costs a counter, not stack frames
 *   events     one trace event object at a time, its fields into scratch
 *              buffers reused for the next event
 *   threads    per (pid, tid) a stack of open ranges, closed (delivered to
 *              the callbacks) the way PyTorch nests events: an event that
 *              starts at or after the top's end, or ends after it, closes it
 *   GPU        device events are credited to the op around the runtime call
 *              that shares their "correlation" (else to the op whose
 *              "External id" they carry)
 *   passes     a re-readable input is read twice: pass 1 collects the device
 *              time per correlation and notes the threads that go back in
 *              time (Kineto writes a thread's ops, then its runtime calls,
 *              then its memory records); pass 2 delivers, buffering and
 *              sorting those threads from their first event. Pass 1 skims
 *              each event for the few fields it uses where it lies in the
 *              buffer, and leaves to the full parser what it cannot. */
#define SCOPEPROF_AGGREGATION
#include "chrome.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

#define BUF_SIZE (1u << 20)
#define OUT_BATCH 512u

/* ---- Growable byte strings (bounded) -------------------------------------- */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_put(sbuf *s, const char *d, size_t n) {
    if (s->n + n + 1 > s->cap) {
        size_t c = s->cap ? s->cap : 64;
        while (c < s->n + n + 1) c *= 2;
        char *p = realloc(s->p, c);
        if (!p) return -1;
        s->p = p;
        s->cap = c;
    }
    memcpy(s->p + s->n, d, n);
    s->n += n;
    s->p[s->n] = 0;
    return 0;
}
static const char *sb_str(sbuf *s) { return s->p && s->n ? s->p : ""; }

/* ---- Hash maps: string -> index, u64 -> i64 ------------------------------- */
static uint64_t hash_bytes(const char *s, size_t n) { return sp_hash(0, s, n); }

typedef struct strmap { /* keys are owned by the map */
    char **keys;
    uint32_t *vals;
    uint32_t cap, n;
} strmap;

static int sm_find(const strmap *m, const char *k, uint32_t *val) {
    if (!m->cap) return 0;
    for (uint32_t j = (uint32_t)hash_bytes(k, strlen(k)) & (m->cap - 1); m->keys[j];
         j = (j + 1) & (m->cap - 1))
        if (strcmp(m->keys[j], k) == 0) return *val = m->vals[j], 1;
    return 0;
}

static int sm_add(strmap *m, const char *k, uint32_t val) { /* k not present */
    if ((m->n + 1) * 2 > m->cap) {
        strmap g = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};
        g.keys = calloc(g.cap, sizeof *g.keys);
        g.vals = calloc(g.cap, sizeof *g.vals);
        if (!g.keys || !g.vals) return free(g.keys), free(g.vals), -1;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                uint32_t j = (uint32_t)hash_bytes(m->keys[i], strlen(m->keys[i])) & (g.cap - 1);
                while (g.keys[j]) j = (j + 1) & (g.cap - 1);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
            }
        g.n = m->n;
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    size_t l = strlen(k);
    char *d = malloc(l + 1);
    if (!d) return -1;
    memcpy(d, k, l + 1);
    uint32_t j = (uint32_t)hash_bytes(k, l) & (m->cap - 1);
    while (m->keys[j]) j = (j + 1) & (m->cap - 1);
    m->keys[j] = d;
    m->vals[j] = val;
    m->n++;
    return 0;
}

static void sm_free(strmap *m) {
    for (uint32_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* What pass 1 learns of an External id or a correlation: the device time
 * it carries, the device events' External id, who carries it (LINK_*), and
 * the process of the runtime calls that carry it (pid_key: a hash of their
 * pid; LINK_MANY when two processes do). */
enum { LINK_DEVICE = 1, LINK_LAUNCH = 2, LINK_MANY = 4 };
typedef struct dlink {
    int64_t ns; /* -1 once credited */
    uint64_t ext;
    uint64_t pid;
    uint32_t bits;
} dlink;

typedef struct lmap { /* u64 -> dlink; key 0 is never stored */
    uint64_t *keys;
    dlink *vals;
    uint32_t cap, n;
} lmap;

static dlink *im_slot(lmap *m, uint64_t k, int create) {
    if (create && (m->n + 1) * 2 > m->cap) {
        lmap g = {NULL, NULL, m->cap ? m->cap * 2 : 256, 0};
        g.keys = calloc(g.cap, sizeof *g.keys);
        g.vals = calloc(g.cap, sizeof *g.vals);
        if (!g.keys || !g.vals) return free(g.keys), free(g.vals), NULL;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->keys[i]) *im_slot(&g, m->keys[i], 1) = m->vals[i];
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    if (!m->cap) return NULL;
    uint32_t j = (uint32_t)(k * 0x9E3779B97F4A7C15ull >> 32) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == k) return &m->vals[j];
    if (!create) return NULL;
    m->keys[j] = k;
    m->n++;
    return &m->vals[j];
}

/* ---- Reader state ------------------------------------------------------------ */
typedef struct range { /* an open or buffered range, or a buffered [memory] record */
    uint64_t start, end;
    uint64_t ext;      /* "External id" (0: none) */
    uint64_t flow;     /* a runtime call that launched a device event: the
                          "correlation" they share (0: none), sp_chrome_flow */
    int64_t gpu;       /* GPU time credited to it: its launches' device
                          events, its closed children's GPU totals */
    int64_t bytes;     /* SP_MEM */
    uint64_t order;    /* arrival, for a stable sort */
    uint32_t site, device;
    uint8_t kind;      /* SP_SCOPE or SP_MEM */
    uint8_t open;      /* a B without its E yet */
    uint8_t takes_gpu; /* a CPU op that owns kernels (not a runtime call) */
} range;

typedef struct rvec {
    range *v;
    uint32_t n, cap;
} rvec;

static int rv_push(rvec *s, const range *e) {
    if (s->n == s->cap) {
        uint32_t c = s->cap ? s->cap * 2 : 16;
        range *v = realloc(s->v, (size_t)c * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = c;
    }
    s->v[s->n++] = *e;
    return 0;
}

/* The last key of a thread's ranges and records in PyTorch's order (start,
 * ranges before records, longer first), to notice one that comes back. */
typedef struct order {
    uint64_t start, end;
    uint8_t mem, seen, late; /* late: some event came before the last key */
} order;

typedef struct cthread {
    sp_thread t;
    rvec stack;  /* open ranges, outermost first */
    rvec buf;    /* sorted threads: every range and record */
    rvec bopen;  /* sorted threads: B events waiting for their E */
    order ord;   /* streamed threads: to notice out-of-order arrival */
    int sorting; /* buffered, sorted and replayed at the end */
    int emitted; /* something of it was delivered */
} cthread;

typedef struct csite {
    sp_site s;
    char *shape;
} csite;

typedef struct cj {
    const sp_reader_vtbl *vtbl; /* first: see sp_chrome_vtbl */
    /* input */
    int fd;
    const unsigned char *mem;
    unsigned char *buf;
    size_t pos, end; /* valid bytes buf[pos, end) */
    uint64_t base;   /* input offset of buf[0] */
    int eof;
    const char *errctx; /* what was being read, for truncation messages */
    sp_result *res;
    const sp_callbacks *cb;
    int pass; /* 1: collecting kernel time only; 2: delivering */
    int seekable;
    /* tables */
    sp_header hdr;
    csite *sites;
    uint32_t nsites, sites_cap;
    strmap site_ids; /* name \x1f shape -> site index */
    cthread *threads;
    uint32_t nthreads, threads_cap;
    strmap thread_ids; /* pid \x1f tid -> slot */
    strmap late_ids;   /* pass 1: pid \x1f tid -> index in late */
    order *late;       /* pass 1: each thread's order; pass 2 sorts those late */
    uint32_t nlate, late_cap;
    int warned_late;   /* the one-pass fallback came after delivery: said once */
    int header_sent;   /* pass 2: the header callback was called */
    lmap kernel_ns;    /* External id -> ns of device events without a launch (pass 1) */
    lmap corr;         /* correlation -> device ns, device ext, launching pid, LINK_* (pass 1) */
    lmap ext_pid;      /* External id of CPU ops -> their pid (.pid; LINK_MANY: several) (pass 1) */
    /* the event being read */
    sbuf name, ph, cat, pid, tid, shape, argname, key;
    int has_ts, has_dur, has_shape, has_bytes, dev_type, dev_id;
    int own_gpu; /* args of `scopeprof trace`'s GPU scope slices: 1 "gpu_dur"
                    (its CPU side), 2 "launch_ts" (its GPU interval) */
    uint64_t ts, dur, ext, correlation;
    int64_t bytes;
    uint64_t order;
    /* output batch: events of one thread */
    sp_event out[OUT_BATCH];
    sp_gpu_info out_gpu[OUT_BATCH]; /* parallel to out: sp_reader_gpu_info */
    uint64_t out_flow[OUT_BATCH];   /* parallel to out: sp_chrome_flow */
    uint32_t nout, out_slot;
    char *devname[SP_MAX_DEVICES]; /* Kineto "deviceProperties" names, by id */
    /* ProfilerStep#N ranges: all of them (sp_reader_steps, --steps), and
     * those of scopeprof's own Steps track (sp_track_steps). */
    struct steps { sp_step *v; uint32_t n, cap; } steps, track;
    sp_chrome_stats st;
} cj;

/* ---- Errors ---------------------------------------------------------------- */
static uint64_t here(const cj *r) { return r->base + r->pos; }

static int fail(cj *r, int status, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(cj *r, int status, uint64_t off, const char *fmt, ...) {
    if (r->res->status != SP_OK) return -1; /* the first error wins */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->res->msg, sizeof r->res->msg, fmt, ap);
    va_end(ap);
    r->res->status = status;
    r->res->offset = off;
    return -1;
}
#define CORRUPT(...) fail(r, SP_CORRUPT, here(r), __VA_ARGS__)
#define NOMEM() fail(r, SP_STOPPED, here(r), "out of memory")

/* ---- Input ------------------------------------------------------------------- */
/* The next byte without consuming it, -1 at the end of the input. */
static int peekc(cj *r) {
    if (r->pos < r->end) return r->buf[r->pos];
    if (r->eof) return -1;
    r->base += r->end;
    r->pos = r->end = 0;
    for (;;) {
        ssize_t got = read(r->fd, r->buf, BUF_SIZE);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            fail(r, SP_IOERR, here(r), "read error: %s", strerror(errno));
            r->eof = 1;
            return -1;
        }
        if (got == 0) {
            r->eof = 1;
            return -1;
        }
        r->end = (size_t)got;
        return r->buf[0];
    }
}
static void skipc(cj *r) { r->pos++; }

static int truncated(cj *r) {
    if (r->res->status != SP_OK) return -1; /* a read error already told why */
    return fail(r, SP_TRUNCATED, here(r), "JSON cut short in %s", r->errctx);
}

/* Skip white space; the next byte (-1 at the end). */
static int ws(cj *r) {
    for (;;) {
        int c = peekc(r);
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
        skipc(r);
    }
}

static int expect(cj *r, int want, const char *what) {
    int c = ws(r);
    if (c < 0) return truncated(r);
    if (c != want) return CORRUPT("expected %s", what);
    skipc(r);
    return 0;
}

/* ---- Tokens ------------------------------------------------------------------ */
static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int read_u4(cj *r, unsigned *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peekc(r);
        if (c < 0) return truncated(r);
        int h = hexval(c);
        if (h < 0) return CORRUPT("invalid \\u escape (not 4 hex digits)");
        *v = *v << 4 | (unsigned)h;
        skipc(r);
    }
    return 0;
}

static int put_utf8(cj *r, sbuf *out, unsigned cp) {
    char b[4];
    size_t n;
    if (cp < 0x80) b[0] = (char)cp, n = 1;
    else if (cp < 0x800) b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 63)), n = 2;
    else if (cp < 0x10000)
        b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | (cp >> 6 & 63)),
        b[2] = (char)(0x80 | (cp & 63)), n = 3;
    else
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | (cp >> 12 & 63)),
        b[2] = (char)(0x80 | (cp >> 6 & 63)), b[3] = (char)(0x80 | (cp & 63)), n = 4;
    return sb_put(out, b, n) ? NOMEM() : 0;
}

/* A JSON string at the read position, decoded into out (out == NULL: skip).
 * A NUL, raw or from \u0000, becomes U+FFFD: names are C strings downstream
 * ("a<NUL>b" and "a<NUL>c" would be one row "a"). Every path checks the
 * decoded length against SP_CJ_MAX_STRING as it grows. */
#define TOO_LONG() fail(r, SP_CORRUPT, start, "string longer than %u bytes", SP_CJ_MAX_STRING)
static int read_string(cj *r, sbuf *out) {
    if (out) out->n = 0;
    if (out && out->p) out->p[0] = 0;
    uint64_t start = here(r);
    skipc(r); /* the opening quote */
    size_t len = 0;
    for (;;) {
        /* Copy a run of plain bytes straight from the buffer. */
        size_t i = r->pos;
        while (i < r->end && r->buf[i] != '"' && r->buf[i] != '\\' && r->buf[i] >= 0x20) i++;
        if (i > r->pos) {
            len += i - r->pos;
            if (len > SP_CJ_MAX_STRING) return TOO_LONG();
            if (out && sb_put(out, (const char *)r->buf + r->pos, i - r->pos)) return NOMEM();
            r->pos = i;
        }
        int c = peekc(r);
        if (c < 0) return truncated(r);
        if (c == '"') {
            skipc(r);
            if (out && sb_put(out, "", 0)) return NOMEM();
            return 0;
        }
        if (c < 0x20) { /* strict JSON forbids it; PyTorch 2.0.1 wrote raw newlines in
                           python_function names: taken as it is, and said once */
            char b = (char)c;
            skipc(r);
            r->res->notes |= SP_NOTE_CTRL;
            len += c ? 1 : 3;
            if (len > SP_CJ_MAX_STRING) return TOO_LONG();
            if (!c) {
                if (out && put_utf8(r, out, 0xFFFD)) return -1;
            } else if (out && sb_put(out, &b, 1)) {
                return NOMEM();
            }
            continue;
        }
        if (c != '\\') continue; /* the run stopped at the buffer's end */
        skipc(r);
        c = peekc(r);
        if (c < 0) return truncated(r);
        const char *s = NULL;
        switch (c) {
        case '"': s = "\""; break;
        case '\\': s = "\\"; break;
        case '/': s = "/"; break;
        case 'b': s = "\b"; break;
        case 'f': s = "\f"; break;
        case 'n': s = "\n"; break;
        case 'r': s = "\r"; break;
        case 't': s = "\t"; break;
        case 'u': break;
        default: return CORRUPT("invalid escape '\\%c' in a string", c >= 0x20 && c < 0x7f ? c : '?');
        }
        skipc(r);
        if (s) {
            if (++len > SP_CJ_MAX_STRING) return TOO_LONG();
            if (out && sb_put(out, s, 1)) return NOMEM();
            continue;
        }
        unsigned cp;
        if (read_u4(r, &cp)) return -1;
        if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate wants its low half */
            unsigned lo = 0;
            if (peekc(r) == '\\') {
                skipc(r);
                if (peekc(r) != 'u') return CORRUPT("invalid \\u escape (lone surrogate)");
                skipc(r);
                if (read_u4(r, &lo)) return -1;
            }
            if (lo < 0xDC00 || lo > 0xDFFF) return CORRUPT("invalid \\u escape (lone surrogate)");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            return CORRUPT("invalid \\u escape (lone surrogate)");
        }
        if (cp == 0) cp = 0xFFFD;
        len += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (len > SP_CJ_MAX_STRING) return TOO_LONG();
        if (out && put_utf8(r, out, cp)) return -1;
    }
}
#undef TOO_LONG

/* An object's members, one rule for the objects read member by member:
 * member_key reads the next key into r->key and the ':' after it (0, or -1
 * on an error); after the value, member_end takes the ',' or the closing
 * '}': 0 when another member follows, 1 past the '}', -1 on an error ("in
 * `what`" names the object). */
static int member_key(cj *r) {
    if (ws(r) != '"') return peekc(r) < 0 ? truncated(r) : CORRUPT("expected a string key");
    return read_string(r, &r->key) || expect(r, ':', "':' after a key") ? -1 : 0;
}

static int member_end(cj *r, const char *what) {
    int c = ws(r);
    if (c < 0) return truncated(r);
    skipc(r);
    if (c == '}') return 1;
    if (c != ',') return r->pos--, CORRUPT("expected ',' or '}' in %s", what);
    return 0;
}

/* A number. *ns is the value times 1000, exact for decimal notation (Kineto
 * writes ts in microseconds with three decimals: nanoseconds past 2^53, which
 * a double would round); *ok_ns is 0 when it is negative, fractional below
 * 1 ns or out of range. */
typedef struct num {
    double d;
    uint64_t ns;
    int ok_ns, is_int;
    char text[48];
} num;

static int num_char(int c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static const unsigned char *digits(const unsigned char *p, const unsigned char *e) {
    while (p < e && *p >= '0' && *p <= '9') p++;
    return p;
}

/* Where JSON's number grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?,
 * stops from p (not past e); NULL where p starts no number. */
static const unsigned char *num_end(const unsigned char *p, const unsigned char *e) {
    p += p < e && *p == '-';
    const unsigned char *d = digits(p, e);
    if (d == p) return NULL;
    p = *p == '0' ? p + 1 : d; /* a digit after a leading 0 is left over */
    if (p < e && *p == '.') {
        if ((d = digits(p + 1, e)) == p + 1) return NULL;
        p = d;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        p += p < e && (*p == '+' || *p == '-');
        if ((d = digits(p, e)) == p) return NULL;
        p = d;
    }
    return p;
}

/* The number in v->text (n characters): 0, or 1 when it breaks JSON's
 * grammar, 2 for a leading zero. Then is_int, ns, ok_ns and d; where want
 * is 1 (pass 1's times), d only if it comes free or ns needs it. */
static int num_parse(num *v, size_t n, int want) {
    const unsigned char *t = (const unsigned char *)v->text, *ip = t + (t[0] == '-');
    const unsigned char *end = num_end(t, t + n);
    if (end != t + n) return ip[0] == '0' && ip[1] >= '0' && ip[1] <= '9' ? 2 : 1;
    const unsigned char *q = digits(ip, end), *fp = q < end && *q == '.' ? q + 1 : NULL;
    size_t il = (size_t)(q - ip);
    int has_exp = (fp ? digits(fp, end) : q) < end;
    v->is_int = !fp && !has_exp;
    int exact = !has_exp && il <= 16; /* x * 1000 stays below 2^64 */
    uint64_t x = 0;
    for (size_t i = 0; exact && i < il; i++) x = x * 10 + (uint64_t)(ip[i] - '0');
    /* An integer of up to 15 digits is a double as it is: strtod's value */
    if (v->is_int && il <= 15) v->d = v->text[0] == '-' ? -(double)x : (double)x;
    else if (want == 2 || !exact) v->d = strtod(v->text, NULL);
    v->ok_ns = 0;
    v->ns = 0;
    if (v->text[0] == '-') return 0;
    if (exact) {
        /* integer part * 1000 + three fraction digits, rounded on the fourth */
        uint64_t f = 0;
        int k = 0;
        for (; fp && k < 3 && fp[k] >= '0' && fp[k] <= '9'; k++) f = f * 10 + (uint64_t)(fp[k] - '0');
        int more = fp && k == 3 && fp[3] >= '5' && fp[3] <= '9';
        for (; k < 3; k++) f *= 10;
        v->ns = x * 1000 + f + (uint64_t)more;
        v->ok_ns = 1;
    } else if (isfinite(v->d) && v->d * 1000.0 < 4.0e18) {
        v->ns = (uint64_t)llround(v->d * 1000.0);
        v->ok_ns = 1;
    }
    return 0;
}

static int read_number(cj *r, num *v) {
    size_t n = 0;
    for (int c; num_char(c = peekc(r)); skipc(r)) {
        if (n + 1 >= sizeof v->text) return CORRUPT("number longer than %zu characters", sizeof v->text - 1);
        v->text[n++] = (char)c;
    }
    v->text[n] = 0;
    if (peekc(r) < 0 && r->res->status != SP_OK) return -1;
    int bad = num_parse(v, n, 2);
    if (bad) return CORRUPT(bad == 2 ? "invalid number '%s' (leading zero)" : "invalid number '%s'", v->text);
    return 0;
}

static int read_literal(cj *r) {
    static const char *const lits[] = {"true", "false", "null"};
    int c = peekc(r);
    for (int i = 0; i < 3; i++)
        if (c == lits[i][0]) {
            for (const char *s = lits[i]; *s; s++) {
                int d = peekc(r);
                if (d < 0) return truncated(r);
                if (d != *s) return CORRUPT("invalid literal (expected '%s')", lits[i]);
                skipc(r);
            }
            return 0;
        }
    return CORRUPT("expected a JSON value");
}

/* Skip one value of any type. Iterative: nesting costs a counter, and is
 * limited so that absurd input is an error rather than a long walk. */
static int skip_value(cj *r) {
    /* One bit per level: 1 inside an object (keys expected), 0 in an array. */
    unsigned char kind[SP_CJ_MAX_NEST / 8 + 1];
    uint32_t depth = 0;
    num n;
    for (;;) {
        int c = ws(r);
        if (c < 0) return truncated(r);
        /* a value */
        if (c == '{' || c == '[') {
            if (depth >= SP_CJ_MAX_NEST) return CORRUPT("JSON nested deeper than %u levels", SP_CJ_MAX_NEST);
            if (c == '{') kind[depth / 8] |= (unsigned char)(1u << depth % 8);
            else kind[depth / 8] &= (unsigned char)~(1u << depth % 8);
            depth++;
            skipc(r);
            c = ws(r);
            if (c == (kind[(depth - 1) / 8] >> (depth - 1) % 8 & 1 ? '}' : ']')) {
                skipc(r);
                depth--;
                goto after_value;
            }
            if (kind[(depth - 1) / 8] >> (depth - 1) % 8 & 1) goto key;
            continue;
        }
        if (c == '"') {
            if (read_string(r, NULL)) return -1;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (read_number(r, &n)) return -1;
        } else if (read_literal(r)) {
            return -1;
        }
    after_value:
        for (;;) {
            if (depth == 0) return 0;
            int obj = kind[(depth - 1) / 8] >> (depth - 1) % 8 & 1;
            c = ws(r);
            if (c < 0) return truncated(r);
            if (c == ',') {
                skipc(r);
                if (obj) goto key;
                break; /* next array element */
            }
            if (c == (obj ? '}' : ']')) {
                skipc(r);
                depth--;
                continue;
            }
            return CORRUPT(obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        continue;
    key:
        c = ws(r);
        if (c < 0) return truncated(r);
        if (c != '"') return CORRUPT("expected a string key");
        if (read_string(r, NULL) || expect(r, ':', "':' after a key")) return -1;
    }
}

/* A value rendered as Python prints it (PyTorch shows input shapes as
 * str(list)): "[[32, 64], [64], []]". Objects inside print as "{...}". */
static int render_value(cj *r, sbuf *out) {
    uint32_t depth = 0;
    num n;
    out->n = 0;
    sb_put(out, "", 0);
    for (;;) {
        int c = ws(r);
        if (c < 0) return truncated(r);
        if (c == '[') {
            if (depth >= SP_CJ_MAX_NEST) return CORRUPT("JSON nested deeper than %u levels", SP_CJ_MAX_NEST);
            depth++;
            skipc(r);
            if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, "[", 1);
            if (ws(r) == ']') {
                skipc(r);
                depth--;
                if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, "]", 1);
                goto after;
            }
            continue;
        }
        if (c == '{') {
            if (skip_value(r)) return -1;
            if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, "{...}", 5);
        } else if (c == '"') {
            if (read_string(r, &r->argname)) return -1;
            if (out->n < SP_CJ_MAX_SHAPE) {
                sb_put(out, "'", 1);
                sb_put(out, r->argname.p, r->argname.n);
                sb_put(out, "'", 1);
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (read_number(r, &n)) return -1;
            if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, n.text, strlen(n.text));
        } else {
            const char *lit = c == 't' ? "True" : c == 'f' ? "False" : "None";
            if (read_literal(r)) return -1;
            if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, lit, strlen(lit));
        }
    after:
        for (;;) {
            if (depth == 0) return out->p ? 0 : NOMEM();
            c = ws(r);
            if (c < 0) return truncated(r);
            skipc(r);
            if (c == ',') {
                if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, ", ", 2);
                break;
            }
            if (c != ']') return CORRUPT("expected ',' or ']'");
            depth--;
            if (out->n < SP_CJ_MAX_SHAPE) sb_put(out, "]", 1);
        }
    }
}

/* ---- Tables ------------------------------------------------------------------ */
static int site_of(cj *r, const char *name, const char *shape, uint32_t *id) {
    r->key.n = 0;
    if (sb_put(&r->key, name, strlen(name)) || sb_put(&r->key, "\x1f", 1) ||
        sb_put(&r->key, shape, strlen(shape)))
        return NOMEM();
    uint32_t i;
    if (sm_find(&r->site_ids, r->key.p, &i)) return *id = i + 1, 0;
    if (r->nsites >= SP_MAX_SITES) return CORRUPT("more than %u distinct names", SP_MAX_SITES);
    if (r->nsites == r->sites_cap) {
        uint32_t c = r->sites_cap ? r->sites_cap * 2 : 64;
        csite *v = realloc(r->sites, (size_t)c * sizeof *v);
        if (!v) return NOMEM();
        r->sites = v;
        r->sites_cap = c;
    }
    size_t nl = strlen(name), sl = strlen(shape);
    char *b = malloc(nl + sl + 2); /* name and shape in one block */
    if (!b) return NOMEM();
    memcpy(b, name, nl + 1);
    memcpy(b + nl + 1, shape, sl + 1);
    csite *s = &r->sites[r->nsites];
    memset(s, 0, sizeof *s);
    s->s.name = b;
    s->s.file = "";
    s->s.func = "";
    s->s.id = r->nsites + 1; /* 0 is reserved, as in the native format */
    s->shape = b + nl + 1;
    if (sm_add(&r->site_ids, r->key.p, r->nsites)) return free(b), NOMEM();
    *id = ++r->nsites;
    return 0;
}

/* The event's thread as a key, pid \x1f tid, in r->key. */
static int thread_key(cj *r) {
    r->key.n = 0;
    if (sb_put(&r->key, sb_str(&r->pid), r->pid.n) || sb_put(&r->key, "\x1f", 1) ||
        sb_put(&r->key, sb_str(&r->tid), r->tid.n))
        return NOMEM();
    return 0;
}

/* Whether a range [start, end] (or a record at start: mem) comes before the
 * last one in the order PyTorch nests by: start, then ranges before records
 * at the same start (a record at a range's start is inside it), then the
 * longer range first (the parent). If not, it is the last one now. */
static int goes_back(order *o, uint64_t start, uint64_t end, int mem) {
    if (o->seen && (start != o->start ? start < o->start : mem != o->mem ? o->mem : !mem && end > o->end))
        return o->late = 1;
    *o = (order){start, end, (uint8_t)mem, 1, o->late};
    return 0;
}

/* Pass 1: note the order of the event's thread (pass 2 sorts the threads
 * that ever go back, from their first event). */
static int note_order(cj *r, uint64_t start, uint64_t end, int mem) {
    uint32_t i;
    if (thread_key(r)) return -1;
    if (!sm_find(&r->late_ids, r->key.p, &i)) {
        if (r->nlate >= SP_MAX_THREADS) return 0; /* pass 2 says so */
        if (r->nlate == r->late_cap) {
            uint32_t c = r->late_cap ? r->late_cap * 2 : 8;
            order *v = realloc(r->late, (size_t)c * sizeof *v);
            if (!v) return NOMEM();
            r->late = v;
            r->late_cap = c;
        }
        memset(&r->late[r->nlate], 0, sizeof *r->late);
        if (sm_add(&r->late_ids, r->key.p, r->nlate)) return NOMEM();
        i = r->nlate++;
    }
    goes_back(&r->late[i], start, end, mem);
    return 0;
}

static int thread_of(cj *r, uint32_t *slot) {
    if (thread_key(r)) return -1;
    if (sm_find(&r->thread_ids, r->key.p, slot)) return 0;
    if (r->nthreads >= SP_MAX_THREADS) return CORRUPT("more than %u threads", SP_MAX_THREADS);
    if (r->nthreads == r->threads_cap) {
        uint32_t c = r->threads_cap ? r->threads_cap * 2 : 8;
        cthread *v = realloc(r->threads, (size_t)c * sizeof *v);
        if (!v) return NOMEM();
        r->threads = v;
        r->threads_cap = c;
    }
    cthread *t = &r->threads[r->nthreads];
    memset(t, 0, sizeof *t);
    t->t.index = t->t.slot = r->nthreads;
    t->t.tid = strtoull(sb_str(&r->tid), NULL, 10);
    t->t.name = calloc(1, 1);
    if (!t->t.name || sm_add(&r->thread_ids, r->key.p, r->nthreads)) return free(t->t.name), NOMEM();
    /* Pass 1 saw it go back in time: buffered from its first event, so that
     * nothing of it is delivered before its late events are in place. */
    uint32_t i;
    if (sm_find(&r->late_ids, r->key.p, &i) && r->late[i].late) t->sorting = 1, r->st.sorted_threads++;
    *slot = r->nthreads++;
    return 0;
}

/* ---- Delivery ---------------------------------------------------------------- */
static int flush_out(cj *r) {
    if (!r->nout) return 0;
    uint32_t n = r->nout;
    r->nout = 0;
    r->res->events += n;
    for (uint32_t i = 0; i < n; i++) { /* ns: the units the table sums (hdr.unit_ns 1) */
        r->out[i].t_start = r->out[i].start;
        r->out[i].t_end = r->out[i].end;
    }
    if (r->cb->events &&
        r->cb->events(r->cb->ctx, (const sp_reader *)r, &r->threads[r->out_slot].t, r->out, n))
        return fail(r, SP_STOPPED, here(r), "stopped by the reader's client");
    return 0;
}

/* g: the device event's GPU info, NULL for a CPU range. */
static int emit(cj *r, uint32_t slot, const sp_event *e, const sp_gpu_info *g, uint64_t flow) {
    if (r->nout && (r->out_slot != slot || r->nout == OUT_BATCH) && flush_out(r)) return -1;
    r->out_slot = slot;
    r->threads[slot].emitted = 1;
    r->out_flow[r->nout] = flow;
    if (g) r->out_gpu[r->nout] = *g;
    else memset(&r->out_gpu[r->nout], 0, sizeof *r->out_gpu);
    r->out[r->nout++] = *e;
    return 0;
}

/* Close the top of a thread's stack: deliver it with its depth and GPU time,
 * and pass its GPU total up to its parent (PyTorch: a CPU op's GPU total is
 * its own kernels plus its children's GPU totals; its self GPU time is its own
 * kernels). */
static int pop(cj *r, uint32_t slot) {
    rvec *s = &r->threads[slot].stack;
    range *e = &s->v[s->n - 1];
    int64_t gpu = e->gpu;
    if (e->takes_gpu && e->ext) { /* device events whose launch is not in the trace */
        dlink *k = im_slot(&r->kernel_ns, e->ext, 0), *o = k ? im_slot(&r->ext_pid, e->ext, 0) : NULL;
        if (k && k->ns >= 0 && !(o && (o->bits & LINK_MANY))) { /* one process's id */
            gpu += k->ns;
            k->ns = -1; /* credited once */
        }
    }
    sp_event ev = {e->start, e->end < e->start ? e->start : e->end, e->site, s->n - 1, SP_SCOPE,
                   0, 0, gpu > 0 ? gpu : -1, e->start, 0, 0, NULL};
    s->n--;
    if (s->n) s->v[s->n - 1].gpu += gpu;
    r->st.ranges++;
    return emit(r, slot, &ev, NULL, e->flow);
}

/* PyTorch's nesting rule: the top of the stack cannot be the parent of a range
 * [start, end] if start >= its end or end > its end. For a [memory] record at
 * ts the time interval is closed: it belongs to every range with start <= ts
 * <= end. An open B range stays until its E. */
static int close_before(cj *r, uint32_t slot, uint64_t start, uint64_t end, int mem) {
    rvec *s = &r->threads[slot].stack;
    while (s->n) {
        range *t = &s->v[s->n - 1];
        if (t->open) break;
        if (mem ? t->end >= start : (start < t->end && end <= t->end)) break;
        if (pop(r, slot)) return -1;
    }
    return 0;
}

/* A runtime call with device events (its correlation) enters a thread whose
 * stack holds the ranges around it: their time goes to the op among them
 * whose External id the device events carry, else to the innermost op (the
 * runtime call's parent, as HTA attributes kernels). PyTorch ~1.12-2.1 wrote
 * a device event's correlation as its "External id", a numbering apart from
 * the ops': the op around the launch is then the only sure link. A launch
 * outside every op credits nobody. */
static void credit_launch(cj *r, rvec *s, uint64_t corr) {
    dlink *l = im_slot(&r->corr, corr, 0);
    if (!l || l->ns <= 0) return;
    range *to = NULL;
    for (uint32_t i = s->n; i-- > 0 && l->ext;)
        if (s->v[i].takes_gpu && s->v[i].ext == l->ext) {
            to = &s->v[i];
            break;
        }
    for (uint32_t i = s->n; i-- > 0 && !to;)
        if (s->v[i].takes_gpu) to = &s->v[i];
    if (!to) return;
    to->gpu += l->ns;
    l->ns = -1; /* credited once (cudaGraphLaunch: one correlation, many kernels) */
}

/* A range or memory record enters a streaming thread. */
static int push(cj *r, uint32_t slot, const range *e) {
    if (close_before(r, slot, e->start, e->end, e->kind == SP_MEM)) return -1;
    rvec *s = &r->threads[slot].stack;
    if (e->kind == SP_MEM) {
        /* Inside the innermost open range; outside all of them PyTorch shows a
         * "[memory]" row of its own. */
        sp_event m = {e->start, e->start, 0, s->n ? s->n : 1, SP_MEM, e->device, e->bytes, -1, 0, 0, 0, NULL};
        if (emit(r, slot, &m, NULL, 0)) return -1;
        if (s->n) return 0;
        sp_event row = {e->start, e->start, e->site, 0, SP_SCOPE, 0, 0, -1, e->start, 0, 0, NULL};
        return emit(r, slot, &row, NULL, 0);
    }
    if (s->n >= SP_MAX_DEPTH) return CORRUPT("ranges nested deeper than %u", SP_MAX_DEPTH);
    if (e->flow) credit_launch(r, s, e->flow);
    return rv_push(s, e) ? NOMEM() : 0;
}

/* Out of order in a thread that pass 1 did not see go back (one pass: a
 * pipe): from now on it is buffered and sorted at the end. What is on the
 * stack moves into the buffer (open B ranges wait for their E in bopen);
 * what was delivered stays as it was, which the caller is told once. */
static int start_sorting(cj *r, cthread *t) {
    t->sorting = 1;
    if (t->emitted && !r->warned_late) r->warned_late = 1, r->res->notes |= SP_NOTE_LATE;
    r->st.sorted_threads++;
    for (uint32_t i = 0; i < t->stack.n; i++)
        if (rv_push(t->stack.v[i].open ? &t->bopen : &t->buf, &t->stack.v[i])) return NOMEM();
    t->stack.n = 0;
    return 0;
}

static int cmp_range(const void *a, const void *b) {
    const range *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->kind != y->kind) return x->kind == SP_SCOPE ? -1 : 1; /* ranges first: a record at
                                                                     their start is inside */
    if (x->end != y->end) return x->end > y->end ? -1 : 1;      /* longer first: the parent */
    return x->order < y->order ? -1 : x->order > y->order;
}

/* A thread at the end of the input: close what is open, or sort and replay a
 * buffered thread. */
static int finish_thread(cj *r, uint32_t slot) {
    cthread *t = &r->threads[slot];
    if (t->sorting) {
        r->st.unmatched += t->bopen.n;
        if (t->buf.n) qsort(t->buf.v, t->buf.n, sizeof *t->buf.v, cmp_range);
        for (uint32_t i = 0; i < t->buf.n; i++)
            if (push(r, slot, &t->buf.v[i])) return -1;
    }
    rvec *s = &t->stack;
    while (s->n) {
        if (s->v[s->n - 1].open) { /* B without E: dropped, as chrome://tracing shows it unfinished */
            r->st.unmatched++;
            s->n--;
            continue;
        }
        if (pop(r, slot)) return -1;
    }
    return 0;
}

/* ---- Events ------------------------------------------------------------------ */
static int cat_is(const cj *r, const char *c) {
    return r->cat.n == strlen(c) && strcasecmp(sb_str((sbuf *)&r->cat), c) == 0;
}

/* Device events: the categories PyTorch's deviceTypeFromActivity gives a
 * device (CUDA: kernels, memcpy, memset, cuda_sync, cuda_profiler_range,
 * gpu_user_annotation; MTIA: mtia_ccp_events, mtia_insight), and older
 * Kineto's Kernel, Memcpy, Memset. Each is a row with GPU time and no CPU
 * time, and counts in the Self GPU total but for the annotations. */
static int is_device_event(const cj *r) {
    if (r->own_gpu) return 0; /* gpu_user_annotation as `scopeprof trace` writes a .sprof GPU scope */
    static const char *const cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset",
                                       "cuda_sync", "cuda_profiler_range", "gpu_user_annotation",
                                       "mtia_ccp_events", "mtia_insight"};
    for (size_t i = 0; i < sizeof cats / sizeof *cats; i++)
        if (cat_is(r, cats[i])) return 1;
    return 0;
}

/* Runtime calls launch device events (a correlation they share) but own
 * none. Kineto's names for them, CUDA and HIP alike, and older "Runtime". */
static int is_runtime(const cj *r) {
    static const char *const cats[] = {"cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime",
                                       "xpu_runtime", "xpu_driver", "privateuse1_runtime",
                                       "privateuse1_driver"};
    for (size_t i = 0; i < sizeof cats / sizeof *cats; i++)
        if (cat_is(r, cats[i])) return 1;
    return 0;
}

/* Flow arrows, launch -> device event: Kineto gives a runtime call (say
 * cudaLaunchKernel) and the kernels it enqueued one "correlation" (its ac2g
 * flow events say the same; they are not needed). Pass 1 notes which
 * correlations both sides carry, so that no arrow is left with one end;
 * one-pass reads (pipes) draw none. */
static uint64_t flow_of(cj *r) {
    dlink *b = r->correlation ? im_slot(&r->corr, r->correlation, 0) : NULL;
    return b && b->bits == (LINK_DEVICE | LINK_LAUNCH) ? r->correlation : 0;
}

/* The event's process as a map value (never 0). CUPTI numbers correlations
 * per process, so a correlation links a device event to the runtime call of
 * one process only; a merged trace of several processes may reuse it. */
static uint64_t pid_key(const cj *r) { return hash_bytes(sb_str((sbuf *)&r->pid), r->pid.n) | 1; }

/* Pass 1: who carries a correlation, or an op's External id; a second
 * process makes it ambiguous (LINK_MANY). */
static void note_pid(dlink *b, uint64_t pid) {
    if (b->pid && b->pid != pid) b->bits |= LINK_MANY;
    b->pid = pid;
}

/* Names PyTorch leaves out of key_averages (profiler utility ops). */
static int pytorch_filtered(const char *n) {
    static const char *const names[] = {
        "profiler::_record_function_enter", "profiler::_record_function_enter_new",
        "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version",
        "[OutOfMemory]"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(n, names[i]) == 0) return 1;
    return 0;
}

/* A ProfilerStep#N range, for sp_reader_steps (--steps) or sp_track_steps. */
static int add_step(cj *r, struct steps *s, uint64_t number, uint64_t start, uint64_t end) {
    if (s->n == s->cap) {
        uint32_t c = s->cap ? s->cap * 2 : 16;
        sp_step *v = c > s->cap ? realloc(s->v, (size_t)c * sizeof *v) : NULL;
        if (!v) return NOMEM();
        s->v = v;
        s->cap = c;
    }
    s->v[s->n++] = (sp_step){number, start, end};
    return 0;
}

/* The header's pid (named with `prog` by `trace`, which reads the header at
 * the end for a Chrome input): the first process_name's, else the first CPU
 * event's, when numeric. Set while reading: the header callback comes first. */
static void set_pid(cj *r) {
    if (!r->hdr.pid && r->pid.n && r->pid.p[0] != 's') r->hdr.pid = strtoull(r->pid.p, NULL, 10);
}

static int handle_event(cj *r) {
    const char *ph = sb_str(&r->ph), *name = sb_str(&r->name);
    r->st.events++;
    char p = ph[0] && !ph[1] ? ph[0] : '?';
    /* The category's part, for the phases that have one: a device event
     * or a runtime call (the lists share no name) */
    int dev = (p == 'X' || p == 'B') && is_device_event(r), rt = (p == 'X' || p == 'B') && is_runtime(r);
    if (r->pass == 1 && p == 'X') { /* device time per correlation (else External id) */
        if (r->correlation && (dev || rt)) {
            dlink *b = im_slot(&r->corr, r->correlation, 1);
            if (!b) return NOMEM();
            b->bits |= dev ? LINK_DEVICE : LINK_LAUNCH;
            if (dev) b->ns += (int64_t)r->dur, b->ext = b->ext ? b->ext : r->ext;
            else note_pid(b, pid_key(r));
        } else if (dev && r->ext) {
            dlink *k = im_slot(&r->kernel_ns, r->ext, 1);
            if (!k) return NOMEM();
            k->ns += (int64_t)r->dur;
        }
    }
    if (r->pass == 1 && (p == 'X' || p == 'B') && r->ext && !dev && !rt) {
        dlink *b = im_slot(&r->ext_pid, r->ext, 1); /* a CPU op's External id: whose */
        if (!b) return NOMEM();
        note_pid(b, pid_key(r));
    }
    if (p == 'M' && r->pass == 1) return 0;
    if (p == 'M') {
        if (strcmp(name, "thread_name") == 0 && r->argname.p) {
            uint32_t slot;
            if (thread_of(r, &slot)) return -1;
            char *d = strdup(r->argname.p);
            if (!d) return NOMEM();
            free(r->threads[slot].t.name);
            r->threads[slot].t.name = d;
        } else if (strcmp(name, "process_name") == 0 && r->argname.p && !r->hdr.prog[0]) {
            snprintf(r->hdr.prog, sizeof r->hdr.prog, "%s", r->argname.p);
            set_pid(r);
        }
        r->st.skipped += strcmp(name, "thread_name") != 0;
        return 0;
    }
    if (p == 'C' || p == 's' || p == 't' || p == 'f' || p == 'n' || p == 'R') {
        r->st.skipped++; /* counters, flows (ac2g: kernels carry the External id
                            that the flow would give), async instants, marks */
        return 0;
    }
    int is_mem = (p == 'i' || p == 'I') && strcmp(name, "[memory]") == 0;
    if ((p == 'i' || p == 'I') && !is_mem) {
        r->st.skipped++;
        return 0;
    }
    if (p != 'X' && p != 'B' && p != 'E' && !is_mem) {
        r->st.unknown_phases++;
        return 0;
    }
    if (p != 'E' && !r->has_ts) return CORRUPT("event \"%.40s\" (ph %s) has no \"ts\"", name, ph);
    if (p == 'X' && cat_is(r, "Trace")) { /* Kineto's whole-profile range: not an op */
        r->st.skipped++;
        return 0;
    }
    /* `scopeprof trace` of a .sprof file writes a GPU scope as a slice on its
     * thread ("gpu_dur": read as an op) and its GPU interval ("launch_ts",
     * category gpu_user_annotation too): the interval is left out, as before
     * GPU annotations were rows. */
    if ((p == 'X' || p == 'B') && (cat_is(r, "python_function") || pytorch_filtered(name) || r->own_gpu == 2)) {
        r->st.skipped++; /* not in PyTorch's key_averages */
        return 0;
    }
    if (r->pass == 1) { /* and the order of each thread's ranges and records */
        if (p == 'E' || (p == 'X' && dev)) return 0;
        return note_order(r, r->ts, is_mem ? r->ts : p == 'B' ? UINT64_MAX : r->ts + r->dur, is_mem);
    }
    uint32_t slot;
    if (thread_of(r, &slot)) return -1;
    if (!(p == 'X' && dev) && !r->hdr.prog[0]) set_pid(r);
    cthread *t = &r->threads[slot];
    range e;
    memset(&e, 0, sizeof e);
    e.start = r->ts;
    e.order = r->order++;
    if (p == 'E') {
        rvec *open = t->sorting ? &t->bopen : &t->stack;
        uint32_t i = open->n;
        while (i > 0 && !open->v[i - 1].open) i--;
        if (i == 0) {
            r->st.unmatched++;
            return 0;
        }
        if (!r->has_ts) return CORRUPT("E event has no \"ts\"");
        if (t->sorting) { /* complete it into the buffer */
            range b = open->v[i - 1];
            memmove(&open->v[i - 1], &open->v[i], (open->n - i) * sizeof *open->v);
            open->n--;
            b.open = 0;
            b.end = r->ts < b.start ? b.start : r->ts;
            return rv_push(&t->buf, &b) ? NOMEM() : 0;
        }
        /* Ranges opened inside the B close with it. */
        while (open->n > i)
            if (pop(r, slot)) return -1;
        open->v[i - 1].open = 0;
        open->v[i - 1].end = r->ts < open->v[i - 1].start ? open->v[i - 1].start : r->ts;
        return 0;
    }
    const char *shape = r->has_shape ? sb_str(&r->shape) : "[]";
    if (p == 'X' && dev) {
        /* A device event: a row of its own (no CPU time), on its stream's
         * thread; its time also counts to the CPU op that launched it (pass 1). */
        uint32_t site;
        if (site_of(r, name, "[]", &site)) return -1;
        r->st.kernels++;
        dlink *l = r->correlation ? im_slot(&r->corr, r->correlation, 0) : NULL;
        r->st.kernels_linked += (l && (l->bits & LINK_LAUNCH)) || (r->ext && im_slot(&r->kernel_ns, r->ext, 0));
        sp_event k = {r->ts, r->ts, site, 0, SP_SCOPE, 0, 0, (int64_t)r->dur, r->ts, 0, 0, NULL};
        /* Marked as a device event: the table's Self GPU total sums these
         * only (PyTorch's), the trace puts them on GPU tracks. Kineto's pid
         * is the device, its tid the stream. A GPU annotation (timed 2) is
         * a row and a slice as well, but spans the kernels it annotates:
         * PyTorch leaves it out of the total (_build_table's
         * is_user_annotation), aggregate.c too. */
        uint64_t dev = r->pid.n && r->pid.p[0] != 's' ? strtoull(sb_str(&r->pid), NULL, 10) : 0;
        sp_gpu_info g = {r->threads[slot].t.tid, dev < SP_MAX_DEVICES ? (uint32_t)dev : SP_MAX_DEVICES - 1,
                         cat_is(r, "gpu_user_annotation") ? 2u : 1u};
        r->st.ranges++;
        return emit(r, slot, &k, &g, flow_of(r));
    }
    /* A step keeps its own name (a re-exported trace shows ProfilerStep#N);
     * tables merge them into ProfilerStep* (aggregate.c). */
    int step = strncmp(name, "ProfilerStep#", 13) == 0;
    const char *rowname = name;
    if (step && p == 'X') {
        uint64_t number = strtoull(name + 13, NULL, 10);
        if (add_step(r, &r->steps, number, r->ts, r->ts + r->dur)) return -1;
        /* The steps `scopeprof trace` wrote of a .sprof file's STEPS records,
         * on a track of their own (chrome_write.c): nothing nests in them
         * there, so as events they would be all self time. They are steps
         * again, as in the .sprof file: the ProfilerStep* row without self
         * time (aggregate.c), not events. PyTorch's steps, on the thread of
         * the ops they hold, stay events with their self time. */
        uint64_t tid = r->tid.n && r->tid.p[0] != 's' ? strtoull(r->tid.p, NULL, 10) : 0;
        int steps_track = tid <= SP_STEPS_TID && tid > SP_STEPS_TID - SP_STEPS_LANES;
        if (steps_track && cat_is(r, "step"))
            return add_step(r, &r->track, number, r->ts, r->ts + r->dur);
    }
    if (site_of(r, rowname, is_mem ? "[]" : shape, &e.site)) return -1;
    if (is_mem) {
        r->st.memory++;
        e.kind = SP_MEM;
        e.end = e.start;
        e.bytes = r->bytes;
        /* c10 DeviceType: 0 CPU, 2 MKLDNN, 5 IDEEP count as CPU memory; 1 CUDA,
         * 6 HIP as GPU memory of "Device Id"; other devices are not tabled. */
        int dt = r->dev_type;
        if (dt < 0) dt = r->dev_id >= 0 ? 1 : 0;
        if (dt == 1 || dt == 6) e.device = r->dev_id >= 0 && r->dev_id < 62 ? (uint32_t)r->dev_id + 1 : 63;
        else if (dt != 0 && dt != 2 && dt != 5) return 0;
        if (!r->has_bytes) return 0;
    } else {
        e.kind = SP_SCOPE;
        e.open = p == 'B';
        e.end = p == 'B' ? UINT64_MAX : r->ts + r->dur;
        e.ext = r->ext;
        e.takes_gpu = !rt;
        if (!e.takes_gpu) e.flow = flow_of(r);
    }
    if (!t->sorting && goes_back(&t->ord, e.start, e.end, e.kind == SP_MEM) && start_sorting(r, t)) return -1;
    if (t->sorting) return rv_push(e.open ? &t->bopen : &t->buf, &e) ? NOMEM() : 0;
    return push(r, slot, &e);
}

static int key_is(const cj *r, const char *k) { return strcmp(sb_str((sbuf *)&r->key), k) == 0; }

/* A string field; wrong type is an error (the offset points at the value). */
static int want_string(cj *r, sbuf *out, const char *field) {
    if (ws(r) != '"') return peekc(r) < 0 ? truncated(r) : CORRUPT("\"%s\" must be a string", field);
    return read_string(r, out);
}

static int want_number(cj *r, num *v, const char *field) {
    int c = ws(r);
    if (c < 0) return truncated(r);
    if (c != '-' && !(c >= '0' && c <= '9')) return CORRUPT("\"%s\" must be a number", field);
    return read_number(r, v);
}

/* pid/tid: a number or a string; kept as text with a type mark. A string
 * that is an integer as JSON writes one is that number: Kineto wrote the
 * ops' tid as "25738" and their [memory] records' as 25738 (PyTorch 1.8/1.9),
 * one thread. put_id: the text of a string id k of n bytes (decoded). */
static int put_id(sbuf *out, const char *k, size_t n) {
    size_t neg = n && k[0] == '-', i = neg;
    while (i < n && k[i] >= '0' && k[i] <= '9') i++;
    int number = i > neg && i - neg <= 20 && i == n && (k[neg] != '0' || i - neg == 1);
    return (!number && sb_put(out, "s", 1)) || sb_put(out, k, n) ? -1 : 0;
}

static int want_id(cj *r, sbuf *out, const char *field) {
    int c = ws(r);
    out->n = 0;
    if (c == '"') /* into the key, which was used already */
        return read_string(r, &r->key) ? -1 : put_id(out, sb_str(&r->key), r->key.n) ? NOMEM() : 0;
    num v;
    if (want_number(r, &v, field)) return -1;
    return sb_put(out, v.text, strlen(v.text)) ? NOMEM() : 0;
}

/* External id, correlation: 0 for none (or nonsense). */
static uint64_t link_id(double d) { return d > 0 && d < 1.8e19 ? (uint64_t)d : 0; }

/* A [memory] record's "Bytes"; -1 when absurd. */
static int set_bytes(cj *r, const num *v) {
    if (!(fabs(v->d) <= (double)SP_MAX_VALUE)) return -1;
    r->bytes = (int64_t)v->d;
    r->has_bytes = 1;
    return 0;
}

/* Negative or huge times are corruption for the aggregation, which sums
 * nanoseconds in int64. */
static int time_ok(const num *v, int ts) { return v->ok_ns && v->ns <= (ts ? 1ull << 62 : SP_MAX_VALUE); }

static int read_args(cj *r) {
    if (expect(r, '{', "'{' (\"args\" must be an object)")) return -1;
    if (ws(r) == '}') return skipc(r), 0;
    for (;;) {
        if (member_key(r)) return -1;
        num v;
        int c = ws(r), isnum = c == '-' || (c >= '0' && c <= '9');
        /* "external id": PyTorch 1.8/1.9's spelling */
        int ext = key_is(r, "External id") || key_is(r, "external id");
        if (key_is(r, "Input Dims")) {
            if (render_value(r, &r->shape)) return -1;
            r->has_shape = 1;
        } else if (key_is(r, "name") && c == '"') {
            if (read_string(r, &r->argname)) return -1;
        } else if (key_is(r, "gpu_dur") || key_is(r, "launch_ts")) {
            r->own_gpu = key_is(r, "gpu_dur") ? 1 : 2;
            if (skip_value(r)) return -1;
        } else if (isnum && (ext || key_is(r, "correlation") || key_is(r, "Bytes") ||
                             key_is(r, "Device Type") || key_is(r, "Device Id"))) {
            if (read_number(r, &v)) return -1;
            if (ext) r->ext = link_id(v.d);
            else if (key_is(r, "correlation")) r->correlation = link_id(v.d);
            else if (key_is(r, "Bytes")) {
                if (set_bytes(r, &v)) return CORRUPT("absurd \"Bytes\" %s", v.text);
            } else {
                int iv = v.d >= -1 && v.d < 1e6 ? (int)v.d : 999999;
                if (key_is(r, "Device Type")) r->dev_type = iv;
                else r->dev_id = iv;
            }
        } else if (skip_value(r)) {
            return -1;
        }
        if ((c = member_end(r, "\"args\"")) != 0) return c < 0 ? -1 : 0;
    }
}

static void clear_event(cj *r) {
    r->name.n = r->ph.n = r->cat.n = r->pid.n = r->tid.n = r->argname.n = 0;
    if (r->argname.p) r->argname.p[0] = 0;
    if (r->cat.p) r->cat.p[0] = 0;
    if (r->ph.p) r->ph.p[0] = 0;
    if (r->name.p) r->name.p[0] = 0;
    if (r->pid.p) r->pid.p[0] = 0;
    if (r->tid.p) r->tid.p[0] = 0;
    r->has_ts = r->has_dur = r->has_shape = r->has_bytes = r->own_gpu = 0;
    r->ts = r->dur = r->ext = r->correlation = 0;
    r->bytes = 0;
    r->dev_type = r->dev_id = -1;
}

static int read_event(cj *r) {
    clear_event(r);
    uint64_t at = here(r);
    skipc(r); /* '{' */
    if (ws(r) == '}') return skipc(r), handle_event(r);
    for (;;) {
        if (member_key(r)) return -1;
        num v;
        if (key_is(r, "name")) {
            if (want_string(r, &r->name, "name")) return -1;
        } else if (key_is(r, "ph")) {
            if (want_string(r, &r->ph, "ph")) return -1;
        } else if (key_is(r, "cat")) {
            if (want_string(r, &r->cat, "cat")) return -1;
        } else if (key_is(r, "pid")) {
            if (want_id(r, &r->pid, "pid")) return -1;
        } else if (key_is(r, "tid")) {
            if (want_id(r, &r->tid, "tid")) return -1;
        } else if (key_is(r, "ts") || key_is(r, "dur")) {
            int ts = key_is(r, "ts");
            if (want_number(r, &v, ts ? "ts" : "dur")) return -1;
            if (!time_ok(&v, ts))
                return fail(r, SP_CORRUPT, here(r) - strlen(v.text), "\"%s\" out of range: %s",
                            ts ? "ts" : "dur", v.text);
            if (ts) r->ts = v.ns, r->has_ts = 1;
            else r->dur = v.ns, r->has_dur = 1;
        } else if (key_is(r, "args")) {
            if (read_args(r)) return -1;
        } else {
            static const char *const known[] = {"id", "id2", "bp", "s", "tts", "tdur", "sf",
                                                "esf", "stack", "estack", "cname", "scope", "bind_id",
                                                "flow_in", "flow_out", "use_async_tid"};
            int k = 0;
            for (size_t i = 0; i < sizeof known / sizeof *known && !k; i++) k = key_is(r, known[i]);
            r->st.unknown_keys += !k;
            if (skip_value(r)) return -1;
        }
        int c = ws(r);
        if (c < 0) return truncated(r);
        if (c == '}') {
            skipc(r);
            break;
        }
        if (c != ',') return CORRUPT("expected ',' or '}' after a value in the event at offset %llu",
                                     (unsigned long long)at);
        skipc(r);
    }
    return handle_event(r);
}

/* ---- Pass 1: skimming ---------------------------------------------------------- */
/* Pass 1 uses few fields of an event: ph, cat, name, pid, tid, ts, dur, and
 * args' External id, correlation, gpu_dur or launch_ts and Bytes (checked).
 * An event that lies whole in the read buffer is skimmed where it lies: keys
 * compared in place, those strings copied as they are, every other value
 * stepped over, checked against read_event's grammar but neither decoded nor
 * copied. What the skim does not take on (an escape in a key or in one of
 * those strings, a \u escape, a control character, nesting deeper than 64,
 * the buffer's end, any error) goes to read_event from the event's '{': so
 * pass 1 gets read_event's fields and stops at the event where it would. */
static const unsigned char *sk_ws(const unsigned char *p, const unsigned char *e) {
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* A string from its '"' to past its closing quote. *esc: it holds escapes.
 * At most SP_CJ_MAX_STRING bytes without control characters decode to no
 * more: read_string's limit holds. */
static const unsigned char *sk_string(const unsigned char *p, const unsigned char *e, int *esc) {
    const unsigned char *s = ++p;
    if ((size_t)(e - s) > SP_CJ_MAX_STRING) e = s + SP_CJ_MAX_STRING;
    *esc = 0;
    for (; p < e; p++) {
        if (*p == '"') return p + 1;
        if (*p < 0x20) return NULL;
        if (*p == '\\') {
            if (++p == e || !memchr("\"\\/bfnrt", *p, 8)) return NULL;
            *esc = 1;
        }
    }
    return NULL;
}

/* A number where it lies: its grammar, and no num_char after it (read_number
 * would take it, and fail). v: its text too, and with want its value. */
static const unsigned char *sk_number(const unsigned char *p, const unsigned char *e, num *v, int want) {
    const unsigned char *end = num_end(p, e);
    size_t n = end ? (size_t)(end - p) : 0;
    if (!end || end == e || num_char(*end) || n >= sizeof v->text) return NULL;
    if (v) {
        memcpy(v->text, p, n);
        v->text[n] = 0;
        if (want && num_parse(v, n, want)) return NULL;
    }
    return end;
}

static int sk_isnum(int c) { return c == '-' || (c >= '0' && c <= '9'); }

/* Any value, as skip_value would. */
static const unsigned char *sk_value(const unsigned char *p, const unsigned char *e) {
    uint64_t obj = 0; /* one bit per level, the innermost lowest: 1 in an object */
    unsigned depth = 0;
    int esc;
    for (;;) {
        if ((p = sk_ws(p, e)) == e) return NULL;
        if (*p == '{' || *p == '[') {
            if (depth == 64) return NULL;
            obj = obj << 1 | (*p == '{');
            depth++;
            if ((p = sk_ws(p + 1, e)) == e) return NULL;
            if (*p != (obj & 1 ? '}' : ']')) goto next;
            p++, depth--, obj >>= 1;
        } else if (*p == '"' || sk_isnum(*p)) {
            if (!(p = *p == '"' ? sk_string(p, e, &esc) : sk_number(p, e, NULL, 0))) return NULL;
        } else {
            const char *l = *p == 't' ? "true" : *p == 'f' ? "false" : *p == 'n' ? "null" : "";
            size_t n = strlen(l);
            if (!n || (size_t)(e - p) < n || memcmp(p, l, n) != 0) return NULL;
            p += n;
        }
        for (;;) { /* after a value: what it closes, then ',' */
            if (!depth) return p;
            if ((p = sk_ws(p, e)) == e) return NULL;
            if (*p != (obj & 1 ? '}' : ']')) break;
            p++, depth--, obj >>= 1;
        }
        if (*p++ != ',') return NULL;
    next:
        if (!(obj & 1)) continue; /* an array's element */
        if ((p = sk_ws(p, e)) == e || *p != '"' || !(p = sk_string(p, e, &esc))) return NULL;
        if ((p = sk_ws(p, e)) == e || *p++ != ':') return NULL;
    }
}

/* A member's key, without escapes, as k[0, *kn); returns its value's first
 * byte. sk_end: past the ',' (*more) or the '}' after the value. */
static const unsigned char *sk_key(const unsigned char *p, const unsigned char *e, const unsigned char **k,
                                   size_t *kn) {
    int esc;
    if ((p = sk_ws(p, e)) == e || *p != '"') return NULL;
    *k = p + 1;
    if (!(p = sk_string(p, e, &esc)) || esc) return NULL;
    *kn = (size_t)(p - 1 - *k);
    if ((p = sk_ws(p, e)) == e || *p != ':') return NULL;
    return (p = sk_ws(p + 1, e)) == e ? NULL : p;
}

static const unsigned char *sk_end(const unsigned char *p, const unsigned char *e, int *more) {
    if ((p = sk_ws(p, e)) == e || (*p != ',' && *p != '}')) return NULL;
    *more = *p == ',';
    return p + 1;
}

static int sk_is(const unsigned char *k, size_t n, const char *s) {
    return strlen(s) == n && memcmp(k, s, n) == 0;
}

/* A string wanted as text (id: a pid or tid, put_id's). */
static const unsigned char *sk_text(const unsigned char *p, const unsigned char *e, sbuf *out, int id) {
    const unsigned char *s = p + 1;
    int esc;
    if (*p != '"' || !(p = sk_string(p, e, &esc)) || esc) return NULL;
    out->n = 0;
    size_t n = (size_t)(p - 1 - s);
    return (id ? put_id(out, (const char *)s, n) : sb_put(out, (const char *)s, n)) ? NULL : p;
}

static const unsigned char *sk_args(cj *r, const unsigned char *p, const unsigned char *e) {
    const unsigned char *k;
    size_t n;
    int more = 1;
    num v;
    if (*p != '{') return NULL;
    if ((p = sk_ws(p + 1, e)) < e && *p == '}') return p + 1;
    while (more && p && (p = sk_key(p, e, &k, &n))) {
        int ext = sk_is(k, n, "External id") || sk_is(k, n, "external id");
        if (sk_isnum(*p) && (ext || sk_is(k, n, "correlation") || sk_is(k, n, "Bytes"))) {
            if (!(p = sk_number(p, e, &v, 2))) return NULL;
            if (ext) r->ext = link_id(v.d);
            else if (k[0] == 'c') r->correlation = link_id(v.d);
            else if (set_bytes(r, &v)) return NULL;
        } else {
            if (sk_is(k, n, "gpu_dur") || sk_is(k, n, "launch_ts")) r->own_gpu = k[0] == 'g' ? 1 : 2;
            p = sk_value(p, e);
        }
        if (p) p = sk_end(p, e, &more);
    }
    return p;
}

static int skim_event(cj *r) {
    const unsigned char *p = r->buf + r->pos + 1, *e = r->buf + r->end, *k;
    size_t n;
    int more = 1;
    num v;
    clear_event(r);
    if ((p = sk_ws(p, e)) < e && *p == '}') p++, more = 0;
    while (more && p && (p = sk_key(p, e, &k, &n))) {
        if (sk_is(k, n, "name")) p = sk_text(p, e, &r->name, 0);
        else if (sk_is(k, n, "ph")) p = sk_text(p, e, &r->ph, 0);
        else if (sk_is(k, n, "cat")) p = sk_text(p, e, &r->cat, 0);
        else if (sk_is(k, n, "pid") || sk_is(k, n, "tid")) {
            sbuf *id = k[0] == 'p' ? &r->pid : &r->tid;
            if (*p == '"') p = sk_text(p, e, id, 1);
            else if (!sk_isnum(*p) || !(p = sk_number(p, e, &v, 0))) p = NULL;
            else if ((id->n = 0, sb_put(id, v.text, strlen(v.text)))) p = NULL;
        } else if (sk_is(k, n, "ts") || sk_is(k, n, "dur")) {
            int ts = n == 2;
            if (!sk_isnum(*p) || !(p = sk_number(p, e, &v, 1)) || !time_ok(&v, ts)) p = NULL;
            else if (ts) r->ts = v.ns, r->has_ts = 1;
            else r->dur = v.ns, r->has_dur = 1;
        } else if (sk_is(k, n, "args")) {
            p = sk_args(r, p, e);
        } else {
            p = sk_value(p, e);
        }
        if (p) p = sk_end(p, e, &more);
    }
    if (!p) return read_event(r);
    r->pos = (size_t)(p - r->buf);
    return handle_event(r);
}

/* Pass 2: the header callback, once, before the first event: as late as
 * that, so that a pipe's "distributedInfo" (before "traceEvents" in
 * Kineto's files) gives its rank too. */
static int send_header(cj *r) {
    if (r->header_sent || r->pass != 2) return 0;
    r->header_sent = 1;
    if (r->cb->header && r->cb->header(r->cb->ctx, (const sp_reader *)r, &r->hdr))
        return fail(r, SP_STOPPED, here(r), "stopped by the reader's client");
    return 0;
}

/* The traceEvents array (or the whole bare-array file). */
static int read_events(cj *r, int bare) {
    if (send_header(r)) return -1;
    skipc(r); /* '[' */
    r->errctx = "the event list";
    int c = ws(r);
    if (c == ']') return skipc(r), 0;
    for (;;) {
        c = ws(r);
        if (c < 0) {
            /* A bare array may end without ']' (chrome://tracing accepts it:
             * tracers write events until they are killed). */
            if (bare) return fail(r, SP_TRUNCATED, here(r), "JSON cut short: the event list has no ']'");
            return truncated(r);
        }
        if (c == ']' && bare) return skipc(r), 0; /* trailing comma */
        if (c != '{') return CORRUPT("expected an event object");
        r->errctx = "an event";
        if (r->pass == 1 ? skim_event(r) : read_event(r)) return -1;
        r->res->good_end = here(r);
        r->errctx = "the event list";
        c = ws(r);
        if (c < 0) return bare ? fail(r, SP_TRUNCATED, here(r), "JSON cut short: the event list has no ']'")
                               : truncated(r);
        skipc(r);
        if (c == ']') return 0;
        if (c != ',') return r->pos--, CORRUPT("expected ',' or ']' after an event");
    }
}

/* Kineto's "deviceProperties": [{"id": 0, "name": "NVIDIA H100 ...", ...}]
 * (before "traceEvents" in its files): the names of the GPUs, whose pid is
 * the id. Other keys, and entries without both, are skipped. */
static int read_devices(cj *r) {
    skipc(r); /* '[' */
    r->errctx = "deviceProperties";
    if (ws(r) == ']') return skipc(r), 0;
    for (;;) {
        if (ws(r) != '{') {
            if (skip_value(r)) return -1;
        } else {
            skipc(r);
            long id = -1;
            int named = 0;
            if (ws(r) == '}') skipc(r);
            else
                for (;;) {
                    if (member_key(r)) return -1;
                    int c = ws(r);
                    num v;
                    if (key_is(r, "id") && (c == '-' || (c >= '0' && c <= '9'))) {
                        if (read_number(r, &v)) return -1;
                        if (v.is_int && v.d >= 0 && v.d < SP_MAX_DEVICES) id = (long)v.d;
                    } else if (key_is(r, "name") && c == '"') {
                        if (read_string(r, &r->name)) return -1;
                        named = 1;
                    } else if (skip_value(r)) {
                        return -1;
                    }
                    if ((c = member_end(r, "deviceProperties")) < 0) return -1;
                    if (c) break;
                }
            if (id >= 0 && named && !r->devname[id]) { /* both passes read it: keep the first */
                const char *n = sb_str(&r->name);
                size_t l = strlen(n) < 255 ? strlen(n) : 255;
                if (!(r->devname[id] = malloc(l + 1))) return NOMEM();
                memcpy(r->devname[id], n, l);
                r->devname[id][l] = 0;
            }
        }
        int c = ws(r);
        if (c < 0) return truncated(r);
        skipc(r);
        if (c == ']') return 0;
        if (c != ',') return r->pos--, CORRUPT("expected ',' or ']' in deviceProperties");
    }
}

/* Kineto's "distributedInfo": {"backend": "nccl", "rank": 3, ...}: the
 * header's rank (--per-rank, --group-by rank, `trace`'s process names), as
 * HTA reads it. Other keys are skipped. */
static int read_rank(cj *r) {
    skipc(r); /* '{' */
    r->errctx = "distributedInfo";
    if (ws(r) == '}') return skipc(r), 0;
    for (;;) {
        if (member_key(r)) return -1;
        int c = ws(r);
        num v;
        if (key_is(r, "rank") && (c == '-' || (c >= '0' && c <= '9'))) {
            if (read_number(r, &v)) return -1;
            if (v.is_int && v.d >= 0 && v.d < 0xFFFFFFFFu) r->hdr.rank = (uint32_t)v.d;
        } else if (skip_value(r)) {
            return -1;
        }
        if ((c = member_end(r, "distributedInfo")) != 0) return c < 0 ? -1 : 0;
    }
}

static int read_top(cj *r) {
    r->errctx = "the top-level value";
    int c = ws(r);
    if (c < 0) return r->res->status != SP_OK ? -1 : CORRUPT("empty input, not a Chrome trace");
    if (c == '[') {
        if (read_events(r, 1)) return -1;
    } else if (c == '{') {
        skipc(r);
        int seen = 0;
        if (ws(r) == '}') skipc(r);
        else
            for (;;) {
                r->errctx = "the top-level object";
                if (member_key(r)) return -1;
                if (key_is(r, "traceEvents") && ws(r) == '[') {
                    if (read_events(r, 0)) return -1;
                    seen = 1;
                } else if (key_is(r, "deviceProperties") && ws(r) == '[') {
                    if (read_devices(r)) return -1;
                } else if (key_is(r, "distributedInfo") && ws(r) == '{') {
                    if (read_rank(r)) return -1;
                } else if (skip_value(r)) {
                    return -1;
                }
                r->errctx = "the top-level object";
                if ((c = member_end(r, "the top-level object")) < 0) return -1;
                if (c) break;
            }
        /* {"traceEvents":[]} is an empty trace; an object without the key
         * is some other JSON, and an empty table would hide the mistake. */
        if (!seen && r->pass == 2)
            return CORRUPT("a JSON object without a \"traceEvents\" array: not a Chrome trace");
    } else {
        return CORRUPT("not a Chrome trace: expected '{' or '['");
    }
    if (ws(r) >= 0) return CORRUPT("unexpected data after the JSON value");
    return r->res->status != SP_OK ? -1 : 0;
}

/* ---- Passes ------------------------------------------------------------------ */
static void reset_input(cj *r) {
    if (!r->seekable) return; /* a pipe: one pass from where it is */
    if (r->mem) {
        r->pos = 0;
    } else {
        lseek(r->fd, 0, SEEK_SET);
        r->pos = r->end = 0;
        r->eof = 0;
    }
    r->base = 0;
}

static const sp_gpu_info *cj_gpu_info(const sp_reader *r) {
    return ((const cj *)(const void *)r)->out_gpu;
}
static uint32_t cj_steps(const sp_reader *r, const sp_step **steps) {
    const cj *c = (const cj *)(const void *)r;
    *steps = c->steps.v;
    return c->steps.n;
}
uint32_t sp_track_steps(const sp_reader *r, const sp_step **steps) {
    const cj *c = (const cj *)(const void *)r;
    if (!sp_chrome_vtbl(r)) return sp_reader_steps(r, steps);
    *steps = c->track.v;
    return c->track.n;
}
static const char *cj_device_name(const sp_reader *r, uint32_t device) {
    const cj *c = (const cj *)(const void *)r;
    return device < SP_MAX_DEVICES ? c->devname[device] : NULL;
}
static uint32_t cj_memory(const sp_reader *r, const sp_memory **mem) {
    (void)r;
    *mem = NULL; /* peaks are not in the JSON: the [memory] records are used */
    return 0;
}

static const sp_reader_vtbl chrome_vtbl = {sp_chrome_site,   sp_chrome_header, sp_chrome_nthreads,
                                           sp_chrome_thread, cj_gpu_info,      cj_steps,
                                           cj_device_name,   cj_memory};

static void cj_free(cj *r) {
    for (uint32_t i = 0; i < SP_MAX_DEVICES; i++) free(r->devname[i]);
    for (uint32_t i = 0; i < r->nsites; i++) free((char *)r->sites[i].s.name);
    for (uint32_t i = 0; i < r->nthreads; i++) {
        free(r->threads[i].t.name);
        free(r->threads[i].stack.v);
        free(r->threads[i].buf.v);
        free(r->threads[i].bopen.v);
    }
    free(r->sites);
    free(r->threads);
    free(r->steps.v);
    free(r->track.v);
    sm_free(&r->site_ids);
    sm_free(&r->thread_ids);
    sm_free(&r->late_ids);
    free(r->late);
    free(r->kernel_ns.keys);
    free(r->kernel_ns.vals);
    free(r->corr.keys);
    free(r->corr.vals);
    free(r->ext_pid.keys);
    free(r->ext_pid.vals);
    sbuf *bufs[] = {&r->name, &r->ph, &r->cat, &r->pid, &r->tid, &r->shape, &r->argname, &r->key};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]->p);
    if (!r->mem) free(r->buf);
}

/* After pass 1: device events whose launch is not in the trace go to the op
 * with their External id (PyTorch's link), unless that id is their own
 * correlation (PyTorch ~1.12-2.1: not an op's id). A correlation that
 * runtime calls of two processes carry (a merged trace: CUPTI numbers them
 * per process, and a device event's pid is its device, not its process)
 * links nothing: which launch enqueued which of its device events cannot
 * be told, and their External ids, pooled in one entry, neither. They
 * credit no op and draw no arrow. */
static int orphans_by_ext(cj *r) {
    for (uint32_t i = 0; i < r->corr.cap; i++) {
        dlink *l = &r->corr.vals[i];
        if (!r->corr.keys[i]) continue;
        if (l->bits & LINK_MANY) {
            r->st.ambiguous += (l->bits & LINK_DEVICE) != 0;
            l->bits = 0;
            l->ns = -1;
            continue;
        }
        if (l->bits != LINK_DEVICE || !l->ext || l->ext == r->corr.keys[i]) continue;
        dlink *k = im_slot(&r->kernel_ns, l->ext, 1);
        if (!k) return NOMEM();
        k->ns += l->ns;
    }
    return 0;
}

static int run(cj *r, const sp_callbacks *cb, sp_result *res, int seekable) {
    static const sp_callbacks none = {NULL, NULL, NULL, NULL};
    r->vtbl = &chrome_vtbl;
    r->cb = cb ? cb : &none;
    r->res = res;
    r->hdr.rank = 0xFFFFFFFFu;
    r->hdr.unit_ns = 1.0;
    r->seekable = seekable;
    /* Pass 1 whenever the input can be read again: device time per launch,
     * and which threads go back in time (Kineto writes a thread's ops, then
     * its runtime calls, then its memory records). */
    if (seekable) {
        reset_input(r);
        r->pass = 1;
        int rc = read_top(r);
        (void)rc; /* an error shows again in pass 2, after what precedes it is delivered */
        memset(res, 0, sizeof *res);
        memset(&r->st, 0, sizeof r->st);
        orphans_by_ext(r); /* out of memory: pass 2 stops at once */
    }
    reset_input(r);
    r->pass = 2;
    read_top(r);
    if (res->status != SP_STOPPED) send_header(r); /* no event list */
    /* What was read before an error is used, as the native reader does. */
    int stopped = res->status == SP_STOPPED;
    for (uint32_t i = 0; i < r->nthreads && !stopped; i++) {
        if (finish_thread(r, i)) break;
    }
    if (!stopped && res->status != SP_STOPPED) flush_out(r);
    res->unmatched = r->st.unmatched;
    /* Read once, device events were rows but credited no op: said, not silent. */
    if (!seekable && r->st.kernels) res->notes |= SP_NOTE_PIPE_GPU;
    if (r->st.ambiguous) res->notes |= SP_NOTE_AMBIGUOUS; /* and so were these */
    if (res->status == SP_OK) res->offset = here(r), res->good_end = here(r);
    if (r->cb->finish && r->cb->finish(r->cb->ctx, (const sp_reader *)r) && res->status == SP_OK)
        fail(r, SP_STOPPED, here(r), "stopped by the reader's client");
    cj_free(r);
    return res->status;
}

int sp_read_chrome_mem(const void *data, size_t n, const sp_callbacks *cb, sp_result *res) {
    memset(res, 0, sizeof *res);
    cj *r = calloc(1, sizeof *r);
    if (!r) return res->status = SP_STOPPED, snprintf(res->msg, sizeof res->msg, "out of memory"), SP_STOPPED;
    r->fd = -1;
    r->mem = data ? data : (const unsigned char *)"";
    r->buf = (unsigned char *)r->mem; /* read only: the reader never writes buf in memory mode */
    r->end = n;
    r->eof = 1;
    int st = run(r, cb, res, 1);
    free(r);
    return st;
}

int sp_read_chrome_fd(int fd, const void *pre, size_t npre, const sp_callbacks *cb, sp_result *res) {
    memset(res, 0, sizeof *res);
    cj *r = calloc(1, sizeof *r);
    if (r) r->buf = malloc(BUF_SIZE);
    if (!r || !r->buf) {
        free(r);
        snprintf(res->msg, sizeof res->msg, "out of memory");
        return res->status = SP_IOERR;
    }
    r->fd = fd;
    struct stat sb;
    int seekable = npre == 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && lseek(fd, 0, SEEK_SET) == 0;
    if (npre) memcpy(r->buf, pre, npre);
    r->end = npre;
    int st = run(r, cb, res, seekable);
    free(r);
    return st;
}

int sp_read_chrome_file(const char *path, const sp_callbacks *cb, sp_result *res) {
    memset(res, 0, sizeof *res);
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(res->msg, sizeof res->msg, "cannot open: %s", strerror(errno));
        return res->status = SP_IOERR;
    }
    int st = sp_read_chrome_fd(fd, NULL, 0, cb, res);
    if (fd > 0) close(fd);
    return st;
}

/* ---- Accessors ----------------------------------------------------------------- */
const sp_reader_vtbl *sp_chrome_vtbl(const sp_reader *r) {
    /* A pointer to a struct points to its first member: the accessors'
     * pointer in both readers (read.h), NULL in the native one. */
    return *(const sp_reader_vtbl *const *)(const void *)r;
}
const sp_site *sp_chrome_site(const sp_reader *r, uint32_t id) {
    const cj *c = (const cj *)(const void *)r;
    return id >= 1 && id <= c->nsites ? &c->sites[id - 1].s : NULL;
}
const char *sp_chrome_shape(const sp_reader *r, uint32_t id) {
    const cj *c = (const cj *)(const void *)r;
    return id >= 1 && id <= c->nsites ? c->sites[id - 1].shape : NULL;
}
const sp_header *sp_chrome_header(const sp_reader *r) { return &((const cj *)(const void *)r)->hdr; }
uint32_t sp_chrome_nthreads(const sp_reader *r) { return ((const cj *)(const void *)r)->nthreads; }
const sp_thread *sp_chrome_thread(const sp_reader *r, uint32_t slot) {
    const cj *c = (const cj *)(const void *)r;
    return slot < c->nthreads ? &c->threads[slot].t : NULL;
}
const sp_chrome_stats *sp_chrome_get_stats(const sp_reader *r) { return &((const cj *)(const void *)r)->st; }
uint64_t sp_chrome_flow(const sp_reader *r, uint32_t k) {
    const cj *c = (const cj *)(const void *)r;
    return k < OUT_BATCH ? c->out_flow[k] : 0;
}
