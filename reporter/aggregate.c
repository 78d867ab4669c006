/* aggregate.c -- see aggregate.h. */
#define SCOPEPROF_AGGREGATION
#include "aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "exit.h"
#include "hash.h"
#include "input.h"

int sp_group_parse(const char *g, int *group, uint32_t *n) {
    if (!g || strcmp(g, "name") == 0) *group = SP_GROUP_NAME;
    else if (strcmp(g, "site") == 0) *group = SP_GROUP_SITE;
    else if (strcmp(g, "shape") == 0 || strcmp(g, "input_shape") == 0) *group = SP_GROUP_SHAPE;
    else if (strcmp(g, "thread") == 0) *group = SP_GROUP_THREAD;
    else if (strcmp(g, "stack") == 0) *group = SP_GROUP_STACK, *n = SP_STACK_DEFAULT;
    else if (strcmp(g, "rank") == 0 || strcmp(g, "process") == 0) *group = SP_GROUP_RANK; /* 'pid P' without a rank */
    else if (strncmp(g, "stack:", 6) == 0) {
        char *end;
        long v = strtol(g + 6, &end, 10);
        if (*end || end == g + 6 || v < 1 || v > 1000) return -1;
        *group = SP_GROUP_STACK;
        *n = (uint32_t)v;
    } else
        return -1;
    return 0;
}

void sp_sat_add(int64_t *sum, int64_t v) {
    if (__builtin_add_overflow(*sum, v, sum)) *sum = v > 0 ? INT64_MAX : INT64_MIN;
}

/* Grow a byte array to hold index i (zeroed); -1 if out of memory. */
static int flags_fit(unsigned char **v, uint32_t *n, uint32_t i) {
    if (i < *n) return 0;
    uint32_t c = *n ? *n : 64;
    while (c <= i) c *= 2;
    unsigned char *p = realloc(*v, c);
    if (!p) return -1;
    memset(p + *n, 0, c - *n);
    *v = p;
    *n = c;
    return 0;
}

static int scope_kept(const sp_agg_ctx *c, const sp_event *e) {
    return e->kind == SP_MEM ? e->start >= c->win_lo && e->start <= c->win_hi
                             : e->start >= c->win_lo && e->end <= c->win_hi;
}

/* The name a scope has in tables: PyTorch's key_averages merges the steps
 * ProfilerStep#1, #2... into one row ProfilerStep*. */
static const char *table_name(const char *name) {
    return strncmp(name, "ProfilerStep#", 13) == 0 ? "ProfilerStep*" : name;
}

static const char *str_of(sp_out *o) {
    sp_out_write(o, "", 1);
    return o->err ? NULL : o->buf;
}

/* A name as one frame of a ';'-separated stack: no ';' and no line breaks,
 * which would split it (';' becomes ':', a line break a space). Written a
 * run at a time: stacks a thousand frames deep are many bytes per event. */
static void put_frame(sp_out *o, const char *s) {
    for (;;) {
        size_t n = strcspn(s, ";\n\r");
        sp_out_write(o, s, n);
        if (!s[n]) return;
        sp_out_write(o, s[n] == ';' ? ":" : " ", 1);
        s += n + 1;
    }
}

static uint32_t make_row(sp_agg_ctx *c, const char *key, const char *name, const char *extra) {
    if (!key || !name) return UINT32_MAX;
    return scopeprof_agg_row(&c->agg, key, name, extra);
}

/* The Rank column of --group-by rank: the file's rank, else its pid. */
static const char *rank_label(const sp_reader *r, char label[48]) {
    const sp_header *h = sp_reader_header(r);
    if (h->rank != 0xFFFFFFFFu) snprintf(label, 48, "rank %u", h->rank);
    else snprintf(label, 48, "pid %llu", (unsigned long long)h->pid);
    return label;
}

/* Row of a site for name and site grouping, cached per site id. */
static uint32_t site_row(sp_agg_ctx *c, uint32_t id) {
    const sp_site *s = sp_reader_site(c->rd, id);
    c->undefined += !s; /* not cached: counts every such event */
    int cache = s && id < (1u << 20);
    if (cache && id < c->nsite_row && c->site_row[id]) return c->site_row[id] - 1;
    const char *name = s ? table_name(s->name) : "<unknown>";
    uint32_t row;
    if (c->group == SP_GROUP_SITE) {
        c->key.n = c->extra.n = 0;
        if (s) {
            char line[16];
            snprintf(line, sizeof line, ":%u", s->line);
            sp_out_str(&c->extra, s->file);
            sp_out_str(&c->extra, line);
        }
        const char *ex = str_of(&c->extra);
        sp_out_str(&c->key, name);
        sp_out_write(&c->key, "\x1f", 1); /* a byte names do not hold in practice */
        sp_out_str(&c->key, ex ? ex : "");
        row = make_row(c, str_of(&c->key), name, ex);
    } else if (c->group == SP_GROUP_RANK) { /* the file's rank: a row per rank and name */
        char label[48];
        rank_label(c->rd, label);
        c->key.n = 0;
        sp_out_str(&c->key, name);
        sp_out_write(&c->key, "\x1f", 1);
        sp_out_str(&c->key, label);
        row = make_row(c, str_of(&c->key), name, label);
    } else if (c->group == SP_GROUP_SHAPE) {
        /* A Chrome site is one (name, input shapes) pair; a .sprof scope
         * here has no shapes (shaped ones take shape_row), shown as [], as
         * PyTorch shows an op without inputs. */
        const char *shape = sp_chrome_vtbl(c->rd) ? sp_chrome_shape(c->rd, id) : NULL;
        c->key.n = 0;
        sp_out_str(&c->key, name);
        sp_out_write(&c->key, "\x1f", 1);
        sp_out_str(&c->key, shape ? shape : "[]");
        row = make_row(c, str_of(&c->key), name, shape ? shape : "[]");
    } else {
        row = make_row(c, name, name, NULL);
    }
    if (row != UINT32_MAX && cache) {
        if (id >= c->nsite_row) {
            uint32_t n = id + 1 > c->nsite_row * 2 ? id + 1 : c->nsite_row * 2;
            uint32_t *v = realloc(c->site_row, (size_t)n * sizeof *v);
            if (!v) return row;
            memset(v + c->nsite_row, 0, (size_t)(n - c->nsite_row) * sizeof *v);
            c->site_row = v;
            c->nsite_row = n;
        }
        c->site_row[id] = row + 1;
    }
    return row;
}

