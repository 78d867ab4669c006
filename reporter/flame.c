/* flame.c -- see flame.h. */
#define SCOPEPROF_AGGREGATION
#include "flame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame_js.h" /* sp_flame_js: zoom and search (reporter/flame.js) */
#include "hash.h"
#include "scopeprof.h"

void sp_out_xml(sp_out *o, const char *str) {
    const unsigned char *s = (const unsigned char *)str, *run = s;
    while (*s) {
        unsigned c = *s;
        const char *rep = NULL;
        size_t len = 1;
        if (c == '&') rep = "&amp;";
        else if (c == '<') rep = "&lt;";
        else if (c == '>') rep = "&gt;";
        else if (c == '"') rep = "&quot;";
        else if (c == '\'') rep = "&#39;";
        else if (c < 0x20 || c == 0x7F) rep = "&#xFFFD;";
        else if (c >= 0x80) {
            int n = sp_utf8_len(s);
            if (n) {
                s += n;
                continue;
            }
            rep = "&#xFFFD;";
        }
        if (!rep) {
            s += len;
            continue;
        }
        sp_out_write(o, run, (size_t)(s - run));
        sp_out_str(o, rep);
        run = s += len;
    }
    sp_out_write(o, run, (size_t)(s - run));
}

/* ---- The frame tree ---------------------------------------------------------- */
typedef struct node {
    char *name;
    int64_t value;
    int64_t base; /* a differential graph: the frame's time in BASE */
    uint32_t parent, depth;
} node;

struct sp_flame {
    node *n;
    uint32_t nn, cap;
    uint32_t *hash; /* (parent, name) -> node index + 1; open addressing */
    uint32_t hcap;
    uint32_t drawn;
    int diff; /* frames coloured by the change from base to value */
};

static uint64_t key_hash(uint32_t parent, const char *s, size_t len) {
    uint64_t h = sp_hash(parent, s, len);
    return h ^ h >> 29;
}

static int add_node(sp_flame *f, uint32_t parent, const char *name, size_t len, uint32_t depth) {
    if (f->nn == f->cap) {
        uint32_t c = f->cap ? f->cap * 2 : 256;
        node *v = realloc(f->n, (size_t)c * sizeof *v);
        if (!v) return -1;
        f->n = v;
        f->cap = c;
    }
    char *s = malloc(len + 1);
    if (!s) return -1;
    memcpy(s, name, len);
    s[len] = 0;
    f->n[f->nn] = (node){s, 0, 0, parent, depth};
    return (int)f->nn++;
}

static int rehash(sp_flame *f) {
    uint32_t c = f->hcap ? f->hcap * 2 : 1024;
    uint32_t *h = calloc(c, sizeof *h);
    if (!h) return -1;
    for (uint32_t i = 1; i < f->nn; i++) {
        const node *x = &f->n[i];
        uint64_t k = key_hash(x->parent, x->name, strlen(x->name));
        uint32_t j = (uint32_t)k & (c - 1);
        while (h[j]) j = (j + 1) & (c - 1);
        h[j] = i + 1;
    }
    free(f->hash);
    f->hash = h;
    f->hcap = c;
    return 0;
}

/* The child `name` (len bytes) of parent, created on first use. */
static int64_t child(sp_flame *f, uint32_t parent, const char *name, size_t len) {
    if ((uint64_t)(f->nn + 1) * 2 > f->hcap && rehash(f) != 0) return -1;
    uint32_t j = (uint32_t)key_hash(parent, name, len) & (f->hcap - 1);
    for (; f->hash[j]; j = (j + 1) & (f->hcap - 1)) {
        const node *x = &f->n[f->hash[j] - 1];
        if (x->parent == parent && strncmp(x->name, name, len) == 0 && x->name[len] == 0)
            return f->hash[j] - 1;
    }
    int k = add_node(f, parent, name, len, f->n[parent].depth + 1);
    if (k < 0) return -1;
    f->hash[j] = (uint32_t)k + 1;
    return k;
}

sp_flame *sp_flame_new(const char *root) {
    sp_flame *f = calloc(1, sizeof *f);
    if (!f || add_node(f, UINT32_MAX, root, strlen(root), 0) < 0 || rehash(f) != 0) {
        sp_flame_free(f);
        return NULL;
    }
    return f;
}

