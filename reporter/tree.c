/* tree.c -- see tree.h. */
#include "tree.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Events one thread may hold before its outermost scope closes: what a
 * quarter of the machine's memory holds (an event and its two scratch
 * words), at least 4M. A program with one scope around nearly everything
 * (main's) is held whole: at a fixed 4M, libexpat's xmlwf on a 21 MB file
 * (6.75M scopes) lost the stacks above most of its events. SP_TREE_LIMIT
 * sets it (the tests' small one). */
static uint32_t tree_limit(void) {
#ifdef SP_TREE_LIMIT
    return SP_TREE_LIMIT;
#else
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t n = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 / (sizeof(sp_event) + 8) : 0;
    return n < (1u << 22) ? 1u << 22 : n > (1u << 30) ? 1u << 30 : (uint32_t)n;
#endif
}

void sp_tree_init(sp_tree *tr, sp_tree_fn fn, void *ctx) {
    memset(tr, 0, sizeof *tr);
    tr->fn = fn;
    tr->ctx = ctx;
    tr->limit = tree_limit();
}

int sp_grow_u32(uint32_t **v, uint32_t *cap, uint32_t n) {
    if (n <= *cap) return 0;
    uint32_t c = *cap ? *cap : 1024;
    while (c < n) c = c > UINT32_MAX / 2 ? n : c * 2;
    uint32_t *p = realloc(*v, (size_t)c * sizeof *p);
    if (!p) return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* Whether event k, at a depth whose scope never closed (a longjmp left it:
 * Lua's errors), began once the event before it that is not inside it had
 * ended (the last one before it in close order at its depth or above): it
 * is then the child of the nearest enclosing scope that closed, as the
 * table counts it (summary.h, scopeprof__sum_gather). A range that outlived
 * the scope it began in began before that one ended: it stays a root. */
static int orphan_after(const sp_event *ev, uint32_t k) {
    for (uint32_t j = k; j-- > 0;)
        if (ev[j].kind == SP_SCOPE && ev[j].depth <= ev[k].depth) return ev[j].end <= ev[k].start;
    return 1;
}

/* Resolve parents and hand the buffered events of thread `i` over. Walking
 * backwards (from the last closed, the root) visits every scope before its
 * descendants, and between a scope and the next one at its depth, only its
 * own descendants: the stack `anc` holds the open candidates, depth
 * increasing, so it is as deep as the nesting, whatever the depth numbers. */
static int flush(sp_tree *tr, uint32_t i) {
    sp_tree_thread *t = &tr->t[i];
    uint32_t n = t->n, top = 0;
    if (!n) return 0;
    if (sp_grow_u32(&tr->parent, &tr->parent_cap, n) || sp_grow_u32(&tr->anc, &tr->anc_cap, n)) return -1;
    for (uint32_t k = n; k-- > 0;) {
        const sp_event *e = &t->ev[k];
        /* A scope at depth d, or a memory record made with d scopes open,
         * lies in the scope at depth d-1: candidates as deep as d or deeper
         * belong to subtrees already walked. The candidate left is that
         * scope, or, when that one never closed, the nearest that did: the
         * parent when orphan_after says so. */
        while (top && t->ev[tr->anc[top - 1]].depth >= e->depth) top--;
        uint32_t p = top && e->depth && (t->ev[tr->anc[top - 1]].depth == e->depth - 1 || orphan_after(t->ev, k))
                         ? tr->anc[top - 1]
                         : SP_NO_PARENT;
        /* Mismatched BEGIN/END ranges can break the depth rule: only a
         * scope that really contains the event counts as its parent. */
        if (p != SP_NO_PARENT && (t->ev[p].start > e->start || t->ev[p].end < e->end)) p = SP_NO_PARENT;
        tr->parent[k] = p;
        if (e->kind == SP_SCOPE) tr->anc[top++] = k;
    }
    t->n = 0;
    int rc = tr->fn(tr->ctx, i, t->ev, tr->parent, n); /* anc is its scratch now (sp_tree_scratch) */
    /* Tens of thousands of threads over a run: memory for what is open, not
     * for every thread seen. A few buffers are kept (no malloc per subtree
     * in the common case), big ones are not. */
    if (t->cap > 256 || tr->held > 64) {
        free(t->ev);
        t->ev = NULL;
        t->cap = 0;
        tr->held--;
    }
    return rc;
}

int sp_tree_add(sp_tree *tr, uint32_t thread, const sp_event *ev, uint32_t n) {
    if (thread >= tr->nt) {
        uint32_t c = thread + 1 > tr->nt * 2 ? thread + 1 : tr->nt * 2;
        sp_tree_thread *v = realloc(tr->t, (size_t)c * sizeof *v);
        if (!v) return -1;
        memset(v + tr->nt, 0, (size_t)(c - tr->nt) * sizeof *v);
        tr->t = v;
        tr->nt = c;
    }
    sp_tree_thread *t = &tr->t[thread];
    for (uint32_t k = 0; k < n; k++) {
        if (t->n == t->cap) {
            uint32_t c = t->cap ? t->cap * 2 : 256;
            sp_event *v = realloc(t->ev, (size_t)c * sizeof *v);
            if (!v) return -1;
            tr->held += !t->ev;
            t->ev = v;
            t->cap = c;
        }
        t->ev[t->n++] = ev[k];
        const int root = ev[k].kind == SP_SCOPE && ev[k].depth == 0;
        if (root || t->n >= tr->limit) {
            if (!root) tr->cut += t->n;
            int rc = flush(tr, thread);
            if (rc) return rc;
        }
    }
    return 0;
}

int sp_tree_flush_all(sp_tree *tr) {
    for (uint32_t i = 0; i < tr->nt; i++) {
        int rc = flush(tr, i);
        if (rc) return rc;
    }
    return 0;
}

void sp_tree_free(sp_tree *tr) {
    for (uint32_t i = 0; i < tr->nt; i++) free(tr->t[i].ev);
    free(tr->t);
    free(tr->parent);
    free(tr->anc);
    memset(tr, 0, sizeof *tr);
}