/* Row of a .sprof scope with input shapes for shape grouping: one per name
 * and shape text, as the exit summary makes them (SCOPEPROF_GROUP_BY=shape).
 * Shapes are interned by the reader (one pointer per text), so the row is
 * cached per (site, pointer) in a small direct-mapped table: a loop's few
 * shapes take no key building. */
static uint32_t shape_row(sp_agg_ctx *c, uint32_t id, const char *shape) {
    struct sp_shape_hit *h =
        &c->shape_hit[((uint32_t)((uintptr_t)shape >> 4) ^ id * 2654435761u) % SP_SHAPE_HITS];
    if (h->shape == shape && h->site == id) return h->row;
    const sp_site *s = sp_reader_site(c->rd, id);
    c->undefined += !s; /* not cached: counts every such event */
    const char *name = s ? table_name(s->name) : "<unknown>";
    c->key.n = 0;
    sp_out_str(&c->key, name);
    sp_out_write(&c->key, "\x1f", 1);
    sp_out_str(&c->key, shape);
    uint32_t row = make_row(c, str_of(&c->key), name, shape);
    if (s && row != UINT32_MAX) *h = (struct sp_shape_hit){shape, id, row};
    return row;
}

/* What a thread is shown as, in the table's Thread column and the per-thread
 * stacks: its name, else its tid, else (no THREAD chunk describes it) the
 * file's thread index. `num` holds the text when it is made up. */
static const char *thread_label(const sp_thread *t, char num[48]) {
    if (t->name && t->name[0]) return t->name;
    if (t->tid) snprintf(num, 48, "tid %llu", (unsigned long long)t->tid);
    else snprintf(num, 48, "thread %u", t->index);
    return num;
}

/* Row of a scope for thread grouping: one per (thread, name), so that a
 * thread's rows, sorted, say where its time went. Keyed by the thread's
 * slot over all files (two files' thread 1 are two threads), or by its
 * label when the file's table is merged to be compared (thread_by_label:
 * a thread's slot is the order of its first event, which differs between
 * ranks: LULESH's rank 4 had its main thread's rows split from the other
 * ranks' and its OpenMP thread's summed into them); shown by
 * thread_label. Not cached: the site cache holds one row per site id. */
static uint32_t thread_row(sp_agg_ctx *c, const sp_thread *t, uint32_t site) {
    const sp_site *s = sp_reader_site(c->rd, site);
    c->undefined += !s;
    const char *name = s ? table_name(s->name) : "<unknown>";
    char num[48];
    c->key.n = c->extra.n = 0;
    sp_out_str(&c->extra, thread_label(t, num));
    const char *ex = str_of(&c->extra);
    if (!c->thread_by_label) snprintf(num, sizeof num, "%u", c->thread_base + t->slot);
    sp_out_str(&c->key, c->thread_by_label ? ex : num);
    sp_out_write(&c->key, "\x1f", 1);
    sp_out_str(&c->key, name);
    uint32_t row = make_row(c, str_of(&c->key), name, ex);
    if (row == UINT32_MAX || row < c->nrow_thread) return row;
    /* A new row: which thread it counts, in case its label is not alone. */
    struct sp_row_thread *v = realloc(c->row_thread, (size_t)c->agg.cap * sizeof *v);
    if (!v) return row; /* its label stays as it is */
    for (uint32_t i = c->nrow_thread; i < row; i++) v[i].slot = UINT32_MAX; /* rows of no thread */
    v[row] = (struct sp_row_thread){t->tid, c->thread_base + t->slot, t->index, c->files_read};
    c->row_thread = v;
    c->nrow_thread = row + 1;
    return row;
}

static void account(sp_agg_ctx *c, uint32_t slot, uint32_t row, const sp_event *e) {
    if (row == UINT32_MAX) {
        c->oom = 1;
        return;
    }
    scopeprof_row *r = &c->agg.rows[row];
    if (!sp_chrome_vtbl(c->rd) || (e->site < c->ndev_site && c->dev_site[e->site]))
        r->gpu_role = SCOPEPROF_ROW_DEVICE;
    else if (r->gpu_role == SCOPEPROF_ROW_ANY)
        r->gpu_role = SCOPEPROF_ROW_LAUNCHER;
    /* The file's own units (ticks): summed as the exit summary sums them,
     * converted once per row at the end of the file (agg_finish). */
    if (scopeprof_agg_event_gpu(&c->agg, slot, row, e->t_start, e->t_end, e->depth, e->gpu_ns) != 0)
        c->oom = 1;
}