int sp_flame_add_diff(sp_flame *f, const char *folded, int64_t value, int64_t base) {
    if (value < 0) value = 0;
    if (base < 0) base = 0;
    if (value == 0 && base == 0) return 0;
    uint32_t at = 0;
    f->n[0].value += value;
    f->n[0].base += base;
    for (const char *p = folded;;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int64_t k = child(f, at, p, len);
        if (k < 0) return -1;
        at = (uint32_t)k;
        f->n[at].value += value;
        f->n[at].base += base;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

int sp_flame_add(sp_flame *f, const char *folded, int64_t value) {
    return value > 0 ? sp_flame_add_diff(f, folded, value, 0) : 0;
}

void sp_flame_set_diff(sp_flame *f) { f->diff = 1; }

int64_t sp_flame_total(const sp_flame *f) { return f->n[0].value; }

uint32_t sp_flame_drawn(const sp_flame *f) { return f->drawn; }

void sp_flame_free(sp_flame *f) {
    if (!f) return;
    for (uint32_t i = 0; i < f->nn; i++) free(f->n[i].name);
    free(f->n);
    free(f->hash);
    free(f);
}

/* ---- Drawing ----------------------------------------------------------------- */
enum { FRAME_H = 16, TOP = 28, MAX_LEVELS = 512 };
#define CHAR_W 7.2 /* 12px monospace */
#define MIN_W 0.5  /* px: narrower frames (and what they hold) are left out */

static const node *g_nodes; /* qsort has no context argument */
static int cmp_kids(const void *a, const void *b) {
    const node *x = &g_nodes[*(const uint32_t *)a], *y = &g_nodes[*(const uint32_t *)b];
    if (x->parent != y->parent) return x->parent < y->parent ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* A warm colour from the name, the same for a name wherever it appears;
 * in a differential graph, red for a frame that took longer in NEW than in
 * BASE, blue for one that took less, the deeper the larger the change
 * (relative to the larger of the two), white-ish for none. */
static void put_colour(sp_out *o, const sp_flame *f, const node *nd) {
    char b[40];
    if (f->diff) {
        double hi = (double)(nd->value > nd->base ? nd->value : nd->base);
        double d = hi > 0 ? ((double)nd->value - (double)nd->base) / hi : 0; /* -1..1 */
        unsigned k = (unsigned)(200 * (d < 0 ? -d : d));
        if (d >= 0) snprintf(b, sizeof b, "rgb(255,%u,%u)", 235 - k, 235 - k);
        else snprintf(b, sizeof b, "rgb(%u,%u,255)", 235 - k, 235 - k);
    } else {
        uint64_t h = key_hash(0, nd->name, strlen(nd->name));
        snprintf(b, sizeof b, "rgb(%u,%u,%u)", 205 + (unsigned)(h % 51), 80 + (unsigned)(h >> 8 & 127),
                 40 + (unsigned)(h >> 16 & 31));
    }
    sp_out_str(o, b);
}

/* name cut to what fits in w px, by characters: "name" or "nam.." or "". */
static void put_label(sp_out *o, const char *name, double w) {
    long fit = (long)((w - 6) / CHAR_W);
    if (fit < 3) return;
    long chars = 0;
    const unsigned char *s = (const unsigned char *)name;
    for (const unsigned char *p = s; *p; chars++) {
        int n = *p >= 0x80 ? sp_utf8_len(p) : 0;
        p += n ? n : 1;
    }
    if (chars <= fit) {
        sp_out_xml(o, name);
        return;
    }
    /* The first fit-2 characters, then "..". */
    const unsigned char *p = s;
    for (long c = 0; c < fit - 2 && *p; c++) {
        int n = *p >= 0x80 ? sp_utf8_len(p) : 0;
        p += n ? n : 1;
    }
    size_t len = (size_t)(p - s);
    char *cut = malloc(len + 3);
    if (!cut) return;
    memcpy(cut, s, len);
    memcpy(cut + len, "..", 3);
    sp_out_xml(o, cut);
    free(cut);
}

static void put_num(sp_out *o, double v) {
    char b[32];
    snprintf(b, sizeof b, "%.2f", v);
    sp_out_str(o, b);
}

void sp_flame_svg(sp_flame *f, sp_out *o, int width, int standalone, const char *title) {
    uint32_t nk = f->nn - 1, levels = 1;
    uint32_t *kids = malloc(((size_t)nk + 1) * sizeof *kids);
    uint32_t *first = calloc((size_t)f->nn + 1, sizeof *first); /* per node: kids[first..first+cnt) */
    uint32_t *cnt = calloc((size_t)f->nn + 1, sizeof *cnt);
    uint32_t *stack = malloc(((size_t)f->nn + 1) * sizeof *stack);
    double *x = malloc(((size_t)f->nn + 1) * sizeof *x);
    f->drawn = 0;
    if (!kids || !first || !cnt || !stack || !x) {
        o->err = 1;
        goto out;
    }
    for (uint32_t i = 0; i < nk; i++) kids[i] = i + 1;
    g_nodes = f->n;
    qsort(kids, nk, sizeof *kids, cmp_kids);
    for (uint32_t i = nk; i-- > 0;) {
        uint32_t p = f->n[kids[i]].parent;
        first[p] = i;
        cnt[p]++;
    }
    double total = f->n[0].value > 0 ? (double)f->n[0].value : 1, scale = (width - 20) / total;
    /* Levels that hold a frame wide enough to draw. */
    for (uint32_t i = 0; i < f->nn; i++)
        if ((double)f->n[i].value * scale >= MIN_W && f->n[i].depth + 1 > levels)
            levels = f->n[i].depth + 1;
    if (levels > MAX_LEVELS) levels = MAX_LEVELS;
    int height = TOP + (int)levels * FRAME_H + 8;
    char b[160];
    if (standalone)
        sp_out_str(o, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    snprintf(b, sizeof b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flamegraph\" width=\"%d\" "
             "height=\"%d\" viewBox=\"0 0 %d %d\">\n", width, height, width, height);
    sp_out_str(o, b);
    if (standalone)
        sp_out_str(o, "<style>text{font:12px monospace;fill:#000}rect{stroke:#fff;stroke-width:0.5}"
                      ".head{font:bold 14px sans-serif}g.frame{cursor:pointer}g.frame text{pointer-events:none}"
                      "g.frame:hover rect{stroke:#000}.hit rect{fill:#c8a0ff}.parent{opacity:0.55}"
                      ".ctl{font:12px sans-serif;fill:#06c;cursor:pointer}.matched{font:12px sans-serif}</style>\n"
                      "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f8f8f8\"/>\n");
    sp_out_str(o, "<text class=\"head\" x=\"10\" y=\"18\">");
    sp_out_xml(o, title);
    sp_out_str(o, "</text>\n");
    /* The controls flame.js wires up: right-aligned at the top. */
    snprintf(b, sizeof b, "<text class=\"ctl reset\" x=\"%d\" y=\"18\" text-anchor=\"end\" "
             "style=\"display:none\">Reset zoom</text>\n", width - (standalone ? 80 : 10));
    sp_out_str(o, b);
    if (standalone) {
        snprintf(b, sizeof b, "<text class=\"ctl search\" x=\"%d\" y=\"18\" text-anchor=\"end\">Search</text>\n",
                 width - 10);
        sp_out_str(o, b);
        snprintf(b, sizeof b, "<text class=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
                 width - 10, height - 2);
        sp_out_str(o, b);
    }
    /* Depth first from the root: each frame places its children left to
     * right in name order from its own x. */
    uint32_t sp = 0;
    stack[sp++] = 0;
    x[0] = 10;
    while (sp) {
        uint32_t i = stack[--sp];
        const node *nd = &f->n[i];
        double w = (double)nd->value * scale;
        if (w < MIN_W || nd->depth >= levels) continue;
        f->drawn++;
        double y = TOP + (double)(levels - 1 - nd->depth) * FRAME_H;
        char t[32];
        scopeprof_format_time(t, sizeof t, (double)nd->value / 1e3);
        sp_out_str(o, "<g class=\"frame\"><title>");
        sp_out_xml(o, nd->name);
        if (f->diff) {
            char bt[32];
            scopeprof_format_time(bt, sizeof bt, (double)nd->base / 1e3);
            snprintf(b, sizeof b, " (NEW %s, BASE %s", t, bt);
            sp_out_str(o, b);
            if (nd->base) snprintf(b, sizeof b, ", %+.1f%%)", 100.0 * ((double)nd->value - (double)nd->base) / (double)nd->base);
            else snprintf(b, sizeof b, ", new)");
        } else
            snprintf(b, sizeof b, " (%s, %.2f%%)", t, 100.0 * (double)nd->value / total);
        sp_out_str(o, b);
        sp_out_str(o, "</title><rect x=\"");
        put_num(o, x[i]);
        sp_out_str(o, "\" y=\"");
        put_num(o, y);
        sp_out_str(o, "\" width=\"");
        put_num(o, w);
        snprintf(b, sizeof b, "\" height=\"%d\" fill=\"", FRAME_H - 1);
        sp_out_str(o, b);
        put_colour(o, f, nd);
        sp_out_str(o, "\"/>");
        if ((w - 6) / CHAR_W >= 3) { /* room for a label (put_label) */
            sp_out_str(o, "<text x=\"");
            put_num(o, x[i] + 3);
            sp_out_str(o, "\" y=\"");
            put_num(o, y + FRAME_H - 4);
            sp_out_str(o, "\">");
            put_label(o, nd->name, w);
            sp_out_str(o, "</text>");
        }
        sp_out_str(o, "</g>\n");
        double cx = x[i];
        for (uint32_t k = 0; k < cnt[i]; k++) {
            uint32_t c = kids[first[i] + k];
            x[c] = cx;
            cx += (double)f->n[c].value * scale;
            stack[sp++] = c;
        }
    }
    if (standalone) { /* CDATA: the script's < and & stay as written */
        sp_out_str(o, "<script type=\"text/ecmascript\"><![CDATA[\n");
        sp_out_str(o, sp_flame_js);
        sp_out_str(o, "]]></script>\n");
    }
    sp_out_str(o, "</svg>\n");
out:
    free(kids);
    free(first);
    free(cnt);
    free(stack);
    free(x);
}