/* ---- Stacks as nodes ---------------------------------------------------------
 * Stack and folded grouping key a scope's row by its stack: its ancestors'
 * names joined, up to a thousand frames of a recursive interpreter. Built
 * for each event, those keys cost as much as the stack is deep (Lua's test
 * suite, 3M scopes: 26 s). Instead each stack is a node, (the node of its
 * parent scope, its frame), found by hashing that pair; the node keeps its
 * row. An event costs one node lookup, and the key is written only the first
 * time a node is seen. A frame is a name interned (one pointer per text: two
 * sites of one name, or two threads of one label, are one frame), so that a
 * node is a distinct stack of names, and the rows are made in the order they
 * were before. The root of a thread's stacks (--per-thread) is a node of its
 * label under SP_THREAD. Nodes and names are the file's (site ids are):
 * dropped at each file's start and end, and when they pass SP_STACK_NODES
 * between subtrees (they are a cache: the rows stay), so that memory stays
 * that and a subtree's worth. */
#ifndef SP_STACK_NODES /* the tests set a small one */
#define SP_STACK_NODES (1u << 20)
#endif
#define SP_NO_NODE UINT32_MAX        /* the parent of a root */
#define SP_BAD_NODE (UINT32_MAX - 1) /* out of memory */
#define SP_THREAD (UINT32_MAX - 2)   /* the parent of a thread's label */

typedef struct sp_stack_node {
    const char *frame; /* interned */
    uint32_t parent;   /* a node, SP_NO_NODE or SP_THREAD */
    uint32_t row;      /* + 1; 0: not looked up yet */
} sp_stack_node;

struct sp_stack_cache {
    sp_stack_node *node;
    uint32_t n, cap;
    uint32_t *hash, hcap; /* (parent, frame) -> node + 1, open addressing */
    char **name;          /* the interned names, open addressing */
    uint32_t nname, name_cap;
    const char **site;    /* per site id below 2^20: its interned name, NULL not yet */
    uint32_t nsite;
    uint32_t *up, up_cap; /* a node's ancestors, for its key */
};

/* Forget every node and name (the rows stay in the table). */
static void stacks_reset(struct sp_stack_cache *st) {
    if (!st) return;
    for (uint32_t i = 0; i < st->name_cap; i++) free(st->name[i]);
    if (st->name) memset(st->name, 0, (size_t)st->name_cap * sizeof *st->name);
    st->nname = 0;
    if (st->site) memset(st->site, 0, (size_t)st->nsite * sizeof *st->site);
    st->n = 0;
    if (st->hash) memset(st->hash, 0, (size_t)st->hcap * sizeof *st->hash);
}

static void stacks_free(struct sp_stack_cache *st) {
    if (!st) return;
    stacks_reset(st);
    free(st->node);
    free(st->hash);
    free(st->name);
    free(st->site);
    free(st->up);
    free(st);
}

static uint32_t name_hash(const char *s) { return (uint32_t)sp_hash(0, s, strlen(s)); }

/* The one copy of text s, made on first use; NULL if out of memory. */
static const char *intern(struct sp_stack_cache *st, const char *s) {
    if ((uint64_t)(st->nname + 1) * 2 > st->name_cap) {
        uint32_t c = st->name_cap ? st->name_cap * 2 : 256;
        char **v = calloc(c, sizeof *v);
        if (!v) return NULL;
        for (uint32_t i = 0; i < st->name_cap; i++) {
            if (!st->name[i]) continue;
            uint32_t j = name_hash(st->name[i]) & (c - 1);
            while (v[j]) j = (j + 1) & (c - 1);
            v[j] = st->name[i];
        }
        free(st->name);
        st->name = v;
        st->name_cap = c;
    }
    uint32_t j = name_hash(s) & (st->name_cap - 1);
    for (; st->name[j]; j = (j + 1) & (st->name_cap - 1))
        if (strcmp(st->name[j], s) == 0) return st->name[j];
    if (!(st->name[j] = strdup(s))) return NULL;
    st->nname++;
    return st->name[j];
}

/* The frame of site `id`: its name as tables show it, interned; kept per id
 * once the site is defined (before, it is "<unknown>"; a site, once defined,
 * keeps its first definition). */
static const char *site_frame(sp_agg_ctx *c, uint32_t id) {
    struct sp_stack_cache *st = c->stacks;
    if (id < st->nsite && st->site[id]) return st->site[id];
    const sp_site *s = sp_reader_site(c->rd, id);
    const char *f = intern(st, s ? table_name(s->name) : "<unknown>");
    if (!f || !s || id >= (1u << 20)) return f;
    if (id >= st->nsite) {
        uint32_t n = id + 1 > st->nsite * 2 ? id + 1 : st->nsite * 2;
        const char **v = realloc(st->site, (size_t)n * sizeof *v);
        if (!v) return f;
        memset(v + st->nsite, 0, (size_t)(n - st->nsite) * sizeof *v);
        st->site = v;
        st->nsite = n;
    }
    return st->site[id] = f;
}

static uint32_t node_slot(const struct sp_stack_cache *st, uint32_t parent, const char *frame) {
    uint64_t h = ((uint64_t)(uintptr_t)frame ^ (uint64_t)parent << 32) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (st->hcap - 1);
}

/* The node of frame under parent, made on first use. */
static uint32_t node_child(struct sp_stack_cache *st, uint32_t parent, const char *frame) {
    if (!frame) return SP_BAD_NODE;
    if ((uint64_t)(st->n + 1) * 2 > st->hcap) {
        uint32_t c = st->hcap ? st->hcap * 2 : 4096;
        uint32_t *h = calloc(c, sizeof *h);
        if (!h) return SP_BAD_NODE;
        free(st->hash);
        st->hash = h;
        st->hcap = c;
        for (uint32_t i = 0; i < st->n; i++) {
            uint32_t j = node_slot(st, st->node[i].parent, st->node[i].frame);
            while (h[j]) j = (j + 1) & (c - 1);
            h[j] = i + 1;
        }
    }
    uint32_t j = node_slot(st, parent, frame);
    for (; st->hash[j]; j = (j + 1) & (st->hcap - 1)) {
        const sp_stack_node *x = &st->node[st->hash[j] - 1];
        if (x->frame == frame && x->parent == parent) return st->hash[j] - 1;
    }
    if (st->n == st->cap) {
        uint32_t c = st->cap ? st->cap * 2 : 1024;
        sp_stack_node *v = realloc(st->node, (size_t)c * sizeof *v);
        if (!v) return SP_BAD_NODE;
        st->node = v;
        st->cap = c;
    }
    st->node[st->n] = (sp_stack_node){frame, parent, 0};
    st->hash[j] = st->n + 1;
    return st->n++;
}

/* The row of node nd, made from its key as a stack of events makes it:
 * folded, the thread's label (if any) and every frame, ';'-separated; by
 * stack, the name and (in extra) the label and the N innermost ancestors. */
static uint32_t node_row(sp_agg_ctx *c, uint32_t nd) {
    struct sp_stack_cache *st = c->stacks;
    uint32_t m = 0, lim = c->group == SP_GROUP_FOLDED ? UINT32_MAX : c->stack_n;
    const char *label = NULL;
    for (uint32_t p = st->node[nd].parent; p != SP_NO_NODE; p = st->node[p].parent) {
        if (st->node[p].parent == SP_THREAD) {
            label = st->node[p].frame;
            break;
        }
        if (m == lim) {
            if (!c->per_thread) break;
            continue; /* on to the label */
        }
        if (sp_grow_u32(&st->up, &st->up_cap, m + 1)) return UINT32_MAX;
        st->up[m++] = p;
    }
    const char *name = st->node[nd].frame;
    c->key.n = c->extra.n = 0;
    if (label) {
        put_frame(&c->extra, label);
        sp_out_write(&c->extra, ";", 1);
    }
    for (uint32_t i = m; i-- > 0;) {
        put_frame(&c->extra, st->node[st->up[i]].frame);
        if (i) sp_out_write(&c->extra, ";", 1);
    }
    uint32_t row;
    if (c->group == SP_GROUP_FOLDED) {
        if (m) sp_out_write(&c->extra, ";", 1);
        put_frame(&c->extra, name);
        const char *k2 = str_of(&c->extra);
        row = make_row(c, k2, k2, NULL);
    } else {
        const char *ex = str_of(&c->extra);
        sp_out_str(&c->key, name);
        sp_out_write(&c->key, "\x1f", 1);
        sp_out_str(&c->key, ex ? ex : "");
        row = make_row(c, str_of(&c->key), name, ex);
    }
    if (row != UINT32_MAX) st->node[nd].row = row + 1;
    return row;
}

/* A finished subtree, for stack grouping and folded stacks: each scope's row
 * key holds its ancestors' names. Nodes are found from the root down (a
 * parent comes after its children), rows fed to the aggregation in close
 * order, as it would have been without buffering. */
static int agg_subtree(void *ctx, uint32_t slot, const sp_event *ev, const uint32_t *parent,
                       uint32_t n) {
    sp_agg_ctx *c = ctx;
    if (!c->stacks && !(c->stacks = calloc(1, sizeof *c->stacks))) return c->oom = 1, 0;
    struct sp_stack_cache *st = c->stacks;
    if (st->n > SP_STACK_NODES) stacks_reset(st);
    uint32_t *of = sp_tree_scratch(&c->tree); /* the node of each event, n words */
    uint32_t root = SP_NO_NODE;
    const sp_thread *th = c->per_thread ? sp_reader_thread(c->rd, slot) : NULL;
    if (th) { /* the thread's name as of now: a later rename starts a new root */
        char num[48];
        root = node_child(st, SP_THREAD, intern(st, thread_label(th, num)));
    }
    for (uint32_t k = n; k-- > 0;) {
        if (ev[k].kind != SP_SCOPE) continue; /* memory records are no one's parent */
        uint32_t up = parent[k] == SP_NO_PARENT ? root : of[parent[k]];
        of[k] = up == SP_BAD_NODE ? up : node_child(st, up, site_frame(c, ev[k].site));
    }
    for (uint32_t k = 0; k < n; k++) {
        const sp_event *e = &ev[k];
        /* --steps filters after the tree, so that kept scopes still see the
         * ancestors outside the window in their stacks. */
        if (!scope_kept(c, e)) continue;
        if (e->kind == SP_MEM) {
            if (scopeprof_agg_mem(&c->agg, c->thread_base + slot, e->depth, e->device, e->bytes))
                c->oom = 1;
            continue;
        }
        uint32_t nd = of[k];
        uint32_t row = nd == SP_BAD_NODE ? UINT32_MAX : st->node[nd].row ? st->node[nd].row - 1 : node_row(c, nd);
        account(c, c->thread_base + slot, row, e);
    }
    return 0;
}

static int agg_header(void *ctx, const sp_reader *r, const sp_header *h) {
    sp_agg_ctx *c = ctx;
    c->rd = r;
    c->rank = h->rank;
    c->chrome = sp_chrome_vtbl(r) != NULL;
    /* A file's units and calibration are its own: ns and none until its
     * TICKS and OVERHEAD chunks (the last file's sums are flushed first). */
    scopeprof_agg_flush(&c->agg);
    scopeprof_agg_units(&c->agg, 1.0);
    c->agg.comp_inside_ps = c->agg.comp_outside_ps = 0;
    c->agg.comp_short_inside_ps = c->agg.comp_short_outside_ps = 0, c->agg.comp_short_below = 0;
    memset(c->shape_hit, 0, sizeof c->shape_hit); /* the last file's shapes are gone */
    stacks_reset(c->stacks);                       /* and its names */
    return 0;
}

static int agg_events(void *ctx, const sp_reader *r, const sp_thread *t, const sp_event *ev,
                      uint32_t n) {
    sp_agg_ctx *c = ctx;
    c->rd = r;
    const sp_header *h = sp_reader_header(r);
    scopeprof_agg_units(&c->agg, h->unit_ns); /* TICKS and OVERHEAD come before the first event */
    if (h->has_overhead) {
        scopeprof_agg_calibration(&c->agg, h->overhead_inside_ps, h->overhead_outside_ps, !c->raw);
        scopeprof_agg_short_class(&c->agg, h->overhead_short_inside_ps, h->overhead_short_outside_ps,
                                  h->overhead_short_below);
    } else if (h->overhead_off && c->agg.comp_state == SCOPEPROF_COMP_NONE)
        c->agg.comp_state = SCOPEPROF_COMP_OFF_ENV; /* said under the table, as at exit */
    if (c->tap && c->tap->events) c->tap->events(c->tap->ctx, c->file, r, t, ev, n);
    if (t->slot + 1 > c->nthreads) c->nthreads = t->slot + 1;
    /* Sites of device events, noted here where the GPU info is valid (the
     * tree hands events over later). Chrome site ids are 1..2^24. */
    const sp_gpu_info *gi = sp_chrome_vtbl(r) ? sp_reader_gpu_info(r) : NULL;
    for (uint32_t k = 0; gi && k < n; k++)
        if (gi[k].timed == 1 && ev[k].site < SP_MAX_SITES) { /* not 2, a GPU annotation: PyTorch leaves it out */
            if (flags_fit(&c->dev_site, &c->ndev_site, ev[k].site)) c->oom = 1;
            else c->dev_site[ev[k].site] = 1;
        }
    if (c->group == SP_GROUP_STACK || c->group == SP_GROUP_FOLDED)
        return sp_tree_add(&c->tree, t->slot, ev, n) ? (c->oom = 1, -1) : 0;
    uint32_t slot = c->thread_base + t->slot;
    for (uint32_t k = 0; k < n; k++) {
        if (!scope_kept(c, &ev[k])) continue;
        if (ev[k].kind == SP_MEM) {
            if (scopeprof_agg_mem(&c->agg, slot, ev[k].depth, ev[k].device, ev[k].bytes)) c->oom = 1;
        } else {
            uint32_t row = c->group == SP_GROUP_THREAD                 ? thread_row(c, t, ev[k].site)
                           : c->group == SP_GROUP_SHAPE && ev[k].shape ? shape_row(c, ev[k].site, ev[k].shape)
                                                                       : site_row(c, ev[k].site);
            account(c, slot, row, &ev[k]);
        }
    }
    return 0;
}

/* The STEPS records of a .sprof file as PyTorch's ProfilerStep* row: one
 * call per step, CPU total the steps' time. Self CPU time stays 0: the file
 * does not say which thread called PROFILE_STEP, so which scopes are the
 * step's children is unknown, and 0 leaves the other rows' percentages as
 * they are. By rank a row per rank, as every other row (the steps are the
 * file's process's); other groupings give it an empty text column, by
 * shape "[]" (as PyTorch's and the exit summary's). The same for those
 * steps written to trace JSON and read back (sp_track_steps), so that its
 * table is the .sprof file's; PyTorch's steps are events of their own. */
static void agg_steps(sp_agg_ctx *c, const sp_reader *r) {
    const sp_step *s;
    uint32_t n = sp_track_steps(r, &s), row = UINT32_MAX;
    if (c->group == SP_GROUP_FOLDED) return;
    for (uint32_t i = 0; i < n; i++) {
        sp_event e = {s[i].start, s[i].end, 0, 0, SP_SCOPE, 0, 0, -1, 0, s[i].start, s[i].end, NULL};
        if (!scope_kept(c, &e)) continue;
        if (row == UINT32_MAX) {
            const char *name = "ProfilerStep*";
            c->key.n = 0;
            sp_out_str(&c->key, name);
            /* By shape: [] as PyTorch's step rows (and the exit table) have. */
            char label[48];
            const char *ex = c->group == SP_GROUP_NAME    ? NULL
                             : c->group == SP_GROUP_SHAPE ? "[]"
                             : c->group == SP_GROUP_RANK  ? rank_label(r, label)
                                                          : "";
            if (ex) {
                sp_out_write(&c->key, "\x1f", 1);
                sp_out_str(&c->key, ex);
            }
            row = make_row(c, str_of(&c->key), name, ex);
            if (row == UINT32_MAX) {
                c->oom = 1;
                return;
            }
        }
        scopeprof_row *rw = &c->agg.rows[row];
        rw->count++;
        c->agg.events++;
        uint64_t d = s[i].end - s[i].start; /* the reader keeps end >= start */
        sp_sat_add(&rw->total_ns, d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d);
    }
}

static int agg_finish(void *ctx, const sp_reader *r) {
    sp_agg_ctx *c = ctx;
    c->rd = r;
    int rc = sp_tree_flush_all(&c->tree);
    /* Thread grouping: a thread's name can come after its events (a trace
     * JSON's thread_name metadata, written last; a thread named late): its
     * rows take the label it ends the file with. */
    for (uint32_t i = 0; i < c->nrow_thread; i++) {
        const struct sp_row_thread *rt = &c->row_thread[i];
        const sp_thread *t = rt->slot != UINT32_MAX && rt->file == c->files_read
                                 ? sp_reader_thread(r, rt->slot - c->thread_base) : NULL;
        char num[48], *l;
        const char *label = t ? thread_label(t, num) : NULL;
        if (!label || (c->agg.rows[i].extra && strcmp(c->agg.rows[i].extra, label) == 0)) continue;
        if ((l = strdup(label)) != NULL) free(c->agg.rows[i].extra), c->agg.rows[i].extra = l;
    }
    agg_steps(c, r);
    if (c->tap && c->tap->finish) c->tap->finish(c->tap->ctx, c->file, r);
    if (sp_reader_nthreads(r) > c->nthreads) c->nthreads = sp_reader_nthreads(r);
    const sp_memory *m;
    uint32_t nm = sp_reader_memory(r, &m);
    for (uint32_t i = 0; i < nm; i++) {
        uint32_t d = m[i].device; /* < SP_MAX_DEVICES, as the reader keeps them */
        if (!(c->peak_seen >> d & 1) || m[i].peak > c->peak[d]) c->peak[d] = m[i].peak;
        c->peak_seen |= 1ull << d;
        if (__builtin_add_overflow(c->unknown_frees, m[i].unknown_frees, &c->unknown_frees))
            c->unknown_frees = UINT64_MAX;
    }
    c->mem_files += nm > 0;
    scopeprof_agg_flush(&c->agg); /* the file's sums, converted once per row */
    /* Thread slots and site ids belong to one file. */
    c->thread_base += c->nthreads;
    c->nthreads = 0;
    free(c->site_row);
    c->site_row = NULL;
    c->nsite_row = 0;
    free(c->dev_site);
    c->dev_site = NULL;
    c->ndev_site = 0;
    c->tree_cut += c->tree.cut;
    sp_tree_free(&c->tree);
    stacks_reset(c->stacks);
    sp_tree_init(&c->tree, agg_subtree, c);
    return rc;
}

void sp_agg_ctx_init(sp_agg_ctx *c, int group, uint32_t stack_n) {
    memset(c, 0, sizeof *c);
    scopeprof_agg_init(&c->agg);
    c->group = group;
    c->stack_n = stack_n;
    c->win_hi = UINT64_MAX;
    if (group == SP_GROUP_SITE) c->agg.extra_header = "Source Location";
    if (group == SP_GROUP_STACK) c->agg.extra_header = "Stack";
    if (group == SP_GROUP_SHAPE) c->agg.extra_header = "Input Shapes";
    if (group == SP_GROUP_THREAD) c->agg.extra_header = "Thread";
    if (group == SP_GROUP_RANK) c->agg.extra_header = "Rank";
    sp_out_init(&c->key, NULL);
    sp_out_init(&c->extra, NULL);
    sp_tree_init(&c->tree, agg_subtree, c);
}

const char *sp_extra_field(const scopeprof_agg *a) {
    const char *h = a->extra_header ? a->extra_header : "";
    return strcmp(h, "Stack") == 0          ? "stack"
           : strcmp(h, "Input Shapes") == 0 ? "input_shapes"
           : strcmp(h, "Thread") == 0       ? "thread"
           : strcmp(h, "Rank") == 0         ? "rank"
                                            : "source_location";
}

void sp_agg_ctx_free(sp_agg_ctx *c) {
    free(c->row_thread);
    scopeprof_agg_free(&c->agg);
    sp_out_free(&c->key);
    sp_out_free(&c->extra);
    sp_tree_free(&c->tree);
    stacks_free(c->stacks);
    free(c->site_row);
    free(c->dev_site);
}

sp_callbacks sp_agg_callbacks(sp_agg_ctx *c) {
    sp_callbacks cb = {c, agg_header, agg_events, agg_finish};
    return cb;
}

/* A row's sums before a file is read into it: what the file added is the
 * difference. */
typedef struct comp_sums {
    uint64_t count;
    int64_t ns[2];
    int32_t carry[2];
} comp_sums;

/* The rows whose compensated sums the file just read (its part of them:
 * the sums now less `before`, nbefore rows) would show clamped in a table
 * of that file alone are marked so (comp_clamped), for the notes under
 * the table: reading several files into one table sums the rows first and
 * clamps the sum, which a file's part clamped at 0 and another's not can
 * leave unclamped. */
static void note_clamped(sp_agg_ctx *c, const comp_sums *before, uint32_t nbefore) {
    if (c->agg.comp_state != SCOPEPROF_COMP_ON) return;
    for (uint32_t i = 0; i < c->agg.nrows; i++) {
        const scopeprof_row *r = &c->agg.rows[i];
        const comp_sums b = i < nbefore ? before[i] : (comp_sums){0, {0, 0}, {0, 0}};
        scopeprof_row part = {.count = r->count - b.count};
        for (int k = 0; k < 2; k++) /* ns less a borrow from the ps; wrapping, not overflowing */
            part.comp_ns[k] = (int64_t)((uint64_t)r->comp_ns[k] - (uint64_t)b.ns[k] -
                                        (uint64_t)(r->comp_carry_ps[k] < b.carry[k]));
        if (sp_comp_clamped(&c->agg, &part)) c->agg.rows[i].comp_clamped = 1;
    }
}

int sp_agg_file(sp_agg_ctx *c, const char *path, FILE *err) {
    sp_callbacks cb = sp_agg_callbacks(c);
    sp_result res;
    uint64_t unordered = c->agg.unordered, undefined = c->undefined, cut = c->tree_cut;
    uint32_t nbefore = c->agg.nrows;
    comp_sums *before = nbefore ? malloc((size_t)nbefore * sizeof *before) : NULL;
    if (nbefore && !before) c->oom = 1;
    for (uint32_t i = 0; before && i < nbefore; i++) {
        const scopeprof_row *r = &c->agg.rows[i];
        before[i] = (comp_sums){r->count, {r->comp_ns[0], r->comp_ns[1]},
                                {r->comp_carry_ps[0], r->comp_carry_ps[1]}};
    }
    int st = sp_read_any(path, &cb, &res);
    scopeprof_agg_flush(&c->agg); /* also when the file stopped short of agg_finish */
    if (before || !nbefore) note_clamped(c, before, nbefore);
    free(before);
    c->files_read++;
    char msg[512];
    sp_result_message(&res, path, msg, sizeof msg);
    if (st != SP_OK) fprintf(err, "%s\n", msg);
    sp_warn_incomplete(path, &res, err);
    if (c->oom) fprintf(err, "%s: out of memory: some events were not counted\n", path);
    /* Inconsistent files (not ours): say what is off. Only events out of
     * close order make the numbers wrong, so only they fail the command. */
    if (res.sites_redefined)
        fprintf(err, "%s: offset %llu: site id %u defined again differently (%u time(s)); the first "
                "definition is kept\n", path, (unsigned long long)res.redefined_offset,
                res.redefined_id, res.sites_redefined);
    if (c->tree_cut > cut)
        fprintf(err, "%s: warning: %llu event(s) of a thread came inside scopes still open after %u "
                "of them (a scope around nearly everything, as main's, on a machine with too little "
                "memory to hold them): their stacks lack those scopes\n", path,
                (unsigned long long)(c->tree_cut - cut), c->tree.limit);
    if (c->undefined > undefined)
        fprintf(err, "%s: %llu event(s) use a site id no SITES chunk had defined before them; "
                "shown as <unknown>\n", path, (unsigned long long)(c->undefined - undefined));
    /* The Chrome reader nests by PyTorch's rule, whose order is its own: the
     * close-order check is for .sprof files, which are written in it. */
    if (c->agg.unordered > unordered && !c->chrome) {
        fprintf(err, "%s: %llu event(s) close before an earlier event of their thread: the file "
                "is not in close order, and self times are not to be trusted\n", path,
                (unsigned long long)(c->agg.unordered - unordered));
        if (st == SP_OK) st = SP_CORRUPT;
    }
    return st;
}

int sp_agg_merge(sp_agg_ctx *dst, const sp_agg_ctx *src,
                 int (*each)(void *ctx, uint32_t dst_row, const scopeprof_row *src_row), void *ctx) {
    scopeprof_agg *d = &dst->agg;
    const scopeprof_agg *a = &src->agg;
    d->has_gpu |= a->has_gpu;
    d->has_mem |= a->has_mem;
    d->has_gpu_mem |= a->has_gpu_mem;
    d->events += a->events;
    if (a->comp_state == SCOPEPROF_COMP_ON || a->comp_state == SCOPEPROF_COMP_OFF_RAW) {
        /* The footer's range over the files (the rows are compensated already). */
        scopeprof_agg_calibration(d, a->comp_lo_ps, 0, 0);
        scopeprof_agg_calibration(d, a->comp_hi_ps, 0, 0);
        if (a->comp_short_hi_ps) { /* the short class's range too (any bound: never applied here) */
            scopeprof_agg_short_class(d, a->comp_short_lo_ps, 0, 1);
            scopeprof_agg_short_class(d, a->comp_short_hi_ps, 0, 1);
        }
        d->comp_state = a->comp_state;
    }
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        uint32_t k = scopeprof_agg_row(d, r->key, r->name, r->extra);
        if (k == UINT32_MAX) return -1;
        scopeprof_row *m = &d->rows[k];
        m->count += r->count;
        m->count_short += r->count_short;
        sp_sat_add(&m->self_ns, r->self_ns);
        sp_sat_add(&m->total_ns, r->total_ns);
        sp_sat_add(&m->gpu_self_ns, r->gpu_self_ns);
        sp_sat_add(&m->gpu_total_ns, r->gpu_total_ns);
        sp_sat_add(&m->cpu_mem, r->cpu_mem);
        sp_sat_add(&m->self_cpu_mem, r->self_cpu_mem);
        sp_sat_add(&m->gpu_mem, r->gpu_mem);
        sp_sat_add(&m->self_gpu_mem, r->self_gpu_mem);
        if (r->gpu_role > m->gpu_role) m->gpu_role = r->gpu_role; /* DEVICE wins */
        m->comp_clamped |= r->comp_clamped;
        if (each && each(ctx, k, r) != 0) return -1;
    }
    for (uint32_t dv = 0; dv < SP_MAX_DEVICES; dv++)
        if (src->peak_seen >> dv & 1) {
            if (!(dst->peak_seen >> dv & 1) || src->peak[dv] > dst->peak[dv]) dst->peak[dv] = src->peak[dv];
            dst->peak_seen |= 1ull << dv;
        }
    dst->unknown_frees += src->unknown_frees;
    dst->mem_files += src->mem_files;
    return 0;
}

/* A row of thread grouping, its label and thread: sorted by label, then
 * thread, a label's threads are neighbours (sp_agg_thread_labels). */
typedef struct labelled { const char *label; uint32_t slot, row; } labelled;
static int cmp_label(const void *a, const void *b) {
    const labelled *x = a, *y = b;
    int d = strcmp(x->label, y->label);
    return d ? d : x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Whether threads th[0..n) (each once) all differ in their tids (known
 * ones: 0 is none), or in their indices. Sorts th. */
static int cmp_tid(const void *a, const void *b) {
    uint64_t x = ((const struct sp_row_thread *)a)->tid, y = ((const struct sp_row_thread *)b)->tid;
    return x < y ? -1 : x > y;
}
static int cmp_index(const void *a, const void *b) {
    uint32_t x = ((const struct sp_row_thread *)a)->index, y = ((const struct sp_row_thread *)b)->index;
    return x < y ? -1 : x > y;
}
static int all_differ(struct sp_row_thread *th, uint32_t n, int (*cmp)(const void *, const void *)) {
    qsort(th, n, sizeof *th, cmp);
    for (uint32_t i = 1; i < n; i++)
        if (cmp(&th[i - 1], &th[i]) == 0) return 0;
    return cmp != cmp_tid || th[0].tid != 0;
}

int sp_agg_thread_labels(sp_agg_ctx *c) {
    if (c->group != SP_GROUP_THREAD || c->nrow_thread == 0) return 0;
    uint32_t n = 0;
    labelled *ord = malloc((size_t)c->nrow_thread * sizeof *ord);
    struct sp_row_thread *th = malloc((size_t)c->nrow_thread * sizeof *th);
    int rc = ord && th ? 0 : -1;
    for (uint32_t i = 0; !rc && i < c->nrow_thread; i++)
        if (c->row_thread[i].slot != UINT32_MAX && c->agg.rows[i].extra)
            ord[n++] = (labelled){c->agg.rows[i].extra, c->row_thread[i].slot, i};
    if (!rc && n) qsort(ord, n, sizeof *ord, cmp_label);
    for (uint32_t g = 0, e; !rc && g < n; g = e) {
        /* ord[g..e): the rows of one label; th[0..m): their threads. */
        uint32_t m = 0;
        for (e = g; e < n && strcmp(ord[e].label, ord[g].label) == 0; e++)
            if (m == 0 || th[m - 1].slot != ord[e].slot) th[m++] = c->row_thread[ord[e].row];
        if (m < 2) continue;
        int form = all_differ(th, m, cmp_tid) ? 0 : all_differ(th, m, cmp_index) ? 1 : 2;
        for (uint32_t k = g; k < e; k++) {
            const struct sp_row_thread *t = &c->row_thread[ord[k].row];
            char suffix[80];
            if (form == 0) snprintf(suffix, sizeof suffix, " (tid %llu)", (unsigned long long)t->tid);
            else if (form == 1) snprintf(suffix, sizeof suffix, " (thread %u)", t->index);
            else snprintf(suffix, sizeof suffix, " (file %u, thread %u)", t->file + 1, t->index);
            size_t ln = strlen(ord[k].label), ls = strlen(suffix);
            char *l = malloc(ln + ls + 1);
            if (!l) {
                rc = -1;
                break;
            }
            memcpy(l, ord[k].label, ln);
            memcpy(l + ln, suffix, ls + 1);
            free(c->agg.rows[ord[k].row].extra); /* ord[k].label: each row has its own copy */
            c->agg.rows[ord[k].row].extra = l;
        }
    }
    free(ord);
    free(th);
    return rc;
}

void sp_agg_memory_footer(FILE *out, const sp_agg_ctx *c) {
    char b[64], over[48] = "";
    if (c->mem_files > 1) snprintf(over, sizeof over, " (largest of %d files)", c->mem_files);
    for (uint32_t d = 0; d < SP_MAX_DEVICES; d++) {
        if (!(c->peak_seen >> d & 1)) continue;
        scopeprof_format_mem(b, sizeof b, c->peak[d]);
        if (d == 0) fprintf(out, "Peak CPU memory: %s%s\n", b, over);
        else fprintf(out, "Peak GPU %u memory: %s%s\n", d - 1, b, over);
    }
    if (c->unknown_frees)
        fprintf(out, "Unknown frees: %llu (frees of pointers never recorded by PROFILE_ALLOC)\n",
                (unsigned long long)c->unknown_frees);
}

int sp_aggregate(char **files, int nfiles, int folded, const sp_tap *tap, scopeprof_agg *out, FILE *footer,
                 int *usable, FILE *err) {
    sp_agg_ctx c;
    sp_agg_ctx_init(&c, folded ? SP_GROUP_FOLDED : SP_GROUP_NAME, 0);
    c.per_thread = folded == SP_FOLDED_PER_THREAD;
    c.tap = tap;
    int rc = SP_EXIT_OK;
    *usable = 0;
    for (int i = 0; i < nfiles; i++) {
        uint64_t before = c.agg.events;
        c.file = i;
        int st = sp_agg_file(&c, files[i], err);
        rc = sp_exit_worst(rc, st);
        *usable += st == SP_OK || st == SP_TRUNCATED || c.agg.events > before;
    }
    if (footer) sp_agg_memory_footer(footer, &c);
    *out = c.agg; /* handed over: sp_agg_ctx_free must not free it */
    scopeprof_agg_init(&c.agg);
    sp_agg_ctx_free(&c);
    return rc;
}
